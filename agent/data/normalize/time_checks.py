"""Validation of the files' times: what a person must know about the capture window before
approving (no time to check it by, rows without one, zones that name two places)."""

from __future__ import annotations

import duckdb

from agent.data.normalize.codes import Code
from agent.data.normalize.load import table_name
from agent.data.normalize.report import ValidationReport
from agent.data.normalize.zones import AMBIGUOUS_ZONES
from agent.data.notes import note
from agent.data.schema import MAIN_AMOUNT, TIME_FIELD, DatasetMapping, Role
from agent.data.time_zones import ZONE_PLACES, zone_place
from agent.data.timestamp_formats import ZONE_SUFFIX


def check_times(
    con: duckdb.DuckDBPyConnection,
    report: ValidationReport,
    file_name: str,
    role: Role,
    mapping: DatasetMapping,
    keep: str,
) -> None:
    """A warning when the capture window cannot be checked: no column mapped to the file's
    time, or rows with an amount but no time (an unreadable time is warned about above).

    The window is optional, so neither stops an approval; but a person approving must know
    that reconciling will not flag a capture made weeks after its order.
    """
    field, amount = TIME_FIELD[role], MAIN_AMOUNT[role]
    column = mapping.columns.get(field)
    _check_zones(con, report, file_name, role, mapping)
    if column is None:
        report.warnings.append(note(Code.NO_TIME_COLUMN, file=file_name, field=field))
        return
    if amount not in mapping.columns:
        return
    row = con.execute(
        f"SELECT count(*), min(rowid + 1, 5) FROM {table_name(role)} "
        f"WHERE {amount}_filled AND NOT {field}_filled AND {keep}"
    ).fetchone()
    if row is None or not row[0]:
        return
    report.warnings.append(
        note(
            Code.ROWS_WITHOUT_TIME,
            file=file_name,
            count=int(row[0]),
            column=column,
            field=field,
            rows=list(row[1]),
        )
    )


def _check_zones(
    con: duckdb.DuckDBPyConnection,
    report: ValidationReport,
    file_name: str,
    role: Role,
    mapping: DatasetMapping,
) -> None:
    """A warning naming the abbreviations of a zone column (or of zones written after the time)
    that stand for more than one zone (`CST` is US Central and China Standard Time, 14 hours
    apart), with how they are read; none for those the mapping's zone settles (`zone_place`)."""
    field = TIME_FIELD[role]
    stamp = mapping.options.timestamps.get(field)
    if stamp is None or (stamp.zone_column is None and not stamp.pattern.endswith(ZONE_SUFFIX)):
        return
    written = con.execute(
        f"SELECT DISTINCT upper(trim({field}_zone)) FROM {table_name(role)} "
        f"WHERE {field}_zone IS NOT NULL LIMIT 1000"
    ).fetchall()
    found = {str(z) for (z,) in written} & AMBIGUOUS_ZONES.keys()
    ambiguous = sorted(z for z in found if zone_place(z, stamp.timezone) is None)
    if ambiguous:
        report.warnings.append(
            note(
                Code.AMBIGUOUS_ZONES,
                file=file_name,
                zone_column=stamp.zone_column,
                column=mapping.columns.get(field),
                zones=[[z, AMBIGUOUS_ZONES[z]] for z in ambiguous],
                role=role.value,
                examples=_examples(ambiguous),
            )
        )


def _examples(abbreviations: list[str]) -> list[str]:
    """The IANA zones that settle the first of `abbreviations`, e.g. `America/Chicago` and
    `Asia/Shanghai` for CST."""
    return [place[2] for place in ZONE_PLACES[abbreviations[0]]]
