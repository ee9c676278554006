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

from agent.data.normalize.expressions import (
    REFERENCE_SEPARATORS,
    key_sql,
    reference_tokens_sql,
    spreadsheet_number_sql,
    sql_text,
)
from agent.data.schema import IdReading, Mapping, Role

TIED_SHARES = 0.01
"""Readings this close that name the same orders (`differing_share`: zeros stripped, `#(\\d+)`
or `(\\d{3,})` out of `Order #1042`) are one reading: the first tried, the plainer, is taken.
Readings this close that name other orders are asked."""
MIN_SHARE_OF_ANY = 0.5
"""A reading must make this share of a prefix's or a suffix's references carry it to be tried."""
FREE_TEXT_SHARE = 0.5
"""References holding a space this often are free text: a pattern inside them is tried."""
_EQUALISING = {
    "ignore_case": "[a-zA-Z]",
    "strip_zeros": "(^|[^0-9])0[0-9]",
    "excel_numbers": "[0-9]\\.0|[0-9][eE]\\+?[0-9]",
}
"""The readings that only make more ids equal, each with what an id must show for it to matter."""
KEY_SAMPLE = 20_000
_PREFIX = "^#?\\s*([^0-9#\\s][^0-9]*)[0-9]"
_SUFFIX = "[0-9]([^0-9]+)$"
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
    several: int = 0
    """References that name several orders under this reading and did not under the proposed
    one (a date or an invoice number read as an order id): never proposed either."""

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


def references_met(con: duckdb.DuckDBPyConnection, mapping: Mapping, named_rows: str) -> Fix:
    """How many payment references name an order under `mapping`'s reading, of how many;
    the ones that do not are kept (`id_unmet`) for `better_readings`.

    `named_rows` is the SQL condition on the payment rows whose reference should name an order.
    """
    ord0 = mapping.orders.options.ids or IdReading()
    pay0 = mapping.payments.options.ids or IdReading()
    rows = f"FROM payments_rows WHERE order_id IS NOT NULL AND {named_rows}"
    total = _sum(con, f"SELECT count(*) {rows}")
    # The references that do not meet: one id that is no order key, or several ids not all
    # of which are (their tokens read here, for these rows only, as the engine reads them).
    con.execute(
        "CREATE OR REPLACE TEMP TABLE id_unmet AS SELECT p.order_id AS ref, count(*) AS n "
        f"FROM (SELECT order_id, ref_key, several_refs {rows}) p "
        "LEFT JOIN order_index k ON k.order_key = p.ref_key "
        "WHERE coalesce(p.several_refs, false) OR k.order_key IS NULL GROUP BY 1"
    )
    con.execute(
        "DELETE FROM id_unmet WHERE ref IN "
        f"(SELECT ref FROM ({_named('id_unmet', IdReading(), pay0)}))"
    )
    return Fix(ord0, pay0, total - _sum(con, "SELECT sum(n) FROM id_unmet"), total)


