"""AWS event-stream framing, as `converse-stream` sends it (and botocore parses it).

A message is: total length (4 bytes), headers length (4), CRC32 of those 8 bytes (4), headers,
payload, CRC32 of everything before it (4). Headers here are strings (type 7).
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

STRING = 7


def _header(name: str, value: str) -> bytes:
    key, data = name.encode(), value.encode()
    return bytes([len(key)]) + key + bytes([STRING]) + struct.pack(">H", len(data)) + data


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message."""
    encoded = b"".join(_header(k, v) for k, v in headers.items())
    prelude = struct.pack(">II", 16 + len(encoded) + len(payload), len(encoded))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + encoded + payload
    return message + struct.pack(">I", zlib.crc32(message))


def event(kind: str, body: dict[str, Any]) -> bytes:
    """One Converse stream event (`messageStart`, `contentBlockDelta`, …) as a message."""
    return frame(
        {":event-type": kind, ":content-type": "application/json", ":message-type": "event"},
        json.dumps(body).encode(),
    )


def exception(kind: str, message: str) -> bytes:
    """An exception inside the stream (e.g. `throttlingException`)."""
    return frame(
        {
            ":exception-type": kind,
            ":content-type": "application/json",
            ":message-type": "exception",
        },
        json.dumps({"message": message}).encode(),
    )


def decode(data: bytes) -> list[tuple[dict[str, str], bytes]]:
    """Split a stream back into (headers, payload) pairs (for the stand-in's own tests)."""
    messages = []
    offset = 0
    while offset < len(data):
        total, header_length = struct.unpack_from(">II", data, offset)
        cursor = offset + 12
        end_headers = cursor + header_length
        headers = {}
        while cursor < end_headers:
            size = data[cursor]
            name = data[cursor + 1 : cursor + 1 + size].decode()
            cursor += 1 + size + 1
            (length,) = struct.unpack_from(">H", data, cursor)
            headers[name] = data[cursor + 2 : cursor + 2 + length].decode()
            cursor += 2 + length
        messages.append((headers, data[end_headers : offset + total - 4]))
        offset += total
    return messages
