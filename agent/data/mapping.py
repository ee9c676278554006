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
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from dataclasses import dataclass
from decimal import Decimal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict

from agent.data.currency import CURRENCY_EXPONENTS, is_currency_code
from agent.data.formats import TIMESTAMP_FORMATS, NumberFormat, parse_number, timestamp_hits
from agent.data.ingest import CsvSample
from agent.data.keys import _first_error, id_reading_from_answers
from agent.data.policy import Policy
from agent.data.profile import (
    ColumnProfile,
    column_values,
    normalize_key,
    profile_sample,
    read_amounts,
    reference_tokens,
    same_partition,
    success_rows,
)
from agent.data.schema import (
    READING_OPTIONS,
    SCHEMA,
    TIME_OPTIONS,
    AmountReading,
    DatasetMapping,
    FieldSpec,
    Mapping,
    ReadingOptions,
    Role,
    RowKinds,
    TimestampReading,
    kind_word,
)
from agent.data.schema import spec as spec_of
from agent.errors import MappingError, UnknownColumnError

MIN_SCORE = 0.5
AMBIGUITY_MARGIN = 0.15
ROLE_MARGIN = 0.15
_QUALIFIERS = frozenset({"metadata", "utc", "gmt", "local"})
# Header words that only one of the two exports tends to have, in the languages of the aliases.
_ROLE_WORDS = {
    Role.ORDERS: frozenset(
        "lineitem subtotal shipping fulfillment fulfilled financial billing sku quantity "
        "discount cart customer kunde zwischensumme versandkosten client livraison cliente "
        "envio klant subtotaal verzendkosten subtotale spedizione frete".split()
    ),
    Role.PAYMENTS: frozenset(
        "charge captured refunded fee card psp paymentintent settlement payout dispute "
        "disputed gateway transaction transaktions transaktion gebuhr frais transaccion "
        "comision transactie transactiekosten transazione commissione transacao taxa".split()
    ),
}
_FEW = 5  # sampled values below which uniqueness says nothing


class Candidate(BaseModel):
    """A column that could feed a field, how likely, and why."""

    model_config = ConfigDict(frozen=True)

    column: str
    confidence: float
    reason: str


class FieldChoice(BaseModel):
    """The column chosen for a canonical field (or none), with its confidence and alternatives."""

    model_config = ConfigDict(frozen=True)

    field: str
    required: bool
    column: str | None
    confidence: float
    reason: str
    alternatives: list[Candidate]
    samples: list[str]


class Clarification(BaseModel):
    """A question the mapping cannot answer alone: which column, which file, which currency."""

    model_config = ConfigDict(frozen=True)

    role: Role | None
    field: str | None
    question: str
    choices: list[str]


class DatasetProposal(BaseModel):
    """What inference concluded about one file."""

    model_config = ConfigDict(frozen=True)

    role: Role
    file_name: str
    columns: list[str]
    sampled_rows: int
    choices: list[FieldChoice]
    options: ReadingOptions
    notes: list[str]

    def column_of(self, field: str) -> str | None:
        """The column chosen for `field`, if any."""
        return next((c.column for c in self.choices if c.field == field), None)


class Proposal(BaseModel):
    """The proposed interpretation of both files: a mapping, or the questions that block one."""

    model_config = ConfigDict(frozen=True)

    orders: DatasetProposal
    payments: DatasetProposal
    role_confidence: float
    clarifications: list[Clarification]

    @property
    def mapping(self) -> Mapping | None:
        """The complete mapping, or None while a clarification is open."""
        if self.clarifications:
            return None
        return Mapping(
            orders=_dataset_mapping(self.orders), payments=_dataset_mapping(self.payments)
        )

    def dataset(self, role: Role) -> DatasetProposal:
        """The proposal for the file playing `role`."""
        return self.orders if role is Role.ORDERS else self.payments


def _dataset_mapping(proposal: DatasetProposal) -> DatasetMapping:
    columns = {c.field: c.column for c in proposal.choices if c.column is not None}
    return DatasetMapping(columns=columns, options=proposal.options)


def normalize_header(name: str) -> str:
    """A header as aliases are written: folded words of letters and digits, one space.

    Folded means lower case without accents (`Währung` -> `wahrung`, `Nº` -> `no`), API-style
    names and letter-digit runs split (`createdAt` -> `created at`, `reference1` ->
    `reference 1`),
    articles and prepositions of the languages exports are written in dropped (`N° de commande`
    -> `n commande`), "including tax" dropped and "excluding tax" written `untaxed`
    (`Order Total (inc tax)` -> `order total`, `Montant HT` -> `montant untaxed`).
    """
    text = _CAMEL.sub(" ", name) if _IDENTIFIER.fullmatch(name.strip()) else name
    text = unicodedata.normalize("NFKD", text.casefold())
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = _LETTER_DIGIT.sub(" ", re.sub(r"[^a-z0-9]+", " ", text)).strip()
    text = _TAX_INCLUDED.sub(" ", _TAX_EXCLUDED.sub(" untaxed ", f" {text} "))
    words = text.split()
    kept = [w for w in words if w not in _STOP_WORDS]
    return " ".join(kept or words)


_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_LETTER_DIGIT = re.compile(r"(?<=[a-z])(?=[0-9])|(?<=[0-9])(?=[a-z])")
_TAX_WORDS = "tax|taxes|vat|mwst|ust|btw|iva|tva|gst"
_TAX_INCLUDED = re.compile(
    rf" (?:(?:inc|incl|including|inclusive|inkl|incluido|incluida|inclusa|incluso|"
    rf"incluindo)(?: of)? (?:{_TAX_WORDS})|(?:{_TAX_WORDS}) (?:inc|incl|included|inclusive)|"
    rf"ttc)(?= )"
)
_TAX_EXCLUDED = re.compile(
    rf" (?:(?:ex|excl|excluding|exclusive|exkl|ohne|hors|sin|senza|sem|zonder)(?: of)? "
    rf"(?:{_TAX_WORDS})|(?:{_TAX_WORDS}) (?:ex|excl|excluded)|ht)(?= )"
)
# Articles and prepositions: `Date de paiement`, `Número do pedido`, `Number of Items`.
_STOP_WORDS = frozenset(
    "de du des d la le les l del di da do dos das der die het van of the".split()
)


