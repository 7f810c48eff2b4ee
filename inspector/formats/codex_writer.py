"""Codex's write-back (issue 14 §2; docs/runtimes/codex.md): a `compacted` line whose
`replacement_history` is the whole next request's history (our summary as a user message, then
every item the repair keeps, copied verbatim from the rollout), and the `event_msg` Codex writes
beside its own compactions (`item_completed` of a `ContextCompaction` item).

Codex 0.169 resumes a rollout by replaying it (codex-rs `core/src/session/rollout_reconstruction.rs`):
the newest `compacted` line with a `replacement_history` becomes the history base (`history.replace`)
and only the lines after it are replayed on top. Nothing follows ours, so the resumed request is
exactly its replacement history (after the base instructions), then the new turn. Its resume
loader refuses a rollout whose last line has no `ordinal` ("final paginated rollout record ... is
missing an ordinal"), so where the rollout numbers its lines the appended ones continue the count
(from its latest numbered line: a rollout refused for an unnumbered last line resumes after it).

The usage Codex resumes with: Codex 0.169 seeds a resumed session's token usage from the rollout's
last `event_msg` `token_count` that carries an `info` (`Session::last_token_info_from_rollout`,
codex-rs `core/src/session/session.rs`, called from `record_initial_history`), and before each turn
compares `ContextManager::get_total_token_usage` (`core/src/context_manager/history.rs`: that
info's `last_token_usage.total_tokens`, plus an estimate of the items recorded after the last
model-generated one) with its auto-compact limit (`run_pre_sampling_compact`, `core/src/session/turn.rs`;
all cited by function in the stored openai/codex copies, docs/runtimes/codex.md). Left alone, the last
`token_count` of a rollout repaired because it overflowed is the overflowing request's, and Codex
compacts our already-small checkpoint again before the user's turn (seen on a real rollout: 132,006
tokens recorded, the harness's window 100,000). So after the checkpoint we append the `token_count`
Codex itself writes after its own compaction (`Session::recompute_token_usage`, core/src/session/
mod.rs; the peer corpus's auto_compact.jsonl lines 41 and 68): the previous info's
`total_token_usage` and `model_context_window` carried, `last_token_usage` zero but its
`total_tokens`, the new history's size estimated as Codex estimates it (`estimate_token_count_with_base_instructions`:
`_codex_estimate`). Codex writes one whether or not the rollout had usage before (from a zero
`TokenUsageInfo`), and so do we: a resumed session then knows the size of the history it holds.

Where the kept items come from: a `compacted` line holds copies of them, so the writer reads the
analysed file back (refused if its bytes are no longer those analysed) and copies each kept
record's `payload` as it is. Reading back (`reread`) re-runs the Codex mapping over the whole
file plus the appended lines: the checkpoint's replacement history is matched against the
history before it (by item id, else by content), exactly as a reload does.

Pure apart from reading the analysed session file again; writing is the store's job.
"""

from __future__ import annotations

from typing import Any

from inspector.formats.base import CheckpointDraft, Unwritable
from inspector.formats.codex_lines import SERDE_DEPTH, fields_read, nesting
from inspector.formats.jsonl import LoadError, RawLine, read_lines
from inspector.ledger.jsontext import json_dumps
from inspector.ledger.model import Ledger, Record

# codex-rs templates/compact/summary_prefix.md whole (the binary holds it verbatim; `codex.SUMMARY_PREFIX`
# is its first sentence, what the reader recognises): Codex's own compaction sends `<prefix>\n<summary>` as the user message standing for what it replaced.
SUMMARY_MESSAGE_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its thinking process. "
    "You also have access to the state of the tools that were used by that language model. Use this to build "
    "on the work that has already been done and avoid duplicating work. Here is the summary produced by the "
    "other language model, use the information in this summary to assist with your own analysis:"
)
ID_PREFIX = "inspector-compaction-"


def summary_message(summary: str) -> str:
    """The text of the user message that carries the summary, in Codex's own shape."""
    return f"{SUMMARY_MESSAGE_PREFIX}\n{summary}"


def refusal(led: Ledger) -> str | None:
    """What keeps an appended `compacted` line from being resumed by Codex, or None."""
    if led.path is None:
        return "the rollout was not read from a file: the kept items are copied from it"
    if led.header is None or not isinstance(led.session_id, str):
        return "the rollout has no session_meta line with a thread id: Codex resumes a rollout by its thread id"
    if led.runtime_rejects_file:
        return "Codex would not read this rollout: an appended checkpoint would be lost"
    return None


def compacted_entry(d: CheckpointDraft) -> dict[str, Any]:
    """The `compacted` line before `lines` completes it (its ordinal and the kept items need the
    rollout itself). `id` is this tool's own field (Codex writes none and ignores it): it names
    the checkpoint in backups, `undo` and the re-read; `inspector` holds what the repair states."""
    summary = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary_message(d.summary)}]}
    return {
        "timestamp": d.timestamp,
        "type": "compacted",
        "id": d.entry_id,
        "payload": {
            "message": summary_message(d.summary),
            "replacement_history": [summary],
            "inspector": {
                "represents": d.represents,
                "retains": d.retains,
                "retainedTailShape": d.shape,
                "failureReason": d.failure_reason,
                "tokensBefore": d.tokens_before,
                "requests": d.requests,
                "truncated": d.truncated,
                "producer": d.producer,
            },
        },
    }


