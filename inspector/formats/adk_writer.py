"""Google ADK's write-back (DESIGN §3; docs/runtimes/adk.md): one compaction event, the record ADK's
own summarizer appends, inserted through the store's own schema.

Rules, each from google-adk 2.13.0 (paths under `google/adk/`):

- The event is what `LlmEventSummarizer.maybe_summarize_events` returns (apps/llm_event_summarizer.py:
  165-183): `author` "user", a fresh `invocation_id`, `actions.compaction` = `EventCompaction{
  start_timestamp, end_timestamp, compacted_content}` (events/event_actions.py:58-75) whose content
  has role "model" (llm_event_summarizer.py:165), the summarizer's usage as `usage_metadata`.
- The range is inclusive (`_process_compaction_events`, flows/llm_flows/context/_compaction.py:68-130,
  drops every raw event whose timestamp lies in a kept [start, end] and sends the summary at its
  end); a range at least as wide and later subsumes older ones (`_get_compaction_ranges`). So the
  range runs from the session's first timestamp to the last event before the retained tail, and
  stops before a timestamp the tail's first event shares (a tie would swallow it: a hole).
- Rewound events (events/_rewind_events.py:22-61) are dropped before any range is applied
  (flows/llm_flows/context/_contents.py:509-516): the range is placed by the live events and
  compactions only (`formats/adk._rewound` takes the others off the path), and `input_ids` name
  live events only.
- `custom_metadata` (models/llm_response.py:131, inherited by Event) carries what the summary
  stands for, as event id ranges and the ids it was built from (`inspector`): ADK keeps it and never sends it to a model; this tool
  reads it back so a summary rebuilt from source is not taken for one ADK's summarizer rolled.
- SqliteSessionService (sessions/sqlite_session_service.py): the row is `INSERT INTO events (id,
  app_name, user_id, session_id, invocation_id, timestamp, event_data)` (:524-538) with
  `timestamp` the event's epoch float (REAL, :136) and `event_data` =
  `event.model_dump_json(exclude_none=True)` (:536), read back `ORDER BY timestamp DESC, rowid DESC`
  (:348) and reversed.
- DatabaseSessionService schema v1 (sessions/schemas/v1.py:163-223, `StorageEvent.from_event`
  :213-223): the same columns; `timestamp` a naive UTC DATETIME (`timestamp_to_utc_datetime`,
  schemas/shared.py:37-41, stored by SQLAlchemy's SQLite DateTime as "YYYY-MM-DD HH:MM:SS.ffffff");
  `event_data` = `json.dumps(event.model_dump(exclude_none=True, mode="json"))` (DynamicJSON on
  SQLite, shared.py:67-73). `to_event` (:225-241) takes the event's epoch from `event_data`.
  Only `adk_internal_metadata.schema_version` "1" is known (database_session_service.py:571).
- `append_event` also moves `sessions.update_time` (sqlite_session_service.py:540-549); a repair
  inserts and never updates: ADK's stale-session check (:483) compares that column with the
  session it loaded, so the next `get_session` + `append_event` work as before.

Pure apart from reading the store inside the write transaction (`sqlite3` connections only).
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import orjson

from inspector.formats.base import CheckpointDraft, Row, Unwritable
from inspector.ledger.jsontext import dumps, dumps_text, json_dumps
from inspector.ledger.model import Ledger
from inspector.ledger.quoting import quote

SQLITE_COLUMNS = ("id", "app_name", "user_id", "session_id", "invocation_id", "timestamp", "event_data")
KNOWN_SCHEMA_VERSIONS = frozenset({"1"})
META_KEY = "inspector"  # the key of our facts in the event's custom_metadata
# What `EventActions()` dumps with exclude_none (its dict fields default to {}), as ADK's own rows hold.
_EMPTY_ACTIONS = {"state_delta": {}, "artifact_delta": {}, "requested_auth_configs": {}, "requested_tool_confirmations": {}}


# ---------------------------------------------------------------------------------------- the event


def event_refusal(led: Ledger) -> str | None:
    """What keeps a compaction event from being inserted into the session at all (ADK's store and
    adk-go's alike), or None."""
    if led.session_id is None:
        return "the session has no id to insert an event under"
    if not any(r.kind == "message" for r in led.records):
        return "the session has no events to compact"
    return None


def refusal(led: Ledger) -> str | None:
    """What keeps an inserted compaction event from being read by ADK, or None."""
    storage = (led.header or {}).get("storage")
    if storage == "v0":
        return (
            "a DatabaseSessionService v0 store (pickled actions): this tool does not write pickles; "
            "migrate it to schema v1 with ADK's own migration first"
        )
    if (why := event_refusal(led)) is not None:
        return why
    refused = next((d for d in led.diagnostics if d.problem == "resume_refused"), None)
    if refused is not None:  # (get_session validates every stored event and state: one more event changes nothing)
        return f"ADK refuses to load this session whatever is inserted ({refused.message})"
    return None


def _usage(d: CheckpointDraft) -> dict[str, int] | None:
    u = d.usage
    if u is None:
        return None
    prompt = u.input + u.cache_read + u.cache_write
    return {"prompt_token_count": prompt, "candidates_token_count": u.output, "total_token_count": prompt + u.output}


def draft_metadata(d: CheckpointDraft) -> dict[str, Any]:
    """The event's `custom_metadata`: what inspector's record says of itself (ADK's and adk-go's alike)."""
    return {
        META_KEY: {
            "producer": d.producer,
            "represents": d.represents,
            "retains": d.retains,
            "first_kept_id": d.first_kept_id,
            "retained_tail_shape": d.shape,
            "failure_reason": d.failure_reason,
            "tokens_before": d.tokens_before,
            "requests": d.requests,
            "truncated": d.truncated,
        }
    }


def compaction_event(d: CheckpointDraft) -> dict[str, Any]:
    """The event as the draft spells it; `with_range` fills in its timestamps from the session."""
    event: dict[str, Any] = {
        "id": d.entry_id,
        "invocation_id": d.entry_id,
        "author": "user",
        "actions": {
            **_EMPTY_ACTIONS,
            "compaction": {
                "start_timestamp": None,
                "end_timestamp": None,
                "compacted_content": {"parts": [{"text": d.summary}], "role": "model"},
            },
        },
        "custom_metadata": draft_metadata(d),
        "timestamp": _epoch(d.timestamp),
    }
    usage = _usage(d)
    if usage is not None:
        event["usage_metadata"] = usage
    return event


def _epoch(iso: str) -> float:
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return time.time()


def event_range(d: CheckpointDraft, led: Ledger) -> tuple[float, float]:
    """[start, end] of the range the checkpoint replaces: from the first timestamp of the session
    (an earlier compaction's start included) to the last record before the retained tail, short of
    the tail's first timestamp."""
    recs = led.records
    by_id = led.by_id()
    cut = by_id.get(d.first_kept_id) if d.first_kept_id is not None else None
    # What a rewind dropped ADK drops before it applies any range (flows/llm_flows/context/
    # _contents.py:509-516): only the live events and compactions place ours.
    # An event stored without a timestamp ADK stamps when it loads the session (formats/adk.py
    # `STAMPED_AT_LOAD`, events/event.py:153): no range reaches it, so it places none.
    late = set((led.header or {}).get("stamped_at_load") or ())
    head = [r for r in (recs[:cut] if cut is not None else recs) if r.runtime_visible]
    stamps = [float(r.timestamp) for r in head if isinstance(r.timestamp, int | float) and r.seq not in late]
    starts = [
        float(r.checkpoint.details["start_timestamp"])
        for r in head
        if r.checkpoint is not None
        and isinstance(r.checkpoint.details, dict)
        and isinstance(r.checkpoint.details.get("start_timestamp"), int | float)
    ]
    if not stamps and not _ranges(led):
        raise Unwritable("nothing lies before the retained tail: a checkpoint that keeps every event raw has nothing to replace")
    if not stamps:
        raise Unwritable(
            "the retained tail starts at the first event: an ADK compaction removes the events of its range, "
            "and one that removes nothing cannot take the place of the compactions already there"
        )
    start, end = _first_represented(d, led, min(stamps + starts)), max(stamps)
    first = next((r for r in recs[cut:] if r.seq not in late), None) if cut is not None else None
    if first is not None and isinstance(first.timestamp, int | float):
        tail_ts = float(first.timestamp)
        if end >= tail_ts:
            earlier = [t for t in stamps if t < tail_ts]
            if not earlier:
                raise Unwritable(
                    f"every event before the retained tail shares its first timestamp {tail_ts}: an ADK range "
                    "ending there would remove the tail too"
                )
            end = max(earlier)
    wider = _past_overlaps(end, _ranges(led))
    if wider > end:
        _check_covered(d, led, end, wider)
    return start, wider


def _check_covered(d: CheckpointDraft, led: Ledger, end: float, wider: float) -> None:
    """The range had to grow over an existing one (else ADK drops ours inside it): the messages it
    then takes must be ones the summary stands for, or they would be holes."""
    by_id = led.by_id()
    represented = {s for a, b in d.represents if a in by_id and b in by_id for s in range(by_id[a], by_id[b] + 1)}
    represented.update((led.header or {}).get("stamped_at_load") or ())  # (no range reaches them: `event_range`)
    lost = [
        r for r in led.records
        if r.kind == "message" and r.runtime_visible and isinstance(r.timestamp, int | float) and end < r.timestamp <= wider
        and r.seq not in represented
    ]
    if lost:
        raise Unwritable(
            f"the retained tail starts inside an existing compaction range (to {wider}): ADK keeps none of its "
            f"{len(lost)} events raw, and a summary that does not stand for them would leave them holes; "
            "resummarize with a shorter tail (--keep-recent) so that the summary covers that range"
        )


def _first_represented(d: CheckpointDraft, led: Ledger, session_start: float) -> float:
    """Where the range starts: at the first event the summary stands for, so that an older
    summary it does not fold in keeps its own range (ADK keeps partially overlapping summaries
    both); at the session's start when it stands for the first event (it replaces them all)."""
    by_id = led.by_id()
    firsts = [by_id[a] for a, _b in d.represents if a in by_id]
    first_live = next((r.seq for r in led.records if r.runtime_visible), 0)  # (a rewind may drop the first events)
    if not firsts or min(firsts) <= first_live:
        return session_start
    ts = led.records[min(firsts)].timestamp
    return float(ts) if isinstance(ts, int | float) else session_start


def _ranges(led: Ledger) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for r in led.records:
        if not r.runtime_visible:
            continue  # rewound: ADK never applies its range
        d = r.checkpoint.details if r.checkpoint is not None else None
        if isinstance(d, dict) and isinstance(d.get("start_timestamp"), int | float) and isinstance(d.get("end_timestamp"), int | float):
            out.append((float(d["start_timestamp"]), float(d["end_timestamp"])))
    return out


def _past_overlaps(end: float, ranges: list[tuple[float, float]]) -> float:
    """The end, moved to the end of every existing range it reaches into: a wider range would
    subsume ours (ADK drops a range inside a wider one), and the events it removes are gone from
    the request already."""
    moved = True
    while moved:
        moved = False
        for s, e in ranges:
            if s <= end < e:
                end, moved = e, True
    return end


def with_range(event: dict[str, Any], d: CheckpointDraft, led: Ledger) -> list[dict[str, Any]]:
    """The event with its range and a timestamp after every event of the session (ADK reads events
    by timestamp): the one line the checkpoint is. Fills in `event` itself."""
    start, end = event_range(d, led)
    comp = event["actions"]["compaction"]
    comp["start_timestamp"], comp["end_timestamp"] = start, end
    event["custom_metadata"][META_KEY]["input_ids"] = represented_ids(d.represents, led)
    latest = max((float(r.timestamp) for r in led.records if isinstance(r.timestamp, int | float)), default=0.0)
    if event["timestamp"] <= latest:
        event["timestamp"] = latest + 0.001
    return [event]


def represented_ids(ranges: list[list[str]], led: Ledger) -> list[str]:
    """The ids of the messages inside [first id, last id] ranges, in session order: what the
    summary was built from (ADK's `summarizer_input_ids`)."""
    by_id = led.by_id()
    out: list[str] = []
    for first, last in ranges:
        lo, hi = by_id.get(first), by_id.get(last)
        if lo is None or hi is None:
            continue
        out += [r.id for r in led.records[lo : hi + 1] if r.kind == "message" and r.id is not None and r.runtime_visible]
    return out


# ---------------------------------------------------------------------------------------- the store


def _where(led: Ledger) -> tuple[Any, Any, Any]:
    h = led.header or {}
    return h.get("app_name"), h.get("user_id"), led.session_id


def _tables(con: sqlite3.Connection) -> set[str]:
    return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def schema_version(con: sqlite3.Connection) -> str | None:
    """adk_internal_metadata's schema_version (DatabaseSessionService), or None (SqliteSessionService)."""
    if "adk_internal_metadata" not in _tables(con):
        return None
    row = con.execute("SELECT value FROM adk_internal_metadata WHERE key='schema_version'").fetchone()
    return str(row[0]) if row is not None else "(none)"


def store_refusal(con: sqlite3.Connection, led: Ledger) -> str | None:
    tables = _tables(con)
    if not {"sessions", "events"} <= tables:
        return "the store has no sessions/events tables any more"
    version = schema_version(con)
    if version is not None and version not in KNOWN_SCHEMA_VERSIONS:
        return (
            f"its DatabaseSessionService schema version is {version!r}, which this tool does not know "
            f"(it writes SqliteSessionService stores and schema {', '.join(sorted(KNOWN_SCHEMA_VERSIONS))}); nothing written"
        )
    cols = [r[1] for r in con.execute("PRAGMA table_info(events)")]
    if sorted(cols) != sorted(SQLITE_COLUMNS):
        return f"its events table has the columns {', '.join(cols)}, not the ones ADK 2.13 writes ({', '.join(SQLITE_COLUMNS)})"
    app, user, sid = _where(led)
    if con.execute("SELECT 1 FROM sessions WHERE app_name=? AND user_id=? AND id=?", (app, user, sid)).fetchone() is None:
        return f"the session {sid!r} is no longer in the store"
    return None if version is not None else _unordered_event(con, app, user, sid)


def _unordered_event(con: sqlite3.Connection, app: Any, user: Any, sid: Any) -> str | None:
    """An event row whose timestamp column is text or a blob, in a SqliteSessionService store: ADK
    reads the events `ORDER BY timestamp` (sqlite_session_service.py:348), and SQLite sorts text and
    blobs after every number, so an inserted compaction (a number, now) would read back before that
    event, not as the newest: the verification would take the write back. Said before writing."""
    row = con.execute(
        "SELECT id, timestamp FROM events WHERE app_name=? AND user_id=? AND session_id=? "
        "AND typeof(timestamp) IN ('text', 'blob') ORDER BY rowid LIMIT 1",
        (app, user, sid),
    ).fetchone()
    if row is None:
        return None
    return (
        f"event {quote(row[0])}: its timestamp column is {quote(row[1])}, not a number: ADK orders it after any event "
        "inserted now, so the compaction would not be the newest; nothing written"
    )


def _v1_datetime(ts: float) -> str:
    """`timestamp_to_utc_datetime` as SQLAlchemy's SQLite DateTime stores it."""
    return datetime.fromtimestamp(ts, tz=UTC).replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S.%f")


def rows(entry: dict[str, Any], lines: list[dict[str, Any]], led: Ledger, con: sqlite3.Connection) -> list[Row]:
    """One events row per event, in the column spelling of the store's own service."""
    app, user, sid = _where(led)
    v1 = schema_version(con) is not None
    out: list[Row] = []
    for ev in lines:
        ts = float(ev["timestamp"])
        data = json_dumps(ev) if v1 else dumps_text(ev)
        out.append(
            Row(
                "events",
                {
                    "id": ev["id"],
                    "app_name": app,
                    "user_id": user,
                    "session_id": sid,
                    "invocation_id": ev["invocation_id"],
                    "timestamp": _v1_datetime(ts) if v1 else ts,
                    "event_data": data,
                },
            )
        )
    return out


def session_state(con: sqlite3.Connection, led: Ledger) -> str:
    """A digest of the session's rows: its sessions row and every event row, in append order."""
    return state_of(con, *_where(led))


def state_of(con: sqlite3.Connection, app: Any, user: Any, sid: Any) -> str:
    """Every column of the session's rows, text read as its bytes (whatever the connection's
    text factory), hashed: the loader's read-only connection and the writer's agree. The event
    rows come first, in append order, so a follower continues the digest with each new row
    (`events_digest`, `state_with`)."""
    return state_with(con, app, user, sid, events_digest(con, app, user, sid, hashlib.sha256()))


def events_digest(con: sqlite3.Connection, app: Any, user: Any, sid: Any, h: Any, after: int = 0, upto: int | None = None) -> Any:
    """`h` continued with the session's event rows whose rowid is in (after, upto], by rowid."""
    # By rowid (the unary + keeps SQLite off the session's index, which would visit every row).
    q = "SELECT rowid, * FROM events WHERE +app_name=? AND +user_id=? AND +session_id=? AND rowid>?"
    args: tuple[Any, ...] = (app, user, sid, after)
    if upto is not None:
        q, args = q + " AND rowid<=?", (*args, upto)
    with _as_bytes(con):
        for row in con.execute(q + " ORDER BY rowid", args):
            h.update(row_bytes(row))
    return h


def row_bytes(row: tuple[Any, ...]) -> bytes:
    """One row as the digest takes it: its values serialized as they are (marshal version 2, which
    writes no back-references, so equal rows give equal bytes), not their repr: a 20 MB session's
    event JSON escaped into a repr was most of the digest's cost."""
    return marshal.dumps(row, 2)


def state_with(con: sqlite3.Connection, app: Any, user: Any, sid: Any, events: Any) -> str:
    """The digest of the events rows (`events_digest`, left as it is) and then the sessions row."""
    h = events.copy()
    with _as_bytes(con):
        for row in con.execute("SELECT * FROM sessions WHERE app_name=? AND user_id=? AND id=?", (app, user, sid)):
            h.update(row_bytes(row))
    return str(h.hexdigest())


@contextlib.contextmanager
def _as_bytes(con: sqlite3.Connection) -> Iterator[None]:
    factory = con.text_factory
    con.text_factory = bytes
    try:
        yield
    finally:
        con.text_factory = factory


# ---------------------------------------------------------------------------------------- a JSON dump


def dump_copy(data: bytes, lines: list[dict[str, Any]]) -> bytes:
    """A `session.model_dump()` file with the events appended to its `events` list (a dump is one
    JSON object: it is written whole, as a new file)."""
    obj = orjson.loads(data.removeprefix(b"\xef\xbb\xbf"))
    obj["events"] = [*obj["events"], *lines]
    return dumps(obj, orjson.OPT_INDENT_2) + b"\n"
