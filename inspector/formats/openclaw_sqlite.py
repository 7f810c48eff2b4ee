"""OpenClaw's SQLite session store (OpenClaw 2026.8 and later; read as written by 2026.9.6).

`~/.openclaw/agents/<agent>/agent/openclaw-agent.sqlite` (docs/runtimes/openclaw.md §1-2, which cites
the npm package `openclaw@2026.9.6`: `dist/openclaw-agent-board-schema-vd3Vff_q.mjs:3` holds the DDL).
One database holds every session of one agent:

- `transcript_events(session_id, seq, event_json, event_zstd, event_utf8_bytes, …)`: one entry per
  row, in `seq` order. `event_json` is exactly a pi JSONL line; since 2026.9.6 a big row is one zstd
  frame of the same UTF-8 JSON in `event_zstd` instead, `event_utf8_bytes` long. Rows become lines
  for pi's builder (`inspector.formats.pi.build`): a record's `line` is its row's `seq`, so
  `--at N` reads the session as it stood when row N was the last written, and diagnostics name rows.
- `session_nodes(session_key, current_session_id, entry_json, updated_at)`: the current session of
  each conversation key; without `FILE.sqlite#SESSION` the current session of the most recently
  updated key is read. `entry_json.compactionCheckpoints[]` (legacy, as in `sessions.json`) are
  shown with the session, and so are a legacy `../sessions/sessions.json`'s.
- `session_windows(session_id, previous_session_id, reason)`: `reason='compaction'` marks a
  successor session a context engine made by compaction (the built-in compactor keeps one session).
- `session_transcript_index_state(session_id, leaf_event_id)`: the current leaf.

Entries differ from pi's in three ways, all applied as OpenClaw's context builder does
(`dist/session-D9cHHQGH.mjs`, region packages/agent-core/src/harness/session/session.ts):

- the header is `{"type":"session","version":4,…}`;
- a `reset` entry is a window boundary like a compaction, without a summary
  (`resolveSessionContextWindow`, :130-137): it keeps, of the entries from its `firstKeptEntryId`
  on, only user and assistant messages and tool results paired with a call
  (`selectResetKeptEntries`, dist/tool-result-pairing-Bky0eubt.mjs:264-268); everything else before
  it is gone unsummarized. It is read as a checkpoint with an empty summary that states its
  boundary and what it retains (`Checkpoint.explicit_*`), trigger `reset`;
- a `message` entry whose message has `excludeFromContext: true` (any role: `openclaw.nested-tool.v1`
  custom messages always do) is never sent (`projectSessionEntryMessage`, :141; `convertToLlm`,
  :74-98). Not modelled: a reset keeps such user/assistant messages anyway (:162); we drop them.

The database is opened read-only (`mode=ro`: committed rows still in the -wal are read; nothing is
written). When even that fails (a read-only folder without the -shm), it is read `immutable=1`
and a diagnostic says the -wal was not read.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
import zstandard

from inspector.formats import (
    appended,
    bounded,
    fields,
    heads,
    openclaw_heads,
    openclaw_heartbeat,
    openclaw_model,
    openclaw_turns,
    openclaw_writer,
    pi,
    sqlite_files,
)
from inspector.formats.base import (
    FAILS_ON_OPEN,
    FAILS_ON_SEND,
    Format,
    Home,
    HomeOverride,
    Runtime,
    SentShape,
    StoreGrowth,
    Writer,
)
from inspector.formats.jsonl import LoadError, RawLine, line_object, open_regular
from inspector.formats.whole_lines import collector_paused
from inspector.ledger.model import (
    Checkpoint,
    Diagnostic,
    Ledger,
    Record,
    record_from_fields,
)
from inspector.ledger.quoting import escape, quote

NAME = "openclaw"

# transcript_events' CHECK caps a compressed row at 4 MiB of UTF-8.
MAX_ROW_BYTES = 4 << 20
_TABLES = frozenset({"transcript_events", "session_windows", "session_nodes"})


# ---------------------------------------------------------------------------------------- detection


def _tables(con: sqlite3.Connection) -> set[str]:
    return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def looks_like_file(path: str) -> bool:
    """Is this an OpenClaw agent store (SQLite with `transcript_events`, `session_windows` and
    `session_nodes`; ADK's stores have `sessions`/`events` instead)? Reads the head and the table
    names only; never raises."""
    return bool(sqlite_files.schema_look(path, lambda con: _tables(con) >= _TABLES, bool))


# ---------------------------------------------------------------------------------------- reading


def load(path: str, session_id: str | None, upto: int | None, *, index: bool = True, digest: bool = True) -> Ledger:
    """The session's ledger; `index=False` parses every row whole (the reference the index-first
    load is held to in the tests); `digest=False`, for a command that writes nothing, leaves the
    rows' digest (`Ledger.store_state`, which only a write-back compares) untaken."""
    try:
        if not sqlite_files.has_magic(path):
            raise LoadError(f"{path}: not a SQLite database (no SQLite header), so not an OpenClaw agent store")
    except OSError as e:
        raise LoadError(f"{path}: cannot open ({e.strerror})") from None
    notes: list[Diagnostic] = []
    with sqlite_files.read_only(path, path, notes) as con:
        led = _load(con, path, session_id, upto, index, digest)
    led.diagnostics[:0] = notes
    return led


def _agent_schema(con: sqlite3.Connection) -> tuple[int, str | None] | None:
    """(schema version, app version) of an OpenClaw agent database, whatever its tables: its
    `schema_meta` row 'primary' of role 'agent' (OPENCLAW_AGENT_SCHEMA_SQL,
    dist/openclaw-agent-board-schema-vd3Vff_q.mjs:3), or None."""
    if "schema_meta" not in _tables(con):
        return None
    try:
        row = con.execute("SELECT schema_version, app_version FROM schema_meta WHERE meta_key='primary' AND role='agent'").fetchone()
    except sqlite3.Error:
        return None
    return (row[0], row[1]) if row is not None else None


def _transcriptless_agent_database(path: str) -> bool:
    """An OpenClaw agent database without transcript tables (an OpenClaw before its SQLite
    transcripts, schema 1, kept them as JSONL files): claimed, to be refused as what it is."""
    return sqlite_files.schema_look(path, _agent_schema, lambda v: v is not None) is not None


def _load(con: sqlite3.Connection, name: str, session_id: str | None, upto: int | None, index: bool, wanted: bool) -> Ledger:
    tables = _tables(con)
    if not tables >= _TABLES and (agent := _agent_schema(con)) is not None:
        version = f"schema {agent[0]}" + (f", OpenClaw {agent[1]}" if agent[1] else "")
        raise LoadError(
            f"{name}: an OpenClaw agent database ({version}) without transcripts: that OpenClaw kept each "
            "session as a JSONL file (agents/<agent>/sessions/<session id>.jsonl, listed in sessions.json "
            "beside it); read those"
        )
    if not tables >= _TABLES:
        missing = ", ".join(sorted(_TABLES - tables))
        raise LoadError(f"{name}: a SQLite database, but not an OpenClaw agent store (no {missing} table)")
    diags: list[Diagnostic] = []
    sid, node_entry = _choose_session(con, name, session_id, diags)
    rows = con.execute(_ROWS + (" AND seq<=?" if upto is not None else "") + " ORDER BY seq", (sid, upto) if upto is not None else (sid,))
    # The digest of every row (`openclaw_writer.state`) is taken on the same pass when every row is
    # read, unless the command only reads (no write-back compares it: `store_state` stays None).
    digest = hashlib.sha256() if upto is None and wanted else None
    source = _Rows(name, sid)
    led, read, seen = _build(rows, name, source, diags, digest, index=index)
    if not read:
        raise LoadError(f"{name}: session {quote(sid)} has no transcript rows" + (f" up to row {upto}" if upto is not None else ""))
    led.format = NAME
    led.session_id = sid
    led.diagnostics[:0] = diags
    scan = _openclaw_reading(con, led, sid, seen)
    current = upto is None and _set_leaf(con, led, sid, navigated=seen.leaf_rows)
    _refusals(led, seen, scan, current)
    _header_refusal(led)
    if source.heartbeat:
        _heartbeat_left_out(led, source)
    if digest is not None:
        led.store_state = f"{read}:{digest.hexdigest()}"
    elif wanted:
        led.store_state = openclaw_writer.state(con, led)
    _describe_windows(con, led, name, sid)
    _describe_checkpoints(led, name, node_entry)
    return led


