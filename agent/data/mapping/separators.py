"""Amounts whose values read two ways: `250.000` is 250 with a decimal point and 250000 with a
thousands dot, and a column of such values cannot say which (a shop selling in thousands of
VND, three-decimal KWD in a semicolon file).

The other file decides when its amounts are not in doubt: the reading under which the same
orders' amounts agree is taken. Otherwise the person is asked for the decimal mark; a decimal
mark answered alone takes the thousands separator that reads the column.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import cast

from agent.data.currency import CURRENCY_EXPONENTS
from agent.data.formats import (
    NUMBER_FORMATS,
    PROFILE_VALUES,
    NumberFormat,
    decimals_used,
    parse_number,
    rival_format,
)
from agent.data.mapping.amounts import amount_answers, matched_amounts
from agent.data.mapping.columns import SampleColumns
from agent.data.mapping.proposal import Clarification, DatasetProposal
from agent.data.mapping.settling import MIN_MATCHED, the_one_that_agrees
from agent.data.mapping.wording import ProposalCode
from agent.data.notes import Note, note
from agent.data.schema import MAIN_AMOUNT, AmountReading, Role

_MARK_WORDS = {".": "dot", ",": "comma"}


def decide_separators(
    datasets: dict[Role, DatasetProposal],
    samples: dict[Role, SampleColumns],
    answers: dict[Role, dict[str, str]],
    clarifications: list[Clarification],
) -> None:
    """Settle or ask about every amount column whose values read under two number formats.

    `samples` are the two sampled files, read by column; a question is added to
    `clarifications`, a reading settled by the other file is noted in its proposal.
    """
    doubtful: dict[tuple[Role, str], tuple[NumberFormat, NumberFormat]] = {}
    for role in Role:
        proposal = datasets[role]
        answered = amount_answers(role, answers.get(role, {}))
        for field, reading in list(proposal.options.amounts.items()):
            column = proposal.column_of(field)
            if column is None:
                continue
            values = samples[role].values(column)
            parts = answered.get(field, {})
            if "decimal" in parts and "thousands" not in parts:
                datasets[role] = _complete(datasets[role], field, reading, values)
            if parts:
                continue
            chosen = NumberFormat(reading.decimal, reading.thousands)
            key = ("rival_format", column, chosen)
            if key not in samples[role].derived:  # the same values: the same rival, once
                samples[role].derived[key] = rival_format(values, chosen)
            rival = cast(NumberFormat | None, samples[role].derived[key])
            if rival is None:
                continue
            # A reading finer than the currency's minor unit is out (`2,200` USD is not 2.200);
            # of two that are not, one with exactly its decimals is in (`12.500` KWD).
            fit = [f for f in (chosen, rival) if _decimals_fit(proposal, samples[role], column, f)]
            if len(fit) != 1:
                fit = [
                    f
                    for f in (chosen, rival)
                    if _decimals_fit(proposal, samples[role], column, f, exact=True)
                ]
            if len(fit) == 1 and reading.unit == "major":  # written as its currency writes
                if fit[0] == rival:
                    why = ProposalCode.DECIMAL_BY_CURRENCY
                    datasets[role] = _take(datasets[role], field, rival, why)
                continue
            doubtful[role, field] = (chosen, rival)
    for (role, field), (chosen, rival) in doubtful.items():
        if _settled(datasets, samples, role, field, chosen, rival, doubtful):
            continue
        column = datasets[role].column_of(field)
        values = samples[role].values(str(column))
        example = next(v for v in values if parse_number(v, chosen) != parse_number(v, rival))
        one, two = (_plain(parse_number(example, fmt)) for fmt in (chosen, rival))
        clarifications.append(
            Clarification(
                role=role,
                field=f"{field}_decimal",
                question=(
                    f'{datasets[role].file_name}: the amounts in "{column}" read two ways: '
                    f'"{example.strip()}" is {one} with "{chosen.decimal}" as the decimal mark '
                    f'and {two} with "{rival.decimal}", and every value fits both. Which is the '
                    "decimal mark?"
                ),
                choices=[_MARK_WORDS[chosen.decimal], _MARK_WORDS[rival.decimal]],
            )
        )


def _decimals_fit(
    proposal: DatasetProposal,
    sample: SampleColumns,
    column: str,
    fmt: NumberFormat,
    *,
    exact: bool = False,
) -> bool:
    """Whether every sampled amount of `column`, read under `fmt`, has no more decimals than
    its row's currency has (`exact`: exactly as many, `12.500` KWD, `250.000` VND as 250000);
    False where a row's currency is unknown."""
    currency = proposal.column_of("currency")
    amounts = sample.values(column)
    default = proposal.options.default_currency
    codes = sample.values(currency) if currency is not None else [default or ""] * len(amounts)
    seen = False
    for value, code in set(zip(amounts, codes, strict=True)):  # each pair once
        if not value.strip() or parse_number(value, fmt) is None:
            continue
        exponent = CURRENCY_EXPONENTS.get(code.strip().upper())
        digits = decimals_used((value,), fmt)
        if exponent is None or digits > exponent or (exact and digits != exponent):
            return False
        seen = True
    return seen


