"""The reading options a person can set by name in an edit, with a help text for each.

An edit reads `ROLE.OPTION=VALUE` beside `ROLE.FIELD=COLUMN`; the edit parsers, the guard, the
help texts and the error messages all take the option names from `READING_OPTIONS`.
"""

from __future__ import annotations

# Reading options a person can set by name in an edit (`payments.id_pattern=#(\d+)`), with what
# each one does, for help texts and error messages.
ID_OPTIONS: dict[str, str] = {
    "id_pattern": "a regular expression with one capture group; the id is what it captures",
    "id_prefix": "text removed from the start of each id where present (e.g. WC-)",
    "id_suffix": "text removed from the end of each id where present",
    "id_strip_zeros": "yes to remove leading zeros from each id (00042 -> 42)",
    "id_ignore_case": "yes to compare ids without regard to case (SH4612862 is sh4612862)",
    "id_whole": (
        "yes when each reference is one whole id even where it holds / , ; or spaces "
        "(ZAM/2025/10/001), instead of a list of ids"
    ),
    "id_excel_numbers": (
        "yes to read ids a spreadsheet rewrote as numbers as the whole number they show "
        "(1042.0 and 1.042E+3 are 1042)"
    ),
}

# What each row of a payments file is (a capture, a refund, a row to ignore): see `RowKinds`.
KIND_OPTIONS: dict[str, str] = {
    "kinds_column": (
        "the column whose values say what each payment row is (default: the payment status "
        "column), e.g. Type"
    ),
    "kinds_capture": "comma-separated values of that column that are captures, e.g. Settled, Sale",
    "kinds_refund": (
        "comma-separated values that are refunds of an earlier capture (matched by payment id "
        "or order reference), e.g. Refunded, Credit"
    ),
    "kinds_ignore": (
        "comma-separated values of rows that are neither captures nor refunds (fees, payouts, "
        "pending memos), e.g. Fee, MerchantPayout"
    ),
    "kinds_refunded": (
        "comma-separated capture values that say the capture was refunded in full (a state of "
        "the capture row, not a refund row of its own), e.g. Refunded"
    ),
}

# What each value of an orders file's status column means: see `OrderStatuses`.
STATUS_OPTIONS: dict[str, str] = {
    "statuses_paid": "comma-separated order statuses that mean paid, e.g. Complete, Processing",
    "statuses_pending": "comma-separated order statuses that mean not paid yet, e.g. Pending",
    "statuses_voided": (
        "comma-separated order statuses that mean cancelled or failed (no money owed), "
        "e.g. Canceled"
    ),
    "statuses_refunded": "comma-separated order statuses that mean refunded in full, e.g. Closed",
    "statuses_partially_refunded": (
        "comma-separated order statuses that mean refunded in part, e.g. Partially Refunded"
    ),
}


# The amount fields of both roles: each can be given its own separators and unit.
_AMOUNT_FIELDS = ("order_amount", "captured_amount", "refunded_amount")

AMOUNT_OPTIONS: dict[str, str] = {
    "decimal": "the decimal mark of the file's amounts: . or , (decimal=, reads 1.234,50)",
    "thousands": (
        "the thousands separator of the file's amounts: none, comma, dot, apostrophe or space"
    ),
    "unit": "major (12.50) or minor (1250, in cents) for the file's amounts",
    **{
        f"{name}_{part}": f"the {part} of {name} only (as {part} above)"
        for name in _AMOUNT_FIELDS
        for part in ("decimal", "thousands", "unit")
    },
}

# A file has one timestamp field (orders: order_date, payments: captured_at): these read it.
TIME_OPTIONS: dict[str, str] = {
    "date_order": "the order of day, month and year in the file's dates: DMY, MDY or YMD",
    "timestamp_pattern": "the exact pattern of the file's timestamps, e.g. %d.%m.%Y %H:%M",
    "timezone": "the IANA time zone of timestamps written without one, e.g. Europe/Berlin",
    "timezone_column": (
        "a column giving each row's time zone (an IANA name, an offset such as +02:00, or an "
        "abbreviation such as CET or PDT)"
    ),
    "time_column": "a column holding the time of day when the timestamp column holds the date",
}

# Where a file's table starts: lines above the header (a title, a report period) are not read.
LAYOUT_OPTIONS: dict[str, str] = {
    "header_row": "the line number of the file's header row (1 is the first line), e.g. 3",
}

# Which file plays which role: answered on either role (`orders.orders_file=shop.csv`).
ROLE_OPTIONS: dict[str, str] = {
    "orders_file": "the name of the file that is the orders export (the other holds payments)",
}

# Every reading option a person can set by name in an edit (`ROLE.OPTION=VALUE`), beside the
# canonical fields (`ROLE.FIELD=COLUMN`); the edit parsers and the guard accept exactly these.
READING_OPTIONS: dict[str, str] = {
    **ID_OPTIONS,
    **KIND_OPTIONS,
    **STATUS_OPTIONS,
    **AMOUNT_OPTIONS,
    **TIME_OPTIONS,
    **LAYOUT_OPTIONS,
    **ROLE_OPTIONS,
}
