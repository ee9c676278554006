"""Running a reconciliation: read and check the files, then reconcile them with the ledger."""

from __future__ import annotations

from pathlib import Path

import duckdb

from agent.data.gates import check_reading
from agent.data.ledger import account, build_ledger_rows
from agent.data.normalize import ValidationReport, load_both, merge, validate
from agent.data.policy import Policy
from agent.data.reconcile.engine import VOIDED_STATUSES, run_engine
from agent.data.reconcile.reconciliation import Reconciliation
from agent.data.reconcile.runner import connect
from agent.data.schema import Mapping, Role


def load_and_validate(
    con: duckdb.DuckDBPyConnection,
    files: dict[Role, tuple[Path, str]],
    mapping: Mapping,
    workdir: Path | None = None,
) -> ValidationReport:
    """Read both files into `con` under `mapping` and check every mapped field on every row.

    Then the gates: a reading under which the files do not meet (few references name an order,
    an order id column that names no single order) is an error with the likely fix. The report's
    facts (rows per file, how many references name an order) are shown on the request.
    """
    layouts = load_both(con, files, mapping, workdir, keep_raw=True)
    first, second = (validate(con, role, files[role][1], mapping.for_role(role)) for role in Role)
    report = merge(first, second)
    facts = [f"{files[role][1]}: {layouts[role].records:,} rows read" for role in Role]
    gates = check_reading(con, {role: files[role][1] for role in Role}, mapping)
    report = merge(report, gates)
    report.facts[:0] = facts
    return report


def reconcile(
    files: dict[Role, tuple[Path, str]],
    mapping: Mapping,
    policy: Policy,
    *,
    con: duckdb.DuckDBPyConnection | None = None,
    workdir: Path | None = None,
) -> Reconciliation:
    """Reconcile the orders file against the payments file, read exactly as `mapping` says.

    `files` maps each role to (path on disk, the uploader's file name). Raises the typed input
    errors of `ingest` for a file that cannot be read as approved, and LedgerError when the rows
    do not add up to the records of each file (nothing is reported then).
    """
    con = con or connect()
    layouts = load_both(con, files, mapping, workdir)
    run_engine(con, mapping, policy)
    build_ledger_rows(con, VOIDED_STATUSES)
    ledger = []
    for role in Role:
        records = layouts[role].records
        assert records is not None, "load_both counts every file's records"
        ledger.append(account(con, role, files[role][1], records))
    return Reconciliation(con, {role: files[role][1] for role in Role}, policy, ledger)
