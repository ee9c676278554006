"""Benchmark: the whole flow as a person meets it, against the same job written straight in
DuckDB, in polars and in pandas, on the same files in the same run.

For each size, on demo data (`reconbot demo-data`, cached under --data) whose payments file,
as Stripe's charge exports do, carries the captured amount twice ("Amount" and "Amount
Captured", the same values), a fresh child process runs the flow the terminal runs (`reconbot
investigate` with an edit answered), through the same use cases, on embedded SQLite, a file
blob store and an empty work directory (a cold columnar cache), with the offline model:

  upload -> request    the two files handed over (stored, inspected, parsed, validated) until
                       the approval request is ready
  edit -> request      an edit of an amount column (payments.captured_amount="Amount", the
                       other of the two) until the new request is ready
  approve -> outcome   the approval until the outcome (reconciled, exceptions CSV stored)
  whole                the three together

Between a request and the person's answer the child waits --reading seconds (3 by default),
not counted: the person reading the request, while the bot does what it does meanwhile (a
confirmation request's reconciliation, sealed until approved). With --reading 0 every answer
comes at once.

Beside it, in the same run, children run the same job written straight
(`scripts/duckdb_pipeline.py`, `scripts/polars_pipeline.py`: read, reconcile, export, counts;
`scripts/pandas_pipeline.py` hashes the files too), without any of the person's steps; the
flow's whole is given as a ratio of the best of DuckDB and polars.

Each pipeline runs --repeat times after one discarded warm-up run; the figures
are medians, and each child's peak resident memory (`ru_maxrss`, in MiB) is the largest seen,
with the child's peak by the end of each step beside the step (where the peak happens), and
the CPU time the child used in each step (on 2 cores, a step of about twice its seconds in CPU
time is bound by the cores, not waiting). Every pipeline's per-category counts are checked
against `truth.json` on every run. Interpreter start-up and imports are excluded for all. Last,
a child times DuckDB alone parsing every cell of both files at once, with the reader options of
reconbot's own first read, keeping nothing: that read parses every cell too (and types them into
tables, and hashes and counts the bytes beside it), so this is a floor of upload -> request on
the machine. Usage:

    .venv/bin/python scripts/flow_benchmark.py [--sizes 100000 1000000] [--repeat 3]
        [--peers duckdb polars pandas] [--reading 3] [--no-warm-up]

`make bench-10m` runs it once on 10M orders (no warm-up run; DuckDB's straight job only:
pandas and polars need far more memory than the machine has to spare at that size).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

STEPS = ("upload -> request", "edit -> request", "approve -> outcome")
EDIT = {"payments": {"captured_amount": "Amount"}}
"""The person's answer: the other of the two amount columns (the proposal reads "Amount
Captured", whose header says it best)."""
SECOND_AMOUNT = "Amount Captured"
"""The column added beside the payments' "Amount", with the same values (`with_second_amount`)."""
PEERS = ("duckdb", "polars", "pandas")


def peak_mib() -> float:
    """This process's peak resident memory so far, in MiB (Linux reports `ru_maxrss` in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def flow_service(folder: Path) -> tuple[Any, Any]:
    """The terminal's service and its person, on embedded SQLite, a file blob store and an
    empty work directory in `folder`, with the offline model: what every flow runs on."""
    os.environ.update(
        {
            "RECONBOT_DATABASE_URL": f"sqlite:///{folder / 'reconbot.db'}",
            "RECONBOT_BLOB_URL": f"file://{folder / 'blobs'}",
            "RECONBOT_WORK_DIR": str(folder / "work"),
            "RECONBOT_MODEL": "offline",
        }
    )
    from bot.composition import build_runtime, migrate_database
    from bot.config import Settings
    from bot.terminal.console import terminal_identity

    settings = Settings()
    migrate_database(settings)
    return build_runtime(settings).service, terminal_identity()


def flow_steps(
    service: Any, user: Any, orders: Path, payments: Path, reading: float
) -> Iterator[tuple[str, Any]]:
    """The person's three steps (`STEPS`) on the two files, one per `next()`: each runs its
    step and yields the step's name and what it returned (the outcome last); before each
    answer the person reads the request for `reading` seconds (not counted: the caller's clock
    runs within `next()` only after it). Stops with SystemExit when a step does not lead to
    the next (no request, or no confirmation after the edit)."""
    from agent.data.schema import Role
    from agent.domain import Approver
    from agent.usecases.common import Upload

    with orders.open("rb") as first, payments.open("rb") as second:
        uploads = [
            Upload(first, orders.name, local=True),
            Upload(second, payments.name, local=True),
        ]
        request = service.intake.start(uploads, requested_by=user).request
    if request is None:
        raise SystemExit("the demo data did not give a request")
    yield STEPS[0], request
    time.sleep(reading)
    answers = {Role(role): fields for role, fields in EDIT.items()}
    edited = service.decisions.edit(
        request.pause_id, request.authorization_identity, Approver(user=user), answers
    )
    if edited.kind.value != "confirmation":
        raise SystemExit(f"the edit did not give a confirmation request: {edited.problems}")
    yield STEPS[1], edited
    time.sleep(reading)
    outcome = service.decisions.confirm(
        edited.pause_id, edited.authorization_identity, Approver(user=user)
    )
    yield STEPS[2], outcome


def child_flow(orders: Path, payments: Path, folder: Path, reading: float) -> None:
    """Run the terminal's flow on the two files and print {steps: seconds, peaks: MiB by the
    end of each step, counts} as JSON; the person's reading time is not in the seconds."""
    service, user = flow_service(folder)
    seconds: dict[str, float] = {}
    cpu: dict[str, float] = {}
    peaks: dict[str, float] = {}
    steps = flow_steps(service, user, orders, payments, reading)
    outcome = None
    waited = 0.0
    while True:
        start, used = time.perf_counter(), time.process_time()
        step = next(steps, None)
        if step is None:
            break
        name, outcome = step
        seconds[name] = time.perf_counter() - start - waited
        cpu[name] = time.process_time() - used
        peaks[name] = peak_mib()
        waited = reading if name != STEPS[-1] else 0.0
    assert outcome is not None
    print(json.dumps({"steps": seconds, "cpu": cpu, "peaks": peaks, "counts": outcome.counts}))


