"""The reconcile tool's export is stored while the summary is read (`store_beside`): both must
finish before the file goes, and a failure to store is never hidden by the summary's."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import BinaryIO

import pytest

from agent.errors import StorageError, WorkflowError
from agent.ports import StoredBlob
from agent.runtime.export import store_beside
from storage.blobs import LocalBlobStore


class FullDisk(LocalBlobStore):
    """A blob store whose disk is full."""

    def put(self, stream: BinaryIO, *, max_bytes: int | None = None) -> StoredBlob:
        raise StorageError("The file store failed while storing (no space left on device).")


class Bug(LocalBlobStore):
    """A blob store with a bug (not an error of the store's own words)."""

    def put(self, stream: BinaryIO, *, max_bytes: int | None = None) -> StoredBlob:
        raise RuntimeError("a bug in the store")


def _export(tmp_path: Path) -> Path:
    export = tmp_path / "exceptions.csv"
    export.write_bytes(b"category,reason\nignored,zero_capture\n")
    return export


def test_the_export_is_stored_and_the_summary_read(tmp_path: Path) -> None:
    blobs = LocalBlobStore(tmp_path / "blobs")
    export = _export(tmp_path)

    stored, found = store_beside(blobs, export, lambda: "summary")

    assert found == "summary"
    with blobs.local_copy(stored.digest) as path:
        assert path.read_bytes() == export.read_bytes()


def test_a_failure_to_store_is_raised_when_the_summary_reads(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="no space left"):
        store_beside(FullDisk(tmp_path / "blobs"), _export(tmp_path), lambda: "summary")


def test_a_failure_to_store_is_raised_when_the_summary_fails_too(tmp_path: Path) -> None:
    def read() -> str:
        raise WorkflowError("the summary failed")

    with pytest.raises(StorageError, match="no space left"):
        store_beside(FullDisk(tmp_path / "blobs"), _export(tmp_path), read)


def test_a_bug_in_the_store_is_never_hidden_by_the_summary_s_error(tmp_path: Path) -> None:
    def read() -> str:
        raise WorkflowError("the summary failed")

    with pytest.raises(RuntimeError, match="a bug in the store"):
        store_beside(Bug(tmp_path / "blobs"), _export(tmp_path), read)


def test_the_summary_s_error_is_raised_once_the_export_is_stored(tmp_path: Path) -> None:
    blobs = LocalBlobStore(tmp_path / "blobs")
    export = _export(tmp_path)

    def read() -> str:
        raise WorkflowError("the summary failed")

    with pytest.raises(WorkflowError, match="summary failed"):
        store_beside(blobs, export, read)
    digest = "sha256:" + hashlib.sha256(export.read_bytes()).hexdigest()
    assert blobs.exists(digest)  # the store ran to its end before the summary's error
