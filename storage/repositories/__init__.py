"""The repositories of each aggregate, on a unit of work's connection (see `storage.unit_of_work`).

None of them begins or commits a transaction: the unit of work that built them does.
"""

from storage.repositories.audit import GENESIS, SqlAuditLog
from storage.repositories.decisions import SqlDecisionRepository
from storage.repositories.investigations import SqlInvestigationRepository
from storage.repositories.outcomes import SqlOutcomeRepository
from storage.repositories.pauses import SqlPauseRepository
from storage.repositories.traces import SqlConversationRepository, SqlTraceRepository

__all__ = [
    "GENESIS",
    "SqlAuditLog",
    "SqlConversationRepository",
    "SqlDecisionRepository",
    "SqlInvestigationRepository",
    "SqlOutcomeRepository",
    "SqlPauseRepository",
    "SqlTraceRepository",
]
