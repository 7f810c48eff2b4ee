"""How OpenClaw 2026.9.6 reshapes the replayed history as it sends it: adjacent answers merged into
one, adjacent user messages merged into one, a trailing user message moved into the new prompt, and a
"(session bootstrap)" user message put first when the history starts with an answer. Citations are
to `dist/` of the npm package `openclaw@2026.9.6`; docs/runtimes/openclaw.md §4.9 tells the whole
rule and what was checked against the real OpenClaw.

Where each runs (`prepareEmbeddedAttemptSessionBoundary`, then `prepareEmbeddedAttemptHistory`,
builtin-openclaw-q1hiFm14.mjs:18665-18708, :4995-5092):

1. the orphan repair takes the path's trailing user message out of the history and puts its text in
   front of the new prompt (`resolveOrphanRepairPlan`, :18283-18297; `mergeOrphanedTrailingUserPrompt`,
   context-engine-maintenance-VqmqPz8h.mjs:499-529, applied at builtin-openclaw:6982-6999);
2. `sanitizeSessionHistory` (:4797-4886) drops what its replay normalization drops (silent and
   failed answers it does not replay, blank user messages, orphan results...) and, last, puts the
   bootstrap message first (`sanitizeGoogleTurnOrdering`, :4882-4884;
   google-turn-ordering-CAKKJfPd.mjs:3-15);
3. `validateReplayTurns` (:4890-4917) merges adjacent answers, then adjacent user messages
   (`validateGeminiTurns`, `validateAnthropicTurns`, embedded-agent-helpers-BFS05UdI.mjs:909-996);
4. then the heartbeat filter (`openclaw_heartbeat`), and later the stored runtime-context messages
   are stripped (`openclaw_model.runtime_context`): a message these take out still kept the
   messages around it apart (observed: two user messages with a runtime-context message between
   were sent as two), and a failed answer sent as OpenClaw's marker is judged after the merge, by
   the stop reason of the merge's last answer (observed).

Which of 2 and 3 run is the transcript policy of the session's provider and model API
(`resolveTranscriptPolicy`, helpers-BWGunXbB.mjs:161-204: a bundled provider plugin's
`buildReplayPolicy`, else `buildUnownedProviderTransportReplayFallback`, :57-90): `turn_policy`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.formats.base import JS_WHITESPACE, JoinedRun, SentShape
from inspector.formats.openclaw_model import FAILED_TURN_MARKER, METADATA_TYPES
from inspector.ledger.model import Ledger, Record

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


def session_policy(led: Ledger, path: Sequence[int]) -> TurnPolicy | None:
    """The transcript policy of the session's next request, taken to be that of its last answer's
    provider, model API and model as the answer records them (OpenClaw sends to the agent's
    configured model, which the store does not hold); None when no answer on the path records them."""
    records = led.records
    for s in reversed(path):
        rec = records[s]
        if rec.role != "assistant" or rec.source_role != "assistant" or rec._source is None:
            continue
        o = rec._source.obj(rec)
        m = o.get("message") if isinstance(o, dict) else None
        if isinstance(m, dict) and all(isinstance(m.get(k), str) for k in ("provider", "api", "model")):
            return turn_policy(m["provider"], m["api"], m["model"])
    return None


def trailing_user(records: Sequence[Record], path: Sequence[int]) -> Record | None:
    """The user message OpenClaw's orphan repair moves into the new prompt: the path's last entry
    past its metadata entries (`findTrailingMessageEntryForOrphanRepair`,
    builtin-openclaw-q1hiFm14.mjs:18237-18251; `isSessionContextMetadataEntry`,
    session-manager-codec-DW3_Rlj9.mjs:23-25), when it is a message entry of role user (:18283-18285)."""
    tail = next((records[s] for s in reversed(path) if records[s].type not in METADATA_TYPES), None)
    return tail if tail is not None and tail.type == "message" and tail.source_role == "user" else None


# --------------------------------------------------------------------------------------------- shape

# What OpenClaw writes around a trailing user message it moves into the prompt
# (`QUEUED_USER_MESSAGE_MARKER`, context-engine-maintenance-VqmqPz8h.mjs:397), and the user message
# it puts first when the history starts with an answer (`GOOGLE_TURN_ORDER_BOOTSTRAP_TEXT`,
# google-turn-ordering-CAKKJfPd.mjs:2).
QUEUED_MARKER = "[Queued user message from a previous active turn; preserved as context only. Continue with the active prompt below.]"
BOOTSTRAP_TEXT = "(session bootstrap)"
_FAILED = frozenset({"error", "aborted"})


def queued_text(rec: Record) -> str:
    """The text a trailing user message goes into the prompt as: the marker line, then its text
    (`extractUserMessagePromptText`, context-engine-maintenance-VqmqPz8h.mjs:472-479: each text
    block trimmed, the blank ones left out, joined by new lines; the prompt follows after a blank
    line, :519-526). A block of another kind (an image) is summarized there: not mirrored, left out."""
    m = rec.message
    texts = [t for b in (m.blocks if m is not None else ()) if b.type == "text" and (t := b.text.strip(JS_WHITESPACE))]
    return f"{QUEUED_MARKER}\n" + "\n".join(texts).strip(JS_WHITESPACE)


def _turn_role(it: Any, records: Sequence[Record]) -> str | None:
    """The role under which OpenClaw's replay validation would merge this item with a neighbour of
    the same: its message's own role, user or assistant (a summary, an extension's message, a tool
    result is none)."""
    if it.kind != "message" or it.seq is None or it.synthetic:
        return None
    rec = records[it.seq]
    if it.role == "assistant" and rec.source_role == "assistant":
        return "assistant"
    return "user" if it.role == "user" and rec.type == "message" and rec.source_role == "user" else None


def _run(items: Sequence[Any], first: int, last: int, records: Sequence[Record]) -> JoinedRun:
    rows = ", ".join(str(records[it.seq].line) for it in items[first : last + 1])
    k = last - first + 1
    if items[first].role == "user":
        note = (
            f"OpenClaw sends these {k} user messages (rows {rows}) as one: it merges adjacent user messages, their "
            "content one after the other (validateAnthropicTurns, embedded-agent-helpers-BFS05UdI.mjs:909-996)"
        )
        return JoinedRun(first, last, "", note)
    end = items[last]
    failed = end.text == FAILED_TURN_MARKER and records[end.seq].stop_reason in _FAILED
    note = (
        f"OpenClaw sends these {k} answers (rows {rows}) as one: it merges adjacent answers, their content one after "
        "the other under the last one's stop reason (validateGeminiTurns, validateAnthropicTurns, "
        "embedded-agent-helpers-BFS05UdI.mjs:909-958)"
        + ("; the last one failed, so the whole is sent as its failed-turn marker" if failed else "")
    )
    return JoinedRun(first, last, FAILED_TURN_MARKER if failed else "", note)


def shape(
    items: Sequence[Any], records: Sequence[Record], policy: Callable[[], TurnPolicy | None], opens: bool, trailing: int | None,
    separated: Callable[[int, int], bool],
) -> SentShape | None:
    """What OpenClaw does to these request items (in order; `opens`: they open the request) as it
    sends them: the trailing user message (`trailing`, a seq) goes into the prompt; of the rest, a
    history that starts with an answer gets the bootstrap message first, and adjacent answers and
    adjacent user messages are sent as one, where the transcript policy (`policy()`, asked only
    when one of these may apply; None: unknown, nothing merged) asks for it, but where a message it
    takes out only later stood between them (`separated`, of two seqs)."""
    n = len(items)
    into = n - 1 if trailing is not None and n and items[-1].seq == trailing and items[-1].kind == "message" else None
    body = n if into is None else into
    asked: list[TurnPolicy] = []

    def rule() -> TurnPolicy:
        if not asked:
            asked.append(policy() or NONE)
        return asked[0]

    runs: list[JoinedRun] = []
    roles = [_turn_role(it, records) for it in items[:body]]
    i = 0
    while i < body:
        role, j = roles[i], i
        if role is not None and i + 1 < body and roles[i + 1] == role and (rule().merges_answers if role == "assistant" else rule().merges_users):
            while j + 1 < body and roles[j + 1] == role and not separated(items[j].seq, items[j + 1].seq):
                j += 1
        if j > i:
            runs.append(_run(items, i, j, records))
        i = j + 1
    opens_with = None
    if opens and body and items[0].role == "assistant" and items[0].kind == "message" and rule().opens_with_user:
        why = "OpenClaw sends this user message first: the history it replays starts with an answer (sanitizeGoogleAssistantFirstOrdering, google-turn-ordering-CAKKJfPd.mjs:3-15)"
        opens_with = (BOOTSTRAP_TEXT, why)
    moved = None
    if into is not None:
        why = (
            "OpenClaw moves this trailing user message out of the history into the new prompt's message, after its "
            "queued-message line; the prompt follows (resolveOrphanRepairPlan, builtin-openclaw-q1hiFm14.mjs:18283-18297; "
            "mergeOrphanedTrailingUserPrompt, context-engine-maintenance-VqmqPz8h.mjs:499-529)"
        )
        moved = (into, queued_text(records[trailing]), why)  # type: ignore[index]
    if not runs and opens_with is None and moved is None:
        return None
    return SentShape(runs, moved, opens_with)
