"""Which damaged event rows the real google-adk 2.13 reads, probe by probe.

Each probe is a copy of the ADK peer corpus's `token_threshold.db` (SqliteSessionService) with rows
added after its last event: a damaged event D carrying a marker of its own (`PROBE-<n>`: a field of
`event_data` missing or of another JSON type, a part of an unknown shape, invalid JSON, invalid
UTF-8, a lone surrogate, nesting, a timestamp column that disagrees with the JSON, ...) and, after
it, a clean user event C (`AFTER-<n>`); or, for the compaction probes, the session's last
compaction event itself damaged. The real ADK (`tests/adk_resume.py` under `.adk-venv`, one process
for every probe) opens each copy with `SqliteSessionService` and runs one turn through a Runner
against a scripted model. Per probe: did ADK refuse the session (its `get_session` raised: one
event it cannot validate makes the whole session unreadable, `sessions/sqlite_session_service.py:
368-371`), else was D sent, C, the history before them (the base's last answer), the last
compaction's summary, and an event inside that compaction's range (raw). `inspector` predicts the
same from `analyze` (a `resume_refused` finding, else its next request's items), and
`python -m tests.peers.adk_resume.type_probe` prints the two side by side.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import REPO, SHARED
from tests.peers.probe_edits import drop_at as _drop
from tests.peers.probe_edits import set_at as _set

BASE = SHARED / "peers" / "adk" / "corpus" / "token_threshold.db"
ADK_PYTHON = Path(os.environ.get("ADK_PYTHON") or REPO / ".adk-venv" / "bin" / "python")
DRIVER = REPO / "tests" / "adk_resume.py"
APP, USER, SESSION, AGENT = "corpus_token_threshold", "user-1", "token_threshold-session", "assistant"
LAST_TS = 1767225847.125  # the base's last event ("[U08 answer by assistant] ...")
HISTORY = "[U08 answer by assistant]"
SUMMARY = "[SUMMARY S1]"  # the base's last compaction (rowid 25), over 1767225630.125 .. 1767225815.125
SUMMARY_ROWID = 25
INSIDE = "[U05] What is 5 + 35?"  # an event in S1's range and not in S0's (sent raw when S1 is not used)
_Edit = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class Probe:
    name: str
    # (marker, n) -> the damaged row: (event_data bytes, timestamp column, id column); or, for a
    # compaction probe, the edit of the last compaction's event (its row rewritten in place)
    row: Callable[[str, int], tuple[bytes, Any, Any]] | None = None
    compaction: Callable[[dict[str, Any]], bytes] | None = None
    store: str | None = None  # SQL run on the copy (its session's state rows), the probe's rows added after


def _actions() -> dict[str, Any]:
    return {
        "state_delta": {},
        "artifact_delta": {},
        "requested_auth_configs": {},
        "requested_tool_confirmations": {},
    }


def _user(marker: str, n: int) -> dict[str, Any]:
    return {
        "content": {"parts": [{"text": marker}], "role": "user"},
        "invocation_id": f"e-probe-{n:03d}",
        "author": "user",
        "actions": _actions(),
        "node_info": {"path": ""},
        "id": f"probe-{n:03d}",
        "timestamp": LAST_TS + 10,
    }


def _reply(marker: str, n: int) -> dict[str, Any]:
    return {
        "model_version": "scripted-fake-1",
        "content": {"parts": [{"text": marker}], "role": "model"},
        "turn_complete": True,
        "invocation_id": f"e-probe-{n:03d}",
        "author": AGENT,
        "actions": _actions(),
        "node_info": {"path": "assistant@1"},
        "id": f"probe-{n:03d}",
        "timestamp": LAST_TS + 10,
    }


def _call_pair(marker: str, n: int) -> dict[str, Any]:
    """A reply calling `add` (its args carry the marker), answered by the clean row after it."""
    o = _reply(marker, n)
    o["content"]["parts"] = [
        {"function_call": {"id": f"call-{n:03d}", "args": {"note": marker}, "name": "add"}}
    ]
    return o


def _part(part: Any) -> _Edit:
    """A second part after the marker's."""
    return lambda o: o["content"]["parts"].append(copy.deepcopy(part))


