"""The first read of a case: both files straight into the tables of the proposed reading.

A case starts with two uploads, the agent's inspection and a validation of the mapping it
proposes; the reconciliation follows the approval. Parsing a file into the columnar cache and
loading the tables from there reads it twice and writes a Parquet file; reading its bytes
straight into the tables is one parse (at 1M orders x 1M payments on 2 cores: about 1.0 s for
both files against 1.4 s of parse and 0.6 s of load). So the first read of each file, started
as soon as the mapping is proposed, goes straight into a workspace kept for the validation and
the reconciliation (`kept`). A job of its own (`pipeline.run_job` without the bot's cache:
`reconbot reconcile`) reads its files the same way, in a cache of its own.

A step of this process that needs the file again under a reading the kept tables do not hold
(an edit of one of its checked fields, a reconciliation after the kept workspace went) reads
its bytes again into the table it needs (`Columns.reread`: one parse, like the first read,
which must give the same digest and records); a step of another process, which has neither the
tables nor the first read, parses the file into the columnar cache, and every read after that,
in any process, uses the cache. The digest and the record count are proven on a direct read
exactly as on a parse into the cache.
"""

from __future__ import annotations

import hashlib
import logging
import tempfile
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from agent.data.cache import Claim, ColumnCache
from agent.data.duck import MEMORY_LIMIT_BYTES, cursor, instance
from agent.data.ingest import layout_from_options
from agent.data.ingest.columnar import Columns, RowProgress
from agent.data.kept import KeptTables, KeptWorkspace
from agent.data.normalize import ValidationReport, validate
from agent.data.normalize.answers import CheckAnswers, column_sources
from agent.data.normalize.load import (
    Files,
    Source,
    as_source,
    load_columns_as,
    read_file_as,
    reading_of,
)
from agent.data.policy import Policy
from agent.data.reconcile.keys import id_keys, load_keys, validation_key
from agent.data.reconcile.runner import connect
from agent.data.schema import Mapping, Role

logger = logging.getLogger(__name__)

SIMILAR_SIZES = 1.5
"""Two files read straight at once, neither more than this many times the other's size, whose
tables fit in DuckDB's memory (`fits_in_memory`), are each read on one thread. DuckDB's threads
are the process's (the cores), and a parallel read of each file beside the other's runs more
threads than there are cores: at 1M orders x 1M payments on 2 cores that cost about 15% more
CPU time than two reads of one thread each, which finish about together when the files are of
a size. A file much larger than the other is read in parallel, so that it has every core once
the other is read; so are files whose tables spill to disk (10M x 10M: a read of one thread
waits on the disk with nothing beside it, and the first step took twice as long)."""


def fits_in_memory(sources: dict[Role, Source]) -> bool:
    """Whether both files' sizes are known and together within DuckDB's memory limit: their
    tables (smaller than the text: 215 MB for the 280 MB of the 1M benchmark files) stay in
    memory, so a step beside their reads does not make them spill."""
    sizes = [sources[role].size for role in Role if role in sources]
    if len(sizes) != 2 or any(size is None or size <= 0 for size in sizes):
        return False
    return sum(s for s in sizes if s is not None) <= MEMORY_LIMIT_BYTES


def one_thread_each(sources: dict[Role, Source], claims: dict[Role, Claim]) -> bool:
    """Whether both files are read straight at once (`claims`), are of similar sizes
    (`SIMILAR_SIZES`) and fit in memory (`fits_in_memory`), so that each is read on one
    thread."""
    if set(claims) != set(Role) or not fits_in_memory(sources):
        return False
    small, large = sorted(sources[role].size or 0 for role in Role)
    return large <= SIMILAR_SIZES * small


