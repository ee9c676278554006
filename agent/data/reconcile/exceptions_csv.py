"""The exceptions CSV: every finding and every ignored row of a reconciliation, in one file."""

from __future__ import annotations

from pathlib import Path

import duckdb

from agent.data.reconcile.runner import run_sql


def write_exceptions_csv(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """Write every finding, then every ignored row, to a CSV file; returns the lines written.

    Unreadable rows are findings (`unreadable_row`) and ignored rows are listed with their
    reason (category `ignored`), so the file accounts for every row that did not match.
    Cells that come from the uploaded files are neutralised so that a spreadsheet never
    runs them as formulas (a leading `= + - @`, tab or carriage return gets a `'`).
    """
    row = run_sql(con, "exceptions_csv", {"path": str(path)}).fetchone()
    return int(row[0]) if row else 0