def _ev(
    base: Callable[[str, int], dict[str, Any]],
    *edits: _Edit,
    ts_col: Any = "json",
    raw: Callable[[bytes], bytes] | None = None,
) -> Callable[[str, int], tuple[bytes, Any, Any]]:
    """A row of BASE's event edited; its timestamp column the JSON's (or TS_COL); RAW edits its bytes."""

    def row(marker: str, n: int) -> tuple[bytes, Any, Any]:
        o = base(marker, n)
        for e in edits:
            e(o)
        data = json.dumps(o, separators=(",", ":")).encode().replace(b"PROBE-X", marker.encode())
        if raw is not None:
            data = raw(data)
        return data, LAST_TS + 10 if ts_col == "json" else ts_col, f"probe-{n:03d}"

    return row


def _idless_response(name: str) -> dict[str, Any]:
    """A content answering a call of NAME without an id (its response carries the marker)."""
    return {"role": "user", "parts": [{"function_response": {"name": name, "response": {"note": "PROBE-X"}}}]}


# A reply calling `lookup` without an id, inserted before the probe's rows.
_IDLESS_CALL = (
    "INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp, event_data) VALUES "
    f"('idless-call', '{APP}', '{USER}', '{SESSION}', 'e-idless', {LAST_TS + 5}, CAST('"
    + json.dumps({**_reply("", 0), "id": "idless-call", "invocation_id": "e-idless", "timestamp": LAST_TS + 5,
                  "content": {"role": "model", "parts": [{"function_call": {"args": {}, "name": "lookup"}}]}},
                 separators=(",", ":"))
    + "' AS TEXT));"
)


# The base's invocations (each a turn of its own): the first, U05's (inside S1's range), U07's
# (its events before and after S1's compaction event, rowid 25), S1's own, the last (U08's).
_FIRST_INV = "e-8d547292-e273-4f23-ac2a-d60f280a6f7c"
_U05_INV = "e-517928b2-962a-42e6-a0e3-edbcf6aecf2c"
_U07_INV = "e-346423a7-12de-414b-97b3-c7a520877b71"
_S1_INV = "0f900c6c-e82e-4deb-b4eb-c17f76fd754a"
_LAST_INV = "e-8e2b478a-ef5a-436e-b80a-2f197c3a1ed4"
_REWIND = "actions.rewind_before_invocation_id"


def _rewind_row(target: str, inv: str = "e-rewind") -> str:
    """SQL inserting a rewind event as `Runner.rewind_async` writes it (sessions/_rewind_utils.py:
    199-210: the user's, no content, an invocation of its own) before the probe's rows."""
    o = {"invocation_id": inv, "author": "user", "actions": {**_actions(), "rewind_before_invocation_id": target},
         "id": "rewind-0", "timestamp": LAST_TS + 5}
    return (
        "INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp, event_data) VALUES "
        f"('rewind-0', '{APP}', '{USER}', '{SESSION}', '{inv}', {LAST_TS + 5}, CAST('"
        + json.dumps(o, separators=(",", ":")) + "' AS TEXT));"
    )


def _u(*edits: _Edit, **kw: Any) -> Callable[[str, int], tuple[bytes, Any, Any]]:
    return _ev(_user, *edits, **kw)


def _r(*edits: _Edit, **kw: Any) -> Callable[[str, int], tuple[bytes, Any, Any]]:
    return _ev(_reply, *edits, **kw)


def _key(text: bytes) -> Callable[[bytes], bytes]:
    """An unknown top-level key `x` holding TEXT (raw JSON bytes), after the event's first key."""
    return lambda b: b.replace(b'{"', b'{"x":' + text + b',"', 1)


def _deep(depth: int) -> Any:
    v: Any = "d"
    for _ in range(depth):
        v = [v]
    return v


def _comp(*edits: _Edit) -> Callable[[dict[str, Any]], bytes]:
    def rewrite(o: dict[str, Any]) -> bytes:
        for e in edits:
            e(o)
        return json.dumps(o, separators=(",", ":")).encode()

    return rewrite


_C = "actions.compaction"

