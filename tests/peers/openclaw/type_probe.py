"""Which damaged transcript rows the real OpenClaw 2026.9.6 sends, and which stop it, probe by probe.

Each probe is a copy of the OpenClaw peer corpus's `s1.sqlite` (the store OpenClaw wrote: three
threshold compactions, zstd rows) with two rows appended to session `s1` under its leaf: D, a user
message carrying a marker (`PROBE-nnn`), damaged one way (a row that is not an entry object, invalid
JSON or UTF-8, a field missing or of another JSON type, a block of another shape, an entry of
another type, a payload column that does not decode, ...), and C under it, a clean user message
carrying `AFTER-nnn`. Some probes damage one of the store's own rows instead (its last compaction, a
summarized message, a retained zstd row, the header), D then clean. Each row is written as OpenClaw
appends one (`appendTranscriptEvent`, session-accessor.sqlite-transcript-store-CFksbmAY.mjs:181-231:
its `transcript_event_identities` row as `readTranscriptEventIdentity` (:443-452) derives it); the
transcript index is left behind, as a repair leaves it, so OpenClaw rebuilds it from the rows
(`reconcileSessionTranscriptIndexInTransaction`, session-transcript-index-UaRlRUAw.mjs:586-595).

The installed OpenClaw (tests/peers/openclaw/install.sh) resumes every copy for one turn
(`resume.resume`: one `openclaw agent --local --session-id s1` against fake_model.py, ~10 s each,
two at a time). Per probe, what OpenClaw did: it refused (it exited non-zero or sent no agent
request: why, from its stderr), or what its first agent request held: was D's marker in it, C's, the
base's history (its last compaction's summary), and how many messages (its system prompt, the
probe's prompt and the runtime-context carrier left out). inspector's prediction is `analyze`'s: its
next request, or `refused` when a `resume_refused`/`request_fails`/`broken_tree` finding says
OpenClaw sends nothing.

    python -m tests.peers.openclaw.type_probe [--only NAME ...] [--record]

prints both side by side and how many differ; `--record` keeps OpenClaw's verdicts in
`recorded_verdicts.json` under the key of what it was given (tests/peers/recorded.py).
tests/test_openclaw_line_rule.py holds inspector's prediction to the recorded verdict of every probe
and resumes a few with the real OpenClaw each run, whose verdicts must still be the recorded ones.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zstandard

from inspector.formats.openclaw_writer import provide_octet_length
from tests.peers import probe_edits, recorded
from tests.peers.claude_code_resume.type_probe import print_verdicts
from tests.peers.openclaw.resume import resume
from tests.peers.probe_edits import drop_at as _drop
from tests.peers.probe_edits import set_at as _set

HERE = Path(__file__).resolve().parent
BASE = HERE / "corpus" / "s1.sqlite"
SESSION = "s1"
LEAF = "042beb07-13e6-4e35-9ebf-48982ea7781c"  # seq 35, the base's last row: "done with turn t8 step 0."
LEAF_SEQ = 35
# The base's last compaction (seq 31) quotes the live request of its turn; the message itself
# (seq 26) is summarized away: this text is sent whenever that summary is.
HISTORY_MARK = '"[turn:t6] read notes.txt once more'
COMPACTION_SEQ = 31  # the last compaction (zstd), firstKeptEntryId = seq 29
SUMMARIZED_USER, SUMMARIZED_REPLY = 10, 14  # turn t2's question and last answer (before compaction 1)
SUMMARIZED_ZSTD = 16  # turn t3's big question (zstd), summarized by compaction 1
RETAINED_ZSTD, RETAINED_REPLY = 32, 33  # turn t7's big question (zstd) and its answer, both sent
WHEN, WHEN_MS = "2026-12-02T09:00:00.000Z", 1796202000000
PROMPT = "[turn:probe] PROMPT-{i:03d} one more question"
_Edit = Callable[[dict[str, Any]], None]


# ---------------------------------------------------------------------------------------- rows


@dataclass(frozen=True)
class Row:
    """A transcript row as stored: `event_json` text (bytes, written as TEXT), or a zstd payload."""

    json: bytes | None
    zstd: bytes | None = None
    utf8_bytes: int | None = None
    navigation: str | None = None


def _plain(data: bytes) -> Row:
    return Row(data, utf8_bytes=len(data))


@dataclass(frozen=True)
class Probe:
    name: str
    d: Callable[[str], Row | bytes]  # the marker -> D's row (bytes: its event_json)
    base: Callable[[sqlite3.Connection], None] | None = None  # an edit of the base's rows, in place
    aside: bool = False  # C hangs under the base's leaf, D beside it: D off the active path
    # D is an answer: a clean user message P (`BEFORE-nnn`) comes before it and C is a user message
    # (no two answers in a row: OpenClaw merges adjacent answers before it reads their stop reason).
    reply: bool = False
    tags: tuple[str, ...] = field(default=())
    # D (an answer) makes a call, answered by a tool result R between D and C (`_FAILED_CALL`)
    answered: bool = False
    last: bool = False  # D is the session's last row (no C)


def _user(marker: str, i: str = "d") -> dict[str, Any]:
    return {
        "type": "message", "id": f"p{i}{marker[-3:]}", "parentId": LEAF, "timestamp": WHEN,
        "message": {"role": "user", "content": [{"type": "text", "text": marker}], "timestamp": WHEN_MS},
    }  # fmt: skip


def _assistant(marker: str, i: str = "d") -> dict[str, Any]:
    o = _user(marker, i)
    o["message"] = {
        "role": "assistant", "content": [{"type": "text", "text": marker}], "api": "openai-completions",
        "provider": "fake", "model": "fake-model", "stopReason": "stop", "timestamp": WHEN_MS,
        "usage": {"input": 10, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 12,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
    }  # fmt: skip
    return o


def _tool_result(marker: str) -> dict[str, Any]:
    o = _user(marker)
    o["message"] = {
        "role": "toolResult", "toolCallId": "callt6s0k0", "toolName": "read",
        "content": [{"type": "text", "text": marker}], "isError": False, "timestamp": WHEN_MS,
    }  # fmt: skip
    return o


def _entry(kind: str, **fields: Any) -> Callable[[str], dict[str, Any]]:
    """D as an entry of another type (its message taken out), FIELDS set ("@" stands for the marker)."""

    def make(marker: str) -> dict[str, Any]:
        o = _user(marker)
        del o["message"]
        o["type"] = kind
        o.update({k: marker if v == "@" else v for k, v in fields.items()})
        return o

    return make


# What OpenClaw's stream writes into an answer that failed before producing content
# (`STREAM_ERROR_FALLBACK_TEXT`, @openclaw/ai dist/host-yTvBrYM2.mjs:413), and a call the harness's
# tools answer (`read`).
_FALLBACK = "[assistant turn failed before producing content]"
_FAILED_CALL = {"type": "toolCall", "id": "callprobefail", "name": "read", "arguments": {"path": "notes.txt"}}


def _content(text: str) -> _Edit:
    """D's content one text block of TEXT (its marker gone)."""
    return _set("message.content", [{"type": "text", "text": text}])


