"""Claude Code's write-back (issue 14 §2; inspector/formats/claude_code_writer.py): the lines a repair
appends, read back by our own reader as one checkpoint, shown by `plan`, written by `--out` and
`--write` and taken back by `undo`. That Claude Code itself resumes them as predicted is
tests/test_claude_code_accepts.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.cli.main import main
from inspector.formats import load
from inspector.formats.claude_code_writer import KEPT_NOTE, summary_body, summary_text
from tests.conftest import REPO, SHARED, need_shared

PEERS = SHARED / "peers" / "claude_code" / "corpus"
MANUAL = PEERS / "manual_compact.jsonl"
INCIDENTS = REPO / "tests" / "peers" / "claude_code_resume" / "sessions"
COMPACT = ["--strategy", "compact", "--keep-recent", "200", "--window", "16000", "--reserve", "2000"]


def _copy(src: Path, tmp: Path, name: str = "s.jsonl") -> Path:
    need_shared(src)
    f = tmp / name
    shutil.copyfile(src, f)
    f.chmod(0o644)
    return f


def _json(capsys: pytest.CaptureFixture[str], argv: list[str], code: int = 0) -> Any:
    assert main(argv) == code
    return json.loads(capsys.readouterr().out)


@pytest.fixture(autouse=True)
def _data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))


def test_plan_shows_the_boundary_and_summary_lines_in_claude_codes_shape(capsys: pytest.CaptureFixture[str]) -> None:
    need_shared(MANUAL)
    p = _json(capsys, ["plan", str(MANUAL), *COMPACT, "--json"])
    assert p["action"] == "summarize"
    boundary, summary = p["records"]
    leaf = load(str(MANUAL))
    assert boundary["type"] == "system" and boundary["subtype"] == "compact_boundary"
    assert boundary["parentUuid"] is None and boundary["logicalParentUuid"] == leaf.records[leaf.leaf_seq].id
    meta = boundary["compactMetadata"]
    assert meta["trigger"] == "manual" and meta["preTokens"] > 0
    kept = meta["preservedMessages"]["uuids"]
    assert meta["preservedSegment"] == {"headUuid": kept[0], "anchorUuid": summary["uuid"], "tailUuid": kept[-1]}
    assert meta["preservedMessages"]["anchorUuid"] == summary["uuid"]
    assert summary["type"] == "user" and summary["isCompactSummary"] is True and summary["parentUuid"] == boundary["uuid"]
    assert boundary["sessionId"] == summary["sessionId"] == leaf.session_id and boundary["cwd"] == summary["cwd"]
    assert main(["plan", str(MANUAL), *COMPACT]) == 0
    shown = "".join(capsys.readouterr().out.split())  # the terminal wraps long lines
    assert "Linesitwouldappend(2records,thecompact_boundaryrecordamongthem)" in shown
    assert '"subtype":"compact_boundary"' in shown and '"isCompactSummary":true' in shown


def test_the_lines_read_back_as_one_checkpoint_whose_tail_is_what_was_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _copy(MANUAL, tmp_path)
    out = tmp_path / "out.jsonl"
    res = _json(capsys, ["repair", str(src), *COMPACT, "--out", str(out), "--json"])
    assert src.read_bytes() == MANUAL.read_bytes()  # --out leaves the session alone
    boundary, summary = res["records"]
    assert out.read_bytes() == MANUAL.read_bytes() + b"".join(json.dumps(o, separators=(",", ":"), ensure_ascii=False).encode() + b"\n" for o in res["records"])
    report = analyze(load(str(out)))
    last = report.checkpoints[-1]
    assert last.record.id == boundary["uuid"]
    assert last.checkpoint.summary == summary["message"]["content"]
    # The summary line is the checkpoint's summary, not a message of its own.
    led = report.ledger
    assert led.records[led.by_id()[summary["uuid"]]].kind == "meta"
    # The retained tail is exactly the messages the preserved segment names, in order.
    kept = [led.records[s].id for s in last.retains]
    assert kept == [u for u in boundary["compactMetadata"]["preservedMessages"]["uuids"] if led.records[led.by_id()[u]].kind == "message"]
    ctx = _json(capsys, ["context", str(out), "--json"])["messages"]
    assert [m["record_id"] for m in ctx] == [boundary["uuid"], *kept]
    # The request the plan foresaw (its summary a placeholder of the target size) has the items
    # the written file gives.
    assert res["after"]["next_request"]["items"] == res["plan"]["after"]["next_request"]["items"] == len(ctx)
    assert res["plan"]["after"]["coverage"]["hole"] == res["after"]["coverage"]["hole"] == 0


def test_a_reply_written_one_block_per_line_is_kept_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Claude Code writes parallel tool calls as one line each (one message.id): a line of it left
    out of the preserved segment is dropped on resume, so every line is named."""
    src = INCIDENTS / "cc_parallel_then_compact.jsonl"
    p = _json(capsys, ["plan", str(src), "--strategy", "compact", "--keep-recent", "400", "--window", "16000", "--reserve", "2000", "--json"])
    uuids = p["records"][0]["compactMetadata"]["preservedMessages"]["uuids"]
    led = load(str(src))
    merged = [r for r in led.records if (r.extra or {}).get("merged_into_line") and r.id in uuids]
    assert merged, "the kept window holds a reply written on two lines"
    for r in merged:
        first = next(x for x in led.records if x.line == r.extra["merged_into_line"])  # type: ignore[index]
        assert uuids.index(first.id) < uuids.index(r.id)


