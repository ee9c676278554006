"""The composition root: the one place that wires storage, blobs, the model and the workflow.

Only this module of `bot` imports `storage` (docs/design.md §2). The embedded SQLite default
upgrades itself at start; another database must be migrated with `reconbot migrate` first. The
policy file (`RECONBOT_POLICY`) is read once here, before anything else starts, so a missing or
bad file stops start-up with one line naming the file and the problem.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sqlalchemy as sa
from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
)
from strands.models import Model

from agent.casefiles import SampleCache
from agent.data.policy import Policy, load_policy
from agent.dependencies import Dependencies, SystemClock, WorkflowSettings
from agent.domain import ApproverPolicy
from agent.errors import ConfigurationError, DatabaseUnavailableError, NoDatabaseError
from agent.models.bedrock import BedrockSettings, build_bedrock_model, check_access
from agent.models.offline import OfflineModel
from agent.ports import UnitOfWorkFactory
from agent.usecases import UseCases, build_use_cases
from bot.config import Settings
from bot.jobs.postgres import PostgresQueue, WorkerApp, WorkerSettings, run_workers, worker_app
from bot.slack.app import SlackBot, build_app, slack_handlers
from bot.slack.deliveries import Deliveries
from bot.slack.handlers import Handlers, job_runner
from bot.slack.server import wsgi_app
from storage.blobs import open_blob_store
from storage.database import (
    create_engine,
    current_revision,
    head_revision,
    hold_single_process,
    is_sqlite,
    migrate,
)
from storage.deliveries import SqlDeliveries
from storage.unit_of_work import SqlUnitOfWorkFactory

if TYPE_CHECKING:
    from wsgiref.types import WSGIApplication

logger = logging.getLogger(__name__)

SLACK_TIMEOUT_SECONDS = 30
RATE_LIMIT_RETRIES = 5


@dataclass
class Runtime:
    """What the entry points use: the use cases, units of work (the audit commands), the bot's
    delivery bookkeeping, and the engine (closed at exit)."""

    service: UseCases
    uow: UnitOfWorkFactory
    deliveries: Deliveries
    engine: sa.Engine


def build_model(settings: Settings, *, check: bool = True) -> Model:
    """The model named by RECONBOT_MODEL, built once and shared by all investigations.

    With `check` (the bot and the commands that run the agent), Bedrock's credentials and
    model access are tried at once, so a missing one is a clear message at start-up.
    """
    if settings.model == "offline":
        return OfflineModel()
    model = build_bedrock_model(
        BedrockSettings(
            model_id=settings.bedrock_model_id,
            region=settings.aws_region,
            endpoint_url=settings.bedrock_endpoint_url,
            api_key=settings.bedrock_api_key,
            read_timeout_seconds=settings.bedrock_timeout.total_seconds(),
            max_attempts=settings.bedrock_max_attempts,
            streaming=settings.bedrock_streaming,
        )
    )
    if check and settings.bedrock_check:
        check_access(model)
    logger.info(
        "model=%s region=%s | Amazon Bedrock ready", settings.bedrock_model_id, settings.aws_region
    )
    return model


def configured_policy(settings: Settings) -> Policy:
    """The configured policy (the seed): the file named by RECONBOT_POLICY, or the built-in
    defaults when it is not set. It is every channel's policy until a change is approved for
    that channel (`Dependencies.policy_for`).

    Called once at start-up; raises PolicyError (a ConfigurationError) naming the file and the
    problem, so a process never runs under a policy other than the one configured.
    """
    policy = Policy() if settings.policy_path is None else load_policy(settings.policy_path)
    logger.info(
        "policy=%s source=%s | configured policy: each channel's until a change is approved there",
        policy.version,
        policy.source,
    )
    return policy


def workflow_settings(settings: Settings, policy: Policy) -> WorkflowSettings:
    """The workflow's part of the settings, with the policy loaded once at start-up."""
    return WorkflowSettings(
        approval_ttl=settings.approval_ttl,
        approver_policy=ApproverPolicy(
            approvers=settings.approvers, self_approval=settings.self_approval
        ),
        max_upload_bytes=settings.max_upload_bytes,
        workdir=settings.work_dir,
        cache_max_bytes=settings.cache_max_mb << 20,
        cache_max_age=settings.cache_max_age,
        claim_lease=settings.claim_lease,
        policy=policy,
        seal_while_waiting=settings.seal_while_waiting,
    )


