"""`CaseFiles`: a case's files sampled, proposed, read, validated and reconciled, each through
the caches that make the next step cheap (the heads and proposals, the columnar cache with the
tables kept between a validation and the reconciliation, the validations' memo)."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable, Iterable
from datetime import timedelta
from functools import partial
from pathlib import Path

import duckdb

from agent.casefiles.arrival import Arrived, Put, store_and_inspect
from agent.casefiles.sealed import Sealed, SealedOutcome, SealedWork, SealIdentity
from agent.data.cache import ColumnCache, Reading
from agent.data.evident_reading import take_evident
from agent.data.ingest import CsvSample
from agent.data.ingest.columnar import RowProgress
from agent.data.kept import KeptTables
from agent.data.mapping import Proposal
from agent.data.normalize import ValidationReport
from agent.data.normalize.load import Source
from agent.data.normalize.memo import ValidationMemo
from agent.data.pipeline import JobResult, run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.reconcile.preload import preload
from agent.data.samples import SampleCache
from agent.data.schema import Mapping, Role
from agent.domain import DatasetRef
from agent.errors import ReconbotError
from agent.ports import BlobStore, Upload

logger = logging.getLogger(__name__)

Files = dict[Role, DatasetRef]
Answers = dict[Role, dict[str, str]]


def file_sources(blobs: BlobStore, refs: Files) -> dict[Role, Source]:
    """Each file as the engine reads it: by its digest (the columnar cache's and the first
    read's key), its bytes fetched from the blob store only when a read needs them."""
    return {
        role: Source(ref.name, partial(blobs.local_copy, ref.digest), ref.digest, ref.size)
        for role, ref in refs.items()
    }


class CaseFiles:
    """The one door to a case's bytes: heads and proposals (`samples`), the files' columns and
    the tables kept between steps (`columns`), the validations' memo; every read of a case's
    files goes through here, so each cache is owned once."""

    def __init__(
        self,
        blobs: BlobStore,
        workdir: Path,
        *,
        policy: Policy,
        samples: SampleCache | None = None,
        max_bytes: int = 4 << 30,
        max_age: timedelta = timedelta(days=2),
    ) -> None:
        self.blobs = blobs
        self.workdir = workdir
        self.policy = policy
        self.samples = (
            samples if samples is not None else SampleCache(vocabulary=policy.vocabulary())
        )
        self.columns = ColumnCache(workdir / "columns", max_bytes=max_bytes, max_age=max_age)
        self.kept = KeptTables()
        """The last validations' loaded tables, for the steps after them in this process."""
        self.sealed = SealedWork(workdir / "sealed", max_age=max_age)
        """Reconciliations done while a confirmation request waits, sealed until approved."""
        self.memo = ValidationMemo(self.columns.folder / "validations", max_age=max_age)

    def store_and_inspect(
        self,
        uploads: list[Upload],
        put: Put,
        readable: Callable[[list[Arrived]], None] | None = None,
        policy: Policy | None = None,
    ) -> list[Arrived]:
        """Store uploads and decide which role each file plays, inspecting their heads while
        they are stored (`arrival.store_and_inspect`, values read by `policy`'s words: the
        case's channel's, the door's own by default); what is found is kept for the steps
        that follow."""
        words = (policy or self.policy).vocabulary()
        return store_and_inspect(uploads, put, self.samples, self.blobs, readable, words)

    def sources(self, files: Files) -> dict[Role, Source]:
        """The files as the engine reads them, fetched from the blob store only when needed."""
        return file_sources(self.blobs, files)

    def sample(self, ref: DatasetRef, header_row: int | None = None) -> CsvSample:
        """A file's head sample (its layout and first records), read once per process and
        header line: what inspecting, proposing and choosing a column look at."""
        fetch = partial(self.blobs.local_copy, ref.digest)
        return self.samples.sample(ref.digest, ref.name, fetch, header_row=header_row)

    def columns_of(self, ref: DatasetRef) -> list[str]:
        """A file's header, for a person choosing a column."""
        return list(self.sample(ref).layout.columns)

    def propose(
        self,
        files: Files,
        samples: dict[Role, CsvSample],
        answers: Answers | None = None,
        policy: Policy | None = None,
    ) -> Proposal:
        """The proposal for the two files under `answers`, status and kind values read by
        `policy`'s words (the case's channel's; the door's own by default), inferred once per
        process and policy."""
        digests = (files[Role.ORDERS].digest, files[Role.PAYMENTS].digest)
        pair = (samples[Role.ORDERS], samples[Role.PAYMENTS])
        words = (policy or self.policy).vocabulary()
        return self.samples.proposal(pair, digests, answers, words)

    def start_reading(
        self,
        files: Files,
        on_rows: RowProgress | None = None,
        answers: Answers | None = None,
        policy: Policy | None = None,
    ) -> None:
        """Start reading the files while the agent inspects them, so that the validation finds
        them read or being read: both straight into the tables of the mapping the inspection
        will propose (`preload`, one parse per file, checked under `policy`: the case's
        channel's, the door's own by default), or, when no mapping can be inferred from the
        samples, each into the columnar cache. Never raises: the steps that follow read the
        files again and say what is wrong, in their words."""
        sources = self.sources(files)
        samples = {}
        for role, ref in files.items():
            try:
                samples[role] = self.sample(ref)
            except ReconbotError:  # the agent's inspection reports it, in its words
                continue
        if set(samples) == set(Role):
            try:
                mapping = self.propose(files, samples, answers, policy).mapping
            except (ReconbotError, KeyError):  # the validation says why
                mapping = None
            if mapping is not None:
                try:
                    preload(
                        sources,
                        mapping,
                        self.columns,
                        self.kept,
                        on_rows,
                        policy=policy or self.policy,
                    )
                except Exception as error:  # the validation reads the files and says why
                    kind = type(error).__name__
                    logger.warning("error=<%s> | the first read did not start", kind)
                return
        for role, sample in samples.items():
            source, layout = sources[role], sample.layout
            reading = Reading(layout.encoding, layout.delimiter, layout.header_line + 1)
            self.columns.prefetch(
                source.name, reading, source.fetch, digest=files[role].digest, progress=on_rows
            )

    def validate(
        self,
        files: Files,
        mapping: Mapping,
        on_rows: RowProgress | None = None,
        policy: Policy | None = None,
    ) -> ValidationReport:
        """`mapping` checked on every row of the files, under `policy` (the policy in force in
        the case's channel; the door's own by default); the tables it loads are kept for the
        next validation or the reconciliation of these files."""
        return load_and_validate(
            connect(self.workdir),
            self.sources(files),
            mapping,
            self.workdir,
            policy=policy or self.policy,
            cache=self.columns,
            kept=self.kept,
            progress=on_rows,
            memo=self.memo,
        )

    def validate_by_evidence(
        self,
        files: Files,
        samples: dict[Role, CsvSample],
        answers: Answers,
        proposal: Proposal,
        report: ValidationReport,
        on_rows: RowProgress | None = None,
        policy: Policy | None = None,
    ) -> tuple[Proposal, ValidationReport]:
        """The reading the files show in place of `proposal`'s when its validation found one
        that does better and no answer of a person's contradicts (`take_evident`), validated
        under `policy` as `validate` says."""
        return take_evident(
            lambda given: self.propose(files, samples, given, policy),
            lambda mapping: self.validate(files, mapping, on_rows, policy),
            answers,
            proposal,
            report,
        )

    def reconcile(
        self,
        files: Files,
        mapping: Mapping,
        policy: Policy,
        export: Path,
        workdir: Path,
        beside: duckdb.DuckDBPyConnection | None = None,
    ) -> JobResult:
        """Reconcile the files under an approved `mapping` and `policy`, writing the exceptions
        CSV to `export`; the tables a validation kept for these files are used, not read
        again. The result carries the digests of the bytes read, for the caller to check.
        `beside`: a connection to run on that a discard can interrupt (the reconciliation of
        a request that waits): it borrows the tables the validation kept and leaves them as
        they were, or, when those are not this mapping's, makes its own from the kept text
        (`pipeline.run_job`); either way the edits that come meanwhile still find them."""
        return run_job(
            self.sources(files),
            mapping,
            policy,
            export,
            workdir=workdir,
            cache=self.columns,
            kept=self.kept,
            con=beside,
            beside=beside is not None,
        )

    def seal(
        self,
        identity: SealIdentity,
        files: Files,
        mapping: Mapping,
        examples: int,
        policy: Policy | None = None,
    ) -> None:
        """Reconcile `files` under the `mapping` of the confirmation request `identity` names,
        in the background, and keep the outcome sealed (`take_sealed`): the person reading the
        request does not wait for it once they approve. Under `policy` (the policy in force in
        the case's channel; the door's own by default), only when the identity names its
        version."""
        rules = policy or self.policy

        def compute(export: Path) -> Sealed:
            con = connect(self.workdir)  # the seal's connection, interrupted if discarded
            self.sealed.working(identity.pause_id, con)
            return self.reconcile_and_read(files, mapping, rules, export, examples, con)

        if identity.policy_version == rules.version:
            self.sealed.seal(identity, compute)

    def reconcile_and_read(
        self,
        files: Files,
        mapping: Mapping,
        policy: Policy,
        export: Path,
        examples: int,
        beside: duckdb.DuckDBPyConnection | None = None,
    ) -> Sealed:
        """Reconcile as `reconcile` does and read what the results message shows: the rows of
        the exceptions CSV written to `export`, the summary, the first `examples` findings and
        the digests of the bytes read; `beside` as `reconcile` says."""
        with tempfile.TemporaryDirectory(dir=self.workdir) as folder:
            job = self.reconcile(files, mapping, policy, export, Path(folder), beside)
            run = job.reconciliation
            try:
                return job.exported, run.summary(), run.examples(examples), job.digests
            finally:
                run.release()  # a workspace it borrowed goes back to the edits

    def take_sealed(self, identity: SealIdentity) -> SealedOutcome | None:
        """The reconciliation sealed under exactly `identity`, for the approved request's
        reconciliation to publish; None when there is none (it reconciles then)."""
        return self.sealed.take(identity)

    def close(self) -> None:
        """Stop the work this door does in the background (`SealedWork.stop`), for a process
        that is ending: it then neither waits for it nor leaves half of it on disk."""
        self.sealed.stop()

    def discard_sealed(self, pause_ids: Iterable[str]) -> None:
        """Drop what was sealed for these requests: none of them will be approved as it was."""
        for pause_id in pause_ids:
            self.sealed.discard(pause_id)
