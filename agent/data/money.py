"""Money as a person reads it: `1,234.50 GBP`, and `nothing` where there is no amount.

Every place that shows an amount to a person (the terminal, Slack, the agent's answers) goes
through `format_money`, so an absent amount never reads `None GBP` and thousands are grouped
the same way everywhere. The digits are the ones reconciled: nothing is rounded or rescaled.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

NOTHING = "nothing"


def format_amount(value: object) -> str:
    """An amount with its thousands grouped (`1,234.50`), its decimals kept as they are;
    `nothing` for None or an empty value, and any other text unchanged (never hidden)."""
    if value is None or value == "":
        return NOTHING
    try:
        amount = value if isinstance(value, Decimal) else Decimal(str(value).strip())
    except InvalidOperation:
        return str(value)
    if not amount.is_finite():
        return str(value)
    exponent = amount.as_tuple().exponent
    if isinstance(exponent, int) and exponent > 0:
        amount = amount.quantize(Decimal(1))  # 1E+3 reads 1,000
    return format(amount, ",")


def format_money(value: object, currency: object) -> str:
    """An amount and its currency (`1,234.50 GBP`); `nothing` when there is no amount."""
    amount = format_amount(value)
    if amount == NOTHING:
        return NOTHING
    code = str(currency or "").strip()
    return f"{amount} {code}" if code else amount
