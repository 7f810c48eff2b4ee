"""OpenClaw's SQLite store (issue 13 part 2): our next request is the one OpenClaw 2026.9.6 sent.

The corpus (tests/peers/openclaw/corpus, made by generate.py: the real OpenClaw driven offline
against fake_model.py) holds the store OpenClaw wrote and every request it sent. For every agent
request we read the store as it stood then (`--at N`, N = the last row written before it) and
compare, message by message, our prediction with what OpenClaw sent, after taking out what
OpenClaw adds at send time and the store does not hold (each normalization cites its source in
the npm package `openclaw@2026.9.6`, docs/runtimes/openclaw.md).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import sqlite3
import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest
import zstandard

from inspector.analysis import analyze
from inspector.analysis.engine import EXCLUDED, HOLE, RETAINED, Report
from inspector.formats import LoadError, load
from inspector.formats.openclaw_sqlite import looks_like_file
from inspector.tui.triage import discover
from tests.peers.openclaw.type_probe import moved_into_prompt

CORPUS = Path(__file__).parent / "peers" / "openclaw" / "corpus"
STORE = CORPUS / "s1.sqlite"

# runtime-context-prompt-Jr1ZDwll.mjs:58-81 (prependRuntimeContextForModel): the runtime context
# goes to the model in a carrier user message at the tail, never into the store.
CARRIER = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"
# The pre-compaction memory flush (an agent turn before a threshold compaction) appends this
# prompt, which is not stored (docs/runtimes/openclaw.md §4.7; observed).
FLUSH = "Pre-compaction memory flush"
# builtin-openclaw-q1hiFm14.mjs:5840 (injectTimestamp): every user message is sent with its
# time as "[Www YYYY-MM-DD HH:MM UTC] " in front; we check it is the stored message's own time.
DATE_PREFIX = re.compile(r"^\[(\w{3} \d{4}-\d\d-\d\d \d\d:\d\d) UTC\] ")
# system-prompt-params-DdCWVctq.mjs:1030-1037 (buildRuntimeLine behind the system prompt's
# relocatable boundary): the "Runtime: agent=… | session=…" line is moved into the first
# user-role message of the window, as its own part or after "\n\n".
RUNTIME_LINE = re.compile(r"(?:\n\n)?Runtime: agent=[^\n]*$")


def _corpus() -> dict[str, Any]:
    return json.loads((CORPUS / "s1.requests.json").read_text())


def _text(part: Any, texts: dict[str, str]) -> str:
    return texts[part["ref"]] if isinstance(part, dict) else part


def _sent(req: dict[str, Any], texts: dict[str, str]) -> list[dict[str, Any]]:
    """What OpenClaw sent, without its send-time additions: role, text, tool-call ids and args."""
    msgs = list(req["messages"])
    out: list[dict[str, Any]] = []
    for m in msgs:
        c = m.get("content")
        parts = [_text(c, texts)] if isinstance(c, str | dict) else [_text(p["text"], texts) for p in c or [] if "text" in p]
        if m["role"] == "user" and parts and parts[0].startswith(CARRIER):
            continue
        if m["role"] == "user" and parts and parts[0].startswith(FLUSH) and req["kind"] == "memory_flush":
            continue
        item: dict[str, Any] = {"role": m["role"], "parts": parts}
        if m["role"] == "assistant":
            item["calls"] = [(tc["id"], tc["function"]["name"], json.loads(tc["function"]["arguments"])) for tc in m.get("tool_calls") or []]
        if m["role"] == "tool":
            item["call_id"] = m["tool_call_id"]
        out.append(item)
    first_user = next((i for i in out if i["role"] == "user"), None)
    if first_user is not None:
        last = first_user["parts"][-1]
        if last.startswith("Runtime: agent=") and len(first_user["parts"]) > 1:
            first_user["parts"] = first_user["parts"][:-1]
        else:
            first_user["parts"][-1] = RUNTIME_LINE.sub("", last)
    return out


def _predicted(report: Report, running: bool = False) -> list[dict[str, Any]]:
    """The messages inspector predicts, as OpenClaw's openai-completions transport writes them: a
    user message's text blocks as its parts (those of every record it sends as one, `joined`: OpenClaw
    merges adjacent user messages, their blocks one after the other, and dates the whole by the last
    one's time); an answer's non-blank texts joined by new lines (`convertMessages`,
    @openclaw/ai dist/openai-completions-stream-BpuJ0ZOA.mjs:527-580), its calls. `running`: a
    request of the turn in progress, whose prompt the trailing user message is: sent as written,
    not as OpenClaw moves it into the next prompt on resume (`on_resume`)."""
    out: list[dict[str, Any]] = []
    records = report.ledger.records
    for it in report.context:
        if running and it.on_resume and it.seq is not None:
            it = msgspec.structs.replace(it, text="", on_resume=False)
        if it.kind == "summary":
            out.append({"role": "user", "parts": [it.text], "date": None})
            continue
        if it.seq is None:  # (an item OpenClaw adds: a synthetic result; its "(session bootstrap)", dated as it sends it)
            out.append({"role": it.role, "parts": [it.text], **({"call_id": it.tool_result_id} if it.role == "tool" else {"date": "*"})})
            continue
        seqs = [it.seq, *it.joined]
        msgs = [records[s].message for s in seqs]
        assert all(m is not None for m in msgs)
        texts = [b.text for m in msgs for b in m.blocks if b.type in ("text", "tool_result")]  # type: ignore[union-attr]
        if it.role == "user":  # (a user message's blank texts are not replayed: `sanitizeUserReplayContent`, builtin-openclaw-q1hiFm14.mjs:4482-4504)
            texts = [t for t in texts if t.strip()]
        item: dict[str, Any] = {"role": it.role, "parts": [it.text] if it.text else texts}
        if it.role == "user":  # (only a user message is dated: an extension's message is sent as written)
            raw = records[seqs[-1]].raw().get("message") if records[seqs[-1]].source_role == "user" else None
            item["date"] = dt.datetime.fromtimestamp(raw["timestamp"] / 1000, dt.UTC).strftime("%a %Y-%m-%d %H:%M") if raw else None
        if it.role == "assistant":
            item["calls"] = [] if it.text else [(b.call_id, b.name, b.args) for m in msgs for b in m.blocks if b.type == "tool_call"]  # type: ignore[union-attr]
            sent = "\n".join(t for t in texts if t.strip())
            item["parts"] = [it.text] if it.text else ([sent] if sent else [])
        if it.role == "tool":
            item["call_id"] = it.tool_result_id
        out.append(item)
    return out


def _strip_dates(sent: list[dict[str, Any]], predicted: list[dict[str, Any]]) -> None:
    """Take each user message's date prefix off, checking it is that message's stored time."""
    for s, p in zip(sent, predicted, strict=False):
        if s["role"] != "user" or not s["parts"]:
            continue
        hit = DATE_PREFIX.match(s["parts"][0])
        if p.get("date") is not None:
            assert hit is not None and p["date"] in ("*", hit.group(1)), (s["parts"][0][:40], p["date"])
            s["parts"][0] = s["parts"][0][hit.end() :]
        else:
            assert hit is None  # a compaction summary, an extension's message are sent without one
        p.pop("date", None)


def sent_as_predicted(req: dict[str, Any], report: Report, message: str) -> list[dict[str, Any]]:
    """Assert that OpenClaw's first agent request `req` (the prompt `message` last) holds exactly the
    messages `report` predicts; returns what it sent. A trailing user message OpenClaw moves into
    the prompt's own message (`openclaw_turns`) is that message's text ahead of the prompt."""
    sent = _sent(req, {})
    predicted = _predicted(report)
    prompt = sent[-1]
    assert prompt["role"] == "user" and len(prompt["parts"]) == 1 and prompt["parts"][0].endswith(message)
    hit = DATE_PREFIX.match(prompt["parts"][0])
    assert hit is not None
    ahead = prompt["parts"][0][hit.end() : -len(message)]
    if report.context and moved_into_prompt(report.context[-1]):
        assert ahead == report.context[-1].text + "\n\n", ahead
        predicted = predicted[:-1]
    else:
        assert ahead == ""
    _strip_dates(sent[:-1], predicted)
    assert sent[:-1] == predicted
    return sent


def _assistant_rows() -> list[tuple[int, str]]:
    con = sqlite3.connect(f"file:{STORE}?mode=ro", uri=True)
    try:
        out = []
        for (seq,) in con.execute("SELECT seq FROM transcript_events WHERE session_id='s1' ORDER BY seq"):
            out.append(seq)
    finally:
        con.close()
    led = load(str(STORE))
    by_line = {r.line: r for r in led.records}
    return [(s, by_line[s].message.text()) for s in out if s in by_line and by_line[s].role == "assistant"]  # type: ignore[union-attr]


def _reply_text(req: dict[str, Any]) -> str:
    """The text fake_model.py answered this agent request with (its script, generate.py)."""
    from tests.peers.openclaw.generate import SCRIPT

    steps = SCRIPT["turns"].get(req["turn"], [])
    spec = steps[req["step"]] if req["step"] < len(steps) else {}
    return spec.get("text", "" if spec.get("tools") else f"done with turn {req['turn']} step {req['step']}.")


def _points() -> list[tuple[dict[str, Any], int]]:
    """Each request OpenClaw's agent sent, with the last row written before it.

    An agent request's answer is the next assistant row (checked by its text); a memory flush is
    sent in the preflight of the next command, right before the compaction row it leads to."""
    corpus = _corpus()
    replies = _assistant_rows()
    led = load(str(STORE))
    compactions = [r.line for r in led.records if r.type == "compaction"]
    out: list[tuple[dict[str, Any], int]] = []
    agent = [r for r in corpus["requests"] if r["kind"] == "agent"]
    assert len(agent) == len(replies)
    for req, (seq, text) in zip(agent, replies, strict=True):
        assert text == _reply_text(req), (req["seq"], text)
        out.append((req, seq - 1))
    flushes = [r for r in corpus["requests"] if r["kind"] == "memory_flush"]
    assert len(flushes) == len(compactions)
    for req, cseq in zip(flushes, compactions, strict=True):
        out.append((req, cseq - 1))
    return sorted(out, key=lambda p: p[0]["seq"])


def test_the_corpus_has_tool_calls_three_threshold_compactions_and_zstd_rows() -> None:
    corpus = _corpus()
    kinds = [r["kind"] for r in corpus["requests"]]
    assert kinds.count("agent") == 11 and kinds.count("memory_flush") == 3 and kinds.count("summarizer") == 3
    led = load(str(STORE))
    assert led.format == "openclaw" and led.version == 4
    assert sum(1 for r in led.records if r.type == "compaction") == 3
    assert any(r.call_ids for r in led.records)
    con = sqlite3.connect(f"file:{STORE}?mode=ro", uri=True)
    try:
        assert con.execute("SELECT count(*) FROM transcript_events WHERE event_zstd IS NOT NULL").fetchone()[0] >= 3
    finally:
        con.close()


def test_every_request_openclaw_sent_is_our_prediction_at_that_point() -> None:
    texts = _corpus()["texts"]
    points = _points()
    assert len(points) == 14  # every agent and memory-flush request (the summarizer's are below)
    for req, n in points:
        report = analyze(load(str(STORE), upto_line=n))
        sent, predicted = _sent(req, texts), _predicted(report, running=True)
        _strip_dates(sent, predicted)
        assert sent == predicted, f"request {req['seq']} ({req['kind']} {req['turn']}/{req['step']}) at row {n}"


def test_summarizer_requests_see_only_what_the_following_compaction_takes_out() -> None:
    # The summarizer is sent a transcript (`<conversation>[User]: …`), not a next request: check
    # that every message it quotes is one the compaction after it removes (not one it retains).
    corpus = _corpus()
    led = load(str(STORE))
    report = analyze(led)
    views = report.checkpoints
    assert len(views) == 3
    summ = [r for r in corpus["requests"] if r["kind"] == "summarizer"]
    for req, view in zip(summ, views, strict=True):
        prompt = _text(req["messages"][0]["content"][0]["text"], corpus["texts"])
        quoted = prompt.split("<conversation>\n", 1)[1].split("\n</conversation>", 1)[0]
        removed = [led.records[s].message.text() for s in view.removes]  # type: ignore[union-attr]
        kept = [led.records[s].message.text() for s in view.retains]  # type: ignore[union-attr]
        first = quoted.split("\n\n", 1)[0].removeprefix("[User]: ")
        assert any(t.startswith(first[:200]) for t in removed), req["seq"]
        assert not any(t and t.startswith(first[:200]) for t in kept), req["seq"]


# ---------------------------------------------------------------------------------------- stores from the types


def _store(
    path: Path,
    sessions: dict[str, list[dict[str, Any] | bytes]],
    *,
    zstd: frozenset[tuple[str, int]] = frozenset(),
    nodes: list[tuple[str, str, float]] = (),  # type: ignore[assignment]
    windows: dict[str, tuple[str | None, str | None]] | None = None,
    leaf: dict[str, str] | None = None,
    wal: bool = False,
) -> Path:
    """A store with the tables the adapter reads, in OpenClaw's column layout
    (openclaw-agent-board-schema-vd3Vff_q.mjs:3; its octet_length CHECKs left out)."""
    con = sqlite3.connect(path)
    if wal:
        con.execute("PRAGMA journal_mode=WAL")
    con.executescript(
        """
        CREATE TABLE schema_meta(meta_key TEXT PRIMARY KEY, role TEXT, schema_version INT, agent_id TEXT, app_version TEXT);
        CREATE TABLE session_nodes(session_key TEXT PRIMARY KEY, current_session_id TEXT, entry_json TEXT, updated_at INT);
        CREATE TABLE session_windows(session_id TEXT PRIMARY KEY, session_key TEXT, previous_session_id TEXT, reason TEXT);
        CREATE TABLE transcript_events(session_id TEXT, seq INT, event_json TEXT, created_at INT, event_zstd BLOB,
            event_utf8_bytes INT, navigation_json TEXT, PRIMARY KEY(session_id, seq));
        CREATE TABLE session_transcript_index_state(session_id TEXT PRIMARY KEY, indexed_seq INT, leaf_event_id TEXT);
        INSERT INTO schema_meta VALUES('primary', 'agent', 23, 'main', '2026.9.6');
        """
    )
    for sid, entries in sessions.items():
        for seq, e in enumerate(entries):
            raw = e if isinstance(e, bytes) else json.dumps(e).encode()
            if (sid, seq) in zstd:
                blob = zstandard.ZstdCompressor().compress(raw)
                con.execute("INSERT INTO transcript_events VALUES(?,?,NULL,0,?,?,'{}')", (sid, seq, blob, len(raw)))
            else:
                con.execute("INSERT INTO transcript_events VALUES(?,?,?,0,NULL,NULL,NULL)", (sid, seq, raw.decode("utf-8", "replace")))
        prev, reason = (windows or {}).get(sid, (None, None))
        con.execute("INSERT INTO session_windows VALUES(?,?,?,?)", (sid, f"agent:main:explicit:{sid}", prev, reason))
    for key, sid, updated in nodes:
        con.execute("INSERT INTO session_nodes VALUES(?,?,?,?)", (key, sid, json.dumps({"sessionId": sid}), updated))
    for sid, leaf_id in (leaf or {}).items():
        # A current index (OpenClaw's own, as it stands after its append): indexed up to the last row.
        con.execute("INSERT INTO session_transcript_index_state VALUES(?,?,?)", (sid, len(sessions[sid]) - 1, leaf_id))
    con.commit()
    con.close()
    return path


def _header(sid: str) -> dict[str, Any]:
    return {"type": "session", "version": 4, "id": sid, "timestamp": "2026-09-10T08:00:00.000Z", "cwd": "/w"}


def _msg(i: str, parent: str | None, role: str, content: Any, **extra: Any) -> dict[str, Any]:
    m = {"role": role, "content": content, "timestamp": 1789027201000, **extra}
    return {"type": "message", "id": i, "parentId": parent, "timestamp": "2026-09-10T08:00:01.000Z", "message": m}


def _chat(sid: str, n: int = 2) -> list[dict[str, Any] | bytes]:
    out: list[dict[str, Any] | bytes] = [_header(sid)]
    parent = None
    for k in range(n):
        out.append(_msg(f"{sid}u{k}", parent, "user", f"question {k} in {sid}"))
        out.append(_msg(f"{sid}a{k}", f"{sid}u{k}", "assistant", [{"type": "text", "text": f"answer {k}"}], stopReason="stop"))
        parent = f"{sid}a{k}"
    return out


def _context_texts(report: Report) -> list[str]:
    out = []
    for it in report.context:
        if it.kind == "summary":
            out.append("SUMMARY")
        else:
            m = report.ledger.records[it.seq].message  # type: ignore[index]
            out.append(m.text() if m is not None else "")
    return out


def test_detected_by_its_tables_not_taken_for_adk(tmp_path: Path) -> None:
    p = _store(tmp_path / "openclaw-agent.sqlite", {"s1": _chat("s1")})
    assert looks_like_file(str(p))
    assert load(str(p)).format == "openclaw"
    adk = sqlite3.connect(tmp_path / "session.db")
    adk.executescript("CREATE TABLE sessions(app_name, user_id, id, update_time); CREATE TABLE events(id);")
    adk.close()
    assert not looks_like_file(str(tmp_path / "session.db"))
    with pytest.raises(LoadError, match="not an OpenClaw agent store"):
        load(str(tmp_path / "session.db"), fmt="openclaw")
    (tmp_path / "x.sqlite").write_bytes(b"x")
    with pytest.raises(LoadError, match="no SQLite header"):
        load(str(tmp_path / "x.sqlite"), fmt="openclaw")


def test_defaults_to_the_current_session_and_selects_by_fragment(tmp_path: Path) -> None:
    p = _store(
        tmp_path / "a.sqlite",
        {"old": _chat("old"), "cur": _chat("cur"), "zzz": _chat("zzz")},
        nodes=[("agent:main:main", "cur", 20), ("agent:main:explicit:old", "old", 10)],
    )
    led = load(str(p))
    assert led.session_id == "cur"
    choice = next(d for d in led.diagnostics if d.problem == "session_choice")
    assert "current session of 'agent:main:main'" in choice.message and "old" in choice.message
    assert load(f"{p}#old").session_id == "old"
    with pytest.raises(LoadError, match="no session 'nope'"):
        load(f"{p}#nope")


def test_leaf_comes_from_the_index_state(tmp_path: Path) -> None:
    entries = _chat("s1", 2)
    # A branch: the second question was re-asked off the first answer; the index names the leaf.
    entries.append(_msg("s1b", "s1a0", "user", "question 1 again"))
    p = _store(tmp_path / "a.sqlite", {"s1": entries}, leaf={"s1": "s1a1"})
    assert _context_texts(analyze(load(str(p)))) == ["question 0 in s1", "answer 0", "question 1 in s1", "answer 1"]
    p2 = _store(tmp_path / "b.sqlite", {"s1": entries})  # no index state: the last row
    assert _context_texts(analyze(load(str(p2)))) == ["question 0 in s1", "answer 0", "question 1 again"]
    # An index behind the transcript (a row appended without it, as a repair does) is rebuilt by
    # OpenClaw before use, from the tree: its stale leaf is not the leaf.
    con = sqlite3.connect(p)
    con.execute("UPDATE session_transcript_index_state SET indexed_seq=indexed_seq-1")
    con.commit()
    con.close()
    assert _context_texts(analyze(load(str(p)))) == ["question 0 in s1", "answer 0", "question 1 again"]


def test_exclude_from_context_custom_messages_are_shown_but_never_sent(tmp_path: Path) -> None:
    entries = _chat("s1", 1)
    nested = _msg("x1", "s1a0", "custom", "", customType="openclaw.nested-tool.v1", display=True, excludeFromContext=True, details={})
    carrier = _msg("x2", "x1", "custom", "runtime facts", customType="openclaw.runtime-context", display=False)
    entries += [nested, carrier, _msg("u2", "x2", "user", "next")]
    led = load(str(_store(tmp_path / "a.sqlite", {"s1": entries})))
    report = analyze(led)
    # The runtime-context message is never sent either, right before a trailing user message too
    # (`openclaw_model.runtime_context`; the real OpenClaw on this shape: tests/test_openclaw_runtime_context.py).
    assert _context_texts(report) == ["question 0 in s1", "answer 0", "next"]
    for eid in ("x1", "x2"):
        x = next(r for r in led.records if r.id == eid)
        assert report.states[x.seq] == EXCLUDED, eid


def test_zstd_rows_read_and_bad_rows_named_by_seq(tmp_path: Path) -> None:
    entries = _chat("s1", 2)
    entries[3] = _msg("s1u1", "s1a0", "user", "big " * 2000)
    entries.insert(5, b"{not json")
    # keep the chain: the broken row sits between s1u1 and s1a1 and is skipped
    p = _store(tmp_path / "a.sqlite", {"s1": entries}, zstd=frozenset({("s1", 3)}))
    led = load(str(p))
    assert next(r for r in led.records if r.id == "s1u1").message.text().startswith("big big")  # type: ignore[union-attr]
    bad = [d for d in led.diagnostics if d.problem == "malformed_row"]
    assert len(bad) == 1 and bad[0].line == 5 and "row 5 of transcript_events" in bad[0].message
    con = sqlite3.connect(p)
    con.execute("UPDATE transcript_events SET event_utf8_bytes=10 WHERE seq=3")
    con.commit()
    con.close()
    led = load(str(p))
    assert any(d.line == 3 and "event_zstd" in d.message for d in led.diagnostics)
    assert led.records  # the rest loads
    # A seq that is no row position (found by the fuzzer: -1) names no line: the row is skipped and
    # said so, never a record or a diagnostic on "line -1".
    con = sqlite3.connect(p)
    con.execute("UPDATE transcript_events SET seq=-1 WHERE seq=0")
    con.commit()
    con.close()
    led = load(str(p))
    assert all(r.line >= 0 for r in led.records) and all(d.line >= 0 for d in led.diagnostics)
    assert any("seq -1 is not a row position" in d.message for d in led.diagnostics)


def test_reset_keeps_only_messages_and_paired_results_from_first_kept(tmp_path: Path) -> None:
    call = [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}}]
    entries: list[dict[str, Any] | bytes] = [
        _header("s1"),
        _msg("u0", None, "user", "old question"),
        _msg("a0", "u0", "assistant", [{"type": "text", "text": "old answer"}], stopReason="stop"),
        _msg("u1", "a0", "user", "kept question"),
        {"type": "custom_message", "id": "cm", "parentId": "u1", "timestamp": "2026-09-10T08:00:02.000Z", "customType": "x", "content": "a custom message", "display": True},
        _msg("a1", "cm", "assistant", call, stopReason="toolUse"),
        _msg("t1", "a1", "toolResult", [{"type": "text", "text": "file a"}], toolCallId="c1", toolName="read", isError=False),
        _msg("t9", "t1", "toolResult", [{"type": "text", "text": "stray"}], toolCallId="nope", toolName="read", isError=False),
        {"type": "reset", "id": "r1", "parentId": "t9", "timestamp": "2026-09-10T08:00:03.000Z", "reason": "reset", "firstKeptEntryId": "u1"},
        _msg("u2", "r1", "user", "after the reset"),
    ]
    led = load(str(_store(tmp_path / "a.sqlite", {"s1": entries})))
    report = analyze(led)
    assert _context_texts(report) == ["kept question", "", "file a", "after the reset"]
    seq = {r.id: r.seq for r in led.records}
    assert report.states[seq["u0"]] == HOLE and report.states[seq["a0"]] == HOLE
    assert report.states[seq["cm"]] == HOLE and report.states[seq["t9"]] == HOLE
    assert report.states[seq["u1"]] == RETAINED and report.states[seq["t1"]] == RETAINED
    assert report.checkpoints[0].checkpoint.trigger == "reset"


def test_compacted_successor_and_legacy_checkpoints_are_shown(tmp_path: Path) -> None:
    agent = tmp_path / "agents" / "main"
    (agent / "agent").mkdir(parents=True)
    (agent / "sessions").mkdir()
    legacy = {"agent:main:main": {"sessionId": "s2", "compactionCheckpoints": [
        {"sessionId": "s2", "preCompaction": {"sessionId": "s1", "sessionFile": "s1.checkpoint.9f.jsonl"},
         "postCompaction": {"sessionId": "s2", "sessionFile": "s2.jsonl", "entryId": "e1"}, "tokensBefore": 24000, "tokensAfter": 8000}]}}
    (agent / "sessions" / "sessions.json").write_text(json.dumps(legacy))
    p = _store(agent / "agent" / "openclaw-agent.sqlite", {"s1": _chat("s1"), "s2": _chat("s2")},
               nodes=[("agent:main:main", "s2", 5)], windows={"s2": ("s1", "compaction")})
    led = load(str(p))
    msgs = {d.problem: d.message for d in led.diagnostics}
    assert "continues session 's1'" in msgs["previous_session"] and "compacted" in msgs["previous_session"]
    assert "24000 -> 8000" in msgs["compaction_checkpoint"] and "s1.checkpoint.9f.jsonl" in msgs["compaction_checkpoint"]


def test_reads_committed_rows_still_in_the_wal_and_writes_nothing(tmp_path: Path) -> None:
    p = tmp_path / "a.sqlite"
    _store(p, {"s1": _chat("s1", 1)}, wal=True)
    writer = sqlite3.connect(p)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("INSERT INTO transcript_events VALUES('s1', 3, ?, 0, NULL, NULL, NULL)", (json.dumps(_msg("u9", "s1a0", "user", "in the wal")),))
    writer.commit()  # committed, not checkpointed: only the -wal holds it
    before = {f.name: f.read_bytes() for f in tmp_path.iterdir() if not f.name.endswith("-shm")}
    led = load(str(p))
    assert next(r for r in led.records if r.id == "u9").message.text() == "in the wal"  # type: ignore[union-attr]
    after = {f.name: f.read_bytes() for f in tmp_path.iterdir() if f.name in before}
    writer.close()  # (the last connection to close checkpoints: compare before that)
    assert after == before and "a.sqlite-wal" in before


def test_triage_lists_the_store_and_skips_openclaw_artifacts(tmp_path: Path) -> None:
    sessions = tmp_path / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    line = json.dumps(_header("s1")) + "\n"
    for name in ("s1.jsonl", "s1.checkpoint.0a1b2c3d-0000-4000-8000-000000000000.jsonl", "s1.trajectory.jsonl"):
        (sessions / name).write_text(line)
    store = tmp_path / "agents" / "main" / "agent"
    store.mkdir()
    _store(store / "openclaw-agent.sqlite", {"s1": _chat("s1")})
    shutil.copy(store / "openclaw-agent.sqlite", store / "openclaw-agent.sqlite.reindex-lock.sqlite")
    _, files, _ = discover([str(tmp_path)])
    assert sorted(os.path.relpath(f, tmp_path) for f in files) == [
        "agents/main/agent/openclaw-agent.sqlite",
        "agents/main/sessions/s1.jsonl",
    ]


@pytest.mark.parametrize("legacy", ["pipe", "deep", "not json"])
def test_a_legacy_sessions_json_that_cannot_be_read_gives_no_checkpoints(legacy: str, tmp_path: Path) -> None:
    """The legacy `sessions/sessions.json` beside an agent's store is read for its compaction
    checkpoints only: a named pipe there (never waited on), JSON nested deeper than Python reads, or
    no JSON at all gives none, and the store loads as without it."""
    agent = tmp_path / "agents" / "main"
    (agent / "agent").mkdir(parents=True)
    (agent / "sessions").mkdir()
    side = agent / "sessions" / "sessions.json"
    if legacy == "pipe":
        os.mkfifo(side)
    else:
        side.write_text("[" * 100_000 + "]" * 100_000 if legacy == "deep" else "{nope")
    p = _store(agent / "agent" / "openclaw-agent.sqlite", {"s1": _chat("s1")})
    got: list[Any] = []
    t = threading.Thread(target=lambda: got.append(load(str(p))), daemon=True)
    t.start()
    t.join(30)
    assert not t.is_alive(), "the load blocked on sessions.json"
    (led,) = got
    assert not [d for d in led.diagnostics if d.problem == "compaction_checkpoint"] and led.records
