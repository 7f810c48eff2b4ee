"""Benchmark files for every format, replicated from real lines (issue 15, point 5). Deterministic by seed.

    python -m benchmarks.gen_formats --format claude_code --mb 100      # -> benchmarks/out/claude_code-100mb-s1.jsonl
    python -m benchmarks.gen_formats --format all --mb 20

The records are the ones real producers wrote: `../shared/real_sessions/` (pi, Claude Code, Codex), the
peer corpora (`../shared/peers/*/corpus/`, `tests/peers/openclaw/corpus/`) and `sample_sessions/native/`.
The body of each source is cut into turns (a user prompt and everything up to the next one); the
turns are written out in source order, round and round, until the file reaches its size. Every copy
of a turn gets fresh ids (entry ids, tool-call ids, invocation ids: the same shape as the original,
consistent inside the copy), fresh timestamps from one monotonic clock, and its parent links point at
the previous record written, so the chain runs unbroken from the header to the last record. The
sources' own compactions are taken out of the body; a few (`COMPACTIONS`) are put back at even
intervals, each built from a real compaction record of that format with its references (parent,
first kept entry, covered range) pointing at records of the generated file, keeping the last
`KEEP_TURNS` turns.

pi's real sessions are v1 files (no ids): their entries are given v3 ids and parent links the way
pi's own migration does, under a v3 header copied from the pi peer corpus. OpenClaw rows are
written into a copy of the corpus store; rows above `OPENCLAW_ZSTD_ABOVE` bytes are zstd frames as
OpenClaw stores its big rows (the corpus has plain rows up to 796 bytes, frames from 3,396). ADK's
SQLite file has the v1 `DatabaseSessionService` schema copied from a corpus database.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import shutil
import sqlite3
import sys
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

if __package__ in (None, ""):  # `python benchmarks/gen_formats.py`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("INSPECTOR_SHARED", os.path.join(os.path.dirname(REPO), "shared"))
OUT = os.path.join(REPO, "benchmarks", "out")
GENERATOR_VERSION = 1  # bump when the output for a given (format, size, seed) changes
DEFAULT_MB = 100
DEFAULT_SEED = 1
MB = 1_000_000
COMPACTIONS = 4
KEEP_TURNS = 2
OPENCLAW_ZSTD_ABOVE = 2048
START_MS = 1_767_603_600_000  # 2026-01-05T09:00:00Z

# --------------------------------------------------------------------------------------- fresh ids

_UUID = re.compile(rb"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_PREFIX = re.compile(r"[A-Za-z]+[_-]?")
_HEX = set("0123456789abcdefABCDEF")


class Ids:
    """Fresh ids in the shape of the originals: a uuid stays a uuid, `toolu_…` keeps its prefix and
    length; short ids (`m0002`, pi's 8 hex) become a scrambled counter, so they never collide."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.n = 0

    def _digest(self) -> str:
        self.n += 1
        return hashlib.blake2b(f"{self.seed}:{self.n}".encode(), digest_size=32).hexdigest()

    def fresh(self, orig: str) -> str:
        if _UUID.fullmatch(orig.encode()):
            return self._shape(orig)
        m = _PREFIX.match(orig)
        prefix = m.group() if m and m.end() < len(orig) else ""
        rest = orig[len(prefix) :]
        if len(rest) >= 16:
            return prefix + self._shape(rest)
        self.n += 1
        width = max(len(rest), 8)
        space = 16**width
        return prefix + f"{(self.n * 0x9E3779B97F4A7C15 + self.seed) % space:0{width}x}"

    def _shape(self, orig: str) -> str:
        digest = self._digest()
        while len(digest) < len(orig):
            digest += self._digest()
        out = [digest[i] if (c in _HEX or c.isalnum()) else c for i, c in enumerate(orig)]
        return "".join(out)

    def uuid(self) -> str:
        return self._shape("00000000-0000-0000-0000-000000000000")


# ----------------------------------------------------------------------------- compiled templates

# `"key":value` where value is a plain string (no escapes) or a number: where ids and timestamps live.
_SLOT = re.compile(rb'"(\w+)":("[^"\\]*"|-?\d+(?:\.\d+)?)')
_ISO = re.compile(rb'"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)"')


@dataclass(frozen=True)
class Keys:
    """Which keys of a format hold what."""

    ids: frozenset[str]  # values are ids: fresh in every copy
    parents: frozenset[str] = frozenset()  # values name the previous record: the chain
    primary: str | None = None  # the record's own id
    session: frozenset[str] = frozenset()  # values are the session id
    times: frozenset[str] = frozenset({"timestamp"})


@dataclass
class Template:
    """One record as literal bytes and slots: ('id'|'parent'|'session'|'iso'|'ms'|'sec', original)."""

    parts: list[bytes | tuple[str, str]]
    primary: str | None


PREVIOUS = "00000000-0000-0000-0000-0000000000ff"  # a body record's null parent: the record before it


def compile_record(obj: dict[str, Any], keys: Keys, body: bool = False) -> Template:
    """`body`: a null parent link (a source file's first record) becomes a link to the previous record."""
    if body and any(obj.get(k, 0) is None for k in keys.parents):
        obj = obj | {k: PREVIOUS for k in keys.parents if k in obj and obj[k] is None}
    raw = orjson.dumps(obj)
    parts: list[bytes | tuple[str, str]] = []
    pos = 0
    for m in _SLOT.finditer(raw):
        key, val = m.group(1).decode(), m.group(2)
        kind = _slot_kind(key, val, keys)
        if kind is None:
            continue
        parts.append(raw[pos : m.start(2)])
        parts.append((kind, val.decode().strip('"')))
        pos = m.end(2)
    parts.append(raw[pos:])
    primary = obj.get(keys.primary) if keys.primary else None
    return Template(parts, primary if isinstance(primary, str) else None)


def _slot_kind(key: str, val: bytes, keys: Keys) -> str | None:
    if val.startswith(b'"'):
        if val == b'""':
            return None
        if key in keys.session:
            return "session"
        if key in keys.parents:
            return "parent"
        if key in keys.ids:
            return "id"
        if key in keys.times and _ISO.fullmatch(val):
            return "iso"
        return None
    if key in keys.times:
        x = float(val)
        if x > 1e12:
            return "ms"
        if 1e9 < x < 1e10:
            return "sec"
    return None


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


@dataclass
class State:
    rng: random.Random
    ids: Ids
    session: str
    clock: int = START_MS  # ms
    last: str | None = None  # primary id of the last record written
    first: str | None = None  # primary id of the first body record
    turn_starts: deque[tuple[str | None, int]] = field(default_factory=lambda: deque(maxlen=KEEP_TURNS))
    turn_after: deque[int] = field(default_factory=lambda: deque(maxlen=KEEP_TURNS))  # ms of the record before each
    covered_until: int | None = None  # ms of the last record a compaction covered
    turn_boundary: str | None = None  # primary id of the last record before the kept turns
    compaction_no: int = 0

    def tick(self) -> int:
        self.clock += 50 + int(self.rng.random() * 8000)
        return self.clock


def emit_turn(turn: list[Template], st: State, keep: frozenset[str] | set[str] = frozenset()) -> list[bytes]:
    """One fresh copy of a turn: new ids, new times, its first parent link on the record before it.
    Values in `keep` are ids of records already written (a compaction's references): left as they are."""
    defined = {t.primary for t in turn if t.primary}
    mapping: dict[str, str] = {}
    out: list[bytes] = []
    if turn:
        st.turn_after.append(st.clock)  # (the record before this turn: the clock before its first tick)
    for i, t in enumerate(turn):
        ms = st.tick()
        buf: list[bytes] = []
        for p in t.parts:
            if isinstance(p, bytes):
                buf.append(p)
                continue
            kind, orig = p
            if orig in keep:
                buf.append(b'"' + orig.encode() + b'"')
            elif kind == "id" or (kind == "parent" and orig in defined):
                v = mapping.get(orig)
                if v is None:
                    v = mapping[orig] = st.ids.fresh(orig)
                buf.append(b'"' + v.encode() + b'"')
            elif kind == "parent":
                buf.append(orjson.dumps(st.last))
            elif kind == "session":
                buf.append(b'"' + st.session.encode() + b'"')
            elif kind == "iso":
                buf.append(b'"' + iso(ms).encode() + b'"')
            elif kind == "ms":
                buf.append(str(ms).encode())
            else:
                buf.append(f"{ms / 1000:.3f}".encode())
        out.append(b"".join(buf))
        if t.primary:
            new = mapping.get(t.primary) or t.primary
            if i == 0:
                st.turn_starts.append((new, ms))
            if st.first is None:
                st.first = new
            st.last = new
        elif i == 0:
            st.turn_starts.append((None, ms))
    return out


def split_turns(records: list[dict[str, Any]], starts: Callable[[dict[str, Any]], bool]) -> list[list[dict[str, Any]]]:
    turns: list[list[dict[str, Any]]] = []
    for r in records:
        if starts(r) or not turns:
            turns.append([])
        turns[-1].append(r)
    return turns


def read_jsonl(path: str) -> list[dict[str, Any]]:
    """The objects of a JSONL file; lines that are not one JSON object (a glued line) are left out."""
    out = []
    with open(path, "rb") as f:
        for line in f:
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                out.append(obj)
    return out


def unique_ids(recs: list[dict[str, Any]], key: str) -> bool:
    ids = [r[key] for r in recs if isinstance(r.get(key), str)]
    return len(ids) == len(set(ids))


def kept_start(st: State) -> tuple[str | None, int]:
    """The first record of the oldest of the last KEEP_TURNS turns: where a compaction's kept tail starts."""
    return st.turn_starts[0] if st.turn_starts else (st.last, st.clock)


def covered_end(st: State) -> int:
    """The time (ms) of the last record before the kept turns: the last one a compaction covers."""
    return st.turn_after[0] if st.turn_after else st.clock


# ------------------------------------------------------------------------------------ the formats


@dataclass
class Spec:
    """A format's benchmark file: its header, turns and compaction, and how the file is written."""

    name: str
    ext: str
    keys: Keys
    load: Callable[[], tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]]  # header, turns
    compaction: Callable[[State], list[dict[str, Any]]]
    writer: str = "jsonl"  # jsonl | adk_json | adk_sqlite | openclaw | adk_go_sqlite | adk_go_json | maka | journal
    fixed_ids: Callable[[], frozenset[str]] = frozenset  # ids never renamed (OpenClaw's session id, native run ids)
    # What `--mb` measures: the JSON written ("json"), or the file on disk ("file": a store that
    # compresses its rows is as big as users see it in their folder, not as its JSON).
    size_of: str = "json"
    compactions: int = COMPACTIONS  # how many are written (0: the format has none, NextClaw's legacy store)
    in_force: int | None = None  # how many the loader holds as checkpoints, when not all (maka: the store's one)
    version: int = GENERATOR_VERSION  # in the file's name: bumped alone where only this format's output changed