def _thinking_first(o: dict[str, Any]) -> None:
    o["message"]["content"].insert(0, {"type": "thinking", "thinking": "thinking it over", "thinkingSignature": ""})


def _call(o: dict[str, Any]) -> None:
    o["message"]["content"].append(dict(_FAILED_CALL))


def _reasoning(text: str | None = None) -> _Edit:
    """D's content a thinking block (holding its marker), then a text of TEXT when given."""

    def edit(o: dict[str, Any]) -> None:
        marker = o["message"]["content"][0]["text"]
        o["message"]["content"] = [{"type": "thinking", "thinking": marker, "thinkingSignature": ""}]
        if text is not None:
            o["message"]["content"].append({"type": "text", "text": text})

    return edit


def _edited(*edits: _Edit, make: Callable[[str], dict[str, Any]] = _user) -> Callable[[str], bytes]:
    return probe_edits.edited_line(make, *edits)


def _with_marker(path: str, make: Callable[[str], dict[str, Any]] = _user) -> Callable[[str], bytes]:
    """D with the field at PATH set to the marker."""
    return lambda m: _edited(_set(path, m), make=make)(m)


def _block(block: Any, make: Callable[[str], dict[str, Any]] = _user) -> Callable[[str], bytes]:
    """D with one more block after its marker text."""
    return probe_edits.with_block(make, block)


def _raw(text: bytes) -> Callable[[str], bytes]:
    """D with a field `x` of raw JSON TEXT (a field no one reads)."""
    return probe_edits.with_raw_field(_user, text)


_whole = probe_edits.whole


def _zstd(
    data: bytes, *, size: int | None = None, frame: Callable[[bytes], bytes] = lambda b: b, like: bytes | None = None
) -> Row:
    """DATA as a zstd row (`navigation_json` as OpenClaw projects a plain user message's: LIKE's,
    when given), its frame edited by FRAME and its recorded size SIZE (default: the true one)."""
    o = json.loads(like or data)
    nav = {k: o[k] for k in ("type", "id", "parentId", "timestamp") if k in o}
    navigation = {
        "version": 1, "report": {"kind": "canonical", "hasParentId": True, "entry": nav},
        "navigation": {**nav, "message": {"role": "user"}}, "reset": {**nav, "message": {"role": "user"}},
        "model": {**nav, "message": {"role": "user", "timestamp": WHEN_MS, "content": []}},
        "modelBytes": len(data), "modelWithoutCheckpointBytes": len(data), "withoutCustomDataBytes": len(data),
    }  # fmt: skip
    blob = frame(zstandard.ZstdCompressor().compress(data))
    return Row(None, blob, len(data) if size is None else size, json.dumps(navigation, separators=(",", ":")))


# ---------------------------------------------------------------------------------------- the store's rows


def read_row(con: sqlite3.Connection, seq: int) -> dict[str, Any]:
    text, blob, size = con.execute(
        "SELECT CAST(event_json AS BLOB), event_zstd, event_utf8_bytes FROM transcript_events WHERE session_id=? AND seq=?",
        (SESSION, seq),
    ).fetchone()
    raw = text if text is not None else zstandard.ZstdDecompressor().decompress(blob, max_output_size=size)
    return json.loads(raw)


