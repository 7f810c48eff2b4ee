"""Which messages a Claude Code 2.1.328 compaction kept verbatim that its summarizer was also given.

From the bundle's source (the native binary of `@anthropic-ai/claude-code-linux-x64`, byte
offsets in that file; docs/runtimes/claude_code.md, section 3). Every compaction, `/compact` and
auto alike, runs `K7n` (offset 319528473):

- The conversation is cut into API-round groups (`Kxt` / `jee`, offsets 319496477, 319495928): a
  group starts at each assistant line whose `message.id` differs from the previous assistant's,
  and holds that reply's lines, its tool results and whatever user lines follow, up to the next
  reply; the lines before the first reply are group 0.
- It keeps the last group (`ut` is 1: the flags that keep two, `tengu_glowing_tulip` /
  `tengu_partitioned_brook`, and the kept-tail budget `tengu_woven_tassel`, are off by default)
  and summarizes the rest; when the rest holds no assistant line at all it summarizes everything
  up to the last real prompt instead (`FEt`, offset 319526667) and keeps only that prompt on.
- On the first attempt of a compaction that is not reactive, the kept group's head `Hr` (its
  lines up to its last real reply or tool result: `FH`, offset 319861147) goes to the summarizer
  too (`go=Hr`, the second argument of `k6n`, offset 319521854, which sends
  `[...summarized, ...go]`) when all of:
  - `y6n` (offset 319528218): every tool call in `Hr` has its result there (`lre` returns it
    unchanged, offset 322803002) and `Hr` is at most `UEt` = 15,000 tokens by Claude Code's
    estimate (`ju`, offset 318148887: per content block, characters / 4 rounded, a tool call its
    name and JSON input, an image 2,000; `gZ` / `Hle`, offset 316171780);
  - `Hr` holds a real reply (`rWe`, offset 319525981: an assistant line, not an API error, whose
    first block is not one of the stock texts `eft`, offset 322717436);
  - and either the summarized part holds a user line after its last real reply or tool result
    (`sWe`, offset 319861265: the kept round is the first after a prompt), or that last one is a
    tool result, `Hr` holds none, and a real prompt follows `Hr` in the kept group (`qxt`,
    offset 319861383: the reply that ended a tool loop, kept with the prompt that came next).
- The kept lines after `Hr` (a pending prompt) are never given; a retry after a failed attempt
  gives none (`Ot===0`).

Not modelled (no scenario makes them, and a transcript does not say): reactive compactions after
a prompt-too-long reply, retries, queued-command attachments (a user line for `sWe`), and
attachment lines' own token counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from inspector.ledger.jsontext import js_length, js_stringify
from inspector.ledger.model import Message, Record

# Claude Code 2.1.328's own reply to a conversation it resumes inside a turn (its `w2`, offset
# 305859308, a `<synthetic>` assistant line).
RESUME_REPLY = "No response requested."
# `eft` (offset 322717436): texts Claude Code writes itself; a line starting with one is no real
# reply (`PO`). The other two members are a tool-use refusal's texts, never a reply's.
STOCK_TEXTS = frozenset({RESUME_REPLY, "[Request interrupted by user]", "[Request interrupted by user for tool use]"})
KEPT_ROUND_SHOWN_MAX_TOKENS = 15_000  # `UEt`, offset 319528204
_IMAGE_TOKENS = 2_000  # `S`, an image or document block


def _js_round(x: float) -> int:
    return math.floor(x + 0.5)




def _quarter(s: Any) -> int:
    return _js_round(js_length(s) / 4) if isinstance(s, str) else 0


def _json(v: Any) -> str:
    return js_stringify(v)


def estimated_tokens(content: Any) -> int:
    """Claude Code's estimate of a message content's tokens (`gZ` without a model's table)."""
    if isinstance(content, str):
        return _quarter(content)
    if not isinstance(content, list):
        return 0
    return sum(_block_tokens(b) for b in content)


def api_content(m: Message) -> list[dict[str, Any]]:
    """A message's blocks in the Messages API's shape, for a line not read from a file."""
    out: list[dict[str, Any]] = []
    for b in m.blocks:
        if b.type == "text":
            out.append({"type": "text", "text": b.text})
        elif b.type == "thinking":
            out.append({"type": "thinking", "thinking": b.text})
        elif b.type == "tool_call":
            out.append({"type": "tool_use", "id": b.call_id, "name": b.name, "input": b.args})
        elif b.type == "tool_result":
            out.append({"type": "tool_result", "tool_use_id": b.call_id, "content": b.text})
        elif isinstance(b.raw, dict):
            out.append(b.raw)
    return out


def _block_tokens(b: Any) -> int:
    if isinstance(b, str):
        return _quarter(b)
    if not isinstance(b, dict):
        return 0
    t = b.get("type")
    if t == "text":
        return _quarter(b.get("text"))
    if t in ("image", "document"):
        return _IMAGE_TOKENS
    if t == "tool_result":
        return estimated_tokens(b.get("content"))
    if t == "thinking":
        return _quarter(b.get("thinking"))
    if t == "tool_use":
        name = b.get("name") if isinstance(b.get("name"), str) else ""
        return _quarter(name + _json(b.get("input") if b.get("input") is not None else {}))
    if t == "redacted_thinking":
        return _quarter(b.get("data"))
    return _quarter(_json(b))


def _is_real_reply(r: Record) -> bool:
    """`X7n`: an assistant line that is not an API error (our reader's `error` stop with its
    message)."""
    m = r.message
    return r.kind == "message" and r.role == "assistant" and m is not None and not (m.stop_reason == "error" and m.error_message is not None)


def _continues(r: Record, reply: Record | None) -> bool:
    """A later line of a reply Claude Code wrote one content block per line."""
    return reply is not None and r.kind == "meta" and (r.extra or {}).get("merged_into_line") == reply.line


def _first_text(r: Record) -> str | None:
    m = r.message
    if m is None or not m.blocks or m.blocks[0].type != "text":
        return None
    return m.blocks[0].text


def _is_result(r: Record) -> bool:
    return r.kind == "message" and r.role == "tool"


def _is_real_prompt(r: Record) -> bool:
    """`qxt`: a user line, not meta, no tool result, not a stock text."""
    return (
        r.kind == "message"
        and r.role == "user"
        and (r.extra or {}).get("isMeta") is not True
        and _first_text(r) not in STOCK_TEXTS
    )


def _head(records: Sequence[Record], kept: list[int]) -> list[int]:
    """`Hr`: the kept round's lines up to its last real reply (all its lines) or tool result (`FH`)."""
    end, reply = 0, None
    for i, x in enumerate(kept):
        r = records[x]
        if _is_real_reply(r):
            reply, end = r, i + 1
        elif _is_result(r) or _continues(r, reply):
            end = i + 1
    return kept[:end]


def _paired(records: Sequence[Record], head: list[int]) -> bool:
    calls: set[str] = set()
    answered: set[str] = set()
    for x in head:
        m = records[x].message
        if m is None:
            continue
        calls.update(b.call_id for b in m.blocks if b.type == "tool_call" and b.call_id)
        answered.update(m.tool_result_ids())
    return calls <= answered


def _as_runtime_held(records: Sequence[Record], rest: list[int]) -> list[int]:
    """The summarized part in the order Claude Code held it: from the last earlier boundary on
    (that boundary with its summary, the lines it kept, then what followed); our path puts the
    kept lines ahead of their boundary, and what came before them Claude Code had dropped."""
    last = max((i for i, x in enumerate(rest) if records[x].kind == "checkpoint"), default=None)
    if last is None:
        return rest
    cp = records[rest[last]].checkpoint
    first = next((i for i, x in enumerate(rest[:last]) if cp is not None and records[x].id == cp.first_kept_id), last)
    return [rest[last], *rest[first:last], *rest[last + 1 :]]


def _summarized_tail(records: Sequence[Record], held: list[int]) -> tuple[bool, bool]:
    """(a user line follows the summarized part's last real reply or tool result (`sWe`: an
    earlier boundary's summary is one), that last one is a tool result)."""
    user = False
    for x in reversed(held):
        r = records[x]
        if r.kind == "checkpoint":
            user = True
        elif r.kind != "message":
            continue
        elif _is_result(r):
            return user, True
        elif _is_real_reply(r):
            return user, False
        elif r.role == "user":
            user = True
    return user, False


def kept_round_shown(
    records: Sequence[Record], rest: list[int], kept: list[int], content_of: Callable[[Record], Any]
) -> str | None:
    """The id of the last kept line the summarizer was also given (the end of `Hr`), or None.
    `rest`: the path before the boundary without the kept lines; `content_of`: a line's
    `message.content` as written."""
    msgs = [x for x in kept if records[x].kind == "message"]
    held = _as_runtime_held(records, rest)
    if not msgs or records[msgs[0]].role != "assistant" or not any(records[x].role == "assistant" for x in held):
        return None  # the last resort (`FEt`): everything up to the pending prompt is summarized
    head = _head(records, kept)
    if not head or not _paired(records, head):
        return None
    if sum(estimated_tokens(content_of(records[x])) for x in head) > KEPT_ROUND_SHOWN_MAX_TOKENS:
        return None
    if not any(_is_real_reply(records[x]) and _first_text(records[x]) not in STOCK_TEXTS for x in head):
        return None
    after_prompt, after_result = _summarized_tail(records, held)
    pending = any(_is_real_prompt(records[x]) for x in kept[len(head) :])
    if not (after_prompt or (after_result and pending and not any(_is_result(records[x]) for x in head))):
        return None
    return next(records[x].id for x in reversed(head) if records[x].kind == "message")
