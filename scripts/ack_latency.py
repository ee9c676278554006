"""Benchmark: how fast the bot acknowledges clicks when many arrive at once.

Starts the Slack stand-in on 127.0.0.1 and the bot as operators run it (`reconbot serve` in
its own process, HTTP mode, signature checking on, embedded SQLite), uploads a demo pair,
waits for the approval request, then sends N signed Approve clicks from N different people at
the same instant, --rounds times (a fresh request each round). The clicks are sent by a process
of their own, as Slack's are: each click's payload is built and signed beforehand, N threads
wait at a barrier, then each opens a connection and posts. The figure is the time from sending
a click to the bot's HTTP answer (Slack wants it within 3 s); it prints p50, p95, p99 and the
maximum over all clicks, and checks that each round ran exactly one reconciliation and refused
every other click. Usage:

    .venv/bin/python scripts/ack_latency.py [--clicks 50] [--rounds 5] [--rows 400]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent.data.demo import generate  # noqa: E402
from tests.standins.slack import Message, SlackStandIn  # noqa: E402
from tests.standins.slack.server import form_body, sign  # noqa: E402

CHANNEL = "C0BENCH"
RECONBOT = str(Path(sys.executable).with_name("reconbot"))


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_healthy(port: int, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    """Wait until the bot answers /healthz."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("reconbot serve exited")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError("reconbot serve did not start")


def send_clicks() -> None:
    """The sender process: read {port, secret, bodies} on stdin, post every body at once
    (one thread and new connection each, released together), print [[status, seconds], ...]."""
    order = json.loads(sys.stdin.read())
    bodies = [body.encode() for body in order["bodies"]]
    start = threading.Barrier(len(bodies))

    def post(body: bytes) -> tuple[int, float]:
        stamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": sign(order["secret"], stamp, body),
        }
        connection = http.client.HTTPConnection("127.0.0.1", order["port"], timeout=30)
        start.wait()
        began = time.perf_counter()  # a new connection per click, as Slack's arrive
        connection.request("POST", "/slack/events", body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        seconds = time.perf_counter() - began
        connection.close()
        return response.status, seconds

    with ThreadPoolExecutor(max_workers=len(bodies)) as pool:
        print(json.dumps(list(pool.map(post, bodies))))


def click_all(
    port: int, secret: str, standin: SlackStandIn, request: Message, people: list[str]
) -> list[tuple[int, float]]:
    """Every person clicks Approve on `request` at the same instant, from a sender process."""
    bodies = [form_body(standin.click_payload(p, request, "approve")).decode() for p in people]
    order = json.dumps({"port": port, "secret": secret, "bodies": bodies})
    sent = subprocess.run(
        [sys.executable, __file__, "--send"],
        input=order,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return [(int(status), float(seconds)) for status, seconds in json.loads(sent.stdout)]


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile of `values`."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(share * len(ordered) + 0.5) - 1))
    return ordered[rank]


def wait_request(standin: SlackStandIn, thread_ts: str) -> Message:
    def probe() -> Message | None:
        for message in standin.workspace.thread(CHANNEL, thread_ts):
            if "approve" in message.action_ids():
                return message
        return None

    return standin.workspace.wait_for(probe, timeout=120, what="the approval request")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clicks", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--send", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.send:
        send_clicks()
        return 0

    with tempfile.TemporaryDirectory() as folder_name, SlackStandIn() as standin:
        folder = Path(folder_name)
        generate(args.rows, folder / "demo", seed=3)
        orders = (folder / "demo" / "orders.csv").read_bytes()
        payments = (folder / "demo" / "payments.csv").read_bytes()
        env = {
            **os.environ,
            "SLACK_BOT_TOKEN": standin.workspace.bot_token,
            "SLACK_SIGNING_SECRET": standin.workspace.signing_secret,
            "SLACK_API_URL": standin.api_url,
            "RECONBOT_DATABASE_URL": f"sqlite:///{folder / 'bench.db'}",
            "RECONBOT_BLOB_URL": f"file://{folder / 'blobs'}",
            "RECONBOT_WORK_DIR": str(folder / "work"),
        }
        port = free_port()
        server = subprocess.Popen(
            [RECONBOT, "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_healthy(port, server)
        standin.app_url = f"http://127.0.0.1:{port}/slack/events"
        people = [standin.workspace.add_user(f"U0P{n:04d}", f"p{n}") for n in range(args.clicks)]
        latencies: list[float] = []
        statuses: list[int] = []
        try:
            for round_number in range(args.rounds):
                upload = standin.post_files(
                    people[0], CHANNEL, [("orders.csv", orders), ("payments.csv", payments)]
                )
                request = wait_request(standin, upload.ts).snapshot()
                before = len(standin.workspace.calls_to("files.completeUploadExternal"))
                secret = standin.workspace.signing_secret
                answers = click_all(port, secret, standin, request, people)
                statuses += [status for status, _ in answers]
                latencies += [seconds for _, seconds in answers]
                standin.workspace.wait_for(
                    lambda before=before: (
                        len(standin.workspace.calls_to("files.completeUploadExternal")) > before
                    ),
                    timeout=120,
                    what="the reconciliation",
                )
                expected = (round_number + 1) * (args.clicks - 1)
                refusals = standin.workspace.wait_for(
                    lambda expected=expected: (
                        len(standin.workspace.ephemerals) >= expected
                        and standin.workspace.ephemerals
                    ),
                    timeout=60,
                    what="the refusals",
                )
                assert len(refusals) == expected
                time.sleep(0.5)
                runs = len(standin.workspace.calls_to("files.completeUploadExternal")) - before
                assert runs == 1, f"round {round_number}: {runs} reconciliations"
        finally:
            server.terminate()
            server.wait(timeout=30)

    assert all(s == 200 for s in statuses), statuses
    ms = [s * 1000 for s in latencies]
    print(
        f"acknowledgement latency of {args.clicks} concurrent clicks x {args.rounds} rounds "
        f"({len(ms)} clicks, one reconciliation per round, every other click refused):"
    )
    print(
        f"  p50 {percentile(ms, 0.50):.0f} ms   p95 {percentile(ms, 0.95):.0f} ms   "
        f"p99 {percentile(ms, 0.99):.0f} ms   max {max(ms):.0f} ms   "
        f"mean {statistics.fmean(ms):.0f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