def write_row(con: sqlite3.Connection, seq: int, row: Row) -> None:
    """Row SEQ (new or replaced) as ROW, and its identity row as OpenClaw derives it."""
    con.execute("DELETE FROM transcript_events WHERE session_id=? AND seq=?", (SESSION, seq))
    con.execute("DELETE FROM transcript_event_identities WHERE session_id=? AND seq=?", (SESSION, seq))
    con.execute(
        "INSERT INTO transcript_events(session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes, navigation_json) "
        "VALUES(?, ?, CAST(? AS TEXT), ?, ?, ?, ?)",
        (SESSION, seq, row.json, WHEN_MS, row.zstd, row.utf8_bytes, row.navigation),
    )
    try:
        o = json.loads(row.json if row.json is not None else zstandard.ZstdDecompressor().decompress(row.zstd or b"", max_output_size=row.utf8_bytes or 1))
    except (ValueError, RecursionError, zstandard.ZstdError):
        return
    # readTranscriptEventIdentity (session-accessor.sqlite-transcript-store-CFksbmAY.mjs:443-452)
    eid = o.get("id") if isinstance(o, dict) else None
    if not isinstance(eid, str) or not eid.strip():
        return
    con.execute(
        "INSERT OR IGNORE INTO transcript_event_identities(session_id, event_id, seq, event_type, parent_id, message_idempotency_key, created_at) "
        "VALUES(?, ?, ?, ?, ?, NULL, ?)",
        (SESSION, eid.strip(), seq, o.get("type") if isinstance(o.get("type"), str) else None,
         o.get("parentId") if isinstance(o.get("parentId"), str) else None, WHEN_MS),
    )  # fmt: skip


def _on_row(seq: int, kind: str, *edits: _Edit) -> Callable[[sqlite3.Connection], None]:
    """An edit of the base's row SEQ, an entry of type KIND (or a message of role KIND), rewritten
    as a plain row."""

    def base(con: sqlite3.Connection) -> None:
        o = read_row(con, seq)
        assert kind in (o["type"], (o.get("message") or {}).get("role")), f"the base's row {seq} moved"
        for e in edits:
            e(o)
        write_row(con, seq, _plain(json.dumps(o).encode()))

    return base


def _row_as(seq: int, make: Callable[[bytes], Row]) -> Callable[[sqlite3.Connection], None]:
    """The base's row SEQ stored as MAKE makes it of its JSON."""

    def base(con: sqlite3.Connection) -> None:
        write_row(con, seq, make(json.dumps(read_row(con, seq)).encode()))

    return base


def _zstd_of(seq: int, **kw: Any) -> Callable[[sqlite3.Connection], None]:
    """The base's zstd row SEQ, its payload columns edited in place (its navigation_json kept)."""

    def base(con: sqlite3.Connection) -> None:
        blob, size = con.execute(
            "SELECT event_zstd, event_utf8_bytes FROM transcript_events WHERE session_id=? AND seq=?", (SESSION, seq)
        ).fetchone()
        assert blob is not None, f"the base's row {seq} is no zstd row"
        sets = {"event_zstd": kw["frame"](blob) if "frame" in kw else blob, "event_utf8_bytes": kw.get("size", size)}
        if "json" in kw:
            sets["event_json"] = kw["json"]
        con.execute(
            f"UPDATE transcript_events SET {', '.join(f'{k}=?' for k in sets)} WHERE session_id=? AND seq=?",
            (*sets.values(), SESSION, seq),
        )

    return base


def _on_compaction(*edits: _Edit) -> Callable[[sqlite3.Connection], None]:
    return _on_row(COMPACTION_SEQ, "compaction", *edits)


def _flip(blob: bytes) -> bytes:
    """A frame whose compressed block is garbled (its header intact)."""
    b = bytearray(blob)
    for k in range(12, min(len(b), 40)):
        b[k] ^= 0x5A
    return bytes(b)


_CLEAN = _edited()
_CALL = {"type": "toolCall", "id": "callprobe", "name": "read", "arguments": {"path": "notes.txt"}}
_IMAGE = {"type": "image", "data": "aGk=", "mimeType": "image/png"}


def _message(m: dict[str, Any]) -> Callable[[str], bytes]:
    """D whose message is M ("@" stands for the marker in its values)."""
    return lambda marker: _edited(_set("message", {k: marker if v == "@" else v for k, v in m.items()}))(marker)


