"""OpenClaw's failed answers, without the runtime: which it sends as its marker text, which it leaves
out whole, and that the analysis, the next request, the follower and a repair plan agree on it.

A failed answer (stopReason "error" or "aborted") with a text that is neither blank nor the stream's
fallback text is sent with its content replaced by OpenClaw's marker ("[This turn failed before it
completed. ...]", `resolveFailedAssistantReplay`, @openclaw/ai dist/host-yTvBrYM2.mjs:422-432,
:549-562); one with a call, or with no such text, is left out, and so is an answer cut at the output
limit holding only reasoning (`isReasoningOnlyLengthAssistantTurn`, :393-411, applied by
`normalizeAssistantReplayContent`, openclaw dist/builtin-openclaw-q1hiFm14.mjs:4612-4615). The real
OpenClaw 2026.9.6 says the same of each case (tests/peers/openclaw/type_probe.py, the "reply ..."
probes, held by tests/test_openclaw_line_rule.py). Each store is the peer corpus's `s1.sqlite` with a
user message P, the answer D and a user message C appended under its leaf.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.analysis.engine import EXCLUDED, LIVE, RETAINED, Report
from inspector.analysis.tokens import get_tokenizer
from inspector.cli.main import main as cli
from inspector.compaction.cut import PathIndex, proven_reply
from inspector.compaction.plan import Budgets, PlanError, plan
from inspector.formats import load, openclaw_sqlite
from inspector.formats.openclaw_model import FAILED_TURN_MARKER
from inspector.ledger.model import Route
from inspector.live.incremental import GROWN, Follower
from tests.peers.openclaw.type_probe import BASE, LEAF, LEAF_SEQ, Row, write_row
from tests.test_incremental_stores import as_json, full_json

WHEN = "2026-12-02T09:00:00.000Z"
FALLBACK = "[assistant turn failed before producing content]"
CALL = {"type": "toolCall", "id": "callfail1", "name": "read", "arguments": {"path": "notes.txt"}}
USAGE = {"input": 10, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 12,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}  # fmt: skip


def user(eid: str, parent: str, text: str) -> dict[str, Any]:
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": WHEN,
            "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1796202000000}}  # fmt: skip


def answer(eid: str, parent: str, content: Any, stop: str) -> dict[str, Any]:
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": WHEN,
            "message": {"role": "assistant", "content": content, "api": "openai-completions", "provider": "fake",
                        "model": "fake-model", "stopReason": stop, "timestamp": 1796202000000, "usage": USAGE}}  # fmt: skip


def result(eid: str, parent: str, call_id: str) -> dict[str, Any]:
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": WHEN,
            "message": {"role": "toolResult", "toolCallId": call_id, "toolName": "read",
                        "content": [{"type": "text", "text": "RESULT"}], "isError": False, "timestamp": 1796202000000}}  # fmt: skip


def append(path: Path, entries: list[dict[str, Any]], seq: int = LEAF_SEQ + 1) -> None:
    con = sqlite3.connect(path)
    try:
        openclaw_sqlite.openclaw_writer.provide_octet_length(con)
        for k, o in enumerate(entries):
            data = json.dumps(o).encode()
            write_row(con, seq + k, Row(data, utf8_bytes=len(data)))
        con.commit()
    finally:
        con.close()


def turn(content: Any, stop: str, *, answered: bool = False) -> list[dict[str, Any]]:
    """P, the answer D (CONTENT, STOP), its call's result when ANSWERED, and C."""
    rows = [user("pp1", LEAF, "BEFORE"), answer("pd1", "pp1", content, stop)]
    if answered:
        rows.append(result("pr1", "pd1", CALL["id"]))
    return [*rows, user("pc1", rows[-1]["id"], "AFTER")]


def store(tmp_path: Path, rows: list[dict[str, Any]], name: str = "s1.sqlite") -> Path:
    path = tmp_path / name
    shutil.copyfile(BASE, path)
    append(path, rows)
    return path


def seq_of(report: Report, eid: str) -> int:
    return report.ledger.by_id()[eid]


