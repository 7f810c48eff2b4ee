"""Function calls and responses without an id, as google-adk 2.13 pairs them (no runtime needed;
`tests/test_adk_line_rule.py` holds the same five cases to the real ADK).

`drop_orphaned_function_calls` never drops a call without an id (tools/_rearranger.py:305-342: "ids
are stripped on the way out for some model families"); `_drop_orphaned_function_responses` keeps a
response without an id only after a call without one of the same name (:228-262). Before, inspector
dropped an event whose calls went unanswered even where one of them had no id, and sent every
response without an id."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest

from inspector.analysis import analyze
from inspector.formats import adk_heads, load
from tests.conftest import SHARED, need_shared

BASE = SHARED / "peers" / "adk" / "corpus" / "token_threshold.db"
LAST_TS = 1767225847.125  # token_threshold.db's last event


def _event(eid: str, k: int, role: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "content": {"role": role, "parts": parts}, "invocation_id": "e-x", "author": "assistant",
        "actions": {"state_delta": {}, "artifact_delta": {}, "requested_auth_configs": {}, "requested_tool_confirmations": {}},
        "node_info": {"path": "assistant@1"}, "id": eid, "timestamp": LAST_TS + k,
    }  # fmt: skip


def _call(name: str, cid: str | None = None, note: str = "") -> dict[str, Any]:
    fc: dict[str, Any] = {"name": name, "args": {"note": note}}
    if cid is not None:
        fc["id"] = cid
    return {"function_call": fc}


def _response(name: str, note: str) -> dict[str, Any]:
    return {"function_response": {"name": name, "response": {"note": note}}}


def _insert(f: Path, events: list[dict[str, Any]]) -> None:
    """EVENTS appended to the store's session, as ADK's SqliteSessionService stores them."""
    with sqlite3.connect(f) as con:
        app, user, sid = con.execute("SELECT app_name, user_id, id FROM sessions").fetchone()
        for ev in events:
            con.execute(
                "INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp, event_data) VALUES (?,?,?,?,?,?,?)",
                (ev["id"], app, user, sid, "e-x", ev["timestamp"], json.dumps(ev)),
            )


def _store(tmp_path: Path, events: list[dict[str, Any]]) -> Path:
    out = tmp_path / "s.db"
    shutil.copyfile(need_shared(BASE), out)
    out.chmod(0o644)
    _insert(out, events)
    return out


def _sent_ids(f: Path) -> list[str]:
    rep = analyze(load(str(f)))
    return [it.record_id for it in rep.context if it.record_id is not None]


CASES = {
    # (events after the base's last, the ids of those ADK sends)
    "a call without an id beside an unanswered one": (
        [_event("both", 1, "model", [_call("add", "orphan"), _call("add", None, "kept")])], ["both"]),
    "only unanswered calls with ids": ([_event("orphans", 1, "model", [_call("add", "orphan"), _call("add", "orphan-2")])], []),
    "a call whose id is empty": ([_event("empty", 1, "model", [_call("add", "")])], ["empty"]),
    "a response without an id, no call of its name": (
        [_event("call", 1, "model", [_call("other")]), _event("answer", 2, "user", [_response("add", "r")])], ["call"]),
    "a response without an id after a call of its name": (
        [_event("call", 1, "model", [_call("add")]), _event("answer", 2, "user", [_response("add", "r")])], ["call", "answer"]),
    "a response without an id before the call of its name": (
        [_event("answer", 1, "user", [_response("add", "r")]), _event("call", 2, "model", [_call("add")])], ["call"]),
}  # fmt: skip


@pytest.mark.parametrize("way", ["head", "whole"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_calls_and_responses_without_ids_are_paired_as_adk_pairs_them(case: str, way: str, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    events, sent = CASES[case]
    f = _store(tmp_path, events)
    if way == "whole":
        monkeypatch.setattr(adk_heads, "head", lambda data: None)
        monkeypatch.setattr(adk_heads, "heads", lambda datas: [None] * len(datas))
    added = {ev["id"] for ev in events}
    assert [i for i in _sent_ids(f) if i in added] == sent


def test_a_followed_store_pairs_a_response_by_name_across_the_turns_it_settled(tmp_path: Path) -> None:
    """The follower analyses a new turn alone once the turns before it are settled; a response
    without an id pairs with a call of its name from an earlier turn, so the tail is read with them
    (each look equals a full read of the store)."""
    from inspector.analysis.export import analyze_json, context_json
    from inspector.live.incremental import Follower

    def as_json(rep: Any) -> bytes:
        rep.ensure_tokens()
        return orjson.dumps([analyze_json(rep), context_json(rep)], option=orjson.OPT_SORT_KEYS)

    def user(eid: str, k: int) -> dict[str, Any]:
        return {**_event(eid, k, "user", [{"text": eid}]), "author": "user", "node_info": {"path": ""}}

    f = _store(tmp_path, [])
    fol = Follower(str(f))
    fol.poll()
    turns = [
        [user("q1", 1), _event("call", 2, "model", [_call("lookup")])],
        [user("q2", 3), _event("text", 4, "model", [{"text": "ok"}])],
        [user("q3", 5), _event("answer", 6, "user", [_response("lookup", "late")])],
    ]
    for turn in turns:
        _insert(f, turn)
        assert fol.poll() is not None
        assert fol.report is not None and as_json(fol.report) == as_json(analyze(load(str(f))))
    assert "answer" in [it.record_id for it in fol.report.context]