def header_score(spec: FieldSpec, header: str) -> float:
    """How strongly a header names `spec`, from 0 (not at all) to 1 (an exact alias).

    An exact alias scores its weight (qualifiers such as `utc` or `metadata` aside). A header
    that contains an alias's words scores less, and much less when its other words point to
    other money (`Amount Refunded`, `Converted Amount` are not the captured amount).
    """
    norm = normalize_header(header)
    tokens = norm.split()
    plain = " ".join(t for t in tokens if t not in _QUALIFIERS)
    exact = max(spec.aliases.get(norm, 0.0), spec.aliases.get(plain, 0.0) * 0.98)
    if exact:
        return exact
    token_set = set(tokens)
    score = 0.0
    for alias, weight in spec.aliases.items():
        words = set(alias.split())
        if words <= token_set:
            penalty = 0.3 if (token_set - words) & spec.against else 1.0
            score = max(score, weight * 0.75 * penalty)
    return score


def _kind_fit(spec: FieldSpec, profile: ColumnProfile) -> float:
    """How well the values fit the field's kind, from 0 (cannot be it) to 1."""
    if profile.filled == 0:
        return 0.0
    if spec.kind == "amount":
        return 1.0 if profile.is_numeric() and profile.boolean_share < 0.9 else 0.0
    if spec.kind == "currency":
        # A column mostly of ISO codes is the currency column: the few values that do not read
        # are reported with their rows, not a reason to ask which currency the file is in.
        return min(1.0, profile.currency_share / 0.9) if profile.currency_share >= 0.5 else 0.0
    if spec.kind == "timestamp":
        return 1.0 if profile.timestamp_share >= 0.9 else 0.0
    if spec.kind in ("id", "reference") and profile.filled >= _FEW and profile.distinct_share < 0.2:
        return 0.0  # one value on most rows (a payout reference, a quantity) names no order
    if spec.kind == "id":
        return min(1.0, profile.id_like_share / 0.9)
    if spec.kind == "reference":
        return min(1.0, profile.reference_share / 0.8)
    if spec.kind == "status":
        return 1.0 if not profile.is_numeric() and profile.distinct <= 50 else 0.4
    return 1.0


def _value_only_score(spec: FieldSpec, profile: ColumnProfile) -> tuple[float, str]:
    """A score from values alone, for exports whose headers name nothing we know."""
    if spec.kind == "currency" and profile.currency_share >= 0.9:
        return 0.7, "its values are ISO 4217 currency codes"
    if spec.kind == "id" and profile.id_like_share >= 0.9 and profile.distinct_share >= 0.5:
        return 0.3, "its values look like identifiers"
    if spec.kind == "reference" and profile.reference_share >= 0.5:
        return 0.3, "its values contain identifiers"
    if spec.kind == "timestamp" and profile.timestamp_share >= 0.9:
        return 0.45, "its values are timestamps"
    if (
        spec.kind == "amount"
        and spec.required
        and profile.is_numeric()
        and not (profile.integer_only and profile.distinct_share > 0.98)
    ):
        return 0.45, "its values are amounts"
    return 0.0, ""


@dataclass
class _Scored:
    column: str
    score: float
    reason: str
    # How often the column equals the other file's amounts for the same order (0..1), or -1
    # where that was not measured.
    agreement: float = -1.0


def _candidates(spec: FieldSpec, profiles: list[ColumnProfile]) -> list[_Scored]:
    found: list[_Scored] = []
    for profile in profiles:
        fit = _kind_fit(spec, profile)
        if fit == 0.0:
            continue
        by_header = header_score(spec, profile.name)
        by_values, why = _value_only_score(spec, profile)
        if by_header >= by_values and by_header > 0:
            found.append(_Scored(profile.name, by_header * fit, "the header names it"))
        elif by_values > 0:
            found.append(_Scored(profile.name, by_values * fit, why))
    found.sort(key=lambda c: -c.score)
    if len(found) == 1 and found[0].reason in _ONLY_ONE:
        found[0].score = 0.6
        found[0].reason = _ONLY_ONE[found[0].reason]
    return found


# A value-only candidate that is the only one of its kind in the file is likely enough.
_ONLY_ONE = {
    "its values are amounts": "the only column whose values are amounts",
    "its values are timestamps": "the only column whose values are timestamps",
}


def _role_fit(profiles: list[ColumnProfile], role: Role) -> float:
    required = [s for s in SCHEMA[role] if s.required]
    total = 0.0
    used: set[str] = set()
    for spec in required:
        # One column cannot play two fields: a file with a single id column has no separate
        # payment id and order reference, so it fits the payments role badly.
        found = [c for c in _candidates(spec, profiles) if c.column not in used]
        if found:
            total += found[0].score
            used.add(found[0].column)
    words = {t for p in profiles for t in normalize_header(p.name).split()}
    bonus = min(0.3, 0.06 * len(words & _ROLE_WORDS[role]))
    return total / len(required) + bonus


def _role_fits(first: list[ColumnProfile], second: list[ColumnProfile]) -> tuple[float, float]:
    straight = _role_fit(first, Role.ORDERS) + _role_fit(second, Role.PAYMENTS)
    crossed = _role_fit(first, Role.PAYMENTS) + _role_fit(second, Role.ORDERS)
    return straight, crossed


def assign_roles(first: CsvSample, second: CsvSample) -> tuple[Role, Role]:
    """Which role each of two files plays, decided from content as `infer_mapping` decides it."""
    straight, crossed = _role_fits(profile_sample(first), profile_sample(second))
    if crossed > straight:
        return Role.PAYMENTS, Role.ORDERS
    return Role.ORDERS, Role.PAYMENTS


def role_of(sample: CsvSample) -> Role:
    """The role one file most likely plays, from its headers and values alone."""
    profiles = profile_sample(sample)
    return max(Role, key=lambda role: _role_fit(profiles, role))


