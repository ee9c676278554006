"""Benchmark: reconbot end to end against a straightforward pandas pipeline, on the same files.

Each size gets demo data (`reconbot demo-data`, cached under --data). Each pipeline runs in fresh
child processes: one discarded warm-up run, then --repeat runs back to back (with --interleave,
the two pipelines alternate instead). The figures are the median wall time of the job (hash,
read, reconcile, export; interpreter start-up and imports excluded for both) and the child's
peak resident memory. Blocks keep each pipeline's runs together; interleaving spreads the
machine's speed drift evenly over both. Both pipelines' per-category counts are checked
against `truth.json` on every run. Usage:

    .venv/bin/python scripts/benchmark.py [--sizes 100000 1000000] [--repeat 7] [--interleave]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def child_reconbot(orders: Path, payments: Path, mapping_file: Path, out: Path) -> None:
    """Run reconbot's job and print {seconds, counts} as JSON."""
    from agent.data.pipeline import run_job
    from agent.data.policy import Policy
    from agent.data.schema import Mapping, Role

    mapping = Mapping.model_validate_json(mapping_file.read_text())
    start = time.perf_counter()
    result = run_job(
        {Role.ORDERS: (orders, orders.name), Role.PAYMENTS: (payments, payments.name)},
        mapping,
        Policy(),
        out,
    )
    counts = result.reconciliation.summary().counts
    print(json.dumps({"seconds": time.perf_counter() - start, "counts": counts}))


def child_pandas(orders: Path, payments: Path, out: Path) -> None:
    """Run the pandas pipeline and print {seconds, counts} as JSON."""
    import io
    from contextlib import redirect_stdout

    sys.path.insert(0, str(ROOT / "scripts"))
    import pandas_pipeline

    start = time.perf_counter()
    captured = io.StringIO()
    with redirect_stdout(captured):
        pandas_pipeline.main(orders, payments, out)
    counts = json.loads(captured.getvalue())
    print(json.dumps({"seconds": time.perf_counter() - start, "counts": counts}))


def run_child(args: list[str]) -> tuple[dict[str, object], float]:
    """Run this script as a child; return its JSON and its peak RSS in MB."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen([sys.executable, __file__, "--child", *args], stdout=out, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0)
        text = out.read().decode()
    if status != 0:
        raise SystemExit(f"child {args[0]} failed with status {status}")
    return json.loads(text.strip().splitlines()[-1]), usage.ru_maxrss / 1024


def prepare(size: int, data: Path) -> Path:
    """Demo data for `size` orders and the mapping reconbot infers for it."""
    from agent.data.demo import generate
    from agent.data.ingest import inspect_csv
    from agent.data.mapping import infer_mapping

    folder = data / str(size)
    if not (folder / "truth.json").exists():
        print(f"generating {size:,} orders into {folder} …", flush=True)
        generate(size, folder, seed=7)
    limit = 1 << 40
    proposal = infer_mapping(
        inspect_csv(folder / "orders.csv", "orders.csv", max_bytes=limit),
        inspect_csv(folder / "payments.csv", "payments.csv", max_bytes=limit),
    )
    if proposal.mapping is None:
        raise SystemExit(f"the demo data needs clarification: {proposal.clarifications}")
    (folder / "mapping.json").write_text(proposal.mapping.model_dump_json())
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--data", type=Path, default=ROOT / "bench-data")
    parser.add_argument("--interleave", action="store_true", help="alternate the pipelines")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        paths = [Path(p) for p in rest]
        if kind == "reconbot":
            child_reconbot(*paths)
        else:
            child_pandas(*paths)
        return
    mode = "interleaved" if args.interleave else "in blocks after one warm-up run each"
    print(
        f"machine: {os.cpu_count()} cores; repeats: {args.repeat} ({mode}); "
        "median wall time per job"
    )
    for size in args.sizes:
        folder = prepare(size, args.data)
        truth = json.loads((folder / "truth.json").read_text())["findings"]
        sizes = {f: (folder / f).stat().st_size / 1e6 for f in ("orders.csv", "payments.csv")}
        times: dict[str, list[float]] = {"reconbot": [], "pandas": []}
        memory: dict[str, list[float]] = {"reconbot": [], "pandas": []}
        agree: dict[str, bool] = {}
        kinds = ("reconbot", "pandas")
        if args.interleave:
            schedule = [k for _ in range(args.repeat) for k in kinds]
        else:
            schedule = [k for k in kinds for _ in range(args.repeat + 1)]
        seen: set[str] = set()
        for kind in schedule:
            common = [str(folder / "orders.csv"), str(folder / "payments.csv")]
            extra = [str(folder / "mapping.json")] if kind == "reconbot" else []
            result, rss = run_child([kind, *common, *extra, str(folder / f"exceptions-{kind}.csv")])
            counts = {k: v for k, v in dict(result["counts"]).items() if v}  # type: ignore[call-overload]
            agree[kind] = agree.get(kind, True) and counts == {k: v for k, v in truth.items() if v}
            if not args.interleave and kind not in seen:
                seen.add(kind)  # the warm-up run: checked, not timed
                continue
            times[kind].append(float(result["seconds"]))  # type: ignore[arg-type]
            memory[kind].append(rss)
        print(
            f"\n{size:,} orders ({truth and sum(truth.values()):,} findings expected; "
            f"orders.csv {sizes['orders.csv']:.0f} MB, payments.csv {sizes['payments.csv']:.0f} MB)"
        )
        print(
            f"  {'pipeline':<10} {'median s':>9} {'min s':>7} {'peak MB':>8}  counts = truth.json"
        )
        for kind in ("reconbot", "pandas"):
            print(
                f"  {kind:<10} {statistics.median(times[kind]):>9.2f} {min(times[kind]):>7.2f} "
                f"{max(memory[kind]):>8.0f}  {'yes' if agree[kind] else 'NO'}"
            )
        ratio = statistics.median(times["pandas"]) / statistics.median(times["reconbot"])
        print(f"  reconbot is {ratio:.1f}x faster than pandas")


if __name__ == "__main__":
    main()
