"""Running a reconciliation: read and check the files, then reconcile them with the ledger.

Both steps read each file's columns from the columnar cache when one is given (parsing a file
only the first time any step reads it), else parse the files for this step alone.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import duckdb

from agent.data.cache import ColumnCache
from agent.data.duck import cursor, workspace_name
from agent.data.gates import check_reading
from agent.data.ingest.columnar import Columns, RowProgress
from agent.data.kept import KeptTables, KeptWorkspace
from agent.data.ledger import account, build_ledger_rows
from agent.data.normalize import ValidationReport, load_both, merge, validate
from agent.data.normalize.answers import column_sources
from agent.data.normalize.codes import Code
from agent.data.normalize.columns import select_list
from agent.data.normalize.load import Files, parse_both, rekey, text_table
from agent.data.normalize.memo import ValidationMemo, memo_key
from agent.data.normalize.reload import reload_changed
from agent.data.notes import note
from agent.data.policy import Policy
from agent.data.reconcile.engine import run_engine
from agent.data.reconcile.keys import id_keys, join_fields, load_keys, validation_key
from agent.data.reconcile.preload import one_step_cache, read_once
from agent.data.reconcile.reconciliation import Reconciliation
from agent.data.reconcile.runner import connect
from agent.data.schema import DatasetMapping, Mapping, Role

logger = logging.getLogger(__name__)


@contextmanager
def file_columns(
    files: Files,
    mapping: Mapping,
    *,
    cache: ColumnCache | None = None,
    workdir: Path | None = None,
    progress: RowProgress | None = None,
) -> Iterator[dict[Role, Columns]]:
    """Both files' columns for as long as the context lasts: from `cache` (parsed into it on
    first use), or without one parsed into a folder of `workdir` removed afterwards."""
    if cache is not None:
        yield parse_both(files, mapping, cache, progress)
        return
    with one_step_cache(workdir) as once:
        yield parse_both(files, mapping, once, progress)


def load_and_validate(
    con: duckdb.DuckDBPyConnection,
    files: Files,
    mapping: Mapping,
    workdir: Path | None = None,
    *,
    policy: Policy,
    cache: ColumnCache | None = None,
    kept: KeptTables | None = None,
    progress: RowProgress | None = None,
    memo: ValidationMemo | None = None,
) -> ValidationReport:
    """Read both files into `con` under `mapping` and check every mapped field on every row,
    under the policy in force (its failed statuses, its vocabulary).

    Then the gates: a reading under which the files do not meet (few references name an order,
    an order id column that names no single order) is an error with the likely fix. The report's
    facts (rows per file, how many references name an order) are shown on the request. With
    `kept`, the tables are loaded into the workspace kept for these files, and kept after.
    """
    with file_columns(files, mapping, cache=cache, workdir=workdir, progress=progress) as columns:
        return validate_columns(con, columns, mapping, policy, memo, kept=kept)


def validate_once(
    files: Files, mapping: Mapping, policy: Policy, workdir: Path | None = None
) -> ValidationReport:
    """`load_and_validate` for a step that reads the files once (`reconbot inspect`): each
    file read straight into its table (`read_once`), checked beside the other's read when it
    ends first, instead of parsed into Parquet and loaded from there."""
    with read_once(files, mapping, workdir, policy=policy) as (sources, once, kept):
        return load_and_validate(
            connect(), sources, mapping, workdir, policy=policy, cache=once, kept=kept
        )


def validate_columns(
    con: duckdb.DuckDBPyConnection,
    columns: dict[Role, Columns],
    mapping: Mapping,
    policy: Policy,
    memo: ValidationMemo | None = None,
    *,
    kept: KeptTables | None = None,
) -> ValidationReport:
    """`load_and_validate` on both files' columns.

    With a `memo`, a file whose columns, name and part of the mapping were validated before is
    not validated again, and the gates are not checked again while the fields that make the
    join keys are unchanged: an edit re-validates only what it changed. A file whose report and
    the gates' are both remembered is not even loaded (`con` then lacks its table).

    With `kept`, the work runs in the workspace kept for these files (by the validation before
    it, when there is one; else in `con`), loads only the tables it lacks under this mapping, and
    is kept afterwards for the next validation or the reconciliation of these files.
    """
    names = {role: columns[role].layout.file_name for role in Role}
    role_keys = {role: validation_key(role, columns[role], mapping, policy) for role in Role}
    for role in Role:  # a mapped column the file lacks is an error even when nothing is loaded
        select_list(role, columns[role].layout, mapping.for_role(role))
    gate_key = memo_key(
        "gates",
        [columns[role].parquet.name for role in Role],
        names[Role.ORDERS],
        names[Role.PAYMENTS],
        join_fields(mapping),
    )
    reports = {role: memo.recall(role_keys[role]) if memo else None for role in Role}
    gates = memo.recall(gate_key) if memo else None
    needed = tuple(role for role in Role if gates is None or reports[role] is None)
    files, loads = load_keys(columns, mapping)
    case = (kept.take(files) if kept is not None else None) or KeptWorkspace(con)
    con = case.con
    missing = tuple(role for role in needed if case.loaded.get(role) != loads[role])
    before = {role: case.parts.pop(role) for role in missing if role in case.parts}
    for role in missing:  # replaced below: until it is loaded, the table is none of these
        case.loaded.pop(role, None)
        case.checked.pop(role, None)
    for role in Role:  # checked on its table already (the first read, beside the other file)
        made = case.checked.pop(role, None)
        if reports[role] is None and made is not None and made[0] == role_keys[role]:
            reports[role] = made[1]
            if memo is not None:
                memo.remember(role_keys[role], made[1])
    texts = from_text(case, columns)
    rekeyed = reload_in_place(con, texts, before, mapping)
    load_both(con, texts, mapping, roles=tuple(r for r in missing if r not in rekeyed))
    # Only the gates read the join keys: with theirs remembered, a kept table's keys are read
    # again when a step does need them (the reconciliation), not here.
    keyed = needed if gates is None else ()
    _keyed(case, mapping, keyed, tuple(r for r in missing if rekeyed.get(r, True)))
    # The gates read the loaded tables beside the files' own checks (both only read them).
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="gates") as beside:
        gating = (
            beside.submit(check_reading, cursor(con), names, mapping) if gates is None else None
        )
        done: dict[Role, ValidationReport] = {}
        for role in Role:
            found = reports[role]
            if found is None:
                answers = case.answers.of_table(
                    columns[role].parquet.name,
                    column_sources(role, columns[role].layout, mapping.for_role(role)),
                )
                part = mapping.for_role(role)
                found = validate(con, role, names[role], part, policy, answers)
                if memo is not None:
                    memo.remember(role_keys[role], found)
            done[role] = found
        if gating is not None:
            gates = gating.result()
            if memo is not None:
                memo.remember(gate_key, gates)
    assert gates is not None
    report = merge(merge(done[Role.ORDERS], done[Role.PAYMENTS]), gates)
    report.routine[:0] = [
        note(Code.ROWS_READ, file=names[role], rows=columns[role].records) for role in Role
    ]
    # A layout's warnings name their file already (`CsvLayout.warnings`).
    report.warnings[:0] = [warning for role in Role for warning in columns[role].layout.warnings]
    if kept is not None:
        for role in missing:  # kept for the next validation and the reconciliation
            case.loaded[role] = loads[role]
            case.parts[role] = mapping.for_role(role)
        kept.keep(files, case)
    return report


def from_text(
    case: KeptWorkspace, columns: dict[Role, Columns], catalog: str | None = None
) -> dict[Role, Columns]:
    """`columns`, each read from the workspace's text of the same file and reading where it
    keeps one (`KeptWorkspace.texts`): a table loaded again under an edited mapping is made
    from the text kept by the file's first read, not by parsing the file again. With
    `catalog` (the workspace's), the text is named for a connection of another workspace."""
    prefix = f"{catalog}.main." if catalog is not None else ""
    return {
        role: (
            replace(found, table=prefix + text_table(role))
            if case.texts.get(role) == found.parquet.name
            else found
        )
        for role, found in columns.items()
    }


def beside_kept(
    columns: dict[Role, Columns], mapping: Mapping, kept: KeptTables
) -> tuple[dict[Role, Columns], KeptWorkspace | None]:
    """`columns`, each read from the text a kept workspace of these files holds (by its
    catalog), the workspace left kept: for a reconciliation in a workspace of its own (one
    sealed while its request waits) that must not take the tables an edit will need. Returns
    the workspace read, for the caller to hold while it reads (None: nothing kept)."""
    files, _ = load_keys(columns, mapping)
    case = kept.peek(files)
    catalog = workspace_name(case.con) if case is not None else None
    if case is None or catalog is None or not case.texts:
        return columns, None
    return from_text(case, columns, catalog), case


def reload_in_place(
    con: duckdb.DuckDBPyConnection,
    columns: dict[Role, Columns],
    before: dict[Role, DatasetMapping],
    mapping: Mapping,
) -> dict[Role, bool]:
    """The tables loaded under `before` from kept text brought to `mapping` in place, reading
    again only the columns it changed (`reload.reload_changed`), each on its own connection:
    by role, whether its join keys were read again. A role left out is loaded whole."""
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="reload") as pool:
        found = {
            role: pool.submit(
                reload_changed, cursor(con), role, columns[role], part, mapping.for_role(role)
            )
            for role, part in before.items()
        }
        done = {role: future.result() for role, future in found.items()}
    return {role: keys for role, keys in done.items() if keys is not None}