def infer_mapping(
    first: CsvSample,
    second: CsvSample,
    *,
    answers: dict[Role, dict[str, str]] | None = None,
) -> Proposal:
    """Propose which file holds orders and which payments, and a mapping for each.

    The two samples can come in either order: roles are decided from the content, unless a
    person answered `orders_file=NAME` (under either role). `answers` are a person's choices
    (role -> field -> column, or role -> reading option -> value, see `READING_OPTIONS`); a
    chosen column is taken as given, and for `currency` a three-letter code that is not a
    column becomes the file's default currency. Raises UnknownColumnError for an answer naming
    a column the file does not have, MappingError for an option value that cannot work.
    """
    answers = answers or {}
    profiles = [profile_sample(first), profile_sample(second)]
    straight, crossed = _role_fits(profiles[0], profiles[1])
    clarifications: list[Clarification] = []
    chosen = swap_from_answers(answers, (first.layout.file_name, second.layout.file_name))
    if crossed > straight if chosen is None else chosen:
        first, second = second, first
        profiles.reverse()
    role_confidence = 1.0 if chosen is not None else min(1.0, abs(straight - crossed) / 0.5)
    if first.layout.columns == second.layout.columns and first.rows == second.rows:
        clarifications.append(
            Clarification(
                role=None,
                field=None,
                question=(
                    "The two files are identical (the same header and rows): upload the orders "
                    "export and the payments export, one of each, by replacing one of them."
                ),
                choices=[],
            )
        )
    elif chosen is None and abs(straight - crossed) < ROLE_MARGIN:
        clarifications.append(
            Clarification(
                role=None,
                field=None,
                question=(
                    "Which file is the orders export? The two files look alike "
                    f"(answer orders_file=NAME, e.g. orders_file={first.layout.file_name})."
                ),
                choices=[first.layout.file_name, second.layout.file_name],
            )
        )
    samples = {Role.ORDERS: first, Role.PAYMENTS: second}
    by_role = {Role.ORDERS: profiles[0], Role.PAYMENTS: profiles[1]}
    scored = {
        role: {spec.name: _candidates(spec, by_role[role]) for spec in SCHEMA[role]}
        for role in Role
    }
    _apply_key_overlap(scored, samples)
    evidence = {
        role: _Evidence.of(role, samples[role], by_role[role], scored[role]) for role in Role
    }
    _apply_amount_agreement(scored, evidence)
    datasets = {}
    for role in Role:
        datasets[role] = _dataset_proposal(
            role, evidence[role], scored[role], clarifications, answers.get(role, {})
        )
    _decide_units(datasets, samples, clarifications, answers)
    _decide_currencies(datasets, evidence, clarifications)
    return Proposal(
        orders=datasets[Role.ORDERS],
        payments=datasets[Role.PAYMENTS],
        role_confidence=round(role_confidence, 2),
        clarifications=clarifications,
    )


def _apply_key_overlap(
    scored: dict[Role, dict[str, list[_Scored]]], samples: dict[Role, CsvSample]
) -> None:
    """Raise key candidates whose values meet across the files; lower those that never do."""
    order_keys = scored[Role.ORDERS]["order_id"]
    refs = scored[Role.PAYMENTS]["order_id"]
    if not order_keys or not refs:
        return
    key_sets = {
        c.column: {normalize_key(v) for v in column_values(samples[Role.ORDERS], c.column)}
        for c in order_keys
    }
    token_lists = {
        c.column: [
            t
            for t in (reference_tokens(v) for v in column_values(samples[Role.PAYMENTS], c.column))
            if t
        ]
        for c in refs
    }
    overlap: dict[tuple[str, str], float] = {}
    for key_column, keys in key_sets.items():
        for ref_column, lists in token_lists.items():
            hits = sum(1 for tokens in lists if any(t in keys for t in tokens))
            overlap[(key_column, ref_column)] = hits / len(lists) if lists else 0.0
    best_any = max(overlap.values())
    for group, position in ((order_keys, 0), (refs, 1)):
        for candidate in group:
            mine = max(v for k, v in overlap.items() if k[position] == candidate.column)
            if mine >= 0.05:
                candidate.score += 0.4 * mine
                candidate.reason += f"; {mine:.0%} of sampled references match the other file"
            elif best_any >= 0.3:
                candidate.score *= 0.5
                candidate.reason += "; its values never match the other file"
        group.sort(key=lambda c: -c.score)


@dataclass
class _Evidence:
    """What one file's sampled rows say, for choosing between columns that both fit a field.

    `rows` are the rows amounts are compared on: for payments the rows whose status says the
    money moved (a failed attempt captures nothing, so its amounts prove nothing), else all rows.
    """

    sample: CsvSample
    profiles: dict[str, ColumnProfile]
    rows: list[int]
    successful: bool

    @classmethod
    def of(
        cls, role: Role, sample: CsvSample, profiles: list[ColumnProfile], scored: _FieldCandidates
    ) -> _Evidence:
        """The evidence of `sample`, with the successful rows its likeliest status column names."""
        status_field = "payment_status" if role is Role.PAYMENTS else "order_status"
        status = next((c for c in scored.get(status_field, []) if c.score >= MIN_SCORE), None)
        rows = None
        if role is Role.PAYMENTS and status is not None:
            rows = success_rows(column_values(sample, status.column))
        everything = list(range(len(sample.rows)))
        return cls(sample, {p.name: p for p in profiles}, rows or everything, bool(rows))

    @property
    def where(self) -> str:
        """The rows compared, in words."""
        return "successful row" if self.successful else "row"

    def amounts(self, column: str) -> list[Decimal | None]:
        """The values of an amount column, read with the number format of its profile."""
        return read_amounts(column_values(self.sample, column), self.profiles[column].number_format)

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


_FieldCandidates = dict[str, list[_Scored]]
_EMPTY_SHARE = 0.9


def _apply_amount_agreement(
    scored: dict[Role, _FieldCandidates], evidence: dict[Role, _Evidence]
) -> None:
    """Record, per amount candidate, how often it equals the other file's amounts for the same
    order: order totals against the sum of the successful payments naming the order, and each
    payment amount column against the order totals.

    Used only to rule out a column under which (almost) nothing would match while another
    column matches (almost) everything: never to prefer the column that hides differences.
    """
    orders, payments = evidence[Role.ORDERS], evidence[Role.PAYMENTS]
    keys, refs = scored[Role.ORDERS]["order_id"], scored[Role.PAYMENTS]["order_id"]
    totals, captures = scored[Role.ORDERS]["order_amount"], scored[Role.PAYMENTS]["captured_amount"]
    if not (keys and refs and totals and captures):
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
    for candidate in totals:
        candidate.agreement = share(orders.amounts(candidate.column), best_capture)
    for candidate in captures:
        candidate.agreement = share(best_total, payments.amounts(candidate.column))


