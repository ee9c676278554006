"""Uploads stored, and inspected while they are stored.

Files are stored before anything is recorded about them (`Intake`). Inspecting a file (deciding
its layout and sampling its first records, from its head), deciding which role each of two
files plays and inferring the mapping of the pair are Python work on one core, and need only
the files' heads. So each file's head is inspected as soon as its store has read it (a
`HeadTap` between the upload and the blob store), and a pair's roles and mapping are decided,
while the stores still hash, write and sync the rest of the bytes (or download them from
Slack). What is found is remembered under the files' digests once the stores give them, exactly
as inspecting the stored files afterwards would have found it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError, ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, replace
from functools import partial
from typing import BinaryIO, cast

from agent.data.ingest import CsvSample, inspect_head
from agent.data.ingest.head_tap import HeadTap
from agent.data.mapping import Proposal, assign_roles, infer_mapping, role_of
from agent.data.samples import SampleCache
from agent.data.schema import Role
from agent.data.vocabulary import Vocabulary
from agent.errors import WorkflowError
from agent.ports import BlobStore, StoredBlob, Upload

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Arrived:
    """A stored upload and the role its file plays."""

    role: Role
    upload: Upload
    blob: StoredBlob


@dataclass
class _Head:
    """What a file's head gave while the file was stored: its bytes, the size `inspect_head`
    was told (whether the head is the whole file), and its sample or the error that inspecting
    it raised (raised once every file is stored, in the order of the files)."""

    head: bytes
    told: int
    sample: CsvSample | None = None
    error: Exception | None = None

    def fits(self, blob: StoredBlob) -> bool:
        """Whether the head was judged whole exactly when the stored file is the head."""
        return (len(self.head) == self.told) == (len(self.head) == blob.size)


Readable = Callable[[StoredBlob], None]
"""What a store calls once a blob's bytes can be read back (`BlobStore.put`'s `on_readable`)."""

Put = Callable[[Upload, Readable], StoredBlob]
"""How an upload is stored: its stream read, stored, and `Readable` called on the way."""


def store_and_inspect(
    uploads: list[Upload],
    put: Put,
    samples: SampleCache,
    blobs: BlobStore,
    readable: Callable[[list[Arrived]], None] | None = None,
    vocabulary: Vocabulary | None = None,
) -> list[Arrived]:
    """Store the uploads (all at once, with `put`) and decide which role each file plays.

    Raises, once every file is stored, what storing and then inspecting them one by one
    raises: a store's failure first, then what inspecting the first file that does not read
    raised (the typed input error of a file that is not a readable CSV export), or
    WorkflowError for more than two files. With two files whose heads read, the mapping
    inferred from them (status and kind values read by `vocabulary`, the case's channel's
    policy's; `samples`' by default) is remembered in `samples` for the inspection that
    follows.

    With `readable`, such a pair is handed to it (the files as they will arrive) as soon as
    both stores say their bytes can be read, while the stores still sync them to disk: work
    that only reads the files (their first read, about 0.35 s sooner for the 1M benchmark
    files) starts then, and nothing about them may be recorded before this returns. It is
    not called for other uploads, nor when a store stops (or returns) without saying so. A
    store that fails after saying so still fails this call: the work started on its bytes
    is then only wasted. What `readable` raises is logged, not raised.
    """
    words = vocabulary if vocabulary is not None else samples.vocabulary
    taps = [HeadTap(upload.stream) for upload in uploads]  # the stores call only `read`
    seen: list[Future[StoredBlob | None]] = [Future() for _ in uploads]
    handed: list[StoredBlob] | None = None
    with ThreadPoolExecutor(max_workers=max(1, len(uploads)), thread_name_prefix="store") as pool:
        storing = [
            pool.submit(_store, put, replace(upload, stream=cast(BinaryIO, tap)), tap, heard)
            for upload, tap, heard in zip(uploads, taps, seen, strict=True)
        ]
        heads = [_inspect(tap, upload.name) for upload, tap in zip(uploads, taps, strict=True)]
        early = _decide(heads, samples, words)
        if readable is not None and early is not None and early[1] is not None:
            handed = _hand_over(uploads, heads, early, seen, (samples, words), readable)
        stored = [future.result() for future in storing]
    kept = handed == stored  # the samples and the proposal are kept under these digests
    found: list[CsvSample] = []
    if not all(h is not None and h.fits(b) for h, b in zip(heads, stored, strict=True)):
        early = None  # decided from a head the stored file does not bear out
    for upload, blob, head in zip(uploads, stored, heads, strict=True):
        seen_head = head if head is not None and head.fits(blob) else None
        if seen_head is not None and seen_head.error is not None:
            raise seen_head.error
        if seen_head is not None and seen_head.sample is not None:
            if not kept:
                samples.keep(blob.digest, seen_head.head, blob.size, seen_head.sample)
            found.append(seen_head.sample)
        else:  # the head was not seen as stored: inspected from the stored file
            fetch = partial(blobs.local_copy, blob.digest)
            found.append(samples.sample(blob.digest, upload.name, fetch))
    if len(stored) == 1:
        roles: tuple[Role, ...] = (role_of(found[0]),)
    elif len(stored) == 2:
        roles = early[0] if early is not None else assign_roles(found[0], found[1])
    else:
        raise WorkflowError("An investigation takes one orders file and one payments file.")
    arrived = [
        Arrived(role, upload, blob)
        for role, upload, blob in zip(roles, uploads, stored, strict=True)
    ]
    if early is not None and early[1] is not None and not kept:
        _keep_proposal(arrived, found, samples, early[1], words)
    return arrived


def _hand_over(
    uploads: list[Upload],
    heads: list[_Head | None],
    early: tuple[tuple[Role, Role], Proposal | None],
    seen: list[Future[StoredBlob | None]],
    kept: tuple[SampleCache, Vocabulary],
    readable: Callable[[list[Arrived]], None],
) -> list[StoredBlob] | None:
    """Wait until each store says its bytes can be read, or stops; then, when both can and
    the heads are the files' own, remember the samples and the proposal under the files'
    digests (as the stored files would give them) and hand the files to `readable`.
    Returns the blobs handed over, or None."""
    samples, words = kept
    said = [word.result() for word in seen]
    blobs = [blob for blob in said if blob is not None]
    if len(blobs) != len(said) or early[1] is None:
        return None  # a store stopped without saying: the steps after the stores read them
    pairs = list(zip(heads, blobs, strict=True))
    if not all(h is not None and h.sample is not None and h.fits(b) for h, b in pairs):
        return None
    arrived = [
        Arrived(role, upload, blob)
        for role, upload, blob in zip(early[0], uploads, blobs, strict=True)
    ]
    found = []
    for head, blob in pairs:
        assert head is not None
        assert head.sample is not None
        samples.keep(blob.digest, head.head, blob.size, head.sample)
        found.append(head.sample)
    _keep_proposal(arrived, found, samples, early[1], words)
    try:
        readable(arrived)
    except Exception as error:  # only a head start: the steps after the stores read the files
        logger.warning("error=<%s> | the files were not handed over early", type(error).__name__)
    return blobs


def _keep_proposal(
    arrived: list[Arrived],
    found: list[CsvSample],
    samples: SampleCache,
    proposal: Proposal,
    vocabulary: Vocabulary,
) -> None:
    """Remember the proposal inferred from the heads under the files' digests, by role."""
    by_role = {a.role: (sample, a.blob.digest) for a, sample in zip(arrived, found, strict=True)}
    orders, payments = by_role[Role.ORDERS], by_role[Role.PAYMENTS]
    pair, digests = (orders[0], payments[0]), (orders[1], payments[1])
    samples.keep_proposal(pair, digests, None, proposal, vocabulary)


