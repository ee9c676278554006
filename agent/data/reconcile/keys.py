"""The keys a step's work is kept and found again under: a file's validation report, the pair
of files a kept workspace read, and each table loading a file under a mapping makes."""

from __future__ import annotations

from agent.data.ingest.columnar import Columns
from agent.data.normalize.memo import memo_key
from agent.data.policy import Policy
from agent.data.schema import SCHEMA, Mapping, Role


def validation_key(role: Role, columns: Columns, mapping: Mapping, policy: Policy) -> str:
    """The key a file's validation report is remembered under: its columns, the name it was
    uploaded under (the report names it), its part of the mapping that is checked and the
    policy it was checked under."""
    return memo_key(
        "file",
        policy.version,
        role.value,
        columns.parquet.name,
        columns.layout.file_name,
        _checked_reading(role, mapping),
    )


def load_keys(columns: dict[Role, Columns], mapping: Mapping) -> tuple[str, dict[Role, str]]:
    """The key of the pair of files (their columns) and, by role, of the table loading the
    file under `mapping` makes: a kept table is used only under the same key."""
    files = memo_key("files", [columns[role].parquet.name for role in Role])
    loads = {
        role: memo_key(
            "load",
            role.value,
            columns[role].parquet.name,
            _checked_reading(role, mapping),
        )
        for role in Role
    }
    return files, loads


def id_keys(mapping: Mapping) -> dict[Role, str]:
    """By role, the key of the id reading a loaded table's join keys were read under: a table
    loaded under another id reading only has its keys read again (`normalize.rekey`)."""
    found = {}
    for role in Role:
        ids = mapping.for_role(role).options.ids
        found[role] = memo_key("ids", role.value, ids.model_dump(mode="json") if ids else None)
    return found


def _checked_reading(role: Role, mapping: Mapping) -> dict[str, object]:
    """`role`'s part of the mapping as far as its checks and its loaded table depend on it:
    which column a text field (a customer's name) reads is not checked and not reconciled, so
    an edit of it alone validates and loads nothing again (that the column exists is checked
    on every validation). The id reading is left out: no check of a file reads the join keys
    (the gates do, under `join_fields`), and a loaded table's keys are read again in place."""
    reading = mapping.for_role(role).model_dump(mode="json")
    reading["options"].pop("ids", None)  # the join keys: re-read in place (`id_keys`)
    text = {spec.name for spec in SCHEMA[role] if spec.kind == "text"}
    reading["columns"] = {
        name: ("(a text field)" if name in text else column)
        for name, column in reading["columns"].items()
    }
    return reading


def join_fields(mapping: Mapping) -> dict[str, object]:
    """What the gates read of a mapping: the fields and readings that make the join keys."""
    orders, payments = mapping.orders, mapping.payments
    amount = orders.options.amounts.get("order_amount")
    return {
        "orders": {
            "order_id": orders.columns.get("order_id"),
            "order_amount": orders.columns.get("order_amount"),
            "amount": amount.model_dump(mode="json") if amount else None,
            "ids": orders.options.ids.model_dump(mode="json") if orders.options.ids else None,
        },
        "payments": {
            "order_id": payments.columns.get("order_id"),
            "ids": payments.options.ids.model_dump(mode="json") if payments.options.ids else None,
        },
    }
