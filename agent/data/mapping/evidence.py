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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property

from agent.data.ingest import CsvSample
from agent.data.mapping.bounds import COMPARED_CANDIDATES, Budget
from agent.data.mapping.candidates import MIN_SCORE, FieldCandidates, Scored
from agent.data.mapping.columns import SampleColumns
from agent.data.profile import (
    ColumnProfile,
    reference_tokens,
    same_partition,
    success_rows,
)
from agent.data.schema import Role

_EMPTY_SHARE = 0.9
_ZERO = Decimal(0)
_AGREEMENT_MIN_ORDERS = 3


@dataclass
class Evidence:
    """What one file's sampled rows say, for choosing between columns that both fit a field.

    `rows` are the rows amounts are compared on: for payments the rows whose status says the
    money moved (a failed attempt captures nothing, so its amounts prove nothing), else all rows.
    `columns` is the file read by column, each column read once.
    """

    sample: CsvSample
    profiles: dict[str, ColumnProfile]
    rows: list[int]
    successful: bool
    budget: Budget
    columns: SampleColumns = field(repr=False)

    @cached_property
    def compared_rows(self) -> tuple[int, ...]:
        """`rows` as a key: what is worked out on them is kept by the sample (`derived`)."""
        return tuple(self.rows)

    @classmethod
    def of(
        cls,
        role: Role,
        sample: CsvSample,
        profiles: list[ColumnProfile],
        scored: FieldCandidates,
        budget: Budget,
        columns: SampleColumns | None = None,
    ) -> Evidence:
        """The evidence of `sample`, with the successful rows its likeliest status column names.

        `columns` is `sample` already read by column, when inference has it.
        """
        columns = columns or SampleColumns(sample)
        status_field = "payment_status" if role is Role.PAYMENTS else "order_status"
        status = next((c for c in scored.get(status_field, []) if c.score >= MIN_SCORE), None)
        rows = None
        if role is Role.PAYMENTS and status is not None:
            rows = success_rows(columns.values(status.column))
        everything = list(range(len(sample.rows)))
        return cls(
            sample, {p.name: p for p in profiles}, rows or everything, bool(rows), budget, columns
        )

    @property
    def where(self) -> str:
        """The rows compared, in words."""
        return "successful row" if self.successful else "row"

    def amounts(self, column: str) -> list[Decimal | None]:
        """The values of an amount column, read with the number format of its profile (once)."""
        return self.columns.amounts(column, self.profiles[column].number_format)

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
        return same_partition(self.columns.values(first), self.columns.values(second))

    def same_orders(self, first: str, second: str) -> bool:
        """Whether two reference columns name the same orders on every sampled row."""
        pairs = zip(self.columns.values(first), self.columns.values(second), strict=True)
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
    # The first row of each order (its keys counted from the end, so the first row wins).
    order_keys = orders.columns.keys(keys[0].column)
    order_rows = dict(zip(reversed(order_keys), range(len(order_keys) - 1, -1, -1), strict=True))
    # The payment rows naming one order, and that order's key (flat: no list per order).
    references = payments.columns.values(refs[0].column)
    one = payments.columns.references(refs[0].column).one  # the references naming one order
    pay_rows: list[int] = []
    pay_keys: list[str] = []
    for i in payments.rows:
        key = one.get(references[i])
        if key is not None and key in order_rows:
            pay_rows.append(i)
            pay_keys.append(key)
    # Per paid order (in the order first paid): the row of its total.
    paid = list(dict.fromkeys(pay_keys))
    at = [order_rows[key] for key in paid]

    def paid_sums(pay_values: Sequence[Decimal | None]) -> list[Decimal | None]:
        """Per paid order, the sum of its payments, or None when one of them does not read.

        Each sum is `sum(payments, Decimal(0))`: the payments added to zero in row order.
        """
        sums: dict[str, Decimal | None] = dict.fromkeys(paid, _ZERO)
        for i, key in zip(pay_rows, pay_keys, strict=True):
            value, so_far = pay_values[i], sums[key]
            sums[key] = None if value is None or so_far is None else so_far + value
        return list(sums.values())

    def share(order_values: Sequence[Decimal | None], sums: list[Decimal | None]) -> float:
        compared, agreed = count_agreeing(map(order_values.__getitem__, at), sums)
        return agreed / compared if compared >= _AGREEMENT_MIN_ORDERS else -1.0

    best_total = orders.amounts(totals[0].column)
    best_capture = paid_sums(payments.amounts(captures[0].column))
    summed = {captures[0].column: best_capture}
    measured: list[tuple[Scored, float]] = []
    for candidate in totals:
        if orders.budget.exhausted():
            return
        measured.append((candidate, share(orders.amounts(candidate.column), best_capture)))
    for candidate in captures:
        if orders.budget.exhausted():
            return
        if candidate.column not in summed:
            summed[candidate.column] = paid_sums(payments.amounts(candidate.column))
        measured.append((candidate, share(best_total, summed[candidate.column])))
    for candidate, agreement in measured:
        candidate.agreement = agreement


