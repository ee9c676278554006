"""The one door to a case's bytes: every cache of them and every path into DuckDB.

`CaseFiles` is built once by the composition root (or, for a test's `Dependencies`, from its
blob store and settings) and used by the agent's tools, its turns and the use cases, which
assemble nothing of the engine themselves. An import contract keeps the caches and the reading
of files (`agent.data.cache`, `agent.data.samples`, `agent.data.ingest`) behind it.
"""

from agent.casefiles.door import CaseFiles, file_sources
from agent.casefiles.one_shot import inspect_files, reconcile_files, validate_files
from agent.casefiles.sealed import SealedOutcome, SealIdentity
from agent.data.ingest import CsvSample
from agent.data.ingest.columnar import RowProgress
from agent.data.pipeline import JobResult
from agent.data.reconcile import Reconciliation
from agent.data.reconcile.values import Finding, Summary
from agent.data.samples import SampleCache

__all__ = [
    "CaseFiles",
    "CsvSample",
    "Finding",
    "JobResult",
    "Reconciliation",
    "RowProgress",
    "SampleCache",
    "SealIdentity",
    "SealedOutcome",
    "Summary",
    "file_sources",
    "inspect_files",
    "reconcile_files",
    "validate_files",
]
