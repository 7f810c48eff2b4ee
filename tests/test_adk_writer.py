"""ADK's write-back record (formats/adk_writer.py; docs/runtimes/adk.md): the compaction event,
spelled as each of ADK's session services stores it, read back as this tool's checkpoint."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest

from inspector.cli.main import main
from inspector.formats import load
from tests.conftest import SHARED

CORPUS = SHARED / "peers" / "adk" / "corpus"
ARGS = ["--strategy", "compact", "--keep-recent", "400", "--window", "8000", "--reserve", "1000"]


@pytest.fixture(autouse=True)
def _data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))


def _copy(name: str, tmp: Path) -> Path:
    src = CORPUS / name
    assert src.exists(), f"the ADK peer corpus is missing {src}"
    f = tmp / name
    shutil.copyfile(src, f)
    os.chmod(f, 0o644)
    return f


def _last_row(f: Path) -> tuple[Any, ...]:
    con = sqlite3.connect(f)
    try:
        return con.execute("SELECT id, invocation_id, timestamp, typeof(timestamp), event_data FROM events ORDER BY rowid DESC LIMIT 1").fetchone()
    finally:
        con.close()


def _repair_write(f: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["repair", str(f), *ARGS, "--write", "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_sqlite_row_is_what_sqlite_session_service_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _copy("token_threshold.db", tmp_path)
    before = load(str(f))
    res = _repair_write(f, capsys)
    eid, inv, ts, ts_type, data = _last_row(f)
    ev = orjson.loads(data)
    assert eid == ev["id"] == res["entry"]["id"] and inv == ev["invocation_id"]
    assert ts_type == "real" and ts == ev["timestamp"] > max(r.timestamp for r in before.records)
    assert data == orjson.dumps(ev).decode()  # model_dump_json: compact JSON
    assert ev["author"] == "user"
    comp = ev["actions"]["compaction"]
    assert comp["compacted_content"]["role"] == "model" and comp["compacted_content"]["parts"][0]["text"]
    first = before.records[0].timestamp
    assert comp["start_timestamp"] == first < comp["end_timestamp"]
    kept = before.by_id()[ev["custom_metadata"]["inspector"]["first_kept_id"]]
    assert comp["end_timestamp"] < before.records[kept].timestamp  # the tail stays out of the range
    after = load(str(f))
    cp = after.records[-1]
    assert cp.kind == "checkpoint" and cp.id == eid
    assert cp.checkpoint is not None and cp.checkpoint.details["surviving"] is True
    assert cp.checkpoint.details["represents"] == ev["custom_metadata"]["inspector"]["represents"]


def test_v1_row_is_what_database_session_service_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _copy("token_threshold.v1.db", tmp_path)
    _repair_write(f, capsys)
    eid, _inv, ts, ts_type, data = _last_row(f)
    ev = json.loads(data)
    assert data == json.dumps(ev)  # DynamicJSON: json.dumps, default separators
    assert ts_type == "text" and len(ts) == len("2026-01-01 00:00:30.125000")
    from datetime import UTC, datetime

    assert datetime.strptime(ts, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=UTC).timestamp() == pytest.approx(ev["timestamp"], abs=1e-5)
    assert load(str(f)).records[-1].id == eid


def test_plan_shows_the_event_and_the_coverage_after(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(CORPUS / "token_threshold.db"), *ARGS, "--json"]) == 0
    p = json.loads(capsys.readouterr().out)
    (ev,) = p["records"]
    assert set(ev["actions"]["compaction"]) == {"start_timestamp", "end_timestamp", "compacted_content"}
    assert p["after"]["holes"] == 0 and p["after"]["coverage"]["summarized"] > p["before"]["coverage"]["summarized"]
    assert main(["plan", str(CORPUS / "token_threshold.db"), *ARGS]) == 0
    assert "Rows it would insert (1 record, the compaction event record among them)" in capsys.readouterr().out


def test_dump_is_written_as_a_new_file_and_never_in_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _copy("token_threshold.json", tmp_path)
    data = f.read_bytes()
    assert main(["repair", str(f), *ARGS, "--write"]) == 2
    assert "--out" in capsys.readouterr().err and f.read_bytes() == data
    out = tmp_path / "repaired.json"
    assert main(["repair", str(f), *ARGS, "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    obj = json.loads(out.read_text())
    src = json.loads(data)
    assert obj["events"][:-1] == src["events"] and obj["events"][-1]["actions"]["compaction"]
    assert load(str(out)).records[-1].kind == "checkpoint"


def test_db_out_is_a_copy_with_the_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _copy("token_threshold.db", tmp_path)
    data = f.read_bytes()
    out = tmp_path / "copy.db"
    assert main(["repair", str(f), *ARGS, "--out", str(out)]) == 0, capsys.readouterr().err
    assert f.read_bytes() == data
    assert len(load(str(out)).records) == len(load(str(f)).records) + 1


def test_a_v0_store_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from inspector.formats.adk_writer import refusal

    led = load(str(CORPUS / "token_threshold.db"))
    assert refusal(led) is None
    led.header = {**(led.header or {}), "storage": "v0"}
    assert "pickle" in (refusal(led) or "")


def test_a_tail_inside_an_existing_range_is_refused_before_anything_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ADK keeps no event of a surviving range raw: a tail planned to start inside one (the live
    question a real ADK summarized, tests/differential/fixtures/adk-s1-0001) cannot be written."""
    src = Path(__file__).parent / "differential" / "fixtures" / "adk-s1-0001" / "session.db"
    f = tmp_path / "s.db"
    shutil.copyfile(src, f)
    os.chmod(f, 0o644)
    args = ["--strategy", "resummarize", "--keep-recent", "400", "--window", "8000", "--reserve", "1000"]
    assert main(["plan", str(f), *args, "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any("inside an existing compaction range" in n for n in notes), notes
    data = f.read_bytes()
    assert main(["repair", str(f), *args, "--write"]) == 2
    assert "inside an existing compaction range" in capsys.readouterr().err
    assert f.read_bytes() == data and not (tmp_path / "data").exists()


def test_the_plan_knows_our_range_subsumes_the_older_ones() -> None:
    """ADK drops a range inside a wider, later one: the simulated session after the write must
    say the older compactions no longer survive (decided over the records as they are then)."""
    from inspector.analysis import analyze
    from inspector.compaction.entries import with_entry
    from inspector.compaction.plan import Budgets, plan

    report = analyze(load(str(CORPUS / "token_threshold.db")), window=8000, reserve=1000)
    p = plan(report, "compact", Budgets(window=8000, reserve=1000, keep_recent=400))
    assert p.entry is not None
    after = analyze(with_entry(report.ledger, p.entry, p.lines), window=8000, reserve=1000)
    assert [v.surviving for v in after.checkpoints] == [False, False, True]  # type: ignore[attr-defined]


def test_write_on_a_json_dump_is_refused_before_the_summarizer_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dump is only ever written as a new copy: `--write` says so at once, not after a summary."""
    from inspector.cli import repair as repair_cli

    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    f = tmp_path / "dump.json"
    shutil.copyfile(CORPUS / "token_threshold.json", f)
    before = f.read_bytes()

    def never(*a: Any, **k: Any) -> Any:
        raise AssertionError("the summarizer was made for a write that cannot happen")

    monkeypatch.setattr(repair_cli, "make_summarizer", never)
    assert main(["repair", str(f), *ARGS, "--write"]) == 2
    assert "never written in place" in capsys.readouterr().err and f.read_bytes() == before


def test_a_big_store_is_named_on_stderr_while_sqlite_checks_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`PRAGMA quick_check` reads every page before the write (seconds on a big store): the pause
    is named on stderr for a store of `CHECK_NOTICE_BYTES` or more, and only then."""
    from inspector.cli import repair as repair_cli

    f = _copy("token_threshold.db", tmp_path)
    g = shutil.copyfile(f, tmp_path / "other.db")
    monkeypatch.setattr(repair_cli, "CHECK_NOTICE_BYTES", f.stat().st_size + 1)
    assert main(["repair", str(g), *ARGS, "--write"]) == 0
    assert "quick_check" not in capsys.readouterr().err  # (under the size: no line)
    monkeypatch.setattr(repair_cli, "CHECK_NOTICE_BYTES", f.stat().st_size)
    assert main(["repair", str(f), *ARGS, "--write", "--json"]) == 0
    out = capsys.readouterr()
    assert f"inspector: checking {f} (" in out.err and "quick_check before the write" in out.err
    assert json.loads(out.out)["backup"]  # (stdout: the JSON alone, the write done)
