"""The codes of the notes this part of the engine makes, and their words (see agent.data.notes).

Validation (`validation`, `time_checks`, `signs`, `meanings`), the gates (`agent.data.gates`),
the reading the files show (`agent.data.evident_reading`) and the run that joins them
(`agent.data.reconcile.run`) say what they find as `Note`s of these codes; the words of each are
made here, from its parameters alone, so that what a person reads is decided in one place.
The words of the meanings of values (statuses, kinds) are in `meaning_words`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agent.data.normalize import meaning_words as said
from agent.data.normalize.codes import Code

__all__ = ["WORDS", "Code", "references_words"]

Params = Mapping[str, Any]


def _rows(rows: list[int]) -> str:
    """`1, 2, 3`: the example rows of a message."""
    return ", ".join(str(r) for r in rows)


def _unmapped_field(p: Params) -> str:
    """A required field no column is mapped to (an error)."""
    return f"{p['file']}: no column is mapped to {p['field']}"


def _by_row(p: Params) -> str:
    """A file whose rows are named by number for want of an id column (a fact): the names the
    findings and the exceptions CSV give them."""
    noun = str(p["field"]).removesuffix("_id").replace("_", " ")
    return (
        f"{p['file']} has no {noun} id column: each {noun} is named by its data row "
        "(row 1, row 2, ..., as rows are numbered in the evidence); a refund reaches its "
        "order by its order reference alone"
    )


def _unreadable_message(p: Params) -> str:
    """How many values of a field's column do not read, with the first rows."""
    return (
        f"{p['file']}: {p['unreadable']} of {p['filled']} {p['problem']} in column "
        f'"{p["column"]}" ({p["field"]}), e.g. rows {_rows(p["rows"])}'
    )


def _remedy(field: str) -> str | None:
    """What a person can edit when too many rows of a required field's column do not read,
    as an edit reads it; None where choosing another column is all there is to say."""
    if field == "payment_id":
        return (
            "choose the column of each payment's own id (edit payments.payment_id=COLUMN), "
            "or name each payment by its data row (edit payments.payment_id=)"
        )
    return None


def _consequence(field: str) -> str | None:
    """What reconciling does with a row whose optional `field` is there but does not read, so
    that the person approving knows what those rows will not be checked for. None for a
    required field: what happens to such a row depends on its kind, and the exceptions CSV
    gives each row's reason."""
    if field in ("order_date", "captured_at"):
        return "reconciling skips the time-window check for those rows"
    if field == "refunded_amount":
        return (
            "reconciling reads no refunded amount from those rows (a payment refunded nothing "
            "unless its status says refunded; a refund row returns the whole capture unless "
            "its amount column reads)"
        )
    return None


def _unreadable(p: Params) -> str:
    """Too many values of a required field do not read (an error), with the edit if one helps."""
    remedy = _remedy(str(p["field"]))
    message = _unreadable_message(p)
    return f"{message}: {remedy}" if remedy else message


def _unreadable_skipped(p: Params) -> str:
    """Some values of a field do not read (a warning), with what reconciling does with them."""
    consequence = _consequence(str(p["field"]))
    message = _unreadable_message(p)
    return f"{message}: {consequence}" if consequence else message


def _finer_than_minor(p: Params) -> str:
    """Amounts finer than their currency's minor unit (a warning): how they are rounded."""
    where = _rows(p["rows"])
    if p["minor"]:
        what = (
            "are not whole minor units (the column is read in minor units, such as cents), "
            f"e.g. rows {where}: where reconciling uses one, it rounds it half away from "
            "zero to a whole one"
        )
    else:
        what = (
            f"have more decimals than their currency's minor unit, e.g. rows {where}: "
            "where reconciling uses one, it rounds it half away from zero to that unit "
            "(10.005 USD as 10.01)"
        )
    return (
        f'{p["file"]}: {p["count"]:,} of {p["filled"]:,} amounts in column "{p["column"]}" '
        f"({p['field']}) " + what
    )


