"""OpenClaw 2026.9.6's transcript policy: for the provider and model API of a request, whether its
replay validation merges adjacent answers into one, adjacent user messages into one, and puts a
"(session bootstrap)" user message first when the history starts with an answer. Citations are to
`dist/` of the npm package `openclaw@2026.9.6` (`resolveTranscriptPolicy`, helpers-BWGunXbB.mjs:161-204:
a bundled provider plugin's `buildReplayPolicy`, else `buildUnownedProviderTransportReplayFallback`,
:57-90). Held to OpenClaw's own function, run by node: tests/test_openclaw_turns.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from inspector.formats.base import JS_WHITESPACE

# --------------------------------------------------------------------------------------------- policy


@dataclass(frozen=True, slots=True)
class TurnPolicy:
    """What OpenClaw's transcript policy for a provider and model API does to the replayed turns."""

    merges_answers: bool  # `validateGeminiTurns` or `validateAnthropicTurns`
    merges_users: bool  # `validateAnthropicTurns` and `shouldMergeConsecutiveUserTurns`
    opens_with_user: bool  # `applyGoogleTurnOrdering` (the policy's `applyAssistantFirstOrderingFix`)


NONE = TurnPolicy(False, False, False)
_RESPONSES = frozenset({"openai-responses", "openai-chatgpt-responses", "azure-openai-responses"})
_GOOGLE = frozenset({"google-gemini-cli", "google-generative-ai"})  # (`isGoogleModelApi`, anthropic-api-B6ZukRgl.mjs:4-6)
_ANTHROPIC = frozenset({"anthropic-messages", "bedrock-converse-stream"})  # (`isAnthropicApi`, :9-11)


def _policy(gemini: bool, anthropic: bool, ordering: bool, append_only: bool, api: str) -> TurnPolicy:
    """The merged policy's flags as `validateReplayTurns` and `sanitizeSessionHistory` read them:
    user messages are merged unless the context is append-only on the direct Messages API
    (`shouldMergeConsecutiveUserTurns`, embedded-agent-helpers-BFS05UdI.mjs:750-752)."""
    return TurnPolicy(gemini or anthropic, anthropic and not (append_only and api == "anthropic-messages"), ordering)


def _claude_identity(model: str) -> str:
    """`resolveClaudeModelIdentity`, anthropic-Cy4mTngV.mjs:2-5, :33-36 (the model's configured
    `canonicalModelId`, not in the store, left out)."""
    n = model.strip(JS_WHITESPACE).lower()
    n = re.sub(f"[._{re.escape(JS_WHITESPACE)}]+", "-", n.removeprefix("anthropic/"))
    hit = re.search(r"(?:^|[-/])(claude-[^/]+)$", n)
    return hit.group(1) if hit else n


def _binds_thinking_prefix(model: str) -> bool:
    """`bindsClaudeThinkingPrefix`, anthropic-Cy4mTngV.mjs:55-57 (Claude Opus 5.5, Fable 5.1): the
    policy's `appendOnlyRuntimeContext` for a Claude model."""
    n = _claude_identity(model)
    return n == "opus-5-5" or re.match(r"claude-(?:opus-5-5|fable-5-1)(?![a-z0-9])", n) is not None


def _unowned(api: str, model: str) -> TurnPolicy:
    """A provider no bundled plugin owns (a custom provider of the configuration, as the corpus's
    "fake"): `buildUnownedProviderTransportReplayFallback`, helpers-BWGunXbB.mjs:57-90."""
    google, anthropic, completions = api in _GOOGLE, api in _ANTHROPIC, api == "openai-completions"
    claude_responses = api in _RESPONSES and re.search(r"(?:^|[./:_-])claude(?:$|[./:_-])", model.lower()) is not None
    append_only = anthropic and _binds_thinking_prefix(model)
    return _policy(google or completions, anthropic or completions or claude_responses, google or completions, append_only, api)


def _openai_compatible(api: str) -> TurnPolicy:
    """`buildOpenAICompatibleReplayPolicy`, provider-replay-helpers-CXnvOz8t.mjs:6-29."""
    return TurnPolicy(True, True, True) if api == "openai-completions" else NONE


def _strict_anthropic(append_only: bool, api: str) -> TurnPolicy:
    """`buildStrictAnthropicReplayPolicy`, provider-replay-helpers-CXnvOz8t.mjs:31-46."""
    return _policy(False, True, False, append_only, api)


GEMINI = TurnPolicy(True, False, True)  # `buildGoogleGeminiReplayPolicy`, provider-replay-helpers-CXnvOz8t.mjs:99-114


def _github_copilot(api: str, model: str) -> TurnPolicy:
    """`buildGithubCopilotReplayPolicy`, replay-policy-CdN6bwsm.mjs:32-38: strict Anthropic on its
    Messages transport, else no policy of its own (the defaults: nothing merged)."""
    return _strict_anthropic(False, api) if api == "anthropic-messages" else NONE


def _clawrouter(api: str, model: str) -> TurnPolicy:
    """extensions/clawrouter/index.js:190-194: by the model's API."""
    if api == "anthropic-messages":
        return _strict_anthropic(_binds_thinking_prefix(model), api)
    return GEMINI if api == "google-generative-ai" else _openai_compatible(api)


def _hybrid(api: str, model: str) -> TurnPolicy:
    """`buildHybridAnthropicOrOpenAIReplayPolicy`, provider-replay-helpers-CXnvOz8t.mjs:78-88."""
    return _strict_anthropic(_binds_thinking_prefix(model), api) if api in _ANTHROPIC else _openai_compatible(api)


def _ollama(api: str, model: str) -> TurnPolicy:
    """extensions/ollama/index.js:439 (its native API replays as Chat Completions, :99-104)."""
    return _openai_compatible("openai-completions" if api == "ollama" else api)


# The bundled plugins that own their providers' replay policy (`buildReplayPolicy`; the other
# providers of extensions/*/openclaw.plugin.json leave it to the fallback).
_OWNED: dict[str, Callable[[str, str], TurnPolicy]] = {
    # (family native-anthropic-by-model, register.runtime-DzR0Y8b5.mjs:570; provider-replay-helpers:58-74)
    "anthropic": lambda api, model: _strict_anthropic(_binds_thinking_prefix(model), api),
    "openai": lambda api, model: NONE,  # `buildOpenAIReplayPolicy`, replay-policy-DNHotlc4.mjs:9-27
    **dict.fromkeys(("google", "google-gemini-cli", "google-vertex"), lambda api, model: GEMINI),  # (family google-gemini)
    **dict.fromkeys(("openrouter", "opencode-go"), lambda api, model: NONE),  # (family passthrough-gemini)
    **dict.fromkeys(("xai", "sglang"), lambda api, model: _openai_compatible(api)),  # (family openai-compatible)
    **dict.fromkeys(("ollama", "ollama-cloud"), _ollama),
    "github-copilot": _github_copilot,
    "clawrouter": _clawrouter,
    **dict.fromkeys(("minimax", "minimax-portal"), _hybrid),  # (provider-registration-BoNJNMii.mjs:40-44)
}


def turn_policy(provider: str, api: str, model: str) -> TurnPolicy:
    """What OpenClaw does to the replayed turns of a request to this provider, model API and model
    (`resolveTranscriptPolicy`, helpers-BWGunXbB.mjs:161-204; the provider id trimmed and lowercased,
    `normalizeProviderId`, provider-id-DCtsDflE.mjs:3-5)."""
    owned = _OWNED.get(provider.strip(JS_WHITESPACE).lower())
    return owned(api, model) if owned is not None else _unowned(api, model)