def better_readings(
    con: duckdb.DuckDBPyConnection,
    mapping: Mapping,
    current: Fix,
    named_rows: str,
    *,
    everywhere: bool,
) -> list[Fix]:
    """The readings that make more payment references name an order than `current` (from
    `references_met`), scored over the whole loaded files, the best first.

    With `everywhere`, a reference's pattern inside free text is tried whatever the references
    look like, as when the proposed reading meets on few of them; otherwise only the readings
    the references that do not meet show a reason for.
    """
    ord0, pay0, total = current.orders, current.payments, current.total
    rows = f"FROM payments_rows WHERE order_id IS NOT NULL AND {named_rows}"
    unmet = total - current.named
    if not unmet:
        return []
    # Order keys in no particular order (`order_index` is grouped): enough to see their form.
    con.execute(
        "CREATE OR REPLACE TEMP TABLE id_key_sample AS "
        f"SELECT order_key AS v, 1 AS n FROM order_index LIMIT {KEY_SAMPLE}"
    )
    tried: list[Fix] = []
    for name, shows in _EQUALISING.items():
        if (getattr(ord0, name) and getattr(pay0, name)) or not _shown(con, shows):
            continue
        pays = pay0.model_copy(update={name: True})
        named, merged, several = _score(
            con, "id_unmet", IdReading.model_validate({name: True}), pays
        )
        ords = ord0.model_copy(update={name: True})
        tried.append(Fix(ords, pays, current.named + named, total, merged, several))
    for extra, pays, touches in _reshaping(con, ord0, pay0, everywhere=everywhere):
        # The references it may change that meet now are scored again with the unmet ones.
        touched = (
            f"SELECT * FROM (SELECT order_id AS ref, count(*) AS n {rows} AND ({touches}) "
            "GROUP BY 1) ANTI JOIN id_unmet USING (ref) UNION ALL SELECT * FROM id_unmet"
        )
        con.execute(f"CREATE OR REPLACE TEMP TABLE id_touched AS {touched}")
        named, merged, several = _score(con, "id_touched", extra, pays)
        several -= _score(con, "id_touched", IdReading(), pay0)[2]
        again = _sum(con, "SELECT sum(n) FROM id_touched") - unmet
        ords = ord0.model_copy(update=extra.model_dump(exclude_defaults=True))
        tried.append(Fix(ords, pays, current.named - again + named, total, merged, several))
    better = [fix for fix in tried if fix.named > current.named]
    return sorted(better, key=lambda fix: -fix.named)


def merged_orders(con: duckdb.DuckDBPyConnection, current: Fix, fix: Fix) -> int:
    """How many order ids `fix` makes one with another over the whole orders file (`AB-7` and
    `ab-7` in any case, `WC-7` and `7` without a prefix): checked before a reading is
    proposed, since `better_readings` counts merges only among the keys references meet."""
    changed = {
        name: value
        for name, value in fix.orders.model_dump().items()
        if getattr(current.orders, name) != value and name != "pattern"
    }
    if not changed:
        return 0
    key = _lean_key(IdReading.model_validate(changed))
    return _sum(con, f"SELECT count(*) - count(DISTINCT {key}) FROM order_index")


def _shown(con: duckdb.DuckDBPyConnection, pattern: str) -> bool:
    """True when some reference that does not meet, or some order key of a sample, holds
    `pattern`: a reading about what no id shows is not tried."""
    found = sql_text(pattern)
    row = con.execute(
        f"SELECT EXISTS (SELECT 1 FROM id_unmet WHERE regexp_matches(ref, {found})) "
        f"OR EXISTS (SELECT 1 FROM id_key_sample WHERE regexp_matches(v, {found}))"
    ).fetchone()
    return bool(row and row[0])


def _reshaping(
    con: duckdb.DuckDBPyConnection, ord0: IdReading, pay0: IdReading, *, everywhere: bool
) -> list[tuple[IdReading, IdReading, str]]:
    """The readings that change how references split or what they are compared with, where
    the files show a reason to try them (a shared prefix, separators, free text): each as the
    change to the order keys, the payments' whole reading, and the SQL condition on the
    payment rows whose reference it may read otherwise."""
    found: list[tuple[IdReading, IdReading, str]] = []
    row = con.execute(
        "SELECT sum(n) FILTER (WHERE regexp_matches(trim(ref), '[,;|/&+]|\\S\\s+\\S')), "
        "sum(n) FILTER (WHERE regexp_matches(trim(ref), '\\S\\s+\\S')), sum(n) FROM id_unmet"
    ).fetchone()
    assert row is not None
    separated, spaced, unmet = (int(v or 0) for v in row)
    plain = IdReading()
    if not pay0.pattern and not pay0.whole and separated * 2 >= unmet:
        found.append((plain, pay0.model_copy(update={"whole": True}), "several_refs"))
    refs = "SELECT trim(ref) AS v, n FROM id_unmet"
    keys = "SELECT v, n FROM id_key_sample"
    for side, where in (("prefix", _PREFIX), ("suffix", _SUFFIX)):
        text = _most_common(con, refs, where)
        if text and not getattr(pay0, side):
            touches = f"contains(order_id, {sql_text(text)})"
            found.append((plain, pay0.model_copy(update={side: text}), touches))
        text = _most_common(con, keys, where)
        if text and not getattr(ord0, side) and not _mostly_hold(con, text):
            # The order keys carry it and the references that do not meet mostly lack it
            # (`WC-1042` against `1042`): read without it, every reference holding it is
            # read again.
            touches = f"contains(order_id, {sql_text(text)})"
            found.append((IdReading.model_validate({side: text}), pay0, touches))
    if not pay0.pattern and (everywhere or spaced * 2 >= unmet):
        found.extend((plain, pay0.model_copy(update={"pattern": p}), "true") for p in _PATTERNS)
    return found


