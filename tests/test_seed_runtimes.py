"""The seeds' own runtimes open like every other format (issue 13): detected by content through the
registry, with no --format, by `inspector analyze` (human and --json) and by the app. Each store is
built from that runtime's types by the builders its adapter's own tests use."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.formats import load
from inspector.tui.app import create_app
from inspector.tui.session import SessionScreen
from tests import test_adk_go, test_maka, test_nextclaw
from tests.adk_go_store import store
from tests.conftest import app_reaches
from tests.nextclaw_store import Journal

pytestmark = pytest.mark.anyio


def _adk_go(tmp: Path) -> Path:
    return Path(store(str(tmp / "adk-go.db"), {"s1": test_adk_go.notes_example("camel")}))


def _maka(tmp: Path) -> Path:
    s, p = test_maka.two_turns(tmp)
    test_maka.write(p, s)
    return Path(p)


def _nextclaw(tmp: Path) -> Path:
    j = test_nextclaw._streamed_turn(Journal())
    test_nextclaw._compacted(j, summaryDiagnostics=test_nextclaw.SEED_004, preservedUserMessageIds=[])
    return j.write(tmp)


BUILDERS = {"adk_go": _adk_go, "maka": _maka, "nextclaw": _nextclaw}


@pytest.mark.parametrize("fmt", sorted(BUILDERS))
def test_detected_by_content_and_analyzed_by_the_cli(fmt: str, tmp_path: Path) -> None:
    path = BUILDERS[fmt](tmp_path)
    assert load(str(path)).format == fmt  # the registry's detection, no --format
    p = subprocess.run([sys.executable, "-m", "inspector", "analyze", str(path), "--json"], capture_output=True, text=True, check=False)
    assert p.returncode in (0, 1) and "Traceback" not in p.stderr, p.stderr
    doc = json.loads(p.stdout)
    assert doc["format"] == fmt and doc["checkpoints"], doc.get("findings")
    human = subprocess.run([sys.executable, "-m", "inspector", "analyze", str(path)], capture_output=True, text=True, check=False)
    assert human.returncode in (0, 1) and "Traceback" not in human.stderr and fmt in human.stdout


@pytest.mark.parametrize("fmt", sorted(BUILDERS))
async def test_opens_in_the_app(fmt: str, tmp_path: Path) -> None:
    path = BUILDERS[fmt](tmp_path)
    app = create_app([str(path)], show_timings=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await app_reaches(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.report is not None)
        screen = app.screen
        assert isinstance(screen, SessionScreen) and screen.report is not None
        assert screen.report.ledger.format == fmt and screen.report.checkpoints
        await pilot.press("n", "f", "c", "3")


def test_every_finding_code_is_in_the_code_table_the_docs_and_the_readme(tmp_path: Path) -> None:
    """One place for a finding code (STYLE: a new code is one entry): the table in findings.py,
    docs/report-json.md and the README list agree, and what the seeds' runtimes emit is in it."""
    import re

    from inspector.analysis import analyze
    from inspector.analysis.findings import CODES

    root = Path(__file__).parent.parent
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", (root / "docs" / "report-json.md").read_text(), re.M))
    readme = (root / "README.md").read_text()
    listed = set(re.findall(r"`([a-z_]+)`", readme[readme.index("- **Findings**") : readme.index("- **The next request**")]))
    assert set(CODES) <= documented, set(CODES) - documented
    assert set(CODES) <= listed, set(CODES) - listed
    emitted: set[str] = set()
    for fmt, build in BUILDERS.items():
        (tmp_path / fmt).mkdir()
        emitted |= {f.code for f in analyze(load(str(build(tmp_path / fmt)))).findings}
    assert emitted and emitted <= set(CODES), emitted - set(CODES)


def test_default_places_follow_the_runtimes_homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each runtime's default places move with the home its environment names, as the runtime
    resolves it (`Format.homes`): `$NEXTCLAW_HOME` (no `~` expansion, relative to the working
    directory), OpenClaw's `$OPENCLAW_STATE_DIR` over `$OPENCLAW_HOME/.openclaw`, maka's Electron
    appData `$XDG_CONFIG_HOME`; the help text lists the moved places."""
    import os

    from inspector.formats import registry
    from inspector.store.places import default_places
    from inspector.tui.triage import discover

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NEXTCLAW_HOME", " nc[1] ")  # trimmed; glob characters are the folder's own
    journal = _nextclaw(tmp_path / "nc[1]" / "sessions" / ".ncp-agent-journal")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    work = tmp_path / "xdg" / "Maka" / "workspaces" / "w1"
    work.mkdir(parents=True)
    maka_store = _maka(work)
    monkeypatch.setenv("OPENCLAW_HOME", str(tmp_path / "oc-home"))
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(tmp_path / "oc-state"))
    for root in ("oc-home/.openclaw", "oc-state"):
        (tmp_path / root / "agents" / "main" / "agent").mkdir(parents=True)
    _, files, _ = discover(default_places())
    assert sorted(os.path.relpath(f, tmp_path) for f in files) == sorted(
        os.path.relpath(p, tmp_path) for p in (maka_store, journal)
    )
    places = registry.places()
    assert str(tmp_path / "oc-state" / "agents" / "main" / "agent") in default_places()
    assert not any("oc-home" in p for p in places)  # the state dir wins over the home
    assert not any(p.startswith(("~/.nextclaw", "~/.openclaw", "~/.config/")) for p in places)
    monkeypatch.delenv("OPENCLAW_STATE_DIR")
    assert str(tmp_path / "oc-home" / ".openclaw" / "agents" / "main" / "agent") in default_places()


def test_default_places_find_the_stores_and_skip_their_side_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bare `inspector`, `scan` and `watch` look in each format's default places: maka's workspaces
    (the desktop app's userData, maka.DEFAULT_PLACES) and NextClaw's journal folder; what those
    formats name as not sessions (SQLite side files, maka's policy file, NextClaw's metadata sidecar
    and session index) is left out. adk-go has no default place (an app opens any GORM file)."""
    import os

    from inspector.formats import adk_go
    from inspector.store.places import default_places
    from inspector.tui.triage import discover

    monkeypatch.setenv("HOME", str(tmp_path))
    work = tmp_path / ".config" / "Maka" / "workspaces" / "w1"
    work.mkdir(parents=True)
    maka_store = _maka(work)
    for side in ("runtime.sqlite-wal", "runtime-policy.json"):
        (work / side).write_bytes(b"")
    journals = tmp_path / ".nextclaw" / "sessions" / ".ncp-agent-journal"
    journal = _nextclaw(journals)
    (journals / "agent_main_s1.metadata.json").write_text(json.dumps({"_type": "metadata", "version": 1, "metadata": {}}))
    (journals / ".ncp-agent-session-index.json").write_text("{}")
    _, files, _ = discover(default_places())
    assert sorted(os.path.relpath(f, tmp_path) for f in files) == sorted(
        os.path.relpath(p, tmp_path) for p in (maka_store, journal)
    )
    assert adk_go.DEFAULT_PLACES == ()
