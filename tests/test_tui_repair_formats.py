"""The repair screen on every writable format (issue 14, "done when": the repair screen works for
every format): for a Claude Code session, a Codex rollout, an ADK SQLite store and the OpenClaw
store, open the screen, plan, run with the embedded default summarizer, Install, and find the
runtime's own record(s) in the store and the new checkpoint in the session view. An ADK JSON dump
cannot be written in place and a read-only format cannot be written at all: the screen says so
before Install, and offers nothing that would fail.

Every test works on a copy in tmp_path and keeps its backups in a tmp data dir.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Button, Input, Static

from inspector.analysis import analyze
from inspector.compaction.entries import record_id
from inspector.formats import load
from inspector.store.writeback import list_backups
from inspector.tui.app import create_app
from inspector.tui.repair import ConfirmInstall, RepairScreen
from inspector.tui.session import SessionScreen
from inspector.tui.timeline import Timeline
from tests.conftest import SHARED
from tests.test_tui_repair import SIZE, _planned, _ran, _session_ready, _text, _until

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
CLAUDE_CODE = SHARED / "peers" / "claude_code" / "corpus" / "manual_compact.jsonl"
CODEX = SHARED / "peers" / "codex" / "corpus" / "auto_compact.jsonl"
ADK = SHARED / "peers" / "adk" / "corpus"
OPENCLAW = HERE / "peers" / "openclaw" / "corpus" / "s1.sqlite"


@pytest.fixture(autouse=True)
def _data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))


def _copy(src: Path, tmp: Path) -> Path:
    assert src.exists(), f"the peer corpus is missing {src}"
    dst = tmp / src.name
    shutil.copyfile(src, dst)
    dst.chmod(0o644)
    return dst


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _rows(f: Path, sql: str) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(f)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@dataclass(frozen=True)
class Case:
    src: Path
    window: int | None
    reserve: int | None
    keep_recent: int
    # (the session file after the install, the repair's entry, the file before) -> checks that the
    # store holds the runtime's own record(s) and nothing else changed
    holds: Callable[[Path, dict[str, Any], bytes], None]
    in_confirm: tuple[str, ...]  # what the confirm modal says about the write


def _claude_code_lines(f: Path, entry: dict[str, Any], before: bytes) -> None:
    data = f.read_bytes()
    assert data.startswith(before) and data.count(b"\n") == before.count(b"\n") + 2
    boundary, summary = (json.loads(x) for x in data.splitlines()[-2:])
    assert boundary == entry and boundary["type"] == "system" and boundary["subtype"] == "compact_boundary"
    assert summary["isCompactSummary"] is True and summary["parentUuid"] == boundary["uuid"]


def _codex_lines(f: Path, entry: dict[str, Any], before: bytes) -> None:
    data = f.read_bytes()
    assert data.startswith(before) and data.count(b"\n") == before.count(b"\n") + 3
    cp, ev, tc = (json.loads(x) for x in data.splitlines()[-3:])
    assert cp == entry and cp["type"] == "compacted" and cp["payload"]["replacement_history"]
    assert ev["type"] == "event_msg" and ev["payload"]["item"] == {"type": "ContextCompaction", "id": cp["id"]}
    assert tc["type"] == "event_msg" and tc["payload"]["type"] == "token_count"


def _adk_row(f: Path, entry: dict[str, Any], before: bytes) -> None:
    n = len(_rows(f, "SELECT id FROM events"))
    eid, data = _rows(f, "SELECT id, event_data FROM events ORDER BY rowid DESC LIMIT 1")[0]
    ev = json.loads(data)
    assert eid == ev["id"] == entry["id"] and ev["author"] == "user"
    assert ev["actions"]["compaction"]["compacted_content"]["parts"][0]["text"]
    assert n == len(_rows_of(before, "SELECT id FROM events")) + 1


def _openclaw_rows(f: Path, entry: dict[str, Any], before: bytes) -> None:
    (event_json,) = _rows(f, "SELECT event_json FROM transcript_events ORDER BY seq DESC LIMIT 1")[0]
    assert json.loads(event_json) == entry and entry["type"] == "compaction"
    assert _rows(f, f"SELECT parent_id FROM transcript_event_identities WHERE event_id = '{entry['id']}'") == [(entry["parentId"],)]
    assert len(_rows(f, "SELECT seq FROM transcript_events")) == len(_rows_of(before, "SELECT seq FROM transcript_events")) + 1


def _rows_of(data: bytes, sql: str) -> list[tuple[Any, ...]]:
    """`sql` on a database held as bytes (the store before the install)."""
    con = sqlite3.connect(":memory:")
    try:
        con.deserialize(data)
        return con.execute(sql).fetchall()
    finally:
        con.close()


JSON_LINES = ("appends 2 JSON lines", "among them", "no existing byte is rewritten")
CODEX_LINES = ("appends 3 JSON lines", *JSON_LINES[1:])  # (the compacted line, its event, the usage after it)
ROWS = ("inserts", "as rows, in one transaction", "no existing row", "SQLite's online backup")
CASES = {
    "claude_code": Case(CLAUDE_CODE, 16_000, 2_000, 200, _claude_code_lines, JSON_LINES),
    "codex": Case(CODEX, None, None, 100, _codex_lines, CODEX_LINES),
    "adk_sqlite": Case(ADK / "token_threshold.db", 8_000, 1_000, 400, _adk_row, ROWS),
    "openclaw": Case(OPENCLAW, 32_768, 4_096, 800, _openclaw_rows, ROWS),
}


async def _open(app, pilot, keep_recent: int) -> RepairScreen:  # type: ignore[no-untyped-def]
    """The repair screen from the session view, planned as compact with `keep_recent`."""
    await _session_ready(app, pilot)
    await pilot.press("r")
    await _until(pilot, lambda: isinstance(app.screen, RepairScreen), "the repair screen")
    screen = app.screen
    await _planned(pilot, screen)
    screen.query_one("#strategy").value = "compact"
    screen.query_one("#keep_recent", Input).value = str(keep_recent)
    await _until(pilot, lambda: screen.plan is not None and screen.plan.strategy == "compact"
                 and screen.plan.budgets.keep_recent == keep_recent, "the compact plan")
    await pilot.pause()
    return screen


@pytest.mark.parametrize("name", list(CASES))
async def test_plan_run_install_writes_the_runtimes_own_record(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    f = _copy(case.src, tmp_path)
    original = f.read_bytes()
    app = create_app([str(f)], window=case.window, reserve=case.reserve)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(app, pilot, case.keep_recent)
        assert screen.plan.action == "summarize" and screen.plan.after is not None, _text(screen, "#plan-view")
        assert "install: run the repair first" in _text(screen, "#install-why")
        assert not screen.query_one("#write-note", Static).display  # nothing to say against Install
        await pilot.press("r")
        await _ran(pilot, screen)
        res = screen.result
        assert res.status == "built" and res.entry is not None, _text(screen, "#result-view")
        eid = record_id(res.entry)
        assert f.read_bytes() == original  # running writes nothing
        assert not screen.query_one("#install", Button).disabled, _text(screen, "#install-why")
        assert "not installed yet (w installs it)" in _text(screen, "#progress-label")
        await pilot.press("w")
        await _until(pilot, lambda: isinstance(app.screen, ConfirmInstall), "the confirm modal")
        shown = " ".join(_text(app.screen, "#confirm-text").split())
        for words in case.in_confirm:
            assert words in shown, shown
        assert "bytes appended" not in shown and ("appends" not in shown) == (case.in_confirm is ROWS)
        await pilot.press("y")
        await _until(pilot, lambda: isinstance(app.screen, SessionScreen), "back to the session view")
        view = app.screen
        await _until(pilot, lambda: view.report is not None and view.report.checkpoints[-1].record.id == eid,
                     "the reloaded session")
        await pilot.pause()
        # The view shows the new checkpoint: the cursor is on it, the status line names it.
        assert view.query_one(Timeline).current_seq == view.report.checkpoints[-1].seq
        assert "repaired" in _text(view, "#status") and eid in _text(view, "#status")
        assert f"{eid} {'inserted' if case.in_confirm is ROWS else 'appended'}" in _text(view, "#status")
    case.holds(f, res.entry, original)
    assert analyze(load(str(f)), window=case.window, reserve=case.reserve).checkpoints[-1].record.id == eid
    (b,) = list_backups(str(f))
    assert b.entry_id == eid


def _said_in_full(screen: RepairScreen) -> str:
    """The screen's note on why nothing can be installed: shown, and every line of it on screen."""
    note = screen.query_one("#write-note", Static)
    assert note.display
    assert note.size.height >= note.get_content_height(note.size, note.size, note.size.width) > 0
    return " ".join(_text(screen, "#write-note").split())


