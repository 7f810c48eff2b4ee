"""pi's own compaction before the next prompt (pi 0.73.1, `.pi/`): before it sends a prompt, pi
checks the last assistant message of its context (`AgentSession.prompt`, agent-session.js:754-758,
then `_checkCompaction(lastAssistant, false)`, :1376-1446) and, where it finds the context
overflowed or over its threshold, first sends the history to its summarizer: the request the
analysis shows is then not the next one pi sends. The same check runs when pi resumes a session
(`pi -c`, `--session`) and in the process that wrote it.

The check, as pi makes it:
- only against a reply after the latest compaction on the branch (:1390-1395: one from before it,
  by the message's timestamp against the compaction's, is skipped);
- an overflow (`isContextOverflow`, pi-ai utils/overflow.js) of a reply by the model pi runs with
  (:1388, :1397): an error whose message names one (`OVERFLOW_PATTERNS`, not a rate limit), or a
  reply whose input and cache reads passed the window (stopped), or reached 99% of it with no
  output (cut at its length);
- otherwise the reply's usage (`calculateContextTokens`: its totalTokens, else the sum of its
  input, output, cache reads and writes) over the window less the reserve (`shouldCompact`,
  compaction.js:149-153; the reserve 16,384 by default, settings-manager.js:463).

An errored reply's context is estimated as pi estimates it (`estimateContextTokens`: the last usage
of a reply neither aborted nor errored, and a quarter of the characters of every message after it).
The model pi runs with is the one it restores: the last model change or assistant message on the
branch (session-manager.js:146-156, sdk.js:105-113), its window from pi's registry
(`pi_windows.json`, `tests/peers/pi_resume/model_windows.py`) unless the analysis is given one.
Not modelled: settings that turn compaction off or change the reserve (a `--reserve` given to the
analysis is taken as pi's), a `--model` that resumes the session with another model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any, BinaryIO

import orjson

from inspector.ledger.jsontext import js_length, js_stringify
from inspector.ledger.model import Ledger, Record

RESERVE_TOKENS = 16_384  # settings-manager.js:463 (`getCompactionReserveTokens`)

# pi-ai utils/overflow.js `OVERFLOW_PATTERNS` and `NON_OVERFLOW_PATTERNS`, as JavaScript reads
# them: case-insensitive on ASCII letters only, `.` not across a line terminator.
_ANY = r"[^\n\r\u2028\u2029]*"
_OVERFLOW = re.compile(
    "|".join(
        (
            r"prompt is too long",
            r"request_too_large",
            r"input is too long for requested model",
            r"exceeds the context window",
            rf"input token count{_ANY}exceeds the maximum",
            r"maximum prompt length is \d+",
            r"reduce the length of the messages",
            r"maximum context length is \d+ tokens",
            r"exceeds the limit of \d+",
            r"exceeds the available context size",
            r"greater than the context length",
            r"context window exceeds limit",
            r"exceeded model token limit",
            r"too large for model with \d+ maximum context length",
            r"model_context_window_exceeded",
            r"prompt too long; exceeded (?:max )?context length",
            r"context[_ ]length[_ ]exceeded",
            r"too many tokens",
            r"token limit exceeded",
            r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",
        )
    ),
    re.IGNORECASE | re.ASCII,
)
_NOT_OVERFLOW = re.compile(r"^(?:Throttling error|Service unavailable):|rate limit|too many requests", re.IGNORECASE | re.ASCII)


@dataclass(frozen=True, slots=True)
class Registered:
    """What pi's built-in registry says of a model it ships (`pi_windows.json`): its context window
    (None: not a positive integer), its `api`, whether its `input` takes images."""

    window: int | None
    api: str
    image: bool


@cache
def _registry() -> dict[str, Registered]:
    data = json.loads(resources.files("inspector.formats").joinpath("pi_windows.json").read_text(encoding="utf-8"))
    apis = data["apis"]
    return {k: Registered(w if type(w) is int else None, apis[a], bool(i)) for k, (w, a, i) in data["models"].items()}


def registered(provider: str, model: str) -> Registered | None:
    """The model as pi's built-in registry has it (None: not a model pi ships)."""
    return _registry().get(f"{provider}/{model}")


def model_window(provider: str, model: str) -> int | None:
    """The context window pi's registry gives the model (None: not a model it ships)."""
    got = registered(provider, model)
    return None if got is None else got.window


