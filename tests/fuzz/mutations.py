"""Seeded, deterministic mutations of a session file on disk.

A mutation is `(name, seed)`: `apply(path, name, seed, ctx)` rewrites the file at `path` the same
way every time. Three stages, applied in this order whatever order they were drawn in:
JSON-level ones (a record's fields: wrong types, missing fields, id collisions, parent cycles,
deep nesting, a huge value; for an ADK database the JSON of one row), SQLite ones (corrupt pages,
a dropped table, wrong column types, invalid UTF-8 in a row, a WAL file present), then byte-level
ones (truncate, flip bytes, invalid UTF-8, NUL, glue/split/duplicate/delete/reorder lines, CRLF,
BOM). `locked` changes nothing on disk: it asks the runner to hold a write lock on the database
while the command runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fuzz import corpus

# The keys the adapters read: a substitution lands on one of these most of the time.
ADAPTER_KEYS: frozenset[str] = frozenset(
    {
        "type", "role", "id", "parentId", "parentUuid", "logicalParentUuid", "uuid", "content", "text",
        "message", "payload", "call_id", "usage", "timestamp", "firstKeptEntryId", "summary", "version",
        "toolCallId", "toolUseId", "tool_use_id", "stopReason", "stop_reason", "arguments", "input",
        "output", "name", "author", "actions", "compaction", "events", "parts", "function_call",
        "function_response", "invocation_id", "tokensBefore", "input_tokens", "output_tokens", "model",
        "subtype", "isCompactSummary", "compactMetadata", "replacement_history", "start_timestamp",
        "end_timestamp", "compacted_content", "state", "seq", "boundary", "represents", "retains",
        # adk-go (camelCase JSON, PascalCase or camelCase actions)
        "functionCall", "functionResponse", "invocationId", "startTimestamp", "endTimestamp",
        "compactedContent", "excludedEvents", "promptTokenCount", "candidatesTokenCount", "Compaction",
        "longRunningToolIds", "branch",
        # maka (RuntimeEvent, AgentRunHeader, the history-compact checkpoint)
        "kind", "runId", "turnId", "ts", "modelId", "llmConnectionSlug", "checkpoint", "checkpointId",
        "coverage", "through", "runtimeEventId", "eventCount", "sourceDigest", "providerState",
        "summaryFormat", "headAnchor", "phase", "modelVisibility", "data", "result", "args",
        # NextClaw (journal entries, NCP events and messages, ContextCompactionCheckpoint)
        "_type", "event", "messageId", "delta", "toolName", "status", "metadata", "nextclaw_timeline_kind",
        "coveredUntil", "updatedAt", "retainedMessageIds", "preservedUserMessageIds", "summaryDiagnostics",
        "recovery", "finishReason", "attemptCount", "continuationMessageId", "last_context_compaction",
        # NextClaw's legacy store (SessionStore events, OpenAI-style messages)
        "tool_calls", "tool_call_id", "function", "reasoning_content", "message_count",
    }
)  # fmt: skip
ID_PARENT: tuple[tuple[str, str], ...] = (("id", "parentId"), ("uuid", "parentUuid"), ("id", "parent"))
# Past what orjson writes (254) and Python reaches (about 1000) but within what the readers take
# (1024), and past that (a diagnostic on the line).
DEEP_DEPTHS: tuple[int, ...] = (300, 1000, 10_000, 20_000, 100_000)


@dataclass(slots=True)
class Context:
    """What a materialized case asks of the runner beyond the file itself."""

    hold_lock: bool = False


Mutator = Callable[[Path, random.Random, Context], None]


@dataclass(frozen=True, slots=True)
class Mutation:
    name: str
    stage: int  # 0 JSON, 1 SQLite, 2 bytes, 3 run time
    kinds: frozenset[str]  # the seed kinds it applies to
    weight: float
    run: Mutator


TEXT_KINDS = frozenset({"pi", "native", "claude_code", "codex", "adk_json", "adk_go_json", "nextclaw", "nextclaw_legacy"})
JSONL_KINDS = frozenset({"pi", "native", "claude_code", "codex", "nextclaw", "nextclaw_legacy"})
SQLITE_KINDS = corpus.SQLITE_KINDS
# The columns of each SQLite store that hold a record's JSON per row: ADK Python's events
# (v1), OpenClaw's transcript, adk-go's events (content, actions, usage), maka's runtime events,
# run headers, run ledger and projection.
JSON_COLUMNS: tuple[tuple[str, str], ...] = (
    ("events", "event_data"), ("transcript_events", "event_json"),
    ("events", "content"), ("events", "actions"), ("events", "usage_metadata"),
    ("runtime_events", "payload_json"), ("core_agent_runs", "record_json"),
    ("core_agent_run_events", "record_json"), ("core_agent_run_projections", "event_json"),
)  # fmt: skip
JSON_TABLES: tuple[str, ...] = tuple(dict.fromkeys(t for t, _ in JSON_COLUMNS))
ALL_KINDS = TEXT_KINDS | SQLITE_KINDS
REGISTRY: dict[str, Mutation] = {}


def mutation(stage: int, kinds: frozenset[str], weight: float = 1.0) -> Callable[[Mutator], Mutator]:
    def register(fn: Mutator) -> Mutator:
        name = fn.__name__.removeprefix("m_")
        REGISTRY[name] = Mutation(name, stage, kinds, weight, fn)
        return fn

    return register


def apply(path: Path, muts: list[tuple[str, int]], ctx: Context) -> None:
    for name, seed in sorted(muts, key=lambda m: REGISTRY[m[0]].stage):
        with contextlib.suppress(sqlite3.DatabaseError):  # an earlier mutation left no database: a no-op
            REGISTRY[name].run(path, random.Random(f"{name}:{seed}"), ctx)


def choose(rng: random.Random, kind: str, *, allow_huge: bool = True) -> list[tuple[str, int]]:
    """One to three mutations for a seed of this kind."""
    pool = [m for m in REGISTRY.values() if kind in m.kinds and (allow_huge or m.name != "huge_line")]
    n = rng.choice((1, 1, 2, 2, 3))
    picked = rng.choices(pool, weights=[m.weight for m in pool], k=n)
    return [(m.name, rng.randrange(1 << 30)) for m in picked]


# ---------------------------------------------------------------------------------------- lines


def split_lines(data: bytes) -> list[bytes]:
    """The file's lines, each with its newline (the last one may have none)."""
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _edit_lines(path: Path, fn: Callable[[list[bytes]], list[bytes]]) -> None:
    lines = split_lines(path.read_bytes())
    if lines:
        path.write_bytes(b"".join(fn(lines)))