_AGREEMENT_MIN_ORDERS = 3
_MATCHES_MOST = 0.8
_MATCHES_NONE = 0.2


def _same_money(first: Decimal, second: Decimal) -> bool:
    """Equal amounts, also when one side is written in minor units (cents, mills)."""
    return any(first == second * 10**k or second == first * 10**k for k in (0, 2, 3))


def _settle(spec: FieldSpec, viable: list[_Scored], evidence: _Evidence) -> list[_Scored]:
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


def _rule_out(group: list[_Scored], evidence: _Evidence) -> list[_Scored]:
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


def _listed(candidates: list[_Scored]) -> str:
    return " and ".join(f'"{c.column}"' for c in candidates)


def _dataset_proposal(
    role: Role,
    evidence: _Evidence,
    scored: _FieldCandidates,
    clarifications: list[Clarification],
    answers: dict[str, str],
) -> DatasetProposal:
    sample, by_name = evidence.sample, evidence.profiles
    choices: list[FieldChoice] = []
    default_currency: str | None = None
    answered = {k: v for k, v in answers.items() if k not in READING_OPTIONS}
    ids = id_reading_from_answers(answers, None)
    if "currency" in answered and answered["currency"] not in by_name:
        code = answered.pop("currency").strip().upper()
        if not is_currency_code(code):
            raise UnknownColumnError(
                f'{sample.layout.file_name} has no column "{code}", and it is not a currency code'
            )
        default_currency = code
    for field, answer in answered.items():
        spec_of(role, field)  # raises KeyError for a field the role does not have
        if answer not in by_name:
            raise UnknownColumnError(
                f'{sample.layout.file_name} has no column "{answer}" (chosen for {field}); '
                f"its columns are: {', '.join(sample.layout.columns)}"
            )
    used: set[str] = set(answered.values())
    notes = list(sample.layout.notes)
    for spec in SCHEMA[role]:
        if spec.name in answered:
            chosen = answered[spec.name]
            choices.append(
                FieldChoice(
                    field=spec.name,
                    required=spec.required or spec.kind == "currency",
                    column=chosen,
                    confidence=1.0,
                    reason="chosen by a person",
                    alternatives=[],
                    samples=list(by_name[chosen].samples),
                )
            )
            continue
        if spec.name == "currency" and default_currency is not None:
            choices.append(
                FieldChoice(
                    field=spec.name,
                    required=True,
                    column=None,
                    confidence=1.0,
                    reason=f"every row is in {default_currency} (chosen by a person)",
                    alternatives=[],
                    samples=[],
                )
            )
            continue
        found = [c for c in scored[spec.name] if c.column not in used]
        viable = [c for c in found if c.score >= MIN_SCORE]
        column: str | None = None
        confidence = 0.0
        reason = "no column fits"
        if viable:
            best, *rivals = _settle(spec, viable, evidence) if spec.required else viable[:1]
            if rivals:
                names = [best.column, *(c.column for c in rivals)]
                clarifications.append(
                    Clarification(
                        role=role,
                        field=spec.name,
                        question=(
                            f"Which column of {sample.layout.file_name} holds the "
                            f"{spec.name} ({spec.description})? "
                            + " and ".join(f'"{n}"' for n in names)
                            + " both fit."
                        ),
                        choices=names,
                    )
                )
                confidence = round(min(1.0, best.score) * 0.5, 2)
                reason = "ambiguous: " + ", ".join(names)
            else:
                confidence = round(min(1.0, best.score), 2)
                reason = best.reason
            column = best.column
            used.add(column)
        elif spec.required and spec.kind != "currency":
            hint = [c.column for c in found[:3]]
            clarifications.append(
                Clarification(
                    role=role,
                    field=spec.name,
                    question=(
                        f"No column of {sample.layout.file_name} clearly holds the {spec.name} "
                        f"({spec.description}). Which one does?"
                    ),
                    choices=hint or list(sample.layout.columns),
                )
            )
        choices.append(
            FieldChoice(
                field=spec.name,
                required=spec.required or spec.kind == "currency",
                column=column,
                confidence=confidence,
                reason=reason,
                alternatives=[
                    Candidate(
                        column=c.column, confidence=round(min(1.0, c.score), 2), reason=c.reason
                    )
                    for c in found
                    if c.column != column
                ][:3],
                samples=list(by_name[column].samples) if column else [],
            )
        )
    options = _reading_options(sample, by_name, choices, notes)
    options = reading_from_answers(role, options, choices, sample, answers)
    if role is Role.PAYMENTS:
        kinds = row_kinds(sample, choices, answers, notes)
        if kinds is not None:
            options = options.model_copy(update={"kinds": kinds})
    if default_currency is not None:
        options = options.model_copy(update={"default_currency": default_currency})
    if ids is not None:
        options = options.model_copy(update={"ids": ids})
    return DatasetProposal(
        role=role,
        file_name=sample.layout.file_name,
        columns=list(sample.layout.columns),
        sampled_rows=len(sample.rows),
        choices=choices,
        options=options,
        notes=notes,
    )


def _reading_options(
    sample: CsvSample,
    profiles: dict[str, ColumnProfile],
    choices: list[FieldChoice],
    notes: list[str],
) -> ReadingOptions:
    amounts: dict[str, AmountReading] = {}
    timestamps: dict[str, TimestampReading] = {}
    for choice in choices:
        if choice.column is None:
            continue
        profile = profiles[choice.column]
        kind = next(s.kind for role in SCHEMA for s in SCHEMA[role] if s.name == choice.field)
        if kind == "amount" and profile.number_format is not None:
            header = normalize_header(choice.column).split()
            minor = bool({"cents", "minor", "pence", "cent"} & set(header))
            amounts[choice.field] = AmountReading(
                decimal=profile.number_format.decimal,
                thousands=profile.number_format.thousands,
                unit="minor" if minor else "major",
            )
        elif kind == "timestamp" and profile.timestamp_pattern is not None:
            pattern = profile.timestamp_pattern
            zoned = "%z" in pattern or pattern.endswith("Z")
            zone = None if zoned else "UTC"
            if not zoned and not {"utc", "gmt"} & set(normalize_header(choice.column).split()):
                notes.append(
                    f'"{choice.column}" has no time zone: read as UTC; edit the mapping if the '
                    "export uses local time"
                )
            if profile.day_month_guessed:
                notes.append(
                    f'"{choice.column}": every sampled date fits both day-first and month-first; '
                    f"read as {pattern}"
                )
            timestamps[choice.field] = TimestampReading(pattern=pattern, timezone=zone)
    return ReadingOptions(
        encoding=sample.layout.encoding,
        delimiter=sample.layout.delimiter,
        header_row=sample.layout.header_line + 1,
        amounts=amounts,
        timestamps=timestamps,
    )


