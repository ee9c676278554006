"""Uploads are inspected while they are stored: what is found equals inspecting the stored files,
errors come out as storing then inspecting would raise them, and nothing waits forever."""

from __future__ import annotations

import codecs
import io
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from functools import partial
from pathlib import Path
from typing import BinaryIO, TypeVar, cast

import pytest

import agent.casefiles.arrival as arrival
import agent.data.samples as samples_module
from agent.casefiles.arrival import Readable, store_and_inspect
from agent.data.ingest import HEAD_BYTES
from agent.data.mapping import infer_mapping
from agent.data.samples import SampleCache
from agent.data.schema import Role
from agent.errors import (
    EncodingError,
    FileTooLargeError,
    NotCsvError,
    StorageUnavailableError,
    WorkflowError,
)
from agent.ports import StoredBlob
from agent.usecases.common import Upload
from storage.blobs import LocalBlobStore

from .conftest import Demo

T = TypeVar("T")


def _upload(data: bytes, name: str) -> Upload:
    return Upload(io.BytesIO(data), name)


def _bounded(call: Callable[[], T], seconds: float = 30) -> T:
    """`call()` on a thread of its own: its result, or what it raised; fails if it hangs."""
    done: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(call())
        except BaseException as error:
            failed.append(error)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=seconds)
    assert not worker.is_alive(), "store_and_inspect is still waiting"
    if failed:
        raise failed[0]
    return done[0]


def _big_orders(demo: Demo) -> bytes:
    """The demo orders with rows repeated past the head, so the head is not the whole file."""
    header, _, rows = demo.orders.read_bytes().partition(b"\n")
    data = header + b"\n" + rows
    while len(data) <= 2 * HEAD_BYTES:
        data += rows
    return data


@pytest.mark.parametrize("hand_over", [False, True])
def test_samples_and_proposal_equal_inspecting_the_stored_files(
    tmp_path: Path, demo: Demo, monkeypatch: pytest.MonkeyPatch, hand_over: bool
) -> None:
    blobs = LocalBlobStore(tmp_path / "blobs")
    samples = SampleCache(folder=tmp_path / "heads")
    orders = _big_orders(demo)
    payments = demo.payments.read_bytes()
    handed: list[list[arrival.Arrived]] = []

    arrived = store_and_inspect(
        # Payments first: the roles come from the contents, not the order.
        [_upload(payments, "stripe.csv"), _upload(orders, "shop.csv")],
        lambda upload, readable: blobs.put(upload.stream, on_readable=readable),
        samples,
        blobs,
        handed.append if hand_over else None,
    )

    assert handed == ([arrived] if hand_over else [])

    assert [(a.role, a.upload.name) for a in arrived] == [
        (Role.PAYMENTS, "stripe.csv"),
        (Role.ORDERS, "shop.csv"),
    ]
    by_role = {a.role: a.blob for a in arrived}
    fresh = SampleCache(folder=tmp_path / "heads")  # another process: only the heads are kept
    for role, name in ((Role.ORDERS, "shop.csv"), (Role.PAYMENTS, "stripe.csv")):
        blob = by_role[role]
        kept = samples.sample(blob.digest, name, _never)
        assert fresh.sample(blob.digest, name, _never) == kept
        heads = (tmp_path / "heads").glob(f"{blob.digest.removeprefix('sha256:')}-*.head")
        assert [h.name.rsplit("-", 1)[1] for h in heads] == [f"{blob.size}.head"]
        # Inspecting the stored file, as before the files were inspected while stored.
        assert kept == SampleCache().sample(
            blob.digest, name, partial(blobs.local_copy, blob.digest)
        )
    pair = (
        samples.sample(by_role[Role.ORDERS].digest, "shop.csv", _never),
        samples.sample(by_role[Role.PAYMENTS].digest, "stripe.csv", _never),
    )
    digests = (by_role[Role.ORDERS].digest, by_role[Role.PAYMENTS].digest)
    calls: list[object] = []
    monkeypatch.setattr(samples_module, "infer_mapping", lambda *a, **k: calls.append(a))

    remembered = samples.proposal(pair, digests, {})

    assert calls == []  # inferred while the files were stored, not again
    assert remembered == infer_mapping(*pair)