def _p(*parts: str) -> str:
    return os.path.join(*parts)


def _real(kind: str) -> list[str]:
    d = _p(SHARED, "real_sessions", kind)
    return sorted(_p(d, f) for f in os.listdir(d) if f.endswith(".jsonl")) if os.path.isdir(d) else []


def _require(paths: list[str], what: str) -> list[str]:
    found = [p for p in paths if os.path.exists(p)]
    if not found:
        raise SystemExit(f"no source for {what}: looked for {', '.join(paths) or 'files'}")
    return found


# pi ------------------------------------------------------------------------------------------------

PI_CORPUS = _p(SHARED, "peers", "pi", "corpus", "normal.jsonl")
PI_KEYS = Keys(ids=frozenset({"id", "toolCallId", "firstKeptEntryId"}), parents=frozenset({"parentId"}), primary="id")


def _pi_summaries() -> list[str]:
    out = []
    for path in _real("pi"):
        out += [r["summary"] for r in read_jsonl(path) if r.get("type") == "compaction" and isinstance(r.get("summary"), str)]
    return out or ["## Goal\n(no summary in the sources)"]


def _pi_load() -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    corpus = read_jsonl(_require([PI_CORPUS], "pi's v3 header")[0])
    header = [r for r in corpus if r.get("type") in ("session", "model_change", "thinking_level_change")][:3]
    body: list[dict[str, Any]] = []
    for path in _require(_real("pi"), "pi (real_sessions/pi)"):
        for r in read_jsonl(path):
            if r.get("type") in ("session", "compaction"):
                continue
            # pi's v1 -> v3 migration: every entry gets an id and the previous entry as parent.
            body.append({"type": r.get("type"), "id": f"{len(body):08x}", "parentId": f"{len(body) - 1:08x}"}
                        | {k: v for k, v in r.items() if k not in ("type", "id", "parentId")})
    return header, split_turns(body, lambda r: r.get("type") == "message" and r.get("message", {}).get("role") == "user")