PROBES: list[Probe] = [
    Probe("clean", _CLEAN),
    # --- rows that are not an entry object
    Probe("row null", _whole(b"null")),
    Probe("row a number", _whole(b"5")),
    Probe("row a list", _whole(b"[1, 2]")),
    Probe("row empty object", _whole(b"{}")),
    Probe("row empty text", _whole(b"")),
    Probe("row cut short", lambda m: json.dumps(_user(m)).encode()[:-7]),
    Probe("row with a value after it", lambda m: json.dumps(_user(m)).encode() + b' {"x": 1}'),
    Probe("row with a bare NaN", _raw(b"NaN")),
    Probe("row invalid UTF-8", lambda m: json.dumps(_user(m)).encode().replace(m.encode(), m.encode() + b" \xff\xfe")),
    Probe("row lone surrogate", lambda m: json.dumps(_user(m)).encode().replace(m.encode(), m.encode() + b" \\ud800")),
    Probe("row with a BOM", lambda m: b"\xef\xbb\xbf" + json.dumps(_user(m)).encode()),
    Probe("row nested 3000 deep", _raw(b"[" * 3000 + b"]" * 3000)),
    Probe(
        "row duplicate key, role last",
        lambda m: json.dumps(_user(m)).encode().replace(b'"role": "user"', b'"role": "assistant", "role": "user"'),
    ),
    # --- the row's payload columns
    Probe("row zstd", lambda m: _zstd(_CLEAN(m))),
    Probe("row zstd, frame garbled", lambda m: _zstd(_CLEAN(m), frame=_flip)),
    Probe("row zstd, frame cut short", lambda m: _zstd(_CLEAN(m), frame=lambda b: b[:-4])),
    Probe("row zstd, size too small", lambda m: _zstd(_CLEAN(m), size=len(_CLEAN(m)) - 1)),
    Probe("row zstd, size too large", lambda m: _zstd(_CLEAN(m), size=len(_CLEAN(m)) + 1)),
    Probe("row zstd of invalid JSON", lambda m: _zstd(_CLEAN(m)[:-3], like=_CLEAN(m))),
    Probe("row zstd not a frame", lambda m: Row(None, b"PROBE" + m.encode(), 20, _zstd(_CLEAN(m)).navigation)),
    Probe("row zstd and json both", lambda m: Row(_CLEAN(m), zstandard.ZstdCompressor().compress(b"{}"), 2, None)),
    Probe("row neither json nor zstd", lambda m: Row(None, None, None, None)),
    Probe("retained zstd row garbled", _CLEAN, _zstd_of(RETAINED_ZSTD, frame=_flip)),
    Probe("retained zstd row size wrong", _CLEAN, _zstd_of(RETAINED_ZSTD, size=1000)),
    Probe("retained zstd row size null", _CLEAN, _zstd_of(RETAINED_ZSTD, size=None)),
    Probe("retained zstd row with json too", _CLEAN, _zstd_of(RETAINED_ZSTD, json='{"type":"message"}')),
    Probe("summarized zstd row garbled", _CLEAN, _zstd_of(SUMMARIZED_ZSTD, frame=_flip)),
    Probe("retained reply as zstd", _CLEAN, _row_as(RETAINED_REPLY, _zstd)),
    # --- the entry's own fields
    Probe("entry without type", _edited(_drop("type"))),
    Probe("entry type unknown", _edited(_set("type", "probe_entry"))),
    Probe("entry type a number", _edited(_set("type", 5))),
    Probe("entry without id", _edited(_drop("id"))),
    Probe("entry id a number", _edited(_set("id", 5))),
    Probe("entry id empty", _edited(_set("id", ""))),
    Probe("entry id the leaf's", _edited(_set("id", LEAF))),
    Probe("entry without parentId", _edited(_drop("parentId"))),
    Probe("entry parentId null", _edited(_set("parentId", None))),
    Probe("entry parentId unknown", _edited(_set("parentId", "ffffffff"))),
    Probe("entry parentId a number", _edited(_set("parentId", 5))),
    Probe("entry parentId itself", lambda m: _edited(_set("parentId", f"pd{m[-3:]}"))(m)),
    Probe("entry timestamp a number", _edited(_set("timestamp", 5))),
    Probe("entry a second session header", _edited(_set("type", "session"))),
    # --- the message
    Probe("message missing", _edited(_drop("message"))),
    Probe("message null", _edited(_set("message", None))),
    Probe("message a string", _edited(_set("message", "PROBE"))),
    Probe("message without role", _edited(_drop("message.role"))),
    Probe("message role unknown", _edited(_set("message.role", "system"))),
    Probe("message role a number", _edited(_set("message.role", 5))),
    Probe("user content a string", _with_marker("message.content")),
    Probe("user content a number", _edited(_set("message.content", 5))),
    Probe("user content null", _edited(_set("message.content", None))),
    Probe("user content missing", _edited(_drop("message.content"))),
    Probe("user content an object", _edited(_set("message.content", {"type": "text", "text": "x"}))),
    Probe("user content empty", _edited(_set("message.content", []))),
    Probe("user text empty", _edited(_set("message.content.0.text", ""))),
    Probe("user excluded from context", _edited(_set("message.excludeFromContext", True))),
    Probe("user block unknown", _block({"type": "probe_block", "text": "x"})),
    Probe("user block without type", _block({"text": "x"})),
    Probe("user block null", _block(None)),
    Probe("user block a string", _block("x")),
    Probe("user text a number", _block({"type": "text", "text": 5})),
    Probe("user text null", _block({"type": "text", "text": None})),
    Probe("user text missing", _block({"type": "text"})),
    Probe("user image", _block(_IMAGE)),
    Probe("user image data a number", _block({**_IMAGE, "data": 5})),
    Probe("reply clean", _edited(make=_assistant), reply=True),
    Probe("reply content a string", _with_marker("message.content", _assistant), reply=True),
    Probe("reply content null", _edited(_set("message.content", None), make=_assistant), reply=True),
    Probe("reply content empty", _edited(_set("message.content", []), make=_assistant), reply=True),
    Probe("reply stopReason error", _edited(_set("message.stopReason", "error"), make=_assistant), reply=True),
    Probe("reply stopReason aborted", _edited(_set("message.stopReason", "aborted"), make=_assistant), reply=True),
    Probe("reply stopReason missing", _edited(_drop("message.stopReason"), make=_assistant), reply=True),
    Probe("reply stopReason a number", _edited(_set("message.stopReason", 5), make=_assistant), reply=True),
    Probe("reply stopReason unknown", _edited(_set("message.stopReason", "probe"), make=_assistant), reply=True),
    Probe("reply provider missing", _edited(_drop("message.provider"), make=_assistant), reply=True),
    Probe("reply text a number", _block({"type": "text", "text": 5}, make=_assistant), reply=True),
    Probe("reply text null", _block({"type": "text", "text": None}, make=_assistant), reply=True),
    Probe("reply block unknown", _block({"type": "probe_block"}, make=_assistant), reply=True),
    Probe("reply block null", _block(None, make=_assistant), reply=True),
    Probe("reply thinking", _block({"type": "thinking", "thinking": "thought"}, make=_assistant), reply=True),
    Probe("reply thinking a number", _block({"type": "thinking", "thinking": 5}, make=_assistant), reply=True),
    Probe("reply call unanswered", _block(_CALL, make=_assistant), reply=True),
    Probe("reply call arguments a string", _block({**_CALL, "arguments": "x"}, make=_assistant), reply=True),
    Probe("reply call arguments null", _block({**_CALL, "arguments": None}, make=_assistant), reply=True),
    Probe("reply call id a number", _block({**_CALL, "id": 5}, make=_assistant), reply=True),
    Probe("reply call without name", _block({k: v for k, v in _CALL.items() if k != "name"}, make=_assistant), reply=True),
    Probe("result clean, orphan", _edited(make=_tool_result)),
    Probe("result content a string", _with_marker("message.content", _tool_result)),
    Probe("result content null", _edited(_set("message.content", None), make=_tool_result)),
    Probe("result toolCallId a number", _edited(_set("message.toolCallId", 5), make=_tool_result)),
    Probe("result toolCallId missing", _edited(_drop("message.toolCallId"), make=_tool_result)),
    Probe("result toolName missing", _edited(_drop("message.toolName"), make=_tool_result)),
    Probe("result isError a string", _edited(_set("message.isError", "yes"), make=_tool_result)),
    Probe("result isError missing", _edited(_drop("message.isError"), make=_tool_result)),
    Probe("result text a number", _block({"type": "text", "text": 5}, make=_tool_result)),
    Probe("result image", _block(_IMAGE, make=_tool_result)),
    Probe("bash execution", _message({"role": "bashExecution", "command": "ls", "output": "@", "exitCode": 0})),
    Probe("bash excluded", _message({"role": "bashExecution", "command": "ls", "output": "@", "excludeFromContext": True})),
    Probe("bash output a number", _message({"role": "bashExecution", "command": "ls", "output": 5, "exitCode": 0})),
    Probe("custom role", _message({"role": "custom", "customType": "x", "content": "@", "display": True})),
    Probe("custom role content a number", _message({"role": "custom", "customType": "x", "content": 5, "display": True})),
    Probe("custom role without customType", _message({"role": "custom", "content": "@", "display": True})),
    Probe("custom role excluded", _message({"role": "custom", "customType": "x", "content": "@", "excludeFromContext": True})),
    Probe("summary role", _message({"role": "compactionSummary", "summary": "@", "tokensBefore": 1})),
    Probe("branch summary role", _message({"role": "branchSummary", "summary": "@", "fromId": LEAF})),
    # --- other entry types
    Probe("custom_message entry", lambda m: _edited(make=_entry("custom_message", customType="x", content="@", display=False))(m)),
    Probe("custom_message display missing", lambda m: _edited(make=_entry("custom_message", customType="x", content="@"))(m)),
    Probe("custom_message content a number", _edited(make=_entry("custom_message", customType="x", content=5, display=True))),
    Probe("custom_message content empty", _edited(make=_entry("custom_message", customType="x", content=[], display=True))),
    Probe("custom entry", _edited(make=_entry("custom", customType="x", data={"text": "@"}))),
    Probe("branch_summary entry", lambda m: _edited(make=_entry("branch_summary", summary="@", fromId=LEAF))(m)),
    Probe("branch_summary empty", _edited(make=_entry("branch_summary", summary="", fromId=LEAF))),
    Probe("branch_summary a number", _edited(make=_entry("branch_summary", summary=5, fromId=LEAF))),
    Probe("model_change entry", _edited(make=_entry("model_change", provider="other", modelId="other-model"))),
    Probe("label entry", _edited(make=_entry("label", targetId=LEAF, label="x"))),
    Probe("compaction appended", lambda m: _edited(make=_entry("compaction", summary="@", firstKeptEntryId=LEAF, tokensBefore=1))(m)),
    Probe("compaction appended, summary a number", _edited(make=_entry("compaction", summary=5, firstKeptEntryId=LEAF, tokensBefore=1))),
    Probe("compaction appended, summary missing", _edited(make=_entry("compaction", firstKeptEntryId=LEAF, tokensBefore=1))),
    Probe("compaction appended, kept a number", lambda m: _edited(make=_entry("compaction", summary="@", firstKeptEntryId=5, tokensBefore=1))(m)),
    Probe("compaction appended, kept missing", lambda m: _edited(make=_entry("compaction", summary="@", tokensBefore=1))(m)),
    Probe("compaction appended, tokensBefore missing", lambda m: _edited(make=_entry("compaction", summary="@", firstKeptEntryId=LEAF))(m)),
    Probe("reset appended", _edited(make=_entry("reset", reason="reset"))),
    Probe("reset appended, keeping the leaf", _edited(make=_entry("reset", reason="reset", firstKeptEntryId=LEAF))),
    Probe("reset appended, reason unknown", _edited(make=_entry("reset", reason="probe"))),
    # --- the base's last compaction damaged (D clean)
    Probe("base compaction summary a number", _CLEAN, _on_compaction(_set("summary", 5))),
    Probe("base compaction summary null", _CLEAN, _on_compaction(_set("summary", None))),
    Probe("base compaction summary missing", _CLEAN, _on_compaction(_drop("summary"))),
    Probe("base compaction kept missing", _CLEAN, _on_compaction(_drop("firstKeptEntryId"))),
    Probe("base compaction kept unknown", _CLEAN, _on_compaction(_set("firstKeptEntryId", "ffffffff"))),
    Probe("base compaction kept a number", _CLEAN, _on_compaction(_set("firstKeptEntryId", 5))),
    Probe("base compaction tokensBefore a string", _CLEAN, _on_compaction(_set("tokensBefore", "x"))),
    Probe("base compaction without id", _CLEAN, _on_compaction(_drop("id"))),
    Probe("base compaction as plain json", _CLEAN, _on_compaction()),
    # --- where a damaged entry stops OpenClaw: on the path, in the request, beside it, summarized away
    Probe("message null, beside the path", _edited(_set("message", None)), aside=True),
    Probe("reply content null, beside the path", _edited(_set("message.content", None), make=_assistant), aside=True),
    Probe("row cut short, beside the path", lambda m: json.dumps(_user(m)).encode()[:-7], aside=True),
    Probe("parent cycle beside the path", lambda m: _edited(_set("parentId", f"pd{m[-3:]}"))(m), aside=True),
    Probe("summarized message null", _CLEAN, _on_row(SUMMARIZED_USER, "user", _set("message", None))),
    Probe("summarized user content a number", _CLEAN, _on_row(SUMMARIZED_USER, "user", _set("message.content", 5))),
    Probe("summarized reply content null", _CLEAN, _on_row(SUMMARIZED_REPLY, "assistant", _set("message.content", None))),
    Probe("summarized row cut short", _CLEAN, lambda con: write_row(con, SUMMARIZED_USER, _plain(b'{"type":"message","id":'))),
    Probe("retained reply content null", _CLEAN, _on_row(RETAINED_REPLY, "assistant", _set("message.content", None))),
    Probe("retained row cut short", _CLEAN, lambda con: write_row(con, RETAINED_REPLY, _plain(b'{"type":"message","id":'))),
    # Failed answers (stopReason error or aborted): sent as OpenClaw's marker text, or left out
    # whole (`openclaw_model.dropped_answer`); an answer cut short holding only reasoning: left out.
    Probe("errored reply text blank", _edited(_content(" \n"), _set("message.stopReason", "error"), make=_assistant), reply=True),
    Probe("aborted reply text blank", _edited(_content(""), _set("message.stopReason", "aborted"), make=_assistant), reply=True),
    Probe("errored reply fallback text", _edited(_content(_FALLBACK), _set("message.stopReason", "error"), make=_assistant), reply=True),
    Probe("aborted reply fallback text", _edited(_content(f" {_FALLBACK}\n"), _set("message.stopReason", "aborted"), make=_assistant), reply=True),
    Probe("errored reply content a string", lambda m: _edited(_set("message.content", m), _set("message.stopReason", "error"), make=_assistant)(m), reply=True),
    Probe("errored reply thinking and text", _edited(_thinking_first, _set("message.stopReason", "error"), make=_assistant), reply=True),
    Probe("errored reply a call, unanswered", _edited(_call, _set("message.stopReason", "error"), make=_assistant), reply=True),
    Probe("aborted reply a call, answered", _edited(_call, _set("message.stopReason", "aborted"), make=_assistant), reply=True, answered=True),
    Probe("errored reply the last row", _edited(_set("message.stopReason", "error"), make=_assistant), reply=True, last=True),
    Probe("aborted reply the last row", _edited(_set("message.stopReason", "aborted"), make=_assistant), reply=True, last=True),
    Probe("length reply thinking only", _edited(_reasoning(), _set("message.stopReason", "length"), make=_assistant), reply=True),
    Probe("length reply thinking, blank text", _edited(_reasoning(" "), _set("message.stopReason", "length"), make=_assistant), reply=True),
    Probe("length reply thinking and text", _edited(_thinking_first, _set("message.stopReason", "length"), make=_assistant), reply=True),
    Probe("errored reply text null", _edited(lambda o: o["message"]["content"].append({"type": "text", "text": None}), _set("message.stopReason", "error"), make=_assistant), reply=True),
    Probe("aborted reply block unknown", _edited(lambda o: o["message"]["content"].append({"type": "probe_block"}), _set("message.stopReason", "aborted"), make=_assistant), reply=True),
    Probe("errored reply content null", _edited(_set("message.content", None), _set("message.stopReason", "error"), make=_assistant), reply=True),
    Probe("aborted reply block null", _edited(lambda o: o["message"]["content"].append(None), _set("message.stopReason", "aborted"), make=_assistant), reply=True),
    Probe("header version 3", _CLEAN, _on_row(0, "session", _set("version", 3))),
    Probe("header version 2", _CLEAN, _on_row(0, "session", _set("version", 2))),
    Probe("header id a number", _CLEAN, _on_row(0, "session", _set("id", 5))),
    Probe("header null", _CLEAN, lambda con: write_row(con, 0, _plain(b"null"))),
]  # fmt: skip


