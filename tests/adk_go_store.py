"""adk-go session stores for the tests, written from adk-go's own types (google/adk-go at
2918701f: session/database/storage_session.go:31-113 for the tables GORM creates, session/session.go
for `EventActions` and `EventCompaction`), never copied from its fixtures.

`store(path, sessions)` writes a SQLite file in GORM's layout; `ev(...)` makes one event row;
`export(events)` the same events as adk-go's JSON export (session.Event MarshalJSON, camelCase).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

# GORM's SQLite DDL for storageSession / storageEvent / the state tables (column names are GORM's
# snake_case of the Go fields; dynamicJSON and stateMap are `text`, gorm_datatypes.go:35, :146).
DDL = """
CREATE TABLE `sessions` (`app_name` text,`user_id` text,`id` text,`state` text,`create_time` datetime,`update_time` datetime,
  PRIMARY KEY (`app_name`,`user_id`,`id`));
CREATE TABLE `events` (`id` text,`app_name` text,`user_id` text,`session_id` text,`invocation_id` text,`author` text,
  `actions` blob,`long_running_tool_ids_json` text,`routes_json` text,`output_json` text,`node_info_json` text,
  `requested_input_json` text,`branch` text,`isolation_scope` text,`timestamp` datetime,`content` text,
  `grounding_metadata` text,`custom_metadata` text,`usage_metadata` text,`citation_metadata` text,`partial` numeric,
  `turn_complete` numeric,`error_code` text,`error_message` text,`interrupted` numeric,
  PRIMARY KEY (`id`,`app_name`,`user_id`,`session_id`),
  CONSTRAINT `fk_sessions_events` FOREIGN KEY (`app_name`,`user_id`,`session_id`) REFERENCES `sessions`(`app_name`,`user_id`,`id`) ON DELETE CASCADE);
CREATE TABLE `app_states` (`app_name` text,`state` text,`update_time` datetime,PRIMARY KEY (`app_name`));
CREATE TABLE `user_states` (`app_name` text,`user_id` text,`state` text,`update_time` datetime,PRIMARY KEY (`app_name`,`user_id`));
"""

BASE = "2026-08-20 10:00:"


def t(sec: float) -> str:
    """GORM's SQLite text for 2026-08-20 10:00:<sec> UTC, microseconds."""
    return f"{BASE}{sec:09.6f}+00:00"


def rfc(sec: float, ns: int = 0) -> str:
    """The same instant as Go's RFC 3339 JSON (nanoseconds optional)."""
    whole = int(sec)
    frac = round((sec - whole) * 1_000_000) * 1000 + ns
    return f"2026-08-20T10:00:{whole:02d}.{frac:09d}Z"


def actions(casing: str = "pascal", compaction: dict[str, Any] | None = None, transfer: str = "") -> bytes:
    """json.Marshal(EventActions): Go field names on the compaction stack (session.go:245-273),
    camelCase after adk-go #1252 (session.go:240-257 @main)."""
    if casing == "pascal":
        a: dict[str, Any] = {"StateDelta": {}, "ArtifactDelta": {}, "RequestedToolConfirmations": None, "SkipSummarization": False, "TransferToAgent": transfer, "Escalate": False}
    else:
        a = {"skipSummarization": False, "transferToAgent": transfer, "escalate": False}
    if compaction is not None:
        a["compaction"] = compaction
    return json.dumps(a).encode()


def compaction(start: str, end: str, summary: str | None, excluded: list[tuple[str, str]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    c: dict[str, Any] = {"startTimestamp": start, "endTimestamp": end, "compactedContent": None if summary is None else {"role": "model", "parts": [{"text": summary}]}}
    if excluded:
        c["excludedEvents"] = [{"invocationId": i, "timestamp": ts} for i, ts in excluded]
    return c


def text(role: str, s: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": s}]}


def call(cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"role": "model", "parts": [{"functionCall": {"id": cid, "name": name, "args": args}}]}


def response(cid: str, name: str, out: Any) -> dict[str, Any]:
    return {"role": "user", "parts": [{"functionResponse": {"id": cid, "name": name, "response": out}}]}


def ev(
    eid: str,
    inv: str,
    author: str,
    ts: str,
    content: dict[str, Any] | None = None,
    *,
    casing: str = "pascal",
    comp: dict[str, Any] | None = None,
    usage: dict[str, Any] | None = None,
    long_running: list[str] | None = None,
    branch: str | None = None,
    scope: str | None = None,
    transfer: str = "",
    raw_actions: bytes | None = None,
) -> dict[str, Any]:
    """One events row as createStorageEvent writes it (storage_session.go:117-230)."""
    return {
        "id": eid,
        "invocation_id": inv,
        "author": author,
        "actions": raw_actions if raw_actions is not None else actions(casing, comp, transfer),
        "long_running_tool_ids_json": json.dumps(long_running) if long_running else None,
        "branch": branch,
        "isolation_scope": scope,
        "timestamp": ts,
        "content": json.dumps(content) if content is not None else None,
        "usage_metadata": json.dumps(usage) if usage is not None else None,
        "partial": 0,
        "turn_complete": 0,
        "interrupted": 0,
    }


def store(path: str, sessions: dict[str, list[dict[str, Any]]], app: str = "app", user: str = "u1") -> str:
    con = sqlite3.connect(path)
    con.executescript(DDL)
    for k, (sid, rows) in enumerate(sessions.items()):
        con.execute("INSERT INTO sessions VALUES (?,?,?,?,?,?)", (app, user, sid, "{}", t(0), t(50 + k)))
        for r in rows:
            cols = ["app_name", "user_id", "session_id", *r]
            con.execute(f"INSERT INTO events ({','.join(cols)}) VALUES ({','.join('?' * len(cols))})", (app, user, sid, *r.values()))
    con.commit()
    con.close()
    return path


def export(rows: list[dict[str, Any]]) -> bytes:
    """The rows as adk-go's JSON export on main (camelCase, RFC 3339 times)."""
    out = []
    for r in rows:
        e: dict[str, Any] = {"id": r["id"], "timestamp": r["timestamp"].replace(" ", "T").replace("+00:00", "Z"), "invocationId": r["invocation_id"], "author": r["author"], "actions": json.loads(r["actions"])}
        if r["content"]:
            e["content"] = json.loads(r["content"])
        if r["usage_metadata"]:
            e["usageMetadata"] = json.loads(r["usage_metadata"])
        if r["long_running_tool_ids_json"]:
            e["longRunningToolIds"] = json.loads(r["long_running_tool_ids_json"])
        out.append(e)
    return json.dumps(out).encode()
