"""The bounds of inference: what it costs stays flat however wide or long the files are.

Inference compares columns with columns across two files, so a file of hundreds of columns
would cost hundreds of times (pairs of columns times rows) what an export of normal width
does. Every step is bounded instead. The bounds on comparing values are wide enough that an
export of normal width (up to 16 reference and 20 amount columns, a full sample of rows) never
meets them; the profile budget reads every column of a file of up to 20 columns in full:

- Profiles read each column's first values, a file's columns sharing `profile.PROFILE_CELLS`
  values, the columns whose header names a field first (`named_columns`).
- Candidates are narrowed by header and by the kind of their values first (`candidates`);
  only the best `COMPARED_CANDIDATES` of a field are compared with the other file's values
  (key overlap, amount agreement). When more than `CLOSE_CANDIDATES` candidates of a field
  are close, the ambiguity rule asks without settling them by the data, and a question names
  at most that many.
- Key overlap reads each distinct reference once, at most `OVERLAP_VALUES` of them over all
  compared reference columns, and matches them to the other file's keys as a set
  intersection: the cost is linear in the sample, not in rows times column pairs.
- A time budget (`Budget`, CPU time of the inferring thread, so other work running at the
  same time does not spend it): once spent, the steps that compare values stop, and a
  required field with more than one candidate is asked (`ambiguity.decide_field`), never
  guessed.
"""

from __future__ import annotations

import time
from collections.abc import Collection

from agent.data.ingest import SAMPLE_ROWS, CsvSample
from agent.data.mapping.by_object import ByObjects
from agent.data.mapping.columns import SampleColumns
from agent.data.mapping.headers import header_score
from agent.data.mapping.wording import ProposalCode
from agent.data.notes import Note
from agent.data.profile import ColumnProfile, profile_sample
from agent.data.schema import SCHEMA

# Candidates of one field compared with the other file's values (key overlap, amount agreement):
# twice the most an export of normal width has (16 reference columns, 20 amount columns).
COMPARED_CANDIDATES = 32
# Distinct references read for key overlap, shared by the compared reference columns: 16
# columns of a full sample (`ingest.SAMPLE_ROWS`) each.
OVERLAP_VALUES = 16 * SAMPLE_ROWS
# Candidates in doubt the data settles; more are asked about, and a question names at most
# this many. Also the type columns read for row kinds.
CLOSE_CANDIDATES = 8
# CPU seconds inference may spend comparing values before it asks instead.
TIME_BUDGET_SECONDS = 5.0


class Budget:
    """The CPU time left for one inference, and whether it ran out.

    Measured on the inferring thread's clock (`time.thread_time`): uploads inspected in other
    threads at the same time do not spend it, so a file gets the same answer under load.
    """

    def __init__(self, seconds: float = TIME_BUDGET_SECONDS, *, used: float = 0.0) -> None:
        """`seconds` from now on this thread's clock, less what was `used` of it already (on
        another thread, by the steps before)."""
        self.seconds = seconds
        self._deadline = time.thread_time() + seconds - used
        self.spent = False

    def exhausted(self) -> bool:
        """Whether the budget is spent (for good: once spent, it stays spent)."""
        if not self.spent and time.thread_time() > self._deadline:
            self.spent = True
        return self.spent

    @property
    def note(self) -> Note:
        """The note a proposal made under a spent budget carries (`ProposalCode.BUDGET_SPENT`)."""
        return Note(ProposalCode.BUDGET_SPENT, {"seconds": self.seconds})


def named_columns(columns: Collection[str]) -> set[str]:
    """The columns whose header names some field of either file (an alias or its words)."""
    specs = [spec for role in SCHEMA for spec in SCHEMA[role]]
    return {name for name in columns if any(header_score(spec, name) > 0 for spec in specs)}


KEPT_DISTINCT_COLUMNS = 32
"""Files of at most this many columns keep each column's distinct sampled values for the
inference that reads them again (`SampleColumns.distinct`); a wider file's would hold a set
per column at once."""


def profiles_of(sample: CsvSample, columns: SampleColumns | None = None) -> list[ColumnProfile]:
    """The profiles of a sampled file, its named columns read deepest when it is wide.

    `columns` is the file already read by column, when inference has it. The same sample
    object is profiled once (`assign_roles` and then `infer_mapping` profile the two samples
    of an upload): see `_PROFILED`.
    """
    found = _PROFILED.get((sample,))
    if found is None:
        view = columns if columns is not None else SampleColumns(sample)
        names = sample.layout.columns
        # A narrow file's distinct values are kept for the inference's steps too; a wide one's
        # are made for each column's profile and let go.
        narrow = len(names) <= KEPT_DISTINCT_COLUMNS
        distinct = [view.distinct(name) for name in names] if narrow else None
        found = profile_sample(sample, named_columns(names), view.by_column(), distinct)
        _PROFILED.put((sample,), list(found))
    return list(found)


_PROFILED: ByObjects[CsvSample, list[ColumnProfile]] = ByObjects(8)
"""The profiles of the last few samples profiled, by object (a sample never changes once read,
so its profiles stay true)."""
