"""One reconciliation job end to end: read the inputs, reconcile, export.

The digests returned are those of the bytes parsed: computed while each file was parsed into
its columns (`ingest.columnar`), kept with them in the columnar cache. The caller compares them
with the ones the approval was bound to before trusting the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent.data.cache import ColumnCache
from agent.data.normalize.load import Files
from agent.data.policy import Policy
from agent.data.reconcile import Reconciliation
from agent.data.reconcile.run import file_columns, reconcile_columns
from agent.data.schema import Mapping, Role


@dataclass
class JobResult:
    """A finished job: the reconciliation, the digests of the bytes read, the export size."""

    reconciliation: Reconciliation
    digests: dict[Role, str]
    exported: int


def run_job(
    files: Files,
    mapping: Mapping,
    policy: Policy,
    export_to: Path,
    *,
    workdir: Path | None = None,
    cache: ColumnCache | None = None,
) -> JobResult:
    """Reconcile both files under `mapping` and write the exceptions CSV."""
    with file_columns(files, mapping, cache=cache, workdir=workdir) as columns:
        # The process's DuckDB instance outlives this job: it spills in the cache's folder,
        # never in a job's own scratch folder.
        spill = cache.folder if cache is not None else workdir
        kept = cache.kept if cache is not None else None
        run = reconcile_columns(columns, mapping, policy, spill=spill, kept=kept)
        digests = {role: columns[role].digest for role in Role}
    exported = run.export_csv(export_to)
    return JobResult(run, digests, exported)