def _choose_session(
    con: sqlite3.Connection, name: str, session_id: str | None, diags: list[Diagnostic]
) -> tuple[str, dict[str, Any] | None]:
    """The session named in the path, else the current session of the most recently updated key."""
    nodes = con.execute(
        "SELECT session_key, current_session_id, entry_json FROM session_nodes ORDER BY updated_at, session_key"
    ).fetchall()
    stored = [r[0] for r in con.execute("SELECT DISTINCT session_id FROM transcript_events ORDER BY session_id")]
    if not stored:
        raise LoadError(f"{name}: row 1: the store holds no session transcript")
    entries = {r[1]: r[2] for r in nodes}
    if session_id is not None:
        if session_id not in stored:
            raise LoadError(f"{name}: no session {session_id!r} in this store (sessions: {', '.join(escape(str(s), 80) for s in stored[:10])})")
        chosen, why = session_id, "named in the path"
    else:
        current = [r for r in nodes if r[1] in stored]
        if current:
            chosen, why = current[-1][1], f"the current session of {quote(current[-1][0])}"
        else:
            chosen, why = stored[-1], "no session_nodes row names a stored session: the last by id"
    others = [s for s in stored if s != chosen]
    if others or session_id is not None:
        listed = ", ".join(escape(str(s), 80) for s in others[:10]) + (" …" if len(others) > 10 else "")
        diags.append(
            Diagnostic(
                0,
                "session_choice",
                f"{name}: {len(stored)} session{'s' if len(stored) != 1 else ''} in this store; reading {quote(chosen)}, {why}"
                + (f"; others: {listed} (pick one with FILE#SESSION)" if others else ""),
                severity="info",
            )
        )
    entry: dict[str, Any] | None = None
    raw = entries.get(chosen)
    if isinstance(raw, str):
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            parsed = None
        entry = parsed if isinstance(parsed, dict) else None
    return chosen, entry


def _row_bytes(text: Any, blob: Any, size: Any, unzip: Any) -> tuple[bytes | None, str]:
    """A row's UTF-8 JSON, or None and what is wrong with it; `unzip` is a
    `zstandard.ZstdDecompressor`'s `decompress` (one per pass: making one costs as much as
    decompressing a row)."""
    if text is not None:
        return (text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)), ""
    if blob is None:
        return None, "neither event_json nor event_zstd is set"
    if not isinstance(size, int) or not 0 < size <= MAX_ROW_BYTES:
        return None, f"event_zstd without a usable event_utf8_bytes ({quote(size)})"
    try:
        out = unzip(bytes(blob), max_output_size=size)
    except zstandard.ZstdError as e:
        return None, f"event_zstd is not a zstd frame of at most {size} bytes ({e})"
    if len(out) != size:
        return None, f"event_zstd holds {len(out)} bytes, event_utf8_bytes says {size}"
    return out, ""


def _row_object(
    seq: Any, raw: bytes | None, problem: str, name: str, diags: list[Diagnostic], failed: list[str] | None = None
) -> tuple[dict[str, Any], bytes] | None:
    """A row's entry object and its UTF-8 JSON (invalid UTF-8 replaced), parsed whole (as
    JSON.parse reads it), from its bytes and what `_row_bytes` found wrong; None when it holds none.
    What is wrong with it is its diagnostic; `failed` gets "json" when JSON.parse would fail on it
    (OpenClaw's reading stops there: `openclaw_model.row_refusal`)."""
    if not (isinstance(seq, int) and not isinstance(seq, bool) and seq >= 0):
        # A record's line is its row's seq: a seq that is no row position names no line.
        problem, raw = f"its seq {quote(seq)} is not a row position (a whole number from 0)", None
    obj: Any = None
    notes: list[str] = []
    if raw is not None:
        raw, bad_at = heads.utf8_replaced(original := raw)
        if bad_at >= 0:
            notes.append(f"invalid UTF-8 at byte {bad_at} (byte {original[bad_at]:#04x}), read with U+FFFD")
        try:
            obj, cuts = _js_loads(raw)
        except ValueError as e:
            problem = f"not valid JSON ({escape(str(e))})"
            if failed is not None:
                failed.append("json")
        except RecursionError:
            problem = "JSON nested too deep to read"
        else:
            if cuts:
                notes.append(bounded.describe(cuts, "row"))
            if not isinstance(obj, dict):
                problem = f"a JSON {type(obj).__name__}, not an entry object"
    if problem:
        place = _row_place(name, seq)
        diags.append(Diagnostic(_line(seq), "malformed_row", f"{place}: {'; '.join([*notes, problem])}; entry skipped"))
        return None
    assert raw is not None
    if notes:
        diags.append(
            Diagnostic(_line(seq), "malformed_row", f"{_row_place(name, seq)}: {'; '.join(notes)}", recovered="the rest of the entry")
        )
    return obj, raw


def _js_loads(raw: bytes) -> tuple[Any, list[bounded.Cut]]:
    """`bounded.loads`, with what orjson refuses and JSON.parse reads (a lone surrogate in a \\u
    escape) read as JSON.parse reads it (OpenClaw is JavaScript)."""
    try:
        return bounded.loads(raw)
    except orjson.JSONDecodeError:
        return bounded.js_loads(raw.decode("utf-8", "replace")), []


def _lines(rows: list[tuple[Any, ...]], name: str, diags: list[Diagnostic]) -> list[RawLine]:
    """The rows as pi JSONL lines (line = seq), each parsed whole (new rows, for `follow`); the
    offsets count the rows' bytes as the full load does, from 0."""
    lines: list[RawLine] = []
    offset = 0
    unzip = zstandard.ZstdDecompressor().decompress
    for seq, text, blob, size in rows:
        got = _row_object(seq, *_row_bytes(text, blob, size, unzip), name, diags)
        if got is not None:
            lines.append(RawLine(seq, offset, len(got[1]) + 1, [got[0]]))
            offset += len(got[1]) + 1
    return lines


# A row's index fields, decoded without materializing its content, for a message entry or a
# `custom` entry: pi's head made as strict as OpenClaw's reading (`openclaw_heads`: every field
# `fields.PI` types typed on every role, the top-level ones the index does not read absent, and
# every field OpenClaw's schema requires there). A row whose head does not decode, or that one of
# OpenClaw's rules reads (`openclaw_heads.fast_ok`), is left to the general path, which reports it
# (the shared guard), so a record read lazily never holds a value of the wrong type.
_HEAD_DECODER = openclaw_heads.DECODER
_HEAD_ERRORS = heads.DECODE_ERRORS


def _head_record(e: openclaw_heads.Entry, seq: int, line: int, offset: int, n: int, source: _Rows) -> Record | None:
    """The record of a row from its head, as pi's builder maps the entry (`pi.entry_record`),
    its content left to `source`; None when the row needs the general path."""
    if not openclaw_heads.fast_ok(e):
        return None
    ts = e.timestamp if type(e.timestamp) is str else None
    if e.type == "custom":  # a meta record; its fields (`extra`) read back when asked for
        return record_from_fields(
            Record, seq, line, e.id, e.parentId, ts, offset, n, None, None, None, (), None, source, "meta", "custom"
        )
    m = e.message
    role, llm_role = openclaw_heads.ROLES[type(m)]
    stop, calls, result = pi.head_links(m, role, llm_role)  # type: ignore[arg-type]
    return record_from_fields(Record, seq, line, e.id, e.parentId, ts, offset, n, llm_role, stop, role, calls, result, source)


