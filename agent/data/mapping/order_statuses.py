"""What each value of an orders file's status column means: proposed from the vocabulary.

Every distinct status in the sample gets the meaning the vocabulary in force gives it (paid,
pending, voided, refunded, partially refunded); a person's answers (`statuses_paid=...`)
replace a list and take its values out of the others. A value the vocabulary does not know is
in no list: validation, which sees every value of the whole file, stops the approval with a
question that proposes a meaning. The lists are part of the mapping a person approves.
"""

from __future__ import annotations

from collections import Counter

from agent.data.ingest import CsvSample
from agent.data.keys import _first_error
from agent.data.mapping.proposal import FieldChoice
from agent.data.profile import column_values
from agent.data.schema import OrderStatuses, kind_word
from agent.data.schema.readings import ORDER_STATUS_LISTS
from agent.data.vocabulary import Vocabulary
from agent.errors import MappingError


def _status_values(sample: CsvSample, column: str) -> list[str]:
    """The distinct statuses of `column` as `kind_word` reads them, most frequent first."""
    counts: Counter[str] = Counter()
    for value, count in Counter(column_values(sample, column)).items():
        if value.strip():
            counts[kind_word(value)] += count
    return sorted(counts, key=lambda w: (-counts[w], w))


def order_statuses(
    sample: CsvSample,
    choices: list[FieldChoice],
    answers: dict[str, str],
    vocabulary: Vocabulary,
) -> OrderStatuses | None:
    """The meaning of each sampled order status, then a person's answers; None when no status
    column is mapped. Values the vocabulary does not know are in no list (validation asks).

    Raises MappingError, in words, for lists answered without a status column, or that give
    one value two meanings.
    """
    column = next((c.column for c in choices if c.field == "order_status"), None)
    given = {
        name: answers[f"statuses_{name}"]
        for name in ORDER_STATUS_LISTS
        if f"statuses_{name}" in answers
    }
    if column is None:
        if given:
            raise MappingError(
                "order status meanings need a status column: map orders.order_status first"
            )
        return None
    lists: dict[str, list[str]] = {name: [] for name in ORDER_STATUS_LISTS}
    for value in _status_values(sample, column):
        meaning = vocabulary.order_meaning(value)
        if meaning is not None:
            lists[meaning].append(value)
    for name, text in given.items():
        words = [kind_word(w) for w in text.split(",") if w.strip()]
        lists[name] = words
        for other in lists:
            if other != name and other not in given:
                lists[other] = [w for w in lists[other] if w not in words]
    try:
        return OrderStatuses(**{name: tuple(words) for name, words in lists.items()})
    except ValueError as error:
        raise MappingError(f"order statuses: {_first_error(error)}") from None