PROBES: list[Probe] = [
    # the controls
    Probe("clean user event", _u()),
    Probe("clean reply", _r()),
    Probe("clean call, answered after", _ev(_call_pair)),
    # the event's own fields
    Probe("an unknown top-level key", _u(raw=_key(b'{"a":[1,"b",null]}'))),
    Probe("id a number", _u(_set("id", 7))),
    Probe("id null", _u(_set("id", None))),
    Probe("no id", _u(_drop("id"))),
    Probe("author a number", _u(_set("author", 5))),
    Probe("author null", _u(_set("author", None))),
    Probe("no author", _u(_drop("author"))),
    Probe("author another agent", _r(_set("author", "helper"))),
    Probe("invocation_id a number", _u(_set("invocation_id", 5))),
    Probe("no invocation_id", _u(_drop("invocation_id"))),
    Probe("branch a number", _u(_set("branch", 5))),
    Probe("partial true", _r(_set("partial", True))),
    Probe("partial a string", _r(_set("partial", "yes"))),
    Probe("turn_complete a number", _r(_set("turn_complete", 2))),
    Probe("error_code a number", _r(_set("error_code", 500), _set("error_message", "boom"))),
    Probe("error_code a string", _r(_set("error_code", "500"), _set("error_message", "boom"))),
    Probe("finish_reason unknown", _r(_set("finish_reason", "WANDERED_OFF"))),
    Probe("finish_reason a number", _r(_set("finish_reason", 3))),
    Probe("model_version a number", _r(_set("model_version", 3))),
    Probe("usage_metadata a string", _r(_set("usage_metadata", "lots"))),
    Probe("usage token count a string", _r(_set("usage_metadata", {"prompt_token_count": "12"}))),
    Probe("usage token count a float", _r(_set("usage_metadata", {"prompt_token_count": 12.5}))),
    Probe("custom_metadata a list", _r(_set("custom_metadata", [1]))),
    Probe("custom_metadata nested", _r(_set("custom_metadata", {"a": {"b": [1, {"c": None}]}}))),
    Probe("long_running_tool_ids a string", _r(_set("long_running_tool_ids", "call-1"))),
    Probe("node_info a string", _u(_set("node_info", "x"))),
    Probe("node_info path a number", _r(_set("node_info", {"path": 5}))),
    Probe("node_info with an unknown key", _r(_set("node_info", {"path": "assistant@1", "zz": 1}))),
    Probe("isolation_scope a number", _u(_set("isolation_scope", 5))),
    Probe("output an object", _r(_set("output", {"a": 1}))),
    # timestamps
    Probe("timestamp a numeric string", _u(_set("timestamp", str(LAST_TS + 10)))),
    Probe("timestamp not a time", _u(_set("timestamp", "yesterday"))),
    Probe("timestamp null", _u(_set("timestamp", None))),
    Probe("no timestamp", _u(_drop("timestamp"))),
    Probe("timestamp true", _u(_set("timestamp", True))),
    Probe("timestamp an integer", _u(_set("timestamp", int(LAST_TS) + 10))),
    Probe("JSON timestamp inside a compaction, column after", _u(_set("timestamp", 1767225700.0))),
    Probe("column timestamp before the history", _u(ts_col=1767225840.0)),
    Probe("column timestamp a string", _u(ts_col="later")),
    # actions
    Probe("actions a string", _u(_set("actions", "none"))),
    Probe("actions null", _u(_set("actions", None))),
    Probe("no actions", _u(_drop("actions"))),
    Probe("actions with an unknown key", _u(_set("actions.zz", 1))),
    Probe("state_delta a list", _u(_set("actions.state_delta", [1]))),
    Probe("artifact_delta a string version", _u(_set("actions.artifact_delta", {"f": "v1"}))),
    Probe("transfer_to_agent a number", _r(_set("actions.transfer_to_agent", 5))),
    Probe("escalate a string", _r(_set("actions.escalate", "yes"))),
    # content
    Probe("content null", _u(_set("content", None))),
    Probe("no content", _u(_drop("content"))),
    Probe("content a string", _u(_set("content", "PROBE-X"))),
    Probe("input transcription, no content", _u(_set("content", None), _set("input_transcription", {"text": "PROBE-X"}))),
    Probe("output transcription, no content", _r(_set("content", None), _set("output_transcription", {"text": "PROBE-X", "finished": True}))),
    Probe("input transcription beside content", _u(_set("input_transcription", {"text": "TRX"}))),
    Probe("input transcription empty, no content", _u(_set("content", None), _set("input_transcription", {"text": ""}))),
    Probe("output transcription by another agent", _r(_set("author", "helper"), _set("content", None), _set("output_transcription", {"text": "PROBE-X"}))),
    Probe("content a list", _u(_set("content", [{"text": "PROBE-X"}]))),
    Probe("content with an unknown key", _u(_set("content.zz", 1))),
    Probe("role missing", _u(_drop("content.role"))),
    Probe("role null", _u(_set("content.role", None))),
    Probe("role a number", _u(_set("content.role", 3))),
    Probe("role empty", _u(_set("content.role", ""))),
    Probe("role made up", _u(_set("content.role", "robot"))),
    Probe("role model on a user event", _u(_set("content.role", "model"))),
    Probe("parts a string", _u(_set("content.parts", "PROBE-X"))),
    Probe("parts an object", _u(_set("content.parts", {"text": "PROBE-X"}))),
    Probe("parts null", _u(_set("content.parts", None), _set("custom_metadata", {"m": "PROBE-X"}))),
    Probe("parts empty", _u(_set("content.parts", []))),
    Probe("a part a string", _u(_part("t"))),
    Probe("a part null", _u(_part(None))),
    Probe("a part empty", _u(_part({}))),
    Probe("a part of an unknown key", _u(_part({"zz": 1}))),
    Probe("a part with an unknown key beside text", _u(_part({"text": "t", "zz": 1}))),
    Probe("text a number", _u(_part({"text": 5}))),
    Probe("text a list", _u(_part({"text": ["t"]}))),
    Probe("text null", _u(_part({"text": None}))),
    Probe(
        "text empty alone",
        _u(_set("content.parts", [{"text": ""}]), _set("custom_metadata", {"m": "PROBE-X"})),
    ),
    Probe("thought true alone", _r(_set("content.parts.0.thought", True))),
    Probe("thought a string", _r(_set("content.parts.0.thought", "yes"))),
    Probe("thought_signature not base64", _r(_set("content.parts.0.thought_signature", "not base64!"))),
    Probe("inline_data a string", _u(_part({"inline_data": "x"}))),
    Probe("inline_data without mime type", _u(_part({"inline_data": {"data": "AAAA"}}))),
    Probe("file_data", _u(_part({"file_data": {"file_uri": "gs://b/f", "mime_type": "text/plain"}}))),
    # calls and responses
    Probe("call args a string", _ev(_call_pair, _set("content.parts.0.function_call.args", "PROBE-X"))),
    Probe("call args a list", _ev(_call_pair, _set("content.parts.0.function_call.args", ["PROBE-X"]))),
    Probe(
        "call args nested",
        _ev(
            _call_pair,
            _set("content.parts.0.function_call.args", {"note": "PROBE-X", "deep": {"a": [1, {"b": None}]}}),
        ),
    ),
    Probe("call name a number", _ev(_call_pair, _set("content.parts.0.function_call.name", 5))),
    Probe("call without a name", _ev(_call_pair, _drop("content.parts.0.function_call.name"))),
    Probe("call id a number", _ev(_call_pair, _set("content.parts.0.function_call.id", 5))),
    Probe("call with an unknown key", _ev(_call_pair, _set("content.parts.0.function_call.zz", 1))),
    Probe(
        "call a string",
        _ev(
            _call_pair,
            _set("content.parts.0.function_call", "add"),
            _set("custom_metadata", {"m": "PROBE-X"}),
        ),
    ),
    Probe(
        "response a list",
        _u(
            _set(
                "content.parts",
                [{"function_response": {"id": "call-x", "name": "add", "response": ["PROBE-X"]}}],
            )
        ),
    ),
    Probe(
        "response a string",
        _u(
            _set(
                "content.parts",
                [{"function_response": {"id": "call-x", "name": "add", "response": "PROBE-X"}}],
            )
        ),
    ),
    # fields ADK validates and then filters on
    Probe("isolation_scope a string", _u(_set("isolation_scope", "task-1"))),
    Probe("branch a string", _r(_set("branch", "root.other"))),
    Probe("a user event with a node path", _u(_set("node_info", {"path": "assistant@1"}))),
    Probe("an empty invocation_id", _u(_set("invocation_id", ""))),
    Probe(
        "an orphan response",
        _u(
            _set("author", AGENT),
            _set(
                "content.parts",
                [{"function_response": {"id": "call-none", "name": "add", "response": {"note": "PROBE-X"}}}],
            ),
        ),
    ),
    Probe(
        "an unanswered call",
        _r(
            _set(
                "content.parts",
                [
                    {"text": "PROBE-X"},
                    {"function_call": {"id": "call-unanswered", "name": "add", "args": {}}},
                ],
            )
        ),
    ),
    Probe(
        "a framework call",
        _r(
            _set(
                "content.parts",
                [
                    {
                        "function_call": {
                            "id": "call-fw",
                            "name": "adk_request_credential",
                            "args": {"note": "PROBE-X"},
                        }
                    }
                ],
            )
        ),
    ),
    Probe(
        "a thought with a signature",
        _r(_set("content.parts.0.thought", True), _set("content.parts.0.thought_signature", "c2ln")),
    ),
    Probe("a rewind to the last invocation", _r(_set(_REWIND, _LAST_INV))),
    Probe("a transfer to an unknown agent", _r(_set("actions.transfer_to_agent", "nobody"))),
    Probe("end_of_agent true", _r(_set("actions.end_of_agent", True))),
    Probe("a call id empty", _ev(_call_pair, _set("content.parts.0.function_call.id", ""))),
    Probe(
        "text and an unknown part shape",
        _u(_part({"executable_code": {"code": "print(1)", "language": "PYTHON"}})),
    ),
    Probe(
        "an output transcription without content",
        _r(_drop("content"), _set("output_transcription", {"text": "PROBE-X"})),
    ),
    Probe("the column timestamp inside a compaction, JSON after", _u(ts_col=1767225700.0)),
    Probe("a call without a role", _ev(_call_pair, _drop("content.role"))),
    Probe("a call marked a thought", _ev(_call_pair, _set("content.parts.0.thought", True))),
    Probe(
        "a call of a framework name, answered",
        _ev(_call_pair, _set("content.parts.0.function_call.name", "adk_request_confirmation")),
    ),
    Probe("a call with an empty role, answered", _ev(_call_pair, _set("content.role", ""))),
    # the JSON itself
    Probe("invalid JSON", _u(raw=lambda b: b[:-1])),
    Probe("a JSON array", _u(raw=lambda b: b"[" + b + b"]")),
    Probe("invalid UTF-8 in an unknown key", _u(raw=_key(b'"\xff\xfe"'))),
    Probe("invalid UTF-8 in the text", _u(raw=lambda b: b.replace(b"PROBE-", b"\xff PROBE-", 1))),
    Probe("a lone surrogate in the text", _u(raw=lambda b: b.replace(b"PROBE-", b"\\ud800 PROBE-", 1))),
    Probe("a lone surrogate in an unknown key", _u(raw=_key(b'"\\udc00"'))),
    Probe("an escaped NUL in the text", _u(raw=lambda b: b.replace(b"PROBE-", b"\\u0000 PROBE-", 1))),
    Probe("a byte-order mark", _u(raw=lambda b: b"\xef\xbb\xbf" + b)),
    Probe("a key twice", _u(raw=lambda b: b.replace(b'"author":"user"', b'"author":5,"author":"user"', 1))),
    Probe("trailing text", _u(raw=lambda b: b + b" 1")),
    Probe("a number past 64 bits in an unknown key", _u(raw=_key(b"18446744073709551616"))),
    Probe("1e400 in an unknown key", _u(raw=_key(b"1e400"))),
    Probe("a value nested 100 deep", _u(_set("custom_metadata", {"d": _deep(100)}))),
    Probe("a value nested 300 deep", _u(_set("custom_metadata", {"d": _deep(300)}))),
    Probe("an unknown key nested 300 deep", _u(raw=_key(json.dumps(_deep(300)).encode()))),
    Probe("a huge text", _u(_set("content.parts.0.text", "PROBE-X " + "w" * 3_000_000))),
    # the session's state (read before any event: sqlite_session_service.py:331-333, 361-362)
    Probe("session state not JSON", _u(), store="UPDATE sessions SET state = '{oops';"),
    Probe("session state a list", _u(), store="UPDATE sessions SET state = '[1]';"),
    Probe(
        "session state invalid UTF-8",
        _u(),
        store="UPDATE sessions SET state = CAST(x'7b2261223a22ff227d' AS TEXT);",
    ),
    Probe("session state with NaN", _u(), store="""UPDATE sessions SET state = '{"a": NaN}';"""),
    Probe("session state a BLOB", _u(), store="""UPDATE sessions SET state = CAST('{"a": 1}' AS BLOB);"""),
    Probe(
        "app state not JSON", _u(), store=f"INSERT OR REPLACE INTO app_states VALUES ('{APP}', 'nope', 1.0);"
    ),
    Probe(
        "app state of another app not JSON",
        _u(),
        store="INSERT OR REPLACE INTO app_states VALUES ('other-app', 'nope', 1.0);",
    ),
    Probe(
        "user state a number",
        _u(),
        store=f"INSERT OR REPLACE INTO user_states VALUES ('{APP}', '{USER}', '5', 1.0);",
    ),
    Probe(
        "user state of another user a list",
        _u(),
        store=f"INSERT OR REPLACE INTO user_states VALUES ('{APP}', 'user-2', '[]', 1.0);",
    ),
    Probe(
        "event_data stored as a BLOB",
        _u(),
        store=f"UPDATE events SET event_data = CAST(event_data AS BLOB) WHERE rowid = {SUMMARY_ROWID + 1};",
    ),
    Probe(
        "event_data an integer",
        _u(),
        store=f"UPDATE events SET event_data = 42 WHERE rowid = {SUMMARY_ROWID + 1};",
    ),
    # the last compaction (rowid 25), damaged in place
    Probe("compaction as written", compaction=_comp()),
    Probe("compaction without start_timestamp", compaction=_comp(_drop(f"{_C}.start_timestamp"))),
    Probe("compaction without end_timestamp", compaction=_comp(_drop(f"{_C}.end_timestamp"))),
    Probe("compaction start a string", compaction=_comp(_set(f"{_C}.start_timestamp", "early"))),
    Probe("compaction end a numeric string", compaction=_comp(_set(f"{_C}.end_timestamp", "1767225815.125"))),
    Probe("compaction end null", compaction=_comp(_set(f"{_C}.end_timestamp", None))),
    Probe("compaction start after end", compaction=_comp(_set(f"{_C}.start_timestamp", 1767225900.0))),
    Probe("compaction summary a string", compaction=_comp(_set(f"{_C}.compacted_content", "summary"))),
    Probe("compaction summary null", compaction=_comp(_set(f"{_C}.compacted_content", None))),
    Probe("compaction without summary", compaction=_comp(_drop(f"{_C}.compacted_content"))),
    Probe("compaction summary without parts", compaction=_comp(_drop(f"{_C}.compacted_content.parts"))),
    Probe(
        "compaction summary text a number", compaction=_comp(_set(f"{_C}.compacted_content.parts.0.text", 5))
    ),
    Probe("compaction summary role a number", compaction=_comp(_set(f"{_C}.compacted_content.role", 5))),
    Probe("compaction with an unknown key", compaction=_comp(_set(f"{_C}.zz", 1))),
    Probe("compaction a string", compaction=_comp(_set(_C, "x"))),
    Probe("compaction null", compaction=_comp(_set(_C, None))),
    Probe("compaction empty", compaction=_comp(_set(_C, {}))),
    Probe("compaction end before start", compaction=_comp(_set(f"{_C}.end_timestamp", 1767225600.0))),
    Probe("compaction start true", compaction=_comp(_set(f"{_C}.start_timestamp", True))),
    Probe("compaction summary role null", compaction=_comp(_set(f"{_C}.compacted_content.role", None))),
    Probe("compaction summary parts empty", compaction=_comp(_set(f"{_C}.compacted_content.parts", []))),
    Probe(
        "compaction summary thought only",
        compaction=_comp(_set(f"{_C}.compacted_content.parts.0.thought", True)),
    ),
    Probe(
        "compaction with content too",
        compaction=_comp(_set("content", {"role": "model", "parts": [{"text": "compaction content"}]})),
    ),
    Probe("compaction by another author", compaction=_comp(_set("author", AGENT))),
    Probe("compaction in a branch", compaction=_comp(_set("branch", "root.other"))),
    Probe("compaction start NaN-like string", compaction=_comp(_set(f"{_C}.start_timestamp", "nan"))),
    # Rewinds (events/_rewind_events.py:22-61): D carries one (C, after it, is of D's invocation).
    Probe("a rewind to an earlier invocation", _u(_drop("content"), _set(_REWIND, _U05_INV))),
    Probe("a rewind across a compaction event", _u(_drop("content"), _set(_REWIND, _U07_INV))),
    Probe("a rewind to a compaction's invocation", _u(_drop("content"), _set(_REWIND, _S1_INV))),
    Probe("a rewind to the first invocation", _u(_drop("content"), _set(_REWIND, _FIRST_INV))),
    Probe("a rewind to no invocation", _u(_drop("content"), _set(_REWIND, "e-nowhere"))),
    Probe("a rewind to its own invocation", _u(_drop("content"), lambda o: _set(_REWIND, o["invocation_id"])(o))),
    Probe("a rewind with content, to no invocation", _u(_set(_REWIND, "e-nowhere"))),
    Probe("a rewind with content, to the last invocation", _u(_set(_REWIND, _LAST_INV))),
    Probe("a rewind empty", _u(_set(_REWIND, ""))),
    Probe("a rewind a number", _u(_set(_REWIND, 5))),
    # two: an earlier rewind (to the last invocation) inside the range D drops, or D rewinding it
    Probe("a rewind over an earlier rewind", _u(_drop("content"), _set(_REWIND, _U05_INV)), store=_rewind_row(_LAST_INV)),
    Probe("a rewind of a rewind", _u(_drop("content"), _set(_REWIND, "e-rewind")), store=_rewind_row(_LAST_INV)),
    Probe("two rewinds, the later to no invocation", _u(_drop("content"), _set(_REWIND, "e-nowhere")), store=_rewind_row(_LAST_INV)),
    # Calls and responses without an id (tools/_rearranger.py:228-262, 305-342): a call without one
    # is never dropped as unanswered; a response without one is kept only after such a call of its
    # name (the base's calls of get_weather have none).
    Probe(
        "a call without an id beside an unanswered call",
        _r(_set("content.parts", [{"function_call": {"id": "orphan-call", "args": {}, "name": "add"}},
                                  {"function_call": {"args": {"note": "PROBE-X"}, "name": "add"}}])),
    ),
    Probe("a response without an id, no call of its name", _r(_set("content", _idless_response("add")))),
    Probe("a response without an id, its call compacted", _r(_set("content", _idless_response("get_weather")))),
    Probe("a response without an id after a call of its name", _r(_set("content", _idless_response("lookup"))), store=_IDLESS_CALL),
]


