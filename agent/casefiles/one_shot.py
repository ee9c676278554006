"""One-shot jobs on files named on a command line (`reconbot inspect`, `reconbot reconcile`):
no case, no blob store, no caches kept; the same steps as a case's, through the same door."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agent.data.evident_reading import take_evident
from agent.data.ingest import CsvSample, inspect_csv
from agent.data.mapping import Proposal, infer_mapping
from agent.data.normalize import ValidationReport
from agent.data.pipeline import JobResult, run_job
from agent.data.policy import Policy
from agent.data.reconcile import validate_once
from agent.data.schema import Mapping, Role

LocalFiles = dict[Role, tuple[Path, str]]
"""Each role's file: its path and the name it is reported under."""


def inspect_files(paths: Sequence[Path], policy: Policy) -> tuple[list[CsvSample], Proposal]:
    """Each file's head sample and the mapping proposed for the pair (which file plays which
    role, each field's column, how values read), under the policy's words."""
    samples = [inspect_csv(path, path.name) for path in paths]
    return samples, infer_mapping(*samples, vocabulary=policy.vocabulary())


def validate_files(
    paths: Sequence[Path], samples: list[CsvSample], proposal: Proposal, policy: Policy
) -> tuple[Proposal, ValidationReport | None]:
    """`proposal`'s mapping checked on every row of the files, with the id reading the files
    show taken in its place as the bot takes it (`take_evident`); no report when nothing
    could be proposed."""
    mapping = proposal.mapping
    if mapping is None:
        return proposal, None
    by_name = {s.layout.file_name: p for s, p in zip(samples, paths, strict=True)}
    files = {
        role: (by_name[proposal.dataset(role).file_name], proposal.dataset(role).file_name)
        for role in Role
    }
    vocabulary = policy.vocabulary()
    found: tuple[Proposal, ValidationReport] = take_evident(
        lambda given: infer_mapping(*samples, answers=given, vocabulary=vocabulary),
        lambda chosen: validate_once(files, chosen, policy),
        {},
        proposal,
        validate_once(files, mapping, policy),
    )
    return found


def reconcile_files(files: LocalFiles, mapping: Mapping, policy: Policy, export: Path) -> JobResult:
    """Reconcile two local files under a saved mapping, writing the exceptions CSV to `export`."""
    return run_job(files, mapping, policy, export)