@dataclass(slots=True)
class _Read:
    """What the rows say that OpenClaw's rules read (`_apply_openclaw`): each row's node in its tree
    in seq order (a node, None, or the seq of a zstd row whose payload does not decode: its node is
    its `navigation_json`'s), the rows JSON.parse fails on, and each entry's verdict."""

    # (an index row's: its id and parent as written, `Scan.add_entry`)
    nodes: list[tuple[openclaw_model.Node | int | None, bool] | tuple[str, str | None]] = dataclasses.field(default_factory=list)
    unparsed: list[int] = dataclasses.field(default_factory=list)
    opaque: list[tuple[Record, str]] = dataclasses.field(default_factory=list)
    fails: list[tuple[Record, str]] = dataclasses.field(default_factory=list)
    controls: list[Record] = dataclasses.field(default_factory=list)  # `leaf` rows OpenClaw reads as navigation
    leaf_rows: bool = False  # a record of type `leaf` (`navigated`, as `_first_tail` finds it)
    dropped: list[tuple[Record, list[str]]] = dataclasses.field(default_factory=list)  # calls OpenClaw drops


def _build(
    rows: Any, name: str, source: _Rows, diags: list[Diagnostic], digest: Any, *, index: bool = True
) -> tuple[Ledger, int, _Read]:
    """The ledger of the session's rows (pi's builder over them, line = seq), how many rows were
    read and what OpenClaw's rules need of them, index first: a plain message or custom row (clean
    UTF-8 JSON whose fields have the types `fields.PI` gives them and none of OpenClaw's rules
    reads: `openclaw_heads`) becomes its record from a head decode, its content read back from the
    store when asked for (`_Rows`); any other row (every row, with `index=False`: the reference the
    tests hold the index to) is parsed whole (`_row_object`, the same diagnostics) and mapped by
    pi's builder, with OpenClaw's rules. Each row goes into `digest` (when given) as
    `openclaw_writer.state` adds it."""
    b = pi._Builder(name, source)
    records, entries, by_id = b.records, b.pi_entries, {}
    b.by_id = by_id
    resets: list[tuple[Record, dict[str, Any]]] = []
    decode, valid_utf8, large = _HEAD_DECODER.decode, heads.valid_utf8, bounded.LARGE_LINE_BYTES
    unzip = zstandard.ZstdDecompressor().decompress
    hash_row = openclaw_writer.hash_row
    poll0, poll1, poll2 = openclaw_heartbeat.MARKERS  # (three `in` tests in C: no generator a row)
    offset = read = 0
    prev_id: str | None = None
    seen = _Read()
    nodes = seen.nodes
    with collector_paused():
        for seq, text, blob, size in rows:
            read += 1
            if digest is not None:
                hash_row(digest, seq, text, blob)
            raw, problem = (text, "") if type(text) is bytes else _row_bytes(text, blob, size, unzip)
            if raw is not None and index and b.first_obj_seen and type(seq) is int and seq >= 0 and len(raw) <= large:
                # msgspec does not check the UTF-8 of what it skips: check it (cheaply) ourselves.
                try:
                    e = decode(raw) if raw.isascii() or valid_utf8(raw) else None
                except _HEAD_ERRORS:
                    e = None
                n = len(raw) + 1
                rec = _head_record(e, len(records), seq, offset, n, source) if e is not None else None
                if rec is not None:
                    # (only a user message is a poll: the other rows' bytes are not searched)
                    if rec.role == "user" and not source.heartbeat and (poll0 in raw or poll1 in raw or poll2 in raw):
                        source.heartbeat = True  # (a row that may hold a heartbeat poll: `_heartbeat_left_out`)
                    records.append(rec)
                    entries.append(rec)
                    rid = rec.id
                    if rec.parent_id == prev_id:
                        rec.parent_id = prev_id  # share the parent's id string (the linear common case)
                    by_id[rid] = rec.seq
                    b.id_count += 1
                    prev_id = rid
                    nodes.append((rid, rec.parent_id))  # (its node: `Scan.add_entry`)
                    offset += n
                    continue
            if raw is not None and not source.heartbeat and (poll0 in raw or poll1 in raw or poll2 in raw):
                source.heartbeat = True
            failed: list[str] = []
            got = _row_object(seq, raw, problem, name, diags, failed)
            if got is None:
                _unread_row(seen, seq, text, blob, bool(failed or problem))
                continue
            o, raw = got
            rec = _add_row(b, seen, o, raw, seq, offset, source, resets)
            offset += len(raw) + 1
            if rec is not None and rec.id is not None:
                by_id[rec.id] = rec.seq
                b.id_count += 1
                prev_id = rec.id
    led = b.finish()
    index = led.by_id()
    for rec, o in resets:
        _make_reset(led, rec, o, index)
    return led, read, seen


def _add_row(
    b: pi._Builder, seen: _Read, o: dict[str, Any], raw: bytes, seq: int, offset: int, source: _Rows, resets: list[tuple[Record, dict[str, Any]]]
) -> Record | None:
    """A row parsed whole: its record as pi's builder maps it (None: none), and what OpenClaw's
    rules read of it (`_Read`): its node, whether its schema takes it, whether it converts, the
    calls OpenClaw drops of it."""
    o, dropped = _without_dropped_calls(o)
    node = openclaw_model.tree_facts(o)
    seen.nodes.append((node, o.get("type") == "reset"))
    # A leaf row is OpenClaw's own navigation (`Scan`), no entry of its schema: never sent, unsaid.
    control = node is not None and node.control is not None
    opaque = None if control else openclaw_model.unrecognized(o)
    fail = openclaw_model.send_failure(o) if opaque is None else None
    left_out = opaque is None and fail is None and openclaw_model.left_out(o)
    if b.first_line is None:
        b.first_line = seq
    rec = b.add_obj(o, seq, offset, len(raw) + 1, True)
    if rec is None:
        return None
    rec._source = source
    seen.leaf_rows = seen.leaf_rows or rec.type == "leaf"
    if dropped:
        seen.dropped.append((rec, dropped))
    if control:
        seen.controls.append(rec)
        rec.never_sent = True
    elif opaque is not None:
        seen.opaque.append((rec, opaque))
    elif fail is not None:
        seen.fails.append((rec, fail))
    elif left_out and rec.kind == "message":
        rec.never_sent = True
        if rec.message is not None:
            rec.message.never_sent = True
    if rec.type in ("message", "custom_message") and rec.kind == "message":
        _exclude_from_context(rec, o)
        _mark_dropped_answer(rec, o)
    elif rec.type == "reset" and opaque is None:  # its entry as stored (the builder's check took fields out of `o`)
        written = line_object(raw + b"\n", seq, rec.offset)
        resets.append((rec, written if isinstance(written, dict) else {}))
    return rec


