"""A proposed change to a policy as a person types it, in Slack or a terminal: `KEY=VALUE`."""

from __future__ import annotations

from agent.errors import CommandLineError


def parse_changes(words: list[str]) -> dict[str, str]:
    """`KEY=VALUE` words as rule -> value; raises CommandLineError for a word without `=`."""
    changes = {}
    for word in words:
        key, equals, value = word.partition("=")
        if not equals or not key.strip():
            raise CommandLineError(f"{word!r} is not KEY=VALUE, e.g. window_days_after=7")
        changes[key.strip()] = value
    return changes