def test_the_head_is_inspected_and_the_mapping_inferred_while_the_files_are_stored(
    tmp_path: Path, demo: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    blobs = LocalBlobStore(tmp_path / "blobs")
    inferred = threading.Event()
    original = arrival.infer_mapping

    def noting(*args: object, **kwargs: object) -> object:
        found = original(*args, **kwargs)  # type: ignore[arg-type]
        inferred.set()
        return found

    monkeypatch.setattr(arrival, "infer_mapping", noting)

    def slow_put(upload: Upload, readable: Readable) -> StoredBlob:
        head = upload.stream.read(HEAD_BYTES + 1)
        if len(head) <= HEAD_BYTES:  # a small file: read to its end, as a store does
            head += upload.stream.read()
        # The rest of the bytes come only once the mapping is inferred from the heads: a
        # mapping inferred after the store would leave this waiting, and the test failing.
        assert inferred.wait(timeout=10), "the mapping was not inferred while storing"
        return blobs.put(io.BytesIO(head + upload.stream.read()), on_readable=readable)

    arrived = store_and_inspect(
        [_upload(_big_orders(demo), "orders.csv"), _upload(demo.payments.read_bytes(), "p.csv")],
        slow_put,
        SampleCache(),
        blobs,
    )

    assert {a.role for a in arrived} == set(Role)


def test_a_file_that_is_not_csv_is_refused_by_name_after_both_are_stored(
    tmp_path: Path, demo: Demo
) -> None:
    blobs = LocalBlobStore(tmp_path / "blobs")
    pdf = b"%PDF-1.7\n" + b"x" * 1000
    stored: list[StoredBlob] = []

    def put(upload: Upload, readable: Readable) -> StoredBlob:
        stored.append(blobs.put(upload.stream, on_readable=readable))
        return stored[-1]

    with pytest.raises(NotCsvError, match=r"report\.pdf\.csv"):
        store_and_inspect(
            [_upload(demo.orders.read_bytes(), "orders.csv"), _upload(pdf, "report.pdf.csv")],
            put,
            SampleCache(),
            blobs,
        )
    assert len(stored) == 2
    assert all(blobs.exists(blob.digest) for blob in stored)


def test_a_store_that_fails_is_what_is_raised_and_nothing_waits(tmp_path: Path, demo: Demo) -> None:
    blobs = LocalBlobStore(tmp_path / "blobs")

    def put(upload: Upload, readable: Readable) -> StoredBlob:
        if upload.name == "huge.csv":
            upload.stream.read(10)  # fails before the head is read
            raise FileTooLargeError("the file is over the upload limit", file_name="huge.csv")
        return blobs.put(upload.stream)

    uploads = [_upload(b"%PDF-1.7\n", "other.csv"), _upload(demo.orders.read_bytes(), "huge.csv")]
    with pytest.raises(FileTooLargeError, match=r"huge\.csv"):
        # The other file is not a CSV either: the store's failure comes first.
        _bounded(lambda: store_and_inspect(uploads, put, SampleCache(), blobs))


def test_a_store_that_fails_after_the_head_was_inspected_is_what_is_raised(
    tmp_path: Path, demo: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The common case of a failed store (the disk, S3, a download cut off): the heads were
    read and inspected, here with a fault of the inspection itself, and the store's error is
    still the one raised; a fault of the inference only costs the head start."""
    blobs = LocalBlobStore(tmp_path / "blobs")
    original = arrival.inspect_head

    def faulty(head: bytes, size: int, file_name: str) -> object:
        if file_name == "payments.csv":
            raise ValueError("a fault of the inspection")
        return original(head, size, file_name)

    def put(upload: Upload, readable: Readable) -> StoredBlob:
        upload.stream.read()  # the whole file: its head is seen
        if upload.name == "orders.csv":
            raise StorageUnavailableError("the file store cannot be reached")
        return blobs.put(io.BytesIO(b""))

    monkeypatch.setattr(arrival, "inspect_head", faulty)
    uploads = [_upload(_big_orders(demo), "orders.csv"), _upload(b"id\n1\n", "payments.csv")]
    with pytest.raises(StorageUnavailableError):
        _bounded(lambda: store_and_inspect(uploads, put, SampleCache(), blobs))

    monkeypatch.setattr(arrival, "inspect_head", original)

    def broken(*args: object, **kwargs: object) -> object:
        raise ValueError("a fault of the inference")

    monkeypatch.setattr(arrival, "infer_mapping", broken)
    samples = SampleCache()
    files = [_upload(_big_orders(demo), "orders.csv"), _upload(demo.payments.read_bytes(), "p.csv")]
    arrived = _bounded(
        lambda: store_and_inspect(
            files, lambda u, readable: blobs.put(u.stream, on_readable=readable), samples, blobs
        )
    )
    assert [a.role for a in arrived] == [Role.ORDERS, Role.PAYMENTS]
    assert samples._proposals == {}  # nothing remembered: the inspection after infers again


def test_the_first_file_that_does_not_read_is_the_one_refused(tmp_path: Path, demo: Demo) -> None:
    blobs = LocalBlobStore(tmp_path / "blobs")
    bad_utf16 = codecs.BOM_UTF16_LE + "id,amount\n".encode("utf-16-le") + b"\x00\xd8x\x00"
    pdf = b"%PDF-1.7\n" + b"x" * 1000

    def store(*files: tuple[bytes, str]) -> list[arrival.Arrived]:
        uploads = [_upload(*file) for file in files]
        return _bounded(
            lambda: store_and_inspect(
                uploads,
                lambda upload, readable: blobs.put(upload.stream, on_readable=readable),
                SampleCache(),
                blobs,
            )
        )

    data = demo.orders.read_bytes()
    with pytest.raises(NotCsvError, match=r"a\.csv"):
        store((pdf, "a.csv"), (bad_utf16, "b.csv"))
    with pytest.raises(EncodingError, match=r"b\.csv.*UTF-16"):
        store((data, "a.csv"), (bad_utf16, "b.csv"))
    with pytest.raises(NotCsvError, match=r"c\.csv"):  # before the three files are refused
        store((data, "a.csv"), (data, "b.csv"), (pdf, "c.csv"))


def test_a_file_whose_head_the_store_never_showed_is_inspected_from_the_stored_file(
    tmp_path: Path, demo: Demo
) -> None:
    """A store that keeps the bytes without reading them through (one that already holds them,
    say) leaves the head unseen: the stored file is inspected instead, as before."""
    blobs = LocalBlobStore(tmp_path / "blobs")
    data = {"orders.csv": demo.orders.read_bytes(), "payments.csv": demo.payments.read_bytes()}

    def put(upload: Upload, readable: Readable) -> StoredBlob:
        return blobs.put(io.BytesIO(data[upload.name]))  # never reads `upload.stream`

    arrived = _bounded(
        lambda: store_and_inspect(
            [
                _upload(data["orders.csv"], "orders.csv"),
                _upload(data["payments.csv"], "payments.csv"),
            ],
            put,
            SampleCache(),
            blobs,
        )
    )

    assert [a.role for a in arrived] == [Role.ORDERS, Role.PAYMENTS]


def test_more_than_two_files_are_refused(tmp_path: Path, demo: Demo) -> None:
    blobs = LocalBlobStore(tmp_path / "blobs")
    data = demo.orders.read_bytes()
    with pytest.raises(WorkflowError, match="one orders file and one payments file"):
        store_and_inspect(
            [_upload(data, f"{n}.csv") for n in "abc"],
            lambda upload, readable: blobs.put(upload.stream, on_readable=readable),
            SampleCache(),
            blobs,
        )


def _never() -> AbstractContextManager[Path]:
    pytest.fail("fetched a file whose sample was kept")


class _Hiccup(io.RawIOBase):
    """A stream that once answers a read with no bytes before the rest of the file comes."""

    def __init__(self, data: bytes, after: int) -> None:
        self._data, self._at, self._after, self._hiccuped = data, 0, after, False

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self._at == self._after and not self._hiccuped:
            self._hiccuped = True
            return b""
        end = len(self._data) if size < 0 else min(len(self._data), self._at + size)
        if self._at < self._after:
            end = min(end, self._after)
        chunk = self._data[self._at : end]
        self._at = end
        return chunk


def test_a_head_that_the_stored_file_does_not_bear_out_is_not_kept(
    tmp_path: Path, demo: Demo
) -> None:
    """A stream that paused with an empty read made the head look like the whole file; the
    store read on, so the stored file is longer: its sample, the roles and the mapping come
    from the stored files, as before the inspection while storing."""
    blobs = LocalBlobStore(tmp_path / "blobs")
    orders = _big_orders(demo)
    payments = demo.payments.read_bytes()

    def put(upload: Upload, readable: Readable) -> StoredBlob:
        out = io.BytesIO()
        for _ in range(3):  # read past one empty answer, as a store that retries would
            while chunk := upload.stream.read(1 << 16):
                out.write(chunk)
        return blobs.put(io.BytesIO(out.getvalue()))

    samples = SampleCache()
    uploads = [
        Upload(cast(BinaryIO, _Hiccup(orders, 1000)), "orders.csv"),
        Upload(cast(BinaryIO, _Hiccup(payments, 1000)), "payments.csv"),
    ]
    arrived = _bounded(lambda: store_and_inspect(uploads, put, samples, blobs))

    by_role = {a.role: a.blob for a in arrived}
    assert by_role[Role.ORDERS].size == len(orders)
    assert samples._proposals == {}  # not from the cut-off heads
    for role, name in ((Role.ORDERS, "orders.csv"), (Role.PAYMENTS, "payments.csv")):
        blob = by_role[role]
        kept = samples.sample(blob.digest, name, _never)
        assert kept == SampleCache().sample(
            blob.digest, name, partial(blobs.local_copy, blob.digest)
        )
        assert kept.complete == (blob.size <= HEAD_BYTES)  # judged on the stored file


def _pair(demo: Demo) -> list[Upload]:
    return [
        _upload(demo.payments.read_bytes(), "stripe.csv"),
        _upload(_big_orders(demo), "shop.csv"),
    ]


def test_a_pair_is_handed_over_once_its_bytes_read_back_while_the_stores_still_sync(
    tmp_path: Path, demo: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files' first read starts while the stores sync: the pair is handed over (roles,
    uploads, blobs as they arrive) before any store returns, with its samples and proposal
    already remembered under the digests, so the read needs neither again."""
    blobs = LocalBlobStore(tmp_path / "blobs")
    samples = SampleCache()
    handed = threading.Event()
    seen: list[list[arrival.Arrived]] = []

    def put(upload: Upload, readable: Readable) -> StoredBlob:
        def said(blob: StoredBlob) -> None:
            readable(blob)
            # The store syncs only after this returns: the hand-over comes before any sync.
            assert handed.wait(20), "the pair was not handed over before the stores synced"

        return blobs.put(upload.stream, on_readable=said)

    def read_early(arrived: list[arrival.Arrived]) -> None:
        by_role = {a.role: a for a in arrived}
        orders, payments = by_role[Role.ORDERS], by_role[Role.PAYMENTS]
        pair = (
            samples.sample(orders.blob.digest, orders.upload.name, _never),
            samples.sample(payments.blob.digest, payments.upload.name, _never),
        )
        calls: list[object] = []
        with monkeypatch.context() as patch:
            patch.setattr(samples_module, "infer_mapping", lambda *a, **k: calls.append(a))
            samples.proposal(pair, (orders.blob.digest, payments.blob.digest), None)
        assert calls == []  # remembered before the hand-over
        with blobs.local_copy(orders.blob.digest) as path:
            assert path.read_bytes() == orders.upload.stream.getvalue()  # type: ignore[attr-defined]
        seen.append(arrived)
        handed.set()

    arrived = _bounded(lambda: store_and_inspect(_pair(demo), put, samples, blobs, read_early))

    assert [(a.role, a.upload.name) for a in arrived] == [
        (Role.PAYMENTS, "stripe.csv"),
        (Role.ORDERS, "shop.csv"),
    ]
    assert seen == [arrived]


def test_a_pair_is_not_handed_over_when_a_store_fails_and_its_error_is_raised(
    tmp_path: Path, demo: Demo
) -> None:
    blobs = LocalBlobStore(tmp_path / "blobs")
    seen: list[object] = []

    def put(upload: Upload, readable: Readable) -> StoredBlob:
        if upload.name == "shop.csv":
            upload.stream.read()  # its head was seen; then the disk failed
            raise StorageUnavailableError("the file store cannot be reached")
        return blobs.put(upload.stream, on_readable=readable)

    with pytest.raises(StorageUnavailableError):
        _bounded(lambda: store_and_inspect(_pair(demo), put, SampleCache(), blobs, seen.append))
    assert seen == []


def test_a_hand_over_that_fails_only_loses_the_head_start(tmp_path: Path, demo: Demo) -> None:
    blobs = LocalBlobStore(tmp_path / "blobs")
    tried: list[object] = []

    def fails(arrived: list[arrival.Arrived]) -> None:
        tried.append(arrived)
        raise RuntimeError("the first read could not start")

    arrived = _bounded(
        lambda: store_and_inspect(
            _pair(demo),
            lambda upload, readable: blobs.put(upload.stream, on_readable=readable),
            SampleCache(),
            blobs,
            fails,
        )
    )
    assert {a.role for a in arrived} == set(Role)
    assert tried == [arrived]


def test_no_hand_over_for_one_file_nor_for_heads_the_stored_files_do_not_bear_out(
    tmp_path: Path, demo: Demo
) -> None:
    blobs = LocalBlobStore(tmp_path / "blobs")
    seen: list[object] = []

    def put(upload: Upload, readable: Readable) -> StoredBlob:
        out = io.BytesIO()
        for _ in range(3):  # read past one empty answer, as a store that retries would
            while chunk := upload.stream.read(1 << 16):
                out.write(chunk)
        return blobs.put(io.BytesIO(out.getvalue()), on_readable=readable)

    one = [_upload(demo.orders.read_bytes(), "orders.csv")]
    _bounded(lambda: store_and_inspect(one, put, SampleCache(), blobs, seen.append))
    cut = [
        Upload(cast(BinaryIO, _Hiccup(_big_orders(demo), 1000)), "orders.csv"),
        Upload(cast(BinaryIO, _Hiccup(demo.payments.read_bytes(), 1000)), "payments.csv"),
    ]
    arrived = _bounded(lambda: store_and_inspect(cut, put, SampleCache(), blobs, seen.append))
    assert {a.role for a in arrived} == set(Role)
    assert seen == []


def test_a_store_that_fails_after_its_bytes_read_back_is_what_is_raised(
    tmp_path: Path, demo: Demo
) -> None:
    """The pair was handed over (its first read may have started on bytes that read back),
    and the failed sync is still what the upload meets: nothing is recorded about it."""
    blobs = LocalBlobStore(tmp_path / "blobs")
    seen: list[object] = []

    def put(upload: Upload, readable: Readable) -> StoredBlob:
        blob = blobs.put(upload.stream, on_readable=readable)
        if upload.name == "shop.csv":
            raise StorageUnavailableError("the disk failed while syncing the file")
        return blob

    with pytest.raises(StorageUnavailableError):
        _bounded(lambda: store_and_inspect(_pair(demo), put, SampleCache(), blobs, seen.append))
    assert len(seen) == 1


def test_a_store_that_never_says_its_bytes_read_back_gets_no_hand_over(
    tmp_path: Path, demo: Demo
) -> None:
    blobs = LocalBlobStore(tmp_path / "blobs")
    seen: list[object] = []
    samples = SampleCache()

    def put(upload: Upload, readable: Readable) -> StoredBlob:
        return blobs.put(upload.stream)  # says nothing before it returns

    arrived = _bounded(lambda: store_and_inspect(_pair(demo), put, samples, blobs, seen.append))
    assert {a.role for a in arrived} == set(Role)
    assert seen == []
    assert samples._proposals  # the proposal is kept as without a hand-over
