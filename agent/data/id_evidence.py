"""The id reading the files show: other readings of the ids that join the files, each scored
over the whole loaded files by how many payment references name an order under it.

A reading is what `IdReading` can say on either side: ids compared in any case, leading zeros,
the numbers a spreadsheet wrote (`1042.0`), a reference read whole with its separators, a prefix
or suffix, the reference inside free text. Each is scored in DuckDB on the tables the validation
already loaded: references that name an order under the proposed reading stay named under the
readings that only make more ids equal (case, zeros, spreadsheet numbers), so those are scored on
the references that do not meet yet; the others change how references split or what they are
compared with, and are scored on every reference.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

import duckdb

from agent.data.normalize.expressions import key_sql, reference_tokens_sql, sql_text
from agent.data.schema import IdReading, Mapping, Role

TIED_SHARES = 0.01
"""Readings this close name the same orders (zeros stripped, `#(\\d+)` or `(\\d{3,})` out of
`Order #1042`): the first tried, the plainer, is taken."""
MIN_SHARE_OF_ANY = 0.5
"""A reading must make this share of a prefix's or a suffix's references carry it to be tried."""
FREE_TEXT_SHARE = 0.5
"""References holding a space this often are free text: a pattern inside them is tried."""
_EQUALISING = ("ignore_case", "strip_zeros", "excel_numbers")
_PATTERNS = (r"#\s*(\d+)", r"(\d{3,})")
_WORDS = {
    "ignore_case": "ids compared in any case",
    "strip_zeros": "leading zeros removed",
    "excel_numbers": "ids a spreadsheet rewrote read as whole numbers (1042.0 is 1042)",
    "whole": "each reference read as one id, separators and all",
}


@dataclass(frozen=True)
class Fix:
    """A reading of the ids (orders' and payments') and how many references name an order
    under it: `named` of `total` payment rows with a reference."""

    orders: IdReading
    payments: IdReading
    named: int
    total: int
    merged: int = 0
    """Distinct order ids that this reading makes one (`AB-7` and `ab-7` in any case): such a
    reading is named to the person, never proposed in place of theirs."""

    @property
    def share(self) -> float:
        """The share of references that name an order under this reading."""
        return self.named / self.total if self.total else 0.0

    def changes(self, mapping: Mapping) -> dict[Role, dict[str, object]]:
        """The options this reading sets that `mapping`'s does not, per role."""
        found: dict[Role, dict[str, object]] = {}
        for role, reading in ((Role.ORDERS, self.orders), (Role.PAYMENTS, self.payments)):
            base = (mapping.for_role(role).options.ids or IdReading()).model_dump()
            changed = {k: v for k, v in reading.model_dump().items() if base.get(k) != v}
            if changed:
                found[role] = changed
        return found

    def answers(self, mapping: Mapping) -> dict[str, dict[str, str]]:
        """The reading as a person's answers (role -> reading option -> value), as an edit."""
        return {
            role.value: {f"id_{name}": _option_text(value) for name, value in changed.items()}
            for role, changed in self.changes(mapping).items()
        }

    def edit(self, mapping: Mapping) -> str:
        """The edit a person types (`payments.id_prefix=WC-`), quoted for a shell-like line."""
        return " ".join(
            f"{role}.{name}={shlex.quote(value)}"
            for role, options in self.answers(mapping).items()
            for name, value in options.items()
        )

    def describe(self, mapping: Mapping) -> str:
        """The reading in words (`payments: prefix 'WC-' removed; ids compared in any case`)."""
        parts = []
        for role, changed in self.changes(mapping).items():
            said = []
            for name, value in changed.items():
                if name in ("prefix", "suffix"):
                    said.append(f"{name} {value!r} removed" if value else f"no {name} removed")
                elif name == "pattern":
                    said.append(f"the id is what {value!r} captures" if value else "no pattern")
                else:
                    said.append(_WORDS[name] if value else f"not {_WORDS[name]}")
            parts.append(f"{role.value}: {', '.join(said)}")
        return "; ".join(parts)


