"""A tool result the runtime removes from the next request is a finding (`dropped_tool_result`).

Every runtime inspector reads mends a result it cannot pair with a call: Claude Code removes a
result that answers no call of the reply right before its message (`Pqi`, docs/runtimes/claude_code.md),
OpenClaw one whose call is not in the request before it (its pairing repair), Codex an output
whose call is not in the history (codex-rs `context_manager` normalize), adk-go a response whose
call is not in the request (contents_processor.go:397-402). The request then goes through, but the
model never reads that output, though the user saw the tool run: before, inspector said so for none
of them (the line was `excluded`, or for Codex still `live`, with no finding; adk-go's was a
`malformed_line`). Each is checked here without the runtime; the rules are each runtime's, checked
against it by the tests that name them.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.analysis.engine import EXCLUDED, LIVE, Finding, Report
from inspector.cli import hook
from inspector.formats import adk_go, load, load_bytes
from inspector.live.incremental import Follower
from tests.conftest import need_shared
from tests.peers.adk_resume import type_probe as tp
from tests.peers.adk_resume.voice_corpus import store as appended_store
from tests.test_claude_code import _jsonl, follow_each_line
from tests.test_claude_code_joined_order import _call as cc_call
from tests.test_claude_code_joined_order import _res as cc_res
from tests.test_claude_code_joined_order import _text as cc_text
from tests.test_claude_code_joined_order import _turn
from tests.test_codex import META, _call, _msg, _out, _rollout
from tests.test_incremental_stores import as_json, full_json
from tests.test_openclaw_failed_turns import BASE, LEAF, LEAF_SEQ, answer, append, result, seq_of, store, user

sys.path.insert(0, str(Path(__file__).parent))
from adk_go_store import call as go_call
from adk_go_store import ev, response, t
from adk_go_store import store as go_store
from adk_go_store import text as go_text


def dropped(rep: Report) -> list[Finding]:
    return [f for f in rep.findings if f.code == "dropped_tool_result"]


def line_of(rep: Report, rid: str) -> int:
    return next(r.seq for r in rep.ledger.records if r.id == rid)


# ------------------------------------------------------------------------------------ Claude Code


def test_claude_code_a_result_of_an_earlier_reply_is_a_dropped_result_not_an_orphan() -> None:
    """The result answers the call of a reply before the one right before it: removed, and its
    message, left with nothing, sent as "(no content)"."""
    rep = analyze(load_bytes(_jsonl(_turn(("a", [cc_call(1)]), ("a", [cc_text("between")]), ("u", [cc_res(1)]))), "t.jsonl"))
    [f] = dropped(rep)
    s = line_of(rep, "u2")
    assert f.records == [s] and f.severity == "warning" and f.data == {"calls": ["t1"]}
    assert "'t1'" in f.message and "left out of the next request" in f.message and "never reads that output" in f.message
    it = next(it for it in rep.context if it.seq == s)
    assert it.text == "(no content)" and list(it.removed_results) == ["t1"]
    assert not [f for f in rep.findings if f.code == "orphan_tool_result"]


def test_claude_code_a_line_removed_whole_is_excluded_and_named() -> None:
    rep = analyze(load_bytes(_jsonl(_turn(("a", [cc_call(1)]), ("u", [cc_res(1)]), ("u", [cc_res("nowhere")]))), "t.jsonl"))
    s = line_of(rep, "u2")
    assert rep.dropped_results == [s] and rep.states[s] == EXCLUDED
    [f] = dropped(rep)
    assert f.records == [s] and f.data == {"calls": ["nowhere"]} and "the rest of that line" not in f.message


def test_claude_code_a_line_sent_without_some_of_its_results_names_those() -> None:
    rep = analyze(load_bytes(_jsonl(_turn(("a", [cc_call(1)]), ("u", [cc_res(1)]), ("u", [cc_text("typed"), cc_res("nowhere")]))), "t.jsonl"))
    s = line_of(rep, "u2")
    [f] = dropped(rep)
    assert f.records == [s] and "the rest of that line is sent" in f.message
    assert rep.states[s] == LIVE and not rep.dropped_results


def test_claude_code_results_that_pair_are_no_finding() -> None:
    rep = analyze(load_bytes(_jsonl(_turn(("a", [cc_call(1), cc_call(2)]), ("u", [cc_res(1)]), ("u", [cc_res(2)]))), "t.jsonl"))
    assert not dropped(rep) and not rep.dropped_results


def test_claude_code_followed_line_by_line_says_what_a_full_read_says(tmp_path: Path) -> None:
    objs = _turn(("a", [cc_call(1)]), ("u", [cc_res(1)]), ("u", [cc_res("nowhere")]), ("a", [cc_call(2)]), ("u", [cc_text("t"), cc_res(1)]), ("u", [cc_res(2)]))
    assert follow_each_line(tmp_path, objs, "dropped")


def test_the_claude_code_hook_tells_the_model_of_a_result_removed_on_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On resume, the hook warns of the output the model will not read."""
    objs = _turn(("a", [cc_call(1)]), ("u", [cc_res(1)]), ("u", [cc_res("nowhere")]))
    path = tmp_path / "t.jsonl"
    path.write_bytes(_jsonl(objs))
    rep = analyze(load(str(path)))
    found = hook.losses(rep, hook.HOOK_CODES)
    assert [f.code for f in found] == ["dropped_tool_result"]