def _pi_compaction(st: State) -> list[dict[str, Any]]:
    tmpl = next(r for r in read_jsonl(PI_CORPUS) if r.get("type") == "compaction")
    summaries = _pi_summaries()
    kept, _ = kept_start(st)
    return [tmpl | {"id": "cmp00000", "parentId": st.last, "firstKeptEntryId": kept,
                    "summary": summaries[st.compaction_no % len(summaries)],
                    "tokensBefore": 120_000 + int(st.rng.random() * 60_000)}]


# Claude Code --------------------------------------------------------------------------------------

CC_CORPUS = _p(SHARED, "peers", "claude_code", "corpus", "manual_compact.jsonl")
CC_KEYS = Keys(
    ids=frozenset({"uuid", "id", "tool_use_id", "toolUseID", "parentToolUseID", "sourceToolAssistantUUID",
                   "promptId", "requestId", "messageId", "leafUuid"}),
    parents=frozenset({"parentUuid", "logicalParentUuid"}),
    primary="uuid",
    session=frozenset({"sessionId", "session_id"}),
)


def _cc_prompt(r: dict[str, Any]) -> bool:
    if r.get("type") != "user" or r.get("isMeta") or r.get("isCompactSummary"):
        return False
    content = (r.get("message") or {}).get("content")
    return isinstance(content, str) or (isinstance(content, list) and not any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content))


def _cc_load() -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    body: list[dict[str, Any]] = []
    for path in _require([*_real("claude_code"), CC_CORPUS], "Claude Code"):
        if not unique_ids(read_jsonl(path), "uuid"):
            continue  # a fixture with trimmed ids (one uuid on many lines), not a transcript's shape
        body += [r for r in read_jsonl(path) if r.get("subtype") != "compact_boundary" and not r.get("isCompactSummary")]
    return [], split_turns(body, _cc_prompt)


def _cc_compaction(st: State) -> list[dict[str, Any]]:
    recs = read_jsonl(CC_CORPUS)
    boundary = dict(next(r for r in recs if r.get("subtype") == "compact_boundary"))
    summary = next(r for r in recs if r.get("isCompactSummary"))
    meta = {k: v for k, v in boundary["compactMetadata"].items() if k not in ("preservedSegment", "preservedMessages")}
    boundary |= {"compactMetadata": meta | {"trigger": "auto", "preTokens": 150_000 + int(st.rng.random() * 30_000)},
                 "logicalParentUuid": st.last, "uuid": "b0000000-0000-4000-8000-000000000000"}
    text = summary["message"]["content"]
    # Each compaction summarizes anew: its number inside the summary's body (after "Summary:"), as
    # the same body twice is a compaction that carried the previous summary forward.
    mark = f"(compaction {st.compaction_no + 1} of this session)"
    if isinstance(text, str):
        text = text.replace("\nSummary:\n", f"\nSummary:\n{mark}\n", 1) if "\nSummary:\n" in text else f"{text}\n\n{mark}"
    return [boundary, summary | {"parentUuid": boundary["uuid"], "uuid": "c0000000-0000-4000-8000-000000000000",
                                 "message": summary["message"] | {"content": text}}]


# Codex --------------------------------------------------------------------------------------------

CODEX_CORPUS = _p(SHARED, "peers", "codex", "corpus", "auto_compact.jsonl")
CODEX_KEYS = Keys(ids=frozenset({"call_id", "turn_id", "id"}), session=frozenset())


def _codex_load() -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    paths = _require(_real("codex"), "Codex (real_sessions/codex)")
    biggest = max(paths, key=os.path.getsize)
    header = [r for r in read_jsonl(biggest) if r.get("type") == "session_meta"][:1]
    body: list[dict[str, Any]] = []
    for path in paths:
        body += [r for r in read_jsonl(path) if r.get("type") not in ("session_meta", "compacted")
                 and (r.get("payload") or {}).get("type") != "context_compacted"]
    return header, split_turns(body, lambda r: (r.get("payload") or {}).get("type") == "task_started")


def _codex_compaction(st: State) -> list[dict[str, Any]]:
    src = max(_real("codex"), key=os.path.getsize)
    recs = read_jsonl(src)
    compacted = next((r for r in recs if r.get("type") == "compacted"), None) or next(
        r for r in read_jsonl(CODEX_CORPUS) if r.get("type") == "compacted")
    marker = next((r for r in recs if (r.get("payload") or {}).get("type") == "context_compacted"),
                  {"timestamp": "", "type": "event_msg", "payload": {"type": "context_compacted"}})
    # Each compaction summarizes anew: its number in its summary (the message, and a remote
    # compaction's item in the replacement history), as the same summary twice is one that
    # carried the previous summary forward.
    mark = f" (compaction {st.compaction_no + 1} of this session)"
    p = dict(compacted["payload"])
    if isinstance(p.get("message"), str):
        p["message"] += mark
    if isinstance(p.get("replacement_history"), list):
        p["replacement_history"] = [
            it | {"encrypted_content": it["encrypted_content"] + mark}
            if isinstance(it, dict) and it.get("type") == "compaction" and isinstance(it.get("encrypted_content"), str) else it
            for it in p["replacement_history"]
        ]
    return [compacted | {"payload": p}, marker]


# native -------------------------------------------------------------------------------------------

NATIVE_DIR = _p(REPO, "sample_sessions", "native")
NATIVE_KEYS = Keys(ids=frozenset({"id", "call_id", "boundary"}), primary="id", times=frozenset({"ts"}))


def _native_sources() -> list[str]:
    return sorted(_p(NATIVE_DIR, f) for f in os.listdir(NATIVE_DIR) if f.endswith(".jsonl")) if os.path.isdir(NATIVE_DIR) else []


def _native_load() -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    paths = _require(_native_sources(), "native (sample_sessions/native)")
    header: list[dict[str, Any]] = []
    runs: dict[str, dict[str, Any]] = {}
    body: list[dict[str, Any]] = []
    for path in paths:
        for r in read_jsonl(path):
            if r.get("type") == "ledger" and not header:
                header.append(r)
            elif r.get("type") == "run":
                runs.setdefault(str(r.get("id")), r)
            elif r.get("type") == "message":
                body.append(r)
    return header + list(runs.values()), split_turns(body, lambda r: r.get("role") == "user")


def _native_run_ids() -> frozenset[str]:
    """Run ids stay: messages name their run, and the header holds each run once."""
    return frozenset(str(r.get("id")) for p in _native_sources() for r in read_jsonl(p) if r.get("type") == "run")


