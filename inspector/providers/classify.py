"""Classify a provider's answer into the closed outcome set (DESIGN §5), and decide retry waits.

Pure functions of (status, headers, parsed JSON body, raw text): no I/O, no httpx, so every rule
is unit-testable and the same rules serve OpenAI-compatible and Anthropic endpoints.

Order matters and follows what each refusal means for the caller:
auth (401/403) > rate limit (429) > input too large (413, overflow codes or wording at any status,
5xx included) > overloaded (529, `overloaded_error`, 503 saying so) > bad_request (other 4xx) >
server_error (other 5xx, malformed replies). An error body under status 200 is an error.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

# Error codes / types that mean "the request is larger than the model accepts".
_OVERFLOW_CODES = frozenset({"context_length_exceeded", "request_too_large", "string_above_max_length"})
# Overflow wording across OpenAI, Anthropic, Gemini's OpenAI layer, vLLM, llama.cpp, proxies.
_OVERFLOW_TEXT = re.compile(
    r"maximum context length|context[ _]length[ _]exceeded|context (?:window|size|limit)"
    r"|prompt is too long|prompt too long|input is too long|input too long"
    r"|too many (?:input |prompt )?tokens|request[ _]too[ _]large|request entity too large"
    r"|exceeds? the (?:maximum|max) (?:number of )?(?:input |prompt )?tokens"
    r"|reduce the length of the messages|string too long",
    re.I,
)
# OpenAI answers 429 "Request too large for <model> ... tokens per min" for a request that can never
# pass the per-minute limit: waiting does not help, a smaller request does.
_RATE_OVERFLOW_TEXT = re.compile(r"request too large", re.I)
_OVERLOADED_TEXT = re.compile(r"overload|over capacity|at capacity", re.I)
_AUTH_TYPES = frozenset({"authentication_error", "permission_error", "invalid_api_key", "unauthorized"})
_RATE_TYPES = frozenset({"rate_limit_error", "rate_limit_exceeded", "insufficient_quota", "rate_limited"})
_QUOTA_TEXT = re.compile(r"insufficient_quota|exceeded your current quota|billing", re.I)
_OVERLOADED_TYPES = frozenset({"overloaded_error", "overloaded"})
_BAD_REQUEST_TYPES = frozenset({"invalid_request_error", "not_found_error", "invalid_request", "not_found"})
_SERVER_TYPES = frozenset({"api_error", "server_error", "internal_error", "internal_server_error"})

TRUNCATED_FINISH = frozenset({"length", "max_tokens", "max_output_tokens"})
TRUNCATED_STOP = frozenset({"max_tokens", "model_context_window_exceeded"})
DETAIL_LIMIT = 600


@dataclass(frozen=True)
class Verdict:
    outcome: str
    detail: str = ""  # the provider's own words, abbreviated (for the user's screen only)
    retryable: bool = False  # worth asking again after a wait
    retry_after: float | None = None  # seconds the server asked us to wait, if it said


@dataclass(frozen=True)
class ErrorInfo:
    type: str = ""
    code: str = ""
    message: str = ""


def error_info(body: Any) -> ErrorInfo | None:
    """The error a JSON body describes, in either dialect, or None when it describes none:
    OpenAI `{"error": {"message", "type", "code"}}` (or `{"error": "text"}`), Anthropic
    `{"type": "error", "error": {"type", "message"}}`."""
    if not isinstance(body, dict):
        return None
    err = body.get("error")
    if isinstance(err, dict):
        return ErrorInfo(_s(err.get("type")), _s(err.get("code")), _s(err.get("message")))
    if isinstance(err, str) and err:
        return ErrorInfo(message=err)
    if body.get("type") == "error":
        return ErrorInfo(message=_s(body.get("message")))
    return None


def _s(v: Any) -> str:
    return "" if v is None else str(v)


def _abbrev(text: str, limit: int = DETAIL_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms`, else `Retry-After` as seconds or as
    an HTTP date; None when absent or unreadable."""
    h = {k.lower(): v for k, v in headers.items()}
    raw_ms = h.get("retry-after-ms")
    if raw_ms is not None:
        try:
            ms = float(raw_ms)
            if ms >= 0 and ms == ms and ms != float("inf"):
                return ms / 1000.0
        except ValueError:
            pass
    raw = h.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        secs = float(raw)
        return secs if secs >= 0 and secs != float("inf") else None
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def next_delay(
    attempt: int,
    retry_after: float | None,
    waited: float,
    *,
    max_retries: int,
    base_delay: float,
    max_total_wait: float,
) -> float | None:
    """How long to wait before request `attempt + 1`, or None to stop retrying.

    Exponential (base, 2·base, 4·base…) unless the server named a wait, which is honoured exactly.
    The total wait never exceeds `max_total_wait`: a backoff step is shortened to fit, but a wait
    the server asked for that does not fit ends the retries at once — retrying sooner than asked
    only earns another refusal."""
    if attempt > max_retries:
        return None
    left = max_total_wait - waited
    if left <= 0:
        return None
    if retry_after is not None:
        return retry_after if retry_after <= left else None
    return min(base_delay * 2 ** (attempt - 1), left)


