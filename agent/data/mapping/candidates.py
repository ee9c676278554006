"""Column candidates: which columns of a file could feed each canonical field, and how likely.

A column is scored from its header (`headers.header_score`) or, for exports whose headers name
nothing known, from its values alone, and weighted by how well its values fit the field's kind
(numbers, currency codes, timestamps, identifiers). Order-key candidates are then raised or
lowered by how often their values meet across the two files. Inference works from headers and
values, never from a vendor's name or a column position.

Comparing values across files is bounded (see `bounds`): the best `COMPARED_CANDIDATES` of each
side are compared, each distinct value once, the first `OVERLAP_VALUES` of them in all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agent.data.mapping.bounds import COMPARED_CANDIDATES, OVERLAP_VALUES, Budget
from agent.data.mapping.columns import SampleColumns
from agent.data.mapping.headers import header_score, normalize_header
from agent.data.mapping.references import _References, may_name
from agent.data.profile import LETTER_CODE, ColumnProfile
from agent.data.schema import FieldSpec, Role
from agent.data.vocabulary import BUILTIN

MIN_SCORE = 0.5
_FEW = 5  # sampled values below which uniqueness says nothing
# A value-only candidate that is the only one of its kind in the file is likely enough.
_ONLY_ONE = {
    "its values are amounts": "the only column whose values are amounts",
    "its values are timestamps": "the only column whose values are timestamps",
}


@dataclass
class Scored:
    """A column that could feed a field, its score so far, and why (reasons accumulate)."""

    column: str
    score: float
    reason: str
    # How often the column equals the other file's amounts for the same order (0..1), or -1
    # where that was not measured.
    agreement: float = -1.0
    # For a key: the share of its sampled references that name an id of the other file (0..1),
    # or -1 where that was not measured (`apply_key_overlap`).
    overlap: float = -1.0


FieldCandidates = dict[str, list[Scored]]


def kind_fit(spec: FieldSpec, profile: ColumnProfile) -> float:
    """How well the values fit the field's kind, from 0 (cannot be it) to 1.

    A column that fits 0 is never a candidate, nor offered as a choice in a question: only
    columns whose values can be the field are (`ambiguity`).
    """
    if profile.filled == 0:
        return 0.0
    if spec.kind == "amount":
        return 1.0 if profile.is_numeric() and profile.boolean_share < 0.9 else 0.0
    if spec.kind == "currency":
        # A column mostly of ISO codes is the currency column: the few values that do not read
        # are reported with their rows, not a reason to ask which currency the file is in.
        return min(1.0, profile.currency_share / 0.9) if profile.currency_share >= 0.5 else 0.0
    if spec.kind == "timestamp":
        return 1.0 if profile.timestamp_share >= 0.9 else 0.0
    if spec.kind in ("id", "reference") and _names_nothing(profile):
        return 0.0
    if spec.kind == "id":
        return min(1.0, max(profile.id_like_share, _codes(profile)) / 0.9)
    if spec.kind == "reference":
        return min(1.0, max(profile.reference_share / 0.8, _codes(profile) / 0.9))
    if spec.kind == "status":
        return 1.0 if not profile.is_numeric() and profile.distinct <= 50 else 0.4
    return 1.0


def _codes(profile: ColumnProfile) -> float:
    """The share of a column's values that are ids of capital letters only (`GWCOYZKHK`), when
    they tell the rows apart as ids do (`SALE`, `RETURN` repeat: kinds, not ids)."""
    return profile.letter_code_share if profile.distinct_share >= 0.8 else 0.0


def _letter_codes(values: Iterable[str]) -> bool:
    """Whether most of a column's distinct values are codes of capital letters (`GWCOYZKHK`)."""
    distinct = [v for v in values if v.strip()]
    codes = sum(1 for v in distinct if LETTER_CODE.match(v))
    return bool(distinct) and codes >= 0.8 * len(distinct)


def _names_nothing(profile: ColumnProfile) -> bool:
    """Whether a column's values cannot tell orders or payments apart: one value on most rows
    (a payout reference, a quantity), one value on every row, dates (a date is id-like text,
    `2025-10-20`, but a day names no single order or payment) or money (`-$1.79`, `30.48`: its
    digits name nothing; an id a spreadsheet rewrote, `1042.0`, has one decimal)."""
    if profile.filled >= _FEW and profile.distinct_share < 0.2:
        return True
    if profile.filled > 1 and profile.distinct <= 1:
        return True
    # Mostly numbers with cents, beside a filler such as `--` on the other rows (`1002, 1004`,
    # two references, reads as a number of four decimals).
    money = profile.number_format is not None and profile.numeric_share >= 0.5
    return (money and profile.decimals == 2) or profile.timestamp_share >= 0.9


def _status_words(spec: FieldSpec, profile: ColumnProfile) -> bool:
    """Whether the sampled values of a column whose header says nothing against the field
    (`Fulfillment Status`) are all words the vocabulary reads as the field's statuses: a
    `state` or `Bestellstatus` column is found by what it holds."""
    if set(normalize_header(profile.name).split()) & spec.against or profile.is_numeric():
        return False
    values = [v for v in profile.samples if v.strip()]
    read = BUILTIN.order_meaning if spec.name == "order_status" else BUILTIN.payment_meaning
    return bool(values) and all(read(v) is not None for v in values)


