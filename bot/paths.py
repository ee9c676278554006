"""Paths named on the command line, checked before any work: a file to read, a file to write,
a folder to fill. Each problem is one sentence naming the path (`CommandLineError`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from agent.errors import CommandLineError


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