def _native_compaction(st: State) -> list[dict[str, Any]]:
    path = _p(NATIVE_DIR, "healthy_chained.jsonl")
    tmpl = next(r for r in read_jsonl(path) if r.get("type") == "checkpoint")
    boundary = st.turn_boundary or st.last
    return [tmpl | {"id": f"cp-{st.compaction_no:04d}", "boundary": boundary, "represents": [[st.first, boundary]],
                    "retains": [], "tokens_before": 120_000 + int(st.rng.random() * 60_000)}]


# ADK ------------------------------------------------------------------------------------------------

ADK_DIR = _p(SHARED, "peers", "adk", "corpus")
ADK_KEYS = Keys(ids=frozenset({"id", "invocation_id"}), primary="id")


def _adk_user_prompt(e: dict[str, Any]) -> bool:
    parts = ((e.get("content") or {}).get("parts")) or []
    return e.get("author") == "user" and any(isinstance(p, dict) and p.get("text") for p in parts)


def _adk_is_compaction(e: dict[str, Any]) -> bool:
    return bool((e.get("actions") or {}).get("compaction"))


def _adk_dump_events() -> list[list[dict[str, Any]]]:
    return [_read_json(p).get("events", []) for p in _require(_adk_json_paths(), "ADK JSON dumps")]


def _read_json(path: str) -> Any:
    with open(path, "rb") as f:
        return orjson.loads(f.read())


def _adk_v1_events() -> list[list[dict[str, Any]]]:
    paths = sorted(_p(ADK_DIR, f) for f in os.listdir(ADK_DIR) if f.endswith(".v1.db"))
    out = []
    for p in _require(paths, "ADK v1 databases"):
        con = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
        out.append([orjson.loads(r[0]) for r in con.execute("SELECT event_data FROM events ORDER BY timestamp, id")])
        con.close()
    return out


def _adk_load(source: Callable[[], list[list[dict[str, Any]]]]) -> Callable[[], tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]]:
    def load() -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
        body = [e for events in source() for e in events if not _adk_is_compaction(e)]
        return [], split_turns(body, _adk_user_prompt)

    return load


def _adk_compaction(source: Callable[[], list[list[dict[str, Any]]]]) -> Callable[[State], list[dict[str, Any]]]:
    def build(st: State) -> list[dict[str, Any]]:
        tmpl = next(e for events in source() for e in events if _adk_is_compaction(e))
        start = (st.covered_until + 1) if st.covered_until is not None else START_MS
        # ADK's window ends at an event stamped end_timestamp (apps/compaction.py: the summarized
        # events' last), so the range ends on the last covered event's own time, not between two.
        end = max(start, covered_end(st))
        st.covered_until = end
        comp = tmpl["actions"]["compaction"] | {"start_timestamp": start / 1000, "end_timestamp": end / 1000}
        return [tmpl | {"id": "00000000-0000-4000-8000-00000000c0c0", "invocation_id": "00000000-0000-4000-8000-00000000c1c1",
                        "actions": tmpl["actions"] | {"compaction": comp}}]

    return build


# OpenClaw -----------------------------------------------------------------------------------------

OPENCLAW_DB = _p(REPO, "tests", "peers", "openclaw", "corpus", "s1.sqlite")
OPENCLAW_KEYS = Keys(ids=frozenset({"id", "toolCallId", "runId", "idempotencyKey", "itemId", "firstKeptEntryId"}),
                     parents=frozenset({"parentId"}), primary="id")


def _openclaw_rows() -> list[dict[str, Any]]:
    import zstandard

    con = sqlite3.connect(f"file:{_require([OPENCLAW_DB], 'OpenClaw')[0]}?mode=ro", uri=True)
    out = []
    for ej, z, n in con.execute("SELECT event_json, event_zstd, event_utf8_bytes FROM transcript_events ORDER BY seq"):
        raw = ej.encode() if ej is not None else zstandard.ZstdDecompressor().decompress(z, max_output_size=n)
        out.append(orjson.loads(raw))
    con.close()
    return out


def _openclaw_load() -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    rows = _openclaw_rows()
    header = [r for r in rows if r.get("type") in ("session", "model_change", "thinking_level_change")]
    body = [r for r in rows if r not in header and r.get("type") != "compaction"]
    return header, split_turns(body, lambda r: r.get("type") == "message" and (r.get("message") or {}).get("role") == "user")


def _openclaw_compaction(st: State) -> list[dict[str, Any]]:
    tmpl = next(r for r in _openclaw_rows() if r.get("type") == "compaction")
    kept, _ = kept_start(st)
    return [tmpl | {"id": "c0000000-0000-4000-8000-000000000000", "parentId": st.last, "firstKeptEntryId": kept}]


# The seed runtimes (issue 13): adk-go, maka, NextClaw -----------------------------------------------
#
# None of them can be run here and none has a real session file in ../shared: the line shapes are
# those of the store builders the adapters' own tests use, each written from the runtime's types
# (tests/adk_go_store.py: google/adk-go 2918701f storage_session.go and session.go; tests/maka_store.py:
# apache/maka f19eede0 runtime-event.ts, agent-run.ts, history-compact-checkpoint.ts;
# tests/nextclaw_store.py: Peiiii/nextclaw 001fb682 journal utils, NcpMessage, SessionStore). What
# fills them is real: the conversation of pi's real sessions (`real_sessions/pi`), message by message
# (user prompts, assistant text, thinking and tool calls with their arguments, tool results with their
# output and error flag, the provider's usage), put into each runtime's own shapes.

SEED_TOOLS = ("call", "result")


def _pi_conversation() -> list[list[dict[str, Any]]]:
    """pi's real sessions as turns of runtime-neutral messages: {"role": "user", "text"},
    {"role": "assistant", "blocks": [("text"|"thinking", text) | ("call", id, name, args)], "usage"},
    {"role": "tool", "id", "name", "text", "error"}."""
    msgs: list[dict[str, Any]] = []
    for path in _require(_real("pi"), "pi (real_sessions/pi)"):
        for r in read_jsonl(path):
            m = r.get("message") if r.get("type") == "message" else None
            if isinstance(m, dict):
                msgs += _neutral(m)
    return split_turns(msgs, lambda m: m["role"] == "user")


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def _neutral(m: dict[str, Any]) -> list[dict[str, Any]]:
    role = m.get("role")
    if role == "user":
        text = _text_of(m.get("content"))
        return [{"role": "user", "text": text}] if text else []
    if role == "toolResult" and isinstance(m.get("toolCallId"), str):
        return [{"role": "tool", "id": m["toolCallId"], "name": m.get("toolName") or "tool",
                 "text": _text_of(m.get("content")), "error": m.get("isError") is True}]
    if role != "assistant":
        return []
    blocks: list[tuple[Any, ...]] = []
    for b in m.get("content") or []:
        if not isinstance(b, dict):
            continue
        if b.get("type") in ("text", "thinking") and b.get(b["type"]):
            blocks.append((b["type"], b[b["type"]]))
        elif b.get("type") == "toolCall" and isinstance(b.get("id"), str):
            blocks.append(("call", b["id"], b.get("name") or "tool", b.get("arguments") or {}))
    u = m.get("usage") or {}
    usage = {"input": int(u.get("input") or 0) + int(u.get("cacheRead") or 0), "output": int(u.get("output") or 0)}
    return [{"role": "assistant", "blocks": blocks, "usage": usage}] if blocks else []


