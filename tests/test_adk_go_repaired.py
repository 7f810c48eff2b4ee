"""inspector's repairs of adk-go stores, resumed by the real adk-go (`tests/peers/adk_go/repaired.py`).

`tests/peers/adk_go/repaired/CASE/` holds, per case, a corpus store (`corpus/SCENARIO/before.db`,
written by adk-go 2918701f) after `inspector repair --write` (`repaired.db`) and what adk-go sent when
it resumed that store for one turn (`requests.jsonl`); `tests/peers/adk_go/README.md` says how they were
made (the build recipe is not committed). Here the repair is run again on the same store, with
the recorded event id and time: (a) the store it writes must hold exactly the recorded rows, so
adk-go's recorded verdict is about what inspector writes today (if the writer changes, this fails:
record the cases again), and (b) inspector's prediction for it must be what adk-go sent.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from inspector.compaction import execute
from tests.peers import repair_campaign
from tests.peers.adk_go import compare, repaired

TABLES = ("sessions", "events", "app_states", "user_states")


@pytest.fixture(scope="module")
def cases() -> list[Path]:
    got = repaired.cases()
    assert got, f"{repaired.REPAIRED} holds no repaired case"
    return got


def _rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {t: con.execute(f"SELECT rowid, * FROM {t} ORDER BY rowid").fetchall() for t in TABLES}
    finally:
        con.close()


def _repair_again(d: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The recorded repair, run again on a copy of the corpus store, with the recorded id and time."""
    info = repaired.case_info(d)
    f = tmp / f"{d.name}.db"
    # (the corpus store, or the copy of it the case altered first: `input`)
    shutil.copyfile(d / info["input"] if info.get("input") else compare.CORPUS / info["scenario"] / "before.db", f)
    when = info["entry_timestamp"].replace(" ", "T").replace("+00:00", "Z")
    monkeypatch.setattr(execute, "fresh_id", lambda _led, _rng=None: info["entry_id"])
    monkeypatch.setattr(execute, "now_iso", lambda: when)
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp / "data"))
    code, _, err = repair_campaign.inspector(["repair", str(f), *info["args"], "--write"])
    assert code == 0, (d.name, err)
    return f


def test_the_recorded_cases_are_the_ones_described(cases: list[Path]) -> None:
    scenarios = {repaired.case_info(d)["scenario"] for d in cases}
    assert len(cases) >= 8
    assert {"plain", "tool_call", "unanswered_last", "long_running", "multi_agent", "sliding_once", "tail_many"} <= scenarios
    # (a response adk-go dropped is summarized once the record covers it: the plan reads the whole
    # session again with the record, `Writer.rebuild`; before, the verify took these writes back)
    assert {"long_running_answered", "long_running_parallel"} <= scenarios
    assert {repaired.case_info(d)["strategy"] for d in cases} == {"compact", "recover"}
    # A hole adk-go honoured: an event kept raw inside the record's range (named in excludedEvents).
    tie = next(d for d in cases if d.name == "plain-compact-tie")
    con = sqlite3.connect(f"file:{tie / 'repaired.db'}?mode=ro", uri=True)
    try:
        (actions,) = con.execute("SELECT actions FROM events ORDER BY rowid DESC LIMIT 1").fetchone()
    finally:
        con.close()
    assert b'"excludedEvents":[{' in actions


def test_inspector_writes_the_rows_adk_go_resumed_from(cases: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(a) The repair writes today exactly the rows adk-go was given: else re-record the cases."""
    differ = []
    for d in cases:
        written = _repair_again(d, tmp_path, monkeypatch)
        if _rows(written) != _rows(d / "repaired.db"):
            differ.append(d.name)
    assert differ == [], f"the writer no longer writes the recorded rows for {differ}: re-record them with the real adk-go"


def test_adk_go_sends_the_predicted_request_from_the_repaired_store(cases: list[Path]) -> None:
    """(b) Resumed (no message; a new user message), adk-go sends what inspector predicts."""
    wrong = {d.name: [p.phase for p in repaired.probes(d) if not p.agree] for d in cases}
    assert {k: v for k, v in wrong.items() if v} == {}
    assert sum(len(repaired.probes(d)) for d in cases) == 2 * len(cases)
