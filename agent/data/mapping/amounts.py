"""How amounts are read: number format, major or minor units, and a person's answers about them.

A column's decimal mark and thousands separator come from its sampled values (its profile); a
header saying `cents`/`minor` reads it in minor units. Where values alone cannot tell major
from minor units, matched amounts decide: when one file's amounts are 100 (or 1000, by the
currency's exponent) times the other's for the same orders, that file is in minor units.
"""

from __future__ import annotations

import statistics
from typing import cast

from agent.data.currency import CURRENCY_EXPONENTS
from agent.data.formats import NumberFormat
from agent.data.mapping.columns import SampleColumns
from agent.data.mapping.headers import normalize_header
from agent.data.mapping.proposal import DatasetProposal
from agent.data.mapping.wording import ProposalCode
from agent.data.notes import note
from agent.data.profile import ColumnProfile
from agent.data.schema import SCHEMA, AmountReading, Role
from agent.errors import MappingError

_MINOR_WORDS = frozenset({"cents", "minor", "pence", "cent"})
_DECIMAL_WORDS = {".": ".", "dot": ".", "point": ".", "period": ".", ",": ",", "comma": ","}
_THOUSANDS_WORDS = {
    "": "",
    "none": "",
    "no": "",
    ",": ",",
    "comma": ",",
    ".": ".",
    "dot": ".",
    "point": ".",
    "period": ".",
    "'": "'",
    "apostrophe": "'",
    "space": " ",
}


def amount_reading(column: str, profile: ColumnProfile) -> AmountReading | None:
    """How to read an amount column, from its values' number format and its header's unit."""
    if profile.number_format is None:
        return None
    header = normalize_header(column).split()
    minor = bool(_MINOR_WORDS & set(header))
    return AmountReading(
        decimal=profile.number_format.decimal,
        thousands=profile.number_format.thousands,
        unit="minor" if minor else "major",
    )


def amount_answers(role: Role, answers: dict[str, str]) -> dict[str, dict[str, str]]:
    """The amount parts a person answered, per amount field of `role` (field -> part -> text)."""
    fields = [s.name for s in SCHEMA[role] if s.kind == "amount"]
    found: dict[str, dict[str, str]] = {}
    for part in ("decimal", "thousands", "unit"):
        for name in fields:
            value = answers.get(f"{name}_{part}", answers.get(part))
            if value is not None:
                found.setdefault(name, {})[part] = value
    return found


def answered_amounts(
    role: Role,
    amounts: dict[str, AmountReading],
    columns: dict[str, str],
    answers: dict[str, str],
) -> dict[str, AmountReading]:
    """`amounts` with a person's separators and unit applied to each mapped amount field.

    Raises MappingError, in words, for a value that cannot work.
    """
    amounts = dict(amounts)
    for name, parts in amount_answers(role, answers).items():
        base = amounts.get(name, AmountReading())
        reading = base.model_copy(update=_answered_parts(parts))
        if reading.decimal == reading.thousands:
            raise MappingError(
                f'{name}: the decimal mark and the thousands separator are both "{reading.decimal}"'
            )
        if name in columns or name in amounts:
            amounts[name] = AmountReading.model_validate(reading.model_dump())
    return amounts


def _answered_parts(parts: dict[str, str]) -> dict[str, str]:
    """The decimal mark, thousands separator and unit a person typed, as readings hold them."""
    update: dict[str, str] = {}
    if "decimal" in parts:
        mark = _DECIMAL_WORDS.get(parts["decimal"].strip().lower())
        if mark is None:
            raise MappingError(f'decimal is . or , (or dot, comma), not "{parts["decimal"]}"')
        update["decimal"] = mark
    if "thousands" in parts:
        text = parts["thousands"]
        sep = _THOUSANDS_WORDS.get(text.strip().lower() if text.strip() else text)
        if sep is None:
            raise MappingError(f'thousands is none, comma, dot, apostrophe or space, not "{text}"')
        update["thousands"] = sep
    if "unit" in parts:
        unit = parts["unit"].strip().lower()
        if unit not in ("major", "minor"):
            raise MappingError(f'unit is major or minor, not "{parts["unit"]}"')
        update["unit"] = unit
    return update


