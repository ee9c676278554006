"""The reconcile tool's exceptions CSV, stored while the tool reads the summary.

Storing it (hashed, written and synced to disk) and reading the summary and the first findings
(DuckDB work) are independent, so each runs while the other waits on the disk or the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from agent.ports import BlobStore, StoredBlob

T = TypeVar("T")


def store_beside(blobs: BlobStore, export: Path, read: Callable[[], T]) -> tuple[StoredBlob, T]:
    """Store the file at `export` in `blobs` while `read` runs; return the stored blob and what
    `read` returned.

    Returns only once both are done, so the file may be removed afterwards. A failure to store
    is what is raised, even when `read` failed too: as when the file was stored first.
    """
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="export") as pool:
        storing = pool.submit(_put, blobs, export)
        try:
            found = read()
        except BaseException:
            storing.result()
            raise
        return storing.result(), found


def _put(blobs: BlobStore, export: Path) -> StoredBlob:
    with export.open("rb") as handle:
        return blobs.put(handle)