TEXT = [{"type": "text", "text": "half an answer"}]
# (D's content, its stop reason, whether its result is there) -> how OpenClaw sends D: "marker",
# "written" (as it stands) or None (left out). Each as the real OpenClaw sent it (type_probe).
CASES: dict[str, tuple[Any, str, bool, str | None]] = {
    "errored, a text": (TEXT, "error", False, "marker"),
    "aborted, a text": (TEXT, "aborted", False, "marker"),
    "errored, thinking and a text": ([{"type": "thinking", "thinking": "hm", "thinkingSignature": ""}, *TEXT], "error", False, "marker"),
    "errored, content a string": ("half an answer", "error", False, "marker"),
    "aborted, a text and the fallback": ([*TEXT, {"type": "text", "text": FALLBACK}], "aborted", False, "marker"),
    "errored, a blank text": ([{"type": "text", "text": " \n"}], "error", False, None),
    "aborted, no block": ([], "aborted", False, None),
    "errored, the fallback text": ([{"type": "text", "text": FALLBACK}], "error", False, None),
    "aborted, the fallback text padded": ([{"type": "text", "text": f"  {FALLBACK}\n"}], "aborted", False, None),
    "errored, a text and a call": ([*TEXT, CALL], "error", False, None),
    "aborted, a text and an answered call": ([*TEXT, CALL], "aborted", True, None),
    "cut short, thinking only": ([{"type": "thinking", "thinking": "hm", "thinkingSignature": ""}], "length", False, None),
    "cut short, thinking and a blank text": ([{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": ""}], "length", False, None),
    "cut short, thinking and a text": ([{"type": "thinking", "thinking": "hm"}, *TEXT], "length", False, "written"),
    "stopped, a text": (TEXT, "stop", False, "written"),
}


@pytest.mark.parametrize("case", CASES)
def test_which_failed_answers_openclaw_sends_and_how(tmp_path: Path, case: str) -> None:
    content, stop, answered, sent = CASES[case]
    report = analyze(load(str(store(tmp_path, turn(content, stop, answered=answered)))))
    d = seq_of(report, "pd1")
    items = [it for it in report.context if it.seq == d]
    assert not [f for f in report.findings if f.code in ("hole", "unanswered_tool_call", "orphan_tool_result")]
    if sent is None:
        assert items == [] and report.states[d] == EXCLUDED
        assert report.ledger.records[d].never_sent
        if answered:  # (its result goes with it: an orphan OpenClaw leaves out)
            r = seq_of(report, "pr1")
            assert r not in {it.seq for it in report.context} and report.states[r] == EXCLUDED
        return
    assert report.states[d] == LIVE and len(items) == 1
    it = items[0]
    assert it.role == "assistant" and not it.tool_call_ids and not it.synthetic
    assert it.text == (FAILED_TURN_MARKER if sent == "marker" else "")
    assert (it.note is not None) == (sent == "marker")


def test_the_index_maps_failed_answers_as_the_whole_parse_does(tmp_path: Path) -> None:
    rows = [user("pp1", LEAF, "BEFORE")]
    for k, (content, stop, _, _) in enumerate(v for v in CASES.values() if not v[2]):
        rows.append(answer(f"pd{k}", rows[-1]["id"], content, stop))
        rows.append(user(f"pu{k}", rows[-1]["id"], f"next {k}"))
    path = store(tmp_path, rows)
    fast, whole = openclaw_sqlite.load(str(path), None, None), openclaw_sqlite.load(str(path), None, None, index=False)
    got = [(r.seq, r.role, r.stop_reason, r.never_sent) for r in fast.records]
    assert got == [(r.seq, r.role, r.stop_reason, r.never_sent) for r in whole.records]
    assert sum(1 for r in fast.records if r.never_sent and r.role == "assistant") == 7
    # a failed answer sent as the marker, and one cut short with a text, are mapped from the head:
    # their content is read back when asked for, not held (only those left out take the whole parse)
    by_id = {r.id: r for r in fast.records}
    assert by_id["pd0"]._message is None and by_id["pd12"]._message is None


def test_context_json_sends_the_marker_with_its_own_tokens(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = store(tmp_path, turn(TEXT, "aborted"))
    assert cli(["context", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    d = next(m for m in doc["messages"] if m["record_id"] == "pd1")
    assert d["role"] == "assistant" and d["preview"] == FAILED_TURN_MARKER and not d["synthetic"]
    # the marker's tokens, not the reply's recorded output (2)
    assert d["tokens_from"] == "tiktoken" and d["tokens"] == get_tokenizer().count(FAILED_TURN_MARKER)
    assert "failed-turn marker" in d["note"]
    assert doc["tokens"] == sum(m["tokens"] for m in doc["messages"] if m["index"] > d["index"]) + _anchor_total(doc, d)


def _anchor_total(doc: dict[str, Any], failed: dict[str, Any]) -> int:
    """The usage total the estimate starts from: the newest reply before the failed one that
    recorded usage (a failed reply's usage is no anchor), plus the items between."""
    report = analyze(load(doc["file"]))
    anchor = next(it for it in reversed(report.context[: failed["index"]]) if it.role == "assistant" and not it.text)
    m = report.ledger.records[anchor.seq].message  # type: ignore[index]
    assert m is not None and m.usage is not None
    return m.usage.total + sum(x["tokens"] for x in doc["messages"][anchor.index + 1 : failed["index"] + 1])


def test_a_failed_answer_sent_as_the_marker_is_summarized_and_retained_as_any(tmp_path: Path) -> None:
    """States: sent, so a repair's checkpoint may keep it raw or summarize it; never a hole."""
    path = store(tmp_path, turn(TEXT, "error"))
    led = load(str(path))
    p = plan(analyze(led), "recover", Budgets(window=32768, reserve=4096, keep_recent=20000))
    assert p.after is not None
    after = p.after.report
    d = seq_of(after, "pd1")
    assert after.states[d] in (RETAINED, LIVE) and p.after.holes == 0
    assert [it.text for it in after.context if it.seq == d] == [FAILED_TURN_MARKER]
    ix = PathIndex(p.report, get_tokenizer())
    pos = p.report.path.index(seq_of(p.report, "pd1"))
    assert ix.context_tokens([pos]) == [get_tokenizer().count(FAILED_TURN_MARKER)]
    # a failed answer proves nothing of its route (seed 002): the base's last answer does
    route = Route("fake-model", "fake")
    assert proven_reply(ix, route) == p.report.path.index(seq_of(p.report, LEAF))


def test_the_follower_sends_an_appended_failed_answer_as_a_full_read_does(tmp_path: Path) -> None:
    path = tmp_path / "s1.sqlite"
    shutil.copyfile(BASE, path)
    fol = Follower(str(path))
    fol.poll()
    rows = [*turn(TEXT, "aborted"), answer("pe1", "pc1", [{"type": "text", "text": ""}], "error"), user("pf1", "pe1", "AGAIN")]
    for k, row in enumerate(rows):
        append(path, [row], LEAF_SEQ + 1 + k)
        up = fol.poll()
        assert up is not None and up.whole == GROWN, row["id"]
        assert as_json(fol.report) == full_json(str(path)), row["id"]
    report = fol.report
    assert report is not None
    assert [it.text for it in report.context if it.seq == seq_of(report, "pd1")] == [FAILED_TURN_MARKER]
    assert report.states[seq_of(report, "pe1")] == EXCLUDED


def test_the_follower_reads_an_appended_answer_whose_call_openclaw_drops_as_a_full_read_does(tmp_path: Path) -> None:
    """A call without a name is dropped before the answer is sent (`repairToolCallInputs`): the full
    build says so and leaves out an answer with nothing left; the follower took the row from its
    head and said nothing (found by `tests.fuzz_live --seed 422 --kinds openclaw_db`, case 175)."""
    path = tmp_path / "s1.sqlite"
    shutil.copyfile(BASE, path)
    fol = Follower(str(path))
    fol.poll()
    nameless = {**CALL, "name": ""}
    rows = [user("pp1", LEAF, "BEFORE"), answer("pd1", "pp1", [nameless], "toolUse"), result("pr1", "pd1", CALL["id"])]
    for k, row in enumerate([*rows, user("pc1", "pr1", "AFTER")]):
        append(path, [row], LEAF_SEQ + 1 + k)
        assert fol.poll() is not None
        assert as_json(fol.report) == full_json(str(path)), row["id"]
    report = fol.report
    assert report is not None and report.states[seq_of(report, "pd1")] == EXCLUDED
    assert [d.problem for d in report.ledger.diagnostics if d.line == seq_of(report, "pd1")] == ["unmatched_tool_call"]


def test_a_failed_answer_left_out_whole_is_still_converted_first(tmp_path: Path) -> None:
    """A failed answer with no text OpenClaw leaves out, but whose block it cannot convert: its
    conversion (`transformAssistant` trims every other block's id, ai/dist/host-yTvBrYM2.mjs:485)
    runs before the failed answer is dropped (:549-551), so every request fails."""
    report = analyze(load(str(store(tmp_path, turn([{"type": "probe", "id": 5}], "error")))))
    d = seq_of(report, "pd1")
    assert report.states[d] == EXCLUDED
    assert [f.records for f in report.findings if f.code == "request_fails"] == [[d]]


def test_the_simulator_counts_a_failed_answer_sent_as_the_marker_at_the_markers_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspector.analysis import simulate

    monkeypatch.setattr(simulate, "_calibrate", lambda *_: 1.0)  # (the tokenizer's counts, unscaled by the usage)
    led = load(str(store(tmp_path, turn(TEXT, "aborted"))))
    d = seq_of(analyze(led), "pd1")
    ev = next(e for e in simulate.prepare(led).events if e.seq == d)
    assert ev.sent and ev.tokens == get_tokenizer().count(FAILED_TURN_MARKER)


def test_a_failed_answer_is_no_request_the_model_accepted(tmp_path: Path) -> None:
    """Asked for the window, the plan names the largest request the model accepted: a failed
    answer's recorded usage (sent as the marker, or not at all) is not one."""
    rows = turn(TEXT, "error")
    rows[1]["message"]["usage"] = {**USAGE, "input": 900000, "totalTokens": 900002}
    with pytest.raises(PlanError) as e:
        plan(analyze(load(str(store(tmp_path, rows)))), "compact", Budgets())
    assert "900,002" not in str(e.value) and "the largest request the model accepted held 19,108 tokens" in str(e.value)


def test_a_failed_answers_text_of_another_type_is_never_trimmed(tmp_path: Path) -> None:
    """`convertMessages` trims an answer's texts (a text null stops every request), but a failed
    answer is sent as the marker or left out before it (observed: the probe "errored reply text null")."""
    report = analyze(load(str(store(tmp_path, turn([*TEXT, {"type": "text", "text": None}], "error")))))
    d = seq_of(report, "pd1")
    assert not [f for f in report.findings if f.code == "request_fails"]
    assert [it.text for it in report.context if it.seq == d] == [FAILED_TURN_MARKER]
