"""How the stand-in talks to an app as Slack does: signed requests, interaction form bodies,
and what the app answered."""

from __future__ import annotations

import hashlib
import hmac
import json
import urllib.parse
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Delivery:
    """What the app answered to one delivery, and how long it took."""

    status: int
    body: bytes
    seconds: float

    def json(self) -> Any:
        """The answer as JSON (an `ack()` with a body)."""
        return json.loads(self.body) if self.body else None


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """Slack's request signature: `v0=` HMAC-SHA256 of `v0:{timestamp}:{body}`."""
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def form_body(payload: dict[str, Any]) -> bytes:
    """An interaction payload as Slack posts it: form-encoded, in the field `payload`."""
    return urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
