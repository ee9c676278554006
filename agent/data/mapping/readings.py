"""A file's reading options: how the values of its chosen columns are read.

First proposed from the sampled values (file layout, each amount column's number format and
unit, each timestamp column's pattern and zone), then overridden by a person's answers (see
`schema.READING_OPTIONS`). The details live in `amounts` and `timestamps`. The header line a
person gives (`header_row_answer`) is read before inference, since it changes the columns.
"""

from __future__ import annotations

from agent.data.ingest import CsvSample
from agent.data.mapping.amounts import amount_reading, answered_amounts
from agent.data.mapping.proposal import Clarification, FieldChoice
from agent.data.mapping.timestamps import answered_timestamps, timestamp_reading
from agent.data.notes import Note
from agent.data.profile import ColumnProfile
from agent.data.schema import SCHEMA, AmountReading, ReadingOptions, Role, TimestampReading
from agent.errors import MappingError


def reading_options(
    sample: CsvSample,
    profiles: dict[str, ColumnProfile],
    choices: list[FieldChoice],
    notes: list[Note],
) -> ReadingOptions:
    """The reading options the sampled values suggest; adds to `notes` what was assumed."""
    amounts: dict[str, AmountReading] = {}
    timestamps: dict[str, TimestampReading] = {}
    for choice in choices:
        if choice.column is None:
            continue
        profile = profiles[choice.column]
        kind = next(s.kind for role in SCHEMA for s in SCHEMA[role] if s.name == choice.field)
        if kind == "amount":
            amount = amount_reading(choice.column, profile)
            if amount is not None:
                amounts[choice.field] = amount
        elif kind == "timestamp":
            stamp = timestamp_reading(choice.column, profile, notes)
            if stamp is not None:
                timestamps[choice.field] = stamp
    return ReadingOptions(
        encoding=sample.layout.encoding,
        delimiter=sample.layout.delimiter,
        header_row=sample.layout.header_line + 1,
        amounts=amounts,
        timestamps=timestamps,
    )


def reading_from_answers(
    role: Role,
    options: ReadingOptions,
    choices: list[FieldChoice],
    sample: CsvSample,
    answers: dict[str, str],
    questions: list[Clarification] | None = None,
) -> ReadingOptions:
    """`options` with a person's answers applied: separators and unit of each amount field,
    date order, pattern, time zone, zone column and time column of the timestamp field. What
    only a person can say (which zone CST is) joins `questions` (`answered_timestamps`).

    Raises MappingError, in words, for a value that cannot work, and UnknownColumnError for a
    column the file does not have.
    """
    columns = {c.field: c.column for c in choices if c.column}
    amounts = answered_amounts(role, options.amounts, columns, answers)
    timestamps = answered_timestamps(role, options.timestamps, columns, sample, answers, questions)
    return options.model_copy(update={"amounts": amounts, "timestamps": timestamps})


def header_row_answer(value: str, file_name: str) -> int:
    """The line number a person's `header_row` answer gives for the file `file_name` (1 is
    the first line): what `infer_mapping` reads the file's sample again with.

    Raises MappingError, naming the file, for anything but a whole number of 1 or more
    (`3`, not `3.0`, `third` or `0`), so no guess is made about the line they meant.
    """
    text = value.strip()
    if not text.isascii() or not text.isdigit() or int(text) < 1:
        raise MappingError(
            f"{file_name}: header_row is the line number of the header, a whole number from 1 "
            f'(the first line), not "{value}"'
        )
    return int(text)
