"""The part both HTTP providers share: one POST per attempt, classification, bounded retries.

Subclasses say how to build the body and headers and how to read a reply; everything else (what
counts as a network error, which outcomes are retried, how long to wait, scrubbing the key out of
anything shown) lives here once.
"""

from __future__ import annotations

import ssl
import time
from dataclasses import replace
from functools import cache
from typing import Any

import httpx

from inspector.ledger.model import Route, Usage
from inspector.providers.base import RetryPolicy, SummaryRequest, SummaryResult
from inspector.providers.classify import classify, next_delay
from inspector.providers.config import ProviderSettings

USER_AGENT = "inspector-summarizer/0.1"


class HttpProvider:
    """Base of the OpenAI-compatible and Anthropic clients. The key is held only as a Secret and
    sent only in a header; repr shows the route and endpoint, never the key."""

    __slots__ = ("_retry", "_settings", "_timeout", "route")
    name = "http"
    path = ""

    def __init__(self, settings: ProviderSettings, *, timeout: float = 120, retry: RetryPolicy | None = None):
        self._settings = settings
        self._timeout = float(timeout)
        self._retry = retry or RetryPolicy()
        self.route = Route(settings.model, settings.connection)

    # --- what a subclass provides -------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        raise NotImplementedError

    def _body(self, req: SummaryRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _read_reply(self, body: dict[str, Any]) -> tuple[str, Usage | None]:
        raise NotImplementedError

    # --- shared ---------------------------------------------------------------------------------
    @property
    def model(self) -> str:
        return self._settings.model

    @property
    def base_url(self) -> str:
        return self._settings.base_url

    @property
    def url(self) -> str:
        return self._settings.base_url + self.path

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self._settings.model!r}, base_url={self._settings.base_url!r}, "
            f"connection={self._settings.connection!r}, timeout={self._timeout!r})"
        )

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError(f"{type(self).__name__} holds a key and cannot be pickled")

    def summarize(self, req: SummaryRequest) -> SummaryResult:
        if req.max_output_tokens <= 0:
            return SummaryResult("bad_request", detail="max_output_tokens must be positive", attempts=0)
        policy = self._retry
        sleep = policy.sleep if policy.sleep is not None else time.sleep
        body = self._body(req)
        headers = {"user-agent": USER_AGENT, "content-type": "application/json", **self._headers()}
        waited = 0.0
        attempt = 0
        timeout = httpx.Timeout(self._timeout)
        with httpx.Client(timeout=timeout, verify=_tls_context(), follow_redirects=False) as client:
            while True:
                attempt += 1
                result, retryable, retry_after = self._attempt(client, headers, body)
                delay = (
                    next_delay(
                        attempt,
                        retry_after,
                        waited,
                        max_retries=policy.max_retries,
                        base_delay=policy.base_delay,
                        max_total_wait=policy.max_total_wait,
                    )
                    if retryable
                    else None
                )
                if delay is None:
                    return replace(result, attempts=attempt)
                sleep(delay)
                waited += delay

    def _attempt(
        self, client: httpx.Client, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[SummaryResult, bool, float | None]:
        try:
            resp = client.post(self.url, headers=headers, json=body)
        except httpx.RequestError as e:  # connect/read/write errors, resets, timeouts, bad framing
            return SummaryResult("network", detail=self._scrub(_describe(e))), False, None
        text = resp.text
        try:
            parsed: Any = resp.json()
        except ValueError:
            parsed = None
        verdict = classify(resp.status_code, resp.headers, parsed, text)
        if verdict.outcome in ("ok", "truncated"):
            try:
                summary, usage = self._read_reply(parsed)
            except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
                detail = f"unreadable reply ({type(e).__name__})"
                return SummaryResult("server_error", status=resp.status_code, detail=detail), False, None
            return SummaryResult(verdict.outcome, summary, usage, resp.status_code), False, None
        result = SummaryResult(verdict.outcome, status=resp.status_code, detail=self._scrub(verdict.detail))
        return result, verdict.retryable, verdict.retry_after

    def _scrub(self, text: str) -> str:
        # A proxy may echo the request headers back in its error text.
        key = self._settings.api_key.reveal()
        return text.replace(key, "[redacted]") if key and len(key) >= 4 else text


@cache
def _tls_context() -> ssl.SSLContext:
    # Loading the CA bundle costs tens of milliseconds; one context serves every client.
    return httpx.create_ssl_context()


def _describe(e: httpx.RequestError) -> str:
    what = {
        httpx.ConnectTimeout: "connection timed out",
        httpx.ReadTimeout: "no answer within the timeout",
        httpx.WriteTimeout: "sending the request timed out",
        httpx.PoolTimeout: "no connection available within the timeout",
        httpx.ConnectError: "cannot connect",
        httpx.RemoteProtocolError: "the server closed the connection without a valid answer",
        httpx.ReadError: "the connection broke while reading the answer",
        httpx.WriteError: "the connection broke while sending the request",
    }.get(type(e), type(e).__name__)
    msg = str(e)
    return f"{what}: {msg}" if msg and msg != what else what


def as_int(v: Any) -> int:
    return int(v) if isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 else 0
