"""Builds maka `runtime.sqlite` stores for the tests, from maka's own DDL and types (apache/maka at
f19eede0: packages/storage/src/sqlite-runtime-schema.ts:36-54, sqlite-core-execution-schema.ts:26-59,
packages/core/src/runtime-event.ts:404-434, agent-run.ts:144-175, packages/runtime/src/
history-compact-checkpoint.ts:82-129, agent-run.ts:519-534). Nothing here is copied from maka."""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from inspector.formats.maka import source_digest

DDL = """
CREATE TABLE operational_schema_migrations (scope TEXT PRIMARY KEY, version INTEGER NOT NULL, applied_at INTEGER NOT NULL);
CREATE TABLE runtime_events (
  event_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, invocation_id TEXT NOT NULL, run_id TEXT NOT NULL,
  turn_id TEXT NOT NULL, event_seq INTEGER NOT NULL CHECK (event_seq > 0), event_kind TEXT NOT NULL,
  payload_json TEXT NOT NULL, committed_at INTEGER NOT NULL, UNIQUE (invocation_id, event_seq));
CREATE INDEX runtime_events_by_session ON runtime_events(session_id, committed_at, event_id);
CREATE TABLE core_agent_runs (session_id TEXT NOT NULL, run_id TEXT NOT NULL, created_at INTEGER NOT NULL,
  record_json TEXT NOT NULL, latest_model_call_sequence INTEGER, PRIMARY KEY (session_id, run_id));
CREATE TABLE core_agent_run_events (session_id TEXT NOT NULL, run_id TEXT NOT NULL,
  sequence INTEGER NOT NULL CHECK (sequence >= 0), event_id TEXT NOT NULL, event_type TEXT NOT NULL,
  event_ts INTEGER NOT NULL, record_json TEXT NOT NULL, PRIMARY KEY (session_id, run_id, sequence));
CREATE TABLE core_agent_run_projections (session_id TEXT NOT NULL, event_type TEXT NOT NULL, event_json TEXT,
  PRIMARY KEY (session_id, event_type));
CREATE TABLE session_metadata (session_id TEXT PRIMARY KEY, payload_json TEXT NOT NULL, created_at INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL, name TEXT NOT NULL, backend TEXT NOT NULL, llm_connection_slug TEXT NOT NULL,
  model TEXT NOT NULL);
INSERT INTO operational_schema_migrations VALUES ('runtime', 10, 1), ('core_execution', 1, 1);
"""

SECTIONED_SUMMARY = (
    "## Goal\nRename foo to bar.\n\n## Progress\n### Done\n- Renamed in a.ts\n\n"
    "## Next Steps\n1. Run the tests\n\n## Critical Context\n- a.ts"
)


@dataclass
class Session:
    sid: str = "s1"
    t: int = 1_787_000_000_000
    events: list[dict[str, Any]] = field(default_factory=list)
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    run_events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    connection: str = "codex-main"
    model: str = "gpt-5-codex"
    projection: Any = "absent"  # "absent" | None (NULL row) | a checkpoint id

    def run(self, run_id: str, turn_id: str, model: str | None = None, connection: str | None = None) -> None:
        self.t += 10
        self.runs[run_id] = {
            "runId": run_id,
            "invocationId": f"inv-{run_id}",
            "sessionId": self.sid,
            "turnId": turn_id,
            "status": "completed",
            "backendKind": "ai-sdk",
            "llmConnectionSlug": connection or self.connection,
            "modelId": model or self.model,
            "cwd": "/w",
            "permissionMode": "ask",
            "createdAt": self.t,
            "updatedAt": self.t,
        }

    def event(self, eid: str, run_id: str, role: str, content: dict[str, Any] | None, **extra: Any) -> dict[str, Any]:
        self.t += 1000
        h = self.runs[run_id]
        ev: dict[str, Any] = {
            "id": eid,
            "invocationId": h["invocationId"],
            "runId": run_id,
            "sessionId": self.sid,
            "turnId": h["turnId"],
            "ts": self.t,
            "partial": False,
            "role": role,
            "author": {"user": "user", "model": "agent", "tool": "tool", "system": "system"}[role],
        }
        if content is not None:
            ev["content"] = content
        ev.update(extra)
        self.events.append(ev)
        return ev

    def user(self, eid: str, run_id: str, text: str, **extra: Any) -> dict[str, Any]:
        return self.event(eid, run_id, "user", {"kind": "text", "text": text}, **extra)

    def reply(self, eid: str, run_id: str, text: str, **extra: Any) -> dict[str, Any]:
        return self.event(eid, run_id, "model", {"kind": "text", "text": text}, **extra)

    def call(self, eid: str, run_id: str, call_id: str, name: str = "apply_patch", args: Any = None) -> dict[str, Any]:
        return self.event(eid, run_id, "model", {"kind": "function_call", "id": call_id, "name": name, "args": args or {"path": "a.ts"}})

    def result(self, eid: str, run_id: str, call_id: str, name: str = "apply_patch", result: Any = "ok") -> dict[str, Any]:
        return self.event(eid, run_id, "tool", {"kind": "function_response", "id": call_id, "name": name, "result": result})

    def compactable(self) -> list[dict[str, Any]]:
        out = []
        for e in self.events:
            c = e.get("content")
            if e.get("modelVisibility") == "hidden" or not isinstance(c, dict):
                continue
            if c["kind"] in ("text", "thinking") and not c.get("text"):
                continue
            if c["kind"] == "error" and not c.get("message"):
                continue
            out.append(e)
        return out

    def checkpoint(
        self,
        cid: str,
        run_id: str,
        count: int,
        version: int = 2,
        summary: str = SECTIONED_SUMMARY,
        provider: tuple[str, str] | None = None,
        phase: str | None = None,
        anchor: str | None = None,
        digest: str | None = None,
        previous: str | None = None,
        sectioned: bool = True,
    ) -> dict[str, Any]:
        """A checkpoint over the first `count` compactable events, as buildHistoryCompactCheckpoint
        shapes it, recorded in `run_id`'s run ledger."""
        covered = self.compactable()[:count]
        last = covered[-1]
        self.t += 500
        cp: dict[str, Any] = {
            "kind": "maka.history_compact_checkpoint",
            "version": version,
            "checkpointId": cid,
            "sessionId": self.sid,
            "createdAt": self.t,
            "highWaterName": "runtime_events",
            "highWaterSeq": count,
            "source": {
                "schemaVersion": 1,
                "kind": "runtime_event_projection",
                "policyVersion": "maka.compactable_runtime_event_projection.v1",
                "coverage": {
                    "lowWater": {"ledger": "runtime_event_projection", "streamId": self.sid, "sequence": 0, "eventId": covered[0]["id"]},
                    "highWater": {"ledger": "runtime_event_projection", "streamId": self.sid, "sequence": count - 1, "eventId": last["id"]},
                    "eventCount": count,
                },
            },
            "coverage": {
                "eventCount": count,
                "turnCount": len({e["turnId"] for e in covered}),
                "through": {"runId": last["runId"], "turnId": last["turnId"], "runtimeEventId": last["id"]},
                "sourceDigest": digest or source_digest(covered),
            },
            "limitations": ["Replay-time summary of the covered RuntimeEvent prefix.", "RuntimeEvent ledger remains the source of truth when exact wording matters."],
            "estimatedTokens": 120,
        }
        if phase:
            cp["phase"] = phase
            cp["headAnchor"] = {"runtimeEventId": anchor, "turnId": last["turnId"]}
        if previous:
            cp["previousCheckpointId"] = previous
        if version == 2:
            cp["summary"] = summary
            if sectioned:
                cp["summaryFormat"] = "sections_v1"
        else:
            conn, model = provider or (self.connection, self.model)
            cp["providerState"] = {"kind": "openai_codex_remote_v2", "connectionSlug": conn, "modelId": model, "itemId": f"cmp_{cid}", "encryptedContent": "gAAAA" + "x" * 40}
        h = self.runs[run_id]
        rec = {
            "type": "history_compact_checkpoint_recorded",
            "id": f"ev-{cid}",
            "runId": run_id,
            "sessionId": self.sid,
            "turnId": h["turnId"],
            "ts": self.t,
            "data": {"checkpointId": cid, "highWaterName": "runtime_events", "highWaterSeq": count, "boundaryKind": "historyCompact", "checkpoint": cp},
        }
        self.run_events.append((run_id, rec))
        return cp