def _nothing_offered(screen: RepairScreen) -> None:
    """Install is disabled, and nothing on the screen says w would install."""
    assert screen.query_one("#install", Button).disabled
    assert "not offered" in _text(screen, "#install-why")
    for where in ("#progress-label", "#result-view"):
        assert "w installs" not in _text(screen, where), where


async def test_a_json_dump_says_before_install_that_it_is_never_written_in_place(tmp_path: Path) -> None:
    f = _copy(ADK / "token_threshold.json", tmp_path)
    before = _sha(f)
    app = create_app([str(f)], window=8_000, reserve=1_000)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(app, pilot, 400)
        why = _said_in_full(screen)  # said before running
        assert "never written in place" in why and "--out" in why, why
        _nothing_offered(screen)
        await pilot.press("r")
        await _ran(pilot, screen)
        assert screen.result.entry is not None  # the repair itself runs (a copy could be written)
        assert "not installable here" in _text(screen, "#progress-label")
        _nothing_offered(screen)
        assert "never written in place" in _said_in_full(screen)
        await pilot.press("w")  # refused: no modal
        await pilot.pause(0.1)
        assert app.screen is screen
    assert _sha(f) == before
    assert list_backups(str(f)) == []


def _maka_store(tmp: Path) -> Path:
    sys.path.insert(0, str(HERE))
    from tests.test_seed_runtimes import BUILDERS

    return Path(BUILDERS["maka"](tmp))


async def test_a_read_only_format_shows_why_install_is_not_offered(tmp_path: Path) -> None:
    f = _maka_store(tmp_path)
    before = _sha(f)
    app = create_app([str(f)], window=8_000, reserve=1_000)
    async with app.run_test(size=SIZE) as pilot:
        await _session_ready(app, pilot)
        assert app.screen.report.ledger.format == "maka"
        await pilot.press("r")
        await _until(pilot, lambda: isinstance(app.screen, RepairScreen), "the repair screen")
        screen = app.screen
        await _planned(pilot, screen)
        why = _said_in_full(screen)
        # The format's whole reason, to its last words (the row beside Install holds two lines).
        assert "maka sessions are read only for now" in why and "cannot be run here" in why, why
        assert why.endswith("(plan, analyze, context and simulate work)"), why
        _nothing_offered(screen)
        await pilot.press("r")
        await _ran(pilot, screen)
        _nothing_offered(screen)
        await pilot.press("w")
        await pilot.pause(0.1)
        assert app.screen is screen
    assert _sha(f) == before
