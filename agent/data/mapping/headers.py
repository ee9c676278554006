"""Header folding and header scores: how strongly a column's name says which field it feeds.

Headers are matched to the aliases of `schema.SCHEMA` after folding (case, accents, spacing,
punctuation, API-style names, articles such as `de`/`do`, "incl./excl. tax" phrases), so
`Währung`, `Nº de pedido`, `Order Total (inc tax)` and `order_id (metadata)` all read.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from agent.data.schema import FieldSpec

# Header words that qualify a field without changing it: `Created (UTC)`, `order_id (metadata)`.
_QUALIFIERS = frozenset({"metadata", "utc", "gmt", "local"})
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


@lru_cache(maxsize=4096)
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
