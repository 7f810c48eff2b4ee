"""NextClaw NCP journals for the tests, written from the runtime's own types (Peiiii/nextclaw
001fb682): `NcpAgentSessionJournalEventEntry` / `…MetadataEntry`
(packages/nextclaw-kernel/src/utils/ncp-agent-session-journal.utils.ts:17-23, :53-59), `NcpMessage`
and its parts (packages/ncp-packages/nextclaw-ncp/src/types/message.ts:47-238), NCP event payloads
(…/nextclaw-ncp/src/types/events.types.ts) and `ContextCompactionCheckpoint`
(packages/nextclaw-core/src/features/runtime-context/services/context-compaction.service.ts:16-49)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SID = "agent:main:s1"


def ts(minute: int, second: int = 0) -> str:
    return f"2026-08-20T09:{minute:02d}:{second:02d}.000Z"


def message(
    mid: str,
    role: str,
    text: str | None,
    at: str,
    *,
    parts: list[dict[str, Any]] | None = None,
    status: str = "final",
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    m: dict[str, Any] = {
        "id": mid,
        "sessionId": SID,
        "role": role,
        "status": status,
        "timestamp": at,
        "parts": parts if parts is not None else [{"type": "text", "text": text or ""}],
    }
    if metadata is not None:
        m["metadata"] = metadata
    return m


def tool_part(call: str, name: str, args: Any, result: Any = None, state: str = "result") -> dict[str, Any]:
    p: dict[str, Any] = {
        "type": "tool-invocation",
        "toolCallId": call,
        "toolName": name,
        "state": state,
        "args": args,
    }
    if result is not None:
        p["result"] = result
    return p


def checkpoint(cid: str, summary: str, covered_until: str, updated: str, **fields: Any) -> dict[str, Any]:
    cp: dict[str, Any] = {
        "version": 1,
        "id": cid,
        "status": "compressed",
        "phase": "pre-run",
        "summary": summary,
        "coveredUntil": covered_until,
        "retainedMessageIds": [],
        "preservedUserMessageIds": [],
        "coveredMessageCount": 1,
        "coveredSessionMessageCount": 1,
        "originalEstimatedTokens": 30500,
        "projectedEstimatedTokens": 2100,
        "createdAt": updated,
        "updatedAt": updated,
    }
    cp.update(fields)
    return cp


def timeline(cp: dict[str, Any], mid: str | None = None) -> dict[str, Any]:
    """buildContextCompactionTimelineNcpMessage (context-compaction.utils.ts:147-166)."""
    text = {
        "compressing": "Compressing earlier context",
        "compressed": "Earlier context was auto-compacted",
    }.get(cp["status"], "Context compaction failed")
    return message(
        mid or f"context-compaction-message-{cp['id']}",
        "service",
        text,
        cp["updatedAt"],
        metadata={"nextclaw_timeline_kind": "context_compaction", "checkpoint": cp},
    )


class Journal:
    def __init__(self, agent: str = "main", metadata: dict[str, Any] | None = None) -> None:
        self.lines: list[str] = [
            json.dumps(
                {
                    "_type": "metadata",
                    "version": 1,
                    "created_at": ts(0),
                    "agent_id": agent,
                    "metadata": metadata or {},
                }
            )
        ]
        self.seq = 0

    def event(self, etype: str, at: str, **payload: Any) -> Journal:
        self.seq += 1
        self.lines.append(
            json.dumps(
                {
                    "_type": "event",
                    "version": 1,
                    "seq": self.seq,
                    "timestamp": at,
                    "event": {"type": etype, "payload": {"sessionId": SID, **payload}},
                }
            )
        )
        return self

    def sent(self, m: dict[str, Any]) -> Journal:
        return self.event("message.sent", m["timestamp"], message=m)

    def completed(self, m: dict[str, Any]) -> Journal:
        return self.event("message.completed", m["timestamp"], message=m)

    def raw(self, line: str) -> Journal:
        self.lines.append(line)
        return self

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def write(self, folder: Path, stem: str = "agent_main_s1") -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        p = folder / f"{stem}.jsonl"
        p.write_text(self.text(), encoding="utf-8")
        return p
