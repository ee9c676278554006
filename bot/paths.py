"""Paths named on the command line, checked before any work: a file to read, a file to write,
a folder to fill. Each problem is one sentence naming the path (`CommandLineError`)."""

from __future__ import annotations

import os
from pathlib import Path

from agent.errors import CommandLineError


def readable_file(path: Path) -> Path:
    """`path` when it names a file that can be read; else one sentence saying what is wrong."""
    if not path.exists():
        raise CommandLineError(f"no file at {path} (looked in {Path.cwd()})")
    if not path.is_file():
        raise CommandLineError(f"{path} is a folder, not a CSV file")
    if not os.access(path, os.R_OK):
        raise CommandLineError(f"{path} cannot be read (permission denied)")
    return path


def output_file(path: Path, *, option: str) -> Path:
    """The absolute path of a file to write (`option` names the flag in messages), refused
    before any work when it cannot be written: a folder, or in a folder that does not exist."""
    absolute = path.expanduser().absolute()
    if absolute.is_dir():
        raise CommandLineError(f"{option} {path} is a folder; name a file in it")
    if not absolute.parent.is_dir():
        raise CommandLineError(f"{option} {path}: there is no folder {absolute.parent}")
    return absolute


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