def decide_units(
    datasets: dict[Role, DatasetProposal],
    samples: dict[Role, SampleColumns],
    answers: dict[Role, dict[str, str]],
) -> None:
    """Decide major or minor units where values alone cannot: compare matched amounts.

    `samples` are the two sampled files, read by column. A unit a person answered stays as
    answered.
    """
    orders, payments = datasets[Role.ORDERS], datasets[Role.PAYMENTS]
    order_amounts, pay_amounts, exponents = matched_amounts(orders, payments, samples)
    if len(order_amounts) < 5:
        return
    for side, proposal, field in (
        (0, orders, "order_amount"),
        (1, payments, "captured_amount"),
    ):
        reading = proposal.options.amounts.get(field)
        column = proposal.column_of(field)
        answered = amount_answers(proposal.role, answers.get(proposal.role, {}))
        if reading is None or reading.unit == "minor" or column is None:
            continue
        if "unit" in answered.get(field, {}):
            continue
        mine, theirs = (order_amounts, pay_amounts) if side == 0 else (pay_amounts, order_amounts)
        ratios = _ratios(mine, theirs, exponents)
        if ratios and 0.95 <= statistics.median(ratios) <= 1.05:
            new_amounts = dict(proposal.options.amounts)
            new_amounts[field] = reading.model_copy(update={"unit": "minor"})
            if field == "captured_amount" and "refunded_amount" in new_amounts:
                new_amounts["refunded_amount"] = new_amounts["refunded_amount"].model_copy(
                    update={"unit": "minor"}
                )
            updated = proposal.model_copy(
                update={
                    "options": proposal.options.model_copy(update={"amounts": new_amounts}),
                    "notes": [*proposal.notes, note(ProposalCode.MINOR_UNITS, column=column)],
                }
            )
            datasets[proposal.role] = updated


def matched_amounts(
    orders: DatasetProposal, payments: DatasetProposal, samples: dict[Role, SampleColumns]
) -> tuple[list[float], list[float], list[int]]:
    """The order amounts, payment amounts and currency exponents of the sampled payment rows
    that match an order by key (three lists, a row each)."""
    columns = {
        "key": orders.column_of("order_id"),
        "amount": orders.column_of("order_amount"),
        "ccy": orders.column_of("currency"),
        "ref": payments.column_of("order_id"),
        "paid": payments.column_of("captured_amount"),
    }
    o_reading = orders.options.amounts.get("order_amount")
    p_reading = payments.options.amounts.get("captured_amount")
    if None in columns.values() or o_reading is None or p_reading is None:
        return [], [], []
    o_fmt = NumberFormat(o_reading.decimal, o_reading.thousands)
    p_fmt = NumberFormat(p_reading.decimal, p_reading.thousands)
    o_sample, p_sample = samples[Role.ORDERS], samples[Role.PAYMENTS]
    key = ("matched_amounts", p_sample, *columns.values(), o_fmt, p_fmt)
    found = o_sample.derived.get(key)
    if found is None:  # the same columns, read the same way, match the same rows
        found = o_sample.derived[key] = _matched(o_sample, p_sample, columns, o_fmt, p_fmt)
    return cast(tuple[list[float], list[float], list[int]], found)


def _matched(
    o_sample: SampleColumns,
    p_sample: SampleColumns,
    columns: dict[str, str | None],
    o_fmt: NumberFormat,
    p_fmt: NumberFormat,
) -> tuple[list[float], list[float], list[int]]:
    """`matched_amounts` worked out."""
    totals = o_sample.amounts(str(columns["amount"]), o_fmt)
    currencies = o_sample.values(str(columns["ccy"]))
    exponents = {v: CURRENCY_EXPONENTS.get(v.strip().upper()) for v in set(currencies)}
    # Per order key, its first readable nonzero total and its currency's exponent (two flat
    # maps, not a pair per order: fewer objects for the garbage collector to follow).
    by_key: dict[str, float] = {}
    exponent_of: dict[str, int] = {}
    for key, total, currency in zip(
        o_sample.keys(str(columns["key"])), totals, currencies, strict=True
    ):
        exponent = exponents[currency]
        if total is not None and total != 0 and exponent is not None and key not in by_key:
            by_key[key] = float(total)
            exponent_of[key] = exponent
    references = p_sample.values(str(columns["ref"]))
    one = p_sample.references(str(columns["ref"])).one  # the references naming one order
    amounts = p_sample.amounts(str(columns["paid"]), p_fmt)
    matched: tuple[list[float], list[float], list[int]] = ([], [], [])
    for reference, paid in zip(references, amounts, strict=True):
        named = one.get(reference)
        if named is not None and named in by_key and paid:
            matched[0].append(by_key[named])
            matched[1].append(float(paid))
            matched[2].append(exponent_of[named])
    return matched


def _ratios(mine: list[float], theirs: list[float], exponents: list[int]) -> list[float]:
    """Each matched amount over the other file's, in the currency's minor units (the pairs
    whose other amount and exponent are nonzero)."""
    powers = {exponent: 10**exponent for exponent in set(exponents)}
    return [
        float(m / t) / powers[e] for m, t, e in zip(mine, theirs, exponents, strict=True) if t and e
    ]
