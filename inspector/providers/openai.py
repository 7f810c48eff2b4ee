"""OpenAI-compatible chat completions: POST {base_url}/chat/completions, non-streaming.

Works against api.openai.com and the servers that copy its shape (vLLM, llama.cpp, Ollama,
OpenRouter, LiteLLM...). The output limit goes in `max_completion_tokens` on OpenAI's own endpoint
(its reasoning models refuse `max_tokens`) and in `max_tokens` elsewhere, where the newer name is
often unknown; `max_tokens_param` in the config overrides the choice.
"""

from __future__ import annotations

from typing import Any

from inspector.ledger.model import Usage
from inspector.providers._http import HttpProvider, as_int
from inspector.providers.base import SummaryRequest
from inspector.providers.config import DEFAULT_BASE_URL


class OpenAIProvider(HttpProvider):
    __slots__ = ()
    name = "openai"
    path = "/chat/completions"

    def _headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self._settings.api_key.reveal()}"}

    def _max_tokens_param(self) -> str:
        if self._settings.max_tokens_param:
            return self._settings.max_tokens_param
        official = self._settings.base_url == DEFAULT_BASE_URL["openai"]
        return "max_completion_tokens" if official else "max_tokens"

    def _body(self, req: SummaryRequest) -> dict[str, Any]:
        messages = []
        if req.system:
            messages.append({"role": "system", "content": req.system})
        messages.append({"role": "user", "content": req.prompt})
        return {
            "model": req.model or self._settings.model,
            "messages": messages,
            self._max_tokens_param(): req.max_output_tokens,
            "stream": False,
        }

    def _read_reply(self, body: dict[str, Any]) -> tuple[str, Usage | None]:
        content = body["choices"][0].get("message", {}).get("content")
        if isinstance(content, list):  # some compatible servers answer with content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        text = content if isinstance(content, str) else ""
        u = body.get("usage")
        if not isinstance(u, dict):
            return text, None
        details = u.get("prompt_tokens_details")
        cached = as_int(details.get("cached_tokens")) if isinstance(details, dict) else 0
        prompt = as_int(u.get("prompt_tokens"))
        # Usage.input is fresh input: OpenAI's prompt_tokens includes the cached part.
        return text, Usage(
            input=max(prompt - cached, 0), output=as_int(u.get("completion_tokens")), cache_read=cached
        )
