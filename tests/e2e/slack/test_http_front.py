"""The HTTP front door against what Slack never sends: bodies too large to read, connections
that go silent, and malformed JSON — on the threaded server of `reconbot serve` and on gunicorn
with the shipped gunicorn.conf.py. Signature checking stays on throughout."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bot.slack.server import (
    EVENTS_PATH,
    MAX_BODY_BYTES,
    MAX_JSON_DEPTH,
    HttpServer,
    wsgi_app,
)
from bot.slack.threaded_server import REQUEST_TIMEOUT_SECONDS
from tests.standins.slack import SlackStandIn

from .conftest import ALICE, ROOT, BotProcess, RunningBot, bot_environment, free_port

GUNICORN = str(Path(sys.executable).with_name("gunicorn"))
BIG = 50 * 1024 * 1024
FORM = "application/x-www-form-urlencoded"
SECRET_MARKER = "do-not-log-this-body"


def _address(url: str) -> tuple[str, int]:
    parts = urllib.parse.urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 80


def _post_head(url: str, **headers: str) -> bytes:
    host, port = _address(url)
    lines = [f"POST {EVENTS_PATH} HTTP/1.1", f"Host: {host}:{port}", f"Content-Type: {FORM}"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _read_answer(sock: socket.socket, timeout: float) -> bytes:
    """One HTTP answer: its head and its Content-Length of body, or what came before the
    server closed the connection; b"" if nothing came within `timeout`."""
    sock.settimeout(timeout)
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
            head, separator, body = received.partition(b"\r\n\r\n")
            if separator:
                lengths = [
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ]
                if lengths and len(body) >= lengths[0]:
                    break
    except (ConnectionResetError, TimeoutError):
        pass
    return received


def _closed_within(sock: socket.socket, timeout: float) -> bool:
    """Whether the server closes the connection within `timeout` seconds, sending nothing."""
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0


def _assert_no_traceback(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    err = capfd.readouterr().err
    assert "Traceback" not in err, err
    assert not [record for record in caplog.records if record.exc_info], caplog.text
    assert SECRET_MARKER not in caplog.text + err


@dataclass
class Streamed:
    """A body streamed at the server while another thread reads its answer."""

    answer: bytes = b""
    answered_after_bytes: int | None = None
    sent: int = 0
    finished_sending: bool = False
    errors: list[str] = field(default_factory=list)


def _stream_body(url: str, total: int) -> Streamed:
    """POST `total` bytes with a Content-Length, reading the answer while still sending."""
    result = Streamed()
    sock = socket.create_connection(_address(url), timeout=30)
    first_byte = threading.Event()

    def read() -> None:
        received = b""
        try:
            while chunk := sock.recv(65536):
                if not received:
                    result.answered_after_bytes = result.sent
                    first_byte.set()
                received += chunk
        except OSError as error:
            result.errors.append(repr(error))
        result.answer = received
        first_byte.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    chunk = b"a" * 65536
    try:
        sock.sendall(_post_head(url, Content_Length=str(total)))
        while result.sent < total and not first_byte.is_set():
            sock.sendall(chunk)
            result.sent += len(chunk)
        result.finished_sending = result.sent >= total
    except OSError:
        pass  # the server closed the connection under the upload
    reader.join(timeout=30)
    sock.close()
    return result


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc")


# -- bodies too large --------------------------------------------------------------------


def test_a_body_over_the_limit_is_refused_before_it_is_read(
    bot: RunningBot, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    with socket.create_connection(_address(bot.events_url), timeout=5) as sock:
        # Declares 50 MB, sends a little of it, then waits: the answer must not wait for the rest.
        sock.sendall(_post_head(bot.events_url, Content_Length=str(BIG)))
        sock.sendall(SECRET_MARKER.encode() * 100)
        started = time.monotonic()
        answer = _read_answer(sock, timeout=5)
    assert _status(answer) == 413, answer[:200]
    assert time.monotonic() - started < 3
    assert any("status=413" in record.getMessage() for record in caplog.records)
    _assert_no_traceback(capfd, caplog)


def test_a_large_body_sent_in_full_is_answered_early_and_never_held_in_memory(
    standin: SlackStandIn, tmp_path: Path
) -> None:
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc to read the server's peak memory")
    env = bot_environment(standin, f"sqlite:///{tmp_path / 'bot.db'}", tmp_path)
    server = BotProcess(env, free_port())
    try:
        before = _peak_rss_kib(server.process.pid)
        streamed = _stream_body(server.events_url, BIG)
        grown_mib = (_peak_rss_kib(server.process.pid) - before) / 1024
    finally:
        server.stop()
    assert _status(streamed.answer) == 413, (streamed.answer[:200], streamed.errors)
    assert streamed.answered_after_bytes is not None and streamed.answered_after_bytes < BIG
    assert not streamed.finished_sending
    assert grown_mib < 16, f"the server's peak memory grew by {grown_mib:.0f} MiB"


def test_a_body_without_a_length_is_refused_by_the_threaded_server(bot: RunningBot) -> None:
    # The standard library's server does not decode chunked bodies: it says so, reading nothing.
    with socket.create_connection(_address(bot.events_url), timeout=5) as sock:
        sock.sendall(_post_head(bot.events_url, Transfer_Encoding="chunked") + b"5\r\nhello\r\n")
        assert _status(_read_answer(sock, timeout=5)) == 411


# -- silent connections ------------------------------------------------------------------


def test_a_silent_connection_is_closed_while_others_are_served(
    bot: RunningBot, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    assert bot.server.server.request_timeout == REQUEST_TIMEOUT_SECONDS == 10
    server = HttpServer(wsgi_app(bot.bot.app), host="127.0.0.1", port=0, timeout=1).start()
    try:
        url = server.url + EVENTS_PATH
        half_headers = socket.create_connection(_address(url), timeout=10)
        half_headers.sendall(b"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Le")
        half_body = socket.create_connection(_address(url), timeout=10)
        half_body.sendall(_post_head(url, Content_Length="100") + b"payload=")
        started = time.monotonic()

        with urllib.request.urlopen(server.url + "/healthz", timeout=2) as answer:
            assert answer.status == 200

        assert _closed_within(half_headers, timeout=8)
        assert time.monotonic() - started < 4
        assert _status(_read_answer(half_body, timeout=8)) == 408
        assert time.monotonic() - started < 4
        half_headers.close()
        half_body.close()
    finally:
        server.stop()
    _assert_no_traceback(capfd, caplog)


# -- malformed JSON ----------------------------------------------------------------------


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _nested_object(depth: int) -> str:
    """An object `depth` levels deep: {"deep": [[...]]}."""
    return '{"deep": ' + _deep(depth - 1) + "}"


def _form(payload: str) -> bytes:
    return urllib.parse.urlencode({"payload": payload}).encode()


MALFORMED = {
    "invalid JSON": (b'{"not json", ' + SECRET_MARKER.encode(), "application/json"),
    "JSON not an object": (b"[1, 2]", "application/json"),
    "JSON 100k deep": (_deep(100_000).encode(), "application/json"),
    "object of the wrong shape": (b'{"authorizations": "x"}', "application/json"),
    "invalid payload field": (_form('{"type": ' + SECRET_MARKER), FORM),
    "payload 100k deep": (_form(_deep(100_000)), FORM),
    "payload not an object": (_form("5"), FORM),
    "payload past the depth limit": (_form(_nested_object(MAX_JSON_DEPTH + 1)), FORM),
    "body not UTF-8": (b"payload=\xff\xfe" + SECRET_MARKER.encode(), FORM),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_json_signed_is_a_400_without_a_traceback(
    case: str,
    standin: SlackStandIn,
    bot: RunningBot,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    body, content_type = MALFORMED[case]
    assert len(body) <= MAX_BODY_BYTES
    delivered = standin.deliver(body, content_type)
    assert delivered.status == 400, delivered.body[:200]
    assert any("status=400" in record.getMessage() for record in caplog.records)
    _assert_no_traceback(capfd, caplog)


def test_well_formed_requests_still_reach_bolt_and_its_signature_check(
    standin: SlackStandIn, bot: RunningBot
) -> None:
    assert standin.open_home(ALICE).status == 200
    nested = _nested_object(MAX_JSON_DEPTH).encode()
    assert standin.deliver(nested, "application/json").status == 404  # Bolt: unhandled
    forged = standin.deliver(nested, "application/json", signature="v0=forged")
    assert forged.status == 401


# -- gunicorn with the shipped configuration ----------------------------------------------


def test_gunicorn_with_the_shipped_config_guards_the_app(
    standin: SlackStandIn, tmp_path: Path
) -> None:
    port = free_port()
    env = bot_environment(standin, f"sqlite:///{tmp_path / 'bot.db'}", tmp_path)
    log = tmp_path / "gunicorn.log"
    with log.open("wb") as output:
        server = subprocess.Popen(
            [GUNICORN, "-c", str(ROOT / "gunicorn.conf.py"), "--bind", f"127.0.0.1:{port}"],
            cwd=tmp_path,
            env={**os.environ, **env, "PYTHONPATH": str(ROOT)},
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=1) as ok:
                    assert ok.status == 200
                    break
            except OSError:
                assert server.poll() is None, log.read_text()
                assert time.monotonic() < deadline
                time.sleep(0.2)
        standin.app_url = base + EVENTS_PATH

        # A chunked body has no Content-Length: reading stops one byte past the limit.
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(_post_head(standin.app_url, Transfer_Encoding="chunked"))
            piece = b"a" * 65536
            chunk = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
            try:
                for _ in range(2 * MAX_BODY_BYTES // len(piece)):
                    sock.sendall(chunk)
                sock.sendall(b"0\r\n\r\n")
            except OSError:
                pass
            assert _status(_read_answer(sock, timeout=10)) == 413

        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(_post_head(standin.app_url, Content_Length=str(BIG)) + b"a" * 1000)
            assert _status(_read_answer(sock, timeout=5)) == 413

        assert standin.deliver(*MALFORMED["payload 100k deep"]).status == 400
        assert standin.deliver(*MALFORMED["invalid JSON"]).status == 400
        assert standin.open_home(ALICE).status == 200

        # The request limits are the config's, tighter than gunicorn's defaults.
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(f"GET /healthz?{'x' * 3000} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            assert _status(_read_answer(sock, timeout=5)) == 414
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            headers = "".join(f"X-Filler-{n}: 1\r\n" for n in range(60))
            sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: x\r\n{headers}\r\n".encode())
            assert _status(_read_answer(sock, timeout=5)) == 431
    finally:
        server.terminate()
        server.wait(timeout=60)
    output_text = log.read_text()
    assert "Traceback" not in output_text, output_text
    assert SECRET_MARKER not in output_text
