"""The sampled files as inference reads them: by column, each column and reading once.

Inference reads the same columns in several steps (profiles, key overlap, amount agreement,
major or minor units, the currency of a file without a currency column). `SampleColumns`
keeps, for one file and one inference, each column's values, its amounts under a number format,
its references and its keys, so no step reads a column again.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from agent.data.formats import NumberFormat, parse_numbers
from agent.data.ingest import CsvSample
from agent.data.mapping.references import References, read_references
from agent.data.profile import normalize_keys, read_amounts, references_of, transpose


class SampleColumns:
    """One sampled file read by column: each column, and each reading of it, computed once.

    Inference reads the same columns in several steps (profiles, key overlap, amount agreement,
    major or minor units); one `SampleColumns` per file and inference keeps what was read for
    those steps. It lives as long as the inference that made it: a file read again is read
    afresh.
    """

    def __init__(self, sample: CsvSample) -> None:
        self.sample = sample
        self._columns: list[Sequence[str]] | None = None
        self._distinct: dict[str, set[str]] = {}
        self._amounts: dict[tuple[str, NumberFormat | None], list[Decimal | None]] = {}
        self._numbers: dict[NumberFormat, dict[str, Decimal | None]] = {}
        self._tokens: dict[str, dict[str, list[str]]] = {}
        self._keys: dict[str, list[str]] = {}
        self._references: dict[str, References] = {}
        self._normals: dict[str, dict[str, str]] = {}
        self.derived: dict[tuple[object, ...], object] = {}
        """What pure functions of this sample (and the objects named in the key) worked out,
        by the function's name and its arguments: an edit's inference reads it back."""

    def by_column(self) -> list[Sequence[str]]:
        """The sampled values of every column, in header order (each column in row order)."""
        if self._columns is None:
            self._columns = transpose(self.sample)
        return self._columns

    def values(self, column: str) -> Sequence[str]:
        """The sampled values of `column`, in row order (as `column_values` reads them)."""
        return self.by_column()[self.sample.layout.columns.index(column)]

    def distinct(self, column: str) -> set[str]:
        """The distinct sampled values of `column` (`set` of its values, built once)."""
        if column not in self._distinct:
            self._distinct[column] = set(self.values(column))
        return self._distinct[column]

    def amounts(self, column: str, fmt: NumberFormat | None) -> list[Decimal | None]:
        """The values of `column` read as numbers under `fmt` (as `read_amounts` reads them)."""
        key = (column, fmt)
        if key not in self._amounts:
            if fmt is None:
                self._amounts[key] = read_amounts(self.values(column), fmt)
            else:
                # Each distinct value read once under `fmt`, whichever column it was seen in.
                read = self._numbers.setdefault(fmt, {})
                unread = self.distinct(column).difference(read)
                if unread:
                    read.update(parse_numbers(unread, fmt))
                self._amounts[key] = list(map(read.__getitem__, self.values(column)))
        return self._amounts[key]

    def tokens(self, column: str) -> dict[str, list[str]]:
        """Each distinct value of `column` -> the order ids it names (`reference_tokens`)."""
        if column not in self._tokens:
            self._tokens[column] = references_of(self.values(column))
        return self._tokens[column]

    def references(self, column: str) -> References:
        """The order ids each distinct value of `column` names (`read_references`)."""
        if column not in self._references:
            self._references[column] = read_references(self.distinct(column))
        return self._references[column]

    def keys(self, column: str) -> list[str]:
        """The values of `column` as order ids are compared (`normalize_key`), in row order."""
        if column not in self._keys:
            self._keys[column] = list(map(self._normal(column).__getitem__, self.values(column)))
        return self._keys[column]

    def key_set(self, column: str) -> set[str]:
        """The distinct values of `column` as order ids are compared (`normalize_key`)."""
        return set(self._normal(column).values())

    def _normal(self, column: str) -> dict[str, str]:
        """Each distinct value of `column` -> its `normalize_key`, each read once."""
        if column not in self._normals:
            distinct = list(self.distinct(column))
            self._normals[column] = dict(zip(distinct, normalize_keys(distinct), strict=True))
        return self._normals[column]