def marker(i: int) -> str:
    return f"PROBE-{i:03d}"


def after(i: int) -> str:
    return f"AFTER-{i:03d}"


def _insert(con: sqlite3.Connection, data: bytes, ts: Any, eid: Any, inv: str) -> None:
    con.execute(
        "INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp, event_data) VALUES (?,?,?,?,?,?,CAST(? AS TEXT))",
        (eid, APP, USER, SESSION, inv, ts, data),
    )


def write_probes(out: Path, base: Path = BASE) -> list[Path]:
    """One copy of the base per probe: D then C (the clean event after it, answering D's call when
    D is a call), or the last compaction rewritten."""
    files = []
    for i, p in enumerate(PROBES):
        f = out / f"probe{i:03d}.db"
        shutil.copyfile(base, f)
        os.chmod(f, 0o644)
        with sqlite3.connect(f) as con:
            if p.compaction is not None:
                (raw,) = con.execute(
                    "SELECT event_data FROM events WHERE rowid=?", (SUMMARY_ROWID,)
                ).fetchone()
                con.execute(
                    "UPDATE events SET event_data=CAST(? AS TEXT) WHERE rowid=?",
                    (p.compaction(json.loads(raw)), SUMMARY_ROWID),
                )
            else:
                if p.store is not None:
                    con.executescript(p.store)
                _probe_rows(con, p, i)
        files.append(f)
    return files


