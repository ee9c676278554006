"""A TCP proxy on 127.0.0.1 that a test can stall or take down, in front of a real server
(moto's S3): what the bot meets when its file store hangs or goes away for a while.

`up`: bytes pass both ways. `stalled`: bytes already on the way wait (connections stay open,
nothing is answered) until the proxy is up again. `down`: new connections are accepted and
closed at once, and open ones are cut as soon as they carry a byte.
"""

from __future__ import annotations

import select
import socket
import socketserver
import threading
import time
from typing import Literal

Mode = Literal["up", "stalled", "down"]
CHUNK = 65536
MAX_STALL_SECONDS = 120


class TcpProxy:
    """Forwards 127.0.0.1:<port> to `target`; `mode` says how."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.mode: Mode = "up"
        self._changed = threading.Condition()
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy._serve(self.request)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The proxy's address as an HTTP endpoint."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> TcpProxy:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        self.set("up")
        self._server.shutdown()
        self._server.server_close()

    def set(self, mode: Mode) -> None:
        """Change how bytes pass from now on."""
        with self._changed:
            self.mode = mode
            self._changed.notify_all()

    def _wait_while_stalled(self) -> Mode:
        deadline = time.monotonic() + MAX_STALL_SECONDS
        with self._changed:
            while self.mode == "stalled" and time.monotonic() < deadline:
                self._changed.wait(0.2)
            return self.mode

    def _serve(self, client: socket.socket) -> None:
        if self._wait_while_stalled() == "down":
            client.close()
            return
        try:
            upstream = socket.create_connection(self.target, timeout=10)
        except OSError:
            client.close()
            return
        sockets = [client, upstream]
        try:
            while True:
                readable, _, _ = select.select(sockets, [], [], 1.0)
                for source in readable:
                    data = source.recv(CHUNK)
                    if not data:
                        return
                    if self._wait_while_stalled() == "down":
                        return
                    (upstream if source is client else client).sendall(data)
        except OSError:
            return
        finally:
            client.close()
            upstream.close()
