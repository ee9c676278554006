"""Reading options in words: what a person approves about how each file is read.

One plain-text description shared by the terminal and Slack, so both show every option that
changes results (the mapping digest covers all of them), including options added later.

A request shows one reading per file (`shown_reading`): the mapping it asks to approve, or,
when it has none (a question is open), the reading proposed so far, with what is still asked
marked `ASKED`, the same in the terminal, in `--json` and in Slack.
"""

from __future__ import annotations

from typing import Any

from agent.data.schema import READING_OPTIONS, DatasetMapping, Role
from agent.domain import ApprovalRequest, ProposedReading

ASKED = "? (asked)"
"""What stands for a field or option a question still asks about, wherever a request is shown."""

_DESCRIBED = {
    "encoding",
    "delimiter",
    "header_row",
    "amounts",
    "timestamps",
    "default_currency",
    "ids",
    "kinds",
    "statuses",
}


def shown_reading(request: ApprovalRequest, role: Role) -> DatasetMapping | ProposedReading | None:
    """The reading of `role`'s file a request shows: the mapping it asks to approve, else the
    reading proposed so far (a clarification: the columns chosen, the options inferred, what is
    asked), else None (nothing could be proposed, or a request saved before it was kept)."""
    if request.mapping is not None:
        return request.mapping.for_role(role)
    if request.proposed is not None:
        return request.proposed.for_role(role)
    return None


def asked_of(reading: DatasetMapping | ProposedReading | None) -> tuple[str, ...]:
    """The fields and options a question still asks about in `reading` (none in a mapping)."""
    return reading.asked if isinstance(reading, ProposedReading) else ()


def reading_document(request: ApprovalRequest) -> dict[str, Any] | None:
    """The reading a request shows as JSON, per role: `columns`, `options` and `asked` (the
    `--json` request's `proposed_mapping`; the mapping itself for a confirmation)."""
    shown = {role: shown_reading(request, role) for role in Role}
    if any(reading is None for reading in shown.values()):
        return None
    return {
        role.value: {
            "columns": dict(reading.columns),
            "options": reading.options.model_dump(mode="json"),
            "asked": list(asked_of(reading)),
        }
        for role, reading in shown.items()
        if reading is not None
    }


def describe_reading(mapping: DatasetMapping | ProposedReading) -> str:
    """Every reading option of one file, in words, `; `-separated; an option a question still
    asks about (a proposed reading's `asked`) is said as asked."""
    options = mapping.options
    parts = [options.encoding, f"delimiter {options.delimiter!r}"]
    if options.header_row != 1:
        parts.append(f"header on line {options.header_row}")
    for name, amount in sorted(options.amounts.items()):
        grouping = f", thousands {amount.thousands!r}" if amount.thousands else ""
        parts.append(f"{name}: {amount.unit} units, decimal {amount.decimal!r}{grouping}")
    for name, stamp in sorted(options.timestamps.items()):
        zone = f" in {stamp.timezone}" if stamp.timezone else ""
        if stamp.zone_column:  # each row's own zone; the timezone only where that cell is empty
            zone = f", each row in the zone its column {stamp.zone_column!r} gives" + (
                f" (else {stamp.timezone})" if stamp.timezone else ""
            )
        time = f", the time of day from column {stamp.time_column!r}" if stamp.time_column else ""
        parts.append(f"{name}: {stamp.pattern}{time}{zone}")
    if options.default_currency:
        parts.append(f"default currency {options.default_currency}")
    ids = options.ids
    if ids is not None:
        if ids.pattern:
            parts.append(f"ids: what {ids.pattern!r} captures")
        if ids.prefix:
            parts.append(f"ids: prefix {ids.prefix!r} removed")
        if ids.suffix:
            parts.append(f"ids: suffix {ids.suffix!r} removed")
        if ids.strip_zeros:
            parts.append("ids: leading zeros removed")
        if ids.ignore_case:
            parts.append("ids: compared in any case")
        if ids.whole:
            parts.append("ids: each reference one id, separators and all")
        if ids.excel_numbers:
            parts.append("ids: spreadsheet numbers read whole (1042.0 is 1042)")
    kinds = options.kinds
    if kinds is not None:  # every value of every list: what each row is, as approved
        where = f"column {kinds.column!r}" if kinds.column else "the payment status"
        lists = [
            ("captures", kinds.capture),
            ("refunds", kinds.refund),
            ("ignored", kinds.ignore),
            ("captures refunded in full", kinds.refunded),
        ]
        said = "; ".join(f"{name} = {', '.join(words)}" for name, words in lists if words)
        parts.append(f"row kinds from {where}: {said}")
    statuses = options.statuses
    if statuses is not None:  # every value of the order status column with its meaning
        said = "; ".join(
            f"{name.replace('_', ' ')} = {', '.join(words)}"
            for name, words in statuses.model_dump().items()
            if words
        )
        parts.append(f"order statuses: {said or 'none listed'}")
    extra: dict[str, Any] = options.model_dump(mode="json", exclude_defaults=True)
    for name, value in sorted(extra.items()):
        if name not in _DESCRIBED and value not in (None, {}, []):
            parts.append(f"{name.replace('_', ' ')}: {_plain(value)}")
    for name in asked_of(mapping):
        if name in READING_OPTIONS:
            parts.append(f"{name.replace('_', ' ')}: {ASKED}")
    return "; ".join(parts)


def _plain(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {_plain(v)}" for k, v in value.items() if v not in (None, "", []))
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def routine_line(request: ApprovalRequest) -> str:
    """The counts that need no decision (rows read, ids, references that meet), folded into
    one line that follows the warnings and notes: every count is in it, none cut."""
    return "Read: " + " · ".join(request.routine) if request.routine else ""