def marker(i: int) -> str:
    return f"PROBE-{i:03d}"


def after(i: int) -> str:
    return f"AFTER-{i:03d}"


def before(i: int) -> str:
    return f"BEFORE-{i:03d}"


def write_probe(base: Path, out: Path, i: int, p: Probe) -> Path:
    """A copy of the base with probe P's rows (D at the next seq, C after it)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    shutil.copyfile(base, out)  # (the corpus is one file: journal_mode DELETE)
    con = sqlite3.connect(out)
    try:
        provide_octet_length(con)
        # A damaged row need not pass the table's CHECKs (OpenClaw checks them on its writes only).
        con.execute("PRAGMA ignore_check_constraints=1")
        assert read_row(con, LEAF_SEQ)["id"] == LEAF, "the base's leaf moved"
        if p.base is not None:
            p.base(con)
        seq = LEAF_SEQ + 1
        if p.reply:
            write_row(con, seq, _plain(json.dumps(_user(before(i), "p")).encode()))
            seq += 1
        d = p.d(marker(i))
        if p.reply and not isinstance(d, Row):
            d = d.replace(f'"parentId": "{LEAF}"'.encode(), f'"parentId": "pp{marker(i)[-3:]}"'.encode(), 1)
        write_row(con, seq, d if isinstance(d, Row) else _plain(d))
        parent = f"pd{marker(i)[-3:]}"
        if p.answered:
            seq += 1
            result = _tool_result(f"RESULT-{i:03d}")
            result.update(id=f"pr{marker(i)[-3:]}", parentId=parent)
            result["message"].update(toolCallId=_FAILED_CALL["id"], toolName=_FAILED_CALL["name"])
            write_row(con, seq, _plain(json.dumps(result).encode()))
            parent = result["id"]
        if not p.last:
            c = _user(after(i), "c") if p.reply else _assistant(after(i), "c")
            c["parentId"] = LEAF if p.aside else parent
            write_row(con, seq + 1, _plain(json.dumps(c).encode()))
        con.commit()
    finally:
        con.close()
    return out


# ---------------------------------------------------------------------------------------- verdicts


@dataclass(frozen=True)
class Verdict:
    d: bool  # D's marker was sent
    c: bool  # C's was
    history: bool  # the base's history was (its last summary)
    n: int  # messages sent (the system prompt, the probe's prompt and the context carrier left out)
    failed_marker: bool = False  # OpenClaw's failed-turn marker was (FAILED_TURN_TEXT)

    def __str__(self) -> str:
        flags = "".join(ch if v else "-" for ch, v in zip("DCH", (self.d, self.c, self.history), strict=True))
        return f"{flags} {self.n}" + (" +marker" if self.failed_marker else "")


REFUSED = "refused"
# What OpenClaw sends in place of a failed answer it replays (`FAILED_ASSISTANT_REPLAY_TEXT`,
# @openclaw/ai dist/host-yTvBrYM2.mjs:422), written out here as the oracle's own words.
FAILED_TURN_TEXT = "[This turn failed before it completed. Do not redo its work without confirming with the user first.]"


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return []


_CARRIER = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"


def verdict_of_request(messages: list[dict[str, Any]], i: int) -> Verdict:
    """The verdict of OpenClaw's first agent request. The probe's prompt is its own message, which
    OpenClaw's orphan repair merges a trailing stored user message into
    (`mergeOrphanedTrailingUserPrompt`, builtin-openclaw-q1hiFm14.mjs:6982-6999): searched for the
    markers, not counted."""
    prompt = PROMPT.format(i=i)
    kept, seen = [], []
    for m in messages:
        texts = _texts(m.get("content"))
        if m.get("role") == "system" or (m.get("role") == "user" and any(t.startswith(_CARRIER) for t in texts)):
            continue
        seen.append("\n".join(texts))
        if not (m.get("role") == "user" and any(prompt in t for t in texts)):
            kept.append(seen[-1])
    text = "\n".join(seen)
    return Verdict(marker(i) in text, after(i) in text, HISTORY_MARK in text, len(kept), FAILED_TURN_TEXT in text)


def sent_count(report: Any) -> int:
    """How many messages inspector predicts OpenClaw sends ahead of the new prompt's: its next
    request's items, as OpenClaw sends them (adjacent answers and user messages merged, a
    "(session bootstrap)" message first: `openclaw_turns`), but for a trailing user message, which
    goes into the prompt's own message (`ContextItem.text`: the queued-message line, then its text)."""
    ctx = report.context
    return len(ctx) - (1 if ctx and moved_into_prompt(ctx[-1]) else 0)


