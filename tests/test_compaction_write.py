"""Writing a copy (`repair --out`): pi gets the original bytes + one `compaction` entry pi accepts,
native one checkpoint with explicit sets; the input is never touched."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from inspector.analysis import analyze
from inspector.cli.main import main
from inspector.compaction.entries import WriteError, check_writable
from inspector.compaction.execute import repair
from inspector.compaction.plan import Budgets, plan
from inspector.formats import load
from inspector.formats.native import load_schema
from inspector.store.copy import write_copy
from tests.compaction_helpers import Builder, Scripted, words
from tests.conftest import SAMPLES


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.parametrize("name", ["adr0302_amnesiac_fallback", "orphan_tool_result_after_cut", "live_question_summarized"])
@pytest.mark.parametrize("strategy", ["resummarize", "recover"])
def test_pi_copy_is_the_original_plus_one_compaction_pi_accepts(tmp_path: Path, name: str, strategy: str) -> None:
    src = tmp_path / "in.jsonl"
    shutil.copy(SAMPLES / "pi" / f"{name}.jsonl", src)
    before = _sha(src)
    out = tmp_path / "out.jsonl"
    assert main(["repair", str(src), "--strategy", strategy, "--keep-recent", "2000", "--out", str(out), "--json"]) == 0
    assert _sha(src) == before  # the input is never touched
    original = src.read_bytes()
    data = out.read_bytes()
    assert data.startswith(original) and data.count(b"\n") == original.count(b"\n") + 1
    entries = [json.loads(line) for line in original.decode().splitlines()]
    e = json.loads(data[len(original) :])
    assert e["type"] == "compaction" and re.fullmatch(r"[0-9a-f]{8}", e["id"])
    assert e["id"] not in {x.get("id") for x in entries}
    assert e["parentId"] == entries[-1]["id"]  # the current leaf
    by_id = {x["id"]: x for x in entries if "id" in x and x["type"] != "session"}
    # firstKeptEntryId is on the active path and never a toolResult
    path: list[str] = []
    cur: str | None = e["parentId"]
    while cur is not None:
        path.append(cur)
        cur = by_id[cur]["parentId"]
    kept = by_id[e["firstKeptEntryId"]]
    assert e["firstKeptEntryId"] in path and kept["type"] == "message" and kept["message"]["role"] != "toolResult"
    assert isinstance(e["tokensBefore"], int) and isinstance(e["summary"], str) and e["summary"]
    assert e["fromHook"] is True
    d = e["details"]
    assert {"readFiles", "modifiedFiles", "retainedTailShape", "failureReason", "usage", "requests"} <= set(d)
    assert d["retainedTailShape"] in ("recent_window", "latest_user_message")
    if strategy == "recover":
        assert d["failureReason"] in ("no_new_history", "summary_budget", "summary_provider", "checkpoint_oversized")
    r = analyze(load(str(out)))
    assert r.checkpoints[-1].record.id == e["id"] and r.checkpoints[-1].first_kept_found is True
    assert not [f for f in r.findings if f.code in ("orphan_tool_result", "dangling_first_kept") and f.severity == "error"]


def test_a_missing_final_newline_is_added(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    data = (SAMPLES / "pi" / "healthy_chained.jsonl").read_bytes().rstrip(b"\n")
    src.write_bytes(data)
    out = tmp_path / "out.jsonl"
    assert main(["repair", str(src), "--strategy", "recover", "--out", str(out), "--json"]) == 0
    new = out.read_bytes()
    assert new.startswith(data + b"\n") and new.endswith(b"\n")
    assert new.count(b"\n") == data.count(b"\n") + 2


@pytest.mark.parametrize("strategy", ["resummarize", "recover"])
def test_native_copy_appends_a_checkpoint_with_explicit_sets(tmp_path: Path, strategy: str) -> None:
    src = SAMPLES / "native" / "adr0302_amnesiac_fallback.jsonl"
    out = tmp_path / "out.jsonl"
    assert main(["repair", str(src), "--strategy", strategy, "--keep-recent", "2000", "--out", str(out), "--json"]) == 0
    original = src.read_bytes()
    data = out.read_bytes()
    assert data.startswith(original)
    e = json.loads(data[len(original) :])
    assert not list(Draft202012Validator(load_schema()).iter_errors(e))
    assert e["type"] == "checkpoint" and e["boundary"] and isinstance(e["represents"], list) and e["retains"]
    ids = {json.loads(line).get("id") for line in original.decode().splitlines()}
    assert e["boundary"] in ids and set(e["retains"]) <= ids and {x for pair in e["represents"] for x in pair} <= ids
    assert e["id"].startswith("cp-") and e["id"] not in ids


def test_the_copy_is_refused_when_the_session_changed_since_it_was_analysed(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    shutil.copy(SAMPLES / "native" / "live_question_summarized.jsonl", src)
    led = load(str(src))
    res = repair(plan(analyze(led), "recover"), Scripted())
    assert res.entry is not None
    with src.open("ab") as f:
        f.write(b'{"type":"message","id":"late","ts":"2026-07-08T17:00:00Z","role":"user","content":"hi"}\n')
    with pytest.raises(WriteError, match="changed since"):
        write_copy(led, res.entry, str(tmp_path / "out.jsonl"))
    assert not (tmp_path / "out.jsonl").exists()
    with pytest.raises(WriteError, match="session file itself"):
        write_copy(led, res.entry, str(src))


def test_a_pi_v1_session_cannot_take_an_appended_compaction(tmp_path: Path) -> None:
    b = Builder()
    b.turn("hello", [[("read", {"path": "a.py"}, words(50))]], "done")
    lines = [json.loads(x) for x in b.pi().decode().splitlines()]
    lines[0] = {"type": "session", "id": "s", "timestamp": "2026-03-01T10:00:00.000Z", "cwd": "/w"}  # v1: no version
    for x in lines[1:]:
        x.pop("id", None)
        x.pop("parentId", None)
    src = tmp_path / "v1.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines))
    led = load(str(src))
    with pytest.raises(WriteError, match="v1"):
        check_writable(led)
    assert main(["repair", str(src), "--strategy", "recover", "--window", "100000", "--out", str(tmp_path / "o.jsonl")]) == 2


def test_the_written_copy_reads_back_as_the_simulation_said(tmp_path: Path) -> None:
    src = SAMPLES / "pi" / "dangling_first_kept.jsonl"
    led = load(str(src))
    p = plan(analyze(led), "resummarize", Budgets(keep_recent=1_500))
    res = repair(p, Scripted())
    assert res.entry is not None and res.after is not None
    out = tmp_path / "o.jsonl"
    write_copy(led, res.entry, str(out))
    written = analyze(load(str(out)), window=p.budgets.window, reserve=p.budgets.reserve)
    assert written.coverage_counts() == res.after.coverage
    assert sorted((f.code, f.severity) for f in written.findings) == sorted((f.code, f.severity) for f in res.after.findings)
    assert written.context_tokens == res.after.context_tokens