def _mostly_hold(con: duckdb.DuckDBPyConnection, text: str) -> bool:
    """Whether most references that do not meet hold `text`, in any case (`sh1042` holds the
    orders' `SH`): removing it from the order keys would not make them meet."""
    share = con.execute(
        "SELECT sum(n) FILTER (WHERE contains(lower(ref), lower(?))) / sum(n) FROM id_unmet",
        [text],
    ).fetchone()
    return bool(share and share[0] is not None and float(share[0]) >= MIN_SHARE_OF_ANY)


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


def _named(refs: str, extra: IdReading, pays: IdReading) -> str:
    """The references of `refs` every id of which names an order when the order keys are
    read further by `extra` and the references by `pays`."""
    tokens = f"SELECT ref, unnest({_tokens_sql('ref', pays)}) AS tok FROM {refs}"
    key = "order_key" if extra.is_plain else _lean_key(extra)
    return (
        f"SELECT t.ref FROM ({tokens}) t LEFT JOIN (SELECT {key} AS key FROM order_index) k "
        "ON k.key = t.tok GROUP BY t.ref HAVING bool_and(k.key IS NOT NULL)"
    )


def _tokens_sql(value: str, reading: IdReading) -> str:
    """The order ids a reference names under `reading`, as the engine reads them: a reference
    of one part is its own id (`ref_key`, digits or not: `GWCOYZKHK`), a reference with
    separators the parts `reference_tokens_sql` reads."""
    if reading.pattern:
        return reference_tokens_sql(value, reading)
    one = f"NOT regexp_matches({value}, '{REFERENCE_SEPARATORS}')"
    whole = f"list_filter([{key_sql(value, reading)}], lambda t: t IS NOT NULL)"
    return f"(CASE WHEN {one} THEN {whole} ELSE {reference_tokens_sql(value, reading)} END)"


def _orders_named(refs: str, extra: IdReading, pays: IdReading) -> str:
    """Each reference of `refs` with the orders it names (their head rows, sorted), when the
    order keys are read further by `extra` and the references by `pays`; a reference naming
    an id that is no order has a NULL among them."""
    key = "order_key" if extra.is_plain else _lean_key(extra)
    tokens = f"SELECT ref, unnest({_tokens_sql('ref', pays)}) AS tok FROM {refs}"
    return (
        f"SELECT t.ref, list_sort(list(k.r)) AS orders, bool_and(k.r IS NOT NULL) AS all_named "
        f"FROM ({tokens}) t LEFT JOIN (SELECT {key} AS key, min(r) AS r FROM order_index "
        "GROUP BY 1) k ON k.key = t.tok GROUP BY t.ref"
    )


