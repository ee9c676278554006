"""The Bolt app: signature checking, event de-duplication, the listeners, and the executor
the bot owns for long work. `build_app` wires them; it does no I/O beyond Bolt's `auth.test`.

Listeners run on the thread that received the request (`process_before_response`): each
acknowledges, parses and enqueues its job, and the answer goes out when it returns, so the job
is enqueued before Slack hears the ack. What would hold the answer up (opening a modal, a slash
command's reply, a look into the database) runs as a Bolt lazy listener on LISTENER_THREADS.
Handing every listener to a pool instead cost a click a queue behind the pool, Bolt's 10 ms
polling for the ack, and more threads contending for the interpreter
(scripts/ack_latency.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from slack_bolt import App, BoltResponse
from slack_bolt.error import BoltError
from slack_sdk import WebClient

from agent.dependencies import utc_now
from agent.domain import ApproverPolicy
from agent.errors import ConfigurationError
from agent.usecases import UseCases
from bot.config import Settings
from bot.jobs.in_process import InProcessQueue
from bot.jobs.queue import JobQueue
from bot.slack.answering import ANSWERING
from bot.slack.deliveries import Deliveries
from bot.slack.files import SlackFiles
from bot.slack.handlers import Handlers, HandlerSettings, build_handlers, job_runner
from bot.slack.listeners import register
from bot.slack.listeners.deps import ListenerDeps
from bot.slack.visibility import visibility_for
from bot.slack.work import BotWork

logger = logging.getLogger(__name__)

# Threads for Bolt's lazy listeners (modals, slash commands, thread replies).
LISTENER_THREADS = 32


@dataclass
class SlackBot:
    """The Bolt app and the handlers it hands work to."""

    app: App
    handlers: Handlers
    closers: list[Callable[[], None]] = field(default_factory=list)

    def start(self) -> None:
        """Start background work (recovery reports, the expiry sweep)."""
        self.handlers.start()

    def close(self) -> None:
        """Finish running work and stop."""
        self.handlers.close()
        for close in self.closers:
            close()


def slack_handlers(
    settings: Settings,
    service: UseCases,
    deliveries: Deliveries,
    client: WebClient,
    queue: JobQueue | None = None,
) -> Handlers:
    """The bot's handlers (what jobs call), for a web process or a worker: with `queue`, the
    PostgreSQL job queue; without, the embedded one, running the jobs on this process's lanes
    through the handlers' registry (`job_runner`)."""
    assert client.token is not None
    files = SlackFiles(
        client,
        token=client.token,
        api_url=settings.slack_api_url,
        max_bytes=settings.max_upload_bytes,
    )
    handler_settings = HandlerSettings(
        expiry_sweep_seconds=settings.expiry_sweep.total_seconds(),
        delivery_hold=settings.claim_lease,
        local_owners=queue is None,
    )
    work = BotWork(handler_settings.workers)
    embedded: InProcessQueue | None = None
    if queue is None:
        queue = embedded = InProcessQueue(work, wait_turn=ANSWERING.wait_quiet)
    handlers = build_handlers(
        service,
        deliveries,
        client,
        files,
        ApproverPolicy(approvers=settings.approvers, self_approval=settings.self_approval),
        handler_settings,
        work,
        queue,
    )
    if embedded is not None:
        embedded.bind(job_runner(handlers))
    return handlers


def build_app(
    settings: Settings,
    service: UseCases,
    deliveries: Deliveries,
    client: WebClient,
    *,
    socket_mode: bool = False,
    queue: JobQueue | None = None,
) -> SlackBot:
    """The Slack bot on `service`, talking to Slack through `client` (its token, its base URL
    and its rate-limit retries). HTTP mode requires the signing secret; checking is always on.
    """
    if not client.token:
        raise ConfigurationError("SLACK_BOT_TOKEN is not set; the bot cannot talk to Slack.")
    if not socket_mode and not settings.slack_signing_secret:
        raise ConfigurationError(
            "SLACK_SIGNING_SECRET is not set; HTTP mode cannot check that requests come from Slack."
        )
    try:
        app = App(
            client=client,
            signing_secret=settings.slack_signing_secret or "",
            request_verification_enabled=not socket_mode,
            process_before_response=True,
            listener_executor=ThreadPoolExecutor(
                max_workers=LISTENER_THREADS, thread_name_prefix="reconbot-listener"
            ),
        )
    except BoltError as error:
        # Bolt checks the token with auth.test; its message names Slack's error code.
        raise ConfigurationError(
            f"Slack did not accept SLACK_BOT_TOKEN ({error}); copy the Bot User OAuth Token "
            "from the app's OAuth & Permissions page."
        ) from None
    except OSError as error:
        reason = getattr(error, "reason", error)
        raise ConfigurationError(
            f"Could not reach Slack at {settings.slack_api_url} ({reason}); check "
            "SLACK_API_URL and the network."
        ) from None
    handlers = slack_handlers(settings, service, deliveries, client, queue)
    hold = settings.claim_lease

    @app.middleware
    def deduplicate(body: dict[str, Any], next: Callable[[], None]) -> BoltResponse | None:
        """Slack redelivers an event it thinks was missed; act on each event id once. An
        upload's event is kept until its work is done, so a crash cannot lose it."""
        event_id = body.get("event_id") if body.get("type") == "event_callback" else None
        event = body.get("event") or {}
        upload = event if event.get("subtype") == "file_share" and not event.get("bot_id") else None
        held = utc_now() + hold if upload is not None else None
        if event_id and not deliveries.first(str(event_id), upload, held):
            logger.info("event=%s | duplicate delivery ignored", event_id)
            return BoltResponse(status=200, body="")
        next()
        return None

    @app.error
    def on_error(error: Exception, body: dict[str, Any]) -> None:
        logger.error("type=%s error=%s | listener failed", body.get("type"), type(error).__name__)

    register(app, ListenerDeps(service, handlers, visibility_for(app.client)))
    return SlackBot(app, handlers)
