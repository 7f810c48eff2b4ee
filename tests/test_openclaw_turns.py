"""OpenClaw's transcript policy (inspector/formats/openclaw_turns.py): which providers and model APIs
merge adjacent answers, adjacent user messages, and open a history that starts with an answer with a
"(session bootstrap)" user message, held to OpenClaw's own `resolveTranscriptPolicy` (node, 1,485
provider/API/model cases).
"""

from __future__ import annotations

import itertools
import json
import subprocess

import pytest

from inspector.formats import openclaw_turns
from tests.peers.openclaw.generate import NODE, OPENCLAW

# ---------------------------------------------------------------------------------------- the port

_POLICY_JS = """
const { h: resolveTranscriptPolicy } = await import(`${process.argv[1]}/helpers-BWGunXbB.mjs`);
let input = "";
for await (const chunk of process.stdin) input += chunk;
const cases = JSON.parse(input);
process.stdout.write(JSON.stringify(cases.map(([provider, modelApi, modelId]) => {
  const p = resolveTranscriptPolicy({ provider, modelApi, modelId, config: {}, env: process.env, workspaceDir: process.cwd() });
  return [p.validateGeminiTurns, p.validateAnthropicTurns, p.applyGoogleTurnOrdering, p.appendOnlyRuntimeContext];
})));
"""
# Every provider a bundled plugin declares (extensions/*/openclaw.plugin.json), custom ones, each
# model API, models whose policy depends on them (Claude Opus 5.5 and Fable 5.1 append-only; a Claude
# model on the Responses API).
PROVIDERS = (
    "anthropic", "apple-fm", "clawrouter", "copilot-proxy", "fal", "github-copilot", "google", "google-gemini-cli", "google-vertex",
    "huggingface", "litellm", "lmstudio", "microsoft-foundry", "minimax", "minimax-portal", "nvidia", "ollama", "ollama-cloud",
    "openai", "opencode-go", "openrouter", "sglang", "together", "vllm", "xai", "fake", " OpenAI ",
)  # fmt: skip
APIS = (
    "openai-completions", "openai-responses", "openai-chatgpt-responses", "azure-openai-responses", "anthropic-messages",
    "bedrock-converse-stream", "google-generative-ai", "google-gemini-cli", "ollama", "mistral-conversations", "",
)  # fmt: skip
MODELS = ("m", "claude-sonnet-4-5", "anthropic/claude-opus-5.5", "us.anthropic.claude-fable-5-1-v1:0", "opus-5-5")


def test_the_policy_is_openclaws_own() -> None:
    """`openclaw_turns.turn_policy` and OpenClaw's own `resolveTranscriptPolicy` (its bundle, run by
    node, the bundled provider plugins loaded) agree on every provider, API and model above."""
    if not NODE.exists() or not OPENCLAW.exists():
        pytest.fail("OpenClaw 2026.9.6 is not installed (tests/install_runtimes.sh installs it)", pytrace=False)
    cases = list(itertools.product(PROVIDERS, APIS, MODELS))
    got = subprocess.run([str(NODE), "--input-type=module", "-e", _POLICY_JS, str(OPENCLAW.parent / "dist")],
                         input=json.dumps(cases), capture_output=True, text=True, check=True)  # fmt: skip
    theirs = [
        (bool(gem or anth), bool(anth) and not (bool(append) and api == "anthropic-messages"), bool(order))
        for (_, api, _), (gem, anth, order, append) in zip(cases, json.loads(got.stdout), strict=True)
    ]
    ours = [(p.merges_answers, p.merges_users, p.opens_with_user) for p in (openclaw_turns.turn_policy(*c) for c in cases)]
    assert ours == theirs
    assert len(set(ours)) >= 5  # (each way occurs)
