"""One reconciliation job end to end: hash the inputs, read them, reconcile, export.

Hashing runs beside the DuckDB work (hashlib releases the GIL), so checking that the bytes are
still the approved ones costs little wall time. The caller compares the digests with the ones
the approval was bound to before trusting the result.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from agent.data.ingest import file_digest
from agent.data.policy import Policy
from agent.data.reconcile import Reconciliation, reconcile
from agent.data.schema import Mapping, Role


@dataclass
class JobResult:
    """A finished job: the reconciliation, the digests of the bytes read, the export size."""

    reconciliation: Reconciliation
    digests: dict[Role, str]
    exported: int


def run_job(
    files: dict[Role, tuple[Path, str]],
    mapping: Mapping,
    policy: Policy,
    export_to: Path,
    *,
    workdir: Path | None = None,
) -> JobResult:
    """Hash both files, reconcile them under `mapping` and write the exceptions CSV."""
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="hash") as pool:
        futures = {role: pool.submit(file_digest, files[role][0]) for role in Role}
        run = reconcile(files, mapping, policy, workdir=workdir)
        exported = run.export_csv(export_to)
        digests = {role: future.result() for role, future in futures.items()}
    return JobResult(run, digests, exported)
