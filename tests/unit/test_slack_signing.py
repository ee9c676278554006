"""The Slack stand-in signs requests as Slack does, with slack_sdk's `SignatureVerifier`."""

from __future__ import annotations

import hashlib
import hmac

from slack_sdk.signature import Clock, SignatureVerifier

from workspace.slack.signing import sign

# Slack's own worked example ("Verifying requests from Slack").
SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
STAMP = "1531420618"
BODY = (
    b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id="
    b"G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-"
    b"collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700"
    b"885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2"
    b"c447fce8b6703c"
)
SIGNATURE = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"


class _At(Clock):
    def __init__(self, now: float) -> None:
        self._now = now

    def now(self) -> float:
        return self._now


def test_the_stand_in_signs_slacks_example_as_slack_does() -> None:
    assert sign(SECRET, STAMP, BODY) == SIGNATURE
    verifier = SignatureVerifier(SECRET, clock=_At(float(STAMP)))
    assert verifier.is_valid(body=BODY, timestamp=STAMP, signature=sign(SECRET, STAMP, BODY))
    assert not verifier.is_valid(body=BODY, timestamp=STAMP, signature=sign("x", STAMP, BODY))


def test_a_body_that_is_not_utf8_is_signed_over_its_bytes() -> None:
    body = b"payload=\xff\xfe"
    expected = hmac.new(SECRET.encode(), b"v0:" + STAMP.encode() + b":" + body, hashlib.sha256)
    assert sign(SECRET, STAMP, body) == "v0=" + expected.hexdigest()