def _decide_units(
    datasets: dict[Role, DatasetProposal],
    samples: dict[Role, CsvSample],
    clarifications: list[Clarification],
    answers: dict[Role, dict[str, str]],
) -> None:
    """Decide major or minor units where values alone cannot: compare matched amounts.

    A unit a person answered stays as answered.
    """
    orders, payments = datasets[Role.ORDERS], datasets[Role.PAYMENTS]
    pairs = _matched_amounts(orders, payments, samples)
    if len(pairs) < 5:
        return
    for side, proposal, field in (
        (0, orders, "order_amount"),
        (1, payments, "captured_amount"),
    ):
        reading = proposal.options.amounts.get(field)
        column = proposal.column_of(field)
        answered = _amount_answers(proposal.role, answers.get(proposal.role, {}))
        if reading is None or reading.unit == "minor" or column is None:
            continue
        if "unit" in answered.get(field, {}):
            continue
        ratios = []
        for order_amount, pay_amount, exponent in pairs:
            mine, theirs = (order_amount, pay_amount) if side == 0 else (pay_amount, order_amount)
            if theirs and exponent:
                ratios.append(float(mine / theirs) / 10**exponent)
        if ratios and 0.95 <= statistics.median(ratios) <= 1.05:
            new_amounts = dict(proposal.options.amounts)
            new_amounts[field] = reading.model_copy(update={"unit": "minor"})
            if field == "captured_amount" and "refunded_amount" in new_amounts:
                new_amounts["refunded_amount"] = new_amounts["refunded_amount"].model_copy(
                    update={"unit": "minor"}
                )
            updated = proposal.model_copy(
                update={
                    "options": proposal.options.model_copy(update={"amounts": new_amounts}),
                    "notes": [
                        *proposal.notes,
                        f'"{column}" is in minor units (cents): matched amounts are '
                        "100 times the other file's",
                    ],
                }
            )
            datasets[proposal.role] = updated


def _matched_amounts(
    orders: DatasetProposal, payments: DatasetProposal, samples: dict[Role, CsvSample]
) -> list[tuple[float, float, int]]:
    """(order amount, payment amount, currency exponent) for sampled rows that match by key."""
    columns = {
        "key": orders.column_of("order_id"),
        "amount": orders.column_of("order_amount"),
        "ccy": orders.column_of("currency"),
        "ref": payments.column_of("order_id"),
        "paid": payments.column_of("captured_amount"),
    }
    o_reading = orders.options.amounts.get("order_amount")
    p_reading = payments.options.amounts.get("captured_amount")
    if None in columns.values() or o_reading is None or p_reading is None:
        return []
    o_fmt = NumberFormat(o_reading.decimal, o_reading.thousands)
    p_fmt = NumberFormat(p_reading.decimal, p_reading.thousands)
    o_sample, p_sample = samples[Role.ORDERS], samples[Role.PAYMENTS]
    index = {
        name: o_sample.layout.columns.index(col)
        for name, col in columns.items()
        if name in ("key", "amount", "ccy") and col
    }
    by_key: dict[str, tuple[float, int]] = {}
    for row in o_sample.rows:
        total = parse_number(row[index["amount"]], o_fmt)
        exponent = CURRENCY_EXPONENTS.get(row[index["ccy"]].strip().upper())
        if total is not None and total != 0 and exponent is not None:
            by_key.setdefault(normalize_key(row[index["key"]]), (float(total), exponent))
    ref_at = p_sample.layout.columns.index(str(columns["ref"]))
    paid_at = p_sample.layout.columns.index(str(columns["paid"]))
    pairs = []
    for row in p_sample.rows:
        tokens = reference_tokens(row[ref_at])
        paid = parse_number(row[paid_at], p_fmt)
        if len(tokens) == 1 and tokens[0] in by_key and paid:
            order_total, exponent = by_key[tokens[0]]
            pairs.append((order_total, float(paid), exponent))
    return pairs


# Currency symbols and the ISO codes they can stand for. A symbol that stands for one currency
# says it; `$` and `¥` need the other file to say which.
_SYMBOL_CODES = {
    "€": ("EUR",),
    "£": ("GBP",),
    "₹": ("INR",),
    "₩": ("KRW",),
    "₽": ("RUB",),
    "₺": ("TRY",),
    "₪": ("ILS",),
    "₫": ("VND",),
    "₦": ("NGN",),
    "₱": ("PHP",),
    "฿": ("THB",),
    "₴": ("UAH",),
    "₲": ("PYG",),
    "₡": ("CRC",),
    "₵": ("GHS",),
    "₭": ("LAK",),
    "₮": ("MNT",),
    "₸": ("KZT",),
    "$": ("USD", "CAD", "AUD", "NZD", "SGD", "HKD", "MXN", "TWD", "ARS", "CLP", "COP"),
    "¥": ("JPY", "CNY"),
}
_MAIN_AMOUNT = {Role.ORDERS: "order_amount", Role.PAYMENTS: "captured_amount"}


