"""Paths named on the command line, checked before any work: a file to read, a file to write,
a folder to fill. Each problem is one sentence naming the path (`CommandLineError`, or
`EmptyFileError` for an input with nothing in it). And where a terminal keeps its copies of
the exceptions CSVs, under the cases home."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from agent.domain import Outcome
from agent.errors import CommandLineError, EmptyFileError

EMPTY_CHECK_BYTES = 64 << 10
"""How much of an input is looked at to tell that it holds nothing (blank lines at most)."""
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
EXCEPTIONS_FOLDER = "exceptions"
"""The folder of the cases home holding `exceptions-INV-…-rN.csv`, one per outcome."""
_SAFE_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def readable_file(path: Path) -> Path:
    """`path` (with `~` expanded) when it names a file that can be read; else one sentence
    saying what is wrong. A pipe or device (`<(cat f)`) is read like a file."""
    path = path.expanduser()
    if not path.exists():
        raise CommandLineError(f"no file at {path} (looked in {Path.cwd()})")
    if path.is_dir():
        raise CommandLineError(f"{path} is a folder, not a CSV file")
    if not os.access(path, os.R_OK):
        raise CommandLineError(f"{path} cannot be read (permission denied)")
    return path


def nonempty_file(path: Path) -> Path:
    """`path` unless it holds nothing to read: no bytes, or only blank lines (after a byte
    order mark), which raises `EmptyFileError` naming the file, before any work starts. A file
    with only a header is left to the read, which says so. A pipe is not looked into (its bytes
    would be gone)."""
    if not path.is_file():
        return path
    with path.open("rb") as handle:
        head = handle.read(EMPTY_CHECK_BYTES + 1)
    if len(head) > EMPTY_CHECK_BYTES:
        return path
    text = head
    for bom in _BOMS:
        if text.startswith(bom):
            text = text.removeprefix(bom)
            if bom != _BOMS[0]:  # UTF-16: a blank line is a newline and a zero byte
                text = text.replace(b"\x00", b"")
            break
    if text.strip():
        return path
    what = "0 bytes" if not head else "only blank lines"
    raise EmptyFileError(
        f"the file is empty ({what}); there is nothing in it to reconcile", file_name=str(path)
    )


def kept_exceptions_file(home: Path, outcome: Outcome) -> Path:
    """Where a terminal keeps its copy of an outcome's exceptions CSV, so the path it prints
    is a `.csv` file a person can open: `HOME/exceptions/exceptions-INV-…-rN.csv` (the name
    the thread's upload has; never a path out of that folder, whatever the id)."""
    name = outcome.exceptions_file_name
    safe = name if _SAFE_NAME.fullmatch(name) else f"exceptions-case-r{outcome.revision}.csv"
    return home / EXCEPTIONS_FOLDER / safe


def output_file(path: Path, *, option: str, keep: Iterable[Path] = ()) -> Path:
    """The resolved path of a file to write (`option` names the flag in messages), refused
    before any work when it cannot be written (a folder, a missing or read-only folder) or
    when it is one of `keep`: the inputs, the state database, anything in the state home."""
    resolved = path.expanduser().resolve()
    if resolved.is_dir():
        raise CommandLineError(f"{option} {path} is a folder; name a file in it")
    if not resolved.parent.is_dir():
        raise CommandLineError(f"{option} {path}: there is no folder {resolved.parent}")
    if not os.access(resolved.parent, os.W_OK) or (
        resolved.exists() and not os.access(resolved, os.W_OK)
    ):
        raise CommandLineError(f"{option} {path} cannot be written (permission denied)")
    for kept in keep:
        kept = kept.expanduser().resolve()
        if resolved == kept or kept in resolved.parents:
            raise CommandLineError(
                f"{option} {path} would overwrite {kept}, which reconbot reads or keeps; "
                "name another file"
            )
    return resolved


def output_folder(path: Path, *, option: str) -> Path:
    """A folder to write files into, created if missing; refused when a file is in the way."""
    absolute = path.expanduser().absolute()
    if absolute.exists() and not absolute.is_dir():
        raise CommandLineError(f"{option} {path} is a file; name a folder to write into")
    try:
        absolute.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CommandLineError(f"{option} {path}: cannot create it ({error.strerror})") from None
    return absolute
