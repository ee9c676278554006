"""A finished reconciliation: its summary, its findings and their evidence, its exceptions CSV.

Findings stay in DuckDB (table `findings`) so that a million-row run costs no Python objects;
`findings()` and `evidence()` turn the few that a person looks at into values.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb

from agent.data.ledger import FileLedger
from agent.data.policy import Policy
from agent.data.profile import normalize_key
from agent.data.reconcile.exceptions_csv import write_exceptions_csv
from agent.data.reconcile.findings import fetch_findings
from agent.data.reconcile.summary import build_summary
from agent.data.reconcile.values import Finding, Summary
from agent.data.schema import Role


class Reconciliation:
    """A finished reconciliation of two files under one mapping and policy."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        files: dict[Role, str],
        policy: Policy,
        ledger: list[FileLedger],
    ) -> None:
        self._con = con
        self.files = files
        self.policy = policy
        self.ledger = ledger
        self.holds: object = None
        """What it read from and must keep alive while it is read (`run.beside_kept`)."""
        self.release: Callable[[], None] = _nothing
        """Called once whoever reads this reconciliation is done with it (`reconcile_lent`:
        the borrowed workspace goes back)."""

    def summary(self) -> Summary:
        """Counts and amounts per category, and matched totals per currency and side."""
        return build_summary(self._con, self.policy.version, self.ledger)

    def findings(self, category: str | None = None, limit: int | None = 50) -> list[Finding]:
        """Findings in category order then file order; `limit=None` for all of them."""
        return fetch_findings(
            self._con,
            self.files,
            category=category or None,
            limit=None if limit is None else int(limit),
        )

    def examples(self, limit: int) -> list[Finding]:
        """The `limit` findings most worth showing first: the largest of each category, in
        category order, then the largest of those left (a results message's examples)."""
        return fetch_findings(self._con, self.files, limit=int(limit), informative=True)

    def evidence(self, identifier: str) -> list[Finding]:
        """The findings that concern an order id or a payment id (`#1042`, `1042`, `ch_…`).

        A person's question is matched leniently (any case, any whitespace around it: a tab or
        a no-break space pasted from a spreadsheet), unlike the ids between files.
        """
        key = normalize_key(identifier.strip()).lower()
        return fetch_findings(self._con, self.files, key=key)

    def export_csv(self, path: Path) -> int:
        """Write every finding, then every ignored row, to a CSV file; returns the lines written.

        Unreadable rows are findings (`unreadable_row`) and ignored rows are listed with their
        reason (category `ignored`), so the file accounts for every row that did not match.
        Cells that come from the uploaded files are neutralised so that a spreadsheet never
        runs them as formulas (a leading `= + - @`, tab or carriage return gets a `'`).
        """
        return write_exceptions_csv(self._con, path)


def _nothing() -> None:
    """Nothing to release."""
