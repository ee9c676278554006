"""What the sampled values say when two columns both fit a field.

`Evidence` answers questions about one file's sampled rows (do two amount columns agree, is a
column empty on successful rows, do two id columns tell the rows apart alike), and
`apply_amount_agreement` records, per amount candidate, how often it equals the other file's
amounts for the same order. The ambiguity rule (`ambiguity.settle`) uses both to settle close
candidates before it asks a person.

Both are bounded (see `bounds`): each column's amounts are read once, only the best
`COMPARED_CANDIDATES` amount candidates are measured against the other file, and the `budget`
says when to stop comparing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from agent.data.ingest import CsvSample
from agent.data.mapping.bounds import COMPARED_CANDIDATES, Budget
from agent.data.mapping.candidates import MIN_SCORE, FieldCandidates, Scored
from agent.data.profile import (
    ColumnProfile,
    column_values,
    normalize_key,
    read_amounts,
    reference_tokens,
    same_partition,
    success_rows,
)
from agent.data.schema import Role

_EMPTY_SHARE = 0.9
_AGREEMENT_MIN_ORDERS = 3


@dataclass
class Evidence:
    """What one file's sampled rows say, for choosing between columns that both fit a field.

    `rows` are the rows amounts are compared on: for payments the rows whose status says the
    money moved (a failed attempt captures nothing, so its amounts prove nothing), else all rows.
    """

    sample: CsvSample
    profiles: dict[str, ColumnProfile]
    rows: list[int]
    successful: bool
    budget: Budget
    _amounts: dict[str, list[Decimal | None]] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def of(
        cls,
        role: Role,
        sample: CsvSample,
        profiles: list[ColumnProfile],
        scored: FieldCandidates,
        budget: Budget,
    ) -> Evidence:
        """The evidence of `sample`, with the successful rows its likeliest status column names."""
        status_field = "payment_status" if role is Role.PAYMENTS else "order_status"
        status = next((c for c in scored.get(status_field, []) if c.score >= MIN_SCORE), None)
        rows = None
        if role is Role.PAYMENTS and status is not None:
            rows = success_rows(column_values(sample, status.column))
        everything = list(range(len(sample.rows)))
        return cls(sample, {p.name: p for p in profiles}, rows or everything, bool(rows), budget)

    @property
    def where(self) -> str:
        """The rows compared, in words."""
        return "successful row" if self.successful else "row"

    def amounts(self, column: str) -> list[Decimal | None]:
        """The values of an amount column, read with the number format of its profile (once)."""
        if column not in self._amounts:
            fmt = self.profiles[column].number_format
            self._amounts[column] = read_amounts(column_values(self.sample, column), fmt)
        return self._amounts[column]

    def agree(self, first: str, second: str) -> bool:
        """Whether two amount columns hold the same number on every compared row."""
        a, b = self.amounts(first), self.amounts(second)
        pairs = [(a[i], b[i]) for i in self.rows if a[i] is not None or b[i] is not None]
        return bool(pairs) and all(x == y for x, y in pairs)

    def empty(self, column: str) -> bool:
        """Whether an amount column is empty or zero on (nearly) every compared row."""
        values = self.amounts(column)
        filled = sum(1 for i in self.rows if values[i])
        return filled <= (1 - _EMPTY_SHARE) * len(self.rows)

    def interchangeable(self, first: str, second: str) -> bool:
        """Whether two id columns tell the sampled rows apart in the same way."""
        return same_partition(column_values(self.sample, first), column_values(self.sample, second))

    def same_orders(self, first: str, second: str) -> bool:
        """Whether two reference columns name the same orders on every sampled row."""
        pairs = zip(
            column_values(self.sample, first), column_values(self.sample, second), strict=True
        )
        return all(reference_tokens(a) == reference_tokens(b) for a, b in pairs)


def apply_amount_agreement(
    scored: dict[Role, FieldCandidates], evidence: dict[Role, Evidence]
) -> None:
    """Record, per amount candidate, how often it equals the other file's amounts for the same
    order: order totals against the sum of the successful payments naming the order, and each
    payment amount column against the order totals.

    Used only to rule out a column under which (almost) nothing would match while another
    column matches (almost) everything: never to prefer the column that hides differences.
    Only the best `COMPARED_CANDIDATES` of each side are measured; the others, and every
    candidate once the budget is spent, stay unmeasured (-1).
    """
    orders, payments = evidence[Role.ORDERS], evidence[Role.PAYMENTS]
    keys, refs = scored[Role.ORDERS]["order_id"], scored[Role.PAYMENTS]["order_id"]
    totals = scored[Role.ORDERS]["order_amount"][:COMPARED_CANDIDATES]
    captures = scored[Role.PAYMENTS]["captured_amount"][:COMPARED_CANDIDATES]
    if not (keys and refs and totals and captures) or orders.budget.exhausted():
        return
    order_rows: dict[str, int] = {}
    for i, key in enumerate(column_values(orders.sample, keys[0].column)):
        order_rows.setdefault(normalize_key(key), i)
    paid: dict[str, list[int]] = {}
    references = column_values(payments.sample, refs[0].column)
    for i in payments.rows:
        tokens = reference_tokens(references[i])
        if len(tokens) == 1 and tokens[0] in order_rows:
            paid.setdefault(tokens[0], []).append(i)

    def share(order_values: list[Decimal | None], pay_values: list[Decimal | None]) -> float:
        compared = agreed = 0
        for key, rows in paid.items():
            total = order_values[order_rows[key]]
            parts = [pay_values[i] for i in rows]
            if total is None or any(p is None for p in parts):
                continue
            compared += 1
            agreed += _same_money(total, sum((p for p in parts if p is not None), Decimal(0)))
        return agreed / compared if compared >= _AGREEMENT_MIN_ORDERS else -1.0

    best_total = orders.amounts(totals[0].column)
    best_capture = payments.amounts(captures[0].column)
    measured: list[tuple[Scored, float]] = []
    for candidate in totals:
        if orders.budget.exhausted():
            return
        measured.append((candidate, share(orders.amounts(candidate.column), best_capture)))
    for candidate in captures:
        if orders.budget.exhausted():
            return
        measured.append((candidate, share(best_total, payments.amounts(candidate.column))))
    for candidate, agreement in measured:
        candidate.agreement = agreement


def _same_money(first: Decimal, second: Decimal) -> bool:
    """Equal amounts, also when one side is written in minor units (cents, mills)."""
    return any(first == second * 10**k or second == first * 10**k for k in (0, 2, 3))