def build_runtime(
    settings: Settings,
    *,
    model: Model | None = None,
    recover: bool = True,
    check_model: bool = True,
    create: bool = True,
) -> Runtime:
    """Wire everything; upgrade an embedded SQLite database and recover interrupted approvals.

    The policy file is read first: a bad one stops start-up before the database is touched.
    With `create=False` (commands that read or decide existing cases) a SQLite database that
    does not exist is an error naming where it was looked for, never a new empty one.
    """
    policy = configured_policy(settings)
    if not create:
        require_database(settings)
    engine = create_engine(settings.database_url)
    with reachable(settings):
        if is_sqlite(engine):
            migrate(engine)
        elif current_revision(engine) != head_revision():
            raise ConfigurationError(
                "The database is not at the current schema; run `reconbot migrate` first."
            )
    uow = SqlUnitOfWorkFactory(engine)
    blobs = open_blob_store(settings.blob_url, s3_endpoint_url=settings.s3_endpoint_url)
    service = build_use_cases(
        Dependencies(
            uow=uow,
            blobs=blobs,
            model=model or build_model(settings, check=check_model),
            clock=SystemClock(),
            settings=workflow_settings(settings, policy),
            samples=SampleCache(
                folder=settings.work_dir / "columns" / "heads",
                max_age=settings.cache_max_age,
                vocabulary=policy.vocabulary(),
            ),
        )
    )
    if recover:
        recovered = service.recovery.recover()
        if recovered:
            logger.info("pauses=%s | recovered interrupted approvals", ",".join(recovered))
    return Runtime(service, uow, SqlDeliveries(engine), engine)


def migrate_database(settings: Settings) -> str | None:
    """Apply the migrations to the configured database; returns its revision."""
    with reachable(settings):
        return migrate(create_engine(settings.database_url))


def require_database(settings: Settings) -> None:
    """Raise NoDatabaseError when the configured SQLite file does not exist: a command that
    reads cases must say where it looked rather than create an empty database there."""
    path = settings.sqlite_path
    if path is not None and not path.exists():
        raise NoDatabaseError(
            f"no reconbot database at {path}: no case has been started with this state. "
            f"Cases are kept in {settings.state_home} unless RECONBOT_HOME or "
            "RECONBOT_DATABASE_URL say otherwise; use the same settings as the shell that "
            "started the investigation."
        )


@contextmanager
def reachable(settings: Settings) -> Iterator[None]:
    """Turn a database that cannot be reached into one sentence naming it (no password)."""
    try:
        yield
    except (sa.exc.OperationalError, sa.exc.InterfaceError) as error:
        first = str(error.orig or error).strip().splitlines()
        why = first[0] if first else type(error).__name__
        logger.info("database=%s | database unreachable", settings.database_display)
        raise DatabaseUnavailableError(
            f"the database at {settings.database_display} could not be reached ({why})"
        ) from None


def slack_client(settings: Settings) -> WebClient:
    """The Web API client: the bot token, the configured base URL, and retries for rate
    limits (HTTP 429, honouring Retry-After) and dropped connections."""
    return WebClient(
        token=settings.slack_bot_token,
        base_url=settings.slack_api_url,
        timeout=SLACK_TIMEOUT_SECONDS,
        retry_handlers=[
            ConnectionErrorRetryHandler(max_retry_count=2),
            RateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES),
        ],
    )


