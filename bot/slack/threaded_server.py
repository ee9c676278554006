"""The threaded HTTP server of `reconbot serve`: each connection answered on its own thread.

What a click costs before its answer is kept small, since fifty may arrive at once and share one
interpreter: threads already waiting in accept() take them, nothing on the way waits on a lock
another request thread holds, the answer goes out in one write, and a connection answered in
full is closed at once (the lingering drain is for refused bodies). A connection that stays
silent for `request_timeout` seconds (a half-open or stalled client) is closed with one log
line, not a traceback.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import sys
import threading
import time
from http import HTTPStatus
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from bot.slack.answering import ANSWERING

logger = logging.getLogger(__name__)

# How long the threaded server waits on a silent connection before closing it.
REQUEST_TIMEOUT_SECONDS = 10.0
# After answering, how long and how much the threaded server drains of a request it did not
# read (a refused body), so that closing does not reset the connection under the answer.
_LINGER_SECONDS = 2.0
_LINGER_BYTES = 64 * 1024
_DRAIN_CHUNK = 64 * 1024
# Threads of the threaded server waiting in accept() at all times, and the most it runs.
ACCEPTING_THREADS = 64
MAX_THREADS = 256
# How long stopping the threaded server tries to wake the threads waiting in accept().
_WAKE_SECONDS = 2.0


class ThreadingWSGIServer(WSGIServer):
    """A WSGI server answering each connection on its own thread (Slack expects 3-second acks).

    Threads wait for connections in `accept()` themselves, ACCEPTING_THREADS of them at all
    times, and each answers the connection it accepted: a burst of clicks is taken in parallel
    by threads already running. (A single loop accepting and starting a thread per connection
    took about 5 ms a connection on a busy machine, so the 50th of a burst waited 250 ms before
    being read.) When the last waiting thread takes a connection it starts another, up to
    MAX_THREADS; past that, connections wait in the listen backlog. A thread that finishes while
    enough others wait exits."""

    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog is 5: a burst of clicks would be reset, not queued.
    request_queue_size = 256
    # Seconds a connection may stay silent (reading the request or writing the answer).
    request_timeout: float | None = REQUEST_TIMEOUT_SECONDS
    # Threads kept waiting in accept(), and the most threads serving at once.
    accepting_threads = ACCEPTING_THREADS
    max_threads = MAX_THREADS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._guard = threading.Lock()
        self._threads: set[object] = set()  # the threads alive
        self._idle: set[object] = set()  # those in accept() or about to be
        self._stopping = threading.Event()
        self._stop_requested = threading.Event()
        self._stopped = threading.Event()
        self._stopped.set()
        super().__init__(*args, **kwargs)

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Serve on the accepting threads until `shutdown()`; requests in hand are finished by
        their threads after this returns."""
        self._stopped.clear()
        self._stop_requested.clear()
        self._stopping.clear()
        try:
            for _ in range(self.accepting_threads):
                self._start_thread()
            while not self._stop_requested.wait(poll_interval):
                pass
        finally:
            self._stopping.set()
            self._wake_waiting()
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop `serve_forever()` and wait for it to return (from another thread)."""
        self._stop_requested.set()
        self._stopped.wait()

    def _start_thread(self) -> None:
        with self._guard:  # only when a thread starts, never on a request's way
            if len(self._threads) >= self.max_threads:
                return
            me = object()
            self._threads.add(me)
            self._idle.add(me)
        threading.Thread(
            target=self._accept_and_serve, args=(me,), daemon=True, name="http-conn"
        ).start()

    def _accept_and_serve(self, me: object) -> None:
        # Sets, not counters under a lock: a thread preempted while holding the lock would
        # hold up the whole burst behind it. Their races are harmless (a thread too many).
        try:
            while True:
                try:
                    connection, client_address = self.socket.accept()
                except OSError as error:
                    if self._stopping.is_set():
                        return
                    # Out of file descriptors, or a connection aborted before it was taken.
                    logger.warning("error=%s | could not accept a connection", error)
                    time.sleep(0.05)
                    continue
                if self._stopping.is_set():
                    connection.close()
                    return
                self._idle.discard(me)
                if not self._idle:
                    self._start_thread()
                self._serve(connection, client_address)
                if len(self._idle) >= self.accepting_threads or self._stopping.is_set():
                    return
                self._idle.add(me)
        finally:
            self._idle.discard(me)
            self._threads.discard(me)

    def _serve(self, connection: socket.socket, client_address: Any) -> None:
        """Read, answer and close one connection (what socketserver's threads do)."""
        status: int | None = None
        try:
            with ANSWERING.answering():  # from its arrival to its answer
                if self.verify_request(connection, client_address):
                    # typeshed types the handler's server as `Self`, which this class is.
                    handler = self.RequestHandlerClass(connection, client_address, self)  # type: ignore[arg-type]
                    status = getattr(handler, "answered", None)
        except Exception:
            self.handle_error(connection, client_address)
        finally:
            if status is not None and status < HTTPStatus.BAD_REQUEST and not _unread(connection):
                # Answered, its body read, nothing more sent: close at once (a click's thread
                # is back in accept() without waiting for the client to hang up).
                self.close_request(connection)
            else:
                self.shutdown_request(connection)

    def _wake_waiting(self) -> None:
        """Send each thread waiting in accept() a connection of its own, so it sees the stop
        and exits (closing the listening socket would not wake it on every platform)."""
        host, port = self.server_address[:2]
        address = ipaddress.ip_address(str(host))
        if address.is_unspecified:  # listening on every interface: knock on the loopback
            host = "::1" if address.version == 6 else "127.0.0.1"
        deadline = time.monotonic() + _WAKE_SECONDS
        while time.monotonic() < deadline:
            waiting = len(self._idle)
            if waiting <= 0:
                return
            for _ in range(waiting):
                try:
                    socket.create_connection((str(host), int(port)), timeout=0.5).close()
                except OSError:
                    return
            time.sleep(0.01)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A dropped or timed-out connection is one line in the log, not a traceback."""
        error = sys.exc_info()[1]
        client = client_address[0] if client_address else "?"
        if isinstance(error, OSError):
            logger.info("client=%s error=%s | connection closed", client, type(error).__name__)
            return
        logger.error("client=%s | request failed", client, exc_info=True)

    def shutdown_request(self, request: Any) -> None:
        """Close after a lingering drain: closing with unread request bytes (a refused body)
        would reset the connection and could lose the answer on its way to the client."""
        try:
            request.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        else:
            _drain(request)
        self.close_request(request)


def _unread(connection: socket.socket) -> bool:
    """Whether the client has sent bytes that were not read (looked at without waiting)."""
    try:
        connection.setblocking(False)
        return bool(connection.recv(1, socket.MSG_PEEK))
    except BlockingIOError:
        return False
    except OSError:
        return True  # not known: close with the lingering drain


def _drain(connection: socket.socket) -> None:
    deadline = time.monotonic() + _LINGER_SECONDS
    drained = 0
    try:
        while drained < _LINGER_BYTES:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            connection.settimeout(remaining)
            data = connection.recv(_DRAIN_CHUNK)
            if not data:
                return
            drained += len(data)
    except OSError:
        return


class QuietHandler(WSGIRequestHandler):
    # The answer is buffered and sent in one write when wsgiref flushes it, not one write per
    # header line: each write is a system call that lets other threads take the interpreter.
    wbufsize = -1

    def setup(self) -> None:
        super().setup()
        # Every read and write on the connection gives up after this long.
        self.connection.settimeout(getattr(self.server, "request_timeout", REQUEST_TIMEOUT_SECONDS))

    # The status of the answer, once given.
    answered: int | None = None

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Remember the answer's status (wsgiref and http.server report it here)."""
        try:
            self.answered = int(code)
        except ValueError:
            self.answered = None
        super().log_request(code, size)

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("request=%s | served", args[0] if args else "")
