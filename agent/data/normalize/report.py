"""The validation report: per-field checks of both files and what blocks reconciling."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.data.notes import Note


@dataclass
class FieldCheck:
    """How one mapped field's values read across the whole file."""

    file: str
    field: str
    column: str
    filled: int
    unreadable: int
    example_rows: list[int]
    problem: str = ""
    """What an unreadable value is called (`values that do not read as amounts`): a fragment
    only ever put in words, in the note of a field whose values do not read."""

    @property
    def unreadable_share(self) -> float:
        """Unreadable values over filled values."""
        return self.unreadable / self.filled if self.filled else 0.0


@dataclass
class ValidationReport:
    """Whether a mapping reads both files: per-field checks and the blocking problems."""

    rows: dict[str, int] = field(default_factory=dict)
    checks: list[FieldCheck] = field(default_factory=list)
    errors: list[Note] = field(default_factory=list)
    warnings: list[Note] = field(default_factory=list)
    facts: list[Note] = field(default_factory=list)
    """What the reading decides that a person should see: the meaning given to each status,
    kind and sign, the reading proposed from the files."""
    routine: list[Note] = field(default_factory=list)
    """Counts that need no decision (rows read, order ids, references that meet): shown
    folded into one line, after the warnings and facts. The references line, the one a
    proposal compares itself with, is the note of code `Code.REFERENCES`."""
    proposed: dict[str, dict[str, str]] = field(default_factory=dict)
    """A reading the files themselves show (role -> reading option -> value), found when this
    one does not meet: the id reading under which most references name an order, clearly
    ahead of any other. A caller may validate it in place of this one (`gates`)."""
    proposed_reading: Note | None = None
    """`proposed` as a note (`Code.PROPOSED_READING`), with its figure (`10,988 of 11,066
    references name an order under: payments: prefix 'WC-' removed`), for the request that
    proposes it."""
    references: list[int] = field(default_factory=list)
    """How many payment references name an order under this reading, and of how many."""

    @property
    def ok(self) -> bool:
        """True when nothing blocks reconciling under this mapping."""
        return not self.errors


def merge(first: ValidationReport, second: ValidationReport) -> ValidationReport:
    """One report for both files."""
    return ValidationReport(
        rows={**first.rows, **second.rows},
        checks=[*first.checks, *second.checks],
        errors=[*first.errors, *second.errors],
        warnings=[*first.warnings, *second.warnings],
        facts=[*first.facts, *second.facts],
        routine=[*first.routine, *second.routine],
        proposed={**first.proposed, **second.proposed},
        proposed_reading=first.proposed_reading or second.proposed_reading,
        references=first.references or second.references,
    )
