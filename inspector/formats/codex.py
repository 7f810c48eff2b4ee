"""Codex CLI rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`); a repair appends a `compacted`
line and its event (inspector/formats/codex_writer.py, docs/runtimes/codex.md).

Every line is `{timestamp, type, payload}`:

- `session_meta` (the first is the header: session id, cwd, `base_instructions` sent ahead of the
  history), `turn_context` (the model of the turns that follow), `world_state`, ... : meta records.
- `response_item`: the history Codex sends. One item per line: a message (user / developer /
  assistant), `reasoning`, a `function_call` / `custom_tool_call` / `tool_search_call` (an
  assistant message with one tool call) and its `*_output` (a tool message), paired on `call_id`.
- `event_msg`: UI events. `user_message` / `agent_message` repeat what a response item already
  holds (meta, never counted twice); `token_count` carries the usage of the request just answered.
- `compacted {message, replacement_history?}`: a checkpoint. It replaces all earlier history with
  its replacement history (DESIGN §3): earlier items it keeps (matched by id, else by content)
  are retained, the rest is removed, represented by its summary: the `message` (client-side
  compaction, also written in the replacement history as a user message) or an encrypted
  `compaction` item (server-side compaction, empty `message`). Without either, what it removed is
  represented by nothing: a hole. Without a replacement history (older Codex), Codex rebuilds one:
  the user messages (newest first, up to ~20k tokens) then the summary.
- The summarizer's reply is also written as an assistant response item just before `compacted`:
  it is the summary, never sent as a message (`excluded`), so it is not counted twice.
- `event_msg` `thread_rolled_back {num_turns}` drops the last user turns from the history (their
  records leave the path: `inactive`); an `inter_agent_communication` line is model input.

Unknown line and item types are kept and shown, never fatal.
"""

from __future__ import annotations

import bisect
import copy
import dataclasses
import io
import json
import operator
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, count, islice
from typing import Any, BinaryIO

import msgspec

from inspector.formats import appended, codex_lines, codex_resume, codex_writer, fields, heads, parallel
from inspector.formats.base import Format, Runtime, Writer
from inspector.formats.bounded import LARGE_LINE_BYTES, SMALL_VALUE_BYTES
from inspector.formats.codex_heads import DECODER as HEAD_DECODER
from inspector.formats.codex_heads import LineHead, TokensHead
from inspector.formats.fields import json_type
from inspector.formats.jsonl import RawLine, line_object, open_regular, parse_line
from inspector.formats.whole_lines import collector_paused
from inspector.ledger.jsontext import json_dumps
from inspector.ledger.model import (
    MARK_NEVER_SENT,
    MARK_OTHER,
    Block,
    Checkpoint,
    Diagnostic,
    HistoryItem,
    Ledger,
    Message,
    Record,
    RecordIndex,
    RecordSource,
    Route,
    SessionSettings,
    Usage,
    mark_code,
    record_from_fields,
)
from inspector.ledger.quoting import quote

NAME = "codex"
_UNSET = msgspec.UNSET  # (a head field whose key is not there)
_LINE = operator.attrgetter("line")

# Top-level line types that identify a rollout (with a `payload` object).
LINE_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
# Top-level types Codex writes that carry nothing the model is sent.
META_TYPES = frozenset(
    {"session_meta", "turn_context", "event_msg", "world_state", "token_usage_record", "inter_agent_communication_metadata"}
)

CALL_TYPES = frozenset({"function_call", "custom_tool_call", "tool_search_call", "local_shell_call"})
OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output", "local_shell_call_output"})
# Items the model produced that are sent back but pair with nothing (server-side tools).
OPAQUE_ASSISTANT_TYPES = frozenset({"web_search_call", "image_generation_call", "compaction", "compaction_summary"})
SUMMARY_ITEM_TYPES = frozenset({"compaction", "compaction_summary"})

# codex-rs templates/compact/summary_prefix.md: the first words of every client-side summary.
SUMMARY_PREFIX = "Another language model started to solve this problem and produced a summary of its thinking process."
# Session-prefix user messages Codex injects itself; `collect_user_messages` skips them.
_SESSION_PREFIXES = ("<environment_context>", "<user_instructions>", "# agents.md instructions", "<skills_instructions>", "<turn_aborted>")
COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000
NO_SUMMARY_TEXT = "(no summary available)"


def looks_like(obj: Any) -> bool:
    """Content sniffing: a rollout line is `{type, payload}` with one of Codex's line types."""
    return isinstance(obj, dict) and obj.get("type") in LINE_TYPES and isinstance(obj.get("payload"), dict)


def looks_like_damaged(obj: Any) -> bool:
    """A rollout line that lost its payload (or holds another type there): one of Codex's line
    types (no other format writes them) and its `timestamp`; asked only when no line looks whole."""
    return isinstance(obj, dict) and obj.get("type") in LINE_TYPES and "timestamp" in obj


# ---------------------------------------------------------------------------------------- items


def _texts(content: Any) -> list[Block]:
    """Codex content items -> blocks (input_text / output_text / input_image / others kept)."""
    if isinstance(content, str):
        return [Block("text", content)]
    if not isinstance(content, list):
        return []
    out: list[Block] = []
    for c in content:
        if isinstance(c, dict) and isinstance(c.get("text"), str):
            out.append(Block("text", c["text"]))
        elif isinstance(c, dict) and c.get("type") == "input_image":
            out.append(Block("image", raw=c))
        else:
            out.append(Block("other", raw=c))
    return out


def _joined(content: Any, sep: str = "\n") -> str:
    return sep.join(b.text for b in _texts(content) if b.type == "text")


def _output_text(out: Any) -> tuple[str, bool]:
    """A call output's text and whether it reports failure (`{content, success: false}`)."""
    if isinstance(out, str):
        return out, False
    if isinstance(out, dict):
        failed = out.get("success") is False
        if "content" in out:
            c = out["content"]
            return (c if isinstance(c, str) else _joined(c)), failed
        if isinstance(out.get("text"), str):
            return out["text"], failed
        return json_dumps(out, ensure_ascii=False), failed
    if isinstance(out, list):
        return _joined(out), False
    return "" if out is None else json_dumps(out, ensure_ascii=False), False


def _args(raw: Any) -> Any:
    """A call's arguments, parsed when they are a JSON text of sensible size (a huge one is kept
    as the string it is: parsing it could cost many times its size, see `bounded`)."""
    if isinstance(raw, str) and len(raw) <= SMALL_VALUE_BYTES:
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):  # (not JSON, or nested deeper than Python reads: kept as text)
            return raw
    return raw


_ROLES = {"user": "user", "assistant": "assistant", "developer": "system", "system": "system"}
# A message record's fields the mapping reads; the others are kept as its extra fields.
_ITEM_KEYS = frozenset({"type", "role", "content", "id", "call_id", "name", "arguments", "input", "output", "summary"})


def item_message(p: dict[str, Any]) -> Message | None:
    """A response item as a message; None for items the model is never sent (ghost snapshots)
    and for item types this tool does not know (kept as unknown records)."""
    t = p.get("type", "message")
    if t == "message":
        role = p.get("role")
        mapped = _ROLES.get(role) if type(role) is str else None
        if mapped is None:
            return None
        return Message(
            mapped,
            _texts(p.get("content")),
            stop_reason="stop" if mapped == "assistant" else None,
            stop_reason_raw=p.get("phase") if mapped == "assistant" else None,
            source_role=role,
        )
    if t == "reasoning":
        blocks = [Block("thinking", s["text"]) for s in p.get("summary") or [] if isinstance(s, dict) and isinstance(s.get("text"), str)]
        blocks += [Block("thinking", s["text"]) for s in p.get("content") or [] if isinstance(s, dict) and isinstance(s.get("text"), str)]
        if not blocks:
            blocks = [Block("thinking", "", raw={"encrypted_content": bool(p.get("encrypted_content"))})]
        return Message("assistant", blocks, source_role="reasoning")
    if t in CALL_TYPES:
        cid = p.get("call_id") if isinstance(p.get("call_id"), str) else None
        name = p.get("name") if isinstance(p.get("name"), str) else t
        args = _args(p["arguments"]) if "arguments" in p else p.get("input", p.get("action"))
        return Message("assistant", [Block("tool_call", call_id=cid, name=name, args=args)], stop_reason="tool_use", stop_reason_raw=t, source_role=t)
    if t in OUTPUT_TYPES:
        cid = p.get("call_id") if isinstance(p.get("call_id"), str) else None
        text, failed = _output_text(p.get("output", p.get("tools")))
        return Message("tool", [Block("tool_result", text, call_id=cid, is_error=failed)], source_role=t)
    if t in OPAQUE_ASSISTANT_TYPES:
        return Message("assistant", [Block("other", raw=p)], source_role=t)
    if t == "agent_message":
        # A message from another agent of the same run (multi-agent): input to this one.
        return Message("user", _texts(p.get("content")) or [Block("other", raw=p)], source_role=t)
    return None


# ---------------------------------------------------------------------------------- instructions

# Codex 0.169 drops the update_plan tool's guidance from its own (model-provided) instructions
# when that tool is off, its default (`tools.update_plan.enabled`): codex-rs
# `Session::get_prompt_base_instructions` renders the recorded `base_instructions` through
# `prompts/src/update_plan_instructions.rs` when the provenance is `model` and no custom model
# catalog is set; custom instructions (`model_instructions_file`) are sent as recorded.
PLAN_TOOL_HEADINGS = frozenset({"## Planning", "## `update_plan`", "## Plan tool", "## Plan Mode vs update_plan tool"})
PLAN_TOOL_MARKERS = ("You have access to an `update_plan` tool", "When `update_plan` is available, follow this section")
PLAN_TOOL_BULLETS = ("- Use the plan tool ", "- If you create a checklist or task list,")
INSTRUCTIONS_NOTE = (
    "base instructions: session_meta's, without the update_plan tool's sections, as Codex 0.169 sends its "
    "model's own instructions when that tool is off (its default; the file does not record the setting)"
)

# Codex 0.169 resuming a rollout whose session_meta records no base instructions (absent or null: every
# Codex before them, e.g. 0.60-0.87) sends its own for the model it runs (`get_prompt_base_instructions`
# falls back to the model's; observed: the peer rollout without them is sent the built-in prompt).
BUILTIN_INSTRUCTIONS_NOTE = "Codex's built-in instructions for its model (the rollout records none: text and tokens not here)"


