"""Benchmark: how the production topology scales with the number of `reconbot worker`s.

For each worker count in --workers (default 1, 2 and 4), starts on this machine: the Slack
stand-in on 127.0.0.1, a fresh PostgreSQL schema (dropped afterwards), moto's S3 server,
`reconbot migrate`, two `reconbot serve` web processes (the stand-in delivers to each in turn)
and that many `reconbot worker --concurrency 2` processes. It then posts --uploads demo pairs
at once (--rows orders each, a different seed per upload, so no two share file blobs, as real
uploads would not), waits for every approval request, clicks Approve on all of them at once
and waits for every "Reconciled". One row per worker count:

  uploads/min     uploads / (first post -> last approval request seen) x 60: intake throughput
  up->req p50/p95 per upload, its post -> its approval request seen in its thread (seconds);
                  with all uploads posted at once this is mostly queueing, so it falls as
                  workers are added only while there are idle CPU cores for them
  click->rec      per request, its Approve click -> "Reconciled" seen in its thread (seconds)
  cpu             the machine's CPU busy share from the first post to the last "Reconciled"
                  (/proc/stat); near 100 % means more workers can only share the same cores
                  (a worker runs its jobs on threads of one process: about one core each)
  web/worker MiB  peak RSS of each process (VmHWM from /proc/<pid>/status, read just before the
                  processes are stopped), one figure per process

Times are when this script first saw the message, polling the stand-in every 50 ms. Everything
(the stand-in, moto, PostgreSQL, web processes, workers) shares this machine's cores, so the
figures show scaling on one host, not a cluster; expect +-25 % between runs on a small box.
Without a PostgreSQL server at --postgres it says so and exits 0. Usage:

    .venv/bin/python scripts/worker_scaling.py [--uploads 20] [--rows 2000] [--workers 1,2,4]
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import boto3  # noqa: E402
from moto.server import ThreadedMotoServer  # noqa: E402

from agent.data.demo import generate  # noqa: E402
from scripts.ack_latency import free_port, percentile, wait_healthy  # noqa: E402
from storage.database import create_engine  # noqa: E402
from tests.standins.slack import Message, SlackStandIn  # noqa: E402
from tests.support.databases import drop_schema, postgres_schema_url  # noqa: E402

CHANNEL = "C0BENCH"
MAKER, CHECKER = "U0MAKER", "U0CHECKER"
BUCKET = "reconbot-bench"
RECONBOT = str(Path(sys.executable).with_name("reconbot"))
WEBS = 2
POLL = 0.05


@dataclass
class Run:
    """The figures of one worker count."""

    workers: int
    per_minute: float
    to_request: list[float]
    to_result: list[float]
    cpu_busy: float
    web_mib: list[float]
    worker_mib: list[float]


def reachable(url: str) -> bool:
    """Whether the PostgreSQL server answers (within 5 s)."""
    engine = create_engine(url + ("&" if "?" in url else "?") + "connect_timeout=5")
    try:
        with engine.connect():
            return True
    except Exception:
        return False
    finally:
        engine.dispose()


def peak_mib(pid: int) -> float:
    """The peak resident set size of a running process (VmHWM), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_ticks() -> tuple[int, int]:
    """The machine's busy and total CPU ticks so far (/proc/stat)."""
    ticks = [int(t) for t in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)  # idle, iowait


def wait_all(probe: Callable[[int], bool], count: int, timeout: float, what: str) -> list[float]:
    """Poll `probe(n)` for n < count until each holds; returns when each was first seen."""
    deadline = time.monotonic() + timeout
    seen: dict[int, float] = {}
    while len(seen) < count:
        now = time.monotonic()
        seen |= {n: now for n in range(count) if n not in seen and probe(n)}
        if len(seen) < count and now > deadline:
            raise TimeoutError(f"gave up after {timeout:.0f} s: {count - len(seen)} {what} missing")
        time.sleep(POLL)
    return [seen[n] for n in range(count)]