def test_write_then_undo_restores_the_exact_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _copy(MANUAL, tmp_path)
    res = _json(capsys, ["repair", str(f), *COMPACT, "--write", "--json"])
    boundary = res["records"][0]
    assert res["backup"].endswith(f"-{boundary['uuid']}.jsonl")  # named after the record's uuid
    assert analyze(load(str(f))).checkpoints[-1].record.id == boundary["uuid"]
    assert main(["backups", str(f)]) == 0
    assert f"record {boundary['uuid']}" in capsys.readouterr().out
    assert main(["undo", str(f)]) == 0
    capsys.readouterr()
    assert f.read_bytes() == MANUAL.read_bytes()


def test_a_sub_agent_transcript_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = next((PEERS / "subagent.subagents" / "subagents").glob("agent-*.jsonl"), None) if PEERS.exists() else None
    if agent is None:
        need_shared(PEERS / "subagent.subagents")
        pytest.fail("the peer corpus has no sub-agent transcript")
    f = _copy(agent, tmp_path)
    assert main(["repair", str(f), *COMPACT, "--write"]) == 2
    assert "sub-agent's transcript" in capsys.readouterr().err
    assert f.read_bytes() == agent.read_bytes()


def test_our_wrapper_is_claude_codes_own() -> None:
    """The summary line Claude Code 2.1.328 wrote at /compact, rebuilt from its summary: the same text."""
    need_shared(MANUAL)
    line = json.loads(MANUAL.read_text().splitlines()[52])
    theirs = line["message"]["content"]
    path = theirs.split("read the full transcript at: ")[1].split("\n")[0]
    body = summary_body(theirs)
    assert body.startswith("1. Primary Request and Intent") and body.endswith("waiting for the next prompt.")
    assert summary_text(body, ["Bash", "Write"], path, kept=True) == theirs
    assert not summary_text(body, [], None, kept=False).endswith(KEPT_NOTE)


def test_an_empty_summary_in_claude_codes_wrapper_leaves_holes() -> None:
    """The real CLI compacted with a model that answered an empty <summary>: its wrapper is all the
    summary line holds, so what the compaction removed is represented by nothing."""
    report = analyze(load(str(INCIDENTS / "cc_amnesiac_compact.jsonl")))
    assert summary_body(report.checkpoints[-1].checkpoint.summary) == ""
    assert report.coverage_counts()["hole"] == 5
    assert any(f.code == "hole" for f in report.findings)


def test_an_earlier_boundary_whose_kept_messages_a_later_one_keeps_is_not_dangling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recovery keeping the messages an auto-compaction preserved: Claude Code drops the earlier
    boundary on resume (it relinks those messages after the later summary), so the earlier one
    keeps nothing raw; it does not point at messages that are no longer behind it."""
    f = _copy(INCIDENTS / "cc_live_question_summarized.jsonl", tmp_path)
    _json(capsys, ["repair", str(f), "--strategy", "recover", "--window", "16000", "--reserve", "2000", "--write", "--json"])
    report = analyze(load(str(f)))
    assert len(report.checkpoints) == 2
    assert report.checkpoints[0].checkpoint.first_kept_id is None
    assert not any(x.code == "dangling_first_kept" for x in report.findings)
    assert report.coverage_counts()["hole"] == 0
