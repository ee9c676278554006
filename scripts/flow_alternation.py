"""Benchmark: two builds' whole flow, alternated on the same files, to tell what a change did.

This project's machines change speed by 10-30% within the hour, so two builds measured one
after the other differ by the machine as much as by the code. This runs the flow child of
`scripts/flow_benchmark.py` (upload -> request, edit -> request, approve -> outcome, a fresh
process each run, as `make bench` measures it) for a base revision and for the working tree,
alternately (ABBA order, after a warm-up run of each), on the same demo files, and prints each
run and the medians of each step's seconds and CPU seconds. The base revision is checked out
into a temporary git worktree (removed afterwards) and run with this checkout's virtual
environment. Usage:

    .venv/bin/python scripts/flow_alternation.py BASE [--runs 6] [--size 1000000]
        [--data bench-data]

BASE is any git revision whose `scripts/flow_benchmark.py` has the `--child` mode (commits
from 2026-11-30 on). The demo files are generated as `make bench` generates them, if missing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from flow_benchmark import STEPS, expected_counts, prepare  # noqa: E402


def run_flow(build: Path, folder: Path, scratch: Path) -> dict[str, Any]:
    """One flow of `build` (a checkout) on the demo files in `folder`: its steps' seconds and
    CPU seconds, and whether its counts equal `truth.json`."""
    with tempfile.TemporaryDirectory(dir=scratch) as work:
        args = [
            sys.executable,
            str(build / "scripts" / "flow_benchmark.py"),
            "--child",
            str(folder / "orders.csv"),
            str(folder / "payments.csv"),
            work,
        ]
        done = subprocess.run(args, cwd=build, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the flow of {build} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    counts = {k: v for k, v in dict(result["counts"]).items() if v}
    result["truth"] = counts == expected_counts(folder)
    return result


def medians(runs: list[dict[str, Any]]) -> str:
    """Each step's median seconds (CPU seconds), and the median whole flow, in one line."""
    parts = [
        f"{step} {statistics.median(r['steps'][step] for r in runs):.2f} s "
        f"(CPU {statistics.median(r['cpu'][step] for r in runs):.2f})"
        for step in STEPS
    ]
    whole = statistics.median(sum(r["steps"].values()) for r in runs)
    return " | ".join(parts) + f" | whole {whole:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("base", help="the git revision to compare the working tree with")
    parser.add_argument("--runs", type=int, default=6, help="runs of each build")
    parser.add_argument("--size", type=int, default=1_000_000, help="demo orders")
    parser.add_argument("--data", type=Path, default=ROOT / "bench-data")
    args = parser.parse_args()
    folder = prepare(args.size, args.data)
    scratch = ROOT / "var"
    scratch.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="base-", dir=scratch) as base_dir:
        base = Path(base_dir) / "tree"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "--quiet", str(base), args.base],
            cwd=ROOT,
            check=True,
        )
        try:
            builds = {f"base {args.base}": base, "this tree": ROOT}
            runs: dict[str, list[dict[str, Any]]] = {name: [] for name in builds}
            order = list(builds)
            for build in builds.values():  # a warm-up run each (bytecode, page cache), not timed
                run_flow(build, folder, scratch)
            for i in range(args.runs):
                for name in order if i % 2 == 0 else order[::-1]:
                    result = run_flow(builds[name], folder, scratch)
                    runs[name].append(result)
                    steps = ", ".join(f"{s} {result['steps'][s]:.2f} s" for s in STEPS)
                    print(f"{name}: {steps}; counts = truth.json: {result['truth']}", flush=True)
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, check=False
            )
    print(f"\n{args.size:,} orders, {args.runs} runs of each, alternated; medians:")
    for name, found in runs.items():
        print(f"  {name}: {medians(found)}")


if __name__ == "__main__":
    main()
