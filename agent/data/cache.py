"""The columnar cache: each uploaded file parsed once, kept as Parquet in the work directory.

An investigation reads its two files several times: each validation of a proposed mapping, then
the reconciliation after approval, perhaps in another worker process. The cache keeps each
file's raw text columns (`ingest.columnar`) under the digest of its bytes and the layout it was
parsed with, so every later step reads Parquet instead of parsing CSV again, and a step whose
file is cached never fetches the file at all (no S3 download).

An entry is two files in the cache folder: `<key>.parquet` and `<key>.json` (the digest, the
layout and the records counted), the JSON written last: an entry without it is not an entry.
Entries are written under the digest computed from the bytes while parsing, never under the
one a caller expected, so a cached entry always holds the bytes its key names. Use refreshes an
entry's time; entries older than `max_age`, then the least recently used beyond `max_bytes`, are
evicted after each build. Two processes building the same entry at once both succeed (the second
rename replaces the first's identical files); an entry evicted while a reader scans it stays
readable to that reader (POSIX keeps an unlinked file's data until it is closed).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

from agent.data.ingest import HEAD_BYTES, CsvLayout, CsvSample, inspect_head, layout_from_options
from agent.data.ingest.columnar import Columns, RowProgress, build_columns
from agent.data.kept import KeptTables
from agent.data.mapping import Proposal, infer_mapping
from agent.data.schema import Role

logger = logging.getLogger(__name__)

FORMAT = 1
"""Bumped when what an entry holds changes, so that entries of an older build are not read."""


@dataclass(frozen=True)
class Reading:
    """What decides a file's columns: its encoding, delimiter and the line of its header."""

    encoding: str
    delimiter: str
    header_row: int

    def key(self, digest: str) -> str:
        """The entry name of the file with `digest` read this way."""
        hexdigest = digest.removeprefix("sha256:")
        options = f"{FORMAT}|{self.encoding}|{self.delimiter}|{self.header_row}"
        return f"{hexdigest}-{hashlib.sha256(options.encode()).hexdigest()[:12]}"


Fetch = Callable[[], AbstractContextManager[Path]]
"""Puts the file's bytes on local disk for as long as the context lasts (a blob download)."""


