"""Socket Mode for the stand-in: `apps.connections.open` hands out a WebSocket URL on the same
server; deliveries then travel over that connection as Slack sends them (`events_api`,
`interactive`, `slash_commands` envelopes) and wait for the app's acknowledgement.

A minimal RFC 6455 server: the opening handshake, text frames (unmasked from the server, masked
from the client), ping/pong and close.
"""

from __future__ import annotations

import base64
import hashlib
import json
import queue
import socket
import struct
import threading
import time
from typing import Any

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TEXT, CLOSE, PING, PONG = 0x1, 0x8, 0x9, 0xA
ACK_TIMEOUT_SECONDS = 10


def accept_key(key: str) -> str:
    """The Sec-WebSocket-Accept value for a client's Sec-WebSocket-Key."""
    return base64.b64encode(
        hashlib.sha1((key + GUID).encode(), usedforsecurity=False).digest()
    ).decode()


def frame(opcode: int, payload: bytes) -> bytes:
    """A server frame (FIN set, unmasked)."""
    size = len(payload)
    if size < 126:
        head = struct.pack(">BB", 0x80 | opcode, size)
    elif size < 1 << 16:
        head = struct.pack(">BBH", 0x80 | opcode, 126, size)
    else:
        head = struct.pack(">BBQ", 0x80 | opcode, 127, size)
    return head + payload


def _exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def read_frame(sock: socket.socket) -> tuple[int, bytes]:
    """One client frame: (opcode, unmasked payload)."""
    first, second = _exactly(sock, 2)
    size = second & 0x7F
    if size == 126:
        (size,) = struct.unpack(">H", _exactly(sock, 2))
    elif size == 127:
        (size,) = struct.unpack(">Q", _exactly(sock, 8))
    mask = _exactly(sock, 4) if second & 0x80 else b"\0\0\0\0"
    data = _exactly(sock, size)
    return first & 0x0F, bytes(b ^ mask[i % 4] for i, b in enumerate(data))


class SocketModeLink:
    """One app connection: sends envelopes, matches acknowledgements by envelope id."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.send_lock = threading.Lock()
        self.acks: dict[str, queue.Queue[dict[str, Any]]] = {}
        self.closed = threading.Event()

    def send_text(self, data: dict[str, Any]) -> None:
        """Send one JSON text frame."""
        with self.send_lock:
            self.sock.sendall(frame(TEXT, json.dumps(data).encode()))

    def deliver(
        self, kind: str, payload: dict[str, Any], envelope_id: str
    ) -> tuple[dict[str, Any] | None, float]:
        """Send an envelope and wait for its acknowledgement: (ack or None, seconds)."""
        waiting: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=1)
        self.acks[envelope_id] = waiting
        started = time.perf_counter()
        self.send_text(
            {
                "envelope_id": envelope_id,
                "type": kind,
                "payload": payload,
                "accepts_response_payload": kind != "events_api",
                "retry_attempt": 0,
                "retry_reason": "",
            }
        )
        try:
            ack = waiting.get(timeout=ACK_TIMEOUT_SECONDS)
        except queue.Empty:
            ack = None
        finally:
            self.acks.pop(envelope_id, None)
        return ack, time.perf_counter() - started

    def serve(self) -> None:
        """Read the client's frames until it closes: acks, pings, close."""
        try:
            while True:
                opcode, data = read_frame(self.sock)
                if opcode == PING:
                    with self.send_lock:
                        self.sock.sendall(frame(PONG, data))
                elif opcode == CLOSE:
                    with self.send_lock:
                        self.sock.sendall(frame(CLOSE, data[:2]))
                    return
                elif opcode == TEXT:
                    message = json.loads(data)
                    waiting = self.acks.get(str(message.get("envelope_id")))
                    if waiting is not None:
                        waiting.put(message)
        except (ConnectionError, OSError, ValueError):
            return
        finally:
            self.closed.set()
