"""Which file is which: the orders export and the payments export, decided from content.

Each file is fitted to each role by how well its columns fill the role's required fields (one
column cannot play two fields) plus header words only one kind of export tends to have. The
arrangement with the better total fit wins; a person's `orders_file=NAME` answer overrides it.
When the two fits are too close to call, `ambiguity.role_question` asks.
"""

from __future__ import annotations

from agent.data.ingest import CsvSample
from agent.data.mapping.bounds import profiles_of
from agent.data.mapping.candidates import score_columns
from agent.data.mapping.headers import normalize_header
from agent.data.profile import ColumnProfile
from agent.data.schema import SCHEMA, Role
from agent.errors import MappingError

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


def _role_fit(profiles: list[ColumnProfile], role: Role) -> float:
    # A payment id is not required (a file without one names its rows by number), but a file
    # with one looks more like a payments export: it counts towards the fit as it always did.
    required = [s for s in SCHEMA[role] if s.required or s.by_row]
    total = 0.0
    used: set[str] = set()
    for spec in required:
        # One column cannot play two fields: a file with a single id column has no separate
        # payment id and order reference, so it fits the payments role badly.
        found = [c for c in score_columns(spec, profiles) if c.column not in used]
        if found:
            total += found[0].score
            used.add(found[0].column)
    words = {t for p in profiles for t in normalize_header(p.name).split()}
    bonus = min(0.3, 0.06 * len(words & _ROLE_WORDS[role]))
    return total / len(required) + bonus


def role_fits(first: list[ColumnProfile], second: list[ColumnProfile]) -> tuple[float, float]:
    """How well the files fit as given (first = orders) and crossed (first = payments)."""
    straight = _role_fit(first, Role.ORDERS) + _role_fit(second, Role.PAYMENTS)
    crossed = _role_fit(first, Role.PAYMENTS) + _role_fit(second, Role.ORDERS)
    return straight, crossed


def assign_roles(first: CsvSample, second: CsvSample) -> tuple[Role, Role]:
    """Which role each of two files plays, decided from content as `infer_mapping` decides it."""
    straight, crossed = role_fits(profiles_of(first), profiles_of(second))
    if crossed > straight:
        return Role.PAYMENTS, Role.ORDERS
    return Role.ORDERS, Role.PAYMENTS


def role_of(sample: CsvSample) -> Role:
    """The role one file most likely plays, from its headers and values alone."""
    profiles = profiles_of(sample)
    return max(Role, key=lambda role: _role_fit(profiles, role))


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