def _probe_rows(con: sqlite3.Connection, p: Probe, i: int) -> None:
    assert p.row is not None
    data, ts, eid = p.row(marker(i), i)
    _insert(con, data, ts, eid, f"e-probe-{i:03d}")
    c = _user(after(i), i)
    c["id"], c["timestamp"] = f"after-{i:03d}", LAST_TS + 20
    if b'"function_call"' in data:
        c["author"] = AGENT
        c["content"]["parts"] = [
            {"function_response": {"id": f"call-{i:03d}", "name": "add", "response": {"note": after(i)}}}
        ]
    _insert(con, json.dumps(c, separators=(",", ":")).encode(), c["timestamp"], c["id"], c["invocation_id"])


@dataclass(frozen=True)
class Verdict:
    """What the next request holds: 'refused' (no request), or which of D, C, the history H, the
    summary S and the event inside it I were sent."""

    refused: bool
    sent: tuple[bool, ...] = ()

    def __str__(self) -> str:
        if self.refused:
            return "refused"
        return "".join(ch if v else "-" for ch, v in zip("DCHSI", self.sent, strict=True))


def _verdict(text: str, i: int) -> Verdict:
    return Verdict(
        False, (marker(i) in text, after(i) in text, HISTORY in text, SUMMARY in text, INSIDE in text)
    )