def _no_time_column(p: Params) -> str:
    """No column is mapped to the file's time (a warning): the window is not checked."""
    return (
        f"{p['file']}: no column is mapped to {p['field']}, so reconciling cannot check when "
        "payments were captured (capture_outside_window); map one if the file has it"
    )


def _rows_without_time(p: Params) -> str:
    """Rows with an amount and no time (a warning): the window is not checked for them."""
    return (
        f"{p['file']}: {p['count']:,} rows with an amount have no value in column "
        f'"{p["column"]}" ({p["field"]}), e.g. rows {_rows(p["rows"])}: reconciling skips the '
        "time-window check for those rows"
    )


def _ambiguous_zones(p: Params) -> str:
    """Zone abbreviations that name more than one zone (a warning), with how they are read."""
    read = "; ".join(f"{zone} as {reading}" for zone, reading in p["zones"])
    where = (
        f'the zone column "{p["zone_column"]}"'
        if p["zone_column"] is not None
        else f'the zones after the times of "{p["column"]}"'
    )
    return (
        f"{p['file']}: {where} writes abbreviations that name more than one zone, read here "
        f"as: {read}. If the export means another, its times are hours off and the capture "
        f"window with them: say the export's zone ({p['role']}.timezone=, e.g. "
        f"{' or '.join(p['examples'])}) or export offsets instead"
    )


def _negative_payments(p: Params) -> str:
    """Payment rows with a negative amount (a fact): read as refunds or reversals."""
    return (
        f'{p["file"]}: {p["count"]:,} rows have a negative amount in "{p["column"]}" (e.g. rows '
        f"{_rows(p['rows'])}): read as refunds or reversals of the capture or order they name, "
        "counted by their size"
    )


def _negative_orders(p: Params) -> str:
    """Order rows with a negative total (a fact): read as credit notes."""
    return (
        f'{p["file"]}: {p["count"]:,} rows have a negative total in "{p["column"]}" (e.g. rows '
        f"{_rows(p['rows'])}): read as credit notes, owed to the customer; one no refund names "
        "is ignored (reason credit_note)"
    )


def _order_ids(p: Params) -> str:
    """How many order ids the orders file has, on how many rows (routine)."""
    return f"{p['file']}: {p['keys']:,} order ids on {p['rows']:,} rows with a total"


def _not_order_id(p: Params) -> str:
    """The order id column names no single order (an error), with why."""
    why = (
        f"{p['conflicting']:,} of its {p['keys']:,} ids carry different totals on different rows"
        if p["conflicts"]
        else f"it has only {p['keys']:,} different values on {p['rows']:,} rows with a total"
    )
    return (
        f'{p["file"]}: column "{p["column"]}" does not look like the order id: {why}. '
        "An order id names one order; choose the column that holds each order's own id "
        "(edit orders.order_id=COLUMN)."
    )


def references_words(p: Params) -> str:
    """How many payment references name an order under this reading (routine), the line a
    proposal compares itself with."""
    line = (
        f"{p['named']:,} of {p['total']:,} payment references in {p['payments']} "
        f"name an order in {p['orders']}"
    )
    if p["several"]:
        line += f" ({p['several']:,} of them name several orders)"
    return line


def _multi_order_reading(p: Params) -> str:
    """Most references name several orders (a warning): other numbers read as order ids."""
    return (
        f"Under this reading {references_words(p)}, e.g. rows {_rows(p['rows'])}: reconciling "
        "reports most payments as multi_order_payment. If a payment seldom pays several orders "
        "here, other numbers in the reference (item counts, dates) are read as order ids: give "
        "the reference's pattern (edit payments.id_pattern=REGEX with one capture group, "
        'e.g. payments.id_pattern="Order (\\d+)"), or map payments.order_id to another column.'
    )


def _proposed_reading(p: Params) -> str:
    """The id reading the files show, with its figure, for the request that proposes it."""
    return (
        f"{p['named']:,} of {p['total']:,} payment references name an order under: "
        f"{p['reading']} (edit {p['edit']})"
    )


