"""Benchmark: how fast a click is answered while wide uploads are inspected in other channels.

Starts the Slack stand-in on 127.0.0.1 and the bot as operators run it (`reconbot serve` in
its own process, HTTP mode, signature checking on, embedded SQLite, as scripts/ack_latency.py
does), uploads a demo pair in one channel and waits for its approval request, then uploads
four wide file pairs (100 columns, about 430 KB each) in four other channels and, once the bot
has started on all four, clicks Approve on the pending request. The figures are the time from
the click to the bot's HTTP answer (the ack) and to the decision being shown (the request
message edited), --rounds times (fresh uploads each round); it also says how many of the four
inspections were still running when the decision was shown. Usage:

    .venv/bin/python scripts/click_latency.py [--rounds 3] [--columns 100] [--kilobytes 430]
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent.data.demo import generate  # noqa: E402
from scripts.ack_latency import free_port, wait_healthy  # noqa: E402
from tests.standins.slack import Message, SlackStandIn  # noqa: E402

DECIDE = "C0DECIDE"
WIDE = ["C0WIDE1", "C0WIDE2", "C0WIDE3", "C0WIDE4"]
MAKER, CHECKER = "U0MAKER", "U0CHECKER"
RECONBOT = str(Path(sys.executable).with_name("reconbot"))


def widened(source: bytes, columns: int, kilobytes: int, seed: int) -> bytes:
    """An export widened to `columns` with columns whose headers name nothing (numbers,
    amounts, numbers like the order ids, ids unique to each cell), cut to about `kilobytes`."""
    rng = random.Random(seed)
    records = list(csv.reader(io.StringIO(source.decode("utf-8-sig"))))
    header, rows = records[0], records[1:]
    extra = columns - len(header)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*header, *(f"attribute {seed}.{i}" for i in range(extra))])
    for r, row in enumerate(rows):
        cells = [
            (
                str(rng.randint(0, 99_999)),
                f"{rng.randint(0, 9_999)}.{rng.randint(0, 99):02d}",
                str(rng.randint(1_000, 1_000 + len(rows))),
                f"X{r}-{c}",
            )[c % 4]
            for c in range(extra)
        ]
        writer.writerow([*row, *cells])
        if out.tell() >= kilobytes * 1024:
            break
    return out.getvalue().encode()


def wide_pair(
    sources: list[bytes], columns: int, kilobytes: int, seed: int
) -> list[tuple[str, bytes]]:
    """An orders and a payments export widened (see `widened`), named after `seed`."""
    names = (f"orders_{seed}.csv", f"payments_{seed}.csv")
    return [
        (name, widened(source, columns, kilobytes, seed * 2 + i))
        for i, (name, source) in enumerate(zip(names, sources, strict=True))
    ]


def request_of(standin: SlackStandIn, channel: str, thread_ts: str) -> Message | None:
    """The approval request (a message with an Approve button) of a thread, if posted."""
    for message in standin.workspace.thread(channel, thread_ts):
        if "approve" in message.action_ids():
            return message
    return None


def started(standin: SlackStandIn, channel: str, thread_ts: str) -> bool:
    """Whether the bot has said anything in the thread (it posts its progress first)."""
    return any(m.user != MAKER for m in standin.workspace.thread(channel, thread_ts))


def finished(standin: SlackStandIn, channel: str, thread_ts: str) -> bool:
    """Whether the bot has posted the thread's request (a confirmation or a question)."""
    return any(m.action_ids() for m in standin.workspace.thread(channel, thread_ts))


def decided_on(standin: SlackStandIn, message: Message, refusals: int) -> bool:
    """Whether the bot has answered the click: edited `message` (the approval shown on it), or
    refused it (an ephemeral beyond the `refusals` there were; the caller then stops, since a
    refusal is not the decision being timed)."""
    updates = standin.workspace.calls_to("chat.update")
    refused = len(standin.workspace.ephemerals) > refusals
    return refused or any(u.get("ts") == message.ts for u in updates)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--columns", type=int, default=100)
    parser.add_argument("--kilobytes", type=int, default=430)
    parser.add_argument("--rows", type=int, default=400, help="rows of the demo pair decided on")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder_name, SlackStandIn() as standin:
        folder = Path(folder_name)
        generate(args.rows, folder / "demo", seed=3)
        generate(2_000, folder / "wide", seed=4)
        demo = [
            (name, (folder / "demo" / name).read_bytes()) for name in ("orders.csv", "payments.csv")
        ]
        sources = [(folder / "wide" / n).read_bytes() for n in ("orders.csv", "payments.csv")]
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
        acks: list[float] = []
        decided: list[float] = []
        try:
            wait_healthy(port, server)
            standin.app_url = f"http://127.0.0.1:{port}/slack/events"
            standin.workspace.add_user(MAKER, "maker")
            standin.workspace.add_user(CHECKER, "checker")
            for round_number in range(args.rounds):
                upload = standin.post_files(MAKER, DECIDE, demo)
                request = standin.workspace.wait_for(
                    lambda upload=upload: request_of(standin, DECIDE, upload.ts),
                    timeout=300,
                    what="the approval request to decide",
                ).snapshot()
                threads = []
                for n, channel in enumerate(WIDE):
                    seed = 100 * round_number + n
                    files = wide_pair(sources, args.columns, args.kilobytes, seed)
                    threads.append((channel, standin.post_files(MAKER, channel, files).ts))
                standin.workspace.wait_for(
                    lambda threads=threads: all(started(standin, c, t) for c, t in threads),
                    timeout=120,
                    what="the bot starting on the four wide uploads",
                )
                refusals = len(standin.workspace.ephemerals)
                clicked = time.monotonic()
                answer = standin.click(CHECKER, request, "approve")
                standin.workspace.wait_for(
                    lambda request=request, refusals=refusals: decided_on(
                        standin, request, refusals
                    ),
                    timeout=600,
                    what="the decision shown",
                )
                shown = time.monotonic() - clicked
                if len(standin.workspace.ephemerals) > refusals:
                    # A refusal is answered fast too: timing it as a decision would lie.
                    print("the approval was refused; no figure for this round", file=sys.stderr)
                    return 1
                running = sum(1 for c, t in threads if not finished(standin, c, t))
                assert answer.status == 200, answer.status
                acks.append(answer.seconds)
                decided.append(shown)
                print(
                    f"round {round_number + 1}: click in another channel during "
                    f"{len(WIDE)} wide inspections: ack {answer.seconds * 1000:.0f} ms, "
                    f"decided {shown * 1000:.0f} ms ({running} of {len(WIDE)} inspections "
                    "still running)",
                    flush=True,
                )
                begun = time.monotonic()
                standin.workspace.wait_for(
                    lambda threads=threads: all(finished(standin, c, t) for c, t in threads),
                    timeout=900,
                    what="the four wide inspections",
                )
                print(
                    f"  the four wide inspections finished {time.monotonic() - begun:.1f} s "
                    "after the decision",
                    flush=True,
                )
        finally:
            server.terminate()
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()

    print(
        f"click in another channel during {len(WIDE)} wide inspections "
        f"({args.columns} columns, ~{args.kilobytes} KB per file, {args.rounds} rounds): "
        f"ack {statistics.median(acks) * 1000:.0f} ms, "
        f"decided {statistics.median(decided) * 1000:.0f} ms (median; "
        f"max ack {max(acks) * 1000:.0f} ms, max decided {max(decided) * 1000:.0f} ms)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