def _seed_summary(n: int) -> str:
    """A sectioned summary (the template maka admits and NextClaw's compaction asks for), from pi's."""
    body = re.sub(r"(?m)^\s*#+\s*", "- ", _pi_summaries()[n % len(_pi_summaries())])  # its headings as items
    return f"## Goal\n{body}\n\n## Progress\n### Done\n- (see above)\n\n## Next Steps\n1. Continue\n\n## Critical Context\n- (none)"


# adk-go: the events of its GORM store, as its JSON export spells them (camelCase, tests/adk_go_store.export)

ADK_GO_KEYS = Keys(ids=frozenset({"id", "invocationId"}), primary="id")
_GO_UUID = "00000000-0000-4000-8000-{:012x}"


def _adk_go_load() -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    from tests import adk_go_store as go

    actions = orjson.loads(go.actions("pascal"))  # the compaction stack's casing (session.go:245-273)
    turns = []
    n = 0
    for k, turn in enumerate(_pi_conversation()):
        inv = f"e-{k:08x}"
        events = []
        for m in turn:
            n += 1
            e: dict[str, Any] = {"id": _GO_UUID.format(n), "timestamp": START_MS / 1000, "invocationId": inv, "actions": actions}
            if m["role"] == "user":
                e |= {"author": "user", "content": go.text("user", m["text"])}
            elif m["role"] == "tool":
                out = go.response(m["id"], m["name"], {"error" if m["error"] else "output": m["text"]})
                e |= {"author": "coder", "content": out}
            else:
                parts = [{"functionCall": {"id": b[1], "name": b[2], "args": b[3]}} if b[0] == "call"
                         else {"text": b[1], "thought": True} if b[0] == "thinking" else {"text": b[1]} for b in m["blocks"]]
                u = m["usage"]
                e |= {"author": "coder", "content": {"role": "model", "parts": parts},
                      "usageMetadata": {"promptTokenCount": u["input"], "candidatesTokenCount": u["output"],
                                        "totalTokenCount": u["input"] + u["output"]}}
            events.append(e)
        turns.append(events)
    return [], turns


def _adk_go_compaction(st: State) -> list[dict[str, Any]]:
    """An event carrying actions.compaction over the events before the kept turns (summary_event.go:196-212:
    author user, no content, a fresh invocation id), its range inclusive RFC 3339 (session.go:275-364)."""
    from tests import adk_go_store as go

    start = (st.covered_until + 1) if st.covered_until is not None else START_MS
    _, kept_ms = kept_start(st)
    end = max(start, kept_ms - 1)
    st.covered_until = end
    comp = go.compaction(iso(start), iso(end), _seed_summary(st.compaction_no))
    return [{"id": _GO_UUID.format(0xC0C0), "timestamp": START_MS / 1000, "invocationId": "e-c0c0c0c0", "author": "user",
             "actions": orjson.loads(go.actions("pascal", comp))}]


# maka: RuntimeEvents (runtime_events.payload_json), one run per turn, checkpoints in the run ledger

MAKA_KEYS = Keys(ids=frozenset({"id", "invocationId", "runId", "turnId"}), primary="id", times=frozenset({"ts"}))


def _maka_load() -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    turns = []
    n = 0
    for k, turn in enumerate(_pi_conversation()):
        head = {"invocationId": f"inv{k:08x}", "runId": f"run{k:08x}", "sessionId": "s1", "turnId": f"turn{k:08x}", "ts": START_MS, "partial": False}
        events = []
        for m in turn:
            if m["role"] == "user":
                contents = [("user", "user", {"kind": "text", "text": m["text"]})]
            elif m["role"] == "tool":
                res = {"kind": "function_response", "id": m["id"], "name": m["name"], "result": m["text"]}
                contents = [("tool", "tool", res | ({"isError": True} if m["error"] else {}))]
            else:
                contents = [("model", "agent", {"kind": "function_call", "id": b[1], "name": b[2], "args": b[3]} if b[0] == "call"
                             else {"kind": b[0], "text": b[1]}) for b in m["blocks"]]
            for role, author, content in contents:
                n += 1
                events.append({"id": f"ev{n:010x}", **head, "role": role, "author": author, "content": content})
        turns.append(events)
    return [], turns


def _maka_compaction(st: State) -> list[dict[str, Any]]:
    """A checkpoint over the compactable events before the kept turns; its coverage, digest and run are
    filled by the writer, which holds the events (tests/maka_store.Session.checkpoint)."""
    kept, _ = kept_start(st)
    return [{"type": "history_compact_checkpoint_recorded", "id": f"cp{st.compaction_no:010x}", "ts": START_MS,
             "keptFrom": kept, "summary": _seed_summary(st.compaction_no)}]


# NextClaw: the NCP journal (tests/nextclaw_store.Journal), each assistant message streamed then completed

NEXTCLAW_KEYS = Keys(ids=frozenset({"id", "toolCallId", "messageId", "runId"}), times=frozenset({"timestamp", "endedAt"}))
NEXTCLAW_DELTA = 160  # characters per text delta


def _nextclaw_line(etype: str, **payload: Any) -> dict[str, Any]:
    from tests import nextclaw_store as nc

    return {"_type": "event", "version": 1, "seq": 0, "timestamp": iso(START_MS), "event": {"type": etype, "payload": {"sessionId": nc.SID, **payload}}}