# --------------------------------------------------------------------------------------- OpenClaw


def test_openclaw_a_result_whose_call_is_not_in_the_request_is_a_dropped_result(tmp_path: Path) -> None:
    rows = [user("pp1", LEAF, "BEFORE"), answer("pd1", "pp1", [{"type": "text", "text": "ok"}], "stop"), result("pr1", "pd1", "nocall"), user("pc1", "pr1", "AFTER")]
    rep = analyze(load(str(store(tmp_path, rows))))
    s = seq_of(rep, "pr1")
    assert rep.states[s] == EXCLUDED and rep.dropped_results == [s]
    [f] = dropped(rep)
    assert f.records == [s] and f.data == {"calls": ["nocall"]} and "openclaw" in f.message.lower()


def test_openclaw_followed_row_by_row_says_what_a_full_read_says(tmp_path: Path) -> None:
    """An appended result is built on from the old request (no full build): its call is among the
    calls of the items before it, or it is removed."""
    path = tmp_path / "s1.sqlite"
    shutil.copyfile(BASE, path)
    fol = Follower(str(path))
    fol.poll()
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}}
    rows = [user("pp1", LEAF, "BEFORE"), answer("pd1", "pp1", [call], "toolUse"), result("pr1", "pd1", "c1"), result("pr2", "pr1", "nocall"), user("pc1", "pr2", "AFTER")]
    for k, row in enumerate(rows):
        append(path, [row], LEAF_SEQ + 1 + k)
        assert fol.poll() is not None
        assert as_json(fol.report) == full_json(str(path)), row["id"]
    rep = fol.report
    assert rep is not None and [f.records for f in dropped(rep)] == [[seq_of(rep, "pr2")]]


# ------------------------------------------------------------------------------------------ Codex


def test_codex_an_output_whose_call_is_not_in_the_history_is_excluded_and_named() -> None:
    rep = analyze(load_bytes(_rollout(META, _msg("user", "hi"), _call("c1"), _out("c1"), _out("gone"), _msg("assistant", "done")), "r.jsonl"))
    s = next(r.seq for r in rep.ledger.records if r.role == "tool" and r.result_id == "gone")
    assert s not in {it.seq for it in rep.context}
    assert rep.states[s] == EXCLUDED and rep.dropped_results == [s]
    [f] = dropped(rep)
    assert f.records == [s] and f.data == {"calls": ["gone"]}


def test_codex_an_output_whose_call_comes_later_is_sent() -> None:
    """Codex pairs across the whole history: an output before its call is not removed."""
    rep = analyze(load_bytes(_rollout(META, _msg("user", "hi"), _out("c1"), _call("c1"), _msg("assistant", "done")), "r.jsonl"))
    assert not dropped(rep) and not rep.dropped_results


def test_codex_followed_line_by_line_says_what_a_full_read_says(tmp_path: Path) -> None:
    from tests.test_incremental import followed_json
    from tests.test_incremental import full_json as full_jsonl

    lines = [META, _msg("user", "hi"), _call("c1"), _out("c1"), _out("gone"), _msg("assistant", "done"), _call("c2"), _out("c2")]
    f = tmp_path / "r.jsonl"
    f.write_bytes(_rollout(*lines[:1]))
    fol = Follower(str(f))
    fol.poll()
    for line in lines[1:]:
        with open(f, "ab") as out:
            out.write(_rollout(line))
        fol.poll()
        assert followed_json(fol) == full_jsonl(str(f), str(f)), line