@contextmanager
def read_once(
    files: Files,
    mapping: Mapping,
    workdir: Path | None = None,
    *,
    policy: Policy | None,
    progress: RowProgress | None = None,
) -> Iterator[tuple[dict[Role, Source], ColumnCache, KeptTables]]:
    """For a step that reads two files once, in this process (a job or an inspection from the
    terminal): their first read started (`preload`, each file straight into the tables of
    `mapping`, claimed under a digest taken first) in a cache of the step's own, in a folder of
    `workdir` removed afterwards. Yields the files with their digests, the cache and the tables
    kept, which the step's `load_and_validate` or reconciliation takes from; `policy` is the one
    the validation that follows checks under, None when none follows (no file is then checked
    beside the other's read)."""
    with one_step_cache(workdir) as once:
        kept = KeptTables()
        sources = hashed_sources(files)
        preload(sources, mapping, once, kept, progress, policy=policy)
        yield sources, once, kept


@contextmanager
def one_step_cache(workdir: Path | None) -> Iterator[ColumnCache]:
    """A columnar cache of one step's own (a job or an inspection from the terminal), in a
    folder of `workdir` removed when the step ends, unbounded: it holds the step's two files."""
    # The process's DuckDB instance outlives the step: it spills into the work directory,
    # never into the step's own folder (the first DuckDB work of a process decides where).
    instance(workdir)
    with tempfile.TemporaryDirectory(dir=workdir) as folder:
        once = ColumnCache(Path(folder), max_bytes=1 << 62, max_age=timedelta(days=1))
        try:
            yield once
        finally:
            once.close()


def hashed_sources(files: Files) -> dict[Role, Source]:
    """Each role's file with its digest and size (hashed now, both at once, when not known):
    what `preload` needs to claim a file's first read, for a step that reads files it was not
    told the digests of (a job from the terminal)."""

    def known(file: Source | tuple[Path, str]) -> Source:
        source = as_source(file)
        if source.digest is not None and source.size is not None:
            return source
        with source.fetch() as path:
            digest = source.digest
            if digest is None:
                with path.open("rb") as handle:
                    digest = "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()
            return replace(source, digest=digest, size=path.stat().st_size)

    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="hash") as pool:
        found = {role: pool.submit(known, file) for role, file in files.items()}
        return {role: future.result() for role, future in found.items()}


def preload(
    files: Files,
    mapping: Mapping,
    cache: ColumnCache,
    kept: KeptTables,
    progress: RowProgress | None = None,
    *,
    policy: Policy | None,
) -> bool:
    """Start reading both files into the tables `mapping` reads, in the background, for the
    validation of `mapping` (under `policy`; None when no validation follows) and the
    reconciliation after it (kept in `kept`).

    A file this process has not read yet is read straight from its bytes (steps that ask for
    its columns meanwhile wait for that read, and get its error if it fails); a cached file is
    loaded from the cache.
    Returns whether the read was started: not without both digests, nor when a file was read
    before in this process or is being read (then the steps that need it read it), nor when
    both are cached. A failed read is logged; the steps waiting for it get the file's error,
    or read the file themselves when the fault was not the file's.
    """
    sources = {role: as_source(file) for role, file in files.items()}
    if set(sources) != set(Role) or any(s.digest is None for s in sources.values()):
        return False
    claims: dict[Role, Claim] = {}
    try:
        for role in Role:
            digest, reading = sources[role].digest, reading_of(mapping.for_role(role))
            assert digest is not None
            if cache.get(digest, reading) is not None:
                continue  # cached: loaded from the cache
            claim = cache.claim(digest, reading)
            if claim is None:  # read before, or being read (the same bytes in both roles)
                _release(claims)  # the steps that need the files read them
                return False
            claims[role] = claim
        if not claims:
            return False
        cache.background(
            lambda: _read_both(sources, mapping, cache, kept, claims, progress, policy)
        )
    except BaseException:
        _release(claims)
        raise
    return True


def _release(claims: dict[Role, Claim]) -> None:
    """Give up claims whose read will not happen: steps waiting for them read the files."""
    for claim in claims.values():
        claim.failed(RuntimeError("the first read did not start"))