def need_adk() -> str | None:
    """Why the pinned ADK cannot be run here (None: it can)."""
    if not ADK_PYTHON.exists():
        return f"google-adk is not installed at {ADK_PYTHON}: run tests/install_adk.sh"
    try:
        r = subprocess.run(
            [str(ADK_PYTHON), "-c", "import google.adk; print(google.adk.__version__)"],
            capture_output=True,
            text=True,
        )
    except OSError as e:
        return f"{ADK_PYTHON} cannot be run ({e}): run tests/install_adk.sh"
    if r.returncode != 0 or r.stdout.strip() != "2.13.0":
        return f"{ADK_PYTHON} has no google-adk 2.13.0 ({(r.stdout + r.stderr).strip()[-300:]}): run tests/install_adk.sh"
    return None


def sent_by_adk(files: Sequence[Path], scratch: Path) -> list[tuple[Verdict, str]]:
    """Per file: the real ADK's verdict, and why it sent nothing (the error) when it did not."""
    jobs = [
        {
            "name": f.name,
            "path": str(f),
            "backend": "sqlite",
            "app": APP,
            "user": USER,
            "session": SESSION,
            "agent": AGENT,
        }
        for f in files
    ]
    (scratch / "jobs.json").write_text(json.dumps(jobs))
    r = subprocess.run(
        [str(ADK_PYTHON), str(DRIVER), str(scratch / "jobs.json"), str(scratch / "out.json")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-3000:])
    got = json.loads((scratch / "out.json").read_text())
    out: list[tuple[Verdict, str]] = []
    for i, f in enumerate(files):
        res = got[f.name]
        if isinstance(res, dict):
            out.append((Verdict(True), f"{res.get('stage', 'run')}: {res['error'].splitlines()[0][:120]}"))
        else:
            out.append((_verdict(json.dumps(res, ensure_ascii=False), i), ""))
    return out


