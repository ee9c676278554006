"""The notes of a proposal and of a file's layout: every code has words, and inference drops
a note a person's answer settled by its code, never by its words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.data.ingest import inspect_csv
from agent.data.ingest.wording import LayoutCode
from agent.data.mapping import infer_mapping
from agent.data.mapping.dataset import _answered_note
from agent.data.mapping.wording import WORDS, ProposalCode
from agent.data.notes import Note, note, with_code
from agent.data.schema import Role
from agent.data.wording import words

# Each code with the params its producer gives it, and the words it is said in.
SAID: dict[str, tuple[dict[str, Any], str]] = {
    LayoutCode.UTF16: ({}, "read as UTF-16"),
    LayoutCode.CP1252: ({}, "not UTF-8: read as Windows-1252"),
    LayoutCode.MIXED_CP1252: (
        {},
        "not all UTF-8: the bytes that are not UTF-8 read as Windows-1252",
    ),
    LayoutCode.HEADER_LINE: (
        {"line": 5, "answered": True},
        "the header is line 5, as a person answered; the 4 line(s) above it (a title or "
        "notes) are not read",
    ),
    LayoutCode.ROWS_SWALLOWED: (
        {"file_name": "payments.csv", "cells": [(3, "description"), (9, "memo")]},
        "payments.csv: a cell holds line breaks and a whole row's worth of separators, e.g. "
        'row 3 ("description"), row 9 ("memo"): a quote may be missing there, and the rows '
        "inside that cell are read as its text, not as rows; check the file",
    ),
    ProposalCode.ZONE_AFTER_TIME: (
        {"column": "Date", "zones": ("CST", "Mars/Base")},
        '"Date" is read in the zone written after each time: CST -> US Central UTC-06:00 or '
        "China UTC+08:00 or Cuba UTC-05:00 (the file's timezone says which), Mars/Base -> no "
        "zone (its rows do not read)",
    ),
    ProposalCode.ZONE_COLUMN: (
        {"column": "Date", "time_column": "Time", "zone_column": "TimeZone", "zones": ["UTC"]},
        '"Date" with the time of day from "Time" is read in each row\'s zone; "TimeZone": '
        "UTC -> UTC+00:00",
    ),
    ProposalCode.NO_TIME_ZONE: (
        {"column": "created", "time_column": None},
        '"created" has no time zone: read as UTC; edit the mapping if the export uses local time',
    ),
    ProposalCode.DAY_MONTH_GUESSED: (
        {"column": "created", "pattern": "%d/%m/%Y"},
        '"created": every sampled date fits both day-first and month-first; read as %d/%m/%Y',
    ),
    ProposalCode.DAY_MONTH_SETTLED: (
        {"column": "created", "pattern": "%m/%d/%Y"},
        '"created": every sampled date fits both day-first and month-first; read as '
        "%m/%d/%Y, under which the other file's times fall near this file's",
    ),
    ProposalCode.MINOR_UNITS: (
        {"column": "amount"},
        '"amount" is in minor units (cents): matched amounts are 100 times the other file\'s',
    ),
    ProposalCode.CURRENCY_WRITTEN: (
        {"column": "Total", "mark": "€", "currency": "EUR"},
        'no currency column: every amount in "Total" is written with €, read as EUR',
    ),
    ProposalCode.CURRENCY_BY_OTHER_FILE: (
        {"column": "Total", "mark": "$", "other_file": "payments.csv", "currency": "USD"},
        'no currency column: every amount in "Total" is written with $, and every row of '
        "payments.csv is in USD, read as USD",
    ),
    ProposalCode.DECIMAL_BY_CURRENCY: (
        {"column": "Betrag", "decimal": ","},
        '"Betrag" has "," as its decimal mark: its amounts read both ways, and this way each '
        "has its currency's decimals",
    ),
    ProposalCode.DECIMAL_BY_OTHER_FILE: (
        {"column": "Betrag", "decimal": ","},
        '"Betrag" has "," as its decimal mark: its amounts read both ways, and this way they '
        "agree with the other file's",
    ),
    ProposalCode.ROW_KINDS: (
        {
            "column": "Type",
            "capture": ("charge", "payment"),
            "refunded": ("payment",),
            "refund": ("refund",),
            "ignore": (),
        },
        'row kinds from "Type": captures charge, payment (refunded); refunds refund',
    ),
    ProposalCode.BUDGET_SPENT: (
        {"seconds": 5.0},
        "the file is too large to compare all its columns' values within 5 s: the fields "
        "that have more than one candidate are asked",
    ),
}


def test_every_code_of_the_table_is_said() -> None:
    assert set(WORDS) == set(SAID) == {*LayoutCode, *ProposalCode}


@pytest.mark.parametrize("code", sorted(SAID))
def test_a_note_reads_the_same_after_the_caches_json(code: str) -> None:
    params, said = SAID[code]
    made = note(code, **params)
    kept = Note.from_json(json.loads(json.dumps(made.to_json())))  # tuples come back as lists
    assert words(made) == words(kept) == said


@pytest.mark.parametrize(
    ("code", "answer"),
    [
        (ProposalCode.DAY_MONTH_GUESSED, "date_order"),
        (ProposalCode.DAY_MONTH_GUESSED, "timestamp_pattern"),
        (ProposalCode.NO_TIME_ZONE, "timezone"),
        (ProposalCode.NO_TIME_ZONE, "timezone_column"),
    ],
)
def test_an_answered_note_is_known_by_its_code(code: str, answer: str) -> None:
    # No words at all: the code alone says what the note is about.
    assert _answered_note(Note(code), {answer: "x"})
    assert not _answered_note(Note(code), {"decimal": "x"})
    assert not _answered_note(Note(ProposalCode.MINOR_UNITS), {answer: "x"})


def test_the_day_month_note_goes_once_a_person_answers_the_order(tmp_path: Path) -> None:
    days = [(1, 2), (3, 4), (5, 6), (7, 8), (9, 10), (11, 12), (2, 3)]
    orders = tmp_path / "orders.csv"
    orders.write_text(
        "order_id,total,currency,created_at\n"
        + "".join(
            f"{1000 + i},10.00,USD,{m:02d}/{d:02d}/2025 10:00\n" for i, (m, d) in enumerate(days)
        )
    )
    payments = tmp_path / "payments.csv"
    payments.write_text(
        "payment_id,order_id,amount,currency,created\n"
        + "".join(
            f"p{i},{1000 + i},10.00,USD,2025-{m:02d}-{d:02d} 10:05:00\n"
            for i, (m, d) in enumerate(days)
        )
    )
    first, second = inspect_csv(orders, orders.name), inspect_csv(payments, payments.name)
    dated = (ProposalCode.DAY_MONTH_GUESSED, ProposalCode.DAY_MONTH_SETTLED)
    settled = infer_mapping(first, second).orders.notes
    assert [n.code for n in with_code(settled, *dated)] == [ProposalCode.DAY_MONTH_SETTLED]
    answered = infer_mapping(first, second, answers={Role.ORDERS: {"date_order": "MDY"}})
    assert with_code(answered.orders.notes, *dated) == []
    assert with_code(answered.orders.notes, ProposalCode.NO_TIME_ZONE)  # not answered: kept
