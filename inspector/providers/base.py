"""What the repair engine sees of a summarizer: one request in, one classified result out.

The engine never handles HTTP, keys or retries; it gets a `SummaryResult` whose `outcome` is one
of a closed set (DESIGN §5) and decides from that alone. `detail` carries the provider's own words
for the user's screen and must never be written into a ledger.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from inspector.ledger.model import Route, Usage

OUTCOMES: tuple[str, ...] = (
    "ok",
    "truncated",
    "input_too_large",
    "auth",
    "rate_limited",
    "overloaded",
    "network",
    "bad_request",
    "server_error",
)

PROVIDER_NAMES: tuple[str, ...] = ("extractive", "openai", "anthropic")


class ProviderConfigError(Exception):
    """Unknown provider, missing key or model, unreadable config: reported as itself, never as a
    failed summary."""


@dataclass(frozen=True)
class SummaryRequest:
    system: str
    prompt: str
    max_output_tokens: int
    model: str | None = None  # overrides the provider's model for this request only


@dataclass(frozen=True)
class SummaryResult:
    outcome: str  # one of OUTCOMES
    text: str = ""  # the summary ("" unless ok / truncated)
    usage: Usage | None = None
    status: int | None = None  # HTTP status, for the report only
    detail: str = ""  # the provider's own error text: shown to the user, never persisted
    attempts: int = 1  # requests made, retries included

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {self.outcome!r}")


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
