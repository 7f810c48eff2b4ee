"""Codex 0.169's check before the first turn of a resumed rollout: does it compact first?

Before every regular turn Codex runs its pre-sampling compaction (`run_pre_sampling_compact`,
codex-rs `core/src/session/turn.rs`): when the session's token usage is at or over its auto-compact
limit it sends the history to its summarizer first, and the user's message then goes after the
summary, not after the history the rollout holds. On a resumed session that usage is seeded from the
rollout (`Session::last_token_info_from_rollout`, `core/src/session/session.rs`): the last
`token_count` event carrying an `info`, wherever it is, then counted as
`ContextManager::get_total_token_usage` counts it (`core/src/context_manager/history.rs`):

- its `last_token_usage.total_tokens`,
- plus Codex's estimate of every encrypted reasoning item before the last user message, unless the
  info says `last_usage_includes_reasoning: true` (a Codex of 2025 wrote no such field: its reasoning
  is added; observed, a real 0.60.1 rollout of 153,257 recorded tokens was compacted first for ~99,800
  of estimated reasoning, and sent the turn once the field said true),
- plus its estimate of the items after the last one the model produced (an output recorded after the
  last call, a user message with no reply).

The limit is the model's (`ModelInfo::auto_compact_token_limit`, `protocol/src/openai_models.rs`):
90% of its context window, lowered by a `model_auto_compact_token_limit` set in config.toml (which
the rollout does not record; every model of 0.169's bundled catalog has none). The window the
rollout records (`info.model_context_window`) is the effective one, `context_window *
effective_context_window_percent / 100` with the catalog's default percent 95 (an older Codex
recorded the window itself: `model_window`).

Observed with the real Codex 0.169 (`tests/test_codex_resume_compaction.py`): the peer rollout with
`model_context_window = 100000` in config.toml records 95,000; resumed with its last usage set to
89,990 tokens it sends the turn, with 90,000 it sends a compaction request first; a 270-token
prompt does not count (89,500: no compaction).

Pure: the records' payloads come through `payload_of` (the format reads them); the estimates are
the writer's (`codex_writer.item_tokens`), the same 4 bytes a token.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from inspector.formats.codex_writer import approx_tokens, item_tokens
from inspector.ledger.model import Ledger, Record

EFFECTIVE_WINDOW_PERCENT = 95  # codex-rs openai_models.rs `default_effective_context_window_percent`
AUTO_COMPACT_SHARE = (9, 10)  # `auto_compact_token_limit`: (context_window * 9) / 10
TOKEN_COUNT = "event_msg:token_count"
# The items `is_model_generated_item` names (an assistant message besides).
MODEL_GENERATED = frozenset(
    f"response_item:{t}"
    for t in (
        "reasoning",
        "function_call",
        "tool_search_call",
        "web_search_call",
        "image_generation_call",
        "custom_tool_call",
        "local_shell_call",
        "compaction",
        "context_compaction",
    )
)
REASONING = "response_item:reasoning"
# A reasoning item's estimate is 3/4 of its ciphertext less 650 bytes: its line's length bounds it.
_REASONING_OVERHEAD = 650

PayloadOf = Callable[[Record], "dict[str, Any] | None"]


class SentItem(Protocol):
    """An item of the next request as the analysis lists it (`analysis.engine.ContextItem`)."""

    seq: int | None
    kind: str
    text: str
    synthetic: bool


@dataclass(frozen=True, slots=True)
class PreTurnUsage:
    """What Codex compares with its limit before the resumed session's first turn."""

    recorded: int  # the last token_count's last_token_usage.total_tokens
    # the reasoning before the last user message (counted only where it can reach the limit) and
    # the items after the model's last
    estimated: int
    limit: int  # its auto-compact limit (90% of the model's window)
    window: int  # the model's context window, from the effective one the rollout records
    at: int  # the seq of that token_count

    @property
    def total(self) -> int:
        return self.recorded + self.estimated

    @property
    def compacts(self) -> bool:
        return self.total >= self.limit


# The context windows of 0.169's bundled model catalog (`"context_window"` in the binary's models
# list). Codex before the effective share (rollouts of 2025: 272,000 for gpt-5) recorded the full
# window: a recorded value that is one of these is taken as the window itself.
CATALOG_WINDOWS = frozenset({272_000, 372_000, 500_000})