def _keyed(
    case: KeptWorkspace,
    mapping: Mapping,
    needed: tuple[Role, ...],
    loaded: tuple[Role, ...],
    *,
    con: duckdb.DuckDBPyConnection | None = None,
) -> None:
    """The join keys of the tables `needed` read under `mapping`'s id reading: those just
    `loaded` are (and are said to be, needed or not); a kept table read under another id
    reading has its keys read again in place (`rekey`, on `con` when given: a connection to
    the workspace's catalog that can be interrupted), which costs a pass over one column
    instead of a second read of the file."""
    keyings = id_keys(mapping)
    for role in loaded:
        case.keyed[role] = keyings[role]
    for role in needed:
        if role not in loaded and case.keyed.get(role) != keyings[role]:
            case.keyed.pop(role, None)  # unknown until the keys and the index are read
            rekey(con or case.con, role, mapping.for_role(role))
        case.keyed[role] = keyings[role]


def reconcile(
    files: Files,
    mapping: Mapping,
    policy: Policy,
    *,
    con: duckdb.DuckDBPyConnection | None = None,
    workdir: Path | None = None,
    cache: ColumnCache | None = None,
    kept: KeptTables | None = None,
) -> Reconciliation:
    """Reconcile the orders file against the payments file, read exactly as `mapping` says.

    `files` maps each role to its file. Raises the typed input errors of `ingest` for a file
    that cannot be read as approved, and LedgerError when the rows do not add up to the
    records of each file (nothing is reported then).
    """
    with file_columns(files, mapping, cache=cache, workdir=workdir) as columns:
        return reconcile_columns(columns, mapping, policy, con=con, spill=workdir, kept=kept)