def _nextclaw_load() -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    from tests import nextclaw_store as nc

    at = iso(START_MS)
    header = [orjson.loads(nc.Journal().lines[0])]
    turns = []
    n = 0
    for k, turn in enumerate(_pi_conversation()):
        lines: list[dict[str, Any]] = []
        run = f"run-{k:08x}"
        results = {m["id"]: m for m in turn if m["role"] == "tool"}
        done: list[dict[str, Any]] = []  # the streamed message's completion, after its tools' results
        for m in turn:
            if m["role"] == "tool":
                lines.append(_nextclaw_line("message.tool-call-result", toolCallId=m["id"], content=m["text"]))
                continue
            lines += done
            done = []
            n += 1
            mid = f"msg-{n:08x}"
            if m["role"] == "user":
                lines.append(_nextclaw_line("message.sent", message=nc.message(mid, "user", m["text"], at)))
                lines.append(_nextclaw_line("run.started", runId=run, messageId=f"msg-{n + 1:08x}"))
                continue
            parts = []
            for b in m["blocks"]:
                if b[0] == "call":
                    args = orjson.dumps(b[3]).decode()
                    lines += [_nextclaw_line("message.tool-call-start", messageId=mid, toolCallId=b[1], toolName=b[2]),
                              _nextclaw_line("message.tool-call-args", toolCallId=b[1], args=args),
                              _nextclaw_line("message.tool-call-end", toolCallId=b[1])]
                    r = results.get(b[1])
                    parts.append(nc.tool_part(b[1], b[2], b[3], r["text"] if r else None, "result" if r else "call"))
                    continue
                kind = "text" if b[0] == "text" else "reasoning"
                lines.append(_nextclaw_line(f"message.{kind}-start", messageId=mid))
                lines += [_nextclaw_line(f"message.{kind}-delta", messageId=mid, delta=b[1][i : i + NEXTCLAW_DELTA])
                          for i in range(0, len(b[1]), NEXTCLAW_DELTA)]
                parts.append({"type": kind, "text": b[1]})
            done = [_nextclaw_line("message.completed", message=nc.message(mid, "assistant", None, at, parts=parts))]
        lines += done
        lines.append(_nextclaw_line("run.finished", runId=run, endedAt=at))
        turns.append(lines)
    return header, turns


def _nextclaw_compaction(st: State) -> list[dict[str, Any]]:
    """The compaction timeline message (context-compaction.utils.ts:147-166, tests/nextclaw_store.timeline):
    covered until the record before the kept turns."""
    from tests import nextclaw_store as nc

    _, kept_ms = kept_start(st)
    cp = nc.checkpoint(f"ctx-{st.compaction_no:08x}", _seed_summary(st.compaction_no), iso(kept_ms - 1), iso(st.clock + 1),
                       coveredMessageCount=0, coveredSessionMessageCount=0)
    return [_nextclaw_line("message.sent", message=nc.timeline(cp))]


# NextClaw's legacy SessionStore: a metadata line, then one event per message (tests/nextclaw_store.LegacyStore)

NEXTCLAW_LEGACY_KEYS = Keys(ids=frozenset({"id", "tool_call_id"}))


def _nextclaw_legacy_load() -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    from tests import nextclaw_store as nc

    turns = []
    for turn in _pi_conversation():
        store = nc.LegacyStore()
        for m in turn:
            if m["role"] == "user":
                store.add("user", m["text"])
            elif m["role"] == "tool":
                store.result(m["id"], m["name"], m["text"])
            else:
                text = "\n".join(b[1] for b in m["blocks"] if b[0] == "text")
                calls = [b for b in m["blocks"] if b[0] == "call"]
                if calls:
                    store.call(calls[0][1], calls[0][2], calls[0][3], text)
                    msg = store.events[-1]["data"]["message"]
                    msg["tool_calls"] += [{"id": c[1], "type": "function", "function": {"name": c[2], "arguments": orjson.dumps(c[3]).decode()}}
                                          for c in calls[1:]]
                else:
                    store.add("assistant", text)
        turns.append([{"_type": "event", **e} for e in store.events])
    header = [orjson.loads(nc.LegacyStore().lines()[0])]
    return header, turns


def _no_compaction(st: State) -> list[dict[str, Any]]:
    return []  # core's SessionStore has no compaction record (nextclaw_legacy.py)


SPECS: dict[str, Spec] = {
    s.name: s
    for s in (
        Spec("pi", "jsonl", PI_KEYS, _pi_load, _pi_compaction),
        Spec("native", "jsonl", NATIVE_KEYS, _native_load, _native_compaction, fixed_ids=_native_run_ids),
        Spec("claude_code", "jsonl", CC_KEYS, _cc_load, _cc_compaction, version=2),  # v2: each summary's body its own
        Spec("codex", "jsonl", CODEX_KEYS, _codex_load, _codex_compaction, version=2),  # v2: each summary its own
        # v2: each compaction's range ends on its last event's time, as ADK's own do
        Spec("adk_json", "json", ADK_KEYS, _adk_load(_adk_dump_events), _adk_compaction(_adk_dump_events), "adk_json", version=2),
        Spec("adk_sqlite", "db", ADK_KEYS, _adk_load(_adk_v1_events), _adk_compaction(_adk_v1_events), "adk_sqlite", version=2),
        # OpenClaw stores its big rows compressed (about a quarter of their JSON here): `--mb 100`
        # is a 100 MB database, as a user's is, holding some 400 MB of JSON.
        Spec("openclaw", "sqlite", OPENCLAW_KEYS, _openclaw_load, _openclaw_compaction, "openclaw", lambda: frozenset({"s1"}),
             size_of="file"),
        Spec("adk_go_sqlite", "db", ADK_GO_KEYS, _adk_go_load, _adk_go_compaction, "adk_go_sqlite"),
        Spec("adk_go_json", "json", ADK_GO_KEYS, _adk_go_load, _adk_go_compaction, "adk_go_json"),
        Spec("maka", "sqlite", MAKA_KEYS, _maka_load, _maka_compaction, "maka", in_force=1,
             version=2),  # v2: payload_json written as maka writes it (tests/maka_store.canonical)
        Spec("nextclaw", "jsonl", NEXTCLAW_KEYS, _nextclaw_load, _nextclaw_compaction, "journal"),
        Spec("nextclaw_legacy", "jsonl", NEXTCLAW_LEGACY_KEYS, _nextclaw_legacy_load, _no_compaction, "journal", compactions=0),
    )
}


# -------------------------------------------------------------------------------------- the stream