# ----------------------------------------------------------------------------------------- adk-go


def test_adk_go_a_response_without_its_call_is_a_dropped_result_not_a_malformed_line(tmp_path: Path) -> None:
    rows = [
        ev("e1", "inv-1", "user", t(0.000001), go_text("user", "List the files")),
        ev("e2", "inv-1", "coder", t(1), go_call("c1", "ls", {"dir": "."})),
        ev("e3", "inv-1", "coder", t(1.5), response("c1", "ls", {"out": "a.py"})),
        ev("e4", "inv-1", "coder", t(2), response("zz", "ls", {"out": "b.py"})),
        ev("e5", "inv-1", "coder", t(3), go_text("model", "done")),
    ]
    rep = analyze(adk_go.load(go_store(str(tmp_path / "s.db"), {"s1": rows}), None, None))
    [f] = dropped(rep)
    assert f.records == [line_of(rep, "e4")] and (f.data or {}).get("problem") == "response_without_call"
    assert "event 4" in f.message
    assert not [g for g in rep.findings if g.code == "malformed_line" and (g.data or {}).get("problem") == "response_without_call"]


# ---------------------------------------------------------------------------------- google-adk


def _adk_response(eid: str, ts: float, *ids: str) -> dict[str, Any]:
    o = tp._reply("R", 0)
    o.update(id=eid, invocation_id=f"inv-{eid}", timestamp=ts, author="user")
    o["content"] = {"role": "user", "parts": [{"function_response": {"id": i, "name": "add", "response": {"out": i}}} for i in ids]}
    return o


def _adk_call(eid: str, ts: float, cid: str) -> dict[str, Any]:
    o = tp._reply("C", 0)
    o.update(id=eid, invocation_id=f"inv-{eid}", timestamp=ts)
    o["content"]["parts"] = [{"function_call": {"id": cid, "args": {}, "name": "add"}}]
    return o


def _adk_store(tmp: Path, *events: dict[str, Any]) -> Path:
    need_shared(tp.BASE)
    return appended_store(tmp, *events)


def test_adk_a_response_to_no_call_before_it_is_dropped_and_named(tmp_path: Path) -> None:
    """`_drop_orphaned_function_responses` (flows/llm_flows/contents): an event all of whose
    responses answer no call before it is left out (excluded); one with a response that does is
    sent without the others (checked against ADK by the type probe's "an orphan response")."""
    t0 = tp.LAST_TS
    f = _adk_store(
        tmp_path,
        _adk_call("c", t0 + 10, "k1"),
        _adk_response("r1", t0 + 11, "k1", "nowhere1"),
        _adk_response("r2", t0 + 12, "nowhere2"),
    )
    rep = analyze(load(str(f)))
    r1, r2 = line_of(rep, "r1"), line_of(rep, "r2")
    assert rep.dropped_results == [r2] and rep.states[r2] == EXCLUDED and rep.states[r1] == LIVE
    assert [(g.records, (g.data or {})["calls"]) for g in dropped(rep)] == [([r1], ["nowhere1"]), ([r2], ["nowhere2"])]
    assert "the rest of that line is sent" in dropped(rep)[0].message


def test_adk_followed_event_by_event_says_what_a_full_read_says(tmp_path: Path) -> None:
    t0 = tp.LAST_TS
    need_shared(tp.BASE)
    f = tmp_path / "s.db"
    shutil.copyfile(tp.BASE, f)
    os.chmod(f, 0o644)
    fol = Follower(str(f))
    fol.poll()
    events = [_adk_call("c", t0 + 10, "k1"), _adk_response("r1", t0 + 11, "k1"), _adk_response("r2", t0 + 12, "nowhere2"), _adk_call("c2", t0 + 13, "k2")]
    for o in events:
        with sqlite3.connect(f) as con:
            tp._insert(con, json.dumps(o).encode(), o["timestamp"], o["id"], o["invocation_id"])
        assert fol.poll() is not None
        assert as_json(fol.report) == full_json(str(f)), o["id"]
    rep = fol.report
    assert rep is not None and [g.records for g in dropped(rep)] == [[line_of(rep, "r2")]]