def model_window(recorded: int) -> int:
    """The model's context window, from the one the rollout records: the effective share (95%) of it,
    or, written by an older Codex, the catalog's window itself."""
    if recorded in CATALOG_WINDOWS:
        return recorded
    return -(-recorded * 100 // EFFECTIVE_WINDOW_PERCENT)


def auto_compact_limit(window: int) -> int:
    num, den = AUTO_COMPACT_SHARE
    return window * num // den


def _last_usage(led: Ledger) -> tuple[Record, dict[str, Any]] | None:
    """The last token_count carrying an info, and that info (None: no such line)."""
    for rec in reversed(led.records):
        if rec.type == TOKEN_COUNT:
            p = rec.extra
            info = p.get("info") if isinstance(p, dict) else None
            if isinstance(info, dict):
                return rec, info
    return None


def _count(v: Any) -> int | None:
    return v if type(v) is int and v >= 0 else None


def _is_user_turn(rec: Record, payload_of: PayloadOf, session_prefix: Callable[[str], bool]) -> bool:
    """A user message that starts a turn (`is_user_turn_boundary`: not one Codex injects itself)."""
    if rec.type != "response_item:message" or rec.role != "user":
        return False
    p = payload_of(rec) or {}
    content = p.get("content")
    first = content[0] if isinstance(content, list) and content else None
    text = first.get("text") if isinstance(first, dict) else None
    return not (isinstance(text, str) and session_prefix(text))


def _model_generated(rec: Record) -> bool:
    return rec.type in MODEL_GENERATED or (rec.type == "response_item:message" and rec.role == "assistant")


def _reasoning_tokens(records: Sequence[Record], payload_of: PayloadOf, session_prefix: Callable[[str], bool], room: int) -> int:
    """Codex's estimate of the encrypted reasoning items before the last user message of `records`.
    Read only where their lines' lengths could reach `room` (the estimate is under a quarter of
    three quarters of the line): most sessions are far under their limit, and nothing is read."""
    bound = sum(approx_tokens(r.length * 3 // 4 - _REASONING_OVERHEAD) for r in records if r.type == REASONING and r.length)
    if bound < room:
        return 0
    last_user = next((i for i in range(len(records) - 1, -1, -1) if _is_user_turn(records[i], payload_of, session_prefix)), 0)
    total = 0
    for r in records[:last_user]:
        if r.type == REASONING:
            p = payload_of(r)
            if isinstance(p, dict) and isinstance(p.get("encrypted_content"), str):
                total += item_tokens(p)
    return total


def pre_turn_usage(
    led: Ledger, items: Sequence[SentItem], payload_of: PayloadOf, session_prefix: Callable[[str], bool]
) -> PreTurnUsage | None:
    """The usage Codex resumes the session with, against its limit, `items` the history it resumes
    (the next request's items: the base instructions, which are no history item, and what Codex adds
    at send time are left out); None where the rollout records no usage or no window (Codex then
    counts from nothing, or against a window this file does not tell)."""
    got = _last_usage(led)
    if got is None:
        return None
    rec, info = got
    last = info.get("last_token_usage")
    recorded = _count(last.get("total_tokens")) if isinstance(last, dict) else None
    effective = _count(info.get("model_context_window"))
    if recorded is None or not effective:
        return None
    window = model_window(effective)
    limit = auto_compact_limit(window)
    history = [it for it in items if not it.synthetic and (it.seq is not None or it.kind == "summary")]
    after = 0
    for it in reversed(history):  # the items after the last one the model produced
        r = led.records[it.seq] if it.seq is not None and it.kind != "summary" else None
        if r is not None and _model_generated(r):
            break
        after += item_tokens(_summary_item(it.text) if r is None else payload_of(r) or {})
    if recorded + after >= limit:
        return PreTurnUsage(recorded, after, limit, window, rec.seq)
    if info.get("last_usage_includes_reasoning") is True:  # (the usage holds them: nothing added)
        return PreTurnUsage(recorded, after, limit, window, rec.seq)
    records = [led.records[it.seq] for it in history if it.seq is not None and it.kind != "summary"]
    reasoning = _reasoning_tokens(records, payload_of, session_prefix, limit - recorded - after)
    return PreTurnUsage(recorded, after + reasoning, limit, window, rec.seq)


def _summary_item(text: str) -> dict[str, Any]:
    """A compaction's summary as the user message Codex holds it as."""
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def compaction_note(u: PreTurnUsage, line: int) -> str:
    """What the finding says when Codex compacts before the turn."""
    est = f" plus about {u.estimated:,} it estimates for what that count leaves out" if u.estimated else ""
    return (
        f"Codex compacts this session before it sends your next message: the usage it resumes with, {u.recorded:,} "
        f"tokens (the token count at line {line}){est}, is at or over its auto-compact limit of {u.limit:,} (90% of the "
        f"model's {u.window:,}-token window, its default; a lower model_auto_compact_token_limit in config.toml makes it "
        "sooner). It first sends the history to its summarizer, then your message after that summary: the request shown "
        "here is what it would send without the compaction. A rollout inspector repairs records its new size: Codex "
        "resumes it without compacting it again."
    )


__all__ = ["PreTurnUsage", "auto_compact_limit", "compaction_note", "model_window", "pre_turn_usage"]
