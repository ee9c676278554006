"""The ambiguity rule: when inference stops guessing and asks a person instead.

Every question mapping inference asks is decided here:

- A field: candidates scoring below `MIN_SCORE` are not plausible. When a required field has
  no plausible column, the person is asked which column holds it, offered only columns whose
  values can be it (none: the question says so). A payment id is not asked for: a file without
  one names each payment by its data row (`FieldSpec.by_row`). When other plausible columns
  score within `AMBIGUITY_MARGIN` of the best, they are close, and the data settles them where
  it can (`settle`): two id columns that tell the rows apart alike, two reference columns that
  name the same orders, or two amount columns equal on every successful row are one reading
  (the better-named is taken); an amount column empty or zero on successful rows captured
  nothing; a column under which (almost) no order matches while another matches (almost) all
  is ruled out. Any close candidate left makes the field ambiguous: its confidence is halved,
  its reason reads `ambiguous: ...`, and the person is asked to choose. Optional fields take
  their best plausible column without asking (a payment id is settled and asked like a
  required field).
- A field inference could not compare in full (see `bounds`): more close candidates than
  `CLOSE_CANDIDATES` are asked about without settling (the question names the best of
  them), and once the time budget is spent, a required field with more than one candidate is
  asked, never picked: confidence halved, reason `not compared: ...`.
- The files: identical files are refused, and two files whose role fits differ by less than
  `ROLE_MARGIN` make the person say which one is the orders export
  (`orders.orders_file=NAME`, as an edit reads it).
- The currency: a file without a currency column whose amounts do not say their currency (no
  mark, or `$` without the other file naming one currency that writes it) asks which.

A single open question means no mapping (`Proposal.mapping` is None).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from agent.data.ingest import CsvSample
from agent.data.mapping.bounds import CLOSE_CANDIDATES
from agent.data.mapping.candidates import MIN_SCORE, Scored, kind_fit
from agent.data.mapping.evidence import Evidence
from agent.data.mapping.proposal import Clarification
from agent.data.schema import FieldSpec, Role

AMBIGUITY_MARGIN = 0.15
ROLE_MARGIN = 0.15
# Amount agreement with the other file (see `evidence.apply_amount_agreement`): a candidate is
# ruled out for matching (almost) never only while another matches (almost) always.
_MATCHES_MOST = 0.8
_MATCHES_NONE = 0.2
_EMPTY_SHARE = 0.9  # a reference empty on this share of the compared rows names no order
BY_ROW = "no column holds it: each row is named by its data row (row 1, row 2, ...)"
"""The reason of a `by_row` field no column holds (a payment id): never a question."""


@dataclass(frozen=True)
class FieldVerdict:
    """The column inference takes for a field (or none), how sure it is, and why.

    `question` is set when the rule asks the person instead of guessing.
    """

    column: str | None
    confidence: float
    reason: str
    question: Clarification | None = None


def decide_field(
    role: Role, spec: FieldSpec, found: list[Scored], evidence: Evidence
) -> FieldVerdict:
    """The verdict for `spec` from its candidates `found` (best first, columns still free).

    A required field with two plausible columns left after `settle`, or (unless it is the
    currency, which the amounts may still say) with none, gets a question; so does one with
    more than one candidate once the time budget is spent. A payment id (`by_row`) is decided
    like a required field, except that with no plausible column there is no question: each
    row is named by its data row.
    """
    if spec.kind == "reference":
        found = _filled_where_paid(found, evidence)
    viable = [c for c in found if c.score >= MIN_SCORE]
    decided = spec.required or spec.by_row  # settled between close columns, else asked
    if not viable:
        if spec.by_row:
            return FieldVerdict(None, 0.0, BY_ROW)
        question = None
        if spec.required and spec.kind != "currency":
            question = _none_fits(role, spec, found, evidence)
        return FieldVerdict(None, 0.0, "no column fits", question)
    if decided and len(found) > 1 and evidence.budget.exhausted():
        return _not_compared(role, spec, found, evidence)
    best, *rivals = settle(spec, viable, evidence) if decided else viable[:1]
    if not rivals:
        return FieldVerdict(best.column, round(min(1.0, best.score), 2), best.reason)
    names = [best.column, *(c.column for c in rivals)][:CLOSE_CANDIDATES]
    question = Clarification(
        role=role,
        field=spec.name,
        question=(
            f"Which column of {evidence.sample.layout.file_name} holds the "
            f"{spec.name} ({spec.description})? "
            + " and ".join(f'"{n}"' for n in names)
            + " both fit."
        ),
        choices=names,
    )
    confidence = round(min(1.0, best.score) * 0.5, 2)
    return FieldVerdict(best.column, confidence, "ambiguous: " + ", ".join(names), question)


def _filled_where_paid(found: list[Scored], evidence: Evidence) -> list[Scored]:
    """The reference candidates that name something on the rows that moved money: a column
    empty on (nearly) every compared row (a statement's `Info`, filled on its fee and refund
    rows but not on its sales) names no order for the captures, whatever it names elsewhere."""
    return [candidate for candidate in found if _filled(candidate.column, evidence)]


def _filled(column: str, evidence: Evidence) -> bool:
    """Whether `column` holds a value on more than a tenth of the compared rows."""
    key = ("filled", column, evidence.compared_rows)
    found = evidence.columns.derived.get(key)
    if found is None:  # the same rows of the same column: worked out once per sample
        values = evidence.columns.values(column)
        filled = sum(1 for i in evidence.rows if values[i].strip())
        found = evidence.columns.derived[key] = filled > (1 - _EMPTY_SHARE) * len(evidence.rows)
    return bool(found)


def _not_compared(
    role: Role, spec: FieldSpec, found: list[Scored], evidence: Evidence
) -> FieldVerdict:
    """The question for a required field whose candidates (best first, the best plausible)
    the time budget left uncompared."""
    names = [c.column for c in found[:CLOSE_CANDIDATES]]
    name = evidence.sample.layout.file_name
    question = Clarification(
        role=role,
        field=spec.name,
        question=(
            f"Which column of {name} holds the {spec.name} ({spec.description})? "
            "The files are too large to compare their columns' values in time; "
            + ", ".join(f'"{n}"' for n in names)
            + " could hold it."
        ),
        choices=names,
    )
    confidence = round(min(1.0, found[0].score) * 0.5, 2)
    return FieldVerdict(found[0].column, confidence, "not compared: " + ", ".join(names), question)


def _none_fits(
    role: Role, spec: FieldSpec, found: list[Scored], evidence: Evidence
) -> Clarification:
    """The question for a required field no column plausibly holds, offering only columns
    whose values can be it (the best scored first): never a date or an amount for an id, nor
    a column of one value. With none, the question says so instead of offering wrong ones."""
    name = evidence.sample.layout.file_name
    # Where some columns' values name the other file's ids, those that do far less are not
    # offered (a date's day meets a count of items now and then).
    best = max((c.overlap for c in found), default=0.0)
    matched = [c for c in found if best > 0 and c.overlap >= best / 2]
    choices = [c.column for c in (matched or found)[:3]]
    for column, profile in evidence.profiles.items():
        if matched or len(choices) >= 3 or column in choices or kind_fit(spec, profile) < 0.5:
            continue
        if spec.kind != "reference" or _filled(column, evidence):
            choices.append(column)
    if not choices:
        return Clarification(
            role=role,
            field=spec.name,
            question=(
                f"No column of {name} has values that can be the {spec.name} "
                f"({spec.description}). Is it the {role.value} export? Replace it, or name "
                f"the column (edit {role.value}.{spec.name}=COLUMN)."
            ),
            choices=[],
        )
    return Clarification(
        role=role,
        field=spec.name,
        question=(
            f"No column of {name} clearly holds the {spec.name} ({spec.description}). "
            "Which one does?"
        ),
        choices=choices,
    )


def settle(spec: FieldSpec, viable: list[Scored], evidence: Evidence) -> list[Scored]:
    """The candidates still in doubt for a required field, the chosen one first.

    Close candidates are settled by the sampled values where they can be: two id columns that
    tell the rows apart alike, or two amount columns equal on every successful row, are the
    same reading (the better-named one is taken); an amount column empty or zero on successful
    rows captured nothing; a column under which nothing matches the other file cannot be it.
    """
    best, *others = viable
    close = [c for c in others if best.score - c.score < AMBIGUITY_MARGIN]
    if not close:
        return [best]
    if len(close) >= CLOSE_CANDIDATES or evidence.budget.exhausted():
        return [best, *close]  # too many to compare, or no time left: the person chooses
    if spec.kind == "id":
        alike = [c for c in close if evidence.interchangeable(best.column, c.column)]
        if alike:
            best.reason += "; " + _listed(alike) + " tell the rows apart the same way"
        return [best, *(c for c in close if c not in alike)]
    if spec.kind == "reference":
        return [best, *(c for c in close if not evidence.same_orders(best.column, c.column))]
    if spec.kind != "amount":
        return [best, *close]
    group = _rule_out([best, *close], evidence)
    top, *rest = group
    same = [c for c in rest if evidence.agree(top.column, c.column)]
    if same:
        top.reason += f"; equal to {_listed(same)} on every {evidence.where} sampled"
    return [top, *(c for c in rest if c not in same)]


def _rule_out(group: list[Scored], evidence: Evidence) -> list[Scored]:
    """`group` without the amount columns that the values exclude (never all of them)."""
    kept = list(group)
    empty = [c for c in kept if evidence.empty(c.column)]
    if empty and len(empty) < len(kept):
        for c in empty:
            c.reason += f"; empty or zero on (nearly) every {evidence.where} sampled"
        kept = [c for c in kept if c not in empty]
    if any(c.agreement >= _MATCHES_MOST for c in kept):
        never = [c for c in kept if 0 <= c.agreement <= _MATCHES_NONE]
        for c in never:
            c.reason += "; its values (almost) never equal the other file's amounts"
        kept = [c for c in kept if c not in never]
    return kept


def _listed(candidates: list[Scored]) -> str:
    return " and ".join(f'"{c.column}"' for c in candidates)


def role_question(
    orders: CsvSample, payments: CsvSample, fits: tuple[float, float], chosen: bool | None
) -> Clarification | None:
    """The question about which file is which, if any: identical files, or two that look alike.

    `orders` and `payments` are the files in the roles inference gave them; `fits` are the
    straight and crossed role fits (`roles.role_fits`); `chosen` is a person's `orders_file`
    answer (`roles.swap_from_answers`), which settles the roles unless the files are identical.
    """
    straight, crossed = fits
    if orders.layout.columns == payments.layout.columns and orders.rows == payments.rows:
        return Clarification(
            role=None,
            field=None,
            question=(
                "The two files are identical (the same header and rows): upload the orders "
                "export and the payments export, one of each, by replacing one of them."
            ),
            choices=[],
        )
    if chosen is None and abs(straight - crossed) < ROLE_MARGIN:
        # The answer as an edit reads it, whoever types it: with the role (the option is on
        # both files), and a name with spaces or quotes quoted as a shell-like line splits it.
        example = f"orders.orders_file={shlex.quote(orders.layout.file_name)}"
        return Clarification(
            role=None,
            field=None,
            question=(
                "Which file is the orders export? The two files look alike "
                f"(answer orders.orders_file=NAME, e.g. {example})."
            ),
            choices=[orders.layout.file_name, payments.layout.file_name],
        )
    return None


def currency_question(
    role: Role, file_name: str, symbols: tuple[str, list[str], list[str]] | None = None
) -> Clarification:
    """The question for a file without a currency column whose amounts do not say theirs.

    `symbols` is a column of currency symbols instead of codes, its symbols and the codes they
    can stand for: the question says what it holds, and offers those codes first.
    """
    choices = ["USD", "EUR", "GBP"]
    question = f"{file_name} has no currency column. Which currency are its amounts in?"
    if symbols is not None:
        column, marks, codes = symbols
        choices = [*codes, *(c for c in choices if c not in codes)]
        question = (
            f'{file_name} has no column of currency codes: "{column}" holds '
            f"{', '.join(marks)}, a symbol, not an ISO 4217 code. Which currency are its "
            "amounts in? (Every row is read in the one you choose.)"
        )
    return Clarification(role=role, field="currency", question=question, choices=choices)