# ---------------------------------------------------------------------------------------- JSON values

SUBSTITUTES: tuple[Any, ...] = (
    None, True, False, 0, -1, 7, 2**64 + 1, -(2**63) - 1, 10**30, 1.5, -0.0, 1e308, "", "x", "message",
    "user", "toolResult", "compaction", "\u0000", "\ud800", [], [1, "a"], [None], {}, {"type": "x"},
    {"role": {"a": 1}}, [[[]]],
)  # fmt: skip


def _nodes(value: Any, path: tuple[Any, ...] = (), limit: int = 4000) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every (key path, value) under value, breadth first, at most `limit` of them."""
    queue: list[tuple[tuple[Any, ...], Any]] = [(path, value)]
    seen = 0
    while queue and seen < limit:
        p, v = queue.pop(0)
        seen += 1
        yield p, v
        if isinstance(v, dict):
            queue += [((*p, k), c) for k, c in v.items()]
        elif isinstance(v, list):
            queue += [((*p, i), c) for i, c in enumerate(v)]


def pick_path(rng: random.Random, value: Any) -> tuple[Any, ...] | None:
    """A key path inside value (never the root), biased to the keys the adapters read."""
    paths = [p for p, _ in _nodes(value) if p]
    if not paths:
        return None
    weights = [8.0 if isinstance(p[-1], str) and p[-1] in ADAPTER_KEYS else 1.0 for p in paths]
    return rng.choices(paths, weights=weights, k=1)[0]


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        value = value[k]
    return value


def _set(value: Any, path: tuple[Any, ...], new: Any) -> None:
    _get(value, path[:-1])[path[-1]] = new


class _Deep:
    """A placeholder serialized as a valid JSON value nested `depth` deep."""

    def __init__(self, depth: int, obj: bool) -> None:
        self.depth, self.obj = depth, obj

    def text(self) -> str:
        if self.obj:
            return '{"a":' * self.depth + "1" + "}" * self.depth
        return "[" * self.depth + "]" * self.depth


def _dumps(value: Any, indent: int | None, ascii_only: bool = False, escape_surrogates: bool = False) -> bytes:
    """JSON text for value, with any _Deep placeholder spliced in (json.dumps would recurse); a
    lone surrogate as bytes that are not UTF-8 or (`escape_surrogates`) as JSON's escape of it."""
    deep: list[_Deep] = []

    def default(o: Any) -> Any:
        if isinstance(o, _Deep):
            deep.append(o)
            return f"@@deep{len(deep) - 1}@@"
        raise TypeError(type(o).__name__)

    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only, default=default)
    for i, d in enumerate(deep):
        text = text.replace(f'"@@deep{i}@@"', d.text(), 1)
    return text.encode("utf-8", "backslashreplace" if escape_surrogates else "surrogatepass")