def _score(
    con: duckdb.DuckDBPyConnection, refs: str, extra: IdReading, pays: IdReading
) -> tuple[int, int, int]:
    """The rows of `refs` every id of which names an order when the order keys are read
    further by `extra` and the references by `pays`; how many order ids `extra` merges among
    the keys those ids meet; and how many of those rows name several orders."""
    tokens = f"SELECT ref, unnest({_tokens_sql('ref', pays)}) AS tok FROM {refs}"
    key = "order_key" if extra.is_plain else _lean_key(extra)
    row = con.execute(
        f"""
        WITH t AS MATERIALIZED ({tokens}),
        k AS MATERIALIZED (SELECT {key} AS key, count(*) AS ids FROM order_index
                           WHERE {key} IN (SELECT tok FROM t) GROUP BY 1),
        named AS (SELECT t.ref, count(DISTINCT t.tok) AS ids FROM t LEFT JOIN k ON k.key = t.tok
                  GROUP BY t.ref HAVING bool_and(k.key IS NOT NULL))
        SELECT (SELECT sum(n) FROM {refs} SEMI JOIN named USING (ref)),
               (SELECT sum(ids - 1) FROM k),
               (SELECT sum(n) FROM {refs} SEMI JOIN (SELECT ref FROM named WHERE ids > 1)
                USING (ref))
        """
    ).fetchone()
    assert row is not None
    return int(row[0] or 0), int(row[1] or 0), int(row[2] or 0)


def differing_share(
    con: duckdb.DuckDBPyConnection, named_rows: str, first: Fix, second: Fix, current: Fix
) -> float:
    """The share of references (of a sample) that `first` and `second` read as naming other
    orders: two readings that each make as many references meet are one reading only when
    they name the same orders (`#(\\d+)` and `(\\d{3,})` in `Order #1042 - 2 items`), not
    when one takes an invoice number and the other the order's (`PO1000 invoice #1001`)."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE id_pair_sample AS SELECT order_id AS ref, 1 AS n "
        f"FROM payments_rows WHERE order_id IS NOT NULL AND {named_rows} "
        f"USING SAMPLE {KEY_SAMPLE} ROWS"
    )
    reads = []
    for fix in (first, second):
        extra = {
            name: value
            for name, value in fix.orders.model_dump().items()
            if getattr(current.orders, name) != value and name != "pattern"
        }
        reads.append(_orders_named("id_pair_sample", IdReading.model_validate(extra), fix.payments))
    row = con.execute(
        f"SELECT count(*) FILTER (WHERE a.orders IS DISTINCT FROM b.orders), count(*) "
        f"FROM ({reads[0]}) a FULL JOIN ({reads[1]}) b USING (ref)"
    ).fetchone()
    assert row is not None
    return int(row[0]) / int(row[1]) if row[1] else 0.0


def _lean_key(extra: IdReading) -> str:
    """`order_key` (an id already read as the proposed reading reads it) read further by
    `extra`, as `key_sql` would, with the cheap test first: every order key is read."""
    key = "order_key"
    if extra.excel_numbers:
        key = (
            f"(CASE WHEN contains({key}, '.') OR contains({key}, 'E') OR contains({key}, 'e') "
            f"THEN {spreadsheet_number_sql(key)} ELSE {key} END)"
        )
    if extra.ignore_case:
        key = f"lower({key})"
    if extra.prefix:
        text = sql_text(extra.prefix)
        cut = f"substr({key}, {len(extra.prefix) + 1})"
        key = f"(CASE WHEN prefix({key}, {text}) THEN {cut} ELSE {key} END)"
    if extra.suffix:
        text = sql_text(extra.suffix)
        cut = f"left({key}, length({key}) - {len(extra.suffix)})"
        key = f"(CASE WHEN suffix({key}, {text}) THEN {cut} ELSE {key} END)"
    if extra.strip_zeros:
        cut = f"coalesce(NULLIF(ltrim({key}, '0'), ''), '0')"
        key = f"(CASE WHEN prefix({key}, '0') THEN {cut} ELSE {key} END)"
    return key


def _sum(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    row = con.execute(sql).fetchone()
    return int(row[0] or 0) if row is not None else 0