def build_bot(
    settings: Settings, *, socket_mode: bool = False, model: Model | None = None
) -> tuple[SlackBot, Runtime]:
    """The Slack bot on the configured storage and model; raises ConfigurationError, naming
    each missing setting, before touching the network.

    With the job queue (PostgreSQL), the bot verifies, acknowledges and enqueues; workers
    (`build_worker`) run the jobs. Without it (SQLite), it runs them itself, and is the only
    bot process the database allows."""
    missing = settings.missing_for_slack(socket_mode=socket_mode)
    if missing:
        raise ConfigurationError("Slack is not configured. Missing: " + "; ".join(missing))
    runtime = build_runtime(settings, model=model, recover=False)
    closers: list[Callable[[], None]] = [runtime.service.close, runtime.engine.dispose]
    queue: PostgresQueue | None = None
    if settings.uses_job_queue:
        queue = _job_queue(settings, runtime)
    else:
        closers.insert(0, hold_single_process(runtime.engine).release)
    bot = build_app(
        settings,
        runtime.service,
        runtime.deliveries,
        slack_client(settings),
        socket_mode=socket_mode,
        queue=queue,
    )
    bot.closers.extend(closers)
    logger.info(
        "queue=%s | jobs %s",
        "postgres" if queue else "in-process",
        "go to the workers (reconbot worker)" if queue else "run in this process",
    )
    return bot, runtime


def _job_queue(settings: Settings, runtime: Runtime) -> PostgresQueue:
    """The PostgreSQL job queue, on the database of `runtime`."""
    if is_sqlite(runtime.engine):
        raise ConfigurationError(
            "RECONBOT_QUEUE=postgres needs a PostgreSQL database (RECONBOT_DATABASE_URL)."
        )
    return PostgresQueue(settings.database_url)


@dataclass
class Worker:
    """A worker process's parts: the procrastinate app running the bot's handlers."""

    app: WorkerApp
    settings: WorkerSettings
    runtime: Runtime
    handlers: Handlers

    def run(self, name: str) -> None:
        """Run jobs until SIGTERM or SIGINT."""
        try:
            run_workers(self.app, self.settings, name)
        finally:
            self.handlers.close()
            self.runtime.service.close()
            self.runtime.engine.dispose()


def build_worker(
    settings: Settings, *, concurrency: int | None = None, model: Model | None = None
) -> Worker:
    """A worker: runs the jobs web processes enqueue (needs PostgreSQL and the bot token)."""
    if not settings.uses_job_queue or settings.database_url.startswith("sqlite"):
        raise ConfigurationError(
            "reconbot worker runs jobs from the PostgreSQL job queue; with SQLite the bot "
            "runs its jobs itself. Set RECONBOT_DATABASE_URL=postgresql://… (then `reconbot "
            "migrate`) for web processes and workers."
        )
    if not settings.slack_bot_token:
        raise ConfigurationError(
            "Slack is not configured. Missing: SLACK_BOT_TOKEN (the bot token, xoxb-…, from "
            "OAuth & Permissions)"
        )
    runtime = build_runtime(settings, model=model, recover=False)
    queue = _job_queue(settings, runtime)
    handlers = slack_handlers(
        settings, runtime.service, runtime.deliveries, slack_client(settings), queue
    )
    lanes = concurrency or settings.worker_concurrency
    worker_settings = WorkerSettings(
        concurrency=lanes,
        decision_concurrency=max(2, lanes),
        heartbeat_seconds=settings.worker_heartbeat.total_seconds(),
        stalled_after_seconds=settings.worker_stalled_after.total_seconds(),
        sweep_seconds=max(1, round(settings.expiry_sweep.total_seconds())),
    )
    app = worker_app(settings.database_url, job_runner(handlers), worker_settings)
    return Worker(app, worker_settings, runtime, handlers)


def wsgi_application() -> WSGIApplication:
    """The production entry point for a WSGI server (gunicorn): settings from the
    environment, the bot started, recovery reported."""
    bot, _ = build_bot(Settings())
    bot.start()
    return wsgi_app(bot.app)