def _decide_currencies(
    datasets: dict[Role, DatasetProposal],
    evidence: dict[Role, _Evidence],
    clarifications: list[Clarification],
) -> None:
    """Give a file without a currency column the currency its amounts are written in, or ask.

    `€89.90` and `12.50 EUR` say the currency; `$77.45` says it only together with the other
    file, when every sampled row there is in one currency that writes `$`.
    """
    for role in Role:
        proposal = datasets[role]
        if proposal.options.default_currency is not None or proposal.column_of("currency"):
            continue
        found = _currency_of_amounts(role, datasets, evidence)
        if found is None:
            clarifications.append(
                Clarification(
                    role=role,
                    field="currency",
                    question=(
                        f"{proposal.file_name} has no currency column. "
                        "Which currency are its amounts in?"
                    ),
                    choices=["USD", "EUR", "GBP"],
                )
            )
            continue
        code, why = found
        choices = [
            c.model_copy(update={"confidence": 0.9, "reason": why}) if c.field == "currency" else c
            for c in proposal.choices
        ]
        datasets[role] = proposal.model_copy(
            update={
                "choices": choices,
                "options": proposal.options.model_copy(update={"default_currency": code}),
                "notes": [*proposal.notes, f"no currency column: {why}, read as {code}"],
            }
        )


def _currency_of_amounts(
    role: Role, datasets: dict[Role, DatasetProposal], evidence: dict[Role, _Evidence]
) -> tuple[str, str] | None:
    """The currency a file's main amount column is written in, and why; None if it does not say."""
    column = datasets[role].column_of(_MAIN_AMOUNT[role])
    if column is None:
        return None
    mark = evidence[role].profiles[column].currency_mark
    if mark is None:
        return None
    if mark in CURRENCY_EXPONENTS:
        return mark, f'every amount in "{column}" is written with {mark}'
    codes = _SYMBOL_CODES.get(mark, ())
    if len(codes) == 1:
        return codes[0], f'every amount in "{column}" is written with {mark}'
    other = datasets[role.other]
    other_column = other.column_of("currency")
    if other_column is None:
        return None
    seen = {v.strip().upper() for v in column_values(evidence[role.other].sample, other_column)}
    seen.discard("")
    if len(seen) == 1 and (code := seen.pop()) in codes:
        return code, (
            f'every amount in "{column}" is written with {mark}, and every row of '
            f"{other.file_name} is in {code}"
        )
    return None


# --- row kinds ---------------------------------------------------------------------------------

# Words in a status or type value that say what a payment row is. A value is read in words
# (`express_checkout_payment`) and as a whole (`merchantpayout`); a word to ignore outranks a
# refund word, which outranks a capture word (`payment_refund` is a refund).
_CAPTURE_WORDS = frozenset(
    "settled settle completed complete succeeded success successful paid captured capture sale "
    "sales charge charged payment purchase approved".split()
)
_REFUND_WORDS = frozenset(
    "refund refunded refunds credit return returned returns chargeback chargebacks reversal "
    "reversed".split()
)
_IGNORE_WORDS = frozenset(
    "fee fees payout payouts merchantpayout withdrawal transfer deposit pending authorization "
    "authorisation authorized authorised auth memo denied open declined rejected voided void "
    "hold".split()
)
# Header words of columns that say something else than the row's kind.
_NOT_KIND_HEADERS = frozenset("card instrument method tender entry channel order".split())
_MAX_KINDS = 20


def kind_by_words(value: str) -> str | None:
    """`capture`, `refund` or `ignore` for a status/type value by the words it is made of."""
    word = kind_word(value)
    tokens = {word, *word.split("_")}
    if tokens & _IGNORE_WORDS:
        return "ignore"
    if tokens & _REFUND_WORDS:
        return "refund"
    if tokens & _CAPTURE_WORDS:
        return "capture"
    return None


def _kind_values(sample: CsvSample, column: str) -> list[str]:
    """The distinct kind values of a column (as `kind_word` reads them), most frequent first."""
    counts: dict[str, int] = {}
    for value in column_values(sample, column):
        if value.strip():
            word = kind_word(value)
            counts[word] = counts.get(word, 0) + 1
    return sorted(counts, key=lambda w: (-counts[w], w))


def _separate_rows(sample: CsvSample, column: str, value: str, choices: list[FieldChoice]) -> bool:
    """Whether the rows of `value` are records of their own (a refund row), not a capture's state.

    A policy word such as `refunded` is the state of a capture in most exports (Stripe), but a
    row of its own in others (Adyen): there it shares its payment id with a row of another
    kind (the capture), or its captured amount is empty, zero or negative.
    """
    columns = sample.layout.columns
    at = columns.index(column)
    chosen = {c.field: c.column for c in choices if c.column}
    pay_at = columns.index(chosen["payment_id"]) if "payment_id" in chosen else None
    amount_at = columns.index(chosen["captured_amount"]) if "captured_amount" in chosen else None
    others: set[str] = set()  # payment ids on rows of another kind value
    if pay_at is not None:
        others = {
            row[pay_at].strip()
            for row in sample.rows
            if kind_word(row[at]) != value and row[pay_at].strip()
        }
    rows = [row for row in sample.rows if kind_word(row[at]) == value]
    for row in rows:
        shared = pay_at is not None and row[pay_at].strip() in others
        amount = row[amount_at].strip() if amount_at is not None else ""
        empty = not any(c in "123456789" for c in amount)
        negative = amount.startswith("(") or "-" in amount or "\u2212" in amount
        if not (shared or empty or negative):
            return False
    return bool(rows)


def _classify(
    sample: CsvSample, column: str, choices: list[FieldChoice], *, status: bool
) -> dict[str, str | None]:
    """Each value of `column` -> its kind by words (None: unknown); failed words are left out
    of a status column, where the policy already reads them."""
    policy = Policy()
    found: dict[str, str | None] = {}
    for value in _kind_values(sample, column):
        if status and value in policy.failed_payment_statuses:
            continue
        kind = kind_by_words(value)
        if value in policy.refunded_payment_statuses:
            kind = "refund" if _separate_rows(sample, column, value, choices) else "capture"
        found[value] = kind
    return found


