"""What the straight jobs of the benchmark (`duckdb_pipeline.py`, `polars_pipeline.py`) share:
hashing a file, and their command line (`ORDERS PAYMENTS OUT [--hash]`, counts as one JSON
line), so each file holds only its own way of doing the job."""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

Reconcile = Callable[[Path, Path, Path], dict[str, int]]
"""`reconcile(orders, payments, out)`: the job, returning per-category counts."""


def sha256(path: Path) -> str:
    """The file's SHA-256, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def command_line(reconcile: Reconcile, description: str) -> None:
    """Parse `ORDERS PAYMENTS OUT [--hash]`, run `reconcile` (after hashing both files, with
    `--hash`) and print its counts as JSON."""
    parser = argparse.ArgumentParser(description=description.split("\n\n", 1)[0])
    parser.add_argument("orders", type=Path)
    parser.add_argument("payments", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--hash", action="store_true", help="also sha256-hash both files")
    args = parser.parse_args()
    if args.hash:
        sha256(args.orders)
        sha256(args.payments)
    print(json.dumps(reconcile(args.orders, args.payments, args.out)))