def predicted(f: Path, i: int) -> Verdict:
    """inspector's prediction: refused when `analyze` finds `resume_refused`, else what the items
    of its next request hold (each item's record: its message's blocks, a summary's text)."""
    from inspector.analysis import analyze
    from inspector.formats import load

    report = analyze(load(str(f)))
    if any(x.code == "resume_refused" for x in report.findings):
        return Verdict(True)
    recs = report.ledger.records
    texts: list[str] = []
    for it in report.context:
        rec = recs[it.seq]
        if it.kind == "summary" and rec.checkpoint is not None:
            texts.append(rec.checkpoint.summary)
        elif rec.message is not None:
            for b in rec.message.blocks:
                texts.append(json.dumps([b.text, b.args, b.raw], ensure_ascii=False, default=str))
    return _verdict("\n".join(texts), i)


def run(out: Path) -> list[tuple[Probe, Verdict, str, Verdict]]:
    """Every probe: (probe, what ADK did, ADK's error if any, inspector's prediction)."""
    files = write_probes(out)
    theirs = sent_by_adk(files, out)
    return [
        (p, got, why, predicted(f, i))
        for i, (p, f, (got, why)) in enumerate(zip(PROBES, files, theirs, strict=True))
    ]


def print_verdicts(rows: Sequence[tuple[Probe, Verdict, str, Verdict]]) -> None:
    differ = 0
    for i, (p, got, why, want) in enumerate(rows):
        same = str(got) == str(want)
        differ += not same
        print(f"{'  ' if same else '!!'} {i:3d} {p.name:50} adk {got!s:8} inspector {want!s:8} {why[:70]}")
    print(f"{len(rows)} probes, {differ} differ")


def main() -> int:
    why = need_adk()
    if why is not None:
        print(why, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        print_verdicts(run(Path(tmp)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