class _Entries:
    """The session's entries as pi reads them: each record's JSON from its source, or, for a record
    without one (a v1/v2 file pi migrates in memory: the fields read here are as its lines hold
    them), from its line in the file. Closed when the check is done."""

    def __init__(self, led: Ledger) -> None:
        self.records = led.records
        self.path = led.path
        self._file: BinaryIO | None = None

    def obj(self, rec: Record) -> Any:
        """The entry's JSON (None: it cannot be read now)."""
        try:
            got = rec.raw()
            if got is None and self.path is not None and rec.length:
                if self._file is None:
                    self._file = open(self.path, "rb")  # noqa: SIM115 - closed by `close`
                self._file.seek(rec.offset)
                got = orjson.loads(self._file.read(rec.length))
            return got
        except (OSError, ValueError):  # (gone, unreadable, no longer that line: orjson's error too)
            return None

    def message(self, rec: Record) -> dict[str, Any]:
        o = self.obj(rec)
        m = o.get("message") if isinstance(o, dict) else None
        return m if isinstance(m, dict) else {}

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


_NO_MODEL = ("", "")  # a model entry naming no model pi's registry could find (not two strings)


def _named(provider: Any, model: Any) -> tuple[str, str]:
    return (provider, model) if isinstance(provider, str) and isinstance(model, str) else _NO_MODEL


def _model_of(e: _Entries, rec: Record) -> tuple[str, str] | None:
    """The model a model change or an assistant message entry sets (session-manager.js:151-156)."""
    if rec.type == "model_change":
        o = e.obj(rec)
        return _named(o.get("provider"), o.get("modelId")) if isinstance(o, dict) else _NO_MODEL
    if rec.type == "message" and rec.role == "assistant":
        m = e.message(rec)
        return _named(m.get("provider"), m.get("model"))
    return None


def _model_in_use(e: _Entries, path: Sequence[int]) -> tuple[str, str] | None:
    for s in reversed(path):
        got = _model_of(e, e.records[s])
        if got is not None:
            return got
    return None


def _ms(iso: Any) -> float | None:
    """An entry's ISO timestamp in milliseconds, as JavaScript's `new Date(...).getTime()` reads
    the ones pi writes (None: not such a string)."""
    if not isinstance(iso, str):
        return None
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000
    except ValueError:
        return None


def _before_compaction(e: _Entries, path: Sequence[int], at: int, message: dict[str, Any]) -> bool:
    """Is the reply at path index `at` from before the latest compaction on the branch (:1390-1395)?"""
    records = e.records
    last = next((i for i in range(len(path) - 1, -1, -1) if records[path[i]].type == "compaction"), None)
    if last is None:
        return False
    if last > at:
        return True  # (before it on the branch: out of the context, or older than it)
    o = e.obj(records[path[last]])
    when, ts = _ms(o.get("timestamp") if isinstance(o, dict) else None), message.get("timestamp")
    return when is not None and isinstance(ts, (int, float)) and not isinstance(ts, bool) and ts <= when


def _tokens(usage: Any, *keys: str) -> int | None:
    """The sum of `usage`'s counts at `keys` (None: one is missing or not a count)."""
    if not isinstance(usage, dict):
        return None
    vals = [usage.get(k) for k in keys]
    return sum(vals) if all(type(v) is int and v >= 0 for v in vals) else None


def overflowed(message: dict[str, Any], window: int) -> bool:
    """pi-ai's `isContextOverflow` (`window` 0: unknown, only the error text tells)."""
    stop, error = message.get("stopReason"), message.get("errorMessage")
    named = stop == "error" and isinstance(error, str) and bool(error)
    if named and not _NOT_OVERFLOW.search(error) and _OVERFLOW.search(error):
        return True
    seen = _tokens(message.get("usage"), "input", "cacheRead")
    if not window or seen is None:
        return False
    if stop == "stop":
        return seen > window
    return stop == "length" and _tokens(message.get("usage"), "output") == 0 and seen >= window * 0.99


def context_tokens(usage: Any) -> int | None:
    """`calculateContextTokens` (compaction.js:78-80): totalTokens, else the four counts summed."""
    total = usage.get("totalTokens") if isinstance(usage, dict) else None
    if type(total) is int and total > 0:
        return total
    return _tokens(usage, "input", "output", "cacheRead", "cacheWrite")


class _NaN(Exception):
    """A count JavaScript would make NaN of (a field not a string): pi's check is then false."""


def _units(v: Any) -> int:
    """JavaScript's `.length` of a string (UTF-16 code units)."""
    if not isinstance(v, str):
        raise _NaN
    return js_length(v)


def _block_chars(role: str, b: Any) -> int:
    t = b.get("type") if isinstance(b, dict) else None
    if role == "assistant":
        if t == "toolCall":
            return _units(b.get("name")) + _units(js_stringify(b.get("arguments")))
        key = {"text": "text", "thinking": "thinking"}.get(t or "")
        return _units(b.get(key)) if key else 0
    if t == "text" and b.get("text"):
        return _units(b["text"])
    return 4800 if t == "image" and role != "user" else 0