def _kind_column(
    sample: CsvSample, choices: list[FieldChoice]
) -> tuple[str, dict[str, str]] | None:
    """The column that says each payment row's kind, and its values' kinds, when one does.

    Candidates are the status column and the columns whose header says `type` (a status column
    named `Type` first, then the other type columns, then the status column). The first whose
    every value has a known kind, with captures and at least one refund or row to ignore, is
    taken; failing that, the first where most values are known that way: its other values stay
    in no list, so validation asks what they are instead of reading a fee as a capture. A file
    whose rows are all captures (and failed attempts) needs no row kinds.
    """
    status = next((c.column for c in choices if c.field == "payment_status"), None)
    typed = []
    for name in sample.layout.columns:
        words = set(normalize_header(name).split())
        if "type" in words and not words & _NOT_KIND_HEADERS:
            typed.append(name)
    order = [c for c in typed if c == status] + [c for c in typed if c != status]
    if status is not None and status not in order:
        order.append(status)
    partial: tuple[str, dict[str, str]] | None = None
    for column in order:
        values = _kind_values(sample, column)
        if not values or len(values) > _MAX_KINDS:
            continue
        found = _classify(sample, column, choices, status=column == status)
        kinds = {value: kind for value, kind in found.items() if kind is not None}
        if not ("capture" in kinds.values() and {"refund", "ignore"} & set(kinds.values())):
            continue
        if len(kinds) == len(found):
            return column, kinds
        if partial is None and len(kinds) > len(found) - len(kinds):
            partial = column, kinds
    return partial


def row_kinds(
    sample: CsvSample,
    choices: list[FieldChoice],
    answers: dict[str, str],
    notes: list[str],
) -> RowKinds | None:
    """The row kinds of a payments file: proposed from its values, then a person's answers.

    A person's `kinds_column` is read by the same known words; each answered list replaces the
    proposed one and takes its values out of the other lists. Raises UnknownColumnError for a
    kinds column the file does not have and MappingError, in words, for lists that cannot work.
    """
    status = next((c.column for c in choices if c.field == "payment_status"), None)
    column = answers.get("kinds_column", "").strip() or None
    lists: dict[str, list[str]] = {"capture": [], "refund": [], "ignore": []}
    if column is not None:
        if column not in sample.layout.columns:
            raise UnknownColumnError(
                f'{sample.layout.file_name} has no column "{column}" (kinds_column); '
                f"its columns are: {', '.join(sample.layout.columns)}"
            )
        for value, kind in _classify(sample, column, choices, status=column == status).items():
            if kind is not None:
                lists[kind].append(value)
    else:
        found = _kind_column(sample, choices)
        if found is not None:
            column = found[0]
            for value, kind in found[1].items():
                lists[kind].append(value)
    if column is not None and column != status and status is not None:
        # The status column still says which rows to leave out: pending memos, denied attempts.
        for value, kind in _classify(sample, status, choices, status=True).items():
            if kind == "ignore" and value not in lists["capture"] + lists["refund"]:
                lists["ignore"].append(value)
    given = {name: answers[f"kinds_{name}"] for name in lists if f"kinds_{name}" in answers}
    for name, text in given.items():
        words = [kind_word(w) for w in text.split(",") if w.strip()]
        lists[name] = words
        for other in lists:
            if other != name and other not in given:
                lists[other] = [w for w in lists[other] if w not in words]
    if not any(lists.values()):
        return None
    if column is None and status is None:
        raise MappingError(
            "row kinds need a column to read: map payments.payment_status or set "
            "payments.kinds_column"
        )
    try:
        kinds = RowKinds(
            column=None if column == status else column,
            capture=tuple(lists["capture"]),
            refund=tuple(lists["refund"]),
            ignore=tuple(lists["ignore"]),
        )
    except ValueError as error:
        raise MappingError(f"row kinds: {_first_error(error)}") from None
    if not given and "kinds_column" not in answers:
        shown = column or status
        notes.append(
            f'row kinds from "{shown}": captures {", ".join(kinds.capture)}'
            + (f"; refunds {', '.join(kinds.refund)}" if kinds.refund else "")
            + (f"; ignored {', '.join(kinds.ignore)}" if kinds.ignore else "")
        )
    return kinds


# --- reading options answered by name ----------------------------------------------------------

_DECIMAL_WORDS = {".": ".", "dot": ".", "point": ".", "period": ".", ",": ",", "comma": ","}
_THOUSANDS_WORDS = {
    "": "",
    "none": "",
    "no": "",
    ",": ",",
    "comma": ",",
    ".": ".",
    "dot": ".",
    "point": ".",
    "period": ".",
    "'": "'",
    "apostrophe": "'",
    "space": " ",
}
_TIMESTAMP_FIELD = {Role.ORDERS: "order_date", Role.PAYMENTS: "captured_at"}
_DATE_PART = re.compile(r"^(%[dmYy])([-/.])(%[dmYy])\2(%[dmYy])")
_TIME_PATTERNS = ("%H:%M:%S", "%H:%M", "%I:%M:%S %p", "%I:%M %p", "%H:%M:%S.%f")


def _amount_answers(role: Role, answers: dict[str, str]) -> dict[str, dict[str, str]]:
    """The amount parts a person answered, per amount field of `role` (field -> part -> text)."""
    fields = [s.name for s in SCHEMA[role] if s.kind == "amount"]
    found: dict[str, dict[str, str]] = {}
    for part in ("decimal", "thousands", "unit"):
        for name in fields:
            value = answers.get(f"{name}_{part}", answers.get(part))
            if value is not None:
                found.setdefault(name, {})[part] = value
    return found