def without_plan_tool_guidance(text: str) -> str:
    """Codex's instructions as it sends them with the update_plan tool off: each section under one
    of the plan tool's headings (to the next `#`/`##` heading; a `## Planning` only when it names
    the tool), the "Progress visibility:" note about it, and its bullets (with their indented
    continuation) left out."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    i = 0
    while i < len(lines):
        head = lines[i].rstrip()
        if head in PLAN_TOOL_HEADINGS:
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith(("# ", "## "))), len(lines))
            if head != "## Planning" or any(x.startswith(PLAN_TOOL_MARKERS) for x in lines[i:end]):
                i = end
                continue
        if head == "Progress visibility:" and i + 1 < len(lines) and lines[i + 1].startswith("If update_plan is available"):
            i += 2
            if i < len(lines) and not lines[i].strip():
                i += 1
            continue
        if head.startswith(PLAN_TOOL_BULLETS):
            i += 1
            while i < len(lines) and lines[i].startswith((" ", "\t")):
                i += 1
            continue
        out.append(lines[i])
        i += 1
    return "".join(out)


def sent_instructions(bi: Any) -> tuple[str | None, str | None]:
    """The base instructions Codex sends ahead of the history for a recorded
    `session_meta.base_instructions` (`{text, provenance}`, or a bare text, which Codex 0.169 refuses to
    resume: `codex_lines.base_instructions_problem`),
    and a note when they are not the recorded text: None and a note when the rollout records none
    (Codex sends its model's own, `BUILTIN_INSTRUCTIONS_NOTE`)."""
    if bi is None:
        return None, BUILTIN_INSTRUCTIONS_NOTE
    # (a list is the struct's sequence form, its text first: Codex sends ["X"] and ["X", null] as "X")
    text = bi.get("text") if isinstance(bi, dict) else bi[0] if isinstance(bi, list) and bi else bi
    if not isinstance(text, str) or not text:
        return None, None
    prov = bi.get("provenance") if isinstance(bi, dict) else None
    if isinstance(prov, dict) and prov.get("type") == "model":
        sent = without_plan_tool_guidance(text)
        return sent, INSTRUCTIONS_NOTE if sent != text else None
    return text, None


def _summary_like(text: str) -> bool:
    return text.startswith(SUMMARY_PREFIX)


def _session_prefix(text: str) -> bool:
    return text.lstrip().lower().startswith(_SESSION_PREFIXES)


HistoryKey = str | tuple[Any, ...]


def _key(p: dict[str, Any]) -> HistoryKey:
    """What makes two history items the same item, ids and bookkeeping fields aside. Only ever
    compared with another item's key: a message or call of plain strings is keyed by a tuple of
    them (one per history item of a big rollout: no encoding, and nothing kept but the strings),
    anything else by json's text; equal items take the same path, so they get equal keys, and a
    tuple key never equals a text one."""
    t = p.get("type", "message")
    if t == "message":
        # Texts and the kinds of the other parts: an image Codex re-encoded is still the message.
        c = p.get("content")
        parts = [x.get("text") if isinstance(x, dict) and "text" in x else (x.get("type") if isinstance(x, dict) else x) for x in c] if isinstance(c, list) else c
        role = p.get("role")
        if _plain(role) and _plain(parts):
            return ("message", role, parts)
        if _plain(role) and type(parts) is list and all(_plain(x) for x in parts):
            return ("message", role, tuple(parts))
        return json_dumps(["message", p.get("role"), parts], sort_keys=True, ensure_ascii=False)
    if t in CALL_TYPES or t in OUTPUT_TYPES:
        cid = p.get("call_id")
        return (t, cid) if _plain(cid) else json_dumps([t, cid], ensure_ascii=False)
    drop = {"id", "status", "internal_chat_message_metadata_passthrough"}
    return json_dumps({k: v for k, v in p.items() if k not in drop}, sort_keys=True, ensure_ascii=False)


# A record's type by its line type and subtype, one string each (a rollout has a few dozen).
_EVENT_TYPES: dict[Any, str] = {}
# An item type other than a message that a head maps (`_Builder._head_item`): its record's role,
# stop reason and type (a ghost snapshot: no role, a meta record).
_ITEM_SHAPES: dict[str, tuple[str | None, str | None, str]] = {
    "reasoning": ("assistant", None, "response_item:reasoning"),
    **{t: ("assistant", "tool_use", f"response_item:{t}") for t in CALL_TYPES},
    **{t: ("tool", None, f"response_item:{t}") for t in OUTPUT_TYPES},
    # A server-side tool's item or a compaction's summary item: an assistant message holding the
    # item (keyed by all its fields, read when a checkpoint asks).
    **{t: ("assistant", None, f"response_item:{t}") for t in OPAQUE_ASSISTANT_TYPES},
    "ghost_snapshot": (None, None, "response_item:ghost_snapshot"),
}
# The two most common items' shapes, found by comparing their type (a lookup hashes each line's
# fresh type string).
_CALL_SHAPE, _OUTPUT_SHAPE = _ITEM_SHAPES["function_call"], _ITEM_SHAPES["function_call_output"]
_ITEM_PREFIX = len("response_item:")  # (a head-read item's record type: the prefix, then its item type)


_replace = msgspec.structs.replace
_NO_ROUTE = object()  # (`_Builder.route_model` before any route is taken)
# A head-read record's shape: the role the model sees (None: a meta record), its stop reason, the
# template its records are copies of (`_Likes`) and its `mark_code` (never sent: not).
_Shape = tuple[str | None, str | None, Record, int]


class _Likes:
    """The template records a head-read line's record is a copy of (`msgspec.structs.replace`
    with its own fields as keywords, in C: `record_from_fields` goes through `type.__call__`'s
    argument tuples), one per shape, each with every other field as `record_from_fields` leaves
    it: a meta line's (its type set per line), an item type's (`_ITEM_SHAPES`) and a message
    role's (`_ROLES`)."""

    __slots__ = ("assistant", "call", "items", "meta", "output", "roles")

    def __init__(self, src: RecordSource) -> None:
        def like(kind: str, typ: str, role: str | None, stop: str | None, source_role: str | None) -> Record:
            return record_from_fields(Record, 0, 0, None, None, None, 0, 0, role, stop, source_role, (), None, src, kind, typ, True, False)

        self.meta = like("meta", "", None, None, None)
        def shape(role: str | None, stop: str | None, rec: Record) -> _Shape:
            return (role, stop, rec, mark_code(rec))

        self.items: dict[str, _Shape] = {
            it: shape(m, s, like("meta" if m is None else "message", typ, m, s, None if m is None else it)) for it, (m, s, typ) in _ITEM_SHAPES.items()
        }
        self.roles: dict[str, _Shape] = {}
        for role, m in _ROLES.items():
            stop = "stop" if m == "assistant" else None
            self.roles[role] = shape(m, stop, like("message", "response_item:message", m, stop, role))
        self.assistant, self.call, self.output = self.roles["assistant"], self.items["function_call"], self.items["function_call_output"]


# A line's own id (`L12`, for a record whose item has none) made as its thousand's prefix and its
# last three digits (`L12` + `345`), not formatted from the number: int -> str was a twentieth of
# the load (one per line). `line_id_stream` gives them in line order, a thousand made at a time.
_FIRST_IDS = tuple(f"L{i}" for i in range(1000))
_LAST_DIGITS = tuple(f"{i:03d}" for i in range(1000))


def _thousand_ids(k: int) -> Sequence[str]:
    """f"L{line}" for the lines 1000k .. 1000k + 999 (line 0 left out: lines count from 1)."""
    if k == 0:
        return _FIRST_IDS[1:]
    pre = f"L{k}"
    return [pre + d for d in _LAST_DIGITS]


def line_id_stream(first: int = 1) -> Iterator[str]:
    """f"L{line}" for the lines `first`, `first` + 1, ... (zipped with the lines in `_read`: no test
    a line for a new thousand)."""
    k, r = divmod(first, 1000)
    # (the rest of `first`'s thousand made as they are taken: a read of one line makes one)
    head = _FIRST_IDS[r:] if k == 0 else map(f"L{k}".__add__, _LAST_DIGITS[r:])
    return chain(head, chain.from_iterable(map(_thousand_ids, count(k + 1))))


def _type_name(names: dict[Any, str], line_type: str, sub: Any) -> str:
    """The record type of a line of this type and subtype (a subtype that is not a string, or
    is not there (UNSET), named None), one string per subtype."""
    hit = names.get(sub)
    if hit is None:
        hit = f"{line_type}:{sub if type(sub) is str else None}"
        if len(names) < 256:  # (a file of made-up subtypes does not grow it without bound)
            names[sub] = hit
    return hit


def _line_id_records(records: list[Record], rid: str) -> Iterator[Record]:
    """The records whose id is `rid` among those of the line a line id names (`L12`, `L12.1`:
    a record of line 12 without an id of its own of its item; none when `rid` names no line)."""
    if rid[:1] != "L":
        return
    try:
        line = int(rid[1:].partition(".")[0])
    except ValueError:
        return
    i = bisect.bisect_left(records, line, key=_LINE)
    while i < len(records) and records[i].line == line:
        if records[i].id == rid:
            yield records[i]
        i += 1


class _Ids:
    """`RecordIndex.find_ids`: ids resolved as `Ledger.by_id` resolves them (the last
    runtime-visible record with the id) from what the build kept, without walking the records:
    a record's id is its item's own id, which no other record took (`seen_ids`), or its line's
    (`_line_id_records`)."""

    __slots__ = ("records", "seen")

    def __init__(self, records: list[Record], seen: dict[str, int]) -> None:
        self.records = records
        self.seen = seen

    def __call__(self, ids: set[str]) -> dict[str, int]:
        records = self.records
        out: dict[str, int] = {}
        for rid in ids:
            s = self.seen.get(rid)
            best = s if s is not None and records[s].runtime_visible else -1
            for r in _line_id_records(records, rid):
                if r.runtime_visible and r.seq > best:
                    best = r.seq
            if best >= 0:
                out[rid] = best
        return out


def _plain(v: Any) -> bool:
    return v is None or type(v) is str


def _history_item(p: dict[str, Any]) -> HistoryItem | None:
    """A replacement-history item that no record of the file holds (None: never sent)."""
    t = p.get("type", "message")
    iid = p.get("id") if isinstance(p.get("id"), str) else None
    if t in SUMMARY_ITEM_TYPES:
        enc = p.get("encrypted_content")
        return HistoryItem("user", enc if isinstance(enc, str) else json_dumps(p), kind="summary", id=iid)
    m = item_message(p)
    if m is None:
        return None
    calls, results = m.tool_call_ids(), m.tool_result_ids()
    parts: list[str] = []
    for b in m.blocks:
        if b.text:
            parts.append(b.text)
        elif b.type == "tool_call":
            parts.append(f"{b.name}({json_dumps(b.args, ensure_ascii=False)})")
    text = "\n".join(parts)
    call_id = calls[0] if calls else results[0] if results else None
    return HistoryItem(m.role, text, id=iid, call_id=call_id)


_PHASES = codex_lines.PHASES


def _parts_read(parts: Any, allowed: dict[str, str]) -> bool:
    """Whether Codex reads a head's list of parts (`codex_lines`: each of a type it knows, with
    the string that type requires)."""
    if type(parts) is not list:
        return False
    for x in parts:
        need = allowed.get(x.type)
        if need is None or type(x.text if need == "text" else x.image_url) is not str:
            return False  # (an image by `file_id` too: the general path)
    return True


def _output_read(out: Any) -> bool:
    """Whether Codex reads a head's call output: a string, or a list of parts it knows."""
    if type(out) is str:
        return True
    return type(out) is list and codex_lines.parts_problem(out, codex_lines.OUTPUT_PARTS, "") is None


def _item_read(it: Any, p: Any) -> bool:
    """Whether Codex reads a response item of another type than a call, its output or a message,
    from its head (`codex_lines.ITEMS`)."""
    if it == "custom_tool_call":
        return p.name is not None and p.input is not None and p.call_id is not None
    if it == "custom_tool_call_output":
        return p.call_id is not None and _output_read(p.output)
    if it == "reasoning":
        c = p.content
        return _parts_read(p.summary, codex_lines.SUMMARY_PARTS) and (c is None or _parts_read(c, codex_lines.REASONING_PARTS))
    return it is not _UNSET


def _head_parts(c: Any) -> Any:
    """A head-read message's content as `_key` keys it: its parts' texts (a part without one: its
    type), one part without a comprehension (a function and a frame per message in 3.11)."""
    if type(c) is list:
        if len(c) == 1:
            x = c[0]
            return (x.text if x.text is not _UNSET else x.type,)
        return tuple([x.text if x.text is not _UNSET else x.type for x in c])
    return c


def _head_usage(u: TokensHead | None) -> Usage | None:
    """`_usage` of a head's token counts."""
    if u is None:
        return None
    fresh, cached, written, out = u.input_tokens or 0, u.cached_input_tokens or 0, u.cache_write_input_tokens or 0, u.output_tokens or 0
    cached = cached if cached > 0 else 0
    written = written if written > 0 else 0
    return Usage(max(0, fresh - cached - written) if fresh > 0 else 0, out if out > 0 else 0, cached, written)


def _usage(u: Any) -> Usage | None:
    if not isinstance(u, dict):
        return None

    def n(k: str) -> int:
        v = u.get(k, 0)
        return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0

    cached, written = n("cached_input_tokens"), n("cache_write_input_tokens")
    # OpenAI's input_tokens includes the cached part: split it so Usage.prompt is input_tokens.
    return Usage(max(0, n("input_tokens") - cached - written), n("output_tokens"), cached, written)


# ---------------------------------------------------------------------------------------- build


class _Fields(RecordSource):
    """A record's fields read again from the file when asked for instead of kept parsed for the
    whole session (issue 15): a meta record's (an event, a turn context: half a rollout's lines,
    most of its bytes; the parsed payloads were most of the peak RSS), and a response item's
    message and unknown fields when its line was read from its head (`codex_heads`). Only a line
    read clean (one object, nothing diagnosed) is left to it; it is read as the build read it
    (`fields.check_fields` removes the same fields). What the build gave such a message beyond its
    line is kept here: the usage a later `token_count` reported, the route of its turn. `raw()`
    stays None, as for every Codex record: the detail pane shows the fields."""

    __slots__ = ("path", "route_seqs", "routes", "usages")

    def __init__(self, path: str) -> None:
        self.path = path
        # A lazily-read reply's usage, by seq: the offset of the token count line that reported it
        # (the int its record holds: read again with the message, `_reported`), as a head held it
        # (a token usage record), or a Usage.
        self.usages: dict[int, int | Usage | TokensHead] = {}
        # The route of the turns from each seq on (a new entry where the model or provider changes).
        self.route_seqs: list[int] = []
        self.routes: list[tuple[str | None, str | None]] = []

    def obj(self, rec: Record) -> Any:
        return None

    def payload(self, rec: Record, f: BinaryIO | None = None) -> dict[str, Any] | None:
        """The record's payload as the build read it (its fields checked)."""
        if f is None:
            with open(self.path, "rb") as g:
                return self.payload(rec, g)
        f.seek(rec.offset)
        o = line_object(f.read(rec.length), rec.line, rec.offset)
        if not isinstance(o, dict):
            return None
        fields.check_fields(o, fields.CODEX)
        p = o.get("payload")
        return p if isinstance(p, dict) else None

    def message(self, rec: Record, f: BinaryIO | None = None) -> Message | None:
        if f is None:
            with open(self.path, "rb") as g:
                return self.message(rec, g)
        p = self.payload(rec, f)
        m = item_message(p) if p is not None else None
        if m is None:
            return None
        m.never_sent = rec.never_sent
        if m.role == "assistant":
            i = bisect.bisect_right(self.route_seqs, rec.seq) - 1
            m.route = Route(*self.routes[i]) if i >= 0 else Route(None, None)
        u = self.usages.get(rec.seq)
        if type(u) is int:
            u = _reported(f, u)
        m.usage = _head_usage(u) if type(u) is TokensHead else u  # type: ignore[arg-type]
        return m

    def load_many(self, recs: list[Record]) -> None:
        """Many records' messages read through one open file, in file order."""
        with open(self.path, "rb") as f:
            for r in sorted(recs, key=lambda r: r.offset):
                r._message = self.message(r, f)

    def keys(self, entries: list[_Entry], records: list[Record]) -> None:
        """The history keys of entries read from their heads (`_Entry.key` None), through one
        open file, in file order."""
        todo = sorted((e for e in entries if e.key is None), key=lambda e: records[e.seq].offset)  # type: ignore[index]
        if not todo:
            return
        with open(self.path, "rb") as f:
            for e in todo:
                e.key = _key(self.payload(records[e.seq], f) or {})  # type: ignore[index]

    def extra(self, rec: Record) -> dict[str, Any] | None:
        p = self.payload(rec)
        if p is not None and rec.kind == "message":  # a response item read from its head
            return {k: v for k, v in p.items() if k not in _ITEM_KEYS} or None
        return p


def _reported(f: BinaryIO, offset: int) -> TokensHead | None:
    """The usage the token count line at `offset` reported (its head decoded again: it decoded
    clean when the rollout was read; None if the file changed since)."""
    f.seek(offset)
    try:
        info = HEAD_DECODER.decode(f.readline()).payload.info  # type: ignore[union-attr]
    except (*heads.DECODE_ERRORS, AttributeError):
        return None
    return info.last_token_usage if info is not None else None


class _Entry(msgspec.Struct, gc=False):
    """One item of Codex's history as replayed so far: a record's (seq) or a checkpoint's own (a
    Struct: built in C, one per response item). A record's item is made when a checkpoint keeps
    it (`hist`): most records' never is."""

    seq: int | None
    key: HistoryKey | None  # None: not read yet (a line read from its head: `_Fields.keys`)
    id: str | None
    role: str  # the role the model sees
    item: HistoryItem | None = None  # None: a record's, not made yet

    def hist(self) -> HistoryItem:
        """The entry as a replacement-history item (one object per entry, made once)."""
        it = self.item
        if it is None:
            it = self.item = HistoryItem(self.role, "", self.seq)
        return it

    def is_user_message(self) -> bool:
        return self.role == "user" and (self.item is None or self.item.kind == "message")


_BLOCK = 1024  # (`_Numbers`: the ints made a block at a time)


class _Numbers:
    """0, 1, 2, ... as the loader numbers lines and records (`_read`, `_merge_run`): each int made
    once, a block at a time (in C), and kept in order (`ints`), so a record's seq is the object
    `ints` holds at its place and the analysis's file-order path is a list of those objects
    (`RecordIndex.seqs`) rather than of an int made again per record."""

    __slots__ = ("ints",)

    def __init__(self) -> None:
        self.ints: list[int] = []

    def _block(self, k: int) -> list[int]:
        ints, end = self.ints, (k + 1) * _BLOCK
        if len(ints) < end:
            ints += range(len(ints), end)
        return ints[k * _BLOCK : end]

    def stream(self, first: int) -> Iterator[int]:
        """first, first + 1, ... (without end: zipped with the lines)."""
        k, r = divmod(first, _BLOCK)
        return chain(self._block(k)[r:], chain.from_iterable(map(self._block, count(k + 1))))

    def upto(self, n: int) -> list[int]:
        """0 .. n - 1 (the list kept: a build's last call)."""
        ints = self.ints
        if len(ints) < n:
            ints += range(len(ints), n)
        del ints[n:]
        return ints


class _Builder:
    def __init__(self, path: str | None, source: _Fields | None = None) -> None:
        self.path = path
        self.fields = source  # where a meta line's payload is read again; None: kept (read from memory)
        self.likes = _Likes(source) if source is not None else None  # (`_head_item`)
        self.records: list[Record] = []
        self.diags: list[Diagnostic] = []
        self.header: dict[str, Any] | None = None
        self.header_line = 0
        self.instructions: str | None = None
        self.instructions_note: str | None = None
        # What the field guard took out of the first session_meta's payload, by field, as found
        # (`codex_lines.session_meta_problem`; base_instructions of a type Codex refuses too).
        self.meta_removed: dict[str, str] = {}
        self.settings = SessionSettings()
        self.model: str | None = None
        self.provider: str | None = None
        # The model and provider (the objects) the source's last route was taken with (`_route`).
        self.route_model: Any = _NO_ROUTE
        self.route_provider: Any = _NO_ROUTE
        # The items' own ids the records took (`taken`), each with the seq of the record that took it.
        self.seen_ids: dict[str, int] = {}
        # The record types some history entry of has no key yet (read from its head: `_keys`), and
        # their item types.
        self.unkeyed: set[str] = set()
        self.unkeyed_items: set[str] = set()
        # The history: an entry, or a head-read item's seq (its entry made when asked: `_entry`).
        self.history: list[int | _Entry] = []
        # Every response item by its id, whether in the history or not (a head-read item that took
        # its id as its record's is found through `seen_ids` instead: `_written`).
        self.written: dict[str, int | _Entry] = {}
        self.head_keys: dict[int, HistoryKey] = {}  # a head-read item's key its record does not give
        self.head_pids: dict[int, str] = {}  # a head-read item's own id its record did not take
        self.usage_for: int | None = None  # the newest model-produced record without usage yet
        # The id of the last head-read call: the output answering it keeps that string, not the
        # copy its line decoded (one string less per output; compared, not looked up in a dict of
        # open calls: hashing two fresh ids cost more than the string saved).
        self.last_call: str | None = None
        # Prompt tokens of the last request (tokens_before; a token count's head until a checkpoint asks).
        self.last_prompt: int | TokensHead | None = None
        self.rep: list[tuple[str, str]] = []  # what the latest checkpoint's summary represents (id ranges)
        self.prev_cp: Checkpoint | None = None
        self.since: int = 0  # seq of the first record after the latest checkpoint
        # What the ledger's `RecordIndex` lists: each record's `mark_code` (made with the record; a
        # list until `finish`: a list's append is the interpreter's cheapest call), the header's
        # seq, whether a roll-back took records off the path, and the ints the records' seqs are
        # (`_Numbers`).
        self.codes: list[int] = []
        self.numbers = _Numbers()
        self.header_seq: int | None = None
        self.rolled_back = False
        # The records of lines Codex skips (`codex_lines`; a known line type without a payload) or
        # reads as an item it ignores (a line type it does not know), and the line and ordinal of
        # the last line the general path read (`resume_refusal`).
        self.ignored: set[int] = set()
        self.last_general: tuple[int, Any] = (0, None)

    def diag(self, rl: RawLine, problem: str, text: str, seq: int | None = None) -> None:
        self.diags.append(Diagnostic(rl.line, problem, f"line {rl.line}: {text}", seqs=[seq] if seq is not None else []))

    def rid(self, p: Any, rl: RawLine, k: int) -> str:
        """A record's id: its item's own when no earlier record has it, else its line's."""
        pid = p.get("id") if isinstance(p, dict) else None
        if isinstance(pid, str) and pid and not self.taken(pid):
            self.seen_ids[pid] = len(self.records)  # (the seq of the record about to be made)
            return pid
        return f"L{rl.line}" if k == 0 else f"L{rl.line}.{k}"

    def taken(self, pid: str) -> bool:
        """Whether an earlier record has this id: an item's own (`seen_ids`), or one made for a
        line (`L12`, `L12.1`: looked up among that line's records, not kept in a set of one entry
        per line)."""
        return pid in self.seen_ids or any(True for _ in _line_id_records(self.records, pid))

    def add(self, rl: RawLine, o: dict[str, Any], k: int) -> None:
        seq = len(self.records)
        t = o.get("type")
        p = o.get("payload")
        ts = o.get("timestamp")
        if not isinstance(p, dict):
            if t in LINE_TYPES:
                lacks = "has no payload" if "payload" not in o else f"has {json_type(p)} for its payload, not an object"
                self.diag(rl, "invalid_field", f"a {quote(t)} line that {lacks} (Codex writes {{timestamp, type, payload}}); kept as an unknown record", seq)
                self.ignored.add(seq)  # (Codex's known line types need their payload: it skips the line)
            self.records.append(Record(seq, rl.line, "unknown", str(t), self.rid(None, rl, k), None, ts, extra=o, offset=rl.offset, length=rl.length))
            return
        # A `compacted` line this tool appended names itself with a top-level `id` (codex_writer).
        rid = self.rid(o if t == "compacted" and isinstance(o.get("id"), str) else p, rl, k)
        if t == "response_item":
            self.response_item(p, rl, seq, rid, ts, o.get("metadata"))
        elif t == "compacted":
            self.compacted(p, rl, seq, rid, ts)
        elif t == "inter_agent_communication" and isinstance(p.get("content"), str):
            # Another agent's message: Codex replays it into the history as model input.
            m = Message("user", [Block("text", p["content"])], source_role=t)
            self.records.append(Record(seq, rl.line, "message", t, rid, None, ts, message=m, extra=p, offset=rl.offset, length=rl.length))
            self.history.append(_Entry(seq, _key({"type": t, **p}), None, "user"))
        elif t in META_TYPES:
            sub = p.get("type") if t == "event_msg" else None
            kind = "meta"
            if t == "session_meta" and self.header is not None:
                self.diags.append(_repeated_session_meta(rl.line, p, self.header_line, self.header, seq))
            elif t == "session_meta":
                kind = "header"
                self.header = p
                self.header_seq = seq
                self.header_line = rl.line
                if "base_instructions" not in self.meta_removed:  # (else a value of a type Codex refuses, which the guard removed)
                    self.instructions, self.instructions_note = sent_instructions(p.get("base_instructions"))
                if isinstance(p.get("model_provider"), str):
                    self.provider = p["model_provider"]
            elif t == "turn_context" and isinstance(p.get("model"), str):
                self.model = p["model"]
            elif sub == "thread_rolled_back":
                n = p.get("num_turns")
                if isinstance(n, int) and not isinstance(n, bool) and n > 0:
                    self.roll_back(n)
            elif sub == "token_count":
                info = p.get("info")
                if isinstance(info, dict):
                    self.usage(info.get("last_token_usage"))
                    w = info.get("model_context_window")
                    if isinstance(w, int) and w > 0:
                        self.settings.window = w
            elif t == "token_usage_record":
                self.usage(p.get("usage"))
            typ = f"event_msg:{sub}" if t == "event_msg" else str(t)
            self.records.append(self._payload_record(rl, seq, kind, typ, rid, ts, p))
        else:
            # A line type this tool does not know: kept whole and shown, never fatal (Codex reads
            # one it does not know either as an item it ignores, ordinal or not).
            self.ignored.add(seq)
            self.records.append(Record(seq, rl.line, "unknown", str(t), rid, None, ts, extra=o, offset=rl.offset, length=rl.length))

    def _head_item(self, h: LineHead, seq: int, line: int, offset: int, length: int, lid: str) -> bool:
        """A response item's record from its head (see `_read`): a message of a known role,
        reasoning, a call or its output, a server-side tool's or summary item, as `item_message`
        maps them, or a ghost snapshot (`seq`: the record's, `lid`: the line's own id, f"L{line}"). False: the line
        takes the general path (`add`). The record is a copy of its shape's template
        (`_Likes`) with this line's fields set. The commonest shapes (a function call, its output)
        are tested first, by comparing the line's fresh type string (a lookup hashes it)."""
        likes: _Likes = self.likes  # type: ignore[assignment]  # (set: a builder reading heads has a source)
        p = h.payload
        it = p.type
        calls: tuple[str, ...] = ()
        result = key = None  # (key kept: a message's; a call's or an output's is its record's)
        if it == "function_call":
            shape = likes.call
            cid = p.call_id
            if p.name is None or p.arguments is None or cid is None:
                return False  # (Codex skips it: the general path says why)
            if cid:
                calls = (cid,)
                self.last_call = cid
            elif cid is not None:
                key = (it, cid)  # (an empty call id: its record's call_ids do not hold it)
        elif it == "function_call_output":
            shape = likes.output
            result = p.call_id  # (the call's id string when it answers the last call: `last_call`)
            out = p.output
            if result is None or (type(out) is not str and not _output_read(out)):  # (a string: the common case, no call)
                return False
            if result == self.last_call:
                result = self.last_call
        elif it == "message":
            role = p.role
            shape = likes.assistant if role == "assistant" else likes.roles.get(role) if role is not None else None
            if shape is None or (p.phase is not None and p.phase not in _PHASES):
                return False
            c = p.content
            if type(c) is not list:
                return False
            for x in c:  # (`_parts_read`, inline: a call a message cost more than the test)
                t = x.type
                if t == "input_text" or t == "output_text":
                    if type(x.text) is not str:
                        return False
                elif t != "input_image" or type(x.image_url) is not str:
                    return False
            key = ("message", shape[2].source_role, _head_parts(p.content))  # (the role's shared string: its line's copy freed)
        else:
            shape = likes.items.get(it)
            if shape is None or not _item_read(it, p):
                return False  # an unknown item, another agent's message, one Codex skips: the general path
            calls, result, key = self._other_item(it, shape, p)
        mapped, _stop, like, code = shape
        rid = pid = p.id  # (`rid`, inline)
        if not rid or rid in self.seen_ids or (rid[0] == "L" and self.taken(rid)):
            rid = lid
            if pid is not None:
                self._other_id(pid, seq)
        else:
            self.seen_ids[rid] = seq
        rec = _replace(like, seq=seq, line=line, id=rid, timestamp=h.timestamp, offset=offset, length=length, call_ids=calls, result_id=result)
        self.records.append(rec)
        self.codes.append(code)
        if mapped is None:  # a ghost snapshot: kept in Codex's history, never sent (a meta record)
            return True
        meta = h.metadata
        if meta is not None and meta.compaction_output is True:
            rec.never_sent = True
            self.codes[-1] = code | MARK_NEVER_SENT
        if mapped == "assistant":
            if self.model is not self.route_model or self.provider is not self.route_provider:
                self._route(self.fields, seq)  # type: ignore[arg-type]  # (the same model and provider objects: the same route)
            self.usage_for = seq
        if key is not None:
            self.head_keys[seq] = key
        self.history.append(seq)  # (its entry made from the record when a checkpoint asks: `_entry`)
        return True

    def _other_item(self, it: str, shape: _Shape, p: Any) -> tuple[tuple[str, ...], str | None, HistoryKey | None]:
        """`_head_item` of an item that is neither a function call, its output nor a message: its
        record's call ids and result id, and the history key kept for it."""
        if shape[1] is not None:  # a call
            cid = p.call_id
            if cid:
                self.last_call = cid
                return (cid,), None, None
            return (), None, (it, cid) if cid is not None else None
        if shape[0] == "tool":  # its output
            result = p.call_id
            return (), self.last_call if result == self.last_call else result, None
        if shape[0] is not None and it not in self.unkeyed_items:  # (reasoning: keyed by all its fields, read when a checkpoint asks)
            self.unkeyed_items.add(it)
            self.unkeyed.add(shape[2].type)
        return (), None, None

    def _other_id(self, pid: str, seq: int) -> None:
        """A head-read item whose own id an earlier record took: its id kept apart (`_entry`),
        and the item is the one `written` names for the id when no earlier item had it."""
        self.head_pids[seq] = pid
        if pid not in self.written and self._head_item_of(pid) is None:
            self.written[pid] = seq

    def _head_item_of(self, pid: str) -> int | None:
        """The seq of the head-read item that took this id as its record's (the first item
        written with it), if one did."""
        s = self.seen_ids.get(pid)
        if s is None:
            return None
        r = self.records[s]
        return s if r.kind == "message" and r._source is not None else None

    def _entry(self, x: int | _Entry) -> _Entry:
        """A history item as an entry: a head-read item's (its seq in the history) made from its
        record: its role, its id (its record's when it took it, else kept apart), its key (a
        message's kept; a call's or an output's from the record's call ids; else read later)."""
        if type(x) is not int:
            return x  # type: ignore[return-value]
        rec = self.records[x]
        rid = rec.id
        pid = self.head_pids[x] if x in self.head_pids else rid if self.seen_ids.get(rid) == x else None  # type: ignore[arg-type]
        return _Entry(x, self._head_key(x, rec), pid, rec.role)  # type: ignore[arg-type]

    def _head_key(self, x: int, rec: Record) -> HistoryKey | None:
        """A head-read item's history key (None: not read yet)."""
        key = self.head_keys.get(x)
        if key is not None:
            return key
        if rec.role == "tool":
            return (rec.type[_ITEM_PREFIX:], rec.result_id)
        if rec.stop_reason == "tool_use":
            return (rec.type[_ITEM_PREFIX:], rec.call_ids[0] if rec.call_ids else None)
        return None

    def _route(self, src: _Fields, seq: int) -> None:
        """A head-read reply's route, where the model or provider object changed since the last
        one: a new entry of the source's routes where their values changed."""
        route = (self.model, self.provider)
        routes = src.routes
        if not routes or routes[-1] != route:
            src.route_seqs.append(seq)
            routes.append(route)
        self.route_model, self.route_provider = route

    def _head_roll_back(self, p: Any) -> None:
        """What a roll-back read from its head does to the build (`_read`; a token count's is
        inline there)."""
        n = p.num_turns
        if n is not None and n > 0:
            self.roll_back(n)

    def _payload_record(self, rl: RawLine, seq: int, kind: str, typ: str, rid: str, ts: Any, p: dict[str, Any]) -> Record:
        """A record whose fields are its line's payload: read again when asked for (`_Fields`)
        when the line is clean and in a file, else kept (the header, a glued or recovered line)."""
        if kind == "header" or self.fields is None or rl.diagnostic is not None or len(rl.objects) != 1:
            return Record(seq, rl.line, kind, typ, rid, None, ts, extra=p, offset=rl.offset, length=rl.length)
        # (the fields in Record's declaration order, as `Record(..., source=, lazy_extra=True)`
        # builds them, without its keyword mapping: one record in two of a rollout is one of these)
        return record_from_fields(
            Record, seq, rl.line, rid, None, ts, rl.offset, rl.length, None, None, None, (), None, self.fields, kind, typ
        )

    def usage(self, u: Any) -> None:
        self._give_usage(_usage(u))

    def _give_head_usage(self, u: TokensHead | None, at: int | None = None) -> None:
        """`_give_usage` of a token count read from its head: for a reply read lazily (most are: a
        Usage made per token count was a twentieth of the load), the offset of its line (`at`, a
        token count's: read again with the message, nothing more kept) or the head itself, until
        the message (or a checkpoint's tokens_before: the last head kept) is read."""
        if u is None or self.usage_for is None:
            return
        rec = self.records[self.usage_for]
        if rec._message is None and rec.kind == "message" and isinstance(rec._source, _Fields):
            rec._source.usages[rec.seq] = u if at is None else at
            if not rec.never_sent:
                self.last_prompt = u
            self.usage_for = None
        else:
            self._give_usage(_head_usage(u))

    def _last_prompt(self) -> int | None:
        lp = self.last_prompt
        return _head_usage(lp).prompt if type(lp) is TokensHead else lp  # type: ignore[union-attr, return-value]

    def _give_usage(self, usage: Usage | None) -> None:
        """The usage of the request the newest model-produced record answered (kept by the source
        for a record whose message is not read yet)."""
        if usage is None or self.usage_for is None:
            return  # a repeated report of a request already counted
        rec = self.records[self.usage_for]
        m = rec._message
        if m is None and rec.kind == "message" and isinstance(rec._source, _Fields):
            rec._source.usages[rec.seq] = usage
            if not rec.never_sent:
                self.last_prompt = usage.prompt
        elif m is not None:
            m.usage = usage
            if not m.never_sent:
                self.last_prompt = usage.prompt
        self.usage_for = None

    def response_item(self, p: dict[str, Any], rl: RawLine, seq: int, rid: str, ts: Any, meta: Any) -> None:
        t = p.get("type", "message")
        typ = f"response_item:{t}"
        m = item_message(p)
        if m is None:
            kind = "meta" if t == "ghost_snapshot" else "unknown"
            self.records.append(self._payload_record(rl, seq, kind, typ, rid, ts, p))
            return
        # Newer Codex marks the summarizer's reply on the line (`metadata.compaction_output`).
        if isinstance(meta, dict) and meta.get("compaction_output") is True:
            m.never_sent = True  # the summarizer's reply: the checkpoint after it holds it
        m.route = Route(self.model, self.provider) if m.role == "assistant" else None
        rec = Record(seq, rl.line, "message", typ, rid, None, ts, message=m, offset=rl.offset, length=rl.length)
        extra = {k: v for k, v in p.items() if k not in _ITEM_KEYS}
        rec.extra = extra or None
        self.records.append(rec)
        if m.role == "assistant":
            self.usage_for = seq
        pid = p.get("id") if isinstance(p.get("id"), str) else None
        entry = _Entry(seq, _key(p), pid, m.role)
        self.history.append(entry)
        if pid is not None and pid not in self.written and self._head_item_of(pid) is None:
            self.written[pid] = entry

    def roll_back(self, n: int) -> None:
        """`thread_rolled_back {num_turns}`: Codex drops the last n user turns from its history
        (`drop_last_n_user_turns`). Their records stay in the file but leave the path, like an
        abandoned branch (`inactive`)."""
        self.history = [self._entry(e) for e in self.history]
        starts = [
            i
            for i, e in enumerate(self.history)  # type: ignore[union-attr]
            if e.is_user_message() and not _session_prefix(self._text(e)) and not _summary_like(self._text(e))
        ]
        if not starts:
            return
        cut = starts[max(0, len(starts) - n)]
        for e in self.history[cut:]:
            if e.seq is not None:  # type: ignore[union-attr]
                self.records[e.seq].runtime_visible = False
                self.rolled_back = True
        del self.history[cut:]

    def _keys(self, entries: list[_Entry]) -> None:
        """The keys of entries read from their heads, read now (a checkpoint compares them)."""
        if self.fields is not None:
            self.fields.keys(entries, self.records)

    def _text(self, e: _Entry) -> str:
        m = self.records[e.seq].message if e.seq is not None else None
        return m.text() if m is not None else e.hist().text

    def _handoff(self, msg: str) -> Record | None:
        """The summarizer's reply written just before `compacted` (older Codex marks it no way)."""
        for r in reversed(self.records):
            if r.kind == "message":
                m = r.message
                if m is not None and m.role == "assistant" and not m.never_sent:
                    text = m.text().strip()
                    if not text and m.blocks and all(b.type == "text" for b in m.blocks):
                        return r  # an empty reply: Codex took an earlier assistant message (see `compacted`)
                    if text and msg.strip().endswith(text):
                        return r
                return r if m is not None and m.never_sent else None
        return None

    def compacted(self, p: dict[str, Any], rl: RawLine, seq: int, rid: str, ts: Any) -> None:
        msg = p.get("message")
        if not isinstance(msg, str):
            if msg is not None:
                self.diag(rl, "invalid_field", f"compacted: field 'message' is not a string ({quote(msg)}); read as empty", seq)
            msg = ""
        handoff = self._handoff(msg)
        # Codex 0.169, when the summarizer replies with an empty text, takes the last assistant
        # message it has (the previous turn's answer) as the summary (observed:
        # tests/peers/codex_resume/sessions/codex_empty_summary.jsonl): a fallback that summarized
        # nothing of what it removed.
        stale = handoff is not None and handoff.message is not None and not handoff.message.text().strip()
        usage: Usage | None = None
        if handoff is not None:
            handoff.never_sent = True
            if handoff.seq < len(self.codes):  # (its `mark_code`, made when it was)
                self.codes[handoff.seq] |= MARK_NEVER_SENT
            hm = handoff.message
            if hm is not None:
                hm.never_sent = True
                usage = hm.usage
            hs = handoff.seq
            self.history = [e for e in self.history if (e if type(e) is int else e.seq) != hs]  # type: ignore[union-attr]
        rh = p.get("replacement_history")
        if rh is not None and not isinstance(rh, list):
            self.diag(rl, "invalid_field", "compacted: field 'replacement_history' is not a list; Codex's rebuild from the user messages is used", seq)
            rh = None
        replacement, entries = self.match(rh, msg) if rh is not None else self.rebuild(msg)
        summaries = [h.text for h in replacement if h.kind == "summary" and h.seq is None]
        if rh is not None:
            summary = "\n".join(summaries)
        else:
            summary = msg
        prev = self.prev_cp
        boundary = next((r.id for r in reversed(self.records) if r.runtime_visible), None)
        if not summary.strip() or stale:
            rep: list[tuple[str, str]] = list(self.rep) if stale else []
        elif prev is not None and summary == prev.summary:
            rep = list(self.rep)  # the previous summary carried forward: it stands for what it did
        else:
            # The summarizer read the whole history: what the previous summary stood for, what the
            # previous checkpoint kept raw, and every record since it.
            rep = list(self.rep)
            if prev is not None:
                rep += [(i, i) for i in prev.explicit_retains or []]
            first = self._first_visible(self.since)
            if boundary is not None and first is not None:
                rep.append((first.id or "", boundary))
        retains = [self.records[h.seq].id or "" for h in replacement if h.seq is not None]
        cp = Checkpoint(
            summary=summary,
            tokens_before=self._last_prompt(),
            usage=usage,
            details={k: v for k, v in p.items() if k not in ("message", "replacement_history")} or None,
            explicit_boundary=boundary,
            explicit_represents=rep,
            explicit_retains=retains,
            replacement=replacement,
            failure_reason="summary_provider" if stale else None,
        )
        rec = Record(seq, rl.line, "checkpoint", "compacted", rid, None, ts, checkpoint=cp, offset=rl.offset, length=rl.length)
        self.records.append(rec)
        self.history = entries
        self.rep = rep
        self.prev_cp = cp
        self.since = seq + 1
        self.usage_for = None

    def _first_visible(self, start: int) -> Record | None:
        """The first visible record from seq `start` on but the header, found by index (a slice of
        the records from there would touch every record after it: a cache miss each)."""
        records = self.records
        for i in range(start, len(records)):
            r = records[i]
            if r.kind != "header" and r.runtime_visible:
                return r
        return None

    def _at(self, i: int) -> _Entry:
        """The history's entry at position i (a head-read item's made there once)."""
        e = self.history[i]
        if type(e) is int:
            e = self.history[i] = self._entry(e)
        return e  # type: ignore[return-value]

    def _written(self, pid: str) -> _Entry | None:
        """The first response item written with this id, as an entry, if any (`written`)."""
        w = self.written.get(pid)
        if w is None:
            w = self._head_item_of(pid)
        return self._entry(w) if w is not None else None

    def _unread_keys(self, kinds: set[str]) -> None:
        """The keys not read yet of the history's items of these record types, read now."""
        records, unkeyed, history = self.records, self.unkeyed, self.history
        todo: list[_Entry] = []
        for i, e in enumerate(history):
            if type(e) is int:
                t = records[e].type
                if t in kinds and t in unkeyed:  # (a head-read item without a key of its record's)
                    history[i] = e = self._entry(e)
                    todo.append(e)
            elif e.key is None and records[e.seq].type in kinds:  # type: ignore[union-attr, index]
                todo.append(e)  # type: ignore[arg-type]
        self._keys(todo)

    def _index(self, wanted: set[HistoryKey], wanted_ids: set[str], by_id: dict[str, int], by_key: dict[HistoryKey, list[int]]) -> None:
        """The history's positions by id (the first) and by key, for the ids and keys wanted only.
        A head-read item's id and key are its record's (`_entry`), read here without making it."""
        records, seen, head_keys, head_pids = self.records, self.seen_ids, self.head_keys, self.head_pids
        pairs = any(type(k) is tuple and len(k) == 2 for k in wanted)  # (a call's or an output's key)
        if not pairs and not wanted_ids:
            self._index_keys(wanted, by_key)
            return
        for i, e in enumerate(self.history):
            if type(e) is int:
                rec = records[e]
                other = e in head_pids
                eid = head_pids[e] if other else rec.id
                if eid in wanted_ids and (other or seen.get(eid) == e):  # type: ignore[operator]
                    by_id.setdefault(eid, i)  # type: ignore[arg-type]
                k = head_keys.get(e)
                if k is None and pairs:
                    k = self._head_key(e, rec)
            else:
                eid = e.id  # type: ignore[union-attr]
                if eid is not None and eid in wanted_ids:
                    by_id.setdefault(eid, i)
                k = e.key  # type: ignore[union-attr]
            if k is not None and k in wanted:
                by_key.setdefault(k, []).append(i)

    def _index_keys(self, wanted: set[HistoryKey], by_key: dict[HistoryKey, list[int]]) -> None:
        """`_index` when no id is wanted and no call's or output's key (a replacement history of
        messages without ids, as Codex writes it): only a key is looked up, a head-read item's
        the one kept for it (`head_keys`), none for the others; its record is not read (the
        history between two checkpoints is most of the records: a cache miss each)."""
        get = self.head_keys.get
        for i, e in enumerate(self.history):
            k = get(e) if type(e) is int else e.key  # type: ignore[union-attr, arg-type]
            if k is not None and k in wanted:
                by_key.setdefault(k, []).append(i)

    def match(self, rh: list[Any], msg: str) -> tuple[list[HistoryItem], list[_Entry]]:
        """Each replacement item: an earlier history item it repeats (by id, else by content, the
        earliest not matched yet), or new content of this checkpoint."""
        used: set[int] = set()
        by_id: dict[str, int] = {}
        by_key: dict[HistoryKey, list[int]] = {}
        # Only an item of the same type has the same key: the keys not read yet are read for the
        # types the replacement history holds (an entry left unread never equals its items).
        kinds = {"response_item:" + str(it.get("type", "message")) for it in rh if isinstance(it, dict)}
        if not kinds.isdisjoint(self.unkeyed):
            self._unread_keys(kinds)
        # Only the keys and ids of the replacement's items are ever looked up: the others are not
        # indexed (a history of 25k items between two checkpoints of a 100 MB rollout).
        wanted = {_key(it) for it in rh if isinstance(it, dict)}
        wanted_ids = {iid for it in rh if isinstance(it, dict) and isinstance(iid := it.get("id"), str)}
        self._index(wanted, wanted_ids, by_id, by_key)
        out: list[HistoryItem] = []
        own: list[HistoryItem] = []
        entries: list[_Entry] = []
        for it in rh:
            if not isinstance(it, dict):
                continue
            if it.get("type") == "ghost_snapshot":
                continue  # kept in Codex's history, never sent to the model
            iid = it.get("id") if isinstance(it.get("id"), str) else None
            key = _key(it)
            hit: int | None = None
            if it.get("type") in SUMMARY_ITEM_TYPES:
                pass  # the summary is this checkpoint's own, even when it repeats the previous one
            elif iid is not None and iid in by_id and by_id[iid] not in used and self._at(by_id[iid]).key == key:
                hit = by_id[iid]
            else:
                # Same content: kept raw, whatever its new id (Codex re-injects its instructions
                # and environment with fresh ids; nothing of them left the request).
                hit = next((i for i in by_key.get(key, []) if i not in used), None)
            if hit is not None:
                used.add(hit)
                e = self._at(hit)
                out.append(e.hist())
                entries.append(e)
                continue
            back = self._written(iid) if iid is not None and it.get("type") not in SUMMARY_ITEM_TYPES else None
            if back is not None:
                self._keys([back])
            if back is not None and back.key == key and back.seq is not None and not self.records[back.seq].never_sent \
                    and all(x.seq != back.seq for x in entries):
                # A record an earlier checkpoint removed, put back verbatim (a repair restoring
                # what was lost): the record itself is sent again.
                out.append(back.hist())
                entries.append(back)
                continue
            h = _history_item(it)
            if h is None:
                continue
            out.append(h)
            own.append(h)
            entries.append(_Entry(None, key, iid, h.role, h))
        if not any(h.kind == "summary" for h in own):
            # Client-side compaction: the summary is the user message holding `message` (or
            # Codex's summary prefix), the last one when several do.
            cands = [h for h in own if h.role == "user" and h.text and (h.text == msg or _summary_like(h.text))]
            if cands:
                cands[-1].kind = "summary"
        return out, entries

    def rebuild(self, msg: str) -> tuple[list[HistoryItem], list[_Entry]]:
        """Codex without a replacement history (`build_compacted_history`): the user messages,
        newest first within ~20k tokens (4 bytes a token), then the summary message."""
        users: list[_Entry] = []
        self.history = [self._entry(e) for e in self.history]
        for e in self.history:  # type: ignore[assignment]
            if not e.is_user_message():
                continue
            text = self._text(e)
            if not text or _summary_like(text) or _session_prefix(text):
                continue
            users.append(e)
        kept: list[_Entry] = []
        left = COMPACT_USER_MESSAGE_MAX_TOKENS
        for e in reversed(users):
            if left <= 0:
                break
            text = self._text(e)
            n = (len(text.encode()) + 3) // 4
            if n <= left:
                kept.append(e)
                left -= n
            else:
                cut = HistoryItem("user", text[: left * 4] + "\n[...truncated]", id=e.id)
                kept.append(_Entry(None, e.key, e.id, "user", cut))
                break
        kept.reverse()
        self._keys(kept)
        summary = HistoryItem("user", msg or NO_SUMMARY_TEXT, kind="summary")
        entries = [*kept, _Entry(None, "", None, "user", summary)]
        return [e.hist() for e in entries], entries

    def resume_refusal(self) -> Diagnostic | None:
        """Why Codex refuses to resume this rollout at all, if it does (`codex_lines.history_mode_problem`:
        a history mode it does not know; `base_instructions_problem`: base instructions it cannot
        read; a paginated rollout whose last line it reads has no ordinal)."""
        why = (
            codex_lines.session_meta_problem(self.header, self.meta_removed)
            or codex_lines.history_mode_problem(self.header)
            or codex_lines.base_instructions_problem(self.header)
        )
        if why is None and (found := self.meta_removed.get("base_instructions")) is not None:
            # (removed by the field guard before `base_instructions_problem` could see it: serde fails
            # the session_meta on it as on a string; observed, the real Codex 0.169 refuses a
            # boolean, an integer and a float)
            why = f"its session_meta's base_instructions is {found}, not an object with a text"
        if why is not None:
            return _refused(self.header_line, self.header_seq, why)
        if self.header is None or self.header.get("history_mode") != "paginated":
            return None
        last = next((r for r in reversed(self.records) if r.seq not in self.ignored), None)
        if last is None or self._ordinal(last) is not None:
            return None
        why = f"it is paginated (its session_meta's history_mode) and the last line it reads, line {last.line}, has no ordinal"
        return _refused(last.line, last.seq, why)

    def _ordinal(self, rec: Record) -> Any:
        """The `ordinal` of a record's line: as the general path read it, or read again."""
        line, ordinal = self.last_general
        if line == rec.line:
            return ordinal
        if self.path is None:
            return None
        try:
            with open_regular(self.path) as f:
                f.seek(rec.offset)
                o = line_object(f.read(rec.length), rec.line, rec.offset)
        except OSError:  # (gone since: nothing to tell)
            return None
        return o.get("ordinal") if isinstance(o, dict) else None

    def finish(self) -> Ledger:
        h = self.header or {}
        sid = h.get("id") or h.get("session_id")
        led = Ledger(
            path=self.path,
            format=NAME,
            session_id=sid if isinstance(sid, str) else None,
            header=self.header,
            records=self.records,
            diagnostics=self.diags,
            settings=self.settings,
            version=None,
        )
        led.instructions = self.instructions
        led.instructions_note = self.instructions_note
        if self.header is None and self.records:
            self.diags.append(
                Diagnostic(1, "missing_header", "line 1: no session_meta line (Codex writes one first); the records were read anyway")
            )
        events_only = _events_only(self.records)
        if events_only is not None:
            self.diags.append(events_only)
        refused = self.resume_refusal()
        if refused is not None:
            self.diags.append(refused)
        for r in reversed(self.records):
            if r.kind != "header":
                led.leaf_seq = r.seq
                break
        led.extension = _Resume(self.records, self.seen_ids, self.usage_for, self.model, self.provider, self.fields)
        off_path = None if self.rolled_back else [] if self.header_seq is None else [self.header_seq]
        n = len(self.records)
        led.index = RecordIndex(self.records, n, None, off_path, _Ids(self.records, self.seen_ids), codes=bytes(self.codes), seqs=self.numbers.upto(n))
        return led


# ---------------------------------------------------------------------------------------- extend


@dataclass(frozen=True, slots=True)
class _Resume:
    """What mapping lines appended to a ledger needs beyond its records (`Ledger.extension`): the
    ids taken (a reused one gets its line's id), the model record still awaiting its usage, the
    route of the turns. Valid only for the records list it was taken with."""

    records: list[Record]
    seen_ids: dict[str, int]
    usage_for: int | None
    model: str | None
    provider: str | None
    source: _Fields | None  # the file the records' payloads are read again from, if any


def _needs_full_build(o: dict[str, Any]) -> bool:
    """An appended line that changes what came before it, or is diagnosed: a checkpoint (it
    replaces the history, matched against every earlier item), a rollback (earlier records leave
    the path), a second session_meta, a line that lost its payload, a line Codex skips, a field of
    the wrong type (a type that is no string among them: it would not even hash)."""
    t = o.get("type")
    p = o.get("payload")
    if type(t) is not str or t in ("compacted", "session_meta") or (t in LINE_TYPES and not isinstance(p, dict)):
        return True
    if t == "event_msg" and p.get("type") == "thread_rolled_back":  # type: ignore[union-attr]
        return True
    if codex_lines.skip_reason(o) is not None:
        return True
    wrong: list[fields.WrongType] = []
    _CHECK(o, "", wrong)
    return bool(wrong)


def extend(led: Ledger, lines: list[RawLine]) -> Ledger | None:
    """The ledger grown by appended lines (base.LineExtender), mapped by the builder as the full
    build maps them, from where it stopped (`_Resume`). The one earlier record an append can
    change, the model reply a `token_count` line gives its usage, is copied first: the given
    ledger keeps its records as they were. What changes more than that needs the full build
    (`_needs_full_build`), as does a session without its header or a diagnostic the append would
    bring or take away."""
    st = led.extension
    if not isinstance(st, _Resume) or st.records is not led.records or led.header is None:
        return None
    if not appended.clean(lines) or any(_needs_full_build(rl.objects[0]) for rl in lines):
        return None
    if any(d.problem in ("events_only", "resume_refused") for d in led.diagnostics):
        return None
    if led.header.get("history_mode") == "paginated" and lines[-1].objects[0].get("ordinal") is None:
        return None  # (Codex would refuse it: the full build says so)
    b = _Builder(led.path, st.source)
    b.records = list(led.records)
    b.seen_ids = dict(st.seen_ids)
    b.header = led.header
    b.settings = dataclasses.replace(led.settings)
    b.model, b.provider = st.model, st.provider
    if st.usage_for is not None:
        b.usage_for = st.usage_for
        b.records[st.usage_for] = _copied(b.records[st.usage_for])
    n = len(b.records)
    with collector_paused():
        for rl in lines:
            b.add(rl, rl.objects[0], 0)
    if b.diags or _events_only(b.records) is not None:
        return None
    new = b.records[n:]
    by_id = led.by_id()
    for r in new:
        if r.id is not None and r.runtime_visible:
            by_id[r.id] = r.seq
    out = dataclasses.replace(led, records=b.records, diagnostics=list(led.diagnostics), settings=b.settings, _by_id=by_id, index=None)
    for r in reversed(new):
        if r.kind != "header":
            out.leaf_seq = r.seq
            break
    out.extension = _Resume(b.records, b.seen_ids, b.usage_for, b.model, b.provider, st.source)
    return out


def _copied(rec: Record) -> Record:
    """A record the grown ledger may change (its message's usage), apart from the given ledger's."""
    out = copy.copy(rec)
    m = rec.message  # (read now if it was not: its usage is then the copy's own, not the source's)
    if m is not None:
        out._message = copy.copy(m)
    return out


def _who(p: dict[str, Any]) -> str:
    """A session_meta payload named for a person: its session id, and whose sub-agent it is."""
    sid = p.get("id") or p.get("session_id")
    who = f"session {quote(sid)}" if isinstance(sid, str) else "a session without an id"
    src = p.get("source")
    if isinstance(src, dict) and "subagent" in src:
        nick = p.get("agent_nickname")
        parent = p.get("parent_thread_id")
        who = "sub-agent " + who + (f" ({nick})" if isinstance(nick, str) else "")
        if isinstance(parent, str):
            who += f", spawned by session {quote(parent)}"
    return who


def _repeated_session_meta(line: int, p: dict[str, Any], first_line: int, first: dict[str, Any], seq: int) -> Diagnostic:
    """A later session_meta line: Codex takes the first as the file's session; a later one opens
    the history copied from another session (a sub-agent's fork of its parent, a resume)."""
    fid = first.get("id") or first.get("session_id")
    pid = p.get("id") or p.get("session_id")
    if isinstance(pid, str) and pid in (first.get("parent_thread_id"), first.get("forked_from_id")):
        relation = "the parent this file's sub-agent was spawned from; the items after it are the parent's history, copied in as the sub-agent's own"
    elif isinstance(fid, str) and p.get("parent_thread_id") == fid:
        relation = "a sub-agent of this file's session"
    else:
        relation = "another session's header; the items after it are still read as this file's history, as Codex reads them"
    return Diagnostic(
        line,
        "repeated_session_meta",
        f"line {line}: another session_meta, {_who(p)}: {relation}. This file's session is the first "
        f"session_meta (line {first_line}, {_who(first)})",
        severity="info",
        seqs=[seq],
    )


def _events_only(records: list[Record]) -> Diagnostic | None:
    """UI events (event_msg) with no response_item: Codex rebuilds what it sends from response
    items only, so the next request holds no history, however much the events show."""
    if any(r.kind in ("message", "checkpoint") for r in records):
        return None
    events = [r for r in records if r.type.startswith("event_msg")]
    if not events:
        return None
    said = sum(1 for r in events if r.type in ("event_msg:user_message", "event_msg:agent_message"))
    shown = f", {said} of them user or agent messages the UI showed" if said else ""
    return Diagnostic(
        events[0].line,
        "events_only",
        f"line {events[0].line}: {len(events):,} event_msg lines{shown}, but no response_item line: Codex builds the "
        "next request from response items only, so it holds no history (the events are listed as meta records)",
        severity="warning",
        seqs=[r.seq for r in events],
    )


def build(lines: Iterable[RawLine], path: str | None, source: _Fields | None = None) -> Ledger:
    """Map a rollout's lines into the model. Never raises on bad content. `source`: the file the
    lines are read from (`stream`), where a meta line's payload is read again when asked for;
    without it (bytes, a name that is no file) every payload is kept."""
    with collector_paused():  # (see whole_lines: nothing here makes cycles)
        return _build(lines, path, source)


def stream(
    f: BinaryIO, path: str, limit: int, upto_line: int | None, after_fork: Callable[[], Any] | None = None
) -> tuple[Ledger, int]:
    """A rollout read from disk (`base.LineStreamer`), index first: a line whose head decodes clean
    (`codex_heads`) becomes its record from the head (`_read`), its payload, message
    and history key read again from the file when asked for (`_Fields`); any other line is parsed
    whole and mapped as `build` maps it. Only what the mapping keeps stays in memory. A big
    file's chunks are decoded by a forked helper too (`parallel`, `_CODEC`); the ledger is the same."""
    with parallel.helper_of(f, limit, _CODEC, upto_line) as helper:
        if after_fork is not None:
            after_fork()  # (the hasher's thread: started once the helper is forked)
        source = _Fields(path)
        with collector_paused():  # (see whole_lines: nothing here makes cycles)
            b = _Builder(path, source)
            consumed = _read(f, limit, upto_line, b)[0] if helper is None else _read_with_helper(b, f, limit, helper)
            return b.finish(), consumed


def _read(f: BinaryIO, limit: int, upto_line: int | None, b: _Builder, at: tuple[int, int] = (0, 0), stop: int = -1) -> tuple[int, int]:
    """`whole_lines.read_heads_upto` with the head step inlined (calls per line were a fifth of the
    load): a clean line's head decoded (`codex_heads`); a meta line but the header (half the lines)
    made its record here, its payload left in the file (`_Fields`), a response item by
    `_Builder._head_item`. Any other line (the header, a checkpoint, an unknown type, a head that does
    not decode or holds a replacement history, or that `_head_item` declines) is parsed whole, one
    line behind (the last line's truncation diagnosed), by `_add_line`. The line numbers and line ids
    come zipped with the lines (`_Numbers.stream`, `line_id_stream`), `--at LINE` as a slice of them, and
    the lines a block at a time (`_blocks`: the file's size at the start, `stop` and UTF-8 tested a
    block at a time): no test a line for any of them. From `at` (the offset `f` is at, the lines
    before it) to byte `stop` (a chunk of a two-process read: `_read_with_helper`; -1: `limit`).
    Returns the offset and line reached."""
    records, append, seen, taken, add_code, other = b.records, b.records.append, b.seen_ids, b.taken, b.codes.append, MARK_OTHER
    decode, new, head_item, event_types = HEAD_DECODER.decode, _replace, b._head_item, _EVENT_TYPES
    like = b.likes.meta  # type: ignore[union-attr]  # (a meta record: a copy of it, `_Likes`)
    large, valid_utf8, decode_errors = LARGE_LINE_BYTES, heads.valid_utf8, heads.DECODE_ERRORS
    offset, start = prev_offset, seq = at
    lineno, stop = start, limit if stop < 0 else stop
    prev: bytes | None = None
    aligned = len(records) == seq
    numbers, lids = b.numbers.stream(start + 1), line_id_stream(start + 1)
    if upto_line is not None:
        numbers = islice(numbers, max(upto_line - start, 0))  # (`--at LINE`: the lines end with the numbers)
    for lines, ascii in _blocks(f, offset, stop):
        for raw, lineno, lid in zip(lines, numbers, lids, strict=False):  # (the lines first: none lost when they end)
            if prev is not None:
                _general(b, prev, seq, prev_offset, False)  # (seq: the previous line's number while aligned)
                prev = None
                aligned = len(records) == seq
            # While each line made one record (`aligned`), a record's seq is the line number before it (one int less a record).
            seq = seq if aligned else len(records)
            n = len(raw)
            # msgspec does not check the UTF-8 of what it skips: checked first. A large line is read by `bounded`.
            try:
                h = decode(raw) if n <= large and (ascii or raw.isascii() or valid_utf8(raw)) else None
            except decode_errors:
                h = None
            t = h.type if h is not None else None
            if t == "response_item":
                if not head_item(h, seq, lineno, offset, n, lid):
                    prev, prev_offset = raw, offset
            elif t == "event_msg" or t == "turn_context" or (t is not None and t in META_TYPES and t != "session_meta"):
                p = h.payload  # type: ignore[union-attr]
                rid = p.id  # (`_Builder.rid`, inline)
                if not rid or rid in seen or (rid[0] == "L" and taken(rid)):
                    rid = lid
                else:
                    seen[rid] = seq
                if t == "event_msg":
                    sub = p.type
                    if sub == "token_count":  # (one line in five: inline)
                        typ = "event_msg:token_count"
                        info = p.info
                        if info is not None:
                            if b.usage_for is not None:  # (else a repeated report: nothing to give)
                                b._give_head_usage(info.last_token_usage, offset)
                            w = info.model_context_window
                            if w is not None and w > 0:
                                b.settings.window = w
                    else:
                        if sub == "thread_rolled_back":
                            b._head_roll_back(p)
                        typ = event_types.get(sub) or _type_name(event_types, "event_msg", sub)  # type: ignore[arg-type]
                else:
                    typ = _meta_head(b, t, p)  # type: ignore[arg-type]
                append(new(like, seq=seq, line=lineno, id=rid, timestamp=h.timestamp, offset=offset, length=n, type=typ))  # type: ignore[union-attr]
                add_code(other)
            else:  # the header, a checkpoint, another agent's message, an unknown type, a head that did not decode
                prev, prev_offset = raw, offset
            seq = lineno
            offset += n
        if upto_line is not None and lineno >= upto_line:
            break
    if prev is not None:  # (the last line read: the last of the file unless `--at LINE` or `stop` came before it)
        _general(b, prev, lineno, prev_offset, offset >= limit or (upto_line is None and offset < stop))
    return offset, lineno


_BLOCK_BYTES = 1 << 16  # (under malloc's mmap threshold: each block's bytes reuse the last one's pages)


def _blocks(f: BinaryIO, offset: int, stop: int) -> Iterator[tuple[BinaryIO, bool]]:
    """The lines of `f` from `offset` to byte `stop`, about `_BLOCK_BYTES` at a time: each block's
    lines, split as iterating the file splits them, and whether the block is ASCII (then valid
    UTF-8: one test a block, not one a line). A block ends at the end of a line, at `stop` (a line
    cut there when the file grew past the size it had at the start, as iterating it cut it) or at
    the end of the file. Read with pread where `f` has a descriptor (a block's last line, cut by
    the block's end, is read again as the next one's first), else from where `f` is."""
    try:
        fd = f.fileno()
    except (AttributeError, OSError, ValueError):
        fd = -1
    while offset < stop:
        want = min(_BLOCK_BYTES, stop - offset)
        data = os.pread(fd, want, offset) if fd >= 0 else f.read(want)
        if not data:
            return
        if data[-1] != 10 and len(data) == want and offset + want < stop:  # its last line goes on
            cut = data.rfind(b"\n") + 1
            if cut and fd >= 0:
                data = data[:cut]  # (the cut line: the next block's first)
            else:
                data += _rest_of_line(f, fd, offset + want, stop)
        offset += len(data)
        yield io.BytesIO(data), data.isascii()


def _rest_of_line(f: BinaryIO, fd: int, at: int, stop: int) -> bytes:
    """The bytes from `at` to the end of the line there (its newline included), or to `stop`."""
    if fd < 0:
        return f.readline(stop - at)
    parts: list[bytes] = []
    while at < stop:
        part = os.pread(fd, min(_BLOCK_BYTES, stop - at), at)
        end = part.find(b"\n") + 1
        parts.append(part[:end] if end else part)
        if end or not part:
            break
        at += len(part)
    return b"".join(parts)


def _general(b: _Builder, raw: bytes, line: int, offset: int, is_last: bool) -> None:
    """A line parsed whole and mapped (`_add_line`)."""
    rl = parse_line(raw, line, offset, is_last)
    if rl is not None:
        _add_line(b, rl)


def _meta_head(b: _Builder, t: str, p: Any) -> str:
    """A meta line's head (`turn_context`, a usage record, another meta type) given to the builder;
    its record's type, one string per type (not the line's copy)."""
    if t == "turn_context" and p.model is not None and p.model != b.model:
        b.model = p.model  # (the same model: the same object, `_head_item`'s route test)
    elif t == "token_usage_record" and b.usage_for is not None:
        b._give_head_usage(p.usage)
    return _META_NAMES[t]


# -- a big rollout read by two processes (`parallel`): a forked helper reads chunks of lines ahead of
# this one from their heads (`_heads_of_range`: a response item through the serial path's own
# `_Builder._head_item`, on a builder of its own; a meta line as `_read` maps it), and says per
# record only what no earlier chunk decides: its fields, its item's own id, its shape and what its
# line gives the build (a token count's usage and window, a turn's model, a message's history
# key). This one appends them in file order and does there what depends on every line before
# (`_merge_chunk`: ids taken, the reply awaiting its usage, routes, the history); any line the
# helper left (the general path's, a roll-back, a usage record) is read here exactly as `_read`
# reads it, as is every chunk the helper does not take.

# What the loader does with a helper's record beyond appending it (`_merge_chunk`), by its shape.
_OP_META, _OP_TOKENS, _OP_TURN, _OP_GHOST, _OP_MESSAGE, _OP_ITEM, _OP_RARE_ITEM = range(7)


class _Chunk(msgspec.Struct, array_like=True, gc=False):
    """What the helper made of a chunk's lines (`_heads_of_range`), as msgpack brings it."""

    left: list[tuple[int, int]]  # the lines it left (read them here): the records before each, its length
    records: list[Record]  # their `_source` the index of their shape
    shapes: list[tuple[str, str, str | None, int]]  # kind, type, source role, what the loader does (_OP_*)
    tokens: list[tuple[TokensHead | None, int | None]]  # per token count: its last usage, its window (> 0)
    models: list[str | None]  # per turn context: its model
    parts: list[tuple[str | None, ...] | str | None]  # per message item: its history key's content
    empty_calls: list[int]  # the calls with an empty call id (their lines' offsets): their history key is (type, "")
    unkeyed: dict[int, str]  # by line offset: an item type keyed by all its fields (`_Builder._other_item`)
    never_sent: list[int]  # the records of the summarizer's replies (`metadata.compaction_output`)


class _NeverSeen(dict):  # type: ignore[type-arg]
    """The helper builder's ids: none is ever taken (which is decided in file order, here)."""

    def __contains__(self, key: object) -> bool:
        return False

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


class _ChunkReading:
    """The helper's reading of one chunk: `_Builder._head_item` on a builder of its own (records
    numbered from 0, every item's own id untaken), what each record's line gives the build."""

    def __init__(self) -> None:
        self.b = b = _Builder(None, _Fields(""))
        b.seen_ids = _NeverSeen()
        b.taken = lambda pid: False  # type: ignore[method-assign]
        self.left: list[tuple[int, int]] = []
        self.records: list[list[Any]] = []
        self.shapes: dict[tuple[str, str, str | None, int], int] = {}
        self.meta_shapes: dict[str, int] = {}  # (a meta record's shape by its type)
        self.tokens: list[tuple[TokensHead | None, int | None]] = []
        self.models: list[str | None] = []
        self.parts: list[Any] = []
        self.empty_calls: list[int] = []
        self.unkeyed: dict[int, str] = {}
        self.never_sent: list[int] = []

    def shape(self, shape: tuple[str, str, str | None, int]) -> int:
        """The index of a record's shape (kind, type, source role, what the loader does)."""
        i = self.shapes.get(shape)
        if i is None:
            i = self.shapes[shape] = len(self.shapes)
        return i

    def item(self, h: LineHead, at: int, n: int) -> bool:
        """A response item, as `_read` maps it (False: left to the loader)."""
        b = self.b
        k = len(b.records)
        unkeyed = len(b.unkeyed_items)
        if not b._head_item(h, k, 0, at, n, None):  # type: ignore[arg-type]
            return False
        rec = b.records[k]
        if rec.kind == "meta":
            op = _OP_GHOST
        elif rec.type == "response_item:message":
            op = _OP_MESSAGE
            self.parts.append(b.head_keys[k][2])  # type: ignore[index]
        elif k in b.head_keys or len(b.unkeyed_items) > unkeyed:
            op = _OP_RARE_ITEM
            if k in b.head_keys:
                self.empty_calls.append(at)
            if len(b.unkeyed_items) > unkeyed:
                self.unkeyed[at] = h.payload.type  # type: ignore[assignment]
        else:
            op = _OP_ITEM
        if rec.never_sent:
            self.never_sent.append(len(self.records))
        i = self.shape((rec.kind, rec.type, rec.source_role, op))
        self.records.append([0, 0, h.payload.id, None, h.timestamp, at, n, rec.role, rec.stop_reason, None, rec.call_ids, rec.result_id, i])
        return True

    def meta(self, h: LineHead, t: str, at: int, n: int) -> bool:
        """A meta line but the header, as `_read` maps it (False: a roll-back or a usage record,
        left to the loader: they act on the build as a whole)."""
        p = h.payload
        if t == "event_msg":
            sub = p.type
            if sub == "token_count":
                typ, info = "event_msg:token_count", p.info
                w = info.model_context_window if info is not None else None
                self.tokens.append((info.last_token_usage if info is not None else None, w if w is not None and w > 0 else None))
            elif sub == "thread_rolled_back":
                return False
            else:
                typ = _EVENT_TYPES.get(sub) or _type_name(_EVENT_TYPES, "event_msg", sub)  # type: ignore[arg-type]
        elif t == "token_usage_record":
            return False
        else:
            typ = _META_NAMES[t]
            if t == "turn_context":
                self.models.append(p.model)
        i = self.meta_shapes.get(typ)
        if i is None:
            op = _OP_TOKENS if typ == "event_msg:token_count" else _OP_TURN if typ == "turn_context" else _OP_META
            i = self.meta_shapes[typ] = self.shape(("meta", typ, None, op))
        self.records.append([0, 0, p.id, None, h.timestamp, at, n, None, None, None, (), None, i])
        return True

    def chunk(self) -> list[Any]:
        """The `_Chunk`, as msgpack-encodable lists."""
        shapes = list(self.shapes)
        return [self.left, self.records, shapes, self.tokens, self.models, self.parts, self.empty_calls, self.unkeyed, self.never_sent]


def _heads_of_range(fd: int, start: int, end: int) -> list[Any]:
    """In the helper: bytes `start`..`end` (a chunk: whole lines), split as iterating the file
    splits them, each line's head decoded as `_read` decodes it and read by `_ChunkReading`; a
    `_Chunk`, as msgpack-encodable lists."""
    st = _ChunkReading()
    decode, large, valid_utf8, decode_errors = HEAD_DECODER.decode, LARGE_LINE_BYTES, heads.valid_utf8, heads.DECODE_ERRORS
    at = start
    for raw in io.BytesIO(parallel.read_range(fd, start, end)):
        n = len(raw)
        try:
            h = decode(raw) if n <= large and (raw.isascii() or valid_utf8(raw)) else None
        except decode_errors:
            h = None
        t = h.type if h is not None else None
        if t == "response_item":
            taken = st.item(h, at, n)  # type: ignore[arg-type]
        elif t == "event_msg" or t == "turn_context" or (t is not None and t in META_TYPES and t != "session_meta"):
            taken = st.meta(h, t, at, n)  # type: ignore[arg-type]
        else:
            taken = False
        if not taken:
            st.left.append((len(st.records), n))
        at += n
    return st.chunk()


_CHUNK = msgspec.msgpack.Decoder(_Chunk)


def _records_of_range(fd: int, start: int, end: int) -> _Chunk:
    """A chunk this process decodes ahead (the helper holds the one before): as the helper's."""
    return _CHUNK.decode(msgspec.msgpack.encode(_heads_of_range(fd, start, end)))


_CODEC = parallel.ChunkCodec(_heads_of_range, _records_of_range, _CHUNK)  # type: ignore[arg-type]


def _read_with_helper(b: _Builder, f: BinaryIO, limit: int, helper: parallel.Helper) -> int:
    """Every line up to `limit`, in file order: the chunks the helper leaves read here (`_read`),
    the ones it read merged from its answer (`_merge_chunk`). Returns the bytes consumed."""
    offset = line = 0
    names: dict[Any, Any] = {}  # the shapes' strings, one object each
    step: Any = helper.step(0)
    while True:
        if type(step) is _Chunk:
            offset, line = _merge_chunk(b, step, f, (offset, line), limit, names)
        else:  # ours to read (None: the helper failed, so the rest is)
            f.seek(offset)
            offset, line = _read(f, limit, None, b, (offset, line), limit if step is None else step)
            if step is None:
                return offset
        if offset >= limit:
            return offset
        step = helper.step(offset)


def _chunk_shapes(chunk: _Chunk, names: dict[Any, Any]) -> list[tuple[str, str, str | None, int]]:
    """The chunk's shapes with this process's strings (one object per type, as `_read` shares
    them), and its summarizer replies marked."""
    for k in chunk.never_sent:
        chunk.records[k].never_sent = True
    return [names.setdefault(s, s) for s in chunk.shapes]


def _merge_chunk(b: _Builder, chunk: _Chunk, f: BinaryIO, at: tuple[int, int], limit: int, names: dict[Any, Any]) -> tuple[int, int]:
    """A chunk the helper read, appended in order (`_merge_run`), each line it left read here by
    `_read` where it comes. Returns the offset and line reached."""
    offset, line = at
    recs = chunk.records
    shapes, sides = _chunk_shapes(chunk, names), _ChunkSides(chunk)
    k = 0
    for end, n in [*chunk.left, (len(recs), 0)]:
        if end > k:
            run = recs[k:end] if k or end < len(recs) else recs
            line = _merge_run(b, run, line, shapes, sides)
            offset = run[-1].offset + run[-1].length
            k = end
        if n:
            f.seek(offset)
            offset, line = _read(f, limit, None, b, (offset, line), offset + n)
    return offset, line


def _merge_run(b: _Builder, run: list[Record], before: int, shapes: list[tuple[str, str, str | None, int]], sides: _ChunkSides) -> int:
    """The helper's records of consecutive lines after line `line`, appended with what `_read`
    does for each that depends on the lines before it (from line `before` on): its id (`_merge_id`); a message's,
    reasoning's, a call's or its output's `mark_code`, route, awaited usage and history, as
    `_Builder._head_item` does them; a token count's usage and window, a turn's model. Returns
    the last line's number."""
    records, append, source, add_code, history, head_keys = b.records, b.records.append, b.fields, b.codes.append, b.history.append, b.head_keys
    tokens, models, parts, settings, codes = sides.tokens, sides.models, sides.parts, b.settings, sides.codes
    line = before
    for rec, seq, line, lid in zip(run, b.numbers.stream(len(records)), b.numbers.stream(before + 1), line_id_stream(before + 1), strict=False):
        si = rec._source
        kind, typ, role, op = shapes[si]
        rec.seq = seq
        rec.line = line
        rec._source = source
        rec.kind = kind
        rec.type = typ
        if rec.id is None:
            rec.id = lid
        else:
            _merge_id(b, rec, rec.id, lid, op >= _OP_GHOST)
        append(rec)
        if op >= _OP_MESSAGE:
            rec.source_role = role
            code = codes[si]
            if code is None:  # (a shape's `mark_code` but never sent: made from its first record)
                code = codes[si] = mark_code(rec) & ~MARK_NEVER_SENT
            add_code(code | MARK_NEVER_SENT if rec.never_sent else code)
            if rec.role == "assistant":
                if b.model is not b.route_model or b.provider is not b.route_provider:
                    b._route(source, seq)  # type: ignore[arg-type]
                b.usage_for = seq
            if op == _OP_MESSAGE:
                head_keys[seq] = ("message", role, next(parts))
            elif op == _OP_RARE_ITEM:
                sides.item(b, rec)
            history(seq)
            continue
        add_code(MARK_OTHER)
        if op == _OP_TOKENS:
            u, w = next(tokens)
            if u is not None and b.usage_for is not None:
                b._give_head_usage(u, rec.offset)
            if w is not None:
                settings.window = w
        elif op == _OP_TURN:
            m = next(models)
            if m is not None and m != b.model:
                b.model = m
    return line


class _ChunkSides:
    """What a chunk's records give the build beyond themselves, taken in file order by
    `_merge_run`: per token count its usage and window, per turn its model, per message its
    history key's content; a call's key for an empty call id, an item type keyed by all its
    fields (`item`); per message shape its records' `mark_code` (`codes`)."""

    __slots__ = ("chunk", "codes", "models", "parts", "tokens")

    def __init__(self, chunk: _Chunk) -> None:
        self.chunk = chunk
        self.tokens, self.models, self.parts = iter(chunk.tokens), iter(chunk.models), iter(chunk.parts)
        self.codes: list[int | None] = [None] * len(chunk.shapes)  # a message shape's `mark_code`, once met

    def item(self, b: _Builder, rec: Record) -> None:
        if rec.offset in self.chunk.empty_calls:
            b.head_keys[rec.seq] = (rec.type[_ITEM_PREFIX:], "")
        it = self.chunk.unkeyed.get(rec.offset)
        if it is not None:
            b.unkeyed_items.add(it)
            b.unkeyed.add(rec.type)


def _merge_id(b: _Builder, rec: Record, pid: str, lid: str, item: bool) -> None:
    """A helper's record with an own id (its item's or its payload's): its id as `_read` gives it
    (the line's when an earlier record took it), and, for an item's, `_Builder._other_id`."""
    if not pid or pid in b.seen_ids or (pid[0] == "L" and b.taken(pid)):
        rec.id = lid
        if item:
            b._other_id(pid, rec.seq)
    else:
        b.seen_ids[pid] = rec.seq

_CHECK = fields.checker(fields.CODEX)
_META_NAMES = {t: t for t in META_TYPES}


def _build(lines: Iterable[RawLine], path: str | None, source: _Fields | None) -> Ledger:
    b = _Builder(path, source)
    for rl in lines:
        _add_line(b, rl)
    return b.finish()


def _add_line(b: _Builder, rl: RawLine) -> None:
    """A line parsed whole: its objects' fields checked, each mapped (`_Builder.add`), or kept
    as a record Codex never reads when Codex skips the line (`codex_lines`)."""
    if rl.diagnostic is not None:
        b.diags.append(rl.diagnostic)
    first = len(b.records)
    skips = codex_lines.json_skip_reason(rl)
    for k, o in enumerate(rl.objects):
        if not isinstance(o, dict):
            b.diag(rl, "not_an_object", f"a JSON {type(o).__name__}, not a rollout line; ignored")
            continue
        why = skips or codex_lines.skip_reason(o)
        if why is not None:
            _skipped(b, rl, o, k, why)
            continue
        wrong: list[fields.WrongType] = []
        _CHECK(o, "", wrong)
        if wrong:
            b.diags.extend(fields.line_diagnostics(rl.line, wrong))
            if b.header is None and o.get("type") == "session_meta":
                b.meta_removed = {w.path.removeprefix("payload."): w.found for w in wrong if w.path.startswith("payload.")}
        b.add(rl, o, k)
        b.last_general = (rl.line, o.get("ordinal"))
        if rl.diagnostic is not None:
            rl.diagnostic.seqs.append(len(b.records) - 1)
    b.codes += map(mark_code, b.records[first:])


def _refused(line: int, seq: int | None, why: str) -> Diagnostic:
    text = f"line {line}: Codex refuses to resume this rollout ({why}): it stops with an error and sends nothing"
    return Diagnostic(line, "resume_refused", text, severity="error", seqs=[seq] if seq is not None else [])


def _skipped(b: _Builder, rl: RawLine, o: dict[str, Any], k: int, why: str) -> None:
    """A line Codex skips (`why`): kept whole and shown as an unknown record, in no history."""
    seq = len(b.records)
    b.ignored.add(seq)
    p = o.get("payload")
    t, sub = o.get("type"), p.get("type") if isinstance(p, dict) else None
    typ = f"{t}:{sub}" if isinstance(t, str) and isinstance(sub, str) else str(t)
    b.diag(rl, "skipped_by_runtime", f"Codex skips this line ({why}): kept here, never sent", seq)
    b.records.append(Record(seq, rl.line, "unknown", typ, b.rid(p, rl, k), None, o.get("timestamp"), extra=o, offset=rl.offset, length=rl.length))


def _line_alone(rl: RawLine, seq: int) -> Record:
    """One line read by the mapping with no history before it (the writer reads its lines back
    with the rollout instead: `codex_writer.reread`)."""
    rec = build([rl], None).records[0]
    rec.seq = seq
    return rec


# ---------------------------------------------------------------------------------------- the format

def _compacts_first(led: Ledger, items: Sequence[Any], *_: Any) -> tuple[str, list[int]] | None:
    """`Runtime.compacts_first`: Codex's pre-turn auto-compaction (`codex_resume`), each item's
    payload read again from the rollout (one open file; a ledger without its file: the fields kept).
    The window is the rollout's own (its token counts record it): one given to the analysis is not Codex's."""
    files: list[BinaryIO] = []
    path = led.path
    reader = _Fields(path or "")

    def payload_of(rec: Record) -> dict[str, Any] | None:
        try:
            if path is None:
                raise FileNotFoundError  # (a ledger read from bytes)
            if not files:
                files.append(open(path, "rb"))  # noqa: SIM115 - closed below
            return reader.payload(rec, files[0])
        except (OSError, ValueError):  # (gone, unreadable, a name open refuses)
            e = rec.extra
            return e if isinstance(e, dict) else None

    try:
        u = codex_resume.pre_turn_usage(led, items, payload_of, _session_prefix)
    finally:
        for f in files:
            f.close()
    if u is None or not u.compacts:
        return None
    return codex_resume.compaction_note(u, led.records[u.at].line), [u.at]


FORMAT = Format(
    name=NAME,
    label="Codex rollout JSONL",
    forks_copy_parent_history=True,
    # `compacted` replaces all earlier history with its replacement history (server-side
    # compaction: an encrypted `compaction` item stands for the summary); at send time a call
    # without an output gets a synthetic "aborted" output right after it and an output without its
    # call is removed (codex-rs context_manager normalize); base instructions go first.
    runtime=Runtime(
        name=NAME,
        synthesize_missing_results=True,
        synthetic_result_text="aborted",
        replaces_history=True,
        compacts_first=_compacts_first,
    ),
    looks_like=looks_like,
    build=lambda lines, path, _data: build(lines, path),
    stream=stream,
    extend=extend,
    chunk_codec=_CODEC,
    default_places=("~/.codex/sessions",),  # YYYY/MM/DD/rollout-*.jsonl (the walk is recursive)
    writer=Writer(
        record_name="compacted",
        id_prefix=codex_writer.ID_PREFIX,
        planned_id=codex_writer.ID_PREFIX + "planned",
        refusal=codex_writer.refusal,
        entry=codex_writer.compacted_entry,
        read_back=lambda o, rl, seq: _line_alone(rl, seq),
        lines=codex_writer.compacted_lines,
        reread=codex_writer.reread,
    ),
)