def _plain(number: Decimal | None) -> str:
    """A number as digits, without exponent or trailing zeros (`250`, `250000`, `12.5`)."""
    return "?" if number is None else format(number.normalize(), "f")


def _settled(
    datasets: dict[Role, DatasetProposal],
    samples: dict[Role, SampleColumns],
    role: Role,
    field: str,
    chosen: NumberFormat,
    rival: NumberFormat,
    doubtful: dict[tuple[Role, str], tuple[NumberFormat, NumberFormat]],
) -> bool:
    """Whether the other file's amounts settle the reading of `field` (taking the rival's
    when it is the one that agrees); never against another file's amounts in doubt too."""
    if field != MAIN_AMOUNT[role] or (role.other, MAIN_AMOUNT[role.other]) in doubtful:
        return False
    agrees = the_one_that_agrees(
        {fmt: _agreement(datasets, samples, role, field, fmt) for fmt in (chosen, rival)}
    )
    if agrees == chosen:
        return True
    if agrees == rival:
        datasets[role] = _take(datasets[role], field, rival, ProposalCode.DECIMAL_BY_OTHER_FILE)
        return True
    return False


def _take(
    proposal: DatasetProposal, field: str, fmt: NumberFormat, why: ProposalCode
) -> DatasetProposal:
    """`proposal` reading `field` under `fmt`, the other of two readings its values fit, with a
    note saying why (`why`: its code, `DECIMAL_BY_CURRENCY` or `DECIMAL_BY_OTHER_FILE`)."""
    reading = proposal.options.amounts[field]
    return _with_reading(
        proposal,
        field,
        reading.model_copy(update={"decimal": fmt.decimal, "thousands": fmt.thousands}),
        note(why, column=proposal.column_of(field), decimal=fmt.decimal),
    )


def _agreement(
    datasets: dict[Role, DatasetProposal],
    samples: dict[Role, SampleColumns],
    role: Role,
    field: str,
    fmt: NumberFormat,
) -> float | None:
    """The share of matched orders whose amounts agree with the other file's when `field` is
    read under `fmt` (each side in major units); None with too few matched orders."""
    reading = datasets[role].options.amounts[field]
    trial = dict(datasets)
    trial[role] = _with_reading(
        datasets[role],
        field,
        reading.model_copy(update={"decimal": fmt.decimal, "thousands": fmt.thousands}),
    )
    orders, payments = trial[Role.ORDERS], trial[Role.PAYMENTS]
    order_amounts, pay_amounts, exponents = matched_amounts(orders, payments, samples)
    if len(order_amounts) < MIN_MATCHED:
        return None
    order_unit = orders.options.amounts["order_amount"].unit
    pay_unit = payments.options.amounts["captured_amount"].unit
    agree = 0
    for order, paid, exponent in zip(order_amounts, pay_amounts, exponents, strict=True):
        order_major = order / 10**exponent if order_unit == "minor" else order
        paid_major = paid / 10**exponent if pay_unit == "minor" else paid
        agree += abs(order_major - paid_major) <= 0.01 * max(abs(order_major), abs(paid_major))
    return agree / len(order_amounts)


def _complete(
    proposal: DatasetProposal, field: str, reading: AmountReading, values: Sequence[str]
) -> DatasetProposal:
    """`reading` with a person's decimal mark and the thousands separator, of those that go
    with it, that reads the most values (its own first, on a tie)."""
    formats = [f for f in NUMBER_FORMATS if f.decimal == reading.decimal]
    formats.sort(key=lambda f: f.thousands != reading.thousands)
    head = values[:PROFILE_VALUES]
    best = max(formats, key=lambda f: sum(parse_number(v, f) is not None for v in head))
    if best.thousands == reading.thousands:
        return proposal
    return _with_reading(proposal, field, reading.model_copy(update={"thousands": best.thousands}))


def _with_reading(
    proposal: DatasetProposal, field: str, reading: AmountReading, said: Note | None = None
) -> DatasetProposal:
    """`proposal` reading `field` as `reading`, with `said` added to its notes."""
    amounts = {**proposal.options.amounts, field: reading}
    update: dict[str, object] = {
        "options": proposal.options.model_copy(update={"amounts": amounts})
    }
    if said is not None:
        update["notes"] = [*proposal.notes, said]
    return proposal.model_copy(update=update)