def _analysed_lines(led: Ledger) -> list[RawLine]:
    """The rollout's lines, provided its bytes are still the ones analysed."""
    assert led.path is not None
    try:
        lines, size, sha = read_lines(led.path, led.upto_line)  # --at: the prefix that was analysed
    except LoadError as e:
        raise Unwritable(f"the rollout cannot be read again ({e})") from None
    if size != led.size or (led.sha256 is not None and sha != led.sha256):
        raise Unwritable(f"{led.path} changed since it was analysed ({led.size:,} → {size:,} bytes): analyse it again")
    return lines


# A kept item sits 3 levels down in the `compacted` line (the line, its payload, the replacement
# history): one nesting more than this is a line Codex's parser skips, and the checkpoint with it.
_ITEM_DEPTH = SERDE_DEPTH - 1 - 3


def _shallow(p: dict[str, Any], where: str) -> dict[str, Any]:
    """P as the replacement history can hold it: verbatim, unless it nests deeper than Codex
    reads there (read from its own line, two levels up, it was read), then without the fields
    Codex never read of it (what Codex holds and writes when it compacts); refused when that is
    not enough, or would make it another item to the re-read (`codex._key`)."""
    if nesting(p) <= _ITEM_DEPTH:
        return p
    from inspector.formats.codex import _key

    q = fields_read(p)
    if nesting(q) > _ITEM_DEPTH or _key(q) != _key(p):
        raise Unwritable(
            f"{where}: the item kept raw nests {nesting(p)} levels deep: in a compacted line, deeper than "
            f"Codex's JSON parser reads ({SERDE_DEPTH} levels), Codex would skip the checkpoint"
        )
    return q


def _kept_payloads(led: Ledger, lines: list[RawLine], ids: list[str]) -> list[dict[str, Any]]:
    """Each kept record's `payload`, verbatim (but `_shallow`), in order."""
    by_line = {rl.line: rl for rl in lines}
    by_id = led.by_id()
    out: list[dict[str, Any]] = []
    for rid in ids:
        rec = led.records[by_id[rid]]
        rl = by_line.get(rec.line)
        objs = [o for o in (rl.objects if rl is not None else []) if isinstance(o, dict)]
        if len(objs) != 1 or objs[0].get("type") != "response_item" or not isinstance(objs[0].get("payload"), dict):
            raise Unwritable(
                f"{led.path}: line {rec.line}: the record kept raw ({rec.type}) is not one response_item line: "
                "Codex's replacement history can hold only response items"
            )
        out.append(_shallow(objs[0]["payload"], f"{led.path}: line {rec.line}"))
    return out


def _last_ordinal(lines: list[RawLine]) -> int | None:
    """The ordinal of the latest numbered line: the count the appended lines continue (where the
    last line has none, a rollout Codex refuses to resume, the repair's numbered lines end that)."""
    for rl in reversed(lines):
        for o in reversed(rl.objects):
            n = o.get("ordinal") if isinstance(o, dict) else None
            if isinstance(n, int) and not isinstance(n, bool):
                return n
    return None


def _last_turn(led: Ledger) -> str | None:
    """The turn id of the latest turn_context (Codex's item events name their turn)."""
    for r in reversed(led.records):
        if r.type == "turn_context" and isinstance(r.extra, dict) and isinstance(r.extra.get("turn_id"), str):
            return r.extra["turn_id"]
    return None


def compacted_lines(entry: dict[str, Any], d: CheckpointDraft, led: Ledger) -> list[dict[str, Any]]:
    """The `compacted` line (completed in place: the entry is the line written), its event, and
    the `token_count` that makes the new history's size the usage Codex resumes with."""
    lines = _analysed_lines(led)
    payload = entry["payload"]
    payload["replacement_history"] = [payload["replacement_history"][0], *_kept_payloads(led, lines, d.retains)]
    n = _last_ordinal(lines)
    head = {"timestamp": entry["timestamp"], **({"ordinal": n + 1} if n is not None else {})}
    body = {k: v for k, v in entry.items() if k != "timestamp"}
    entry.clear()
    entry.update(head | body)
    event = {
        "timestamp": d.timestamp,
        **({"ordinal": n + 2} if n is not None else {}),
        "type": "event_msg",
        "payload": {
            "type": "item_completed",
            "thread_id": led.session_id,
            "turn_id": _last_turn(led),
            "item": {"type": "ContextCompaction", "id": d.entry_id},
        },
    }
    usage = token_count_line(lines, led.instructions, payload["replacement_history"], d.timestamp, n + 3 if n is not None else None)
    return [entry, event, usage]


