"""The bot's commands of the console script: `serve` (HTTP mode), `socket` (Socket Mode),
`worker` (runs the jobs of the PostgreSQL queue) and `start` (whichever the configured
credentials allow, or exactly what is missing; without credentials, `--local-workspace` runs
the bot against a local workspace in the browser, `--demo-without-slack` in the terminal).
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.data.demo import generate
from bot.composition import build_bot, build_worker
from bot.config import Settings
from bot.slack.app import SlackBot
from bot.slack.server import EVENTS_PATH, HttpServer, wsgi_app
from bot.terminal import workflow_cli
from bot.terminal.paths import output_folder
from workspace.local import APPROVERS, LocalWorkspace

logger = logging.getLogger(__name__)

EXIT_NOT_CONFIGURED = 2
EXIT_PORT_TAKEN = 1
DEMO_ROWS = 10_000
LOCAL_LINE = (
    "reconbot: no Slack credentials; a local workspace is at {url} "
    "(open it in a browser; Ctrl-C stops)"
)


def add_commands(commands: Any) -> None:
    """Register serve, socket and start on the console script's parser."""
    serve = commands.add_parser("serve", help="run the Slack bot in HTTP mode")
    serve.add_argument("--port", type=int, help="port (default: PORT, 3000)")
    serve.add_argument("--host", default="0.0.0.0", help="address to bind (default 0.0.0.0)")  # noqa: S104
    serve.set_defaults(handler=_serve)

    socket_mode = commands.add_parser("socket", help="run the Slack bot in Socket Mode")
    socket_mode.set_defaults(handler=_socket)

    worker = commands.add_parser(
        "worker",
        help="run the jobs web processes enqueue (PostgreSQL): uploads, approvals, questions",
    )
    worker.add_argument(
        "--concurrency",
        type=int,
        help="jobs at once per lane (default: RECONBOT_WORKER_CONCURRENCY, 2)",
    )
    worker.add_argument(
        "--name", default=None, help="this worker's name in the logs (default: host:pid)"
    )
    worker.set_defaults(handler=_worker)

    start = commands.add_parser(
        "start", help="run the Slack bot in Socket Mode or HTTP mode, as configured"
    )
    start.add_argument(
        "--port", type=int, help="port (default: PORT, 3000; the local workspace's without Slack)"
    )
    start.add_argument("--host", default="0.0.0.0")  # noqa: S104
    start.add_argument(
        "--local-workspace",
        action="store_true",
        help="when Slack is not configured, run the bot against a local workspace served on "
        "http://127.0.0.1:PORT/ (a Slack stand-in in the browser) instead",
    )
    start.add_argument(
        "--demo-without-slack",
        type=Path,
        metavar="DIR",
        help="when Slack is not configured, say what is missing and then investigate demo "
        "data written to DIR in this terminal instead",
    )
    start.set_defaults(handler=_start)


def _verbose() -> None:
    for name in ("bot", "agent", "storage"):
        logging.getLogger(name).setLevel(logging.INFO)