class ColumnCache:
    """Parsed files by digest and reading, in one folder, bounded by age and total size."""

    def __init__(self, folder: Path, *, max_bytes: int, max_age: timedelta) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self.max_age = max_age
        self._lock = threading.Lock()
        self._building: dict[str, Future[Columns]] = {}
        self._prefetching = ThreadPoolExecutor(max_workers=2, thread_name_prefix="prefetch")
        self.kept = KeptTables()
        """The last validations' loaded tables, for the steps after them in this process."""

    def get(self, digest: str, reading: Reading) -> Columns | None:
        """The cached columns of the file with `digest` read as `reading`, if any."""
        key = reading.key(digest)
        meta, parquet = self.folder / f"{key}.json", self.folder / f"{key}.parquet"
        try:
            saved = json.loads(meta.read_text(encoding="utf-8"))
            layout = CsvLayout(
                file_name=saved["file_name"],
                encoding=saved["encoding"],
                delimiter=saved["delimiter"],
                header_line=int(saved["header_line"]),
                columns=tuple(saved["columns"]),
                notes=tuple(saved["notes"]),
                records=int(saved["records"]),
            )
            digest_read = str(saved["digest"])
            now = time.time()
            os.utime(parquet, (now, now))
            os.utime(meta, (now, now))
        except (OSError, ValueError, KeyError, TypeError):  # no entry, or not one of ours:
            return None  # the file is parsed again
        return Columns(parquet, digest_read, layout)

    def columns(
        self,
        file_name: str,
        reading: Reading,
        fetch: Fetch,
        *,
        digest: str | None = None,
        progress: RowProgress | None = None,
    ) -> Columns:
        """The file's columns: from the cache when `digest` names a cached entry, else parsed
        from the bytes `fetch` gives (and cached). The returned `digest` is always the one of
        the bytes parsed, which the caller compares with the one it trusts."""
        if digest is None:
            return self._build(file_name, reading, fetch, progress)
        cached = self.get(digest, reading)
        if cached is not None:
            logger.info("file=<%s> | columns read from the cache", file_name)
            return _named(cached, file_name)
        key = reading.key(digest)
        with self._lock:
            running = self._building.get(key)
            if running is None:
                running = self._building[key] = Future()
                mine = True
            else:
                mine = False
        if not mine:  # this process is parsing the file already (a prefetch): wait for it
            logger.info("file=<%s> | waiting for the parse under way", file_name)
            return _named(running.result(), file_name)
        try:
            built = self._build(file_name, reading, fetch, progress)
        except BaseException as error:
            running.set_exception(error)
            raise
        else:
            running.set_result(built)
            return built
        finally:
            with self._lock:
                self._building.pop(key, None)

    def prefetch(
        self,
        file_name: str,
        reading: Reading,
        fetch: Fetch,
        *,
        digest: str,
        progress: RowProgress | None = None,
    ) -> None:
        """Start parsing the file into the cache in the background, so that the step that
        needs its columns (a validation) finds them ready or under way; a file that does not
        read is left for that step to report."""

        def parse() -> None:
            try:
                self.columns(file_name, reading, fetch, digest=digest, progress=progress)
            except Exception as error:  # the validation reads it again and says why
                logger.info("file=<%s> error=<%s> | prefetch stopped", file_name, type(error))

        if self.get(digest, reading) is None:
            self._prefetching.submit(parse)

    def _build(
        self, file_name: str, reading: Reading, fetch: Fetch, progress: RowProgress | None
    ) -> Columns:
        """Parse the file's bytes into a new entry."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with fetch() as path:
            layout = layout_from_options(
                path,
                file_name,
                encoding=reading.encoding,
                delimiter=reading.delimiter,
                header_row=reading.header_row,
            )
            started = time.monotonic()
            partial = self.folder / f".build-{os.getpid()}-{time.monotonic_ns()}.parquet"
            built = build_columns(path, layout, partial, scratch=self.folder, progress=progress)
        key = reading.key(built.digest)
        parquet = self.folder / f"{key}.parquet"
        partial.replace(parquet)
        columns = Columns(parquet, built.digest, built.layout)
        self._save(key, columns)
        logger.info(
            "file=<%s> records=<%s> seconds=<%.2f> | parsed into the columnar cache",
            file_name,
            columns.records,
            time.monotonic() - started,
        )
        self.evict(keep=parquet)
        return columns

    def _save(self, key: str, columns: Columns) -> None:
        layout = columns.layout
        saved = {
            "digest": columns.digest,
            "file_name": layout.file_name,
            "encoding": layout.encoding,
            "delimiter": layout.delimiter,
            "header_line": layout.header_line,
            "columns": list(layout.columns),
            "notes": list(layout.notes),
            "records": layout.records,
        }
        partial = self.folder / f".{key}.{os.getpid()}.json"
        partial.write_text(json.dumps(saved), encoding="utf-8")
        partial.replace(self.folder / f"{key}.json")

    def evict(self, *, keep: Path | None = None) -> int:
        """Remove entries unused for `max_age`, then the least recently used ones while the
        cache holds more than `max_bytes` (never `keep`); returns how many went."""
        entries: list[tuple[float, int, Path]] = []
        now = time.time()
        for parquet in self.folder.glob("*.parquet"):
            try:
                stat = parquet.stat()
            except OSError:
                continue
            entries.append((stat.st_mtime, stat.st_size, parquet))
        entries.sort()
        total = sum(size for _, size, _ in entries)
        removed = 0
        for used, size, parquet in entries:
            stale = now - used > self.max_age.total_seconds()
            if parquet == keep or not (stale or total > self.max_bytes):
                continue
            parquet.with_suffix(".json").unlink(missing_ok=True)
            parquet.unlink(missing_ok=True)
            total -= size
            removed += 1
        for leftover in self.folder.glob(".*"):  # partial files of processes that died
            try:
                if now - leftover.stat().st_mtime > self.max_age.total_seconds():
                    if leftover.is_dir():
                        shutil.rmtree(leftover, ignore_errors=True)
                    else:
                        leftover.unlink(missing_ok=True)
            except OSError:
                continue
        if removed:
            logger.info("removed=<%s> | evicted entries from the columnar cache", removed)
        return removed


def _named(columns: Columns, file_name: str) -> Columns:
    """The cached columns under the name this upload gave the file (errors name it so)."""
    if columns.layout.file_name == file_name:
        return columns
    return replace(columns, layout=replace(columns.layout, file_name=file_name))


class SampleCache:
    """Files' head samples by digest, in this process's memory, the few most recent; with a
    `folder`, each file's head bytes also on disk, for every process of the machine.

    Inspecting a file (reading its head, deciding its layout, parsing its first records) is
    done at the upload, again by the agent's inspection and by each validation: with this it is
    done once per file and process, and a file whose head is kept is never fetched again for
    it (another worker inspects it from the head on disk, not from an S3 download).
    """

    def __init__(
        self, size: int = 8, *, folder: Path | None = None, max_age: timedelta = timedelta(days=2)
    ) -> None:
        self.size = size
        self.folder = folder
        self.max_age = max_age
        self._samples: OrderedDict[str, CsvSample] = OrderedDict()
        self._proposals: OrderedDict[str, Proposal] = OrderedDict()
        self._lock = threading.Lock()

    def proposal(
        self,
        samples: tuple[CsvSample, CsvSample],
        digests: tuple[str, str],
        answers: dict[Role, dict[str, str]] | None = None,
    ) -> Proposal:
        """`infer_mapping` of two sampled files (their digests name them) under `answers`,
        inferred once per process: the agent's inspection and the validation after it ask
        for the same proposal. Raises what `infer_mapping` raises (never remembered)."""
        given = {role.value: dict(fields) for role, fields in (answers or {}).items()}
        names = [sample.layout.file_name for sample in samples]
        key = json.dumps([*digests, *names, given], sort_keys=True)
        with self._lock:
            found = self._proposals.get(key)
            if found is not None:
                self._proposals.move_to_end(key)
                return found
        found = infer_mapping(*samples, answers=answers)
        with self._lock:
            self._proposals[key] = found
            while len(self._proposals) > self.size:
                self._proposals.popitem(last=False)
        return found

    def sample(self, digest: str, file_name: str, fetch: Fetch) -> CsvSample:
        """The sample of the file with `digest` (`inspect_csv`), its layout named `file_name`.

        Raises the typed input errors of `inspect_csv` (never remembered)."""
        with self._lock:
            found = self._samples.get(digest)
            if found is not None:
                self._samples.move_to_end(digest)
        if found is None:
            head, size = self._head(digest, fetch)
            found = inspect_head(head, size, file_name)
            with self._lock:
                self._samples[digest] = found
                while len(self._samples) > self.size:
                    self._samples.popitem(last=False)
        if found.layout.file_name == file_name:
            return found
        return replace(found, layout=replace(found.layout, file_name=file_name))

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
        """Write a head for other processes (a failure only costs a fetch later)."""
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