def _read_both(
    sources: dict[Role, Source],
    mapping: Mapping,
    cache: ColumnCache,
    kept: KeptTables,
    claims: dict[Role, Claim],
    progress: RowProgress | None,
    policy: Policy | None,
) -> None:
    """Read the claimed files straight and load the cached ones, at once, in one workspace;
    keep it when both read; settle the claims (after keeping, so a step woken by them finds
    the tables). Every claim is settled whatever happens: a step waiting for a file never
    waits forever.

    When both files fit in memory (`fits_in_memory`), a file read while the other is still
    being read is checked at once, on its own thread (`validate`, kept with the workspace for
    the validation that follows): the check then runs beside the other file's read instead of
    after it (with tables spilled to disk, it would make the other read spill more). Not with
    `policy` None: no validation follows (a job of its own)."""
    columns: dict[Role, Columns] = {}
    failures: dict[Role, BaseException] = {}
    checked: dict[Role, tuple[str, ValidationReport]] = {}
    texts: dict[Role, str] = {}  # the files read straight: every column kept as text
    unread: set[Role] = set()  # none: no check beside a read
    answers = CheckAnswers()  # kept with the workspace: the checks' answers, for an edit
    lock = threading.Lock()

    def check_beside(role: Role) -> None:
        """Check `role`'s table now if the other file is still being read."""
        with lock:
            alone = not unread or unread == {role}
            unread.discard(role)
        if alone or role not in columns or policy is None:
            return
        part = mapping.for_role(role)
        found = columns[role]
        table = answers.of_table(found.parquet.name, column_sources(role, found.layout, part))
        try:
            report = validate(cursor(con), role, found.layout.file_name, part, policy, table)
        except Exception as error:  # the validation checks it again and says why
            kind = type(error).__name__  # never its text: it may quote a cell
            logger.info("role=%s error=<%s> | no check beside the read", role.value, kind)
            return
        checked[role] = (validation_key(role, columns[role], mapping, policy), report)

    def read(role: Role) -> None:
        source, part = sources[role], mapping.for_role(role)
        reading = reading_of(part)
        claim = claims.get(role)
        if claim is None:  # cached: loaded from the cache
            found = cache.columns(
                source.name, reading, source.fetch, digest=source.digest, progress=progress
            )
            load_columns_as(cursor(con), role, found, part)
            columns[role] = found
            return
        with source.fetch() as path:
            layout = layout_from_options(
                path,
                source.name,
                encoding=reading.encoding,
                delimiter=reading.delimiter,
                header_row=reading.header_row,
            )
            digest, read_layout = read_file_as(
                cursor(con),
                role,
                path,
                layout,
                part,
                scratch=cache.folder,
                progress=progress,
                parallel=parallel,
                keep_text=keep_text,
            )
        columns[role] = claim.columns(digest, read_layout)
        if keep_text:
            texts[role] = columns[role].parquet.name

    def attempt(role: Role) -> None:
        try:
            read(role)
        except BaseException as error:  # the steps waiting for the file report it
            failures[role] = error
            name, kind = sources[role].name, type(error).__name__
            logger.info("file=<%s> error=<%s> | first read stopped", name, kind)
        finally:
            check_beside(role)

    try:
        parallel = not one_thread_each(sources, claims)
        # Kept for the edits of a case (a validation follows) when it fits: else read again.
        keep_text = policy is not None and fits_in_memory(sources)
        if policy is not None and fits_in_memory(sources):
            unread.update(Role)
        con = connect(cache.folder)
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="first-read") as pool:
            list(pool.map(attempt, tuple(Role)))
        if not failures:
            files, loads = load_keys(columns, mapping)
            keyed = id_keys(mapping)
            parts = {role: mapping.for_role(role) for role in Role}
            workspace = KeptWorkspace(
                con, dict(loads), dict(checked), keyed, parts, dict(texts), answers
            )
            kept.keep(files, workspace)
    except BaseException as error:
        logger.warning("error=<%s> | first read of a case stopped", type(error).__name__)
        for role in claims:
            failures.setdefault(role, error)
    finally:
        for role, claim in claims.items():
            if role in columns and role not in failures:
                claim.done(columns[role])
            else:
                claim.failed(failures.get(role) or RuntimeError("the first read stopped"))