def _value_only_score(spec: FieldSpec, profile: ColumnProfile) -> tuple[float, str]:
    """A score from values alone, for exports whose headers name nothing we know."""
    if spec.kind == "currency" and profile.currency_share >= 0.9:
        return 0.7, "its values are ISO 4217 currency codes"
    if spec.kind == "id" and profile.id_like_share >= 0.9 and profile.distinct_share >= 0.5:
        return 0.3, "its values look like identifiers"
    # A statement's title names its order on the sales only (`Payment for Order #3611204518`),
    # not on the fee rows between them: a third is enough to be compared with the other file.
    if spec.kind == "reference" and profile.reference_share >= 0.3:
        return 0.3, "its values contain identifiers"
    if spec.kind == "timestamp" and profile.timestamp_share >= 0.9:
        return 0.45, "its values are timestamps"
    if spec.kind == "status" and _status_words(spec, profile):
        return 0.5, "its values are status words"
    if (
        spec.kind == "amount"
        and spec.required
        and profile.is_numeric()
        and not (profile.integer_only and profile.distinct_share > 0.98)
    ):
        return 0.45, "its values are amounts"
    return 0.0, ""


def score_columns(spec: FieldSpec, profiles: list[ColumnProfile]) -> list[Scored]:
    """The columns that could feed `spec`, best first, each scored by its header or its values.

    A column whose values cannot be the field's kind is left out; a value-only candidate that
    is the only one of its kind in the file is raised to likely enough.
    """
    found: list[Scored] = []
    for profile in profiles:
        fit = kind_fit(spec, profile)
        if fit == 0.0:
            continue
        by_header = header_score(spec, profile.name)
        by_values, why = _value_only_score(spec, profile)
        if by_header >= by_values and by_header > 0:
            found.append(Scored(profile.name, by_header * fit, "the header names it"))
        elif by_values > 0:
            found.append(Scored(profile.name, by_values * fit, why))
    found.sort(key=lambda c: -c.score)
    if len(found) == 1 and found[0].reason in _ONLY_ONE:
        found[0].score = 0.6
        found[0].reason = _ONLY_ONE[found[0].reason]
    return found


def apply_key_overlap(
    scored: dict[Role, FieldCandidates], columns: dict[Role, SampleColumns], budget: Budget
) -> None:
    """Raise key candidates whose values meet across the files; lower those that never do.

    `columns` are the two sampled files, read by column.

    The best `COMPARED_CANDIDATES` of each side are compared (the others keep their scores).
    Each distinct reference is read once and counted as often as it occurs; the compared
    reference columns share `OVERLAP_VALUES` distinct references (each its first ones), so only
    a file both long and wide compares a sample. A spent budget leaves every score as it was.
    """
    order_keys = scored[Role.ORDERS]["order_id"][:COMPARED_CANDIDATES]
    refs = scored[Role.PAYMENTS]["order_id"][:COMPARED_CANDIDATES]
    if not order_keys or not refs:
        return
    orders, payments = columns[Role.ORDERS], columns[Role.PAYMENTS]
    key_sets = {c.column: orders.key_set(c.column) for c in order_keys}
    per_column = OVERLAP_VALUES // len(refs)
    references: dict[str, _References | None] = {}
    every_key = (
        set().union(*key_sets.values()) if len(key_sets) > 1 else key_sets[order_keys[0].column]
    )
    for c in refs:
        values = payments.values(c.column)
        if may_name(payments.distinct(c.column), every_key):  # some part of a value is a key
            references[c.column] = _References.of(values, per_column, payments.references(c.column))
        else:  # no part of any value is a key: no reference names one, each share is 0
            references[c.column] = None
    overlap: dict[tuple[str, str], float] = {}
    # References that are codes of letters (`GWCOYZKHK`) name no id by their parts: they are
    # compared whole, as the engine compares a reference of one part.
    whole = {
        c.column: payments.key_set(c.column)
        for c in refs
        if _letter_codes(payments.distinct(c.column))
    }
    for key_column, keys in key_sets.items():
        if budget.exhausted():
            return
        for ref_column, named in references.items():
            share = 0.0 if named is None else named.share_in(keys)
            if whole.get(ref_column):
                share = max(share, len(whole[ref_column] & keys) / len(whole[ref_column]))
            overlap[(key_column, ref_column)] = share
    best_any = max(overlap.values())
    for group, position in ((order_keys, 0), (refs, 1)):
        for candidate in group:
            mine = max(v for k, v in overlap.items() if k[position] == candidate.column)
            candidate.overlap = mine
            if mine >= 0.05:
                candidate.score += 0.4 * mine
                candidate.reason += f"; {mine:.0%} of sampled references match the other file"
            elif best_any >= 0.3:
                candidate.score *= 0.5
                candidate.reason += "; its values never match the other file"
    for role in Role:
        scored[role]["order_id"].sort(key=lambda c: -c.score)