def classify(status: int, headers: Mapping[str, str], body: Any, text: str = "") -> Verdict:
    """The outcome of one HTTP exchange. `body` is the parsed JSON (None when not JSON), `text`
    the raw body. ok/truncated only for a 2xx reply that is a real completion."""
    info = error_info(body)
    if 200 <= status < 300 and info is None:
        return _classify_reply(body, text)

    wait = retry_after_seconds(headers)
    info = info or ErrorInfo()
    # A 200 carrying an error may name the real status in its code (OpenRouter does).
    eff = status
    if not status >= 400 and info.code.isdigit() and 400 <= int(info.code) < 600:
        eff = int(info.code)
    kinds = {info.type.lower(), info.code.lower()} - {""}
    words = " ".join(x for x in (info.type, info.code, info.message) if x)
    if not info.message:
        words = f"{words} {text}".strip()
    detail = _abbrev(info.message or text or "") or f"HTTP {status}"

    if eff in (401, 403) or kinds & _AUTH_TYPES:
        return Verdict("auth", detail)
    if eff == 429 or kinds & _RATE_TYPES:
        if _RATE_OVERFLOW_TEXT.search(words):
            return Verdict("input_too_large", detail)
        # An exhausted quota is not lifted by waiting.
        quota = "insufficient_quota" in kinds or bool(_QUOTA_TEXT.search(words))
        return Verdict("rate_limited", detail, retryable=not quota, retry_after=wait)
    if eff == 413 or kinds & _OVERFLOW_CODES or _OVERFLOW_TEXT.search(words):
        return Verdict("input_too_large", detail)
    if (
        eff == 529
        or kinds & _OVERLOADED_TYPES
        or ((eff >= 500 or eff < 400) and _OVERLOADED_TEXT.search(words))
    ):
        return Verdict("overloaded", detail, retryable=True, retry_after=wait)
    if 400 <= eff < 500 or kinds & _BAD_REQUEST_TYPES:
        return Verdict("bad_request", detail)
    if eff < 200 or 300 <= eff < 400:
        return Verdict("bad_request", f"unexpected HTTP {status} (check the base URL): {detail}")
    return Verdict("server_error", detail)


def _classify_reply(body: Any, text: str) -> Verdict:
    if not isinstance(body, dict):
        return Verdict("server_error", "the reply is not a JSON object: " + _abbrev(text, 200))
    choices = body.get("choices")
    if isinstance(choices, list):  # OpenAI chat completions
        if not choices or not isinstance(choices[0], dict):
            return Verdict("server_error", "the reply has no choices")
        finish = choices[0].get("finish_reason")
        return Verdict("truncated" if isinstance(finish, str) and finish in TRUNCATED_FINISH else "ok")
    if isinstance(body.get("content"), list):  # Anthropic messages
        stop = body.get("stop_reason")
        return Verdict("truncated" if isinstance(stop, str) and stop in TRUNCATED_STOP else "ok")
    return Verdict("server_error", "the reply holds neither choices nor content")
