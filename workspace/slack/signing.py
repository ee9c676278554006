"""How the stand-in talks to an app as Slack does: signed requests, interaction form bodies,
and what the app answered."""

from __future__ import annotations

import hashlib
import hmac
import json
import urllib.parse
from dataclasses import dataclass
from typing import Any

from slack_sdk.signature import SignatureVerifier


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
    """Slack's request signature (`v0=` HMAC-SHA256 of `v0:{timestamp}:{body}`), as slack_sdk's
    `SignatureVerifier` makes it; a body that is not UTF-8 goes to `_sign_bytes`."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return _sign_bytes(secret, timestamp, body)
    signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=text)
    assert signature is not None  # None only without a timestamp
    return signature


def _sign_bytes(secret: str, timestamp: str, body: bytes) -> str:
    """The same signature over raw bytes. Kept by hand: slack_sdk decodes the body as UTF-8
    first, and the stand-in also signs malformed bodies (Slack itself sends only UTF-8)."""
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def form_body(payload: dict[str, Any]) -> bytes:
    """An interaction payload as Slack posts it: form-encoded, in the field `payload`."""
    return urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