def records(spec: Spec, target_bytes: int, seed: int) -> Iterator[bytes]:
    """The file's records, header first, about `target_bytes` of JSON, ending on a complete turn."""
    rng = random.Random(seed)
    ids = Ids(seed)
    st = State(rng=rng, ids=ids, session=ids.uuid())
    header, turns = spec.load()
    fixed = spec.fixed_ids()
    if not turns:
        raise SystemExit(f"{spec.name}: the sources hold no turns")
    yield from emit_turn([compile_record(r, spec.keys) for r in header], st, fixed)
    st.first = None
    compiled = [[compile_record(r, spec.keys, body=True) for r in turn] for turn in turns]
    written = 0
    marks = [target_bytes * (i + 1) // (spec.compactions + 1) for i in range(spec.compactions)]
    i = rng.randrange(len(compiled))
    prev_last: deque[str | None] = deque(maxlen=KEEP_TURNS)
    while written < target_bytes:
        if marks and written >= marks[0]:
            marks.pop(0)
            st.turn_boundary = prev_last[0] if prev_last else st.last
            keep = {v for v in (st.last, st.first, st.turn_boundary, *(s for s, _ in st.turn_starts)) if v} | fixed
            group = [compile_record(numbered(r, st.compaction_no), spec.keys) for r in spec.compaction(st)]
            for line in emit_turn(group, st, keep):
                written += len(line) + 1
                yield line
            st.compaction_no += 1
        prev_last.append(st.last)
        for line in emit_turn(compiled[i % len(compiled)], st, fixed):
            written += len(line) + 1
            yield line
        i += 1


def numbered(obj: Any, n: int) -> Any:
    """A compaction record whose summary texts end with its number: a summary repeated word for word
    would be a summary carried forward (a finding), which these are not."""
    if isinstance(obj, dict):
        return {k: (v + f"\n\n(compaction {n + 1} of this session)" if k in _SUMMARY_KEYS and isinstance(v, str) and v
                    else numbered(v, n)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [numbered(v, n) for v in obj]
    return obj


_SUMMARY_KEYS = frozenset({"summary", "text"})  # pi/OpenClaw/native summary; ADK's part text; Claude's below
# Claude Code's summary is the user message's string content; Codex's compacted message is `message`.


def default_path(fmt: str, mb: float, seed: int = DEFAULT_SEED) -> str:
    spec = SPECS[fmt]
    size = f"{mb:g}mb" + ("-on-disk" if spec.size_of == "file" else "")
    return _p(OUT, f"{fmt}-{size}-s{seed}-v{spec.version}.{spec.ext}")


def generate(fmt: str, mb: float, seed: int = DEFAULT_SEED, path: str | None = None) -> str:
    spec = SPECS[fmt]
    path = path or default_path(fmt, mb, seed)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = path + ".tmp"
    if os.path.exists(tmp):
        os.remove(tmp)
    target = int(mb * MB)
    if spec.size_of == "file":
        target = _json_for_file_bytes(spec, target, seed, tmp)
    _write(spec, tmp, records(spec, target, seed), seed)
    os.replace(tmp, path)
    return path


def _write(spec: Spec, path: str, stream: Iterator[bytes], seed: int) -> None:
    {"jsonl": _write_jsonl, "adk_json": _write_adk_json, "adk_sqlite": _write_adk_sqlite, "openclaw": _write_openclaw,
     "adk_go_sqlite": _write_adk_go_sqlite, "adk_go_json": _write_adk_go_json, "maka": _write_maka, "journal": _write_journal}[
        spec.writer
    ](path, stream, seed)


def _json_for_file_bytes(spec: Spec, file_bytes: int, seed: int, scratch: str) -> int:
    """The JSON to write for a file of about `file_bytes` on disk: two smaller files written first
    give the file's bytes per byte of JSON and its fixed part (the same turns, round and round,
    so the ratio holds for the big one)."""
    small = max(2 * MB, file_bytes // 16)
    sizes = []
    for json_bytes in (small, 2 * small):
        _write(spec, scratch, records(spec, json_bytes, seed), seed)
        sizes.append(os.path.getsize(scratch))
        os.remove(scratch)
    per_byte = (sizes[1] - sizes[0]) / small
    fixed = sizes[0] - per_byte * small
    return max(small, int((file_bytes - fixed) / per_byte))


def _write_jsonl(path: str, stream: Iterator[bytes], seed: int) -> None:
    with open(path, "wb") as f:
        for line in stream:
            f.write(line + b"\n")


def _write_adk_json(path: str, stream: Iterator[bytes], seed: int) -> None:
    """ADK's session dump (Session.model_dump_json): one object, its events one per line."""
    head = _read_json(_adk_json_paths()[0])
    ev = b"{}"
    with open(path, "wb") as f:
        f.write(b'{"app_name":' + orjson.dumps(head["app_name"]) + b',"events":[\n')
        for n, ev in enumerate(stream):
            f.write((b",\n" if n else b"") + ev)
        last = orjson.loads(ev).get("timestamp", START_MS / 1000)
        f.write(b"\n],\"id\":\"bench-session-" + str(seed).encode() + b'","last_update_time":' + orjson.dumps(last)
                + b',"state":{},"user_id":' + orjson.dumps(head["user_id"]) + b"}\n")


def _adk_json_paths() -> list[str]:
    """The corpus's session dumps (`NAME.json`; not INDEX.json, the oracles or the request logs)."""
    names = os.listdir(ADK_DIR) if os.path.isdir(ADK_DIR) else []
    return sorted(_p(ADK_DIR, f) for f in names if f.endswith(".json") and f.count(".") == 1 and f != "INDEX.json")


def _write_adk_sqlite(path: str, stream: Iterator[bytes], seed: int) -> None:
    """ADK's DatabaseSessionService v1 schema, copied from a corpus database."""
    src_path = sorted(_p(ADK_DIR, f) for f in os.listdir(ADK_DIR) if f.endswith(".v1.db"))[0]
    src = sqlite3.connect(f"file:{src_path}?mode=ro", uri=True)
    ddl = [r[0] for r in src.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")]
    app, user, state, created = src.execute("SELECT app_name, user_id, state, create_time FROM sessions").fetchone()
    meta = src.execute("SELECT key, value FROM adk_internal_metadata").fetchall()
    src.close()
    sid = f"bench-session-{seed}"
    con = sqlite3.connect(path)
    for sql in ddl:
        con.execute(sql)
    con.executemany("INSERT INTO adk_internal_metadata VALUES (?, ?)", meta)
    con.execute("INSERT INTO app_states VALUES (?, '{}', ?)", (app, created))
    con.execute("INSERT INTO user_states VALUES (?, ?, '{}', ?)", (app, user, created))
    last = created
    batch: list[tuple[Any, ...]] = []
    for line in stream:
        ev = orjson.loads(line)
        ts = datetime.fromtimestamp(ev["timestamp"], UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        batch.append((ev["id"], app, user, sid, ev.get("invocation_id") or "", ts, line.decode()))
        last = ts
        if len(batch) >= 2000:
            con.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?)", batch)
            batch.clear()
    con.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?)", batch)
    con.execute("INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?)", (app, user, sid, state, created, last))
    con.commit()
    con.close()


def _octet_length(v: object) -> int | None:
    if isinstance(v, str):
        return len(v.encode())
    return len(v) if isinstance(v, bytes) else None


def _write_openclaw(path: str, stream: Iterator[bytes], seed: int) -> None:
    """Rows into a copy of the corpus store, its transcript tables emptied first."""
    import zstandard

    shutil.copyfile(OPENCLAW_DB, path)
    con = sqlite3.connect(path)
    # The store's triggers call octet_length() (SQLite 3.43); an older SQLite gets it from here.
    con.create_function("octet_length", 1, _octet_length, deterministic=True)
    sid = con.execute("SELECT DISTINCT session_id FROM transcript_events").fetchone()[0]
    # OpenClaw requires navigation_json on a zstd row; the corpus's first one stands for all (not read here).
    nav = con.execute("SELECT navigation_json FROM transcript_events WHERE event_zstd IS NOT NULL LIMIT 1").fetchone()[0]
    for table in ("transcript_events", "transcript_event_identities", "session_transcript_active_events"):
        con.execute(f"DELETE FROM {table}")
    cz = zstandard.ZstdCompressor()
    seq = -1
    leaf = None
    batch: list[tuple[Any, ...]] = []
    created = 0
    for seq, line in enumerate(stream):
        ev = orjson.loads(line)
        leaf = ev.get("id", leaf)
        created = int(datetime.fromisoformat(ev["timestamp"].replace("Z", "+00:00")).timestamp() * 1000)
        if len(line) > OPENCLAW_ZSTD_ABOVE:
            batch.append((sid, seq, None, created, cz.compress(line), len(line), nav))
        else:
            batch.append((sid, seq, line.decode(), created, None, len(line), None))
        if len(batch) >= 2000:
            con.executemany("INSERT INTO transcript_events VALUES (?, ?, ?, ?, ?, ?, ?)", batch)
            batch.clear()
    con.executemany("INSERT INTO transcript_events VALUES (?, ?, ?, ?, ?, ?, ?)", batch)
    con.execute("UPDATE session_transcript_index_state SET indexed_seq=?, leaf_event_id=?, updated_at=? WHERE session_id=?",
                (seq, leaf, created, sid))
    con.commit()
    con.execute("VACUUM")
    con.close()


def _go_time(sec: float) -> str:
    """GORM's SQLite text of a time.Time (tests/adk_go_store.t: microseconds, +00:00)."""
    return datetime.fromtimestamp(sec, UTC).strftime("%Y-%m-%d %H:%M:%S.%f") + "+00:00"


def _write_adk_go_sqlite(path: str, stream: Iterator[bytes], seed: int) -> None:
    """adk-go's GORM tables (tests/adk_go_store.store), one row per event as createStorageEvent writes it."""
    from tests import adk_go_store as go

    rows = []
    for line in stream:
        e = orjson.loads(line)
        rows.append(go.ev(e["id"], e["invocationId"], e["author"], _go_time(e["timestamp"]), e.get("content"),
                          usage=e.get("usageMetadata"), raw_actions=orjson.dumps(e["actions"])))
    go.store(path, {f"bench-session-{seed}": rows})


def _write_adk_go_json(path: str, stream: Iterator[bytes], seed: int) -> None:
    """adk-go's JSON export on main (tests/adk_go_store.export): a list of events, RFC 3339 times."""
    with open(path, "wb") as f:
        f.write(b"[")
        for n, line in enumerate(stream):
            e = orjson.loads(line)
            e["timestamp"] = iso(round(e["timestamp"] * 1000))
            f.write((b",\n" if n else b"\n") + orjson.dumps(e))
        f.write(b"\n]\n")


def _write_maka(path: str, stream: Iterator[bytes], seed: int) -> None:
    """maka's runtime.sqlite (tests/maka_store.write): the events, one run header per run, and each
    checkpoint recorded in the run after it (as test_maka.two_turns does), over the compactable events
    before its kept turns, with the digest buildHistoryCompactCheckpoint gives them."""
    from tests import maka_store as mk

    s = mk.Session(sid="s1")
    pending: list[dict[str, Any]] = []
    for line in stream:
        e = orjson.loads(line)
        if e.get("type") == "history_compact_checkpoint_recorded":
            pending.append(e)
            continue
        rid = e["runId"]
        if rid not in s.runs:
            s.run(rid, e["turnId"])
            s.runs[rid] |= {"invocationId": e["invocationId"], "createdAt": e["ts"], "updatedAt": e["ts"]}
        for cp in pending:
            covered = [x["id"] for x in s.compactable()]
            count = covered.index(cp["keptFrom"]) if cp["keptFrom"] in covered else len(covered)
            s.t = cp["ts"] - 500
            s.checkpoint(cp["id"], rid, count, summary=cp["summary"])
            s.projection = cp["id"]
        pending.clear()
        s.events.append(e)
    mk.write(path, s)


def _write_journal(path: str, stream: Iterator[bytes], seed: int) -> None:
    """NextClaw's JSONL stores: event lines numbered by `seq` from 1, as the store appends them."""
    seq = 0
    with open(path, "wb") as f:
        for line in stream:
            obj = orjson.loads(line)
            if obj.get("_type") == "event":
                seq += 1
                obj["seq"] = seq
                line = orjson.dumps(obj)
            f.write(line + b"\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--format", default="all", help=f"one of {', '.join(SPECS)}, a comma list, or all")
    ap.add_argument("--mb", type=float, default=DEFAULT_MB)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--out", help="output path (one format only)")
    ns = ap.parse_args(argv)
    fmts = list(SPECS) if ns.format == "all" else ns.format.split(",")
    bad = [f for f in fmts if f not in SPECS]
    if bad:
        print(f"unknown format {', '.join(bad)}; formats: {', '.join(SPECS)}", file=sys.stderr)
        return 2
    for fmt in fmts:
        path = generate(fmt, ns.mb, ns.seed, ns.out if len(fmts) == 1 else None)
        print(f"{fmt}: {os.path.relpath(path)} ({os.path.getsize(path) / MB:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
