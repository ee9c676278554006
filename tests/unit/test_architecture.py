"""The architecture, checked on the code as it is: the import contracts of pyproject.toml
(import-linter, also run by `make lint`) and the size of a module one person can hold in mind."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_MODULE_LINES = 400
PACKAGES = ("agent", "bot", "storage", "workspace")


def _lint_imports(*args: str) -> subprocess.CompletedProcess[str]:
    command = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert command, "import-linter is a dev dependency: run `make .venv/.synced`"
    return subprocess.run(
        [command, "--no-cache", "--no-logo", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_every_import_contract_is_kept() -> None:
    result = _lint_imports()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_broken_contract_is_caught(tmp_path: Path) -> None:
    """The contracts can fail: the core importing storage breaks the first one."""
    package = tmp_path / "core"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "inner" / "__init__.py").write_text("import json\n")
    (package / "outer.py").write_text("from core import inner\n")
    config = tmp_path / "contracts.toml"
    config.write_text(
        "[tool.importlinter]\nroot_packages = ['core']\n"
        "[[tool.importlinter.contracts]]\nname = 'inner never imports outer'\n"
        "type = 'forbidden'\nsource_modules = ['core.outer']\nforbidden_modules = ['core.inner']\n"
    )
    command = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert command
    result = subprocess.run(
        [command, "--no-cache", "--no-logo", str(config)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(tmp_path), "PATH": ""},
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "BROKEN" in result.stdout


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_is_too_long_to_hold_in_mind(package: str) -> None:
    long = {
        path.relative_to(ROOT).as_posix(): lines
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
        and (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}
