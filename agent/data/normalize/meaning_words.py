"""The words of what validation says of the meanings of values (order and payment statuses,
row kinds): one function per code of `codes.Code`, from the note's parameters alone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent.data.vocabulary import ORDER_MEANING_WORDS, ORDER_MEANINGS

Params = Mapping[str, Any]

SHOWN = 12
"""Values named one by one in a fact or a question; the rest are counted, never cut silently."""

_KIND_WORDS = {"capture": "captures", "refund": "refunds", "ignore": "ignored"}


def listed(values: Sequence[Sequence[Any]], *, limit: int = SHOWN) -> str:
    """`"value" (rows, e.g. rows 1, 2, 3)` for each `[value, rows, first rows]`; past `limit`,
    how many more there are and how many rows they hold, so nothing is cut without a word."""
    shown = [
        f'"{value}" ({count:,}, e.g. rows {", ".join(str(r) for r in examples)})'
        for value, count, examples in values[:limit]
    ]
    rest = values[limit:]
    if rest:
        shown.append(
            f"and {len(rest):,} more values ({sum(n for _, n, _ in rest):,} rows: "
            + ", ".join(f'"{v}"' for v, _, _ in rest)
            + ")"
        )
    return ", ".join(shown)


def _total(values: Sequence[Sequence[Any]]) -> int:
    """The rows of all `[value, rows, first rows]`."""
    return sum(int(n) for _, n, _ in values)


def too_many_order_statuses(p: Params) -> str:
    """An order status column of too many values to be one (an error)."""
    return (
        f'{p["file"]}: column "{p["column"]}" holds more than {p["limit"]:,} different values, '
        "too many to say which orders are paid: it does not read as an order status; map "
        "another column to orders.order_status, or none"
    )


def order_statuses(p: Params) -> str:
    """Every order status with its meaning and rows (a fact)."""
    return f'{p["file"]}: order statuses in "{p["column"]}": ' + "; ".join(
        f"{name.replace('_', ' ')}: " + ", ".join(f"{value} ({count:,})" for value, count in found)
        for name, found in p["meanings"]
    )


def unknown_order_statuses(p: Params) -> str:
    """Order statuses with no meaning (an error), with the edit proposed and the values for
    which no word is known."""
    edits = [f'orders.statuses_{meaning}="{", ".join(words)}"' for meaning, words in p["edits"]]
    guess = ""
    if p["strangers"]:
        guess = (
            f" For {', '.join(repr(w) for w in p['strangers'])} no word is known: say which of "
            + ", ".join(f"statuses_{m} ({ORDER_MEANING_WORDS[m]})" for m in ORDER_MEANINGS)
            + " they are"
        )
    proposal = f" Proposed: edit {' '.join(edits)}." if edits else ""
    return (
        f"{p['file']}: {_total(p['values']):,} orders have a status in column "
        f'"{p["column"]}" with no meaning yet: {listed(p["values"])}. Read as paid they could '
        f"hide a cancelled or refunded order whose money was kept.{proposal}{guess}"
    )


def absent_words(p: Params) -> str:
    """Listed words the column never holds (an error), with the column's values."""
    names = ", ".join(f'"{word}" ({p["option"]}{meaning})' for word, meaning in p["absent"])
    return (
        f'{p["file"]}: column "{p["column"]}" never holds {names}; its values are: '
        + ", ".join(f'"{value}"' for value in p["values"])
        + ". Name values the column holds (compared trimmed, in any case)"
    )


def too_many_kinds(p: Params) -> str:
    """A row-kind column of too many values to be one (an error)."""
    return (
        f'{p["file"]}: column "{p["column"]}" holds more than {p["limit"]:,} different values: '
        "it does not say what each row is; set payments.kinds_column to another column"
    )