def _without_dropped_calls(o: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The entry without the call blocks OpenClaw drops from an answer (`openclaw_model.dropped_call`),
    and why each went; an answer left with no block is sent by no one (`_openclaw_reading`)."""
    m = o.get("message")
    if o.get("type") != "message" or not isinstance(m, dict) or m.get("role") != "assistant" or not isinstance(m.get("content"), list):
        return o, []
    why = [openclaw_model.dropped_call(b) for b in m["content"]]
    if not any(why):
        return o, []
    kept = [b for b, w in zip(m["content"], why, strict=True) if w is None]
    return {**o, "message": {**m, "content": kept}}, [f"block {k} ({w})" for k, w in enumerate(why) if w]


def _unread_row(seen: _Read, seq: Any, text: Any, blob: Any, bad: bool) -> None:
    """A row that holds no entry: JSON.parse fails on a plain row (BAD); a zstd row whose payload
    does not decode or parse (BAD) is decoded only when its node is on the path (its node is its
    `navigation_json`'s); a row of JSON that is no object is no node."""
    if not (type(seq) is int and seq >= 0):
        return
    if text is not None and bad:
        seen.unparsed.append(seq)
    seen.nodes.append((seq if text is None and blob is not None and bad else None, False))


def _row_place(name: str, seq: Any) -> str:
    """A row as a diagnostic names it (worded only for a diagnostic: quoting every row's seq cost
    a tenth of the load)."""
    return f"{name}: row {quote(seq)} of transcript_events"


def _line(seq: Any) -> int:
    """A row's `seq` as the line diagnostics name (it is the row's line in pi's terms)."""
    return seq if isinstance(seq, int) and not isinstance(seq, bool) and seq >= 0 else 0


class _Rows(pi._Source):
    """A record's entry, read back from its row (`line` = seq) of the store, decompressed again
    and mapped as pi's source maps a line read again; {} when the row is no longer there."""

    __slots__ = ("heartbeat", "session_id")

    def __init__(self, path: str, session_id: str, heartbeat: bool = False) -> None:
        super().__init__(path)
        self.session_id = session_id
        # Whether a row read may hold a heartbeat poll (`openclaw_heartbeat.MARKERS`): the reader
        # then applies OpenClaw's heartbeat filter, and a follow reads the session again in full.
        self.heartbeat = heartbeat

    def obj(self, rec: Record) -> Any:
        return self._objects([rec])[0]

    def load_many(self, recs: list[Record]) -> None:
        for r, o in zip(recs, self._objects(recs), strict=True):
            r._message = self._message_of(o)

    def extra(self, rec: Record) -> dict[str, Any] | None:
        if rec.type == "message":
            return super().extra(rec)
        o = self.obj(rec)  # a `custom` entry's fields, as `pi.entry_record` keeps them
        return pi._extra(o, pi._BASE_KEYS) if isinstance(o, dict) else None

    def _objects(self, recs: list[Record]) -> list[Any]:
        assert self.path is not None
        unzip = zstandard.ZstdDecompressor().decompress
        try:
            with sqlite_files.read_only(self.path, self.path, []) as con:
                return [self._read_back(con, r, unzip) for r in recs]
        except (LoadError, *sqlite_files.ERRORS):
            return [{} for _ in recs]

    def _read_back(self, con: sqlite3.Connection, rec: Record, unzip: Any) -> Any:
        row = con.execute(_ROWS + " AND seq=?", (self.session_id, rec.line)).fetchone()
        got = _row_object(row[0], *_row_bytes(*row[1:], unzip), "", []) if row is not None else None
        return line_object(got[1] + b"\n", rec.line, rec.offset) if got is not None else {}

    def __reduce__(self) -> Any:
        return _Rows, (self.path, self.session_id, self.heartbeat)


# ---------------------------------------------------------------------------------------- following

# What the store says of the session's windows and checkpoints: the ledger's last diagnostics.
_SESSION_NOTES = frozenset({"previous_session", "compaction_checkpoint"})
_ROWS = "SELECT seq, CAST(event_json AS BLOB), event_zstd, event_utf8_bytes FROM transcript_events WHERE session_id=?"


@dataclass(slots=True)
class RowsTail:
    """Where the last read of a session's transcript rows ended: its last seq, how many rows lie
    up to it, the last row as stored, how many leading diagnostics are the store's notes, and the
    digest of the rows so far as `openclaw_writer.state` takes it (continued with each new row)."""

    last_seq: int
    count: int
    last_row: tuple[Any, Any]
    notes: int
    hasher: Any
    navigated: bool = False  # the session has leaf rows (its leaf is the tree's: `_set_leaf`)


def _first_tail(con: sqlite3.Connection, led: Ledger) -> RowsTail | None:
    """The tail of a ledger just loaded in full: every row hashed once; None when they are not
    the rows it was read from (its digest differs) or a row was skipped. Whether it has leaf rows
    (`RowsTail.navigated`: its new rows with one take a full read, `_new_records`)."""
    if any(d.problem == "malformed_row" for d in led.diagnostics) or not led.store_state or not led.records:
        return None
    read = max(r.line for r in led.records)  # a record's line is its row's seq
    h = hashlib.sha256()
    n, last = 0, None
    for seq, text, blob, _size in con.execute(_ROWS + " AND seq<=? ORDER BY seq", (led.session_id, read)):
        n += 1
        openclaw_writer.hash_row(h, seq, text, blob)
        last = (seq, text, blob)
    if last is None or f"{n}:{h.hexdigest()}" != led.store_state:
        return None
    navigated = any(r.type == "leaf" for r in led.records)
    return RowsTail(last[0], n, (last[1], last[2]), sqlite_files.leading_notes(led.diagnostics), h, navigated)


def follow(path: str, selector: str | None, led: Ledger, tail: RowsTail | None) -> StoreGrowth:
    """The transcript rows the session gained past `led` (Format.follow): those with a seq above
    the last read one, mapped as pi's builder maps appended lines. Read again in full, with the
    reason, when a row read before went (fewer rows up to the last read seq) or the last one was
    rewritten, another session is now the current one, what its windows or checkpoints say
    changed, or a new row is a reset, a second header, has a diagnostic or reuses an id. A row
    before the last one rewritten in place is seen by the next full read (or a repair's check of
    the digest), not on each look."""
    notes: list[Diagnostic] = []
    with sqlite_files.read_only(path, path, notes) as con:
        return _grown(con, path, selector, led, tail, notes)


def _grown(
    con: sqlite3.Connection, name: str, selector: str | None, led: Ledger, tail: RowsTail | None, notes: list[Diagnostic]
) -> StoreGrowth:
    choice: list[Diagnostic] = []
    sid, node_entry = _choose_session(con, name, selector, choice)
    if sid != led.session_id:
        return StoreGrowth(None, tail, reload=f"session {quote(sid)} is now the current one")
    tail = tail if tail is not None else _first_tail(con, led)
    if tail is None:
        return StoreGrowth(None, tail, reload="the rows differ from those read (or one could not be read)")
    count, top = con.execute(
        "SELECT count(*), max(seq) FROM transcript_events WHERE session_id=? AND seq<=?", (sid, tail.last_seq)
    ).fetchone()
    if count != tail.count or top != tail.last_seq:
        return StoreGrowth(
            None, tail, reload=f"a row read before changed or went ({count:,} rows up to seq {tail.last_seq}, were {tail.count:,})"
        )
    rows = con.execute(_ROWS + " AND seq>=? ORDER BY seq", (sid, tail.last_seq)).fetchall()
    if not rows or (rows[0][1], rows[0][2]) != tail.last_row:
        return StoreGrowth(None, tail, reload=f"the last row read (seq {tail.last_seq}) was rewritten")
    scratch = Ledger(path=led.path, format=NAME, session_id=sid, header=None, records=[])
    _describe_windows(con, scratch, name, sid)
    _describe_checkpoints(scratch, name, node_entry)
    said = [d.message for d in led.diagnostics if d.problem in _SESSION_NOTES]
    if [d.message for d in scratch.diagnostics] != said:
        return StoreGrowth(None, tail, reload="what the store says of the session's windows or checkpoints changed")
    store_notes = [*notes, *choice]
    notes_changed = [d.message for d in store_notes] != [d.message for d in led.diagnostics[: tail.notes]]
    new_rows = rows[1:]
    if not new_rows:
        # OpenClaw's index may name another leaf without a new row: the ledger as a full read
        # would have it (the index's leaf when current, else the last entry's; with leaf rows, the
        # tree's, as read).
        probe = dataclasses.replace(led, diagnostics=[*store_notes, *led.diagnostics[tail.notes :]])
        if not tail.navigated:
            probe.leaf_seq = next((r.seq for r in reversed(led.records) if r.kind != "header"), None)
        _set_leaf(con, probe, sid, tail.navigated)
        if probe.leaf_seq == led.leaf_seq and not notes_changed:
            return StoreGrowth(None, tail)
        return StoreGrowth(probe, tail, notes_changed=True)
    diags: list[Diagnostic] = []
    lines = _lines(new_rows, name, diags)
    if diags:
        return StoreGrowth(None, tail, reload=f"a new row needs a full read ({diags[0].problem})")
    new = _new_records(led, lines)
    if new is None:
        return StoreGrowth(None, tail, reload="a new row needs the full build (a reset, a header, a reused id or a field's type)")
    grown = appended.grown(led, new)
    grown.diagnostics = [*store_notes, *led.diagnostics[tail.notes :]]
    _set_leaf(con, grown, sid, tail.navigated)
    h = tail.hasher.copy()
    for seq, text, blob, _size in new_rows:
        openclaw_writer.hash_row(h, seq, text, blob)
    n = tail.count + len(new_rows)
    grown.store_state = f"{n}:{h.hexdigest()}"
    last = new_rows[-1] if new_rows else rows[0]
    new_tail = RowsTail(last[0], n, (last[1], last[2]), len(store_notes), h, tail.navigated)
    return StoreGrowth(grown, new_tail, added=len(new), notes_changed=notes_changed)


def _new_records(led: Ledger, lines: list[RawLine]) -> list[Record] | None:
    """The new rows' records, as the full build and OpenClaw's rules make them; None when that
    needs the whole transcript (see `follow`)."""
    if led.runtime_rejects_file or led.header is None:
        return None
    source = next((r._source for r in led.records if isinstance(r._source, _Rows)), None) or _Rows(led.path or "", led.session_id or "")
    new: list[Record] = []
    seq = len(led.records)
    # OpenClaw's tree: a new row that hangs anywhere but under the last one (or where OpenClaw's
    # rules read it) needs the whole transcript (`_openclaw_reading`).
    parent = led.records[led.leaf_seq].id if led.leaf_seq is not None else None
    if parent is None or led.leaf_seq != _last_entry(led):
        return None
    if led.records[led.leaf_seq].type not in openclaw_model.CANONICAL:
        return None  # (an entry of no type of its own: OpenClaw hangs its children elsewhere, `_hang`)
    if source.heartbeat:
        return None  # (an appended row may change which heartbeat messages OpenClaw leaves out)
    for rl in lines:
        o = rl.objects[0]
        try:
            data = orjson.dumps(o)
        except TypeError:  # (a lone surrogate orjson will not write back: read in full)
            return None
        if any(m in data for m in openclaw_heartbeat.MARKERS):
            return None
        if o.get("type") in ("session", "reset") or not isinstance(o.get("id"), str) or fields.check_fields(o, fields.PI):
            return None
        if o.get("parentId") != parent or openclaw_model.unrecognized(o) or openclaw_model.send_failure(o):
            return None
        if "appendMode" in o or not o["id"].strip() or o.get("type") == "leaf":
            return None
        parent = o["id"]
        rec = pi.entry_record(o, seq, rl.line, rl.offset, rl.length)
        rec._source = source
        if rec.type in ("message", "custom_message") and rec.kind == "message":
            kept, dropped = _without_dropped_calls(o)
            if dropped:  # (a call OpenClaw drops is a diagnostic of the full build: `_openclaw_reading`)
                return None
            _exclude_from_context(rec, o)
            _mark_dropped_answer(rec, kept)
        new.append(rec)
        seq += 1
    return new if appended.fresh_ids(led, new) else None


def _last_entry(led: Ledger) -> int | None:
    return next((r.seq for r in reversed(led.records) if r.kind != "header"), None)


# ---------------------------------------------------------------------------------------- OpenClaw's rules

UNRECOGNIZED = "unrecognized_entry"
LATENT = "unparsed_row"  # a row OpenClaw would stop on once its index is rebuilt (`openclaw_writer.refusal`)


def _openclaw_reading(con: sqlite3.Connection, led: Ledger, sid: str, seen: _Read) -> openclaw_model.Scan:
    """OpenClaw's reading of what pi's builder made of the rows (`openclaw_model`): its schema's
    opaque entries never sent and no boundary, its conversion failures in place of pi-ai's, its
    tree's parents and leaf (its `leaf` rows' navigation too). The scan."""
    led.diagnostics[:] = [d for d in led.diagnostics if d.problem not in (FAILS_ON_OPEN, FAILS_ON_SEND)]
    for rec, why in seen.opaque:
        led.diagnostics.append(
            Diagnostic(
                rec.line, UNRECOGNIZED, f"row {rec.line}: OpenClaw's entry schema does not take this entry ({why}): "
                "it keeps its place in the session's tree and is never sent" + (", nor a window boundary" if rec.kind == "checkpoint" else ""),
                severity="warning", seqs=[rec.seq],
            )
        )  # fmt: skip
        rec.never_sent = True
        if rec.kind == "message" and rec.message is not None:
            rec.message.never_sent = True
        if rec.kind == "checkpoint":
            rec.kind, rec.checkpoint = "meta", None
    for rec, blocks in seen.dropped:
        gone = rec.kind == "message" and rec.message is not None and not rec.message.blocks
        led.diagnostics.append(
            Diagnostic(
                rec.line, "unmatched_tool_call",
                f"row {rec.line}: OpenClaw drops the call{'s' if len(blocks) > 1 else ''} of this answer's content "
                f"{', '.join(blocks)} before it sends the answer (repairToolCallInputs, session-transcript-repair-rV_-0RVP.mjs:135-145)"
                + ("; nothing is left of the answer, which is not sent" if gone else ""),
                severity="warning", seqs=[rec.seq],
            )
        )  # fmt: skip
        if gone:
            rec.never_sent = True
            rec.message.never_sent = True  # type: ignore[union-attr]
    for rec, why in seen.fails:
        led.diagnostics.append(Diagnostic(rec.line, FAILS_ON_SEND, f"row {rec.line}: {why}", severity="warning", seqs=[rec.seq]))
    scan = openclaw_model.Scan()
    for node, is_reset in seen.nodes:
        if type(node) is str:  # (an index row's entry: its id and parent)
            scan.add_entry(node, is_reset)  # type: ignore[arg-type]
            continue
        if type(node) is int:
            seq, node = node, _navigation_node(con, sid, node)
            if node is not None:
                scan.undecoded[node.id] = seq
        scan.add(node, is_reset)  # type: ignore[arg-type]
    _hang(led, scan)
    return scan


def _navigation_node(con: sqlite3.Connection, sid: str, seq: int) -> openclaw_model.Node | None:
    """The node of a zstd row whose payload does not decode: its `navigation_json`'s (what
    OpenClaw's tree scan reads of a zstd row, `transcriptEventNavigationSql`)."""
    row = con.execute("SELECT navigation_json FROM transcript_events WHERE session_id=? AND seq=?", (sid, seq)).fetchone()
    try:
        nav = orjson.loads(row[0]).get("navigation") if row is not None and row[0] is not None else None
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return openclaw_model.tree_facts(nav)


def _hang(led: Ledger, scan: openclaw_model.Scan) -> None:
    """Each record's parent and the leaf as OpenClaw's tree has them, said where it differs from
    the rows: an entry whose parent is no earlier entry is hung under the leaf, ...; a leaf row
    hangs under its target (`_navigation`)."""
    if scan.parents:
        moved = [r for r in led.records if r.id is not None and r.id in scan.parents and r.kind != "header"]
        for r in moved:
            r.parent_id = scan.parents[r.id]  # type: ignore[index]
        if moved:
            led._by_id = None
        moved = [r for r in moved if r.id not in scan.controls]
        if moved:
            r = moved[0]
            led.diagnostics.append(
                Diagnostic(
                    r.line, "tree_normalized",
                    f"row {r.line}: OpenClaw hangs {len(moved)} entr{'y' if len(moved) == 1 else 'ies'} elsewhere in its tree than "
                    f"their parentId says (this one under {quote(r.parent_id)}): an entry whose parent is no earlier entry, or is "
                    "one of no type of its own, or that a reset left, or is a leaf row, hangs under its leaf or that row's target "
                    "(transcript-tree-3xvvNd9-.mjs:69-80, :138-139)",
                    severity="info", seqs=[x.seq for x in moved],
                )
            )  # fmt: skip
    by_id = led.by_id()
    if scan.moves:
        _navigation(led, scan, by_id)
    path_leaf = scan.path_leaf()
    leaf = by_id.get(path_leaf) if path_leaf is not None else None
    if leaf is not None:
        led.leaf_seq = leaf
    elif scan.leaf_row is not None:
        led.leaf_seq = None  # (a leaf row naming no entry, null: OpenClaw sends no history)


LEAF_MOVED = "leaf_moved"  # a leaf row makes another entry than the last the leaf
LEAF_IGNORED = "leaf_ignored"  # a leaf row OpenClaw ignores


def _navigation(led: Ledger, scan: openclaw_model.Scan, by_id: dict[str, int]) -> None:
    """What OpenClaw's leaf rows (its navigation controls: a branch switch, a rewind) do where it
    is not what the rows as written say: the leaf row that makes the leaf, and each it ignores."""
    line = {r.id: r.line for r in led.records if r.id is not None and r.id in scan.controls}
    for m in scan.moves:
        if m.how == "moved":
            continue
        why = (
            f"it names {quote(m.asked)}, which is no earlier entry (or a leaf row OpenClaw ignored)"
            if m.how == "invalid"
            else f"a reset came after {quote(m.asked) if m.asked is not None else 'the root (null)'}, and a leaf row may not lead back past it"
        )
        row = line.get(m.id, 0)
        led.diagnostics.append(
            Diagnostic(
                row, LEAF_IGNORED,
                f"row {row}: OpenClaw ignores this leaf row (its navigation control): {why}; the leaf stays at "
                f"{quote(m.target) if m.target is not None else 'the root'} (scanSessionTranscriptNavigation, transcript-tree-3xvvNd9-.mjs:"
                + ("119-134)" if m.how == "invalid" else "115-118)"),
                severity="warning",
            )
        )  # fmt: skip
    if scan.leaf_row is None:
        return
    row = line.get(scan.leaf_row, 0)
    path_leaf = scan.path_leaf()
    at = by_id.get(path_leaf) if path_leaf is not None else None
    last = _last_entry(led)
    if at is not None and at == last:
        return
    after = sum(1 for r in led.records if r.kind == "message" and at is not None and r.seq > at) if at is not None else None
    where = (
        f"the path to row {led.records[at].line} ({quote(path_leaf)})" + (f", not the {after} message(s) written after it" if after else "")
        if at is not None
        else "no history (it names no entry: the root)"
    )
    led.diagnostics.append(
        Diagnostic(
            row, LEAF_MOVED,
            f"row {row}: a leaf row (OpenClaw's navigation control, written when a user switches branch or rewinds) makes "
            f"{quote(path_leaf) if path_leaf is not None else 'no entry'} the leaf: OpenClaw sends {where}, and hangs the next "
            "turn there (scanSessionTranscriptNavigation, transcript-tree-3xvvNd9-.mjs:160-171; selectSessionTranscriptTreePathNodes, :199-213)",
            severity="info", seqs=[at] if at is not None else [],
        )
    )  # fmt: skip


def _header_refusal(led: Ledger) -> None:
    """OpenClaw refuses a session without a header of version 3 or later (`openclaw_model.header_refusal`),
    where pi would start a new one."""
    why = openclaw_model.header_refusal(led.header)
    if why is None:
        return
    led.runtime_rejects_file = False
    led.diagnostics[:] = [d for d in led.diagnostics if d.problem != "missing_header"]
    first = next((r.line for r in led.records), 0)
    led.diagnostics.append(Diagnostic(first, "resume_refused", f"row {first}: {why}", severity="error"))


def _refusals(led: Ledger, seen: _Read, scan: openclaw_model.Scan, index_current: bool) -> None:
    """OpenClaw stops before any request on a row it cannot read (`openclaw_model`, first rule):
    a plain row JSON.parse fails on, when it rebuilds the session's transcript index (the index
    lags the rows; a current index is read as it stands), and a zstd row whose payload does not
    decode, when it is on the path."""
    bad = {s: "JSON.parse fails on it" for s in seen.unparsed if not index_current}
    for seq in seen.unparsed if index_current else ():
        led.diagnostics.append(
            Diagnostic(
                seq, LATENT,
                f"row {seq}: JSON.parse fails on it: OpenClaw reads on while its transcript index is current, but rebuilds "
                "the index after any row it did not append itself (a repair's), and then stops on this row",
                severity="warning",
            )
        )  # fmt: skip
    if scan.undecoded and led.leaf_seq is not None:
        cur, walked = led.records[led.leaf_seq].id, set()
        while cur is not None and cur in scan.by_id and cur not in walked:
            walked.add(cur)
            if cur in scan.undecoded:
                bad[scan.undecoded[cur]] = "its payload (event_zstd) does not decode, and it is on the path"
            cur = scan.by_id[cur]
    for seq in sorted(bad):
        led.diagnostics.append(
            Diagnostic(
                seq, "resume_refused",
                f"row {seq}: {bad[seq]}: OpenClaw's rebuild of the session's transcript index stops there "
                "(visitProjectionSource, session-transcript-index-UaRlRUAw.mjs:122-175) and the run with it "
                "(\"Session transcript projection is rebuilding\"): it sends nothing",
                severity="error",
            )
        )  # fmt: skip


def _exclude_from_context(rec: Record, o: dict[str, Any]) -> None:
    """A message entry whose message has `excludeFromContext: true` is never sent (any role)."""
    m = o.get("message")
    if isinstance(m, dict) and m.get("excludeFromContext") is True:
        rec.never_sent = True
        if rec.message is not None:
            rec.message.never_sent = True


def _mark_dropped_answer(rec: Record, o: dict[str, Any]) -> None:
    """An answer OpenClaw leaves out whole for how it ended (`openclaw_model.dropped_answer`: a
    failed one it does not send as its marker, one cut short holding only reasoning; `o` without
    the calls it drops) is never sent, nor is a runtime-context message it stored
    (`openclaw_model.runtime_context`)."""
    if openclaw_model.dropped_answer(o) or openclaw_model.runtime_context(o):
        rec.never_sent = True
        if rec.message is not None:
            rec.message.never_sent = True


HEARTBEAT_LEFT_OUT = "heartbeat_left_out"
_REPLAYED_TYPES = frozenset({"message", "custom_message", "branch_summary"})  # (`iterateSessionContextEntries`, session-D9cHHQGH.mjs:162)


def _heartbeat_left_out(led: Ledger, source: _Rows) -> None:
    """The messages OpenClaw's heartbeat filter takes out of the request (`openclaw_heartbeat`: a
    heartbeat poll, its acknowledgement and what came between) are never sent, said in one
    diagnostic naming them. The filter reads the replayed window (`_replayed_units`) with adjacent
    answers and user messages merged where OpenClaw's transcript policy for the session's provider
    merges them (`openclaw_turns.session_policy`), and without the runtime-context
    messages, which OpenClaw's context engine strips before its second pass (observed: its first
    pass, before, keeps a poll such a message follows)."""
    path = _path(led)
    policy = openclaw_turns.session_policy(led, path) or openclaw_turns.NONE
    merged = openclaw_heartbeat.merged(_replayed_units(led, source, path), answers=policy.merges_answers, users=policy.merges_users)
    units = [u for u in merged if not openclaw_model.runtime_context_message(u.message)]
    gone = [s for i in openclaw_heartbeat.left_out(units) for s in units[i].seqs]
    for s in gone:
        rec = led.records[s]
        rec.never_sent = True
        if rec.message is not None:
            rec.message.never_sent = True
    if gone:
        first = led.records[gone[0]]
        led.diagnostics.append(
            Diagnostic(
                first.line, HEARTBEAT_LEFT_OUT,
                f"row {first.line}: OpenClaw leaves {len(gone)} heartbeat message{'s' if len(gone) != 1 else ''} out of the "
                "request: a heartbeat poll (or another wake prompt), its acknowledgement (HEARTBEAT_OK, NO_REPLY) and what "
                "came between, up to the next user message (filterHeartbeatTranscriptArtifacts, "
                "heartbeat-filter-DxPIMf2l.mjs:193-255)",
                severity="info", seqs=gone,
            )
        )  # fmt: skip


def _path(led: Ledger) -> list[int]:
    """The active path's seqs, root to leaf (the parent chain from the leaf), as OpenClaw replays it."""
    if led.leaf_seq is None:
        return []
    leaf = led.records[led.leaf_seq]
    return [r.seq for r in _ancestors(led, leaf, led.by_id())] + [leaf.seq]


def _replayed_units(led: Ledger, source: _Rows, path_seqs: list[int]) -> list[openclaw_heartbeat.Unit]:
    """The messages of the window OpenClaw replays (`_replayed_window`), in order, as its filter
    reads them: the summary, then each message entry, custom message and branch summary, less those
    OpenClaw leaves out before the filter (a never-sent one, but for a stored runtime-context
    message: observed of a failed answer of blank text, not probed of one making a call) and a
    trailing user message, which it merges into the prompt (`resolveOrphanRepairPlan`,
    builtin-openclaw-q1hiFm14.mjs:18281-18296: `openclaw_turns.trailing_user`)."""
    path = [led.records[s] for s in path_seqs]
    summary, window = _replayed_window(path)
    orphan = openclaw_turns.trailing_user(led.records, path_seqs)
    recs = [r for r in window if r.kind == "message" and r.type in _REPLAYED_TYPES and r is not orphan]
    units = [openclaw_heartbeat.Unit({"role": "compactionSummary"})] if summary else []
    for rec, o in zip(recs, source._objects(recs) if recs else [], strict=True):
        o = _without_dropped_calls(o)[0] if isinstance(o, dict) else {}
        if rec.never_sent and not openclaw_model.runtime_context(o):
            continue
        m = o.get("message") if o.get("type") == "message" else {"role": "custom" if o.get("type") == "custom_message" else "branchSummary", **o}
        units.append(openclaw_heartbeat.Unit(m if isinstance(m, dict) else {}, [rec.seq]))
    return units


def _sent_shape(led: Ledger, path: Sequence[int], items: Sequence[Any], opens: bool) -> SentShape | None:
    """`Runtime.sent_shape`: what OpenClaw does to the request's messages as it sends them
    (`openclaw_turns.shape`), under the transcript policy of the session's last answer's provider
    and model API (`openclaw_turns.session_policy`). A stored runtime-context message, and a
    heartbeat message the filter takes out, go only after the merge: they keep the messages around
    them apart (observed of a runtime-context message between two user messages)."""
    records = led.records
    trailing = openclaw_turns.trailing_user(records, path)
    where: dict[int, int] = {}
    late = {s for d in led.diagnostics if d.problem == HEARTBEAT_LEFT_OUT for s in d.seqs}

    def separated(a: int, b: int) -> bool:
        if not where:
            where.update((s, i) for i, s in enumerate(path))
        for s in path[where[a] + 1 : where[b]]:
            r = records[s]
            if r.kind == "message" and r.never_sent and (s in late or _runtime_context_record(r)):
                return True
        return False

    policy = lambda: openclaw_turns.session_policy(led, path)  # noqa: E731  (one row read, only when a rule may apply)
    return openclaw_turns.shape(items, records, policy, opens, trailing.seq if trailing is not None else None, separated)


def _runtime_context_record(rec: Record) -> bool:
    """A stored runtime-context message (`openclaw_model.runtime_context`; only a custom message can be one)."""
    if rec.type != "custom_message" and rec.source_role != "custom":
        return False
    o = rec._source.obj(rec) if rec._source is not None else None
    return isinstance(o, dict) and openclaw_model.runtime_context(o)


def _replayed_window(path: list[Record]) -> tuple[bool, list[Record]]:
    """Whether the window opens with a compaction's summary, and its entries: those from the last
    boundary's first kept entry (a reset's kept ones only) up to it, then those after it
    (`resolveSessionContextWindow`, `iterateSessionContextEntries`, session-D9cHHQGH.mjs:127-166)."""
    b = next((i for i in range(len(path) - 1, -1, -1) if path[i].kind == "checkpoint" and path[i].checkpoint is not None), None)
    if b is None:
        return False, path
    cp = path[b].checkpoint
    assert cp is not None
    first = next((i for i, r in enumerate(path[:b]) if r.id == cp.first_kept_id), b)
    kept = set(cp.explicit_retains or ()) if cp.trigger == "reset" else None
    return cp.trigger != "reset", [r for r in path[first:b] if kept is None or r.id in kept] + path[b + 1 :]


def _ancestors(led: Ledger, rec: Record, by_id: dict[str, int]) -> list[Record]:
    """The path from the root to just before `rec` (its parentId chain), cycle-safe."""
    out: list[Record] = []
    seen: set[int] = set()
    pid = rec.parent_id
    while pid is not None and pid in by_id and by_id[pid] not in seen:
        seen.add(by_id[pid])
        r = led.records[by_id[pid]]
        out.append(r)
        pid = r.parent_id
    out.reverse()
    return out


def _make_reset(led: Ledger, rec: Record, o: dict[str, Any], by_id: dict[str, int]) -> None:
    path = _ancestors(led, rec, by_id)
    first_kept = o.get("firstKeptEntryId") if isinstance(o.get("firstKeptEntryId"), str) else None
    # The window starts at firstKeptEntryId when it is on the path before the reset, else at the
    # reset itself (resolveSessionContextWindow): only the range's messages below can be kept.
    start = next((i for i, r in enumerate(path) if r.id == first_kept), len(path))
    kept: list[str] = []
    frame_calls: set[str] = set()  # the calls of the newest assistant that made any (its "frame")
    for r in path[start:]:
        if r.type != "message" or r.kind != "message" or r.id is None:
            continue
        if r.source_role in ("user", "assistant"):
            kept.append(r.id)
            if r.source_role == "assistant" and r.call_ids:
                frame_calls = set(r.call_ids)
        elif r.source_role == "toolResult" and r.result_id in frame_calls:
            frame_calls.discard(r.result_id)  # a duplicate result of one call is not paired again
            kept.append(r.id)
    rec.kind = "checkpoint"
    rec.checkpoint = Checkpoint(
        summary="",
        first_kept_id=first_kept,
        trigger="reset",
        details=o,
        explicit_boundary=path[-1].id if path else None,
        explicit_retains=kept,
    )


def _set_leaf(con: sqlite3.Connection, led: Ledger, sid: str, navigated: bool) -> bool:
    """OpenClaw's own leaf (`session_transcript_index_state.leaf_event_id`), when it names a read
    entry and the index is current. An index behind the transcript (its `indexed_seq` is not the
    latest seq, or `needs_rebuild`) is rebuilt by OpenClaw before it is used, its leaf then the
    transcript tree's (session-transcript-index-UaRlRUAw.mjs:403-406, :586-595, :122-175): its
    leaf as `_openclaw_reading` scanned it (a repair's appended row leaves the index so). Whether
    the index is current (OpenClaw then rebuilds nothing). A session with leaf rows (`navigated`)
    keeps the tree's leaf: the index's `leaf_event_id` is the tree's append parent
    (`visitProjectionSource`, :168), which a leaf row may set apart from the leaf whose path the
    index holds as the active rows (:143-149), and OpenClaw resolves it back to that leaf
    (session-accessor.sqlite-active-context-C3x2ZjEy.mjs:155-156)."""
    if "session_transcript_index_state" not in _tables(con):
        return False
    cols = {r[1] for r in con.execute("PRAGMA table_info(session_transcript_index_state)")}
    rebuild = "needs_rebuild" if "needs_rebuild" in cols else "0"
    row = con.execute(
        f"SELECT leaf_event_id, indexed_seq, {rebuild} FROM session_transcript_index_state WHERE session_id=?", (sid,)
    ).fetchone()
    latest = con.execute("SELECT max(seq) FROM transcript_events WHERE session_id=?", (sid,)).fetchone()[0]
    if row is None or not isinstance(row[0], str) or row[1] != latest or row[2] != 0:
        return False
    seq = led.by_id().get(row[0])
    if seq is not None and not navigated:
        led.leaf_seq = seq
    return True


def _describe_windows(con: sqlite3.Connection, led: Ledger, name: str, sid: str) -> None:
    row = con.execute("SELECT previous_session_id, reason FROM session_windows WHERE session_id=?", (sid,)).fetchone()
    if row is None or row[0] is None:
        return
    prev, reason = row
    how = "compacted into this successor" if reason == "compaction" else f"followed by this session ({reason or 'no reason'})"
    led.diagnostics.append(
        Diagnostic(
            0,
            "previous_session",
            f"{name}: session {quote(sid)} continues session {quote(prev)} (session_windows.reason={quote(reason)}): {quote(prev)} was {how}; "
            f"its history is not in this transcript (open FILE#{prev} to read it)",
            severity="info",
        )
    )


def _legacy_checkpoints(led: Ledger, node_entry: dict[str, Any] | None) -> list[Any]:
    cps = list(node_entry.get("compactionCheckpoints") or []) if node_entry else []
    if cps or led.path is None:
        return cps
    legacy = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(led.path))), "sessions", "sessions.json")
    try:
        with open_regular(legacy) as f:  # (a named pipe there: refused, never waited on)
            store = json.load(f)
    except (OSError, ValueError, RecursionError):  # (unreadable, not JSON, nested too deep: no legacy checkpoints)
        return []
    if not isinstance(store, dict):
        return []
    for entry in store.values():
        if isinstance(entry, dict) and entry.get("sessionId") == led.session_id:
            cps += list(entry.get("compactionCheckpoints") or [])
    return cps


