"""adk-go's write-back (DESIGN §3, §5; docs/runtimes/adk-go.md §6): one compaction event, the row
adk-go's own compactor appends, inserted into the GORM SQLite store through the shared database
write-back (`inspector.store.dbwrite`: locked, unchanged since analysed, backed up, one
transaction, verified, undoable).

Rules, from google/adk-go at the compaction stack head `2918701f` (no `@main`: main `0a51e153` has
no compaction at all):

- The event is `newSummaryEvent`'s (internal/compactioninternal/summary_event.go:46-212): `Author`
  "user" (:200), no content, the branch and isolation scope of the first summarized event (:118),
  `Actions.Compaction` = `{StartTimestamp, EndTimestamp, CompactedContent, ExcludedEvents}`
  (:203-209) whose range is the bounding box of the summarized events' timestamps (:81-89), whose
  content is the summary's prose parts with role "model" (:101-108), and whose `ExcludedEvents`
  name, by invocation id and timestamp (session/session.go:361-364), every other event inside that
  range but the ones a rolled-up record already covers (summary_event.go:149-194); the
  summarizer's usage as `UsageMetadata` (:211). `stamp` (compactor.go:204-218) gives it an id,
  the invocation id "e-" + a fresh UUID (never a covered turn's: the sliding window counts
  invocations) and the time of the append; `AppendEvent` truncates that to microseconds
  (session/database/service.go:338-339).
- The range is inclusive and a record covers only events before it in the stream whose timestamp
  lies in it and which it does not name as excluded (apply.go:168-173, :392-408, :545-553): so the
  retained tail and any message kept raw ahead of it are named in `excludedEvents` when they lie
  inside the box, and the event's timestamp is later than every event of the session (the stream is
  `ORDER BY timestamp`, service.go:174-214).
- The row is `createStorageEvent`'s (session/database/storage_session.go:117-229): `actions` =
  `json.Marshal(EventActions)` as a blob (:131-135; a struct literal's nil maps are `null`, keys
  PascalCase but the tagged `compaction`, session/session.go:245-273), `usage_metadata` and
  `custom_metadata` as JSON text when present (:211-222), `branch` / `isolation_scope` NULL when
  empty (:180-185), `partial` / `turn_complete` / `interrupted` false (:194-196); the timestamp as
  the mattn/go-sqlite3 driver writes a `time.Time` (`2006-01-02 15:04:05.999999999-07:00`, UTC).
  Go's encoder escapes `<`, `>`, `&`, U+2028 and U+2029; so does this writer.
- `custom_metadata` (model/llm.go `LLMResponse.CustomMetadata`, stored, never sent to a model)
  carries what the summary stands for, as event id ranges (`inspector`), as the ADK writer does.
- `AppendEvent` also moves `sessions.update_time` (service.go:431-435); a repair inserts and never
  updates: adk-go's stale-session check (:379-389) compares that column with the session it loaded,
  so the next `Get` + `AppendEvent` work as before.
- adk-go honours a record only when the run has compaction configured
  (internal/llminternal/contents_processor.go:52-69): inspector's prediction assumes it is.

Refused: a store written by adk-go main (camelCase `actions`, adk-go #1252), whose `EventActions`
has no `compaction` field (session/session.go:240-257 @main) and so would never read the record;
the JSON export, which adk-go never reads back.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Any

from inspector.formats.adk_writer import META_KEY, draft_metadata, event_refusal, represented_ids
from inspector.formats.base import CheckpointDraft, Row, Unwritable
from inspector.ledger.jsontext import dumps_text
from inspector.ledger.model import Ledger

# The columns the inserted row fills (createStorageEvent, storage_session.go:117-229); any other
# column of a later schema is left NULL, as GORM leaves a field this version does not know.
COLUMNS = (
    "id", "app_name", "user_id", "session_id", "invocation_id", "author", "actions", "branch", "isolation_scope",
    "timestamp", "content", "custom_metadata", "usage_metadata", "partial", "turn_complete", "interrupted",
)  # fmt: skip
_US = 1000  # a microsecond in nanoseconds
# Go's encoding/json escapes these (encode.go's HTMLEscape default and the JS line separators).
_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


# ---------------------------------------------------------------------------------------- the event


def refusal(led: Ledger) -> str | None:
    """What keeps an inserted compaction event from being read by adk-go, or None."""
    if (led.header or {}).get("storage") != "sqlite":
        return (
            "an adk-go JSON export: adk-go never reads an export back (its session service reads only its "
            "database), so a record added to it would not be resumed from; repair the SQLite store it came from"
        )
    return event_refusal(led)


def go_time(ns: int) -> str:
    """A time as Go's JSON writes it (RFC 3339 with nanoseconds, trailing zeros dropped), UTC."""
    secs, frac = divmod(ns, 1_000_000_000)
    base = datetime.fromtimestamp(secs, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return base + (f".{frac:09d}".rstrip("0") if frac else "") + "Z"


def sqlite_time(ns: int) -> str:
    """The same instant as mattn/go-sqlite3 writes a UTC `time.Time` into a datetime column."""
    return go_time(ns).replace("T", " ").removesuffix("Z") + "+00:00"


def _draft_ns(iso: str) -> int:
    try:
        stamp = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        stamp = datetime.now(UTC)
    return round(stamp.timestamp() * 1_000_000) * _US


def _usage(d: CheckpointDraft) -> dict[str, int] | None:
    u = d.usage
    if u is None:
        return None
    prompt = u.input + u.cache_read + u.cache_write
    # genai's GenerateContentResponseUsageMetadata JSON, keys as adk-go's rows hold them (sorted).
    return {"candidatesTokenCount": u.output, "promptTokenCount": prompt, "totalTokenCount": prompt + u.output}


def compaction_event(d: CheckpointDraft) -> dict[str, Any]:
    """The event as the draft spells it; `with_range` fills in its range, holes, branch and time."""
    if not d.summary.strip():
        raise Unwritable("an empty summary: adk-go refuses to record one (summary_event.go:50-56)")
    return {
        "id": d.entry_id,
        "invocation_id": "e-" + d.entry_id,  # (stamp: "e-" + a fresh UUID, compactor.go:212-214)
        "author": "user",
        "branch": "",
        "isolation_scope": "",
        "timestamp": go_time(_draft_ns(d.timestamp)),
        "actions": {
            "StateDelta": None,
            "ArtifactDelta": None,
            "RequestedToolConfirmations": None,
            "SkipSummarization": False,
            "TransferToAgent": "",
            "Escalate": False,
            "compaction": {
                "startTimestamp": None,
                "endTimestamp": None,
                "compactedContent": {"parts": [{"text": d.summary}], "role": "model"},
            },
        },
        "usage_metadata": _usage(d),
        "custom_metadata": draft_metadata(d),
    }


def _ns(r: Any) -> int:
    """A record's time in nanoseconds (adk-go stores microseconds: the float's seconds are exact to one)."""
    return round(float(r.timestamp) * 1_000_000) * _US


def _summarized(d: CheckpointDraft, led: Ledger) -> set[int]:
    """The seqs the record takes out of the request: every event before the retained tail but the
    ones kept raw ahead of it (a recovery's record stands for events its note does not describe, as
    a summary's does), and what an older record among them covers (a rolled-up summary's events are
    represented through it, summary_event.go:149-171)."""
    by_id = led.by_id()
    cut = by_id.get(d.first_kept_id) if d.first_kept_id is not None else None
    kept = {by_id[i] for i in d.retains if i in by_id}
    seqs = {s for s in range(len(led.records) if cut is None else cut) if s not in kept}
    for s in sorted(seqs):
        cp = led.records[s].checkpoint
        det = cp.details if cp is not None and isinstance(cp.details, dict) else {}
        seqs.update(by_id[i] for i in det.get("covers_ids") or () if i in by_id)
    return seqs


def with_range(event: dict[str, Any], d: CheckpointDraft, led: Ledger) -> list[dict[str, Any]]:
    """The event with its range (the box of the summarized events), its holes (every other event in
    the box), the first summarized event's branch and scope, and a time after every event: the one
    row the checkpoint is. Fills in `event` itself."""
    recs = led.records
    seqs = _summarized(d, led)
    window = [recs[s] for s in sorted(seqs) if isinstance(recs[s].timestamp, int | float)]
    if not window:
        raise Unwritable("the summary stands for no event: a record that covers nothing has nothing to replace")
    start, end = min(map(_ns, window)), max(map(_ns, window))
    summarized_keys = {(r.run_id or "", _ns(r) // _US) for r in window if r.checkpoint is None}
    excluded: list[dict[str, str]] = []
    seen: set[tuple[str, int]] = set()
    for r in recs:
        if r.seq in seqs or r.checkpoint is not None or not isinstance(r.timestamp, int | float) or not start <= _ns(r) <= end:
            continue
        key = (r.run_id or "", _ns(r) // _US)
        if key in summarized_keys:
            raise Unwritable(
                f"event {r.id!r} is kept raw inside the summarized range but shares its invocation and time with an "
                "event the summary stands for: adk-go names a hole by those two (session.go:354-364), so it cannot keep one "
                "and drop the other"
            )
        if key not in seen:
            seen.add(key)
            excluded.append({"invocationId": r.run_id or "", "timestamp": go_time(_ns(r))})
    comp = event["actions"]["compaction"]
    comp["startTimestamp"], comp["endTimestamp"] = go_time(start), go_time(end)
    if excluded:
        comp["excludedEvents"] = excluded
    first = (window[0].extra or {}) if window else {}
    event["branch"], event["isolation_scope"] = first.get("branch") or "", first.get("isolation_scope") or ""
    event["custom_metadata"][META_KEY]["input_ids"] = represented_ids(d.represents, led)
    latest = max((_ns(r) for r in recs if isinstance(r.timestamp, int | float)), default=0)
    if _draft_ns(event["timestamp"]) <= latest:
        event["timestamp"] = go_time(latest + _US)
    return [event]


# ---------------------------------------------------------------------------------------- the store


def go_json(v: Any) -> str:
    """`json.Marshal`'s text for a value of plain JSON types, keys in the order given."""
    text = dumps_text(v)
    for ch, esc in _GO_ESCAPES.items():
        if ch in text:
            text = text.replace(ch, esc)
    return text


def store_refusal(con: sqlite3.Connection, led: Ledger) -> str | None:
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not {"sessions", "events"} <= tables:
        return "the store has no sessions/events tables any more"
    cols = {r[1] for r in con.execute("PRAGMA table_info(events)")}
    missing = [c for c in COLUMNS if c not in cols]
    if missing:
        return f"its events table has no {', '.join(missing)} column: not the layout adk-go 2918701f writes (storage_session.go:66-103); nothing written"
    h = led.header or {}
    key = (h.get("app_name"), h.get("user_id"), led.session_id)
    if con.execute("SELECT 1 FROM sessions WHERE app_name=? AND user_id=? AND id=?", key).fetchone() is None:
        return f"the session {led.session_id!r} is no longer in the store"
    return _camel_case(con, key)


def _camel_case(con: sqlite3.Connection, key: tuple[Any, Any, Any]) -> str | None:
    """A session whose events' actions are camelCase was written by adk-go main (#1252), whose
    EventActions has no compaction field: it would read the record as an ordinary empty event."""
    row = con.execute(
        "SELECT CAST(actions AS TEXT) FROM events WHERE app_name=? AND user_id=? AND session_id=? AND actions IS NOT NULL "
        "ORDER BY rowid DESC LIMIT 1",
        key,
    ).fetchone()
    text = str(row[0]) if row is not None and row[0] is not None else ""
    if '"StateDelta"' in text or '"SkipSummarization"' in text or not text.startswith("{"):
        return None
    return (
        "its events' actions are camelCase: written by adk-go main (#1252, 0a51e153), whose EventActions has no "
        "compaction field (session/session.go:240-257 @main), so it would ignore a compaction record; nothing written "
        "(the compaction stack, 2918701f, reads one)"
    )


def rows(entry: dict[str, Any], lines: list[dict[str, Any]], led: Ledger, con: sqlite3.Connection) -> list[Row]:
    """One events row per event, as createStorageEvent fills it."""
    return [Row("events", row_values(ev, led)) for ev in lines]


def row_values(ev: dict[str, Any], led: Ledger) -> dict[str, Any]:
    h = led.header or {}
    ts = ev["timestamp"]
    usage, meta = ev.get("usage_metadata"), ev.get("custom_metadata")
    return {
        "id": ev["id"],
        "app_name": h.get("app_name"),
        "user_id": h.get("user_id"),
        "session_id": led.session_id,
        "invocation_id": ev["invocation_id"],
        "author": ev["author"],
        "actions": go_json(ev["actions"]).encode("utf-8"),
        "branch": ev.get("branch") or None,
        "isolation_scope": ev.get("isolation_scope") or None,
        "timestamp": sqlite_time(_go_ns(ts)),
        "content": None,
        "custom_metadata": go_json(meta) if meta else None,
        "usage_metadata": go_json(usage) if usage is not None else None,
        "partial": 0,
        "turn_complete": 0,
        "interrupted": 0,
    }


def _go_ns(text: str) -> int:
    """`go_time`'s text back to nanoseconds."""
    whole, _, frac = text.removesuffix("Z").partition(".")
    secs = int(datetime.fromisoformat(whole + "+00:00").timestamp())
    return secs * 1_000_000_000 + int(frac.ljust(9, "0") or 0)