def child_floor(orders: Path, payments: Path, folder: Path) -> None:
    """Time DuckDB alone parsing every cell of both files, at once, with the reader options and
    instance settings of reconbot's first read (`ingest.read_into`), keeping nothing (the
    longest cell of each column), and print {seconds}: a part of the first step that no change
    to reconbot's own work removes."""
    from concurrent.futures import ThreadPoolExecutor

    from agent.data.duck import session
    from agent.data.ingest import inspect_csv
    from agent.data.ingest.reader import read_csv_sql

    layouts = [inspect_csv(path, path.name).layout for path in (orders, payments)]

    def parse(path: Path, index: int) -> None:
        columns = range(len(layouts[index].columns))
        every = ", ".join(f"max(length(c{i}))" for i in columns)
        session(folder).execute(f"SELECT {every} FROM {read_csv_sql(path, layouts[index])}")

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(parse, (orders, payments), (0, 1)))
    print(json.dumps({"seconds": time.perf_counter() - start}))


def run_child(args: list[str]) -> tuple[dict[str, Any], float]:
    """Run a child of this script or of benchmark.py; return its JSON and its peak RSS in MiB."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(args, stdout=out, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0)
        text = out.read().decode()
    if status != 0:
        raise SystemExit(f"child {args[1:4]} failed with status {status}")
    return json.loads(text.strip().splitlines()[-1]), usage.ru_maxrss / 1024


def prepare(size: int, data: Path) -> Path:
    """Demo data for `size` orders with the payments' amount written twice
    (`with_second_amount`), generated in a child (a parent's peak memory is passed on to the
    children it starts, so generating here would inflate every measured peak)."""
    folder = data / f"{size}-stripe"
    if not (folder / "truth.json").exists():
        print(f"generating {size:,} orders into {folder} …", flush=True)
        generator = "from agent.data.demo import generate; import sys, pathlib; "
        generator += "generate(int(sys.argv[1]), pathlib.Path(sys.argv[2]), seed=7)"
        subprocess.run(
            [sys.executable, "-c", generator, str(size), str(folder / "plain")],
            check=True,
            cwd=ROOT,
        )
        with_second_amount(folder / "plain" / "payments.csv", folder / "payments.csv")
        for name in ("orders.csv", "truth.json"):
            (folder / "plain" / name).replace(folder / name)
        shutil.rmtree(folder / "plain")
    return folder


def with_second_amount(source: Path, target: Path) -> None:
    """Copy the payments file with a column `SECOND_AMOUNT` after "Amount", holding the same
    values, as Stripe's exports of charges carry "Amount" and "Amount Captured"."""
    with (
        source.open(newline="", encoding="utf-8") as read,
        target.open("w", newline="", encoding="utf-8") as written,
    ):
        rows, out = csv.reader(read), csv.writer(written, lineterminator="\n")
        header = next(rows)
        at = header.index("Amount") + 1
        out.writerow([*header[:at], SECOND_AMOUNT, *header[at:]])
        out.writerows([*row[:at], row[at - 1], *row[at:]] for row in rows)


def expected_counts(folder: Path) -> dict[str, int]:
    """The findings per category that the demo files in `folder` hold (`truth.json`), those
    of none left out (a pipeline reports only the categories it found)."""
    truth = json.loads((folder / "truth.json").read_text())["findings"]
    return {k: v for k, v in truth.items() if v}