def moved_into_prompt(it: Any) -> bool:
    """An item of a trailing user message OpenClaw moves into the new prompt on resume
    (`openclaw_turns.shape`: a message of the file, its text changed on resume)."""
    return bool(it.on_resume and not it.synthetic and it.seq is not None)


# The lines of OpenClaw's stderr that say why it stopped (it logs much else): the failed index
# rebuild, then the CLI's reason.
_WHY = re.compile(r"reconcile failed|\[openclaw\] Reason: |rawError=")


def openclaw_verdict(store: Path, i: int, scratch: Path) -> tuple[Verdict | str, str]:
    """What OpenClaw did with probe I's store: its verdict and, when it sent nothing, why."""
    rc, reqs = resume(store, SESSION, PROMPT.format(i=i), scratch)
    agent = [r for r in reqs if r["kind"] == "agent"]
    if rc == 0 and agent:
        return verdict_of_request(agent[0]["body"]["messages"], i), ""
    log = (scratch / "openclaw.stderr.log").read_text(encoding="utf-8", errors="replace").splitlines()
    why = [x.strip().removeprefix("[openclaw] ") for x in log if _WHY.search(x) and "reclamation Worker" not in x]
    why = [x[x.index("rawError=") :] if "rawError=" in x else x for x in why]
    return REFUSED, f"exit {rc}, {len(agent)} agent request(s): " + ("; ".join(why[:1] + why[-1:])[:400] if why else "(nothing on stderr)")


