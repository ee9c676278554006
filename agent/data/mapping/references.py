"""The order ids a reference column names, read for a whole column at once.

Key overlap compares each candidate reference column with the other file's keys, and amount
agreement follows each payment to the order it names. Both read a column's distinct values
once (`read_references`): a value holding no digit names no order; a value of one part (no
separator of `profile.REF_SPLIT`) names itself, less one leading `#`; only a value of several
parts is searched part by part (`profile.REF_TOKEN`). The ids are kept as text, never as a list
per value, so a column of twenty thousand references costs a few passes over it.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from itertools import compress, repeat

from agent.data.profile import REF_SPLIT, REF_TOKEN, references_of

_DIGIT = re.compile(r"\d")
# A part (between spaces) that starts with `#`: the rest of it.
_HASHED = re.compile(r"(?<!\S)#(\S*)")
# The separators of `REF_SPLIT` other than spaces.
_MARKS = ",;|/&+"
# Between the ids of a value naming several: a separator, so never part of an id.
IDS_SEPARATOR = "\n"


@dataclass(frozen=True)
class References:
    """The order ids the distinct values of a column name, as `reference_tokens` reads them.

    `one` maps each value naming exactly one order id to it; `many` maps each value naming
    several to them, in order, joined by `IDS_SEPARATOR`. A value naming none is in neither.
    """

    one: dict[str, str]
    many: dict[str, str]


def read_references(values: Iterable[str]) -> References:
    """The order ids each distinct value of `values` names (`reference_tokens`, in bulk).

    A part names an id when it holds a digit, so a value holding none names nothing; a value
    with no separator is its only part, read as its id (less one leading `#`); only the values
    with a separator are searched for their parts.
    """
    named = list(filter(_DIGIT.search, _distinct(values)))
    # A separator in no value is in none of them together: the values are not searched.
    parted = list(filter(REF_SPLIT.search, named)) if REF_SPLIT.search("".join(named)) else []
    whole = set(named).difference(parted) if parted else named
    one = {value: value[1:] if value[:1] == "#" else value for value in whole}
    many: dict[str, str] = {}
    for value in parted:
        ids = REF_TOKEN.findall(value)  # one at least: the part holding the digit
        if len(ids) > 1:
            ids = list(dict.fromkeys(ids))
        if len(ids) == 1:
            one[value] = ids[0]
        else:
            many[value] = IDS_SEPARATOR.join(ids)
    return References(one, many)


def _distinct(values: Iterable[str]) -> AbstractSet[str]:
    """The distinct `values`: a set as it is (so it is iterated as built), else `set(values)`."""
    return values if isinstance(values, AbstractSet) else set(values)


def possible_ids(values: Iterable[str]) -> set[str]:
    """Every text an order id named by one of `values` could be: a superset of their ids.

    Each part of each value (the text between the separators of `REF_SPLIT`), and each part
    less its leading `#`, found with string methods alone (`str.split` splits on the spaces
    `\\s` matches): keys that meet none of these meet no reference, without reading the ids of
    each value. Inference asks `may_name` instead; this is the plain rule it is checked against.
    """
    text = _spaced(values)
    parts = set(text.split())
    if "#" in text:  # each part less its leading `#`: what follows a `#` that starts a part
        parts.update(_HASHED.findall(text))
    return parts


def may_name(values: Iterable[str], keys: AbstractSet[str]) -> bool:
    """Whether one of `keys` is among `possible_ids(values)`, without the set of every part.

    The parts are looked up in `keys` as they come, and the first found ends it; the parts
    less their `#` are read only when no part itself is a key.
    """
    text = _spaced(values)
    if not keys.isdisjoint(text.split()):
        return True
    return "#" in text and not keys.isdisjoint(_HASHED.findall(text))


def _spaced(values: Iterable[str]) -> str:
    """The distinct `values` in one text, their separators (`REF_SPLIT`) all spaces."""
    text = " ".join(_distinct(values))
    for mark in _MARKS:
        text = text.replace(mark, " ")
    return text


@dataclass(frozen=True)
class _References:
    """The order ids a reference column names, counted once per distinct reference.

    `single` counts, per order id, the references naming only it; the references naming
    several are `multi` (their ids joined by `IDS_SEPARATOR`) with their counts `multi_counts`;
    `total` counts every reference naming one at least.
    """

    total: int
    single: dict[str, int]
    multi: list[str] = field(default_factory=list)
    multi_counts: list[int] = field(default_factory=list)

    @classmethod
    def of(cls, values: Sequence[str], limit: int, known: References | None = None) -> _References:
        """The references of `values`, the first `limit` distinct ones that name an order id.

        `known` holds the ids of each value (`read_references`) when they were read already.
        """
        counts = Counter(values)
        if len(counts) > limit:  # the limit may cut: read the values one by one, in order
            return cls._first(counts, limit, references_of(counts))
        found = known if known is not None else read_references(counts)
        # No cut: each row's reference counted at once (the id of the ones naming one id).
        single = Counter(filter(None, map(found.one.get, values)))  # an id is never empty
        multi_counts = list(map(counts.__getitem__, found.many))
        total = single.total() + sum(multi_counts)
        return cls(total, dict(single), list(found.many.values()), multi_counts)

    @classmethod
    def _first(
        cls, counts: Counter[str], limit: int, found: Mapping[str, list[str]]
    ) -> _References:
        """The references of `counts`, the first `limit` distinct ones that name an order id."""
        single: dict[str, int] = {}
        multi: list[str] = []
        multi_counts: list[int] = []
        total = read = 0
        for value, count in counts.items():
            tokens = found[value]
            if not tokens:
                continue
            if len(tokens) == 1:
                single[tokens[0]] = single.get(tokens[0], 0) + count
            else:
                multi.append(IDS_SEPARATOR.join(tokens))
                multi_counts.append(count)
            total += count
            read += 1
            if read == limit:
                break
        return cls(total, single, multi, multi_counts)

    def share_in(self, keys: set[str]) -> float:
        """The share of references naming an order id among `keys`."""
        if not self.total:
            return 0.0
        hits = sum(map(self.single.__getitem__, keys.intersection(self.single)))
        if self.multi and not keys.isdisjoint(self.multi_ids):
            # The references naming several: all of them but those naming no key.
            ids = map(str.split, self.multi, repeat(IDS_SEPARATOR))
            missed = sum(compress(self.multi_counts, map(keys.isdisjoint, ids)))
            hits += sum(self.multi_counts) - missed
        return hits / self.total

    @functools.cached_property
    def multi_ids(self) -> set[str]:
        """Every order id the references naming several name (none among keys: no hit)."""
        return set(IDS_SEPARATOR.join(self.multi).split(IDS_SEPARATOR))