def _describe_checkpoints(led: Ledger, name: str, node_entry: dict[str, Any] | None) -> None:
    """`compactionCheckpoints[]` (`dist/legacy-compaction-history-D-x7k5QQ.mjs:7-45`), one info line each."""
    for i, cp in enumerate(_legacy_checkpoints(led, node_entry), start=1):
        if not isinstance(cp, dict):
            continue
        pre = cp.get("preCompaction") if isinstance(cp.get("preCompaction"), dict) else {}
        post = cp.get("postCompaction") if isinstance(cp.get("postCompaction"), dict) else {}
        led.diagnostics.append(
            Diagnostic(
                0,
                "compaction_checkpoint",
                f"{name}: compaction checkpoint {i} (sessions.json compactionCheckpoints): "
                f"tokens {cp.get('tokensBefore', '?')} -> {cp.get('tokensAfter', '?')}; "
                f"before: {pre.get('sessionFile') or pre.get('sessionId') or '?'}; "
                f"after: {post.get('sessionFile') or post.get('sessionId') or '?'}"
                + (f" (entry {post['entryId']})" if post.get("entryId") else ""),
                severity="info",
            )
        )


# ---------------------------------------------------------------------------------------- the format

SUMMARY_FORMAT = dataclasses.replace(pi.SUMMARY_FORMAT, file_list_chars=900)

