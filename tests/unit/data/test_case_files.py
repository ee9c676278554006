"""The one door to a case's files gives exactly what the engine gives when it is called by hand
(issue 39: equivalence around the door): the same samples, the same proposal, the same
validation report, and a byte-identical exceptions file, also when a validation's kept tables
serve the reconciliation."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from agent.casefiles import CaseFiles
from agent.data.demo import generate
from agent.data.ingest import inspect_csv
from agent.data.mapping import infer_mapping
from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.schema import Role
from agent.domain import DatasetRef
from storage.blobs import LocalBlobStore


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    generate(2_500, out, seed=17)
    return out


def _door(tmp_path: Path, demo: Path) -> tuple[CaseFiles, dict[Role, DatasetRef]]:
    blobs = LocalBlobStore(tmp_path / "blobs")
    files = {}
    for role in Role:
        path = demo / f"{role.value}.csv"
        with path.open("rb") as handle:
            stored = blobs.put(handle)
        files[role] = DatasetRef(role=role, name=path.name, size=stored.size, digest=stored.digest)
    door = CaseFiles(blobs, tmp_path / "work", policy=Policy(), max_age=timedelta(hours=1))
    return door, files


def test_the_door_samples_proposes_and_validates_as_the_engine_does(
    tmp_path: Path, demo: Path
) -> None:
    door, files = _door(tmp_path, demo)
    samples = {role: door.sample(ref) for role, ref in files.items()}
    by_hand = {role: inspect_csv(demo / f"{role.value}.csv", f"{role.value}.csv") for role in Role}
    assert {r: s.layout for r, s in samples.items()} == {r: s.layout for r, s in by_hand.items()}
    proposal = door.propose(files, samples)
    assert proposal == infer_mapping(by_hand[Role.ORDERS], by_hand[Role.PAYMENTS])
    assert proposal.mapping is not None
    report = door.validate(files, proposal.mapping)
    paths = {role: (demo / f"{role.value}.csv", f"{role.value}.csv") for role in Role}
    plain = load_and_validate(connect(), paths, proposal.mapping, policy=Policy())
    assert (report.errors, report.warnings, report.facts, report.routine, report.rows) == (
        plain.errors,
        plain.warnings,
        plain.facts,
        plain.routine,
        plain.rows,
    )


def test_the_door_reconciles_to_the_same_bytes_after_a_validation_kept_its_tables(
    tmp_path: Path, demo: Path
) -> None:
    door, files = _door(tmp_path, demo)
    samples = {role: door.sample(ref) for role, ref in files.items()}
    mapping = door.propose(files, samples).mapping
    assert mapping is not None
    assert door.validate(files, mapping).ok  # keeps its tables for the reconciliation
    through = door.reconcile(files, mapping, Policy(), tmp_path / "door.csv", tmp_path / "job")
    paths = {role: (demo / f"{role.value}.csv", f"{role.value}.csv") for role in Role}
    plain = run_job(paths, mapping, Policy(), tmp_path / "plain.csv")
    assert (tmp_path / "door.csv").read_bytes() == (tmp_path / "plain.csv").read_bytes()
    assert through.exported == plain.exported
    assert {r: d for r, d in through.digests.items()} == {r: f.digest for r, f in files.items()}
