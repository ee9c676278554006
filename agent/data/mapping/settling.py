"""How the other file settles a reading the values alone leave in doubt (a decimal mark, a
day/month order): the reading under which the same orders agree across the two files (almost)
always, where under the other they (almost) never do."""

from __future__ import annotations

from typing import TypeVar

MIN_MATCHED = 5
"""Matched orders a comparison needs before it may settle anything."""
_AGREES = 0.8
_DISAGREES = 0.2

Reading = TypeVar("Reading")


def the_one_that_agrees(shares: dict[Reading, float | None]) -> Reading | None:
    """Of two readings and the share of matched orders on which each agrees with the other
    file (None: too few matched), the one that agrees while the other does not; else None."""
    known = {reading: share for reading, share in shares.items() if share is not None}
    if len(known) != 2:
        return None
    agreeing = [reading for reading, share in known.items() if share >= _AGREES]
    disagreeing = [reading for reading, share in known.items() if share <= _DISAGREES]
    if len(agreeing) == 1 and len(disagreeing) == 1:
        return agreeing[0]
    return None
