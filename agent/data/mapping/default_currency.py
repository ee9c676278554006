"""The currency of a file without a currency column, from how its amounts are written.

`€89.90` and `12.50 EUR` say the currency; `$77.45` says it only together with the other
file, when every sampled row there is in one currency that writes `$`. Where nothing says it,
`ambiguity.currency_question` asks.
"""

from __future__ import annotations

from agent.data.currency import CURRENCY_EXPONENTS
from agent.data.mapping.ambiguity import currency_question
from agent.data.mapping.evidence import Evidence
from agent.data.mapping.headers import normalize_header
from agent.data.mapping.proposal import Clarification, DatasetProposal
from agent.data.mapping.wording import ProposalCode, currency_why
from agent.data.notes import Note, note
from agent.data.schema import MAIN_AMOUNT, Role
from agent.data.schema.words import CURRENCY_ALIASES

_SYMBOL_CODES = {
    "€": ("EUR",),
    "£": ("GBP",),
    "₹": ("INR",),
    "₩": ("KRW",),
    "₽": ("RUB",),
    "₺": ("TRY",),
    "₪": ("ILS",),
    "₫": ("VND",),
    "₦": ("NGN",),
    "₱": ("PHP",),
    "฿": ("THB",),
    "₴": ("UAH",),
    "₲": ("PYG",),
    "₡": ("CRC",),
    "₵": ("GHS",),
    "₭": ("LAK",),
    "₮": ("MNT",),
    "₸": ("KZT",),
    "$": ("USD", "CAD", "AUD", "NZD", "SGD", "HKD", "MXN", "TWD", "ARS", "CLP", "COP"),
    "¥": ("JPY", "CNY"),
}
"""Currency symbols and the ISO codes they can stand for. A symbol that stands for one currency
says it; `$` and `¥` need the other file to say which. Kept by hand: these are the likely
currencies of a symbol, offered as a question's choices, which Babel's data does not rank (its
locales write `$` for 27 currencies, `£` for five, and `₵` only as `GH₵`)."""


def decide_currencies(
    datasets: dict[Role, DatasetProposal],
    evidence: dict[Role, Evidence],
    clarifications: list[Clarification],
) -> None:
    """Give a file without a currency column the currency its amounts are written in, or ask.

    `€89.90` and `12.50 EUR` say the currency; `$77.45` says it only together with the other
    file, when every sampled row there is in one currency that writes `$`.
    """
    for role in Role:
        proposal = datasets[role]
        if proposal.options.default_currency is not None or proposal.column_of("currency"):
            continue
        found = _currency_of_amounts(role, datasets, evidence)
        if found is None:
            symbols = _symbol_column(proposal, evidence[role])
            clarifications.append(currency_question(role, proposal.file_name, symbols))
            continue
        why = currency_why(found.params)
        choices = [
            c.model_copy(update={"confidence": 0.9, "reason": why}) if c.field == "currency" else c
            for c in proposal.choices
        ]
        code = str(found.params["currency"])
        datasets[role] = proposal.model_copy(
            update={
                "choices": choices,
                "options": proposal.options.model_copy(update={"default_currency": code}),
                "notes": [*proposal.notes, found],
            }
        )


def _symbol_column(
    proposal: DatasetProposal, evidence: Evidence
) -> tuple[str, list[str], list[str]] | None:
    """A column named like a currency column that holds currency symbols (`€`) instead of
    codes: its name, its symbols and the codes they can stand for; None if there is none."""
    for column in proposal.columns:
        if normalize_header(column) not in CURRENCY_ALIASES:
            continue
        marks = sorted({v.strip() for v in evidence.columns.values(column)} - {""})
        if marks and all(m in _SYMBOL_CODES for m in marks):
            codes = list(dict.fromkeys(c for m in marks for c in _SYMBOL_CODES[m]))
            return column, marks, codes
    return None


def _currency_of_amounts(
    role: Role, datasets: dict[Role, DatasetProposal], evidence: dict[Role, Evidence]
) -> Note | None:
    """The note that a file's main amount column is written in a currency (`currency`), and
    why (`CURRENCY_WRITTEN`, `CURRENCY_BY_OTHER_FILE`); None if it does not say."""
    column = datasets[role].column_of(MAIN_AMOUNT[role])
    if column is None:
        return None
    mark = evidence[role].profiles[column].currency_mark
    if mark is None:
        return None
    if mark in CURRENCY_EXPONENTS:
        return note(ProposalCode.CURRENCY_WRITTEN, column=column, mark=mark, currency=mark)
    codes = _SYMBOL_CODES.get(mark, ())
    if len(codes) == 1:
        return note(ProposalCode.CURRENCY_WRITTEN, column=column, mark=mark, currency=codes[0])
    other = datasets[role.other]
    other_column = other.column_of("currency")
    if other_column is None:
        return None
    seen = {v.strip().upper() for v in set(evidence[role.other].columns.values(other_column))}
    seen.discard("")
    if len(seen) == 1 and (code := seen.pop()) in codes:
        return note(
            ProposalCode.CURRENCY_BY_OTHER_FILE,
            column=column,
            mark=mark,
            other_file=other.file_name,
            currency=code,
        )
    return None
