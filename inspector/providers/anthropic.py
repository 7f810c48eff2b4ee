"""Anthropic Messages: POST {base_url}/v1/messages, non-streaming, key in `x-api-key`."""

from __future__ import annotations

from typing import Any

from inspector.ledger.model import Usage
from inspector.providers._http import HttpProvider, as_int
from inspector.providers.base import SummaryRequest

ANTHROPIC_VERSION = "2023-06-01"


class AnthropicProvider(HttpProvider):
    __slots__ = ()
    name = "anthropic"

    @property
    def url(self) -> str:
        # Accept a base URL given with or without the version segment.
        base = self._settings.base_url
        return base + ("/messages" if base.endswith("/v1") else "/v1/messages")

    def _headers(self) -> dict[str, str]:
        return {"x-api-key": self._settings.api_key.reveal(), "anthropic-version": ANTHROPIC_VERSION}

    def _body(self, req: SummaryRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": req.model or self._settings.model,
            "max_tokens": req.max_output_tokens,
            "messages": [{"role": "user", "content": req.prompt}],
        }
        if req.system:
            body["system"] = req.system
        return body

    def _read_reply(self, body: dict[str, Any]) -> tuple[str, Usage | None]:
        text = "".join(
            b.get("text", "") for b in body["content"] if isinstance(b, dict) and b.get("type") == "text"
        )
        u = body.get("usage")
        if not isinstance(u, dict):
            return text, None
        return text, Usage(
            input=as_int(u.get("input_tokens")),
            output=as_int(u.get("output_tokens")),
            cache_read=as_int(u.get("cache_read_input_tokens")),
            cache_write=as_int(u.get("cache_creation_input_tokens")),
        )
