"""What mapping inference returns: the proposal for both files and the questions that block it.

`Proposal` is the one object the rest of the bot sees: a `DatasetProposal` per file (the
`FieldChoice` of every canonical field, with its `Candidate` alternatives, and how values are
read), the confidence in which file is which, and the open `Clarification`s. While any
clarification is open there is no mapping.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from agent.data.notes import Note
from agent.data.schema import DatasetMapping, Mapping, ReadingOptions, Role


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
    notes: list[Note]  # what inference assumed and decided, as codes (`wording.ProposalCode`)

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
