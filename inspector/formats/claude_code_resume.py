"""Claude Code's own compaction before the next prompt (2.1.328): before each request of a turn, the
first one of a resumed session's new prompt included, Claude Code counts the conversation's tokens
and, at or over its threshold, first sends the history to its summarizer (`H2o`, offset 319898638,
asks `ORs`, offset 319896514). The request the analysis shows is then not the next one it sends.
Offsets are bytes into the pinned binary (tests/peers/claude_code_hook/runtime/node_modules/
@anthropic-ai/claude-code-linux-x64/claude).

The rule, as the bundle has it:
- the count (`ORs`: `Jf(e)-h+LV(e)`): walking back from the newest message (`j_t`, offset
  318808385), the first compact boundary (the count starts from 0 there) or reply whose usage
  counts (`JU`, offset 318804341: an assistant line with a `usage`, not of the model
  "<synthetic>", not one whose first block is a stock text of Claude Code's, `eft` at 322717436,
  not `isUnmetered`; `B_t`, 318806802: its input + cache writes + cache reads not 0), moved back
  to the first line of that reply (the lines with its `message.id`, `mH`). The reply's input +
  cache creation + cache read + output tokens (`OI`, 309401611; from its last `iterations` entry
  where that one is valid, `H6`, 309401123), plus Claude Code's estimate of every message after
  that first line (`Jf`, 318806375; `ju`/`XHr`, 318148887; `gZ`/`Hle`, 316171780: a text's
  UTF-16 length over the model's bytes per token, rounded, `Al`/`w` at 316170926; 2,000 for an
  image; an attachment's rendered reminders), plus the input tokens the server cleared from the
  newest reply's context (`LV`/`MUn`, 318806840; `ktn`, 309402534). The snip feature's freed
  tokens (`h`) are 0 without it;
- the new prompt, and the environment reminder Claude Code adds where the session is resumed in
  another directory, are in that count (their estimate; the date reminder is added after it): the
  file holds neither, so what is reported here is where the file alone reaches the threshold;
- the threshold (`s4`, 318908540): the effective window less 13,000 (`AWn`, 318907747); the
  effective window (`jQ`, 318915642) the window less the output reserve, min(the model's max
  output tokens, 20,000) (`$2r`, 318911067); compaction at or over it (`bkt`, 318908904, through
  `WQ`, 318918308);
- only where Claude Code resolves the window from something other than its default (`ORs` returns
  false where `mHe`, 318914202, finds the source "auto": `Eqs`, 318912785). The baked catalog's
  1,000,000-token models (`native_1m`, offset 307194843) resolve as "model-default" (observed:
  980,000 effective); the 200,000-token models without that (claude-opus-4-5, claude-haiku-4-5,
  claude-sonnet-4-5, ...) resolve as "auto", left to the API's refusal (observed: no compaction,
  and none is reported here, a window given or not); claude-sonnet-4-6's and claude-opus-4-6's
  window depends on the `[1m]` choice (200,000 and a threshold without it, observed 180,000
  effective; "auto" with it, observed), which the file records only as the `context-1m` beta of the
  requests its `api-request` lines keep. Otherwise a window given to the analysis is taken as
  Claude Code's (as `CLAUDE_CODE_AUTO_COMPACT_WINDOW` would set it, `Ey`, 318911965);
- bytes per token (`Fy`, 309529112): 4 for the models of `Lj` (309528837: Claude 3, and 4.x up to
  4.6), else 3.

Not modelled (none is in the file): `DISABLE_AUTO_COMPACT`, `DISABLE_COMPACT` or
`autoCompactEnabled: false` (no compaction: `dm`, 316386243); `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` (a
lower threshold, `s4`); `CLAUDE_CODE_MAX_OUTPUT_TOKENS`; an `autoCompactWindow` setting or
`/autocompact`; windows the server or an experiment sets for an account (`Eqs`: clientdata,
experiment); a `--model` the session is resumed with (the model taken is the newest reply's); an
attachment whose line keeps no `rendered` text (counted 0 here), a task delivery's images; a
compaction that bails with nothing before the last reply to summarize (observed on a one-reply file:
the check fires, the request goes as it stands).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspector.ledger.jsontext import js_length, js_stringify
from inspector.ledger.model import Ledger, Record

BUFFER = 13_000  # `AWn` / `s4`: the threshold is the effective window less this (offset 318908540)
OUTPUT_RESERVE_CAP = 20_000  # `$2r`: the output reserve is min(max output tokens, this) (offset 318911071)
MILLION = 1_000_000
# The baked catalog's models of 1,000,000 tokens of their own (`native_1m`, offset 307194843), whose
# window Claude Code enforces with its threshold (observed: 980,000 effective); their first-party
# ids are their catalog ids.
WINDOWS: dict[str, int] = {
    m: MILLION
    for m in (
        "claude-haiku-5-5", "claude-sonnet-5", "claude-sonnet-5-5", "claude-opus-4-7", "claude-opus-4-8", "claude-opus-5",
        "claude-opus-5-5", "claude-fable-5", "claude-fable-5-1", "claude-fable-5-2", "claude-mythos-5", "claude-mythos-5-1",
        "claude-mythos-5-2",
    )
}  # fmt: skip
# Catalog models of 200,000 tokens that Claude Code leaves to the API's prompt-too-long: their window
# resolves as "auto" (`Eqs`), and `ORs` does not check (observed: no compaction at 199,000).
LEFT_TO_API = frozenset(
    ("claude-3-5-haiku", "claude-haiku-4-5", "claude-3-5-sonnet", "claude-3-7-sonnet", "claude-sonnet-4-0", "claude-sonnet-4-5", "claude-opus-4-5")
)
# Catalog models of 200,000 tokens that may be run with 1,000,000 (`maximum_window`, the `[1m]`
# choice): 200,000 and a threshold without it ("model-default": observed, 180,000 effective); left to
# the API with it (observed). The choice is in the file only as the beta of the requests it records
# (`api-request` lines' `params.betas`).
OPT_IN_1M = frozenset(("claude-sonnet-4-6", "claude-opus-4-6"))
ONE_M_BETA = "context-1m-2025-08-07"
# `Lj` (offset 309528837): the models Claude Code estimates at 4 characters a token (else 3).
FOUR_BYTES = frozenset(
    (
        "claude-3-opus", "claude-3-sonnet", "claude-3-haiku", "claude-3-5-sonnet", "claude-3-5-haiku", "claude-3-7-sonnet",
        "claude-opus-4-0", "claude-opus-4-1", "claude-opus-4-5", "claude-opus-4-6", "claude-sonnet-4-0", "claude-sonnet-4-5",
        "claude-sonnet-4-6", "claude-haiku-4-5",
    )
)  # fmt: skip
# Catalog models whose default max output is under the cap (the catalog's `max_output_tokens`; `_T`, 309545319).
SMALL_OUTPUT = {"claude-3-5-haiku": 8192, "claude-3-5-sonnet": 8192, "claude-3-opus": 4096, "claude-3-haiku": 4096, "claude-3-sonnet": 8192}
SYNTHETIC = "<synthetic>"
# `eft` (offset 322717436): a reply whose first block is one of these texts has no usage that counts.
STOCK_TEXTS = frozenset(
    (
        "[Request interrupted by user]",
        "[Request interrupted by user for tool use]",
        "The user doesn't want to take this action right now. STOP what you are doing and wait for the user to tell you how to proceed.",
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string "
        "was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.",
        "No response requested.",
    )
)
IMAGE_TOKENS = 2000  # `S` in `Hle`


def canonical(model: str) -> str:
    """A dated first-party id as the catalog names it ("claude-opus-4-5-20251101" -> "claude-opus-4-5",
    "claude-sonnet-4-20250514" -> "claude-sonnet-4-0")."""
    head, _, tail = model.rpartition("-")
    if not (len(tail) == 8 and tail.isdigit()):
        return model
    return head + "-0" if head in ("claude-sonnet-4", "claude-opus-4") else head


def bytes_per_token(model: str) -> int:
    """`Fy`: 4 for the older models, else 3."""
    return 4 if canonical(model) in FOUR_BYTES else 3


def threshold(model: str, window: int, reserve: int | None = None) -> int:
    """`s4(jQ(...))`: the window less the output reserve (`reserve`, else the model's) less 13,000."""
    out = reserve if reserve is not None else min(SMALL_OUTPUT.get(canonical(model), OUTPUT_RESERVE_CAP), OUTPUT_RESERVE_CAP)
    return window - out - BUFFER


def _round(units: int, bpt: int) -> int:
    """JavaScript's Math.round(units / bpt) (halves up)."""
    return (2 * units + bpt) // (2 * bpt)


def _chars(v: Any, bpt: int) -> int:
    """`Al`: a string's estimate (0: not a string)."""
    return _round(js_length(v), bpt) if isinstance(v, str) else 0


def _json(v: Any) -> str:
    return js_stringify(v)  # (JSON.stringify, as Claude Code writes a tool call's input to count it)


def estimate(content: Any, bpt: int) -> int:
    """`gZ`: Claude Code's estimate of a message's content."""
    if not content:
        return 0
    if isinstance(content, str):
        return _chars(content, bpt)
    return sum(_block(b, bpt) for b in content) if isinstance(content, list) else 0


def _block(b: Any, bpt: int) -> int:
    """`Hle`: one content block's estimate."""
    if isinstance(b, str):
        return _chars(b, bpt)
    if not isinstance(b, dict):
        return 0
    t = b.get("type")
    source = b.get("source")
    if t == "text":
        return _chars(b.get("text"), bpt)
    if t == "document" and isinstance(source, dict) and source.get("type") in ("text", "content"):
        if source["type"] == "text":
            title = b.get("title")
            ext = title.rsplit(".", 1)[-1].lower() if isinstance(title, str) else ""
            return _chars(source.get("data"), min(bpt, 2 if ext in ("json", "jsonl", "jsonc") else 4))
        inner = source.get("content")
        return _chars(inner, bpt) if isinstance(inner, str) else estimate([x for x in inner if isinstance(x, dict)], bpt) if isinstance(inner, list) else 0
    if t in ("image", "document"):
        return IMAGE_TOKENS
    if t == "tool_result":
        return estimate(b.get("content"), bpt)
    if t == "thinking":
        return _chars(b.get("thinking"), bpt)
    if t == "tool_use":
        name = b.get("name")
        return _chars(("undefined" if name is None else name if isinstance(name, str) else _json(name)) + _json(b.get("input") or {}), bpt)
    if t == "redacted_thinking":
        return _chars(b.get("data"), bpt)
    return _chars(_json(b), bpt)


def line_estimate(o: dict[str, Any], bpt: int) -> int:
    """`XHr`: a line's estimate: a message's content, an attachment's rendered reminders."""
    t = o.get("type")
    m = o.get("message")
    if t in ("assistant", "user", "api_system") and isinstance(m, dict) and m.get("content"):
        return estimate(m["content"], bpt)
    if t == "attachment" and o.get("attachment"):
        rendered = o.get("rendered")
        return sum(estimate(r.get("content"), bpt) for r in rendered if isinstance(r, dict)) if isinstance(rendered, list) else 0
    return 0


def _count(v: Any) -> int:
    if v is None:
        return 0
    if type(v) is int or (type(v) is float and v.is_integer()):
        return int(v)
    raise ValueError  # (JavaScript would make a string or NaN of the sum: not modelled)


def usage_tokens(usage: dict[str, Any]) -> tuple[int, int]:
    """`H6`, then (`a_e`, `OI`): a usage's input + cache writes + cache reads, and that plus its output."""
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
    u = [_count(usage.get(k)) for k in keys]
    its = usage.get("iterations")
    if sum(u[:3]) and isinstance(its, list):
        last = next((x for x in reversed(its) if not (isinstance(x, dict) and x.get("type") in ("advisor_message", "compaction"))), None)
        vals = [last.get(k) for k in keys] if isinstance(last, dict) and last.get("type") in ("message", "fallback_message") else []
        if vals and all(type(v) in (int, float) and v >= 0 for v in vals) and sum(vals[:3]) > 0:
            u = [int(v) for v in vals]
    return sum(u[:3]), sum(u)


def _counted_usage(o: dict[str, Any]) -> dict[str, Any] | None:
    """`JU` and `B_t`: the reply's usage where it counts (None: not a reply, or its usage does not)."""
    m = o.get("message")
    if o.get("type") != "assistant" or not isinstance(m, dict) or "usage" not in m or not isinstance(m["usage"], dict):
        return None
    content = m.get("content")
    first = content[0] if isinstance(content, list) and content else None
    text = first.get("text") if isinstance(first, dict) and first.get("type") == "text" else None
    if isinstance(text, str) and text in STOCK_TEXTS:
        return None
    if m.get("model") == SYNTHETIC or o.get("isUnmetered") is True:
        return None
    return m["usage"] if usage_tokens(m["usage"])[0] > 0 else None


def _boundary(o: dict[str, Any]) -> bool:
    return o.get("type") == "system" and o.get("subtype") == "compact_boundary"


def _reply_id(o: dict[str, Any]) -> Any:
    """`mH`: an assistant line's message.id (None: not one, or a synthetic reply)."""
    m = o.get("message")
    if o.get("type") != "assistant" or not isinstance(m, dict) or "id" not in m or m.get("model") == SYNTHETIC:
        return None
    return m["id"]


def cleared(context_management: Any) -> int:
    """`ktn(...).inputTokens`: the input tokens the server (or Claude Code) cleared from a reply's context."""
    cm = context_management if isinstance(context_management, dict) else {}

    def ok(v: Any) -> bool:  # `m1`
        return type(v) in (int, float) and v >= 0 and v != float("inf")

    est = cm.get("client_estimated_cleared_input_tokens")
    if ok(cm.get("client_cut_tool_uses")) and cm["client_cut_tool_uses"] > 0:
        return int(est) if ok(est) else 0
    edits = cm.get("applied_edits")
    if not isinstance(edits, list):
        return 0
    g = sum(int(e["cleared_input_tokens"]) for e in edits if isinstance(e, dict) and e.get("type") == "clear_tool_uses_20250919" and ok(e.get("cleared_input_tokens")))
    if not ok(est):
        return g
    return int(est) if cm.get("client_estimate_measured_from_prompts") is True and g > 0 else min(g, int(est))


class _Lines:
    """The path's lines as Claude Code reads them (each record's JSON; None where it cannot be read)."""

    def __init__(self, led: Ledger, path: Sequence[int]) -> None:
        self.records = led.records
        self.path = path

    def counts(self, i: int) -> bool:
        """Whether the line may be a reply or a compact boundary (the others are not read for them)."""
        t = self.records[self.path[i]].type
        return t == "assistant" or t.startswith("system")

    def obj(self, i: int) -> dict[str, Any]:
        rec: Record = self.records[self.path[i]]
        try:
            got = rec.raw()
        except (OSError, ValueError):
            got = None
        return got if isinstance(got, dict) else {}


def _anchor(lines: _Lines) -> tuple[int, int, int | None]:
    """`j_t`: (index on the path, tokens, seq of the reply or -1) of the newest boundary or counted reply,
    moved back to the first line of that reply; (-1, 0, None) where there is none."""
    for i in range(len(lines.path) - 1, -1, -1):
        if not lines.counts(i):
            continue
        o = lines.obj(i)
        if _boundary(o):
            return i, 0, None
        usage = _counted_usage(o)
        if usage is None:
            continue
        rid, at = _reply_id(o), i
        for j in range(i - 1, -1, -1) if rid is not None else ():
            other = _reply_id(lines.obj(j)) if lines.counts(j) else None
            if other == rid:
                at = j
            elif other is not None:
                break
        return at, usage_tokens(usage)[1], lines.path[i]
    return -1, 0, None


def _server_cleared(lines: _Lines) -> int:
    """`LV`/`MUn`: what the newest reply with a usage that counts, after the newest boundary, says the
    server cleared (a reply without `context_management` and without a stop reason is passed over)."""
    for i in range(len(lines.path) - 1, -1, -1):
        o = lines.obj(i) if lines.counts(i) else {}
        if _boundary(o):
            return 0
        if _counted_usage(o) is None:
            continue
        m = o["message"]
        if m.get("context_management"):
            return cleared(m["context_management"])
        if m.get("stop_reason") is not None:
            return 0
    return 0


def context_tokens(led: Ledger, path: Sequence[int], model: str, items: Sequence[Any] = ()) -> tuple[int, int | None]:
    """What Claude Code counts of the session before the next prompt is added: (tokens, seq of the
    reply whose usage it starts from, None: from a compact boundary or nothing). `items`: the next
    request's; the ones Claude Code makes up on resume (no line holds them: "No response
    requested.", a "[Tool call interrupted ...]" result) are in its messages by then, and counted."""
    lines = _Lines(led, path)
    at, tokens, seq = _anchor(lines)
    bpt = bytes_per_token(model)
    tokens += sum(line_estimate(lines.obj(i), bpt) for i in range(at + 1, len(path)))
    tokens += sum(_chars(it.text, bpt) for it in items if getattr(it, "synthetic", False) and getattr(it, "seq", 0) is None)
    return tokens + _server_cleared(lines), seq


def _newest_betas(led: Ledger, name: str) -> list[Any] | None:
    """The betas of the newest request the file records for the model (None: it records none)."""
    for rec in reversed(led.records):
        if rec.type != "api-request":
            continue
        try:
            o = rec.raw()
        except (OSError, ValueError):
            continue
        params = o.get("params") if isinstance(o, dict) else None
        model = params.get("model") if isinstance(params, dict) else None
        if isinstance(model, str) and canonical(model.replace("[1m]", "")) == name:
            betas = params.get("betas")
            return betas if isinstance(betas, list) else []
    return None


def model_window(led: Ledger, model: str) -> int | None:
    """The window Claude Code checks the model's count against (0: it does not check, the API
    refuses; None: not known from the file)."""
    name = canonical(model)
    if name in WINDOWS:
        return WINDOWS[name]
    if name in LEFT_TO_API:
        return 0
    if name in OPT_IN_1M:
        betas = _newest_betas(led, name)
        return None if betas is None else 0 if ONE_M_BETA in betas else 200_000
    return None


def resume_model(led: Ledger, path: Sequence[int]) -> str | None:
    """The newest reply's model on the path (not "<synthetic>"): the one the analysis takes the session to resume with."""
    lines = _Lines(led, path)
    for i in range(len(path) - 1, -1, -1):
        if led.records[path[i]].role != "assistant":
            continue
        m = lines.obj(i).get("message")
        model = m.get("model") if isinstance(m, dict) else None
        if type(model) is str and model != SYNTHETIC:
            return model
    return None


def compacts_first(
    led: Ledger, items: Sequence[Any], path: Sequence[int], window: int | None, reserve: int | None
) -> tuple[str, list[int]] | None:
    """`Runtime.compacts_first` for Claude Code: why it compacts before the next prompt, and the reply
    whose usage says so; None where it sends the request as it stands (or this file does not tell)."""
    model = resume_model(led, path)
    if model is None:
        return None
    own = model_window(led, model)
    known = window if window is not None else own
    if own == 0 or known is None:
        return None
    try:
        tokens, seq = context_tokens(led, path, model, items)
    except (ValueError, TypeError):
        return None
    limit = threshold(model, known, reserve)
    if tokens < limit:
        return None
    return _note(led, seq, model, tokens, known, limit, window is None), [] if seq is None else [seq]


def _note(led: Ledger, seq: int | None, model: str, tokens: int, window: int, limit: int, from_table: bool) -> str:
    where = f"the window Claude Code 2.1.328 checks {model} against" if from_table else "the window given"
    said = f"its last reply (line {led.records[seq].line}) and what follows it count" if seq is not None else "what follows its last compaction counts"
    return (
        f"Claude Code compacts this session before it sends your next message: {said} {tokens:,} tokens by its own "
        f"measure, at or over its threshold of {limit:,} ({where}, {window:,}, less {window - limit:,} for output and "
        "its buffer), and your message only adds to that. It first sends the history to its summarizer, then your "
        "message after that summary: the request shown here is what it would send without the compaction."
    )


__all__ = ["compacts_first", "context_tokens", "estimate", "model_window", "resume_model", "threshold"]
