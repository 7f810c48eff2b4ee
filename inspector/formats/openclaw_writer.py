"""OpenClaw's write-back (DESIGN §3; docs/runtimes/openclaw.md §6): pi's `compaction` entry
(`pi_writer.compaction_entry`, the entry OpenClaw's context builder reads back as the latest
window boundary) inserted as the session's next `transcript_events` row, with its
`transcript_event_identities` row, in one transaction. Nothing existing is updated.

Every rule is OpenClaw 2026.9.6's own (the npm package `openclaw@2026.9.6`, `dist/`; the GitHub
repository is too big to bring here, docs/runtimes/openclaw.md):

- seq: the session's `max(seq) + 1` (`readNextTranscriptSeq`,
  session-accessor.sqlite-transcript-state-BGrlGphn.mjs:119-124), read inside the transaction;
- the row: the entry's JSON text in `event_json`, `event_zstd` NULL, `event_utf8_bytes` its UTF-8
  length where the database is UTF-8, `navigation_json` NULL — OpenClaw's own uncompressed
  ("identity") payload (`prepareTranscriptPayload`, transcript-payload-qsg5dB6v.mjs:598-607), which
  every reader takes (`transcriptEventJsonSql` = coalesce(event_json, …), :651-658);
  `created_at` the entry's timestamp in epoch ms (`appendTranscriptEvent`,
  session-accessor.sqlite-transcript-store-CFksbmAY.mjs:184, `readEventTimestamp`,
  session-accessor.sqlite-read-DG0i0-yW.mjs:715-722);
- the identity row: (event id, seq, type, parentId, no idempotency key) (`readTranscriptEventIdentity`,
  transcript-store:443-452; the inserter :143-153; a compaction has no message, so no key);
- the derived index (`session_transcript_index_state`, active events, full-text rows) is not
  touched: OpenClaw rebuilds it when its `indexed_seq` is not the latest seq
  (`sessionTranscriptProjectionNeedsReconcile`, session-transcript-index-UaRlRUAw.mjs:403-406;
  `reconcileSessionTranscriptIndexInTransaction`, :586-595), its leaf then being the tree's
  (`visitProjectionSource`, :122-175), i.e. our entry. The loader reads the leaf the same way
  (`openclaw_sqlite._set_leaf`).

Refused: a store whose `schema_meta` is not the agent schema version 23
(`OPENCLAW_AGENT_SCHEMA_VERSION`, openclaw-agent-db-contract-DzsRD6Fl.mjs:2), a session with no
`session_windows` row (the rows' foreign key) or moved to cold storage (OpenClaw refuses to append
there: `assertSessionTranscriptHot`, session-cold-storage-state-BcO2Rrog.mjs:41-43).

Pure but for `con`: the shell (`inspector.store`) opens, locks, backs up, inserts, verifies.
"""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import datetime
from typing import Any

import orjson

from inspector.formats import pi_writer
from inspector.formats.base import Row, StoreWriter
from inspector.ledger.jsontext import dumps_text
from inspector.ledger.model import Ledger
from inspector.ledger.quoting import quote

SCHEMA_VERSION = 23  # OPENCLAW_AGENT_SCHEMA_VERSION in 2026.9.6
_NEEDED = ("schema_meta", "session_windows", "transcript_events", "transcript_event_identities")

def refusal(led: Ledger) -> str | None:
    """The entry is pi's: pi's session-level rules; and a row OpenClaw cannot parse, which it reads
    past only while its transcript index is current: our row leaves the index behind, OpenClaw
    rebuilds it, and stops on that row (docs/runtimes/openclaw.md §9)."""
    latent = next((d for d in led.diagnostics if d.problem == "unparsed_row"), None)
    if latent is not None:
        return (
            f"row {latent.line} of the session is not JSON OpenClaw can parse: it reads past it only while its transcript "
            "index is current, and a written row makes it rebuild the index and stop there; repair that row first"
        )
    return pi_writer.refusal(led)
compaction_entry = pi_writer.compaction_entry


