"""The canonical schema and the mapping that reads a file into it.

A mapping says, per role, which source column feeds which canonical field and how to read the
values (the reading options). It is what a person approves, so it is an immutable value whose
canonical form (`canonical()`) has no floats and feeds the mapping digest.

The parts, each in its own module:

- `roles`: `Role`, the part a file plays (orders or payments).
- `fields`: the canonical fields of each role (`SCHEMA`, `FieldSpec`, `spec`); `words` holds
  the header vocabularies several fields share.
- `readings`: how values are read (`AmountReading`, `TimestampReading`, `IdReading`,
  `RowKinds`) and `ReadingOptions`, everything about reading one file.
- `options`: the reading options a person can set by name in an edit (`READING_OPTIONS`).
- `mapping`: `DatasetMapping` and `Mapping`, the value a person approves.
"""

from __future__ import annotations

from agent.data.schema.fields import MAIN_AMOUNT, SCHEMA, TIME_FIELD, FieldKind, FieldSpec, spec
from agent.data.schema.mapping import DatasetMapping, Mapping
from agent.data.schema.options import (
    AMOUNT_OPTIONS,
    ID_OPTIONS,
    KIND_OPTIONS,
    READING_OPTIONS,
    ROLE_OPTIONS,
    STATUS_OPTIONS,
    TIME_OPTIONS,
)
from agent.data.schema.readings import (
    AmountReading,
    IdReading,
    OrderStatuses,
    ReadingOptions,
    RowKinds,
    TimestampReading,
    kind_word,
)
from agent.data.schema.roles import Role

__all__ = [
    "AMOUNT_OPTIONS",
    "ID_OPTIONS",
    "KIND_OPTIONS",
    "MAIN_AMOUNT",
    "READING_OPTIONS",
    "ROLE_OPTIONS",
    "SCHEMA",
    "STATUS_OPTIONS",
    "TIME_FIELD",
    "TIME_OPTIONS",
    "AmountReading",
    "DatasetMapping",
    "FieldKind",
    "FieldSpec",
    "IdReading",
    "Mapping",
    "OrderStatuses",
    "ReadingOptions",
    "Role",
    "RowKinds",
    "TimestampReading",
    "kind_word",
    "spec",
]
