"""Who is in the local workspace, and its one channel."""

from __future__ import annotations

from dataclasses import dataclass

CHANNEL = "C0RECON"
CHANNEL_NAME = "month-end-close"


@dataclass(frozen=True)
class Person:
    """Someone the page lets you act as, with what they are for the bot (in words: who may
    approve is the bot's setting; `APPROVERS` is what the start command sets it to)."""

    id: str
    name: str
    role: str


PEOPLE = (
    Person("U0ALICE", "Alice", "requester"),
    Person("U0BOB", "Bob", "approver"),
    Person("U0DANA", "Dana", "approver"),
    Person("U0CAROL", "Carol", "not an approver"),
)
APPROVERS = tuple(p.id for p in PEOPLE if p.role == "approver")