def _advice(advice: Params) -> str:
    """What to do about a reading under which few references meet: the close readings to
    choose from, the better one with why it is not proposed, or what to check."""
    if advice["kind"] == "close":
        readings = "; ".join(
            f"edit {edit} ({named:,} of {total:,} references name an order)"
            for edit, named, total in advice["readings"]
        )
        return f" Two readings come close: {readings}. Say which is right."
    if advice["kind"] == "better":
        why = ""
        if advice["merged"]:
            why = f"; it would read {advice['merged']:,} order ids as another order's, so it is"
            why += " not proposed"
        elif advice["several"]:
            why = (
                f"; {advice['several']:,} of them would name several orders (other numbers "
                "read as order ids), so it is not proposed"
            )
        return (
            f" Under {advice['reading']}, {advice['named']:,} of {advice['total']:,} would "
            f"(edit {advice['edit']}){why}."
        )
    return (
        " Check that payments.order_id is the column holding the order reference and "
        "orders.order_id the order's own id, or give the reference's pattern "
        "(edit payments.id_pattern=REGEX with one capture group)."
    )


def _reading_fails(p: Params) -> str:
    """The files do not meet under this reading (an error), with the advice."""
    return (
        f"Under this reading {references_words(p)}: the files do not meet, so reconciling would "
        f"report nearly every order and payment as unmatched.{_advice(p['advice'])}"
    )


def _reading_weak(p: Params) -> str:
    """Some references name no order under this reading (a warning), with the advice."""
    return f"Under this reading {references_words(p)}.{_advice(p['advice'])}"


def _evident_taken(p: Params) -> str:
    """The readings the files showed, taken in place of the proposed one (a fact), and the
    references figure without them."""
    taken = "; then ".join(_proposed_reading(reading) for reading in p["taken"])
    without = p["without"]
    return (
        "Proposed from the files, not asked: "
        + taken
        + (f". Without it, {references_words(without)}" if without else "")
    )


def _rows_read(p: Params) -> str:
    """How many rows a file has (routine)."""
    return f"{p['file']}: {p['rows']:,} rows read"


WORDS: dict[str, Callable[[Params], str]] = {
    Code.UNMAPPED_FIELD: _unmapped_field,
    Code.BY_ROW: _by_row,
    Code.UNREADABLE: _unreadable,
    Code.UNREADABLE_SKIPPED: _unreadable_skipped,
    Code.FINER_THAN_MINOR: _finer_than_minor,
    Code.NO_TIME_COLUMN: _no_time_column,
    Code.ROWS_WITHOUT_TIME: _rows_without_time,
    Code.AMBIGUOUS_ZONES: _ambiguous_zones,
    Code.NEGATIVE_PAYMENTS: _negative_payments,
    Code.NEGATIVE_ORDERS: _negative_orders,
    Code.TOO_MANY_ORDER_STATUSES: said.too_many_order_statuses,
    Code.ORDER_STATUSES: said.order_statuses,
    Code.UNKNOWN_ORDER_STATUSES: said.unknown_order_statuses,
    Code.ABSENT_WORDS: said.absent_words,
    Code.TOO_MANY_KINDS: said.too_many_kinds,
    Code.FAILED_IN_KIND_LIST: said.failed_in_kind_list,
    Code.ROW_KINDS: said.row_kinds,
    Code.UNKNOWN_ROW_KINDS: said.unknown_row_kinds,
    Code.TOO_MANY_PAYMENT_STATUSES: said.too_many_payment_statuses,
    Code.PAYMENT_STATUSES: said.payment_statuses,
    Code.STATUS_CODES: said.status_codes,
    Code.UNKNOWN_PAYMENT_STATUSES: said.unknown_payment_statuses,
    Code.ORDER_IDS: _order_ids,
    Code.NOT_ORDER_ID: _not_order_id,
    Code.REFERENCES: references_words,
    Code.MULTI_ORDER_READING: _multi_order_reading,
    Code.PROPOSED_READING: _proposed_reading,
    Code.READING_FAILS: _reading_fails,
    Code.READING_WEAK: _reading_weak,
    Code.EVIDENT_TAKEN: _evident_taken,
    Code.ROWS_READ: _rows_read,
}
"""Every code of `Code` -> its words (a test checks that none is missing)."""
