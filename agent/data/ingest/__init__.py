"""Bytes to table: decide how an uploaded export is written, then read it whole with DuckDB.

Nothing here trusts a file name or a column position. The layout (encoding, delimiter, the line
the real header is on) is decided once per file from its first bytes; the whole file is then
read by DuckDB with exactly that layout, every cell as text, so that number and date formats are
decided later, per column, by `profile`. Every problem becomes a typed `InputFileError` that names
the file and, where it helps, the 1-based data row (the n-th record after the header; blank lines
are not records).

The parts, each in its own module:

- `layout`: `CsvLayout`, `CsvSample`, the header record, and the layout approved options give.
- `detect`: `inspect_csv`, which decides the layout (encoding, delimiter, preamble, header)
  from the first bytes and samples the first records, and `reheaded`, a sample read again with
  the header on the line a person gave (`header_row`).
- `chosen_header`: the records of a head read from the header line a person gave.
- `reader`: the DuckDB source file and `read_csv_sql` expression.
- `columnar`: `build_columns`, a whole file parsed once into text columns in Parquet (hashed and
  counted while it is parsed), `load_columns` and `read_table`.
- `counting`: `count_records`, the ledger's independent count of records.
- `diagnosis`: the typed, row-numbered error of the first record that breaks a layout.
- `digest`: `digest_and_utf8`, the sha256 that identifies a file's bytes, and whether they are
  all UTF-8.
"""

from __future__ import annotations

from agent.data.ingest.columnar import Columns, build_columns, load_columns, read_table
from agent.data.ingest.counting import count_records
from agent.data.ingest.detect import (
    DELIMITERS,
    HEAD_BYTES,
    SAMPLE_ROWS,
    SNIFF_RECORDS,
    inspect_csv,
    inspect_head,
    reheaded,
)
from agent.data.ingest.diagnosis import diagnose
from agent.data.ingest.digest import digest_and_utf8
from agent.data.ingest.layout import (
    MAX_CELL_BYTES,
    MAX_COLUMNS,
    CsvLayout,
    CsvSample,
    fallback_to_cp1252,
    layout_from_options,
)
from agent.data.ingest.reader import duckdb_source, read_csv_sql

__all__ = [
    "DELIMITERS",
    "HEAD_BYTES",
    "MAX_CELL_BYTES",
    "MAX_COLUMNS",
    "SAMPLE_ROWS",
    "SNIFF_RECORDS",
    "Columns",
    "CsvLayout",
    "CsvSample",
    "build_columns",
    "count_records",
    "diagnose",
    "digest_and_utf8",
    "duckdb_source",
    "fallback_to_cp1252",
    "inspect_csv",
    "inspect_head",
    "layout_from_options",
    "load_columns",
    "read_csv_sql",
    "read_table",
    "reheaded",
]