def request_in(standin: SlackStandIn, thread_ts: str) -> Message | None:
    """The approval request (a bot message with an Approve button) of a thread, if posted."""
    for message in standin.workspace.thread(CHANNEL, thread_ts):
        if message.bot_id and "approve" in message.action_ids():
            return message.snapshot()
    return None


def reconciled(standin: SlackStandIn, thread_ts: str) -> bool:
    """Whether the thread shows the reconciliation's result."""
    return any(
        m.bot_id and "Reconciled" in m.all_text()
        for m in standin.workspace.thread(CHANNEL, thread_ts)
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, as a process manager stops it; SIGKILL after 30 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def wait_log(log: Path, needle: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    """Wait (bounded) until a process has written `needle` to its log."""
    deadline = time.monotonic() + timeout
    while needle not in log.read_text(errors="replace"):
        if process.poll() is not None:
            raise RuntimeError(f"{log.name}: exited {process.returncode}; see below")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{log.name}: no {needle!r} after {timeout:.0f} s")
        time.sleep(0.1)


def measure(
    workers: int, args: argparse.Namespace, pairs: list[list[tuple[str, bytes]]], folder: Path
) -> Run:
    """Start the topology with `workers` workers, run the uploads and clicks, stop it."""
    logs: list[Path] = []
    try:
        with ExitStack() as stack:
            url, schema = postgres_schema_url(args.postgres)
            stack.callback(drop_schema, args.postgres, schema)
            moto = ThreadedMotoServer(ip_address="127.0.0.1", port=free_port(), verbose=False)
            moto.start()
            stack.callback(moto.stop)
            standin = stack.enter_context(SlackStandIn())
            standin.workspace.add_user(MAKER, "maker")
            standin.workspace.add_user(CHECKER, "checker")
            host, port = moto.get_host_and_port()
            s3 = f"http://{host}:{port}"
            boto3.client(
                "s3",
                endpoint_url=s3,
                region_name="us-east-1",
                aws_access_key_id="testing",
                aws_secret_access_key="testing",
            ).create_bucket(Bucket=BUCKET)
            env = {
                **os.environ,
                "SLACK_BOT_TOKEN": standin.workspace.bot_token,
                "SLACK_SIGNING_SECRET": standin.workspace.signing_secret,
                "SLACK_API_URL": standin.api_url,
                "RECONBOT_DATABASE_URL": url,
                "RECONBOT_BLOB_URL": f"s3://{BUCKET}/blobs",
                "RECONBOT_S3_ENDPOINT_URL": s3,
                "RECONBOT_WORK_DIR": str(folder / "work"),
                "RECONBOT_WORKER_HEARTBEAT": "2s",
                "RECONBOT_WORKER_STALLED_AFTER": "10s",
                "RECONBOT_EXPIRY_SWEEP": "5s",
                "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_REGION": "us-east-1",
            }
            command = [RECONBOT, "migrate"]
            subprocess.run(
                command, cwd=ROOT, env=env, check=True, timeout=120, stdout=subprocess.DEVNULL
            )
            processes: list[subprocess.Popen[bytes]] = []
            for n in range(WEBS + workers):
                web = n < WEBS
                logs.append(folder / f"{workers}-workers-{'web' if web else 'worker'}-{n}.log")
                web_port = free_port()
                command = (
                    [RECONBOT, "serve", "--host", "127.0.0.1", "--port", str(web_port)]
                    if web
                    else [RECONBOT, "worker", "--concurrency", "2"]
                )
                with logs[-1].open("ab") as out:
                    processes.append(
                        subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)
                    )
                stack.callback(stop, processes[-1])
                if web:
                    wait_healthy(web_port, processes[-1])
                    standin.app_urls.append(f"http://127.0.0.1:{web_port}/slack/events")
            for process, log in zip(processes[WEBS:], logs[WEBS:], strict=True):
                wait_log(log, "running jobs", process, timeout=60)

            count = args.uploads
            posted, clicked = [0.0] * count, [0.0] * count
            requests: list[Message | None] = [None] * count

            def upload(n: int) -> Message:
                posted[n] = time.monotonic()
                return standin.post_files(MAKER, CHANNEL, pairs[n], text=f"bench upload {n}")

            def found(n: int) -> bool:
                requests[n] = requests[n] or request_in(standin, uploads[n].ts)
                return requests[n] is not None

            def approve(n: int) -> int:
                request = requests[n]
                assert request is not None
                clicked[n] = time.monotonic()
                return standin.click(CHECKER, request, "approve").status

            ticks = cpu_ticks()
            with ThreadPoolExecutor(count) as pool:
                uploads = list(pool.map(upload, range(count)))
            asked = wait_all(found, count, args.timeout, "approval requests")
            with ThreadPoolExecutor(count) as pool:
                statuses = list(pool.map(approve, range(count)))
            if any(s != 200 for s in statuses):
                raise RuntimeError(f"clicks answered {statuses}")
            done = wait_all(
                lambda n: reconciled(standin, uploads[n].ts), count, args.timeout, "results"
            )
            busy, total = (now - then for now, then in zip(cpu_ticks(), ticks, strict=True))
            mib = [peak_mib(p.pid) for p in processes]
            return Run(
                workers,
                count / (max(asked) - min(posted)) * 60,
                [a - p for a, p in zip(asked, posted, strict=True)],
                [d - c for d, c in zip(done, clicked, strict=True)],
                100 * busy / total,
                mib[:WEBS],
                mib[WEBS:],
            )
    except BaseException:
        for log in logs:
            text = log.read_text(errors="replace")[-3000:]
            print(f"--- {log.name} (end) ---\n{text}", file=sys.stderr)
        raise


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uploads", type=int, default=20)
    parser.add_argument("--rows", type=int, default=2000, help="orders per demo pair")
    parser.add_argument("--workers", default="1,2,4", help="worker counts, comma-separated")
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per wait")
    args = parser.parse_args()
    counts = [int(c) for c in args.workers.split(",") if c.strip()]
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's server logs every request

    if not reachable(args.postgres):
        print(
            "worker scaling: skipped, this benchmark needs a PostgreSQL server and none "
            f"answered at {args.postgres} (pass --postgres URL)."
        )
        return 0
    runs: list[Run] = []
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        pairs = []
        for seed in range(args.uploads):
            generate(args.rows, folder / f"demo-{seed}", seed=seed)
            names = ("orders.csv", "payments.csv")
            pairs.append([(n, (folder / f"demo-{seed}" / n).read_bytes()) for n in names])
        for workers in counts:
            began = time.monotonic()
            runs.append(measure(workers, args, pairs, folder))
            print(f"  {workers} worker(s): done in {time.monotonic() - began:.0f} s", flush=True)

    print(
        f"\nworker scaling: {args.uploads} uploads of {args.rows} demo orders posted at once, "
        f"{WEBS} web processes, each worker --concurrency 2, {os.cpu_count()} CPUs; "
        "times in seconds, peak RSS (VmHWM at the end) in MiB per process"
    )
    header = (
        f"{'workers':>7}  {'uploads/min':>11}  {'up->req p50':>11}  {'p95':>6}  "
        f"{'click->rec p50':>14}  {'p95':>6}  {'cpu':>4}  {'web MiB':>9}  worker MiB"
    )
    print(header)
    print("-" * len(header))
    for run in runs:
        print(
            f"{run.workers:>7}  {run.per_minute:>11.1f}  "
            f"{percentile(run.to_request, 0.5):>11.1f}  {percentile(run.to_request, 0.95):>6.1f}  "
            f"{percentile(run.to_result, 0.5):>14.1f}  {percentile(run.to_result, 0.95):>6.1f}  "
            f"{run.cpu_busy:>3.0f}%  "
            f"{' '.join(f'{m:.0f}' for m in run.web_mib):>9}  "
            f"{' '.join(f'{m:.0f}' for m in run.worker_mib)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