def reconcile_columns(
    columns: dict[Role, Columns],
    mapping: Mapping,
    policy: Policy,
    *,
    con: duckdb.DuckDBPyConnection | None = None,
    spill: Path | None = None,
    kept: KeptTables | None = None,
) -> Reconciliation:
    """`reconcile` on both files' columns, in `con` (default: a new workspace spilling into
    `spill`), or with `kept`, in the workspace the validation of this mapping left for these
    files, where the tables it loaded are read as they are (loading only what it lacks)."""
    files, loads = load_keys(columns, mapping)
    case = kept.take(files) if kept is not None else None
    if case is None:
        case = KeptWorkspace(con or connect(spill))
    con = case.con
    missing = tuple(role for role in Role if case.loaded.get(role) != loads[role])
    load_both(con, from_text(case, columns), mapping, roles=missing)
    _keyed(case, mapping, tuple(Role), missing)
    return _reconciled(con, columns, mapping, policy)


def reconcile_lent(
    columns: dict[Role, Columns],
    mapping: Mapping,
    policy: Policy,
    kept: KeptTables,
    con: duckdb.DuckDBPyConnection,
) -> Reconciliation | None:
    """`reconcile_columns` in the workspace kept for these files, borrowed (`KeptTables.lend`)
    while its tables are those `mapping` loads (their join keys read again in place if need
    be, as any step does: `rekey`), and read without changing them otherwise: for a
    reconciliation sealed while its request waits, which then loads nothing. `con` (given to
    be interrupted) runs it there. The workspace goes back, as it was, when the result's
    reader releases it (`Reconciliation.release`), or at once if this fails. None when no
    such workspace is kept, or its files were too large to keep as text (keeping every parsed
    column through the reconciliation would spill): the caller reconciles another way."""
    files, loads = load_keys(columns, mapping)
    case = kept.lend(files)
    if case is None:
        logger.info("| no kept tables to borrow: not reconciled where they are")
        return None
    catalog = workspace_name(case.con)
    if catalog is None or any(
        case.loaded.get(role) != loads[role]
        or role not in case.texts  # too large to keep as text: the engine must drop columns
        for role in Role
    ):
        kept.give_back(files, case)
        logger.info("| the kept tables are not this mapping's: not reconciled where they are")
        return None
    own = {row[0] for row in case.con.execute(_TABLES, [catalog]).fetchall()}

    def give_back() -> None:
        try:
            for (name,) in case.con.execute(_TABLES, [catalog]).fetchall():
                if name not in own:  # what the reconciliation made: its memory goes back
                    case.con.execute(f"DROP TABLE IF EXISTS {name}")
        finally:
            kept.give_back(files, case)

    try:
        con.execute(f"USE {catalog}")
        _keyed(case, mapping, tuple(Role), (), con=con)  # a validation remembered left others
        run = _reconciled(con, columns, mapping, policy, keep_inputs=True)
    except BaseException:
        give_back()
        raise
    run.release = give_back
    return run


_TABLES = "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main'"


def _reconciled(
    con: duckdb.DuckDBPyConnection,
    columns: dict[Role, Columns],
    mapping: Mapping,
    policy: Policy,
    *,
    keep_inputs: bool = False,
) -> Reconciliation:
    """The engine, the row ledger and its accounts on the loaded tables of `con`."""
    run_engine(con, mapping, policy, keep_inputs=keep_inputs)
    build_ledger_rows(con)
    names = {role: columns[role].layout.file_name for role in Role}
    ledger = []
    for role in Role:
        ledger.append(account(con, role, names[role], columns[role].records))
    return Reconciliation(con, names, policy, ledger)