def predicted(f: Path, i: int) -> Verdict | str:
    """inspector's prediction: its next request's items, or `refused` when it says OpenClaw sends
    nothing (it cannot open the session, build its request, or walk its path: a cycle)."""
    from inspector.analysis import analyze
    from inspector.formats import LoadError, load

    try:
        report = analyze(load(str(f)))
    except LoadError:
        return REFUSED
    if any(x.code in ("resume_refused", "request_fails", "broken_tree") for x in report.findings):
        return REFUSED
    text = "\n".join(_text(report, it) for it in report.context)
    return Verdict(marker(i) in text, after(i) in text, HISTORY_MARK in text, sent_count(report), FAILED_TURN_TEXT in text)


def _text(report: Any, it: Any) -> str:
    if it.kind == "summary" or it.seq is None or it.text:  # (its own text: what is sent)
        return str(it.text)
    msgs = [report.ledger.records[s].message for s in (it.seq, *it.joined)]  # (the records it sends as one)
    return "\n".join(str(m.text()) for m in msgs if m is not None)


# ---------------------------------------------------------------------------------------- running


RECORD = HERE / "recorded_verdicts.json"
COMMAND = "python -m tests.peers.openclaw.type_probe --record"
# What the real OpenClaw was given beside a probe's store: its pinned install (install.sh), its
# config, home and command (generate.py) and the scripted model (fake_model.py). (resume.py only
# runs it: copies the store where generate.py says and reads the model's log.)
HARNESS = tuple(HERE / f for f in ("install.sh", "generate.py", "fake_model.py"))


