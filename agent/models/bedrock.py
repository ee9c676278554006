"""The live model: Strands' `BedrockModel` (Amazon Nova 2 Lite by default), set up on purpose.

One model object is built at start-up and shared by every investigation. Its boto3 client has
explicit timeouts and retries (botocore's standard mode: exponential backoff with jitter on
throttling, timeouts and 5xx); Strands' own retry loop is turned off in the agent factory so
retries are not stacked. Transport failures leave this module as `ModelError`s in words; a
missing credential or model access is found by `check_access` at start-up, not on the first
upload. This module alone in `agent` may import boto3 and botocore (docs/design.md §2).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.config import Config as BotocoreConfig
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    ReadTimeoutError,
)
from strands.models.bedrock import BedrockModel
from strands.types.exceptions import ContextWindowOverflowException, ModelThrottledException

from agent.errors import ConfigurationError, ModelBusyError, ModelUnavailableError

logger = logging.getLogger(__name__)

DEFAULT_MODEL_ID = "us.amazon.nova-2-lite-v1:0"
CONNECT_TIMEOUT_SECONDS = 10
MAX_OUTPUT_TOKENS = 4096

ACCESS_HELP = (
    "enable access to the model in the Amazon Bedrock console (Model access) and allow "
    "bedrock:InvokeModel and bedrock:InvokeModelWithResponseStream on its inference profile "
    "and the foundation models behind it (docs/operations.md, 'Amazon Bedrock')"
)


@dataclass(frozen=True)
class BedrockSettings:
    """How to reach the model: which one, where, with which limits."""

    model_id: str = DEFAULT_MODEL_ID
    region: str = "us-east-1"
    endpoint_url: str | None = None
    api_key: str | None = None
    read_timeout_seconds: float = 120.0
    max_attempts: int = 4
    streaming: bool = True
    temperature: float = 0.0


class ReconbotBedrockModel(BedrockModel):
    """`BedrockModel` whose failures reach the workflow as reconbot errors in words."""

    def __init__(self, settings: BedrockSettings, **kwargs: Any) -> None:
        self.settings = settings
        super().__init__(**kwargs)

    async def stream(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        """Stream one model turn; throttling, timeouts and refusals become `ModelError`s."""
        try:
            async for event in super().stream(*args, **kwargs):
                yield event
        except ModelThrottledException:
            raise ModelBusyError(
                f"Amazon Bedrock is busy (throttled after {self.settings.max_attempts} "
                "attempts with backoff). Nothing was lost; try again in a minute."
            ) from None
        except ContextWindowOverflowException:
            raise ModelUnavailableError(
                "The conversation of this investigation is longer than the model accepts."
            ) from None
        except (ReadTimeoutError, ConnectTimeoutError):
            raise ModelUnavailableError(
                f"Amazon Bedrock did not answer within {self.settings.read_timeout_seconds:g} s "
                f"({self.settings.max_attempts} attempts). Nothing was lost; try again."
            ) from None
        except EndpointConnectionError:
            raise ModelUnavailableError(
                f"Amazon Bedrock could not be reached in {self.settings.region}. Nothing was "
                "lost; try again."
            ) from None
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "error")
            ref = uuid.uuid4().hex[:8]
            logger.warning(
                "ref=%s model=%s code=%s | Bedrock refused the request: %s",
                ref,
                self.settings.model_id,
                code,
                error.response.get("Error", {}).get("Message", ""),
            )
            raise ModelUnavailableError(
                f"Amazon Bedrock refused the request ({code}; reference {ref}). Nothing was "
                "lost; try again, or ask whoever runs the bot to check the model settings."
            ) from None
        except BotoCoreError as error:
            # No credentials, a connection closed or reset, TLS, a proxy: botocore's words
            # name the endpoint URL; they go to the log, the words to the thread.
            ref = uuid.uuid4().hex[:8]
            logger.warning(
                "ref=%s model=%s error=%s | Bedrock could not be called: %s",
                ref,
                self.settings.model_id,
                type(error).__name__,
                error,
            )
            what = (
                "the bot has no AWS credentials"
                if isinstance(error, NoCredentialsError)
                else "the connection failed"
            )
            raise ModelUnavailableError(
                f"Amazon Bedrock could not be called in {self.settings.region} ({what}; "
                f"reference {ref}). Nothing was lost; try again, or ask whoever runs the bot "
                "to look up the reference in its log."
            ) from None


def build_bedrock_model(settings: BedrockSettings) -> ReconbotBedrockModel:
    """The shared model: Nova 2 Lite (or `settings.model_id`) with timeouts and retries set."""
    client_config = BotocoreConfig(
        connect_timeout=CONNECT_TIMEOUT_SECONDS,
        read_timeout=settings.read_timeout_seconds,
        retries={"mode": "standard", "total_max_attempts": settings.max_attempts},
        tcp_keepalive=True,
    )
    return ReconbotBedrockModel(
        settings,
        boto_session=boto3.Session(region_name=settings.region),
        boto_client_config=client_config,
        endpoint_url=settings.endpoint_url,
        api_key=settings.api_key,
        model_id=settings.model_id,
        streaming=settings.streaming,
        temperature=settings.temperature,
        max_tokens=MAX_OUTPUT_TOKENS,
    )


def check_access(model: ReconbotBedrockModel) -> None:
    """At start-up: credentials exist and the model answers a one-token request.

    Raises ConfigurationError naming what is missing: credentials, model access, the model id,
    or the network path to Bedrock.
    """
    settings = model.settings
    if settings.api_key is None and boto3.Session().get_credentials() is None:
        raise ConfigurationError(
            "RECONBOT_MODEL=bedrock needs AWS credentials: none were found in the standard "
            "chain (AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, an instance or task "
            "role, SSO) and no Bedrock API key is set (AWS_BEARER_TOKEN_BEDROCK)."
        )
    try:
        model.client.converse(
            modelId=settings.model_id,
            messages=[{"role": "user", "content": [{"text": "ping"}]}],
            inferenceConfig={"maxTokens": 1},
        )
    except NoCredentialsError:
        raise ConfigurationError(
            "RECONBOT_MODEL=bedrock needs AWS credentials; none were found."
        ) from None
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        if code in ("ThrottlingException", "ServiceUnavailableException"):
            logger.warning("model=%s code=%s | busy at start-up; going on", settings.model_id, code)
            return
        if code in ("AccessDeniedException", "UnrecognizedClientException"):
            raise ConfigurationError(
                f"The AWS credentials may not invoke {settings.model_id} in {settings.region} "
                f"({code}): {ACCESS_HELP}."
            ) from None
        raise ConfigurationError(
            f"Amazon Bedrock refused {settings.model_id} in {settings.region} ({code}); check "
            "RECONBOT_BEDROCK_MODEL_ID and AWS_REGION."
        ) from None
    except (EndpointConnectionError, ConnectTimeoutError, ReadTimeoutError, BotoCoreError) as error:
        raise ConfigurationError(
            f"Amazon Bedrock could not be reached ({type(error).__name__}); check AWS_REGION, "
            "RECONBOT_BEDROCK_ENDPOINT_URL and the network."
        ) from None