def _said(blob: Future[StoredBlob | None]) -> Readable:
    """What a store calls once a blob can be read back: the blob's word, said once."""

    def readable(stored: StoredBlob) -> None:
        _settle(blob, stored)

    return readable


def _settle(word: Future[StoredBlob | None], blob: StoredBlob | None) -> None:
    """Say `blob` (None: the store stopped without saying so); a word said already stands."""
    with suppress(InvalidStateError):
        word.set_result(blob)


def _store(put: Put, upload: Upload, tap: HeadTap, seen: Future[StoredBlob | None]) -> StoredBlob:
    """Store one upload read through its tap; the tap hears when the store stops, and `seen`
    when its bytes can be read, or that the store stopped."""
    try:
        return put(upload, _said(seen))
    finally:
        tap.finish()
        _settle(seen, None)  # the store returned or failed: a word not said by now never comes


def _inspect(tap: HeadTap, file_name: str) -> _Head | None:
    """Inspect a file's head as soon as its store has read it (None: the store stopped first,
    and its error is the one to report)."""
    seen = tap.head()
    if seen is None:
        return None
    head, size = seen
    try:
        return _Head(head, size, sample=inspect_head(head, size, file_name))
    except Exception as error:  # raised in the order of the files, once every file is stored
        return _Head(head, size, error=error)


def _decide(
    heads: list[_Head | None], samples: SampleCache, vocabulary: Vocabulary
) -> tuple[tuple[Role, Role], Proposal | None] | None:
    """For two files whose heads read: the role each plays and the mapping inferred from them
    (None when it cannot be inferred: the inspection that follows says why), its comparison of
    the files kept in `samples` for the edits that follow.

    Only a head start: whatever fails here is left to the steps after the files are stored,
    which meet it where and as they did before (the validation says why no mapping fits)."""
    read = [h.sample for h in heads if h is not None and h.sample is not None]
    if len(heads) != 2 or len(read) != 2:
        return None
    first, second = read
    try:
        roles = assign_roles(first, second)
    except Exception as error:
        logger.warning("error=<%s> | no roles assigned from the heads", type(error).__name__)
        return None
    pair = (first, second) if roles[0] is Role.ORDERS else (second, first)
    try:
        proposal = infer_mapping(*pair, memo=samples.comparisons, vocabulary=vocabulary)
    except Exception as error:
        logger.info("error=<%s> | no mapping inferred from the heads", type(error).__name__)
        proposal = None
    return roles, proposal
