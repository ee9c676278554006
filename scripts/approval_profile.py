"""Benchmark: where the approval's time goes, statement by statement, at one size.

Runs the terminal's flow of `scripts/flow_benchmark.py` (`flow_steps`: upload -> request,
then the edit) in this process on demo data, then the approval, and measures each statement of the
engine's SQL files (`agent.data.reconcile.runner.run_sql`), the row ledger and each file's
account: seconds, CPU seconds, and the minor page faults the process took meanwhile. Page
faults are the figure to watch beside the seconds: a statement that takes many more of them
than it does with memory to spare is paying for DuckDB's allocator handing memory back to the
system at the instance's limit and taking it again (docs/speed.md). `--memory-limit` runs the
flow with another DuckDB memory limit than the process's own (a measurement: the bot keeps
`agent.data.duck.MEMORY_LIMIT`; the first read still decides its threads by the 500 MB of
`MEMORY_LIMIT_BYTES`). The peak is the process's, the request's included. The exceptions
CSV is one statement (`exceptions_csv[0]`). Usage:

    .venv/bin/python scripts/approval_profile.py [--size 1000000] [--memory-limit 600MB]
        [--data bench-data]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from flow_benchmark import flow_service, flow_steps, prepare  # noqa: E402

Usage = tuple[float, float, float, int]
"""Seconds, CPU seconds, system CPU seconds, minor page faults."""


def usage_now() -> Usage:
    """This process's clock, CPU time, system time and minor page faults so far."""
    now = resource.getrusage(resource.RUSAGE_SELF)
    return time.perf_counter(), now.ru_utime + now.ru_stime, now.ru_stime, now.ru_minflt


def spent(start: Usage) -> Usage:
    """What the process spent since `start`."""
    end = usage_now()
    return (end[0] - start[0], end[1] - start[1], end[2] - start[2], end[3] - start[3])


class Measurements:
    """What each measured part of the approval spent, summed over its calls."""

    def __init__(self) -> None:
        self.parts: dict[str, list[float]] = {}
        self.on = False

    @contextmanager
    def part(self, name: str) -> Iterator[None]:
        """Measure the body as `name` while the approval runs (nothing before it)."""
        start = usage_now()
        try:
            yield
        finally:
            if self.on:
                used = spent(start)
                total = self.parts.setdefault(name, [0.0, 0.0, 0.0, 0.0])
                for index, value in enumerate(used):
                    total[index] += value


def instrument(measurements: Measurements) -> None:
    """Measure every statement the engine, the summary and the export run, the row ledger and
    the accounts, by wrapping the functions the reconciliation calls (this process only)."""
    from agent.data.reconcile import engine, exceptions_csv, findings, run, runner, summary

    def run_sql(con: Any, name: str, params: Any = None) -> Any:
        values = params or {}
        result = con
        for index, statement in enumerate(con.extract_statements(runner.sql_text(name))):
            bound = {key: values[key] for key in statement.named_parameters}
            with measurements.part(f"{name}[{index}]"):
                result = con.execute(statement, bound)
        return result

    for module in (engine, exceptions_csv, findings, summary):
        module.run_sql = run_sql

    def measured(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            with measurements.part(name):
                return function(*args, **kwargs)

        return call

    run.build_ledger_rows = measured("row ledger", run.build_ledger_rows)
    run.account = measured("accounts", run.account)


def main() -> None:
    """Run the flow to the approval on demo data of `--size` orders, then print what the
    approval and each measured part of it spent."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--memory-limit", help="DuckDB's memory limit for this run, e.g. 600MB")
    parser.add_argument("--data", type=Path, default=ROOT / "bench-data")
    args = parser.parse_args()
    folder = prepare(args.size, args.data)
    with tempfile.TemporaryDirectory() as scratch:
        from agent.data import duck

        if args.memory_limit:
            duck.MEMORY_LIMIT = args.memory_limit
        measurements = Measurements()
        instrument(measurements)
        service, user = flow_service(Path(scratch))
        steps = flow_steps(service, user, folder / "orders.csv", folder / "payments.csv")
        next(steps)  # upload -> request
        next(steps)  # edit -> request
        measurements.on = True
        start = usage_now()
        _, outcome = next(steps)  # approve -> outcome
        seconds, cpu, system, faults = spent(start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{args.size:,} orders, DuckDB memory limit {duck.MEMORY_LIMIT}: approve -> outcome "
        f"{seconds:.2f} s (CPU {cpu:.2f} s, of it system {system:.2f} s; {faults:,} minor page "
        f"faults); the process's peak {peak:.0f} MiB; {sum(outcome.counts.values()):,} findings"
    )
    print(f"  {'part':<20} {'seconds':>8} {'CPU':>7} {'system':>7} {'faults':>8}")
    for name, (part_seconds, part_cpu, part_system, part_faults) in sorted(
        measurements.parts.items(), key=lambda item: -item[1][0]
    ):
        if part_seconds >= 0.01:
            print(
                f"  {name:<20} {part_seconds:8.3f} {part_cpu:7.3f} {part_system:7.3f} "
                f"{int(part_faults):8,}"
            )


if __name__ == "__main__":
    main()
