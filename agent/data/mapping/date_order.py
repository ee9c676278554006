"""Dates that read day-first and month-first alike (`03/04/2025`): the other file decides, or
the person is asked.

When every sampled date of a file fits both orders, its values alone cannot say which is meant,
and a wrong guess moves dates by months: captures flagged outside the window that were not,
late ones matched. The same orders' payments, in a file whose dates are not in doubt, settle
it: under the right order nearly every capture falls within days of its order.
"""

from __future__ import annotations

from datetime import datetime

from agent.data.mapping.columns import SampleColumns
from agent.data.mapping.evidence import Evidence
from agent.data.mapping.proposal import Clarification, DatasetProposal
from agent.data.mapping.settling import MIN_MATCHED, the_one_that_agrees
from agent.data.mapping.wording import ProposalCode
from agent.data.notes import note, without_code
from agent.data.schema import TIME_FIELD, Role, TimestampReading
from agent.data.timestamp_formats import ZONE_SUFFIX, split_zone

_NEAR_DAYS = 7  # swapped day and month move a date by about a month or more (but 5/5)
_GUESSED = (ProposalCode.DAY_MONTH_GUESSED, ProposalCode.DAY_MONTH_SETTLED)


def decide_date_order(
    datasets: dict[Role, DatasetProposal],
    samples: dict[Role, SampleColumns],
    evidence: dict[Role, Evidence],
    answers: dict[Role, dict[str, str]],
    clarifications: list[Clarification],
) -> None:
    """Settle, by the other file, or ask about each file whose dates fit both orders."""
    for role in Role:
        proposal = datasets[role]
        field = TIME_FIELD[role]
        column = proposal.column_of(field)
        stamp = proposal.options.timestamps.get(field)
        mine = answers.get(role, {})
        if column is None or stamp is None or {"date_order", "timestamp_pattern"} & mine.keys():
            continue
        if not evidence[role].profiles[column].day_month_guessed:
            continue
        other = role.other
        other_column = datasets[other].column_of(TIME_FIELD[other])
        other_stamp = datasets[other].options.timestamps.get(TIME_FIELD[other])
        settled = None
        if (
            other_column is not None
            and other_stamp is not None
            and not evidence[other].profiles[other_column].day_month_guessed
        ):
            settled = _settle(datasets, samples, role, stamp)
        notes = without_code(proposal.notes, *_GUESSED)
        if settled is None:
            datasets[role] = proposal.model_copy(update={"notes": notes})
            clarifications.append(
                Clarification(
                    role=role,
                    field="date_order",
                    question=(
                        f'{proposal.file_name}: every sampled date in "{column}" reads day-first '
                        "and month-first (03/04 is 3 April or 4 March), and the other file does "
                        "not settle it. Which order are its dates in?"
                    ),
                    choices=["DMY", "MDY"],
                )
            )
            continue
        if settled != stamp.pattern:
            reading = stamp.model_copy(update={"pattern": settled})
            timestamps = {**proposal.options.timestamps, field: reading}
            options = proposal.options.model_copy(update={"timestamps": timestamps})
            proposal = proposal.model_copy(update={"options": options})
        notes.append(note(ProposalCode.DAY_MONTH_SETTLED, column=column, pattern=settled))
        datasets[role] = proposal.model_copy(update={"notes": notes})


def _swapped(pattern: str) -> str:
    """`pattern` with its day and month swapped (`%d/%m/%Y` and `%m/%d/%Y`)."""
    return pattern.replace("%d", "\0").replace("%m", "%d").replace("\0", "%m")


def _settle(
    datasets: dict[Role, DatasetProposal],
    samples: dict[Role, SampleColumns],
    role: Role,
    stamp: TimestampReading,
) -> str | None:
    """The pattern under which the matched rows' times agree with the other file's (near
    each other, almost always), when one of the two orders does and the other does not."""
    patterns = (stamp.pattern, _swapped(stamp.pattern))
    return the_one_that_agrees({p: _near_share(datasets, samples, role, p) for p in patterns})


def _near_share(
    datasets: dict[Role, DatasetProposal],
    samples: dict[Role, SampleColumns],
    role: Role,
    pattern: str,
) -> float | None:
    """The share of matched orders whose capture is within `_NEAR_DAYS` of the order when
    `role`'s dates read under `pattern`; None with fewer than `MIN_MATCHED` matched."""
    orders, payments = datasets[Role.ORDERS], datasets[Role.PAYMENTS]
    key_col, ref_col = orders.column_of("order_id"), payments.column_of("order_id")
    o_col, p_col = orders.column_of("order_date"), payments.column_of("captured_at")
    o_stamp = orders.options.timestamps.get("order_date")
    p_stamp = payments.options.timestamps.get("captured_at")
    if key_col is None or ref_col is None or o_col is None or p_col is None:
        return None
    if o_stamp is None or p_stamp is None:
        return None
    o_pattern = _cell_pattern(pattern if role is Role.ORDERS else o_stamp.pattern, o_stamp)
    p_pattern = _cell_pattern(pattern if role is Role.PAYMENTS else p_stamp.pattern, p_stamp)
    o_sample, p_sample = samples[Role.ORDERS], samples[Role.PAYMENTS]
    ordered: dict[str, datetime] = {}
    for key, text in zip(o_sample.keys(key_col), o_sample.values(o_col), strict=True):
        when = _parse(text, o_pattern)
        if when is not None and key not in ordered:
            ordered[key] = when
    one = p_sample.references(ref_col).one
    near = total = 0
    for ref, text in zip(p_sample.values(ref_col), p_sample.values(p_col), strict=True):
        named = one.get(ref)
        captured = _parse(text, p_pattern)
        if named is None or named not in ordered or captured is None:
            continue
        total += 1
        near += abs((captured - ordered[named]).total_seconds()) <= _NEAR_DAYS * 86_400
    return near / total if total >= MIN_MATCHED else None


def _cell_pattern(pattern: str, stamp: TimestampReading) -> str:
    """The pattern of the timestamp column's own cells: its date part alone when the time of
    day is read from another column (`time_column`)."""
    return pattern.split(" ")[0] if stamp.time_column is not None else pattern


def _parse(text: str, pattern: str) -> datetime | None:
    """`text` under `pattern`, as naive wall-clock time (offsets matter little against days);
    a zone written after the time is left out."""
    if pattern.endswith(ZONE_SUFFIX):
        text, pattern = split_zone(text, pattern)[0], pattern.removesuffix(ZONE_SUFFIX)
    try:
        return datetime.strptime(text.strip(), pattern).replace(tzinfo=None)
    except ValueError:
        return None
