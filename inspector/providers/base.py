"""What the repair engine sees of a summarizer: one request in, one classified result out.

The engine never handles HTTP, keys or retries; it gets a `SummaryResult` whose `outcome` is one
of a closed set (DESIGN §5) and decides from that alone. `detail` carries the provider's own words
for the user's screen and must never be written into a ledger.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

# One concept, one name: the request and result types are the engine's own (the core defines
# them; this shell implements them).
from inspector.compaction.types import OUTCOMES, SummaryRequest, SummaryResult
from inspector.ledger.model import Route

__all__ = ["OUTCOMES", "PROVIDER_NAMES", "Provider", "ProviderConfigError", "RetryPolicy", "SummaryRequest", "SummaryResult"]

PROVIDER_NAMES: tuple[str, ...] = ("extractive", "openai", "anthropic")


class ProviderConfigError(Exception):
    """Unknown provider, missing key or model, unreadable config: reported as itself, never as a
    failed summary."""


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded backoff for `rate_limited` and `overloaded`: at most `max_retries` more requests,
    waits of base, 2·base, 4·base… (or what the server asked for), never more than
    `max_total_wait` seconds in all. `sleep` is injectable so tests never wait for real."""

    max_retries: int = 3
    base_delay: float = 1.0
    max_total_wait: float = 30.0
    sleep: Callable[[float], None] | None = field(default=None, compare=False)


class Provider(Protocol):
    name: str  # "extractive" | "openai" | "anthropic"
    route: Route  # (model_id, connection_id) the requests are dispatched on

    def summarize(self, req: SummaryRequest) -> SummaryResult: ...


def make_provider(
    name: str,
    *,
    model: str | None,
    base_url: str | None,
    timeout: float = 120,
    config_path: str | None = None,
    retry: RetryPolicy | None = None,
) -> Provider:
    """The provider called `name`, configured from the arguments, then the environment, then the
    config file. Raises ProviderConfigError for anything that would make every request fail."""
    key = (name or "").strip().lower()
    if key not in PROVIDER_NAMES:
        raise ProviderConfigError(f"unknown provider {name!r}: choose one of {', '.join(PROVIDER_NAMES)}")
    if key == "extractive":
        # No import of the HTTP clients (nor httpx) on the offline path.
        from inspector.providers.extractive import ExtractiveProvider

        return ExtractiveProvider()
    if not timeout or timeout <= 0:
        raise ProviderConfigError(f"timeout must be a positive number of seconds, not {timeout!r}")
    from inspector.providers.config import resolve_settings

    settings = resolve_settings(key, model=model, base_url=base_url, config_path=config_path)
    if key == "openai":
        from inspector.providers.openai import OpenAIProvider

        return OpenAIProvider(settings, timeout=timeout, retry=retry or RetryPolicy())
    from inspector.providers.anthropic import AnthropicProvider

    return AnthropicProvider(settings, timeout=timeout, retry=retry or RetryPolicy())
