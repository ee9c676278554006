"""One reconciliation job end to end: read the inputs, reconcile, export.

The digests returned are those of the bytes parsed: computed while each file was read (straight
into its table, or parsed into its columns: `ingest.columnar`) and kept with its columns (in
the columnar cache, or in its memory of the files read straight). The caller compares them with
the ones the approval was bound to before trusting the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from agent.data.cache import ColumnCache
from agent.data.kept import KeptTables
from agent.data.normalize.load import Files
from agent.data.policy import Policy
from agent.data.reconcile import Reconciliation
from agent.data.reconcile.preload import read_once
from agent.data.reconcile.run import (
    beside_kept,
    file_columns,
    reconcile_columns,
    reconcile_lent,
)
from agent.data.schema import Mapping, Role


@dataclass
class JobResult:
    """A finished job: the reconciliation, the digests of the bytes read, the export size."""

    reconciliation: Reconciliation
    digests: dict[Role, str]
    exported: int


class TextNotKeptError(Exception):
    """A job asked to run beside the kept tables (`beside`) found no text kept for one of the
    files (too large to keep, or the workspace went): it would read the files again, so it
    does not run at all (a sealed reconciliation is then done on approval, as without it)."""


def run_job(
    files: Files,
    mapping: Mapping,
    policy: Policy,
    export_to: Path,
    *,
    workdir: Path | None = None,
    cache: ColumnCache | None = None,
    kept: KeptTables | None = None,
    con: duckdb.DuckDBPyConnection | None = None,
    beside: bool = False,
) -> JobResult:
    """Reconcile both files under `mapping` and write the exceptions CSV.

    Without a `cache` (a job of its own, e.g. `reconbot reconcile`), each file is read once,
    straight into the tables the job reads, as a case's first read is (`preload`), instead of
    parsed into Parquet and loaded from there: the files are hashed first (the read is claimed
    under their digests) and then read; the digests returned are still those of the bytes
    the read parsed. With `kept`, a validation's tables kept for these files are used, not
    loaded again; with `beside` too, the job runs on `con` (given to be interrupted) without
    taking the kept tables from the steps after: in the kept workspace, borrowed, when its
    tables are exactly this mapping's (nothing is loaded or changed; it goes back when the
    result is released, `Reconciliation.release`), else in a workspace of its own whose tables
    are made from the text kept; it raises TextNotKeptError, reading nothing, when neither is
    kept.
    """
    if cache is not None:
        return _run_job(
            files, mapping, policy, export_to, workdir, cache, kept, con=con, beside=beside
        )
    with read_once(files, mapping, workdir, policy=None) as (sources, once, own):
        return _run_job(sources, mapping, policy, export_to, workdir, once, own, con=con)


def _run_job(
    files: Files,
    mapping: Mapping,
    policy: Policy,
    export_to: Path,
    workdir: Path | None,
    cache: ColumnCache,
    kept: KeptTables | None,
    *,
    con: duckdb.DuckDBPyConnection | None = None,
    beside: bool = False,
) -> JobResult:
    with file_columns(files, mapping, cache=cache, workdir=workdir) as columns:
        digests = {role: columns[role].digest for role in Role}
        held = None
        if beside and kept is not None and con is not None:
            lent = reconcile_lent(columns, mapping, policy, kept, con)
            if lent is not None:  # the validated tables, read where they are
                try:
                    return JobResult(lent, digests, lent.export_csv(export_to))
                except BaseException:
                    lent.release()
                    raise
            columns, held = beside_kept(columns, mapping, kept)
            if any(found.table is None for found in columns.values()):
                raise TextNotKeptError
            kept = None  # a workspace of its own: the kept one stays for the steps after
        # A new workspace (no kept one) spills where the process's DuckDB instance does: the
        # first DuckDB work of the process decided where (see `run_job`).
        run = reconcile_columns(columns, mapping, policy, con=con, spill=cache.folder, kept=kept)
        run.holds = held
    exported = run.export_csv(export_to)
    return JobResult(run, digests, exported)
