"""The unit of work on SQLite or PostgreSQL (`agent.ports.UnitOfWork`).

`with SqlUnitOfWork(engine) as uow:` opens a connection and begins one transaction (on SQLite
`BEGIN IMMEDIATE`, see `storage.database`: the database's write lock is taken at the start, so
units of work run one at a time there); every repository works on that connection. Leaving the
block writes the audit entries appended meanwhile and commits; an exception rolls all of it
back. Keep the block short: on SQLite it holds the write lock, on PostgreSQL the rows it locked.
"""

from __future__ import annotations

from types import TracebackType

import sqlalchemy as sa

from agent.ports import (
    AuditLog,
    ConversationRepository,
    DecisionRepository,
    InvestigationRepository,
    OutcomeRepository,
    PauseRepository,
    PolicyRepository,
    TraceRepository,
)
from storage.repositories import (
    SqlAuditLog,
    SqlConversationRepository,
    SqlDecisionRepository,
    SqlInvestigationRepository,
    SqlOutcomeRepository,
    SqlPauseRepository,
    SqlTraceRepository,
)
from storage.repositories.policies import SqlPolicyRepository


class SqlUnitOfWork:
    """One transaction over every aggregate's repository. One `with` block at a time: it
    cannot be nested in itself (open another unit of work instead)."""

    # Typed as the ports' protocols: their attributes are settable, so mypy matches them
    # exactly. The objects are this module's `Sql…` classes (`outcomes` also has `count`).
    investigations: InvestigationRepository
    pauses: PauseRepository
    decisions: DecisionRepository
    outcomes: OutcomeRepository
    traces: TraceRepository
    conversations: ConversationRepository
    policies: PolicyRepository
    audit: AuditLog

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine
        self._conn: sa.Connection | None = None
        self._transaction: sa.RootTransaction | None = None
        self._audit: SqlAuditLog | None = None

    def __enter__(self) -> SqlUnitOfWork:
        """Open a connection, begin the transaction and build the repositories on it."""
        if self._conn is not None:
            raise RuntimeError(
                "this unit of work is already in a transaction; it is not re-entrant "
                "(open a new one from the factory)"
            )
        conn = self._engine.connect()
        try:
            self._transaction = conn.begin()
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self._audit = audit = SqlAuditLog(conn)
        self.audit = audit
        self.investigations = SqlInvestigationRepository(conn, audit)
        self.pauses = SqlPauseRepository(conn, audit)
        self.decisions = SqlDecisionRepository(conn, audit)
        self.outcomes = SqlOutcomeRepository(conn, audit)
        self.traces = SqlTraceRepository(conn)
        self.conversations = SqlConversationRepository(conn)
        self.policies = SqlPolicyRepository(conn, audit)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Commit (after writing the audit entries) if the block ended normally; roll back if
        it raised or the commit failed. The connection is closed either way."""
        conn, transaction, audit = self._conn, self._transaction, self._audit
        if conn is None or transaction is None or audit is None:
            return
        self._conn, self._transaction, self._audit = None, None, None
        try:
            if exc_type is None:
                audit.flush()
                transaction.commit()
        finally:
            try:
                if transaction.is_active:
                    transaction.rollback()
            finally:
                conn.close()


class SqlUnitOfWorkFactory:
    """Opens units of work on an engine (`agent.ports.UnitOfWorkFactory`)."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    def __call__(self) -> SqlUnitOfWork:
        """A new unit of work, not yet begun."""
        return SqlUnitOfWork(self.engine)
