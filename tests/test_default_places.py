"""Issue 18's done-when, "each command works on the default places": a scratch HOME holding one
session of each format that has a default place, each where its runtime writes it; `scan`,
`usage`, `search` and the triage browser, given no PATH, find every one of them."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import time
from pathlib import Path

import pytest

from inspector.cli.main import main
from inspector.formats import load, registry
from tests.conftest import SAMPLES, SHARED, need_shared


def scratch_home(home: Path) -> dict[str, Path]:
    """One session per format with a default place, by format name; built from the samples, the
    peer corpora and the test builders."""
    from tests.maka_store import write as write_maka
    from tests.nextclaw_store import Journal, LegacyStore, message, ts
    from tests.test_maka import two_turns
    from tests.test_openclaw import _chat, _store

    def put(rel: str, src: Path) -> Path:
        dest = home / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        return dest

    out = {
        "pi": put(".pi/agent/sessions/--home-proj--/2026-01-01_healthy.jsonl", SAMPLES / "pi" / "healthy_chained.jsonl"),
        "claude_code": put(".claude/projects/-home-proj/0b1c2d3e-manual.jsonl",
                           need_shared(SHARED / "peers" / "claude_code" / "corpus" / "manual_compact.jsonl")),
        "codex": put(".codex/sessions/2026/02/23/rollout-2026-02-23T12-00-00-auto.jsonl",
                     need_shared(SHARED / "peers" / "codex" / "corpus" / "auto_compact.jsonl")),
        "adk": put("proj/.adk/session.db", need_shared(SHARED / "peers" / "adk" / "corpus" / "multi_agent.db")),
    }
    # OpenClaw's own store (its `sessions/*.jsonl` transcripts are pi's format, covered above)
    claw = home / ".openclaw" / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    claw.parent.mkdir(parents=True)
    out["openclaw"] = _store(claw, {"s1": _chat("s1")})
    out["nextclaw"] = (
        Journal().sent(message("m1", "user", "nextclaw question", ts(1)))
        .completed(message("m2", "assistant", "nextclaw answer", ts(2)))
        .write(home / ".nextclaw" / "sessions" / ".ncp-agent-journal")
    )
    legacy = LegacyStore()
    legacy.add("user", "nextclaw_legacy question")
    legacy.add("assistant", "nextclaw_legacy answer")
    out["nextclaw_legacy"] = legacy.write(home / ".nextclaw" / "sessions")
    ws = home / ".config" / "Maka" / "workspaces" / "w1"
    ws.mkdir(parents=True)
    session, maka = two_turns(ws)
    write_maka(maka, session)
    out["maka"] = Path(maka)
    return out


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("INSPECTOR_CACHE_DIR", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(h)  # ADK's default places (.adk, */.adk) are where the agent runs
    return scratch_home(h)


def test_every_format_with_a_default_place_is_in_the_scratch_home() -> None:
    """The scratch home covers every format that names a default place (a new one must be added)."""
    assert {f.name for f in registry.REGISTRY if f.default_places} == {
        "pi", "openclaw", "claude_code", "codex", "nextclaw", "nextclaw_legacy", "maka", "adk"}


def test_scan_on_the_default_places_finds_one_row_per_format(home: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", "--json", "--no-progress"]) in (0, 1)
    lines = capsys.readouterr().out.splitlines()
    rows = [json.loads(line) for line in lines]  # every line valid JSON
    assert all(r["schema"] == "inspector.scan/1" and r["error"] is None for r in rows), rows
    by_path = {r["path"]: r for r in rows}
    assert len(by_path) == len(rows) == len(home)  # one row each
    assert {by_path[str(p.resolve())]["format"] for p in home.values()} == set(home)
    for fmt, p in home.items():
        assert by_path[str(p.resolve())]["format"] == fmt
    # the index lives in the scratch HOME's cache
    assert (Path.home() / ".cache" / "inspector" / "index.sqlite").is_file()


def test_usage_on_the_default_places_counts_each_session_with_usage(home: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["usage", "--by", "session", "--json", "--no-progress"]) == 0
    groups = json.loads(capsys.readouterr().out)["groups"]
    recorded = {str(p.resolve()) for p in home.values() if any(
        r.message is not None and r.message.usage is not None for r in load(str(p)).records if r.kind == "message")}
    assert len(recorded) >= 3  # Claude Code, Codex and ADK record usage at least
    assert {g["key"] for g in groups} == recorded


def _a_word_of(path: Path) -> str:
    """A word of the session's first user message that has text, for search to find."""
    led = load(str(path))
    led.load_messages([r.seq for r in led.records if r.kind == "message"])
    for r in led.records:
        if r.kind == "message" and r.message is not None and r.message.role == "user":
            words = re.findall(r"[A-Za-z]{5,}", r.message.text())
            if words:
                return words[0]
    raise AssertionError(f"{path}: no user text")


def test_search_on_the_default_places_finds_a_word_of_each_session(home: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    for fmt, p in home.items():
        word = _a_word_of(p)
        assert main(["search", word, "--json", "--no-progress", "--limit", "500"]) == 0, (fmt, word)
        hits = json.loads(capsys.readouterr().out)["hits"]
        assert str(p.resolve()) in {h["path"] for h in hits}, (fmt, word)


def test_the_triage_browser_on_the_default_places_lists_each_session(home: dict[str, Path]) -> None:
    from inspector.tui.app import InspectorApp
    from inspector.tui.triage import TriageScreen

    async def body() -> None:
        app = InspectorApp([])
        async with app.run_test(size=(200, 50)) as pilot:
            deadline = time.monotonic() + 60
            while not (isinstance(app.screen, TriageScreen) and app.screen.finished):
                assert time.monotonic() < deadline, "the triage browser never finished"
                await pilot.pause(0.05)
            rows = app.screen.rows
            assert {str(p.resolve()) for p in home.values()} <= {str(Path(k).resolve()) for k in rows}
            assert len(rows) == len(home)
            assert all(r.error is None for r in rows.values())

    asyncio.run(body())
