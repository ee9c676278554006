"""The composition root: the one place that wires storage, blobs, the model and the workflow.

Only this module of `bot` imports `storage` (DESIGN §2). The embedded SQLite default upgrades
itself at start; another database must be migrated with `reconbot migrate` first.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import sqlalchemy as sa
from strands.models import Model

from agent.domain import ApproverPolicy
from agent.errors import ConfigurationError
from agent.models.offline import OfflineModel
from agent.workflow import InvestigationService, SystemClock, WorkflowSettings
from bot.config import Settings
from storage.blobs import open_blob_store
from storage.database import create_engine, current_revision, head_revision, is_sqlite, migrate
from storage.repository import SqlRepository

logger = logging.getLogger(__name__)


@dataclass
class Runtime:
    """What the entry points use: the service, and the repository for audit commands."""

    service: InvestigationService
    repository: SqlRepository
    engine: sa.Engine


def build_model(settings: Settings) -> Model:
    """The model named by RECONBOT_MODEL, built once and shared by all investigations."""
    if settings.model == "offline":
        return OfflineModel()
    raise ConfigurationError(
        "RECONBOT_MODEL=bedrock is not available in this build yet; use RECONBOT_MODEL=offline"
    )


def workflow_settings(settings: Settings) -> WorkflowSettings:
    """The workflow's part of the settings."""
    return WorkflowSettings(
        approval_ttl=settings.approval_ttl,
        approver_policy=ApproverPolicy(
            approvers=settings.approvers, self_approval=settings.self_approval
        ),
        max_upload_bytes=settings.max_upload_bytes,
        workdir=settings.work_dir,
        claim_lease=settings.claim_lease,
    )


def build_runtime(
    settings: Settings, *, model: Model | None = None, recover: bool = True
) -> Runtime:
    """Wire everything; upgrade an embedded SQLite database and recover interrupted approvals."""
    engine = create_engine(settings.database_url)
    if is_sqlite(engine):
        migrate(engine)
    elif current_revision(engine) != head_revision():
        raise ConfigurationError(
            "The database is not at the current schema; run `reconbot migrate` first."
        )
    repository = SqlRepository(engine)
    blobs = open_blob_store(settings.blob_url, s3_endpoint_url=settings.s3_endpoint_url)
    service = InvestigationService(
        repository,
        blobs,
        model or build_model(settings),
        SystemClock(),
        workflow_settings(settings),
    )
    if recover:
        recovered = service.recover()
        if recovered:
            logger.info("pauses=%s | recovered interrupted approvals", ",".join(recovered))
    return Runtime(service, repository, engine)


def migrate_database(settings: Settings) -> str | None:
    """Apply the migrations to the configured database; returns its revision."""
    return migrate(create_engine(settings.database_url))
