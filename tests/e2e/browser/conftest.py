"""The local workspace in a real browser: Playwright driving Debian's Chromium (never a browser
Playwright downloads) against the workspace and the bot, started in this process on free
loopback ports exactly as `reconbot start --local-workspace` starts them.

Skips, saying why, where no Chromium can be found: `PLAYWRIGHT_CHROMIUM` names one, else
`chromium` on the PATH, else /usr/bin/chromium. With `RECONBOT_SCREENSHOTS=DIR` the tests
save the pictures of the README there (`make screenshots`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent.data.demo import generate
from bot.config import Settings
from bot.terminal.slack_cli import LocalRun, demo_files, start_local_workspace

DEMO_ROWS = 400
WAIT_MS = 60_000
VIEWPORT = {"width": 1400, "height": 1000}


def chromium_executable() -> str | None:
    """The Chromium to drive: PLAYWRIGHT_CHROMIUM, `chromium` on the PATH, /usr/bin/chromium."""
    named = os.environ.get("PLAYWRIGHT_CHROMIUM")
    if named:
        return named if Path(named).exists() else None
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def screenshots_folder() -> Path | None:
    """Where to save the README's pictures (RECONBOT_SCREENSHOTS), if anywhere."""
    folder = os.environ.get("RECONBOT_SCREENSHOTS")
    if not folder:
        return None
    path = Path(folder).resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass
class Demo:
    """The demo pair the workspace's "Use demo files" shares."""

    folder: Path

    @property
    def orders(self) -> Path:
        """The orders export."""
        return self.folder / "orders.csv"

    @property
    def payments(self) -> Path:
        """The payments export."""
        return self.folder / "payments.csv"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    """A small demo pair (the one `make run` offers has 10,000 orders)."""
    folder = tmp_path_factory.mktemp("browser-demo")
    generate(DEMO_ROWS, folder, seed=7)
    return Demo(folder)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright (skips without one)."""
    executable = chromium_executable()
    if executable is None:
        pytest.skip(
            "no Chromium to drive: install Debian's (apt-get install chromium) or set "
            "PLAYWRIGHT_CHROMIUM to a Chromium executable"
        )
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")
    sync_api.expect.set_options(timeout=WAIT_MS)
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def local(demo: Demo, tmp_path: Path) -> Iterator[LocalRun]:
    """The workspace and its bot, state in a folder of this test, the demo pair on offer."""
    settings = Settings(reconbot_home=tmp_path / "home")
    run = start_local_workspace(settings, port=0, demo=demo_files(demo.folder, DEMO_ROWS))
    yield run
    run.stop()


@pytest.fixture
def page(browser: Any, local: LocalRun) -> Iterator[Any]:
    """A fresh browser tab on the workspace's page, acting as Alice (the requester)."""
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.set_default_timeout(WAIT_MS)
    tab.goto(local.workspace.url)
    yield tab
    context.close()
    assert errors == [], f"the page raised: {errors}"
