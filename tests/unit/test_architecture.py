"""The dependency rule of DESIGN §2, checked on the imports the code actually makes."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BEDROCK = "agent/models/bedrock.py"
AGENT_FORBIDDEN = ("bot", "storage", "slack_bolt", "slack_sdk", "sqlalchemy", "boto3", "botocore")
STORAGE_FORBIDDEN = ("bot", "slack_bolt", "slack_sdk")
COMPOSITION_ROOT = frozenset({"bot/composition.py"})


def imported_modules(path: Path) -> set[str]:
    """Top-level-qualified names of every module a file imports, wherever the import stands."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def python_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def violations(
    package: str, forbidden: tuple[str, ...], allow: set[str] = frozenset()
) -> list[str]:  # type: ignore[assignment]
    found = []
    for path in python_files(package):
        relative = path.relative_to(ROOT).as_posix()
        if relative in allow:
            continue
        for name in imported_modules(path):
            if name.split(".")[0] in forbidden:
                found.append(f"{relative} imports {name}")
    return found


def test_agent_knows_nothing_of_slack_sql_s3_or_the_outer_packages() -> None:
    assert python_files("agent")
    assert violations("agent", AGENT_FORBIDDEN, allow={BEDROCK}) == []
    # The Bedrock provider may use boto3 and botocore (what Strands needs), nothing else.
    assert violations("agent", AGENT_FORBIDDEN[:-2], allow=set()) == []


def test_storage_never_imports_the_bot_or_slack() -> None:
    assert violations("storage", STORAGE_FORBIDDEN) == []


def test_only_the_composition_root_of_bot_imports_storage() -> None:
    assert violations("bot", ("storage",), allow=COMPOSITION_ROOT) == []


def test_the_data_engine_imports_nothing_of_the_agent_runtime() -> None:
    runtime = ("agent.runtime", "agent.models", "agent.workflow", "agent.approval", "strands")
    found = [
        f"{p.relative_to(ROOT)} imports {name}"
        for p in python_files("agent/data")
        for name in imported_modules(p)
        if name.startswith(runtime)
    ]
    assert found == []


@pytest.mark.parametrize("module", ["os", "agent.errors"])
def test_the_checker_sees_imports(module: str, tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text(f"def f():\n    import {module}\n")
    assert module in imported_modules(sample)