def _option_text(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "" if value is None else str(value)


@dataclass(frozen=True)
class Scores:
    """The proposed reading's figure and every other reading that names more, the best first."""

    current: Fix
    better: list[Fix]


def score_readings(
    con: duckdb.DuckDBPyConnection, mapping: Mapping, named_rows: str, *, everywhere: bool
) -> Scores:
    """The readings that make more payment references name an order than `mapping`'s, scored
    over the whole loaded files (`order_index`, `payments_rows`).

    `named_rows` is the SQL condition on the payment rows whose reference should name an order.
    With `everywhere`, the readings that change how references split (a pattern, a prefix, a
    reference read whole) are tried too, as when the proposed reading meets on few references;
    otherwise those only where the references that do not meet show them.
    """
    ord0 = mapping.orders.options.ids or IdReading()
    pay0 = mapping.payments.options.ids or IdReading()
    rows = f"FROM payments_rows WHERE order_id IS NOT NULL AND {named_rows}"
    total = _sum(con, f"SELECT count(*) {rows}")
    # The references that may not meet: one id that is no order key, or several ids (whose
    # tokens are read here, for these rows only, as the gate reads them).
    con.execute(
        "CREATE OR REPLACE TEMP TABLE id_unmet AS SELECT order_id AS ref, count(*) AS n "
        f"{rows} AND (coalesce(several_refs, false) OR ref_key IS NULL "
        "OR ref_key NOT IN (SELECT order_key FROM order_index)) GROUP BY 1"
    )
    unmet = _sum(con, "SELECT sum(n) FROM id_unmet")
    met = total - unmet
    current = Fix(ord0, pay0, met + _score(con, "id_unmet", IdReading(), pay0)[0], total)
    if current.named == total:
        return Scores(current, [])
    tried: list[Fix] = []
    for name in _EQUALISING:
        if getattr(ord0, name) and getattr(pay0, name):
            continue
        pays = pay0.model_copy(update={name: True})
        named, merged = _score(con, "id_unmet", IdReading.model_validate({name: True}), pays)
        ords = ord0.model_copy(update={name: True})
        tried.append(Fix(ords, pays, met + named, total, merged))
    reshaping = _reshaping(con, ord0, pay0, everywhere=everywhere)
    if reshaping:
        refs = f"SELECT order_id AS ref, count(*) AS n {rows} GROUP BY 1"
        con.execute(f"CREATE OR REPLACE TEMP TABLE id_refs AS {refs}")
    for extra, pays in reshaping:
        named, merged = _score(con, "id_refs", extra, pays)
        ords = ord0.model_copy(update=extra.model_dump(exclude_defaults=True))
        tried.append(Fix(ords, pays, named, total, merged))
    better = [fix for fix in tried if fix.named > current.named]
    return Scores(current, sorted(better, key=lambda fix: -fix.named))


def _reshaping(
    con: duckdb.DuckDBPyConnection, ord0: IdReading, pay0: IdReading, *, everywhere: bool
) -> list[tuple[IdReading, IdReading]]:
    """The readings that change how references split or what they are compared with, where
    the files show a reason to try them (a shared prefix, separators, free text): each as the
    change to the order keys and the payments' whole reading."""
    found: list[tuple[IdReading, IdReading]] = []
    row = con.execute(
        "SELECT sum(n) FILTER (WHERE regexp_matches(trim(ref), '[,;|/&+]|\\S\\s+\\S')), "
        "sum(n) FILTER (WHERE regexp_matches(trim(ref), '\\S\\s+\\S')), sum(n) FROM id_unmet"
    ).fetchone()
    assert row is not None
    separated, spaced, unmet = (int(v or 0) for v in row)
    plain = IdReading()
    if not pay0.pattern and not pay0.whole and separated * 2 >= unmet:
        found.append((plain, pay0.model_copy(update={"whole": True})))
    keys = "SELECT order_key AS v, 1 AS n FROM order_index USING SAMPLE 20000 ROWS"
    for side, where in (("prefix", "^#?\\s*([^0-9]+)[0-9]"), ("suffix", "[0-9]([^0-9]+)$")):
        text = _most_common(con, "SELECT trim(ref) AS v, n FROM id_unmet", where)
        if text and not getattr(pay0, side):
            found.append((plain, pay0.model_copy(update={side: text})))
        text = _most_common(con, keys, where)
        if text and not getattr(ord0, side):
            found.append((IdReading.model_validate({side: text}), pay0))
    if not pay0.pattern and (everywhere or spaced * 2 >= unmet):
        found.extend((plain, pay0.model_copy(update={"pattern": p})) for p in _PATTERNS)
    return found


def _most_common(con: duckdb.DuckDBPyConnection, values: str, where: str) -> str | None:
    """The text `where` captures that most values share, if at least half of them do."""
    row = con.execute(
        f"SELECT t, c, total FROM (SELECT regexp_extract(v, {sql_text(where)}, 1) AS t, "
        f"sum(n) AS c, sum(sum(n)) OVER () AS total FROM ({values}) GROUP BY 1) "
        "WHERE t <> '' ORDER BY c DESC, t LIMIT 1"
    ).fetchone()
    if row is None or float(row[1]) < MIN_SHARE_OF_ANY * float(row[2]):
        return None
    return str(row[0]).strip() or None


def _score(
    con: duckdb.DuckDBPyConnection, refs: str, extra: IdReading, pays: IdReading
) -> tuple[int, int]:
    """The rows of `refs` every id of which names an order when the order keys are read
    further by `extra` and the references by `pays`; and how many order ids `extra` merges
    among the keys those ids meet."""
    tokens = f"SELECT ref, unnest({reference_tokens_sql('ref', pays)}) AS tok FROM {refs}"
    key = "order_key" if extra.is_plain else key_sql("order_key", extra)
    row = con.execute(
        f"""
        WITH t AS MATERIALIZED ({tokens}),
        k AS MATERIALIZED (SELECT {key} AS key, count(*) AS ids FROM order_index
                           WHERE {key} IN (SELECT tok FROM t) GROUP BY 1),
        named AS (SELECT t.ref FROM t LEFT JOIN k ON k.key = t.tok
                  GROUP BY t.ref HAVING bool_and(k.key IS NOT NULL))
        SELECT (SELECT sum(n) FROM {refs} SEMI JOIN named USING (ref)),
               (SELECT sum(ids - 1) FROM k)
        """
    ).fetchone()
    assert row is not None
    return int(row[0] or 0), int(row[1] or 0)


def _sum(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    row = con.execute(sql).fetchone()
    return int(row[0] or 0) if row is not None else 0
