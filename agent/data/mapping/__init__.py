"""Mapping inference: which file is which, which column feeds which field, how to read values.

Inference works from headers and from values, never from a vendor's name or a column position.

- Headers are matched to the aliases of `schema.SCHEMA` after folding (case, accents, spacing,
  punctuation, API-style names, articles such as `de`/`do`, "incl./excl. tax" phrases), so
  `Währung`, `Nº de pedido`, `Order Total (inc tax)` and `order_id (metadata)` all read.
- Values give each column's kind and format (numbers, decimal mark, dates and their day/month
  order, currency codes, identifiers), uniqueness, and the overlap of order references between
  the two files; matched amounts decide major or minor units; a file without a currency column
  gets the currency its amounts are written in (`€89.90`), or the other file's where the symbol
  alone cannot tell (`$`).
- Two close candidates for a required field are settled by the data where it can: amount
  columns equal on every successful row are one reading (`amount` and `amount_captured`), a
  column empty or zero on successful rows captured nothing, a column under which (almost) no
  order matches while another matches (almost) all is ruled out, and two id columns that tell
  the rows apart alike are interchangeable.

Every field gets a confidence and its alternatives; when a required field still has two
plausible columns, or none, the result carries a clarification naming the field, the question
and the choices, and no mapping.

Where things are:

- `infer` - `infer_mapping`, the entry point: the steps in order.
- `ambiguity` - the ambiguity rule: when inference stops guessing and asks (every question).
- `proposal` - what inference returns: `Proposal`, `DatasetProposal`, `FieldChoice`, ...
- `headers` - header folding (`normalize_header`) and header scores (`header_score`).
- `candidates` - scoring the columns that could feed each field; key overlap across files.
- `evidence` - what sampled values say when two columns both fit; amount agreement.
- `roles` - which file is the orders export and which the payments export.
- `dataset` - one file's proposal: a column per field, reading options, row kinds.
- `readings` - a file's reading options, from values and then from a person's answers.
- `amounts` - number format and major/minor units of amount columns.
- `timestamps` - date/time pattern, day/month order and time zone of timestamp columns.
- `default_currency` - the currency of a file without a currency column.
- `row_kinds` - which payment rows are captures, refunds, or rows to ignore.
"""

from agent.data.mapping.ambiguity import AMBIGUITY_MARGIN, ROLE_MARGIN
from agent.data.mapping.candidates import MIN_SCORE
from agent.data.mapping.headers import header_score, normalize_header
from agent.data.mapping.infer import Comparisons, infer_mapping
from agent.data.mapping.proposal import (
    Candidate,
    Clarification,
    DatasetProposal,
    FieldChoice,
    Proposal,
)
from agent.data.mapping.readings import reading_from_answers
from agent.data.mapping.roles import assign_roles, role_of, swap_from_answers
from agent.data.mapping.row_kinds import row_kinds

__all__ = [
    "AMBIGUITY_MARGIN",
    "MIN_SCORE",
    "ROLE_MARGIN",
    "Candidate",
    "Clarification",
    "Comparisons",
    "DatasetProposal",
    "FieldChoice",
    "Proposal",
    "assign_roles",
    "header_score",
    "infer_mapping",
    "normalize_header",
    "reading_from_answers",
    "role_of",
    "row_kinds",
    "swap_from_answers",
]
