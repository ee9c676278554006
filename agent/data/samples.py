"""Files' head samples and the mapping inferred from them, once per file and process.

Inspecting a file (reading its head, deciding its layout, parsing its first records) is asked
for at the upload, by the agent's inspection, by the first read of the case and by each
validation; inferring the mapping of a pair of files by the inspection, the first read and the
validation. This keeps both, so each is done once per process. A sample is kept by the file's
digest and the line of its header (detected, or a person's `header_row` answer), so two
answers about one file never share a sample.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from cachetools import LRUCache

from agent.data.cache import Fetch
from agent.data.ingest import HEAD_BYTES, CsvSample, inspect_head, reheaded
from agent.data.mapping import Comparisons, Proposal, infer_mapping
from agent.data.schema import Role
from agent.data.vocabulary import BUILTIN, Vocabulary

logger = logging.getLogger(__name__)


class SampleCache:
    """Files' head samples by digest, in this process's memory, the `size` (at least 1) most
    recently used; with a `folder`, each file's head bytes also on disk, for every process of
    the machine, those unused for `max_age` removed as a head is written.

    Inspecting a file (reading its head, deciding its layout, parsing its first records) is
    done at the upload, again by the agent's inspection and by each validation: with this it is
    done once per file and process, and a file whose head is kept is never fetched again for
    it (another worker inspects it from the head on disk, not from an S3 download).
    """

    def __init__(
        self,
        size: int = 8,
        *,
        folder: Path | None = None,
        max_age: timedelta = timedelta(days=2),
        vocabulary: Vocabulary = BUILTIN,
    ) -> None:
        self.size = size
        self.vocabulary = vocabulary
        """The words inference reads status and kind values by: the policy's in force."""
        self.folder = folder
        self.max_age = max_age
        self._samples: LRUCache[tuple[str, int | None], CsvSample] = LRUCache(size)
        """Samples by the file's digest and the header line a person gave (None: detected)."""
        self._proposals: LRUCache[str, Proposal] = LRUCache(size)
        self.comparisons = Comparisons()
        """What inference compared of the latest pairs of samples: an edit infers again on it."""
        self._lock = threading.Lock()

    def proposal(
        self,
        samples: tuple[CsvSample, CsvSample],
        digests: tuple[str, str],
        answers: dict[Role, dict[str, str]] | None = None,
        vocabulary: Vocabulary | None = None,
    ) -> Proposal:
        """`infer_mapping` of two sampled files (their digests name them) under `answers`,
        status and kind values read by `vocabulary` (the case's channel's policy's; this
        cache's by default), inferred once per process and vocabulary: the agent's inspection
        and the validation after it ask for the same proposal. A `header_row` answer reads
        its file's sample again, kept here by digest and line (`reheaded`). Raises what
        `infer_mapping` raises (never remembered)."""
        words = vocabulary if vocabulary is not None else self.vocabulary
        key = _proposal_key(samples, digests, answers, words)
        with self._lock:
            found = self._proposals.get(key)
            if found is not None:
                return found

        def reheader(sample: CsvSample, header_row: int) -> CsvSample:
            digest = digests[0] if sample is samples[0] else digests[1]
            return self.reheaded(digest, sample, header_row)

        found = infer_mapping(
            *samples,
            answers=answers,
            memo=self.comparisons,
            vocabulary=words,
            reheader=reheader,
        )
        self._remember_proposal(key, found)
        return found

    def reheaded(self, digest: str, sample: CsvSample, header_row: int) -> CsvSample:
        """`sample` (of the file with `digest`) read again with its header on line
        `header_row` (`ingest.reheaded`), once per file, line and process: an edit's proposal,
        its validation and the first read after it infer on the same sample object, so what
        inference compared of it is reused (`Comparisons`). Raises what `reheaded` raises
        (never remembered)."""
        if sample.layout.header_line + 1 == header_row:
            return sample
        key: tuple[str, int | None] = (digest, header_row)
        with self._lock:
            found = self._samples.get(key)
        if found is None:
            found = reheaded(sample, header_row)
            self._remember_sample(key, found)
        return _named(found, sample.layout.file_name)

    def keep_proposal(
        self,
        samples: tuple[CsvSample, CsvSample],
        digests: tuple[str, str],
        answers: dict[Role, dict[str, str]] | None,
        found: Proposal,
        vocabulary: Vocabulary | None = None,
    ) -> None:
        """Remember `found`, inferred from `samples` under `answers` and `vocabulary` before
        their files' digests were known (while the files were stored), as `proposal` would
        have."""
        words = vocabulary if vocabulary is not None else self.vocabulary
        self._remember_proposal(_proposal_key(samples, digests, answers, words), found)

    def _remember_proposal(self, key: str, found: Proposal) -> None:
        with self._lock:
            self._proposals[key] = found

    def keep(self, digest: str, head: bytes, size: int, found: CsvSample) -> None:
        """Remember `found`, the sample `inspect_head` made of the file with `digest` from its
        first bytes `head` (`size` bytes in all) while the file was being stored, as `sample`
        would have: in memory, and the head on disk for other processes."""
        self._remember_sample((digest, None), found)
        if self.folder is not None:
            self._keep(digest.removeprefix("sha256:"), head[:HEAD_BYTES], size)

    def sample(
        self, digest: str, file_name: str, fetch: Fetch, *, header_row: int | None = None
    ) -> CsvSample:
        """The sample of the file with `digest` (`inspect_csv`), its layout named `file_name`;
        with `header_row`, read with the header on that line (a person's answer), kept apart
        from the detected one.

        Raises the typed input errors of `inspect_csv`, and MappingError for a `header_row`
        that cannot be the header (never remembered)."""
        key = (digest, header_row)
        with self._lock:
            found = self._samples.get(key)
        if found is None:
            with self._lock:
                detected = self._samples.get((digest, None))
            if header_row is not None and detected is not None and detected.head:
                found = self.reheaded(digest, detected, header_row)
            else:
                head, size = self._head(digest, fetch)
                found = inspect_head(head, size, file_name, header_row=header_row)
                self._remember_sample(key, found)
        return _named(found, file_name)

    def _remember_sample(self, key: tuple[str, int | None], found: CsvSample) -> None:
        with self._lock:
            self._samples[key] = found

    def _head(self, digest: str, fetch: Fetch) -> tuple[bytes, int]:
        """The file's first `HEAD_BYTES` and its size: kept on disk, or read and kept."""
        hexdigest = digest.removeprefix("sha256:")
        if self.folder is not None:
            for kept in self.folder.glob(f"{hexdigest}-*.head"):
                try:
                    size = int(kept.stem.rsplit("-", 1)[1])
                    head = kept.read_bytes()
                    now = time.time()
                    os.utime(kept, (now, now))
                    return head, size
                except (OSError, ValueError):
                    break
        with fetch() as path, path.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
            size = os.fstat(handle.fileno()).st_size
        if self.folder is not None:
            self._keep(hexdigest, head, size)
        return head, size

    def _keep(self, hexdigest: str, head: bytes, size: int) -> None:
        """Write a head for other processes (a failure only costs a fetch later), removing
        those unused for `max_age`. Kept by hand: the heads are files shared by the machine's
        processes and aged by their times on disk, not one process's memory (cachetools)."""
        assert self.folder is not None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            partial = self.folder / f".{hexdigest}.{os.getpid()}.{threading.get_ident()}"
            partial.write_bytes(head)
            partial.replace(self.folder / f"{hexdigest}-{size}.head")
            limit = time.time() - self.max_age.total_seconds()
            for kept in self.folder.glob("*.head"):
                if kept.stat().st_mtime < limit:
                    kept.unlink(missing_ok=True)
        except OSError:
            logger.warning("folder=<%s> | a file's head was not kept", self.folder)


def _named(found: CsvSample, file_name: str) -> CsvSample:
    """`found` with its layout named `file_name` (the name a case gave the file)."""
    if found.layout.file_name == file_name:
        return found
    return replace(found, layout=replace(found.layout, file_name=file_name))


def _proposal_key(
    samples: tuple[CsvSample, CsvSample],
    digests: tuple[str, str],
    answers: dict[Role, dict[str, str]] | None,
    vocabulary: Vocabulary,
) -> str:
    """The key of a proposal: the files (their digests and names), the answers given and the
    words values were read by."""
    given = {role.value: dict(fields) for role, fields in (answers or {}).items()}
    names = [sample.layout.file_name for sample in samples]
    return json.dumps([*digests, *names, given, vocabulary.key], sort_keys=True)