def estimate_tokens(message: dict[str, Any]) -> int:
    """pi's `estimateTokens` (compaction.js:161-216): a message's characters over four, rounded up."""
    role = message.get("role")
    content = message.get("content")
    if role in ("user", "custom", "toolResult"):
        chars = _units(content) if isinstance(content, str) else sum(_block_chars(role, b) for b in content or [])
    elif role == "assistant":
        if not isinstance(content, list):
            raise _NaN
        chars = sum(_block_chars(role, b) for b in content)
    elif role == "bashExecution":
        chars = _units(message.get("command")) + _units(message.get("output"))
    elif role in ("branchSummary", "compactionSummary"):
        chars = _units(message.get("summary"))
    else:
        return 0
    return -(-chars // 4)


def _context_message(e: _Entries, rec: Record) -> dict[str, Any] | None:
    """The message an entry puts in pi's context (`buildSessionContext`'s appendMessage)."""
    o = e.obj(rec)
    if not isinstance(o, dict):
        return None
    if rec.type == "message":
        return e.message(rec) or None
    if rec.type == "custom_message":
        return {"role": "custom", "content": o.get("content")}
    if rec.type == "branch_summary" and o.get("summary"):
        return {"role": "branchSummary", "summary": o.get("summary")}
    return None


def _estimate(e: _Entries, path: Sequence[int]) -> int | None:
    """`estimateContextTokens` of the context after an errored reply (agent-session.js:1424-1440): the
    last usage of a reply neither aborted nor errored, and an estimate of every message after it.
    None where pi finds no such usage after the latest compaction (it then does not compact)."""
    trailing = 0
    try:
        for s in reversed(path):
            rec = e.records[s]
            if rec.type == "compaction":
                return None  # (the usage from before it is stale: :1432-1437)
            m = _context_message(e, rec)
            if m is None:
                continue
            usage = m.get("usage") if m.get("role") == "assistant" and m.get("stopReason") not in ("aborted", "error") else None
            if usage:
                got = context_tokens(usage)
                return None if got is None else got + trailing
            trailing += estimate_tokens(m)
    except (_NaN, TypeError, ValueError, RecursionError):
        return None
    return None


def _last_reply(led: Ledger, path: Sequence[int]) -> int | None:
    records = led.records
    return next((i for i in range(len(path) - 1, -1, -1) if records[path[i]].type == "message" and records[path[i]].role == "assistant"), None)


def compacts_first(
    led: Ledger, items: Sequence[Any], path: Sequence[int], window: int | None, reserve: int | None
) -> tuple[str, list[int]] | None:
    """`Runtime.compacts_first` for pi: why pi compacts before the next prompt, and the reply that
    says so; None where it sends the request as it stands (or this file does not tell)."""
    at = _last_reply(led, path)
    if at is None:
        return None
    e = _Entries(led)
    try:
        return _check(e, path, at, window, reserve)
    finally:
        e.close()


def _check(e: _Entries, path: Sequence[int], at: int, window: int | None, reserve: int | None) -> tuple[str, list[int]] | None:
    rec = e.records[path[at]]
    message = e.message(rec)
    in_use = _model_in_use(e, path)
    known = window if window is not None else model_window(*in_use) if in_use else None
    same = in_use is not None and in_use != _NO_MODEL and in_use == _named(message.get("provider"), message.get("model"))
    if same and overflowed(message, known or 0):
        note = _overflow_note(rec)
    else:
        if known is None:
            return None
        tokens = context_tokens(message.get("usage")) if message.get("stopReason") != "error" else _estimate(e, path)
        threshold = known - (reserve if reserve is not None else RESERVE_TOKENS)
        if tokens is None or tokens <= threshold:
            return None
        note = _threshold_note(rec, tokens, known, threshold, window is None)
    # (asked last: the one check that may walk the whole branch)
    return None if _before_compaction(e, path, at, message) else (note, [rec.seq])


def _overflow_note(rec: Record) -> str:
    return (
        f"pi compacts this session before it sends your next message: its last reply (line {rec.line}) is a context "
        "overflow by the model it resumes with, so pi first sends the history to its summarizer and then retries. The "
        "request shown here is what it would send without the compaction."
    )


def _threshold_note(rec: Record, tokens: int, window: int, threshold: int, from_registry: bool) -> str:
    where = "the window pi's model registry gives the model the session last used" if from_registry else "the window given"
    return (
        f"pi compacts this session before it sends your next message: its last reply (line {rec.line}) records "
        f"{tokens:,} tokens of context, over pi's threshold of {threshold:,} ({where}, {window:,}, less the "
        f"{window - threshold:,}-token reserve). It first sends the history to its summarizer, then your message after "
        "that summary: the request shown here is what it would send without the compaction."
    )


__all__ = ["RESERVE_TOKENS", "Registered", "compacts_first", "context_tokens", "model_window", "overflowed", "registered"]