def reading_from_answers(
    role: Role,
    options: ReadingOptions,
    choices: list[FieldChoice],
    sample: CsvSample,
    answers: dict[str, str],
) -> ReadingOptions:
    """`options` with a person's answers applied: separators and unit of each amount field,
    date order, pattern, time zone, zone column and time column of the timestamp field.

    Raises MappingError, in words, for a value that cannot work, and UnknownColumnError for a
    column the file does not have.
    """
    columns = {c.field: c.column for c in choices if c.column}
    amounts = dict(options.amounts)
    for name, parts in _amount_answers(role, answers).items():
        base = amounts.get(name, AmountReading())
        update: dict[str, str] = {}
        if "decimal" in parts:
            mark = _DECIMAL_WORDS.get(parts["decimal"].strip().lower())
            if mark is None:
                raise MappingError(f'decimal is . or , (or dot, comma), not "{parts["decimal"]}"')
            update["decimal"] = mark
        if "thousands" in parts:
            text = parts["thousands"]
            sep = _THOUSANDS_WORDS.get(text.strip().lower() if text.strip() else text)
            if sep is None:
                raise MappingError(
                    f'thousands is none, comma, dot, apostrophe or space, not "{text}"'
                )
            update["thousands"] = sep
        if "unit" in parts:
            unit = parts["unit"].strip().lower()
            if unit not in ("major", "minor"):
                raise MappingError(f'unit is major or minor, not "{parts["unit"]}"')
            update["unit"] = unit
        reading = base.model_copy(update=update)
        if reading.decimal == reading.thousands:
            raise MappingError(
                f'{name}: the decimal mark and the thousands separator are both "{reading.decimal}"'
            )
        if name in columns or name in amounts:
            amounts[name] = AmountReading.model_validate(reading.model_dump())
    timestamps = dict(options.timestamps)
    field = _TIMESTAMP_FIELD[role]
    asked = {name: answers[name] for name in TIME_OPTIONS if name in answers}
    if asked:
        column = columns.get(field)
        if column is None:
            raise MappingError(
                f"{sample.layout.file_name} has no column mapped to {field}: map it first "
                f"(edit {role.value}.{field}=COLUMN)"
            )
        timestamps[field] = _timestamp_answers(
            sample, column, timestamps.get(field), asked, f"{role.value}.{field}"
        )
    return options.model_copy(update={"amounts": amounts, "timestamps": timestamps})


def _check_column(sample: CsvSample, name: str, option: str) -> str:
    column = name.strip()
    if column not in sample.layout.columns:
        raise UnknownColumnError(
            f'{sample.layout.file_name} has no column "{column}" ({option}); '
            f"its columns are: {', '.join(sample.layout.columns)}"
        )
    return column


def _timestamp_answers(
    sample: CsvSample,
    column: str,
    base: TimestampReading | None,
    asked: dict[str, str],
    where: str,
) -> TimestampReading:
    """The reading of a timestamp column after a person's answers (see `TIME_OPTIONS`)."""
    values = [v.strip() for v in column_values(sample, column) if v.strip()]
    update: dict[str, str | None] = {}
    time_column = base.time_column if base else None
    if "time_column" in asked:
        time_column = (
            _check_column(sample, asked["time_column"], "time_column")
            if asked["time_column"].strip()
            else None
        )
        update["time_column"] = time_column
    pattern = base.pattern if base else None
    if "timestamp_pattern" in asked:
        pattern = asked["timestamp_pattern"].strip()
        if "%" not in pattern:
            raise MappingError(
                f'timestamp_pattern "{pattern}" has no %-directive; write it like %d.%m.%Y %H:%M'
            )
    elif "date_order" in asked or (time_column and (pattern is None or "%H" not in pattern)):
        order = asked.get("date_order", "").strip().upper() or _date_order_of(pattern)
        if order not in ("DMY", "MDY", "YMD"):
            raise MappingError(f'date_order is DMY, MDY or YMD, not "{asked["date_order"]}"')
        dates = [v.split()[0] for v in values] if time_column else values
        pattern = _pattern_for_order(dates, order, where)
        if time_column:
            times = [v.strip() for v in column_values(sample, time_column) if v.strip()]
            best = max(_TIME_PATTERNS, key=lambda p: timestamp_hits(p, times[:50]))
            if not timestamp_hits(best, times[:50]):
                raise MappingError(
                    f'no value of "{time_column}" (time_column) reads as a time of day, '
                    "e.g. 14:03:00"
                )
            pattern = f"{pattern} {best}"
    if pattern is None:
        raise MappingError(
            f'no value of "{column}" reads as a timestamp: give timestamp_pattern or date_order'
        )
    update["pattern"] = pattern
    if "timezone" in asked:
        update["timezone"] = _zone(asked["timezone"])
    if "timezone_column" in asked:
        text = asked["timezone_column"].strip()
        update["zone_column"] = _check_column(sample, text, "timezone_column") if text else None
    zone = update.get("timezone", base.timezone if base else "UTC")
    return TimestampReading(
        pattern=pattern,
        timezone=zone,
        zone_column=update.get("zone_column", base.zone_column if base else None),
        time_column=update.get("time_column", time_column),
    )


def _zone(text: str) -> str:
    """An IANA time zone name as a person typed it; raises MappingError for one that is not."""
    name = text.strip()
    if name.upper() in ("UTC", "GMT", "Z"):
        return "UTC"
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise MappingError(
            f'"{text}" is not an IANA time zone; write it like Europe/Berlin or America/New_York'
        ) from None
    return name


def _date_order_of(pattern: str | None) -> str:
    """DMY, MDY or YMD: the order of the date part of a strptime pattern ("" if none)."""
    match = _DATE_PART.match(pattern or "")
    if not match:
        return ""
    parts = (match.group(1), match.group(3), match.group(4))
    return "".join({"%d": "D", "%m": "M", "%Y": "Y", "%y": "Y"}[p] for p in parts)


def _pattern_for_order(values: list[str], order: str, where: str) -> str:
    """The timestamp pattern with dates in `order` that reads most of `values`."""
    tokens = {"D": "%d", "M": "%m"}
    candidates = []
    for fmt in (*TIMESTAMP_FORMATS, *(f.replace("%Y", "%y") for f in TIMESTAMP_FORMATS)):
        if _date_order_of(fmt) == order:
            candidates.append(fmt)
    probe = values[:200]
    best = max(candidates, key=lambda p: timestamp_hits(p, probe), default=None)
    if best is None or not timestamp_hits(best, probe):
        example = "".join(tokens.get(c, "%Y") for c in order)
        raise MappingError(
            f"no value of {where} reads as a {order} date ({example}); give timestamp_pattern"
        )
    return best


def swap_from_answers(answers: dict[Role, dict[str, str]], names: tuple[str, str]) -> bool | None:
    """Whether a person's `orders_file` answer makes the second of two files the orders export.

    None when nobody answered; raises MappingError for a name that is neither file.
    """
    given = [a["orders_file"] for a in answers.values() if a.get("orders_file", "").strip()]
    if not given:
        return None
    wanted = given[0].strip()
    for index, name in enumerate(names):
        if wanted == name or wanted.casefold() == name.casefold():
            return index == 1
    raise MappingError(
        f'orders_file "{wanted}" is neither file; the files are {names[0]} and {names[1]}'
    )