def probe_key(store: Path, session: str, prompt: str) -> str:
    """The key under which OpenClaw's verdict on a probe is recorded (tests/peers/recorded.py)."""
    return recorded.key_of(recorded.sources_key(HARNESS), session, prompt, recorded.store_rows_key(store))


def run(
    out: Path, only: Sequence[str] | None = None, workers: int = 2, live: Sequence[str] | None = None, record: bool = False
) -> list[tuple[Probe, Verdict | str, Verdict | str, str]]:
    """Every probe (or those named in ONLY): (probe, what OpenClaw did, inspector's prediction,
    OpenClaw's reason when it sent nothing). LIVE: None resumes every probe with OpenClaw, WORKERS
    at a time (the first alone: a fresh install settles its package lifecycle on first use); else
    only the probes named in LIVE, each other probe's verdict taken from `RECORD` (StaleRecord when
    it is not recorded for this very probe), and each live verdict must be the recorded one where
    there is one. RECORD: keep every verdict OpenClaw gave in `RECORD`."""
    picked = [(i, p) for i, p in enumerate(PROBES) if only is None or p.name in only]
    if only is not None:
        missing = set(only) - {p.name for _, p in picked}
        assert not missing, f"no such probes: {sorted(missing)}"
    files = {i: write_probe(BASE, out / "probes" / f"probe{i:03d}.sqlite", i, p) for i, p in picked}
    keys = {i: probe_key(files[i], SESSION, PROMPT.format(i=i)) for i, _ in picked}
    book = recorded.Record(RECORD, "type_probe")
    results: dict[int, tuple[Verdict | str, str]] = {}
    if live is not None:
        wanted = {p.name: keys[i] for i, p in picked if p.name not in live}
        got = recorded.recorded_verdicts(book, wanted, COMMAND)
        results = {i: _from_json(got[p.name]) for i, p in picked if p.name in got}
    todo = [it for it in picked if it[0] not in results]

    def one(item: tuple[int, Probe]) -> tuple[Verdict | str, str]:
        i, _p = item
        # OpenClaw resumes a copy (it writes its turn into the store it resumes).
        return openclaw_verdict(files[i], i, out / "run" / f"probe{i:03d}")

    for it in todo[:1]:
        results[it[0]] = one(it)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for it, r in zip(todo[1:], pool.map(one, todo[1:]), strict=True):
            results[it[0]] = r
    lived = {p.name: (keys[i], _to_json(results[i][0]), results[i][1]) for i, p in todo}
    if live is not None or record:
        recorded.settle(book, lived, record, COMMAND)
    elif moved := recorded.moved_verdicts(book, lived):  # (the command reports it; the tests fail on it)
        print(f"not as recorded in {RECORD.name}: {moved}", file=sys.stderr)
    return [(p, results[i][0], predicted(files[i], i), results[i][1]) for i, p in picked]


def _to_json(v: Verdict | str) -> Any:
    return v.__dict__ if isinstance(v, Verdict) else v


def _from_json(x: tuple[Any, str]) -> tuple[Verdict | str, str]:
    v, why = x
    return (Verdict(**v) if isinstance(v, dict) else v), why


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="run only the probes of these names")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--record", action="store_true", help=f"keep OpenClaw's verdicts in {RECORD.name}, which the tests hold inspector to")
    a = ap.parse_args()
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        report(run(Path(tmp), a.only, a.workers, record=a.record), t0)
    return 0


def report(rows: Sequence[tuple[Any, Any, Any, str]], t0: float) -> None:
    """Each probe's verdicts side by side, OpenClaw's error where it gave one, and the time taken."""
    print_verdicts([(p, got, want) for p, got, want, _ in rows], who="openclaw")
    for p, _, _, why in rows:
        if why:
            print(f"   {p.name}: openclaw: {why}")
    print(f"({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    sys.exit(main())