def _serve(args: argparse.Namespace) -> int:
    settings = Settings()
    _verbose()
    bot, _ = build_bot(settings)
    server = HttpServer(wsgi_app(bot.app), host=args.host, port=args.port or settings.port)
    # shutdown() waits for serve_forever() to return, so it must not run on the serving
    # thread (where signal handlers run): hand it to another thread.
    signal.signal(
        signal.SIGTERM,
        lambda *_: threading.Thread(target=server.server.shutdown, daemon=True).start(),
    )
    bot.start()
    print(f"reconbot: serving {server.url}{EVENTS_PATH} and {server.url}/healthz", flush=True)
    print(f"reconbot: {settings.describe_state()}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server.server_close()
        bot.close()
    return 0


def _socket(args: argparse.Namespace) -> int:
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    settings = Settings()
    _verbose()
    bot, _ = build_bot(settings, socket_mode=True)
    bot.start()
    handler = SocketModeHandler(bot.app, settings.slack_app_token)
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    print("reconbot: connected in Socket Mode; Ctrl-C stops", flush=True)
    print(f"reconbot: {settings.describe_state()}", flush=True)
    try:
        handler.start()  # type: ignore[no-untyped-call]
    except KeyboardInterrupt:
        pass
    finally:
        handler.close()  # type: ignore[no-untyped-call]
        bot.close()
    return 0


def _worker(args: argparse.Namespace) -> int:
    settings = Settings()
    _verbose()
    logging.getLogger("procrastinate").setLevel(logging.WARNING)
    worker = build_worker(settings, concurrency=args.concurrency)
    name = args.name or f"{socket.gethostname()}:{os.getpid()}"
    print(
        f"reconbot: worker {name} running jobs ({worker.settings.concurrency} at once for "
        f"uploads and questions, {worker.settings.decision_concurrency} for decisions); "
        "Ctrl-C or SIGTERM stops after the running jobs",
        flush=True,
    )
    print(f"reconbot: {settings.describe_state()}", flush=True)
    worker.run(name)
    return 0


def _stop_on_sigterm(*_: object) -> None:
    """SIGTERM stops Socket Mode like Ctrl-C: the connection closes, running work finishes."""
    raise KeyboardInterrupt


def _start(args: argparse.Namespace) -> int:
    settings = Settings()
    if not settings.missing_for_slack(socket_mode=True):
        return _socket(args)
    if not settings.missing_for_slack(socket_mode=False):
        return _serve(args)
    if args.local_workspace:
        return _local(args, settings)
    print(
        "reconbot: Slack is not configured, so the bot cannot start.\n"
        "  For Socket Mode (development), set:\n"
        + "".join(f"    {m}\n" for m in settings.missing_for_slack(socket_mode=True))
        + "  For HTTP mode (production), set:\n"
        + "".join(f"    {m}\n" for m in settings.missing_for_slack(socket_mode=False))
        + "  docs/operations.md, 'Set up the Slack app', walks through it.",
        file=sys.stderr,
    )
    if args.demo_without_slack is None:
        return EXIT_NOT_CONFIGURED
    folder = output_folder(args.demo_without_slack, option="--demo-without-slack")
    print(
        f"reconbot: meanwhile, the same workflow in this terminal, on demo data in {folder}/ "
        "(type approve):\n",
        file=sys.stderr,
    )
    generate(DEMO_ROWS, folder, seed=7)
    return workflow_cli.investigate_files(
        folder / "orders.csv", folder / "payments.csv", as_json=False
    )


@dataclass
class LocalRun:
    """The bot serving a local workspace from this process: the workspace (the Slack
    stand-in with its page), the bot, and the bot's HTTP server on another loopback port."""

    workspace: LocalWorkspace
    bot: SlackBot
    server: HttpServer

    def stop(self) -> None:
        """Stop the bot's server, the bot and the workspace."""
        self.server.stop()
        self.bot.close()
        self.workspace.stop()


def local_settings(settings: Settings, workspace: LocalWorkspace) -> Settings:
    """`settings` for a bot of the local workspace: its random bot token and signing secret,
    its Web API, HTTP mode; and, unless approvers are configured, its approvers with
    four-eyes (the requester never approves their own request)."""
    update: dict[str, Any] = {
        "slack_bot_token": workspace.bot_token,
        "slack_signing_secret": workspace.signing_secret,
        "slack_app_token": None,
        "slack_api_url": workspace.api_url,
    }
    if "approvers" not in settings.model_fields_set:
        update["approvers"] = APPROVERS
        if "self_approval" not in settings.model_fields_set:
            update["self_approval"] = False
    return settings.model_copy(update=update)


def demo_files(folder: Path, rows: int = DEMO_ROWS) -> Callable[[], list[tuple[str, bytes]]]:
    """The workspace's "Use demo files": the demo pair (written to `folder` the first time)."""
    lock = threading.Lock()

    def files() -> list[tuple[str, bytes]]:
        """The demo pair's names and bytes."""
        with lock:
            if not (folder / "orders.csv").exists() or not (folder / "payments.csv").exists():
                generate(rows, folder, seed=7)
            return [(name, (folder / name).read_bytes()) for name in ("orders.csv", "payments.csv")]

    return files


def start_local_workspace(
    settings: Settings, *, port: int, demo: Callable[[], list[tuple[str, bytes]]] | None
) -> LocalRun:
    """Serve a local workspace on 127.0.0.1:`port` (0: any free port) and a bot for it on
    another loopback port, each knowing the other's address and the shared secrets."""
    workspace = LocalWorkspace(port=port, demo=demo).start()
    try:
        bot, _ = build_bot(local_settings(settings, workspace))
    except BaseException:
        workspace.stop()
        raise
    server = HttpServer(wsgi_app(bot.app), host="127.0.0.1", port=0).start()
    bot.start()
    workspace.connect(server.url + EVENTS_PATH)
    logger.info("workspace=%s events=%s | local workspace connected", workspace.url, server.url)
    return LocalRun(workspace, bot, server)


def _local(args: argparse.Namespace, settings: Settings) -> int:
    _verbose()
    port = settings.port if args.port is None else args.port
    try:
        run = start_local_workspace(
            settings, port=port, demo=demo_files(settings.state_home / "demo")
        )
    except OSError as error:
        if error.errno not in (errno.EADDRINUSE, errno.EACCES):
            raise
        print(
            f"reconbot: cannot serve the local workspace on 127.0.0.1:{port} "
            f"({error.strerror or error}); choose another port with PORT or --port",
            file=sys.stderr,
        )
        return EXIT_PORT_TAKEN
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print(LOCAL_LINE.format(url=run.workspace.url), flush=True)
    print(f"reconbot: {settings.describe_state()}", flush=True)
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        run.stop()
    return 0