def _octet_length(value: Any) -> int | None:
    """SQLite's octet_length(X) (3.43): the bytes of X's text (UTF-8) or of a blob."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return len(value)
    return len(str(value).encode("utf-8", "surrogatepass"))


def provide_octet_length(con: sqlite3.Connection) -> None:
    """OpenClaw's CHECKs on `transcript_events` call octet_length(), which SQLite has only since
    3.43 (node's has it): on an older SQLite the statement cannot even be prepared, so give this
    connection the same function, so that the schema's own CHECKs judge the row."""
    try:
        con.execute("SELECT octet_length('x')")
    except sqlite3.OperationalError:
        con.create_function("octet_length", 1, _octet_length, deterministic=True)


def store_refusal(con: sqlite3.Connection, led: Ledger) -> str | None:
    """Why this store cannot take the rows, or None."""
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    missing = [t for t in _NEEDED if t not in tables]
    if missing:
        return f"not an OpenClaw agent store this tool can write: no {', '.join(missing)} table"
    meta = con.execute("SELECT role, schema_version, app_version FROM schema_meta WHERE meta_key='primary'").fetchone()
    if meta is None or meta[0] != "agent" or meta[1] != SCHEMA_VERSION:
        found = "no primary schema_meta row" if meta is None else f"role {quote(meta[0])}, schema version {quote(meta[1])} (OpenClaw {quote(meta[2])})"
        return (
            f"the store's schema is {found}; this tool writes only OpenClaw's agent schema version {SCHEMA_VERSION} "
            "(OpenClaw 2026.9.6), whose rows it knows OpenClaw reads back"
        )
    if con.execute("SELECT 1 FROM session_windows WHERE session_id=?", (led.session_id,)).fetchone() is None:
        return f"session {quote(led.session_id)} has no session_windows row, which its transcript rows must name"
    if "session_transcript_cold_archives" in tables and con.execute(
        "SELECT 1 FROM session_transcript_cold_archives WHERE session_id=?", (led.session_id,)
    ).fetchone():
        return f"session {quote(led.session_id)} is in OpenClaw's cold storage: OpenClaw itself appends to it only once it is restored"
    return None


def _epoch_ms(timestamp: str) -> int:
    return int(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp() * 1000)


def next_seq(con: sqlite3.Connection, session_id: str | None) -> int:
    row = con.execute("SELECT max(seq) FROM transcript_events WHERE session_id=?", (session_id,)).fetchone()
    return (row[0] + 1) if row and row[0] is not None else 0


def rows(entry: dict[str, Any], lines: list[dict[str, Any]], led: Ledger, con: sqlite3.Connection) -> list[Row]:
    """The entry's `transcript_events` row and its `transcript_event_identities` row."""
    provide_octet_length(con)
    text = dumps_text(entry)
    utf8 = con.execute("PRAGMA encoding").fetchone()[0] == "UTF-8"
    seq, created = next_seq(con, led.session_id), _epoch_ms(entry["timestamp"])
    return [
        Row(
            "transcript_events",
            {
                "session_id": led.session_id,
                "seq": seq,
                "event_json": text,
                "created_at": created,
                "event_zstd": None,
                "event_utf8_bytes": len(text.encode("utf-8")) if utf8 else None,
                "navigation_json": None,
            },
        ),
        Row(
            "transcript_event_identities",
            {
                "session_id": led.session_id,
                "event_id": entry["id"],
                "seq": seq,
                "event_type": entry["type"],
                "parent_id": entry["parentId"],
                "message_idempotency_key": None,
                "created_at": created,
            },
        ),
    ]


def state(con: sqlite3.Connection, led: Ledger) -> str:
    """A digest of the session's transcript rows (seq and stored payload, in seq order): any row
    OpenClaw appended, rewrote or removed since the analysis changes it."""
    h = hashlib.sha256()
    n = 0
    for seq, text, blob in con.execute(
        "SELECT seq, CAST(event_json AS BLOB), event_zstd FROM transcript_events WHERE session_id=? ORDER BY seq",
        (led.session_id,),
    ):
        n += 1
        hash_row(h, seq, text, blob)
    return f"{n}:{h.hexdigest()}"


def hash_row(h: Any, seq: Any, text: Any, blob: Any) -> None:
    """One row (seq, `event_json` as bytes, `event_zstd`) into the digest `state` takes: the
    loader takes it on its own pass over the rows, and a follower continues it with new rows. A
    column of another SQLite type (a damaged store's number or text in `event_zstd`) is taken as
    its text, its type named beside the lengths (so no BLOB of the same bytes digests as it)."""
    t, t_type = _column_bytes(text)
    b, b_type = _column_bytes(blob)
    head = [seq, len(t) if t is not None else None, len(b) if b is not None else None]
    if t_type or b_type:
        head += [t_type, b_type]
    h.update(orjson.dumps(head))
    h.update(t if t is not None else b"")
    h.update(b if b is not None else b"")


def _column_bytes(v: Any) -> tuple[bytes | None, str]:
    """A column's value as the row digest takes it, and the name of its type when it is neither
    a BLOB nor NULL."""
    if v is None or type(v) is bytes:
        return v, ""
    if isinstance(v, bytearray | memoryview):
        return bytes(v), ""
    return str(v).encode("utf-8", "surrogatepass"), type(v).__name__


STORE = StoreWriter(refusal=store_refusal, rows=rows, state=state, functions=provide_octet_length)