class _Doc:
    """The JSON values of a file: one per line (JSONL), or the whole file (an ADK JSON dump)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        data = path.read_bytes()
        self.lines = split_lines(data)
        # An ADK JSON dump is one value over many lines; JSONL has one value per line.
        self.whole = bool(self.lines) and not _is_one_value(self.lines[0]) and _is_one_value(data)
        self.values: dict[int, Any] = {}
        values = [data] if self.whole else self.lines
        for i, raw in enumerate(values):
            value = _loads(raw)
            if value is not _UNREADABLE:
                self.values[i] = value

    def records(self) -> list[tuple[int, tuple[Any, ...], dict[str, Any]]]:
        """Every object that looks like a record: (value index, key path, object)."""
        out = []
        for i, v in self.values.items():
            for p, o in _nodes(v, limit=20000 if self.whole else 200):
                if isinstance(o, dict) and any(k in o for k in ("id", "uuid", "type", "author")):
                    out.append((i, p, o))
        return out

    def save(self, changed: set[int], escape_surrogates: bool = False) -> None:
        if self.whole:
            if 0 in changed:
                self.path.write_bytes(_dumps(self.values[0], 1, escape_surrogates=escape_surrogates) + b"\n")
            return
        lines = list(self.lines)
        for i in changed:
            lines[i] = _dumps(self.values[i], None, escape_surrogates=escape_surrogates) + b"\n"
        self.path.write_bytes(b"".join(lines))


_UNREADABLE = object()


def _loads(data: bytes | str) -> Any:
    """The JSON value, or _UNREADABLE (not JSON, or nested too deep for json to read back)."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return _UNREADABLE


def _is_one_value(data: bytes) -> bool:
    return _loads(data) is not _UNREADABLE


def _one_value(rng: random.Random, doc: _Doc) -> int | None:
    keys = [k for k, v in doc.values.items() if isinstance(v, (dict, list))]
    return rng.choice(keys) if keys else None


@mutation(0, TEXT_KINDS, weight=6)
def m_wrong_type(path: Path, rng: random.Random, ctx: Context) -> None:
    """A field holds another JSON type (null, bool, int, huge int, float, string, list, object)."""
    doc = _Doc(path)
    i = _one_value(rng, doc)
    if i is None:
        return
    p = pick_path(rng, doc.values[i])
    if p is None:
        return
    _set(doc.values[i], p, rng.choice(SUBSTITUTES))
    doc.save({i})


@mutation(0, TEXT_KINDS, weight=2)
def m_lone_surrogate(path: Path, rng: random.Random, ctx: Context) -> None:
    """A string gains a lone surrogate, written as JSON's escape of it (`"\\ud800"`): valid JSON,
    read as it is by JSON.parse (Claude Code, pi, OpenClaw), not UTF-8 when written out again."""
    doc = _Doc(path)
    i = _one_value(rng, doc)
    if i is None:
        return
    strings = [p for p, v in _nodes(doc.values[i]) if p and isinstance(v, str)]
    if not strings:
        return
    p = rng.choice(strings)
    old = _get(doc.values[i], p)
    at = rng.randrange(len(old) + 1)
    _set(doc.values[i], p, old[:at] + rng.choice(("\ud800", "\udfff", "\udc00")) + old[at:])
    doc.save({i}, escape_surrogates=True)


# Where a string names something (an id, a call id, a parent, a tool name, a type / role / kind
# used as a dict key or a set member), and the members of arrays (lists of ids among them): a
# wrong_type draw lands there rarely, so these get their own mutation with containers, numbers,
# booleans, null and huge strings for substitutes, in place of the value or beside it in its array.
ID_KEY_WORDS: tuple[str, ...] = ("id", "uuid", "name", "parent", "ids")
ID_KEYS: frozenset[str] = frozenset(
    {"type", "_type", "role", "kind", "author", "branch", "status", "event", "phase", "subtype", "function", "tool"}
)
ID_SUBSTITUTES: tuple[Any, ...] = (
    None, True, False, 0, 1, -1, 2**64 + 1, 1.5, 1e308, "", ["c1"], [["c1"]], [], [None], {}, {"id": "c1"},
    {"a": [1]}, [{"b": {}}],
)  # fmt: skip
# A list of ids (a key ending in "ids") mostly gets a list with a member of another type.
ID_LIST_SUBSTITUTES: tuple[Any, ...] = (
    [["c1"]], ["c1", ["c1"]], [{"id": "c1"}], ["c1", {}], [7, "c1"], [None, "c1"], [True], [1.5],
)  # fmt: skip


def _id_list(key: Any) -> bool:
    return isinstance(key, str) and key.lower().endswith("ids")


