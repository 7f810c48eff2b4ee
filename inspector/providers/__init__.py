"""Summarizers for the repair engine (DESIGN §5), the shell around the functional core: the offline
extractive default, OpenAI-compatible chat completions and Anthropic Messages over httpx.

The core (ledger, formats, analysis, compaction) never imports this package.
"""

from inspector.providers.base import (
    OUTCOMES,
    PROVIDER_NAMES,
    Provider,
    ProviderConfigError,
    RetryPolicy,
    SummaryRequest,
    SummaryResult,
    make_provider,
)

__all__ = [
    "OUTCOMES",
    "PROVIDER_NAMES",
    "Provider",
    "ProviderConfigError",
    "RetryPolicy",
    "SummaryRequest",
    "SummaryResult",
    "make_provider",
]