def failed_in_kind_list(p: Params) -> str:
    """Failed attempts listed as captures or refunds (an error): reconciling ignores them."""
    return (
        f"{p['file']}: "
        + ", ".join(f'"{word}" (payments.kinds_{kind})' for word, kind in p["failed"])
        + " is a failed attempt under the policy in force (failed_payment_statuses), "
        "which reconciling ignores whatever a list says; take it out of that list, or "
        "change the policy"
    )


def row_kinds(p: Params) -> str:
    """Every row-kind value with its kind and rows (a fact)."""
    return f'{p["file"]}: row kinds in "{p["column"]}": ' + "; ".join(
        f"{_KIND_WORDS[name]}: "
        + ", ".join(
            f"{value}{' (refunded)' if refunded else ''} ({count:,})"
            for value, refunded, count in found
        )
        for name, found in p["kinds"]
    )


def _kind_edits(edits: Sequence[Sequence[Any]]) -> str:
    """`payments.kinds_NAME="a, b"` for each kind and its words."""
    return " ".join(f'payments.kinds_{name}="{", ".join(words)}"' for name, words in edits)


def unknown_row_kinds(p: Params) -> str:
    """Row kinds in no list (an error), with the edit that classifies them."""
    return (
        f"{p['file']}: {_total(p['values']):,} rows have a row kind in column "
        f'"{p["column"]}" that is in no list: {listed(p["values"])}. Say what they are, e.g. '
        f"edit {_kind_edits(p['edits'])} (or kinds_capture / kinds_refund)"
    )


def too_many_payment_statuses(p: Params) -> str:
    """A payment status column of too many values to be one (an error)."""
    return (
        f'{p["file"]}: column "{p["column"]}" holds more than {p["limit"]:,} different '
        "statuses, too many to say which took money: it does not read as a payment status; "
        "map another column to payments.payment_status, or none"
    )


def payment_statuses(p: Params) -> str:
    """Every payment status with what reconciling reads it as, and its rows (a fact)."""
    return f'{p["file"]}: payment statuses in "{p["column"]}": ' + ", ".join(
        f"{value} = {reading} ({count:,})" for value, reading, count in p["statuses"]
    )


def status_codes(p: Params) -> str:
    """Payment statuses that are only numbers, read as a processor's codes (an error), with
    the edit that says what they are."""
    ignore = p["ignore"]
    return (
        f'{p["file"]}: column "{p["column"]}" holds codes that are only numbers: '
        f"{listed(p['values'])}. They look like {p['name']} ("
        + ", ".join(f"{value} = {meaning}" for value, meaning in p["meanings"])
        + "). If so, edit "
        + f'payments.kinds_capture="{", ".join(p["capture"])}"'
        + (f' payments.kinds_ignore="{", ".join(ignore)}"' if ignore else "")
    )


def _refund_hint(refunds: Sequence[str]) -> str:
    """The values the vocabulary reads as money going back, with the edit that says so."""
    if not refunds:
        return ""
    return (
        f". {', '.join(repr(v) for v in refunds)} read as money going back: edit "
        f'payments.kinds_refund="{", ".join(refunds)}" if so'
    )


def unknown_payment_statuses(p: Params) -> str:
    """Payment statuses that say neither a capture nor a failed attempt (an error), with the
    edits that say what they are."""
    ignored, kept = ", ".join(p["ignore"]), ", ".join(p["kept"])
    edit = f'payments.kinds_ignore="{ignored}" if they took none'
    if not p["kinds"]:
        edit = (
            f'payments.kinds_capture="{", ".join(p["took"])}" if they took money, or '
            f'payments.kinds_capture="{kept}" payments.kinds_ignore="{ignored}" if they did not'
        )
    return (
        f"{p['file']}: {_total(p['values']):,} rows have a status in column "
        f'"{p["column"]}" that says neither a capture nor a failed attempt: '
        f"{listed(p['values'])}. Read as captures they would count money that may not have "
        f"been taken. Say what they are: edit {edit} (or kinds_refund)" + _refund_hint(p["refunds"])
    )