def _id_like(key: Any) -> bool:
    if not isinstance(key, str):
        return False
    low = key.lower()
    return low in ID_KEYS or low.endswith(ID_KEY_WORDS) or "name" in low or "parent" in low


def pick_id_path(rng: random.Random, value: Any) -> tuple[Any, ...] | None:
    """A key path at an id-like position or an array member (never the root); a list of ids and
    its members weigh most."""
    paths, weights = [], []
    for p, _ in _nodes(value):
        if not p:
            continue
        if isinstance(p[-1], int):  # an array member
            w = 12.0 if len(p) >= 2 and _id_like(p[-2]) else 2.0
        elif _id_list(p[-1]):
            w = 20.0
        elif _id_like(p[-1]):
            w = 6.0
        else:
            continue
        paths.append(p)
        weights.append(w)
    return rng.choices(paths, weights=weights, k=1)[0] if paths else None


def id_substitute(rng: random.Random) -> Any:
    if rng.random() < 0.08:  # a huge id: 64 KB to 1 MB
        return "i" * rng.choice((1 << 16, 1 << 20))
    return rng.choice(ID_SUBSTITUTES)


def wrong_id(rng: random.Random, value: Any) -> bool:
    """Set an id-like position or an array member of value to another JSON type, or put that
    beside it in its array; False if value has no such position."""
    p = pick_id_path(rng, value)
    if p is None:
        return False
    new = rng.choice(ID_LIST_SUBSTITUTES) if _id_list(p[-1]) and rng.random() < 0.6 else id_substitute(rng)
    parent = _get(value, p[:-1])
    if isinstance(p[-1], int) and rng.random() < 0.4:
        parent.insert(p[-1] + rng.randrange(2), new)
    elif isinstance(parent.get(p[-1]) if isinstance(parent, dict) else None, list) and rng.random() < 0.4:
        parent[p[-1]].insert(rng.randrange(len(parent[p[-1]]) + 1), new)  # a list of ids gains a member
    else:
        parent[p[-1]] = new
    return True


@mutation(0, TEXT_KINDS, weight=4)
def m_wrong_id(path: Path, rng: random.Random, ctx: Context) -> None:
    """An id, call id, parent id, tool name, type or a member of an array holds another JSON type
    (a list, an object, a number, a boolean, null, a huge string)."""
    doc = _Doc(path)
    i = _one_value(rng, doc)
    if i is not None and wrong_id(rng, doc.values[i]):
        doc.save({i})


@mutation(0, TEXT_KINDS, weight=2)
def m_missing_field(path: Path, rng: random.Random, ctx: Context) -> None:
    doc = _Doc(path)
    i = _one_value(rng, doc)
    if i is None:
        return
    paths = [p for p, _ in _nodes(doc.values[i]) if p and isinstance(p[-1], str)]
    if not paths:
        return
    weights = [8.0 if p[-1] in ADAPTER_KEYS else 1.0 for p in paths]
    p = rng.choices(paths, weights=weights, k=1)[0]
    del _get(doc.values[i], p[:-1])[p[-1]]
    doc.save({i})


@mutation(0, TEXT_KINDS, weight=1.5)
def m_id_collision(path: Path, rng: random.Random, ctx: Context) -> None:
    """Two records share one id."""
    doc = _Doc(path)
    key = rng.choice(("id", "uuid"))
    recs = [(i, o) for i, _, o in doc.records() if key in o]
    if len(recs) < 2:
        return
    (_, a), (j, b) = rng.sample(recs, 2)
    b[key] = a[key]
    doc.save({j})


@mutation(0, TEXT_KINDS, weight=1.5)
def m_parent_cycle(path: Path, rng: random.Random, ctx: Context) -> None:
    """A record's parent is itself or one of its descendants."""
    doc = _Doc(path)
    id_key, parent_key = rng.choice(ID_PARENT)
    recs = [(i, o) for i, _, o in doc.records() if id_key in o and parent_key in o]
    if not recs:
        return
    k = rng.randrange(len(recs))
    i, o = recs[k]
    later = recs[k:]
    o[parent_key] = rng.choice(later)[1][id_key]
    doc.save({i})


@mutation(0, TEXT_KINDS, weight=1.5)
def m_deep_nesting(path: Path, rng: random.Random, ctx: Context) -> None:
    """A valid value nested 300 to 100,000 deep, in place of a field or as a line of its own."""
    deep = _Deep(rng.choice(DEEP_DEPTHS), rng.random() < 0.5)
    doc = _Doc(path)
    i = _one_value(rng, doc)
    if i is None or (not doc.whole and rng.random() < 0.3):
        at = rng.randrange(len(doc.lines) + 1)
        doc.lines.insert(at, deep.text().encode() + b"\n")
        doc.path.write_bytes(b"".join(doc.lines))
        return
    p = pick_path(rng, doc.values[i])
    if p is None:
        return
    _set(doc.values[i], p, deep)
    doc.save({i})