FORMAT = Format(
    name=NAME,
    label="OpenClaw SQLite store",
    # pi's agent core with OpenClaw's text for a synthetic tool result
    # (DEFAULT_MISSING_TOOL_RESULT_TEXT, dist/tool-result-pairing-Bky0eubt.mjs:9) and pi's
    # compaction-summary wrapper (session-D9cHHQGH.mjs:15-20).
    runtime=Runtime(
        name=NAME,
        tree=True,
        # A failed answer (stopReason error or aborted) is sent as OpenClaw's marker text
        # (`resolveFailedAssistantReplay`, ai/dist/host-yTvBrYM2.mjs:422-432, :549-562), unless it
        # leaves it out whole (the reader marks those never sent: `openclaw_model.dropped_answer`).
        failed_turn_marker=openclaw_model.FAILED_TURN_MARKER,
        synthesize_missing_results=True,
        # ... and a result whose call is not in the request is dropped (`classifyToolUseResultPairing`,
        # dist/tool-result-pairing-Bky0eubt.mjs:125-254: droppedOrphanCount; observed).
        drops_orphan_results=True,
        synthetic_result_text="[openclaw] missing tool result in session history; inserted synthetic error result for transcript repair.",
        summary_prefix=pi.COMPACTION_SUMMARY_PREFIX,
        summary_suffix=pi.COMPACTION_SUMMARY_SUFFIX,
        # pi's template, tags and split-turn separator (dist/compaction-CAzwgOuQ.mjs:349, :601-628,
        # :771-783), each file list bounded at 900 characters (:167).
        summary_format=SUMMARY_FORMAT,
        # The window is kept from the compaction's `firstKeptEntryId` on (pi's entry, written by
        # openclaw_writer): a repair cannot keep a message ahead of it, so it quotes it instead.
        contiguous_tail=True,
        # Adjacent answers and user messages sent as one, a trailing user message moved into the
        # prompt, a "(session bootstrap)" message first (`openclaw_turns`).
        sent_shape=_sent_shape,
    ),
    claims=lambda path, head: head.startswith(sqlite_files.SQLITE_MAGIC) and (looks_like_file(path) or _transcriptless_agent_database(path)),
    load_file=lambda path, _f, _head, session_id, upto: load(path, session_id, upto),
    load_file_read_only=lambda path, _f, _head, session_id, upto: load(path, session_id, upto, digest=False),
    looks_like_file=looks_like_file,
    follow=follow,
    sessions_by_selector=True,  # FILE.sqlite#SESSION; default: the current session of the newest key
    session_ids=lambda path: sqlite_files.store_session_ids(path, "SELECT DISTINCT session_id FROM transcript_events ORDER BY session_id"),
    suffixes=(".db", ".sqlite", ".sqlite3"),
    # Where OpenClaw keeps its sessions (docs/runtimes/openclaw.md §1): the legacy JSONL layout
    # (pi's format) and, since 2026.8, agents/<agent>/agent/openclaw-agent.sqlite.
    default_places=("~/.openclaw/agents/*/sessions", "~/.openclaw/agents/*/agent"),
    # OpenClaw's state dir: `$OPENCLAW_STATE_DIR`, else `.openclaw` under `$OPENCLAW_HOME` (which
    # stands for the user's home), else ~/.openclaw (`resolveStateDir`, 2026.9.6
    # dist/paths-DehQwyE0.mjs:27-34, region src/config/state-dir.ts; `resolveEffectiveHomeDir`,
    # dist/managed-handoff-runtime.mjs:4728-4737). Not modelled: its fallback to an existing
    # ~/.clawdbot when ~/.openclaw is absent (:37-48).
    homes=(Home("~/.openclaw", (HomeOverride("OPENCLAW_STATE_DIR"), HomeOverride("OPENCLAW_HOME", ".openclaw"))),),
    # Files in OpenClaw's folders that are not sessions (fnmatch patterns on the file name): the
    # store's lock and memory-index scratch files, and in the legacy JSONL layout
    # (`agents/*/sessions/`) the pre-compaction copies `<id>.checkpoint.<uuid>.jsonl`,
    # trajectories, archives and deleted files.
    not_session_files=(
        "openclaw-agent.sqlite.*",
        "*.checkpoint.*.jsonl",
        "*.trajectory.jsonl",
        "*.trajectory-path.json",
        "*.jsonl.zst",
        "*.jsonl.deleted.*",
    ),
    # OpenClaw's own compaction entry (pi's), inserted as the next transcript row
    # (inspector/formats/openclaw_writer.py; docs/runtimes/openclaw.md §6).
    writer=Writer(
        record_name="compaction",
        id_prefix="",
        planned_id="planned0",
        refusal=openclaw_writer.refusal,
        entry=openclaw_writer.compaction_entry,
        read_back=lambda o, rl, seq: pi.entry_record(o, seq, rl.line, rl.offset, rl.length),
        store=openclaw_writer.STORE,
    ),
)
