"""The codes of the notes this part of the engine makes, and their words (see agent.data.notes).

A proposal's notes say what inference assumed and decided about one file (`ProposalCode`),
after the notes of the file's layout (`agent.data.ingest.wording.LayoutCode`, joined here).
Inference decides by the codes (`dataset`, `date_order` drop a note a person's answer has
settled); the words below are made only at the edge (`agent.data.wording.words`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import Any

from agent.data.ingest.wording import WORDS as LAYOUT_WORDS
from agent.data.time_zones import ZONE_PLACES, utc_offset, zone_of

_NOTED_ZONES = 12  # the zones a note lists one by one


class ProposalCode(StrEnum):
    """What a proposal's note says, and the params it is said with."""

    ZONE_AFTER_TIME = "proposal.zone_after_time"
    """Times read in the zone written after each: `column`, `zones` (the sampled zone texts)."""
    ZONE_COLUMN = "proposal.zone_column"
    """Times read in each row's zone: `column`, `time_column` (or None), `zone_column`,
    `zones`."""
    NO_TIME_ZONE = "proposal.no_time_zone"
    """Times with no zone, read as UTC: `column`, `time_column` (or None)."""
    DAY_MONTH_GUESSED = "proposal.day_month_guessed"
    """Every sampled date fits both orders, read as `pattern`: `column`, `pattern`."""
    DAY_MONTH_SETTLED = "proposal.day_month_settled"
    """Every sampled date fits both orders, `pattern` the other file's times agree with:
    `column`, `pattern`."""
    MINOR_UNITS = "proposal.minor_units"
    """Amounts in minor units, 100 times the other file's: `column`."""
    CURRENCY_WRITTEN = "proposal.currency_written"
    """No currency column, every amount written with `mark`: `column`, `mark`, `currency`."""
    CURRENCY_BY_OTHER_FILE = "proposal.currency_by_other_file"
    """No currency column, every amount written with `mark` and every row of `other_file` in
    `currency`: `column`, `mark`, `other_file`, `currency`."""
    DECIMAL_BY_CURRENCY = "proposal.decimal_by_currency"
    """Of two number formats, the one with each currency's decimals: `column`, `decimal`."""
    DECIMAL_BY_OTHER_FILE = "proposal.decimal_by_other_file"
    """Of two number formats, the one the other file's amounts agree with: `column`,
    `decimal`."""
    ROW_KINDS = "proposal.row_kinds"
    """The row kinds proposed: `column`, `capture`, `refunded`, `refund`, `ignore` (lists)."""
    BUDGET_SPENT = "proposal.budget_spent"
    """Inference ran out of its time budget of `seconds`; fields in doubt are asked."""


def zone_list(zones: Sequence[str]) -> str:
    """Each sampled zone text and what it is read as: `PDT -> UTC-07:00, Pacific Time (US &
    Canada) -> America/Los_Angeles`; an abbreviation that names several zones with each."""
    said = []
    for text in zones[:_NOTED_ZONES]:
        places = ZONE_PLACES.get(text.upper())
        zone = zone_of(text, cities=True)
        if places:
            each = " or ".join(f"{where} {utc_offset(minutes)}" for where, minutes, _ in places)
            said.append(f"{text} -> {each} (the file's timezone says which)")
        else:
            said.append(
                f"{text} -> {zone if zone is not None else 'no zone (its rows do not read)'}"
            )
    more = len(zones) - _NOTED_ZONES
    return ", ".join(said) + (f" and {more} more" if more > 0 else "")


def _time_of_day(params: Mapping[str, Any]) -> str:
    time_column = params.get("time_column")
    return f' with the time of day from "{time_column}"' if time_column else ""


def _zone_after_time(params: Mapping[str, Any]) -> str:
    return (
        f'"{params["column"]}" is read in the zone written after each time: '
        f"{zone_list(params['zones'])}"
    )


def _zone_column(params: Mapping[str, Any]) -> str:
    return (
        f'"{params["column"]}"{_time_of_day(params)} is read in each row\'s zone; '
        f'"{params["zone_column"]}": {zone_list(params["zones"])}'
    )


def _no_time_zone(params: Mapping[str, Any]) -> str:
    return (
        f'"{params["column"]}"{_time_of_day(params)} has no time zone: read as UTC; edit the '
        "mapping if the export uses local time"
    )


def _day_month_guessed(params: Mapping[str, Any]) -> str:
    return (
        f'"{params["column"]}": every sampled date fits both day-first and month-first; read as '
        f"{params['pattern']}"
    )


def _day_month_settled(params: Mapping[str, Any]) -> str:
    return f"{_day_month_guessed(params)}, under which the other file's times fall near this file's"


def _minor_units(params: Mapping[str, Any]) -> str:
    return (
        f'"{params["column"]}" is in minor units (cents): matched amounts are '
        "100 times the other file's"
    )


def currency_why(params: Mapping[str, Any]) -> str:
    """Why a file without a currency column is read in the currency of a `CURRENCY_WRITTEN` or
    `CURRENCY_BY_OTHER_FILE` note, as the reason of its currency choice and in the note."""
    why = f'every amount in "{params["column"]}" is written with {params["mark"]}'
    if "other_file" in params:
        why += f", and every row of {params['other_file']} is in {params['currency']}"
    return why


def _currency(params: Mapping[str, Any]) -> str:
    return f"no currency column: {currency_why(params)}, read as {params['currency']}"


def _decimal_mark(params: Mapping[str, Any], why: str) -> str:
    return (
        f'"{params["column"]}" has "{params["decimal"]}" as its decimal mark: its amounts read '
        f"both ways, and this way {why}"
    )


def _decimal_by_currency(params: Mapping[str, Any]) -> str:
    return _decimal_mark(params, "each has its currency's decimals")


def _decimal_by_other_file(params: Mapping[str, Any]) -> str:
    return _decimal_mark(params, "they agree with the other file's")


def _row_kinds(params: Mapping[str, Any]) -> str:
    refunded = set(params["refunded"])
    captures = [f"{w} (refunded)" if w in refunded else w for w in params["capture"]]
    refunds, ignored = params["refund"], params["ignore"]
    return (
        f'row kinds from "{params["column"]}": captures {", ".join(captures)}'
        + (f"; refunds {', '.join(refunds)}" if refunds else "")
        + (f"; ignored {', '.join(ignored)}" if ignored else "")
    )


def _budget_spent(params: Mapping[str, Any]) -> str:
    return (
        f"the file is too large to compare all its columns' values within "
        f"{params['seconds']:g} s: the fields that have more than one candidate are asked"
    )


WORDS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    **LAYOUT_WORDS,
    ProposalCode.ZONE_AFTER_TIME: _zone_after_time,
    ProposalCode.ZONE_COLUMN: _zone_column,
    ProposalCode.NO_TIME_ZONE: _no_time_zone,
    ProposalCode.DAY_MONTH_GUESSED: _day_month_guessed,
    ProposalCode.DAY_MONTH_SETTLED: _day_month_settled,
    ProposalCode.MINOR_UNITS: _minor_units,
    ProposalCode.CURRENCY_WRITTEN: _currency,
    ProposalCode.CURRENCY_BY_OTHER_FILE: _currency,
    ProposalCode.DECIMAL_BY_CURRENCY: _decimal_by_currency,
    ProposalCode.DECIMAL_BY_OTHER_FILE: _decimal_by_other_file,
    ProposalCode.ROW_KINDS: _row_kinds,
    ProposalCode.BUDGET_SPENT: _budget_spent,
}