# The string fields a runtime parses as JSON text of their own (Codex's call `arguments`, a tool's
# input or output given as a string): weighted up, as `m_huge_line` weights its text fields.
_JSON_TEXT_KEYS = ("arguments", "input", "output", "content", "text", "args", "result")


def _deep_text(rng: random.Random, value: Any) -> bool:
    """Set a string field of `value` to JSON text nested 300 to 100,000 deep (False: it has none)."""
    strings = [p for p, v in _nodes(value) if p and isinstance(v, str)]
    if not strings:
        return False
    weights = [8.0 if isinstance(p[-1], str) and p[-1] in _JSON_TEXT_KEYS else 1.0 for p in strings]
    p = rng.choices(strings, weights=weights, k=1)[0]
    _set(value, p, _Deep(rng.choice(DEEP_DEPTHS), rng.random() < 0.5).text())
    return True


@mutation(0, TEXT_KINDS, weight=0.8)
def m_deep_text(path: Path, rng: random.Random, ctx: Context) -> None:
    """A string field holds JSON text nested 300 to 100,000 deep (a call's arguments, say, which a reader
    may parse): the value is a plain string, deep only to whoever parses it."""
    doc = _Doc(path)
    i = _one_value(rng, doc)
    if i is not None and _deep_text(rng, doc.values[i]):
        doc.save({i})


