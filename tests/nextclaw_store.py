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


# ---------------------------------------------------------------------------------------- the legacy store


class LegacyStore:
    """A `sessions/<key>.jsonl` file of core's `SessionStore` (Peiiii/nextclaw 001fb682,
    packages/nextclaw-core/src/features/session/stores/session.store.ts): `SessionMessage` (:8-13)
    in `SessionEvent`s (:15-20) as `addMessage` makes them (:250-264, the type from the role
    :323-341), written as `save` writes them (:369-394): the metadata line, then one line per event."""

    def __init__(self, agent_id: str = "main") -> None:
        self.agent_id = agent_id
        self.events: list[dict[str, Any]] = []

    def add(self, role: str, content: Any = "", **extra: Any) -> dict[str, Any]:
        seq = len(self.events) + 1
        at = ts(seq // 60, seq % 60)
        msg: dict[str, Any] = {"role": role, "content": content, "timestamp": at, **extra}
        if role == "assistant" and extra.get("tool_calls"):
            kind = "assistant.tool_call"
        elif role == "tool":
            kind = "tool.result"
        else:
            kind = f"message.{role}"
        ev = {"seq": seq, "type": kind, "timestamp": at, "data": {"message": msg}}
        self.events.append(ev)
        return ev

    def call(self, cid: str, name: str, args: dict[str, Any], content: str = "") -> dict[str, Any]:
        fn = {"name": name, "arguments": json.dumps(args)}
        return self.add("assistant", content, tool_calls=[{"id": cid, "type": "function", "function": fn}])

    def result(self, cid: str, name: str, content: str) -> dict[str, Any]:
        return self.add("tool", content, tool_call_id=cid, name=name)

    def lines(self) -> list[str]:
        messages = [e["data"]["message"] for e in self.events]
        meta: dict[str, Any] = {"_type": "metadata", "created_at": ts(0), "updated_at": ts(0), "agent_id": self.agent_id,
                                "message_count": len(messages), "metadata": {}}  # fmt: skip
        if messages:
            meta["last_message_at"] = messages[-1]["timestamp"]
        return [json.dumps(meta)] + [json.dumps({"_type": "event", **e}) for e in self.events]

    def write(self, folder: Path, key: str = "agent_main_s1") -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        p = folder / f"{key}.jsonl"
        p.write_text("\n".join(self.lines()) + "\n", encoding="utf-8")
        return p