# Codex's token estimate (codex-rs `core/src/context_manager/history.rs`, `estimate_item_token_count`
# and `estimate_token_count_with_base_instructions`; `codex-rs/utils/output-truncation`: 4 bytes a
# token, rounded up): an item's serialized JSON bytes, but an image's base64 data URL payload
# counted as RESIZED_IMAGE_BYTES and an encrypted reasoning item as 3/4 of its ciphertext less 650
# bytes. Newer Codex adds a lexical floor (0.169 wrote 6,107 for a history this gives 6,557): the
# figure is a size for Codex to compare with its limit, not a tokenizer count.
BYTES_PER_TOKEN = 4
RESIZED_IMAGE_BYTES = 7373


def approx_tokens(n_bytes: int) -> int:
    return (max(n_bytes, 0) + BYTES_PER_TOKEN - 1) // BYTES_PER_TOKEN


def _image_payload(url: Any) -> int | None:
    """The length of a `data:image/...;base64,` URL's payload (what Codex discounts), else None."""
    if not isinstance(url, str) or url[:5].lower() != "data:" or "," not in url:
        return None
    meta, payload = url[5:].split(",", 1)
    mime, *params = meta.split(";")
    if not mime.lower().startswith("image/") or not any(x.lower() == "base64" for x in params):
        return None
    return len(payload)


def _item_bytes(p: dict[str, Any]) -> int:
    """The model-visible bytes Codex estimates for one history item."""
    enc = p.get("encrypted_content")
    if p.get("type") in ("reasoning", "compaction") and isinstance(enc, str):
        return max(len(enc) * 3 // 4 - 650, 0)
    raw = len(json_dumps(p, ensure_ascii=False, separators=(",", ":")).encode())
    parts = p.get("content") if p.get("type", "message") == "message" else p.get("output")
    for part in parts if isinstance(parts, list) else []:
        n = _image_payload(part.get("image_url")) if isinstance(part, dict) and part.get("type") == "input_image" else None
        if n is not None:
            raw += RESIZED_IMAGE_BYTES - n
    return raw


def item_tokens(p: dict[str, Any]) -> int:
    """The tokens Codex estimates for one history item (`estimate_item_token_count`)."""
    return approx_tokens(_item_bytes(p))


def _codex_estimate(instructions: str | None, history: list[dict[str, Any]]) -> int:
    """The tokens Codex estimates for the base instructions and this history."""
    base = approx_tokens(len(instructions.encode())) if instructions else 0
    return base + sum(map(item_tokens, history))


USAGE_FIELDS = ("input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")


def _usage(u: Any) -> dict[str, int]:
    """A TokenUsage in Codex 0.169's shape: U's counts (a field missing or not a count: 0)."""
    u = u if isinstance(u, dict) else {}
    return {k: v if type(v) is int and 0 <= v < 2**63 else 0 for k in USAGE_FIELDS for v in [u.get(k)]}


def token_count_line(lines: list[RawLine], instructions: str | None, history: list[dict[str, Any]], timestamp: str, ordinal: int | None) -> dict[str, Any]:
    """The `token_count` event Codex writes after its own compaction, for a rollout whose lines
    are LINES and whose next history is HISTORY: the latest usage info's `total_token_usage` and
    `model_context_window` carried (none: zero, null), `last_token_usage` the new history's
    estimated size only; the latest recorded rate limits carried (none: null)."""
    info: dict[str, Any] | None = None
    limits: Any = None
    for rl in reversed(lines):
        for o in reversed(rl.objects):
            p = o.get("payload") if isinstance(o, dict) and o.get("type") == "event_msg" else None
            if not isinstance(p, dict) or p.get("type") != "token_count":
                continue
            if info is None and isinstance(p.get("info"), dict):
                info = p["info"]
            if limits is None and isinstance(p.get("rate_limits"), dict):
                limits = p["rate_limits"]
        if info is not None and limits is not None:
            break
    window = info.get("model_context_window") if info is not None else None
    return {
        "timestamp": timestamp,
        **({"ordinal": ordinal} if ordinal is not None else {}),
        "type": "event_msg",
        "payload": {
            "type": "token_count",
            "info": {
                "total_token_usage": _usage(info.get("total_token_usage") if info is not None else None),
                "last_token_usage": _usage(None) | {"total_tokens": _codex_estimate(instructions, history)},
                "last_usage_includes_reasoning": True,  # (the estimate counts every reasoning item: Codex adds none)
                "model_context_window": window if type(window) is int and window > 0 else None,
            },
            "rate_limits": limits,
        },
    }


def reread(led: Ledger, appended: list[dict[str, Any]]) -> list[Record]:
    """The appended lines as the Codex mapping reads them after the rollout (a reload's records)."""
    from inspector.formats.codex import build

    lines = _analysed_lines(led)
    nxt = max((rl.line for rl in lines), default=0) + 1
    offset = led.size
    for k, o in enumerate(appended):
        length = len(json_dumps(o, ensure_ascii=False, separators=(",", ":")).encode()) + 1  # as entries.entry_line
        lines.append(RawLine(nxt + k, offset, length, [o]))
        offset += length
    after = build(lines, led.path)
    if len(after.records) != len(led.records) + len(appended):
        raise Unwritable(f"{led.path}: the rollout does not read back as analysed with the checkpoint appended")
    return after.records[len(led.records) :]