def measure(
    folder: Path, kind: str, scratch: Path, reading: float = 0.0
) -> tuple[dict[str, Any], float]:
    """One run of `kind` (flow, floor, or a peer of `PEERS`) on the files in `folder`."""
    orders, payments = str(folder / "orders.csv"), str(folder / "payments.csv")
    if kind == "flow":
        with tempfile.TemporaryDirectory(dir=scratch) as work:
            args = ["--child", orders, payments, work, "--reading", str(reading)]
            return run_child([sys.executable, __file__, *args])
    if kind == "floor":
        with tempfile.TemporaryDirectory(dir=scratch) as work:
            return run_child([sys.executable, __file__, "--floor", orders, payments, work])
    export = str(scratch / f"exceptions-{kind}.csv")
    script = str(ROOT / "scripts" / "benchmark.py")
    result, rss = run_child([sys.executable, script, "--child", kind, orders, payments, export])
    return {"steps": {"whole job": result["seconds"]}, "counts": result["counts"]}, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=ROOT / "bench-data")
    parser.add_argument(
        "--peers", nargs="*", default=list(PEERS), choices=PEERS, help="the straight jobs to run"
    )
    parser.add_argument(
        "--reading", type=float, default=3.0, help="seconds the person reads each request"
    )
    parser.add_argument("--no-warm-up", action="store_true", help="time every run")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--floor", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        orders, payments, folder = (Path(p) for p in args.child)
        child_flow(orders, payments, folder, args.reading)
        return
    if args.floor:
        child_floor(*(Path(p) for p in args.floor))
        return
    kinds = ("flow", *args.peers)
    print(
        f"machine: {os.cpu_count()} cores; {args.repeat} runs of each"
        f"{'' if args.no_warm_up else ' after a warm-up run'}; "
        "medians; peak = the largest peak RSS of a run (MiB), by the end of each step; "
        f"the person reads each request {args.reading:g} s (not counted)"
    )
    for size in args.sizes:
        folder = prepare(size, args.data)
        expected = expected_counts(folder)
        megabytes = sum((folder / f).stat().st_size for f in ("orders.csv", "payments.csv")) / 1e6
        times: dict[str, dict[str, list[float]]] = {k: {} for k in kinds}
        cpus: dict[str, list[float]] = {}
        step_peaks: dict[str, float] = dict.fromkeys(STEPS, 0.0)
        peaks: dict[str, float] = dict.fromkeys(kinds, 0.0)
        agree: dict[str, bool] = dict.fromkeys(kinds, True)
        with tempfile.TemporaryDirectory(dir=args.data) as scratch:
            for kind in kinds:
                first = 1 if args.no_warm_up else 0
                for run in range(first, args.repeat + 1):
                    result, rss = measure(folder, kind, Path(scratch), args.reading)
                    counts = {k: v for k, v in dict(result["counts"]).items() if v}
                    agree[kind] = agree[kind] and counts == expected
                    if run == 0:
                        continue  # the warm-up run: checked, not timed
                    peaks[kind] = max(peaks[kind], rss)
                    for step, peak in dict(result.get("peaks", {})).items():
                        step_peaks[step] = max(step_peaks[step], float(peak))
                    for step, used in dict(result.get("cpu", {})).items():
                        cpus.setdefault(step, []).append(float(used))
                    steps = dict(result["steps"])
                    steps["whole"] = sum(steps.values())
                    for step, value in steps.items():
                        times[kind].setdefault(step, []).append(float(value))
        print(f"\n{size:,} orders ({megabytes:.0f} MB of CSV; {sum(expected.values()):,} findings)")
        flow = {step: statistics.median(values) for step, values in times["flow"].items()}
        for step in STEPS:
            peak = f"peak by then {step_peaks[step]:>6.0f} MiB"
            used = f"CPU {statistics.median(cpus[step]):>5.2f} s" if step in cpus else ""
            print(f"  reconbot {step:<20} {flow[step]:>7.2f} s; {used}; {peak}")
        print(f"  reconbot {'whole':<20} {flow['whole']:>7.2f} s")
        floors = [measure(folder, "floor", Path(args.data))[0]["seconds"] for _ in range(3)]
        print(
            f"  DuckDB alone, every cell of both files parsed: {statistics.median(floors):.2f} s "
            "(a floor of the first step; median of 3)"
        )
        print(
            f"  reconbot peak {peaks['flow']:>6.0f} MiB; counts = truth.json: "
            f"{'yes' if agree['flow'] else 'NO'}"
        )
        for peer in args.peers:
            alone = statistics.median(times[peer]["whole"])
            print(
                f"  {peer:<8} whole job            {alone:>7.2f} s; "
                f"peak {peaks[peer]:>6.0f} MiB; "
                f"counts = truth.json: {'yes' if agree[peer] else 'NO'}; "
                f"the flow's whole is {flow['whole'] / alone:.2f}x this"
            )
        straight = [p for p in args.peers if p != "pandas"]
        if straight:
            best = min(straight, key=lambda peer: statistics.median(times[peer]["whole"]))
            ratio = flow["whole"] / statistics.median(times[best]["whole"])
            print(f"  the whole flow takes {ratio:.2f}x the time of the best straight job ({best})")


if __name__ == "__main__":
    main()