def count_agreeing(
    totals: Iterable[Decimal | None], sums: Iterable[Decimal | None]
) -> tuple[int, int]:
    """How many (total, sum of payments) pairs are compared, and how many agree.

    A pair is compared when both read (neither is None) and agrees as `total == paid_sum or
    _agrees(total, paid_sum)` says, each sum being one computed in this context (`paid_sums`).
    `_agrees` is written out here, with only the comparisons of `_same_money` that can hold at
    its difference of magnitudes (a product rounds up by at most one digit, so `x == y * k`
    needs the magnitudes to differ by k's digits or one more): no call per pair.
    """
    compared = agreed = 0
    for total, paid_sum in zip(totals, sums, strict=True):
        if total is None or paid_sum is None:
            continue
        compared += 1
        if total == paid_sum:
            agreed += 1
            continue
        apart = total.adjusted() - paid_sum.adjusted()
        if -1 <= apart <= 1:
            agreed += paid_sum == total * 1
        elif 2 <= apart <= 4:  # `total == paid_sum * 100` at 2 or 3, `* 1000` at 3 or 4
            agreed += (apart < 4 and total == paid_sum * 100) or (
                apart > 2 and total == paid_sum * 1000
            )
        elif -4 <= apart <= -2:  # the same, the other way
            agreed += (apart > -4 and paid_sum == total * 100) or (
                apart < -2 and paid_sum == total * 1000
            )
    return compared, agreed


def _same_money(first: Decimal, second: Decimal) -> bool:
    """Equal amounts, also when one side is written in minor units (cents, mills)."""
    # The comparisons of `any(first == second * 10**k or second == first * 10**k for k in
    # (0, 2, 3))`, in its order, without a generator per pair.
    return (
        first == second * 1
        or second == first * 1
        or first == second * 100
        or second == first * 100
        or first == second * 1000
        or second == first * 1000
    )


def _agrees(total: Decimal, paid_sum: Decimal) -> bool:
    """`_same_money(total, paid_sum)` for a sum of payments, without its products where they
    cannot be equal. `count_agreeing` writes it out per pair; this is the rule it is checked
    against.

    `paid_sum` is a sum (computed in this context), so `paid_sum * 1` is itself: the first
    comparison is plain equality. A product rounds up by at most one digit, so `x == y * 10**k`
    needs `x.adjusted() - y.adjusted()` to be k or k + 1: two amounts whose magnitudes differ
    by at most one digit are equal only as `total == paid_sum * 1` or `paid_sum == total * 1`,
    and by five digits or more never.
    """
    if total == paid_sum:
        return True
    apart = total.adjusted() - paid_sum.adjusted()
    if -1 <= apart <= 1:
        return paid_sum == total * 1
    return -4 <= apart <= 4 and _same_money(total, paid_sum)
