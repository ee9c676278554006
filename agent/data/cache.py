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
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

import duckdb
from cachetools import FIFOCache

from agent.data.ingest import CsvLayout, layout_from_options
from agent.data.ingest.columnar import Columns, RowProgress, build_columns, read_into
from agent.data.notes import Note
from agent.errors import InputFileError, LedgerError, StorageError

logger = logging.getLogger(__name__)

FORMAT = 2
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


DIRECT_READS_KEPT = 32
"""How many files read straight into tables the cache remembers (each a few hundred bytes); a
file forgotten is parsed into the cache when a step needs its columns."""

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
        self._direct: FIFOCache[str, Columns] = FIFOCache(DIRECT_READS_KEPT)
        """Files this process read straight into tables, by entry name: no Parquet file yet
        (the `DIRECT_READS_KEPT` last recorded)."""

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
                notes=tuple(Note.from_json(n) for n in saved["notes"]),
                records=int(saved["records"]),
                warnings=tuple(Note.from_json(w) for w in saved.get("warnings", ())),
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
        the bytes parsed, which the caller compares with the one it trusts.

        A file this process read straight into tables (`claim`) is not parsed here: its columns
        come back with their Parquet file unwritten, and a load that needs them reads the
        file's bytes again (`Columns.reread`); the step that took over those tables needs none.
        """
        if digest is None:
            return self._build(file_name, reading, fetch, progress)
        cached = self.get(digest, reading)
        if cached is not None:
            logger.info("file=<%s> | columns read from the cache", file_name)
            return _named(cached, file_name)
        with self._lock:
            direct = self._direct.get(reading.key(digest))
        if direct is not None:
            return self._loadable(direct, file_name, reading, fetch, progress)
        return self._parsed(file_name, reading, fetch, digest, progress)

    def claim(self, digest: str, reading: Reading) -> Claim | None:
        """Reserve the first read of the file with `digest` for a caller that reads its bytes
        straight into tables (`normalize.load.read_file_as`), saving the parse into Parquet
        when no other step reads the file again. None when the file is cached, was read, or
        is being read already. Steps that ask for the file's columns meanwhile wait for the
        claim to be settled (`Claim.done` or `Claim.failed`)."""
        key = reading.key(digest)
        if self.get(digest, reading) is not None:
            return None
        self.folder.mkdir(parents=True, exist_ok=True)  # the read's scratch goes in it
        with self._lock:
            if key in self._direct or key in self._building:
                return None
            future: Future[Columns] = Future()
            self._building[key] = future
        return Claim(self, reading, key, future)

    def _settle(self, claim: Claim, columns: Columns | None, error: BaseException | None) -> None:
        """Record a claimed read's columns (unwritten) and wake the steps waiting for it."""
        with self._lock:
            if columns is not None:
                self._direct[columns.parquet.name.removesuffix(".parquet")] = columns
            self._building.pop(claim.key, None)
        if isinstance(error, InputFileError | LedgerError | StorageError):
            claim.future.set_exception(error)  # the file's own fault: every reading has it
        elif error is not None:  # the first read's reading, or nothing read: read it yourselves
            claim.future.set_exception(_FirstReadStoppedError())
        else:
            assert columns is not None
            claim.future.set_result(columns)

    def _loadable(
        self,
        columns: Columns,
        file_name: str,
        reading: Reading,
        fetch: Fetch,
        progress: RowProgress | None,
    ) -> Columns:
        """`columns` under `file_name`; when their Parquet file was never written (the file was
        read straight), able to read the file's bytes again into a table (`Columns.reread`)."""
        named = _named(columns, file_name)
        if named.parquet.exists():
            return named

        def reread(con: duckdb.DuckDBPyConnection, table: str, query: str) -> CsvLayout:
            logger.info("file=<%s> | read again from its bytes", file_name)
            with fetch() as path:
                digest, read = read_into(
                    con, table, query, path, named.layout, scratch=self.folder, progress=progress
                )
            if (digest, read.records) != (named.digest, named.records):
                with suppress(duckdb.Error):
                    con.execute(f"DROP TABLE IF EXISTS {table}")
                raise StorageError(
                    f"{file_name}: the file store handed back other bytes than it did for the "
                    "file's first read; nothing is read from them"
                )
            return read

        return replace(named, reread=reread)

    def _parsed(
        self,
        file_name: str,
        reading: Reading,
        fetch: Fetch,
        digest: str,
        progress: RowProgress | None,
    ) -> Columns:
        """The file parsed into the cache, once per process however many steps ask at once
        (a step asking while a claimed read is under way gets that read's columns)."""
        cached = self.get(digest, reading)
        if cached is not None:
            return _named(cached, file_name)
        key = reading.key(digest)
        with self._lock:
            running = self._building.get(key)
            if running is None:
                running = self._building[key] = Future()
                mine = True
            else:
                mine = False
        if not mine:  # this process is reading the file already (a prefetch): wait for it
            logger.info("file=<%s> | waiting for the read under way", file_name)
            try:
                found = running.result()
            except _FirstReadStoppedError:  # settled without the file's columns: parse it here
                return self._parsed(file_name, reading, fetch, digest, progress)
            return self._loadable(found, file_name, reading, fetch, progress)
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

    def background(self, task: Callable[[], None]) -> None:
        """Run `task` on the cache's background threads (those of `prefetch`)."""
        self._prefetching.submit(task)

    def close(self) -> None:
        """Wait for the background work under way and stop its threads: for a cache of one
        step (a job of its own), whose folder goes when the step ends."""
        self._prefetching.shutdown(wait=True)

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
            "notes": [n.to_json() for n in layout.notes],
            "records": layout.records,
            "warnings": [w.to_json() for w in layout.warnings],
        }
        # One per thread (the Parquet's is one per call): two threads of one process may build
        # one key (the same file in both roles) and must not rename each other's file away.
        partial = self.folder / f".{key}.{os.getpid()}-{threading.get_ident()}.json"
        partial.write_text(json.dumps(saved), encoding="utf-8")
        partial.replace(self.folder / f"{key}.json")

    def evict(self, *, keep: Path | None = None) -> int:
        """Remove entries unused for `max_age`, then the least recently used ones while the
        cache holds more than `max_bytes` (never `keep`); returns how many went. Kept by hand:
        entries are files shared by the machine's processes, aged by their times on disk."""
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


@dataclass(frozen=True)
class Claim:
    """The first read of one file, reserved for its reader (`ColumnCache.claim`)."""

    cache: ColumnCache
    reading: Reading
    key: str
    future: Future[Columns]

    def columns(self, digest: str, layout: CsvLayout) -> Columns:
        """The columns of the bytes read (`digest`, the layout with its records), their Parquet
        file named as the cache names it and not written."""
        return Columns(self.cache.folder / f"{self.reading.key(digest)}.parquet", digest, layout)

    def done(self, columns: Columns) -> None:
        """The file was read: steps waiting for it go on with `columns`."""
        self.cache._settle(self, columns, None)

    def failed(self, error: BaseException) -> None:
        """The read failed or did not happen: steps waiting for the file get `error` when it
        is the file's own (it cannot be read, its rows do not add up, it cannot be fetched);
        otherwise (the reading of the first read, no read at all) they parse it themselves."""
        self.cache._settle(self, None, error)


class _FirstReadStoppedError(Exception):
    """A file's first read ended without its columns, for a reason not the file's own."""


def _named(columns: Columns, file_name: str) -> Columns:
    """The cached columns under the name this upload gave the file (errors name it so)."""
    if columns.layout.file_name == file_name:
        return columns
    return replace(columns, layout=replace(columns.layout, file_name=file_name))