def canonical(event: dict[str, Any]) -> str:
    """A RuntimeEvent's `payload_json` as maka writes it: `stableJsonStringify` of the event, JSON.stringify
    over sorted keys, compact, UTF-8 unescaped (apache/maka f19eede0 packages/core/src/canonical-runtime-event.ts:39-52,
    tool-args-identity.ts:45-47; stored by packages/storage/src/sqlite-runtime-store.ts:2723-2765)."""
    text = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text)  # (a lone surrogate: JSON.stringify's escape)


def write(path: str, *sessions: Session, raw_rows: list[tuple[Any, ...]] = ()) -> str:
    con = sqlite3.connect(path)
    con.executescript(DDL)
    for s in sessions:
        seqs: dict[str, int] = {}
        for e in s.events:
            seqs[e["invocationId"]] = seqs.get(e["invocationId"], 0) + 1
            kind = (e.get("content") or {}).get("kind") or e.get("status") or "runtime_fact"
            con.execute(
                "INSERT INTO runtime_events VALUES (?,?,?,?,?,?,?,?,?)",
                (e["id"], s.sid, e["invocationId"], e["runId"], e["turnId"], seqs[e["invocationId"]], kind, canonical(e), e["ts"] + 1),
            )
        for rid, h in s.runs.items():
            con.execute("INSERT INTO core_agent_runs VALUES (?,?,?,?,?)", (s.sid, rid, h["createdAt"], json.dumps(h), None))
        per_run: dict[str, int] = {}
        latest: dict[str, Any] | None = None
        for rid, rec in s.run_events:
            seq = per_run.get(rid, 0)
            per_run[rid] = seq + 1
            con.execute(
                "INSERT INTO core_agent_run_events VALUES (?,?,?,?,?,?,?)",
                (s.sid, rid, seq, rec["id"], rec["type"], rec["ts"], json.dumps(rec)),
            )
            if latest is None or rec["data"]["checkpoint"]["coverage"]["eventCount"] >= latest["data"]["checkpoint"]["coverage"]["eventCount"]:
                latest = rec
        if s.projection is None:
            con.execute("INSERT INTO core_agent_run_projections VALUES (?, 'history_compact_checkpoint_recorded', NULL)", (s.sid,))
        elif s.projection != "absent":
            rec = next(r for _, r in s.run_events if r["data"]["checkpointId"] == s.projection)
            con.execute("INSERT INTO core_agent_run_projections VALUES (?, 'history_compact_checkpoint_recorded', ?)", (s.sid, json.dumps(rec)))
        con.execute(
            "INSERT INTO session_metadata VALUES (?,?,?,?,?,?,?,?)",
            (s.sid, json.dumps({"id": s.sid}), 1, s.t, s.sid, "ai-sdk", s.connection, s.model),
        )
    for row in raw_rows:
        con.execute("INSERT INTO runtime_events VALUES (?,?,?,?,?,?,?,?,?)", row)
    con.commit()
    con.close()
    return path