@mutation(0, TEXT_KINDS, weight=0.05)
def m_huge_line(path: Path, rng: random.Random, ctx: Context) -> None:
    """A string field tens of MB long (rare: the campaign's memory and time bound)."""
    doc = _Doc(path)
    i = _one_value(rng, doc)
    if i is None:
        return
    strings = [p for p, v in _nodes(doc.values[i]) if p and isinstance(v, str)] or [p for p, _ in _nodes(doc.values[i]) if p]
    if not strings:
        return
    weights = [8.0 if isinstance(p[-1], str) and p[-1] in ("text", "content", "output", "summary") else 1.0 for p in strings]
    p = rng.choices(strings, weights=weights, k=1)[0]
    size = rng.randrange(10, 51) << 20
    word = "lorem ipsum dolor sit amet " * 4
    _set(doc.values[i], p, (word * (size // len(word) + 1))[:size])
    doc.save({i})


def _edit_row(path: Path, rng: random.Random, edit: Callable[[Any], bool]) -> None:
    """`edit` one JSON value of one row of a store's JSON column, in place (False: unchanged)."""
    with _db(path) as con:
        present = [(t, c) for t, c in JSON_COLUMNS if c in _columns(con, t)]
        if not present:
            return
        # One store's one JSON column keeps its draws as before; several: pick one.
        table, col = present[0] if len(present) == 1 else rng.choice(present)
        rows = con.execute(f'SELECT rowid, "{col}" FROM "{table}" WHERE "{col}" IS NOT NULL').fetchall()
        if not rows:
            return
        rowid, text = rng.choice(rows)
        value = _loads(text) if isinstance(text, (str, bytes)) else _UNREADABLE
        if value is _UNREADABLE or not edit(value):
            return
        con.execute(f'UPDATE "{table}" SET "{col}" = ? WHERE rowid = ?', (_dumps(value, None, ascii_only=True).decode(), rowid))


@mutation(0, SQLITE_KINDS, weight=2)
def m_row_wrong_id(path: Path, rng: random.Random, ctx: Context) -> None:
    """One row's JSON gets an id, call id, type, tool name or array member of another JSON type."""
    _edit_row(path, rng, lambda value: wrong_id(rng, value))


@mutation(0, SQLITE_KINDS, weight=3)
def m_row_json(path: Path, rng: random.Random, ctx: Context) -> None:
    """One event row's JSON gets a field of the wrong type (or loses one)."""

    def edit(value: Any) -> bool:
        p = pick_path(rng, value)
        if p is None:
            return False
        if rng.random() < 0.25 and isinstance(p[-1], str):
            del _get(value, p[:-1])[p[-1]]
        else:
            _set(value, p, rng.choice(SUBSTITUTES))
        return True

    _edit_row(path, rng, edit)


@mutation(0, SQLITE_KINDS, weight=0.5)
def m_row_deep_nesting(path: Path, rng: random.Random, ctx: Context) -> None:
    """One row's JSON gets a value nested 300 to 100,000 deep in place of a field (`m_deep_nesting`)."""

    def edit(value: Any) -> bool:
        p = pick_path(rng, value)
        if p is None:
            return False
        _set(value, p, _Deep(rng.choice(DEEP_DEPTHS), rng.random() < 0.5))
        return True

    _edit_row(path, rng, edit)


@mutation(0, SQLITE_KINDS, weight=0.5)
def m_row_deep_text(path: Path, rng: random.Random, ctx: Context) -> None:
    """One row's JSON gets a string field holding JSON text nested 300+ deep (`m_deep_text`)."""
    _edit_row(path, rng, lambda value: _deep_text(rng, value))


@mutation(0, SQLITE_KINDS, weight=1)
def m_row_lone_surrogate(path: Path, rng: random.Random, ctx: Context) -> None:
    """One row's JSON gets a lone surrogate in a string, as JSON's escape of it (`m_lone_surrogate`):
    what JSON.parse (maka, OpenClaw) and Python's json (ADK) read as it is."""

    def edit(value: Any) -> bool:
        strings = [p for p, v in _nodes(value) if p and isinstance(v, str)]
        if not strings:
            return False
        p = rng.choice(strings)
        old = _get(value, p)
        at = rng.randrange(len(old) + 1)
        _set(value, p, old[:at] + rng.choice(("\ud800", "\udfff", "\udc00")) + old[at:])
        return True

    _edit_row(path, rng, edit)


SIDECAR_KINDS = frozenset({"nextclaw"})
SIDECAR_DAMAGE: tuple[str, ...] = ("wrong_type", "missing_field", "truncate", "not_json", "not_an_object", "invalid_utf8", "deep", "absent", "new")


@mutation(0, SIDECAR_KINDS, weight=2)
def m_sidecar(path: Path, rng: random.Random, ctx: Context) -> None:
    """The file read beside the input (NextClaw's <id>.metadata.json) is damaged, removed or
    written where there was none."""
    side = next((p for p in corpus.side_files(path) if p.suffix == ".json"), None)
    if side is None:
        return
    how = rng.choice(SIDECAR_DAMAGE)
    if how == "new" or not side.exists():
        meta = {"_type": "metadata", "version": 1, "created_at": "2026-08-20T09:00:00.000Z", "metadata": {}}
        if rng.random() < 0.5:
            meta["metadata"]["last_context_compaction"] = {"id": rng.choice(("ctx-x", None, 7)), "status": "compressed"}
        side.write_text(json.dumps(meta) + "\n", encoding="utf-8")
        return
    if how == "absent":
        side.unlink()
    elif how == "wrong_type":
        m_wrong_type(side, rng, ctx)
    elif how == "missing_field":
        m_missing_field(side, rng, ctx)
    elif how == "truncate":
        m_truncate(side, rng, ctx)
    elif how == "not_json":
        side.write_bytes(side.read_bytes()[: rng.randrange(1, 40)] + b"\x00{not json")
    elif how == "not_an_object":
        side.write_text(rng.choice(("[]", "null", "7", '"metadata"', '{"_type": "metadata", "metadata": []}')))
    elif how == "invalid_utf8":
        m_invalid_utf8(side, rng, ctx)
    else:
        side.write_text('{"_type": "metadata", "metadata": ' + _Deep(rng.choice(DEEP_DEPTHS), rng.random() < 0.5).text() + "}")


# ---------------------------------------------------------------------------------------- SQLite


class _db:
    """A read-write connection that commits and closes (journal files removed)."""

    def __init__(self, path: Path) -> None:
        self.con = sqlite3.connect(path, isolation_level=None)

    def __enter__(self) -> sqlite3.Connection:
        self.con.execute("BEGIN")
        return self.con

    def __exit__(self, *exc: object) -> None:
        try:
            self.con.execute("COMMIT" if exc[0] is None else "ROLLBACK")
        finally:
            self.con.close()


def _tables(con: sqlite3.Connection) -> list[str]:
    return [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]


def _columns(con: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in con.execute(f'PRAGMA table_info("{table}")')]


def _sqlite_ok(path: Path) -> bool:
    try:
        with _db(path) as con:
            con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except (sqlite3.DatabaseError, UnicodeDecodeError):  # (a damaged schema text)
        return False
    return True


@mutation(1, SQLITE_KINDS, weight=2)
def m_corrupt_pages(path: Path, rng: random.Random, ctx: Context) -> None:
    data = bytearray(path.read_bytes())
    if len(data) < 100:
        return
    page = int.from_bytes(data[16:18], "big") or 65536
    pages = max(1, len(data) // page)
    for _ in range(rng.randint(1, 3)):
        start = rng.randrange(pages) * page
        if rng.random() < 0.5:  # a run of garbage
            at = start + rng.randrange(page)
            n = rng.randint(1, 64)
            data[at : at + n] = bytes(rng.randrange(256) for _ in range(n))[: len(data) - at]
        else:  # a whole page zeroed
            data[start : start + page] = bytes(min(page, len(data) - start))
    path.write_bytes(bytes(data))


@mutation(1, SQLITE_KINDS, weight=1)
def m_drop_table(path: Path, rng: random.Random, ctx: Context) -> None:
    if not _sqlite_ok(path):
        return
    with _db(path) as con:
        tables = _tables(con)
        if tables:
            con.execute(f'DROP TABLE "{rng.choice(tables)}"')


COLUMN_VALUES: tuple[Any, ...] = (None, 0, -1, 2**63 - 1, 1.5, 1e308, "", "x", "{}", "[]", '{"a": 1}', b"\x00\xff", "null")


@mutation(1, SQLITE_KINDS, weight=2)
def m_wrong_column_type(path: Path, rng: random.Random, ctx: Context) -> None:
    if not _sqlite_ok(path):
        return
    with _db(path) as con:
        tables = [t for t in _tables(con) if t in ("events", "sessions", *JSON_TABLES)] or _tables(con)
        if not tables:
            return
        table = rng.choice(tables)
        cols = _columns(con, table)
        rowids = [r[0] for r in con.execute(f'SELECT rowid FROM "{table}"')]
        if not cols or not rowids:
            return
        col = rng.choice(cols)
        with contextlib.suppress(sqlite3.DatabaseError):  # a NOT NULL or key constraint: the row stays
            con.execute(f'UPDATE "{table}" SET "{col}" = ? WHERE rowid = ?', (rng.choice(COLUMN_VALUES), rng.choice(rowids)))


BAD_UTF8: tuple[bytes, ...] = (b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80", b"\xe2\x82")


@mutation(1, SQLITE_KINDS, weight=2)
def m_invalid_utf8_row(path: Path, rng: random.Random, ctx: Context) -> None:
    if not _sqlite_ok(path):
        return
    with _db(path) as con:
        tables = [t for t in JSON_TABLES if t in _tables(con)]
        if not tables:
            return
        table = tables[0] if len(tables) == 1 else rng.choice(tables)
        text_cols = ("event_data", "event_json", "id", "invocation_id", "author", "content", "actions", "payload_json", "event_id", "record_json")
        cols = [c for c in _columns(con, table) if c in text_cols] or _columns(con, table)
        col = rng.choice(cols)
        rows = con.execute(f'SELECT rowid, CAST("{col}" AS BLOB) FROM "{table}"').fetchall()
        if not rows:
            return
        rowid, blob = rng.choice(rows)
        blob = bytes(blob or b"x")
        at = rng.randrange(len(blob) + 1)
        bad = blob[:at] + rng.choice(BAD_UTF8) + blob[at:]
        con.execute(f'UPDATE "{table}" SET "{col}" = CAST(? AS TEXT) WHERE rowid = ?', (bad, rowid))


@mutation(1, SQLITE_KINDS, weight=1)
def m_wal(path: Path, rng: random.Random, ctx: Context) -> None:
    """The database in WAL mode with a -wal file holding frames not yet checkpointed."""
    if not _sqlite_ok(path):
        return
    con = sqlite3.connect(path, isolation_level=None)
    try:
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA wal_autocheckpoint=0")
        tables = [t for t in _tables(con) if t in ("sessions", "session_nodes", *JSON_TABLES)]
        if tables:
            t = rng.choice(tables)
            cols = _columns(con, t)
            if "update_time" in cols:
                con.execute(f'UPDATE "{t}" SET update_time = update_time')
            elif cols:
                con.execute(f'UPDATE "{t}" SET "{cols[0]}" = "{cols[0]}"')
        keep = {s: Path(f"{path}{s}").read_bytes() for s in ("", "-wal") if Path(f"{path}{s}").exists()}
    finally:
        con.close()  # checkpoints and removes the -wal file: put the state before that back
    for suffix, data in keep.items():
        Path(f"{path}{suffix}").write_bytes(data)


@mutation(3, SQLITE_KINDS, weight=1)
def m_locked(path: Path, rng: random.Random, ctx: Context) -> None:
    """Another connection holds a write lock while the command runs."""
    ctx.hold_lock = True


# ---------------------------------------------------------------------------------------- bytes


@mutation(2, ALL_KINDS, weight=2)
def m_truncate(path: Path, rng: random.Random, ctx: Context) -> None:
    data = path.read_bytes()
    cut = 0 if rng.random() < 0.05 else rng.randrange(len(data) + 1)
    path.write_bytes(data[:cut])


@mutation(2, ALL_KINDS, weight=2)
def m_flip_bytes(path: Path, rng: random.Random, ctx: Context) -> None:
    data = bytearray(path.read_bytes())
    if not data:
        return
    for _ in range(rng.randint(1, 8)):
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    path.write_bytes(bytes(data))


@mutation(2, TEXT_KINDS, weight=2)
def m_invalid_utf8(path: Path, rng: random.Random, ctx: Context) -> None:
    data = path.read_bytes()
    at = rng.randrange(len(data) + 1)
    path.write_bytes(data[:at] + rng.choice(BAD_UTF8) + data[at:])


@mutation(2, TEXT_KINDS, weight=1)
def m_nul(path: Path, rng: random.Random, ctx: Context) -> None:
    data = path.read_bytes()
    at = rng.randrange(min(len(data), 8192) + 1) if rng.random() < 0.5 else rng.randrange(len(data) + 1)
    path.write_bytes(data[:at] + b"\x00" * rng.choice((1, 1, 4)) + data[at:])


@mutation(2, TEXT_KINDS, weight=1.5)
def m_glue_lines(path: Path, rng: random.Random, ctx: Context) -> None:
    def glue(lines: list[bytes]) -> list[bytes]:
        if len(lines) < 2:
            return lines
        i = rng.randrange(len(lines) - 1)
        return [*lines[:i], lines[i].rstrip(b"\r\n") + lines[i + 1], *lines[i + 2 :]]

    _edit_lines(path, glue)


@mutation(2, TEXT_KINDS, weight=1.5)
def m_split_line(path: Path, rng: random.Random, ctx: Context) -> None:
    def split(lines: list[bytes]) -> list[bytes]:
        i = rng.randrange(len(lines))
        at = rng.randrange(len(lines[i]) + 1)
        return [*lines[:i], lines[i][:at] + b"\n", lines[i][at:], *lines[i + 1 :]]

    _edit_lines(path, split)


@mutation(2, TEXT_KINDS, weight=1.5)
def m_duplicate_line(path: Path, rng: random.Random, ctx: Context) -> None:
    def dup(lines: list[bytes]) -> list[bytes]:
        i = rng.randrange(len(lines))
        line = lines[i] if lines[i].endswith(b"\n") else lines[i] + b"\n"
        at = rng.randrange(len(lines) + 1)
        return [*lines[:at], line, *lines[at:]]

    _edit_lines(path, dup)


@mutation(2, TEXT_KINDS, weight=1.5)
def m_delete_line(path: Path, rng: random.Random, ctx: Context) -> None:
    def delete(lines: list[bytes]) -> list[bytes]:
        i = rng.randrange(len(lines))
        return lines[:i] + lines[i + 1 + rng.choice((0, 0, 0, rng.randrange(8))) :]

    _edit_lines(path, delete)


@mutation(2, TEXT_KINDS, weight=1.5)
def m_reorder_lines(path: Path, rng: random.Random, ctx: Context) -> None:
    def reorder(lines: list[bytes]) -> list[bytes]:
        lines = [line if line.endswith(b"\n") else line + b"\n" for line in lines]
        if rng.random() < 0.5 and len(lines) >= 2:
            i, j = rng.sample(range(len(lines)), 2)
            lines[i], lines[j] = lines[j], lines[i]
            return lines
        i = rng.randrange(len(lines))
        window = lines[i : i + rng.randint(2, 12)]
        rng.shuffle(window)
        return [*lines[:i], *window, *lines[i + len(window) :]]

    _edit_lines(path, reorder)


@mutation(2, TEXT_KINDS, weight=1)
def m_crlf(path: Path, rng: random.Random, ctx: Context) -> None:
    every = rng.random() < 0.5

    def crlf(lines: list[bytes]) -> list[bytes]:
        return [
            line[:-1] + b"\r\n" if line.endswith(b"\n") and (every or rng.random() < 0.2) else line for line in lines
        ]

    _edit_lines(path, crlf)


@mutation(2, TEXT_KINDS, weight=1)
def m_bom(path: Path, rng: random.Random, ctx: Context) -> None:
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())


# ---------------------------------------------------------------------------------------- specials


def make_special(name: str, folder: Path) -> Path:
    """A non-regular input: a FIFO with no writer, /dev/null, a directory, a symlink loop."""
    target = folder / name
    if name == "fifo":
        os.mkfifo(target)
    elif name == "dev_null":
        return Path(os.devnull)
    elif name == "directory":
        target.mkdir()
        shutil.copy(Path(__file__), target / "not-a-session.jsonl")
    elif name == "symlink_loop":
        os.symlink(folder / f"{name}.b", target)
        os.symlink(target, folder / f"{name}.b")
    else:
        raise ValueError(f"unknown special input {name!r}")
    return target
