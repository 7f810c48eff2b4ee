"""OpenClaw's send-time shaping of the replayed history (inspector/formats/openclaw_turns.py): adjacent
answers sent as one, adjacent user messages sent as one, a trailing user message moved into the new
prompt on resume, a "(session bootstrap)" user message first when the history starts with an answer.

OpenClaw 2026.9.6 runs its orphan repair, then `sanitizeSessionHistory` (the bootstrap message last),
then `validateReplayTurns` (the merges), each where the transcript policy of the provider and model
API asks for it (docs/runtimes/openclaw.md §4.9). Before this, inspector listed every stored message
as its own item and the tests that compare with the real OpenClaw merged them away
(`type_probe.sent_count`, `test_openclaw_heartbeat.as_sent`). Held here: the policy's port to
OpenClaw's own `resolveTranscriptPolicy` (node, 1,485 provider/API/model cases), the shape of the
request on stores built from the types, the follower and the index agreeing with a full read, and
the real OpenClaw resuming a store that holds every case, item for item (the campaign of variants:
`python -m tests.peers.openclaw.turns_probe`).
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.analysis.engine import LIVE, Report
from inspector.analysis.export import context_json
from inspector.formats import load, openclaw_sqlite, openclaw_turns
from inspector.formats.openclaw_model import FAILED_TURN_MARKER
from inspector.live.incremental import GROWN, Follower
from tests.peers.openclaw.generate import NODE, OPENCLAW
from tests.peers.openclaw.resume import NotInstalled, resume
from tests.peers.openclaw.type_probe import BASE, LEAF, LEAF_SEQ
from tests.test_incremental_stores import as_json, full_json
from tests.test_openclaw import sent_as_predicted
from tests.test_openclaw_accepts import _first_agent_request
from tests.test_openclaw_failed_turns import answer, append, seq_of, store, user
from tests.test_openclaw_runtime_context import runtime_context

LATER = 1796205600000  # an hour after `user`'s time: a merged user message is dated by its last one


def said(eid: str, parent: str | None, text: str, stop: str = "stop") -> dict[str, Any]:
    return answer(eid, parent, [{"type": "text", "text": text}], stop)  # type: ignore[arg-type]


def later(eid: str, parent: str, text: str) -> dict[str, Any]:
    o = user(eid, parent, text)
    o["message"]["timestamp"] = LATER
    return o


def rows(first_parent: str | None, *specs: tuple[Any, ...]) -> list[dict[str, Any]]:
    """Entries hung one under the other from `first_parent` (None: a new root): (maker, id, *args) each."""
    out: list[dict[str, Any]] = []
    for make, eid, *args in specs:
        out.append(make(eid, out[-1]["id"] if out else first_parent, *args))
    return out


# Every case in one history, from a new root (so it starts with an answer: the bootstrap message):
# two user messages (one message, dated by the second), two answers (one), two user messages with a
# runtime-context message between (two: OpenClaw strips it only after the merge), a failed answer
# then one that did not fail (one, as written), one that did not then a failed one (one, the
# failed-turn marker), and a trailing user message (into the prompt).
SHAPES = rows(
    None,
    (said, "a0", "ROOT-ANSWER"),
    (user, "u1", "U1-TEXT"), (later, "u2", "U2-TEXT"),
    (said, "a1", "A1-TEXT"), (said, "a2", "A2-TEXT"),
    (user, "u3", "U3-TEXT"), (runtime_context, "r3"), (user, "u4", "U4-TEXT"),
    (said, "a4", "A4-TEXT"),
    (user, "u5", "U5-TEXT"), (said, "e5", "E5-PARTIAL", "error"), (said, "a5", "A5-TEXT"),
    (user, "u6", "U6-TEXT"), (said, "a6", "A6-TEXT"), (said, "e6", "E6-PARTIAL", "aborted"),
    (user, "u7", "U7-TRAILING"),
)  # fmt: skip


def _ids(report: Report) -> list[tuple[str | None, ...]]:
    """Each item: its record ids (the one it sends, those it joins), or its text when it has none."""
    records = report.ledger.records
    return [(records[it.seq].id, *(records[s].id for s in it.joined)) if it.seq is not None else (it.text,) for it in report.context]


def test_the_request_is_shaped_as_openclaw_sends_it(tmp_path: Path) -> None:
    report = analyze(load(str(store(tmp_path, SHAPES))))
    assert _ids(report) == [
        (openclaw_turns.BOOTSTRAP_TEXT,), ("a0",), ("u1", "u2"), ("a1", "a2"), ("u3",), ("u4",), ("a4",), ("u5",),
        ("e5", "a5"), ("u6",), ("a6", "e6"), ("u7",),
    ]  # fmt: skip
    ctx = report.context
    assert ctx[0].synthetic and ctx[0].role == "user" and "google-turn-ordering" in (ctx[0].note or "")
    assert "2 user messages" in (ctx[2].note or "") and "2 answers" in (ctx[3].note or "")
    assert ctx[8].text == "" and ctx[10].text == FAILED_TURN_MARKER and "failed-turn marker" in (ctx[10].note or "")
    moved = ctx[-1]
    assert moved.on_resume and not moved.synthetic and moved.text == f"{openclaw_turns.QUEUED_MARKER}\nU7-TRAILING"
    # Every record sent is live (a merge leaves out none); the runtime-context message is never sent.
    for eid in ("u1", "u2", "a1", "a2", "e5", "a5", "a6", "e6", "u7"):
        assert report.states[seq_of(report, eid)] == LIVE, eid
    # Counted on what is sent: a merged item on its records' texts, the moved one on its own text.
    report.ensure_tokens()
    count = report._tokenizer.count_many
    assert (ctx[3].tokens, ctx[3].tokens_from) == (count(["A1-TEXT\nA2-TEXT"])[0], "tiktoken")
    assert ctx[-1].tokens == count([moved.text])[0]
    assert not [f for f in report.findings if f.severity != "info"]


def test_a_request_failing_on_a_message_sent_in_anothers_is_said(tmp_path: Path) -> None:
    """A user message OpenClaw cannot convert fails the request where it is sent: in the message it is
    merged into too (`findings._request_fails` reads the records an item joins)."""
    bad = user("u2", "u1", "x")
    bad["message"]["content"] = [{"type": "text", "text": None}]
    report = analyze(load(str(store(tmp_path, [user("u1", LEAF, "U1"), bad, said("a2", "u2", "A2")]))))
    assert ("u1", "u2") in _ids(report)
    assert [f.records for f in report.findings if f.code == "request_fails"] == [[seq_of(report, "u2")]]


def test_the_views_show_one_message_for_records_sent_as_one(tmp_path: Path) -> None:
    """`inspector context` and the app's next-request view and detail pane say which records go as one
    message, and which goes into the next prompt on resume."""
    import asyncio

    from rich.console import Console

    from inspector.cli.render import render_context
    from inspector.tui.app import create_app
    from inspector.tui.context_view import NextRequestView
    from inspector.tui.detail import DetailPane
    from tests.conftest import app_reaches

    path = store(tmp_path, SHAPES)
    report = analyze(load(str(path)))
    console = Console(record=True, width=200)
    console.print(render_context(report))
    out = console.export_text()
    assert f"2 as one: lines {LEAF_SEQ + 2}, {LEAF_SEQ + 3}" in out and "on resume, sent as" in out
    assert DetailPane()._context_index(report)[seq_of(report, "u2")] == 2  # (u2 is sent in item 2, u1's)
    app = create_app([str(path)])

    async def body() -> None:
        async with app.run_test(size=(140, 40)) as pilot:
            await app_reaches(pilot, lambda: getattr(app.screen, "report", None) is not None)
            await pilot.press("3")  # the next request
            await pilot.pause(0.1)
            view = app.screen.query_one(NextRequestView)
            assert "moves into the next prompt on resume" in str(view.query_one("#next-head").render())
            cells = [[str(c) for c in view.table.get_row_at(i)] for i in range(len(view.items))]
            assert cells[2][-1].startswith("2 as one: U1-TEXT") and cells[-1][-1].startswith("on resume, sent as: [Queued")

    asyncio.run(body())


def test_context_json_names_the_records_an_item_joins(tmp_path: Path) -> None:
    report = analyze(load(str(store(tmp_path, SHAPES))))
    items = context_json(report)["messages"]
    assert items[2]["joined"] == [seq_of(report, "u2")] and "joined" not in items[1]
    assert items[-1]["on_resume"] and items[-1]["preview"].startswith("[Queued user message")


def test_a_custom_message_or_a_tool_result_keeps_messages_apart_an_excluded_one_does_not(tmp_path: Path) -> None:
    """Only a message of OpenClaw's replay keeps two user messages (or answers) apart: an extension's
    message, a tool result do (observed); one it never replays does not (a nested-tool record, a silent
    answer, a blank user message: observed of an aborted answer of blank text)."""
    nested = {"type": "message", "id": "n1", "parentId": "a1", "timestamp": "2026-12-02T09:00:00.000Z",
              "message": {"role": "custom", "customType": "openclaw.nested-tool.v1", "content": "", "display": True,
                          "excludeFromContext": True, "details": {}, "timestamp": 1796202000000}}  # fmt: skip
    extension = {"type": "custom_message", "customType": "other.note", "content": "NOTE", "display": True,
                 "id": "x2", "parentId": "u2", "timestamp": "2026-12-02T09:00:00.000Z"}  # fmt: skip
    chain = [
        user("u1", LEAF, "U1"), said("a1", "u1", "A1"), nested, said("a2", "n1", "A2"), said("s2", "a2", "NO_REPLY"),
        user("u2", "s2", "U2"), extension, user("u3", "x2", "U3"), said("b3", "u3", "", "aborted"), user("u4", "b3", "U4"),
        said("a4", "u4", "A4"),
    ]  # fmt: skip
    report = analyze(load(str(store(tmp_path, chain))))
    got = _ids(report)
    assert got[got.index(("u1",)) :] == [("u1",), ("a1", "a2"), ("u2",), ("x2",), ("u3", "u4"), ("a4",)]


def _with_route(o: dict[str, Any], provider: str, api: str, model: str) -> dict[str, Any]:
    o["message"].update(provider=provider, api=api, model=model)
    return o


@pytest.mark.parametrize(
    ("provider", "api", "model", "want"),
    [
        ("fake", "openai-completions", "fake-model", (True, True, True)),  # an unowned provider on Chat Completions: all
        ("openai", "openai-completions", "gpt-5", (False, False, False)),  # OpenAI's plugin: none
        ("google", "google-generative-ai", "gemini-2.5-pro", (True, False, True)),  # answers and the bootstrap
        ("anthropic", "anthropic-messages", "claude-sonnet-4-5", (True, True, False)),  # answers and user messages
        ("anthropic", "anthropic-messages", "claude-opus-5-5", (True, False, False)),  # append-only: answers only
    ],
)
def test_what_is_merged_follows_the_last_answers_provider(
    tmp_path: Path, provider: str, api: str, model: str, want: tuple[bool, bool, bool]
) -> None:
    chain = rows(None, (said, "a0", "A0"), (said, "a1", "A1"), (user, "u1", "U1"), (user, "u2", "U2"), (said, "a2", "A2"))
    for o in chain:
        if o["message"]["role"] == "assistant":
            _with_route(o, provider, api, model)
    got = _ids(analyze(load(str(store(tmp_path, chain)))))
    answers, users, bootstrap = want
    assert (("a0", "a1") in got) is answers and (("u1", "u2") in got) is users
    assert (got[0] == (openclaw_turns.BOOTSTRAP_TEXT,)) is bootstrap


def test_the_last_answer_names_the_provider_after_a_switch(tmp_path: Path) -> None:
    """The corpus's answers are the custom provider's (merged); two answers of OpenAI's after them
    make the session OpenAI's: nothing merged, the corpus's part included."""
    chain = rows(LEAF, (said, "a1", "A1"), (user, "u1", "U1"), (user, "u2", "U2"), (said, "a2", "A2"), (said, "a3", "A3"))
    for o in chain:
        if o["message"]["role"] == "assistant":
            _with_route(o, "openai", "openai-completions", "gpt-5")
    assert not [it for it in analyze(load(str(store(tmp_path, chain)))).context if it.joined]


def test_without_an_answer_recording_its_api_nothing_is_merged_but_the_trailing_message_moves(tmp_path: Path) -> None:
    chain = rows(None, (user, "u1", "U1"), (user, "u2", "U2"), (user, "u3", "U3"))
    report = analyze(load(str(store(tmp_path, chain))))
    assert _ids(report) == [("u1",), ("u2",), ("u3",)] and report.context[-1].on_resume


def test_the_estimate_takes_the_usage_of_the_last_answer_sent_as_one(tmp_path: Path) -> None:
    chain = rows(LEAF, (user, "u1", "U1"), (said, "a1", "A1"), (said, "a2", "A2"), (user, "u2", "U2"))
    chain[1]["message"]["usage"] = {**chain[1]["message"]["usage"], "input": 500, "totalTokens": 502}
    chain[2]["message"]["usage"] = {**chain[2]["message"]["usage"], "input": 900, "totalTokens": 902}
    report = analyze(load(str(store(tmp_path, chain))))
    assert report.tokens_source == "usage+tiktoken"
    assert report.context_tokens == 902 + report.context[-1].tokens  # type: ignore[operator]
    # Answers sent as one under a failed last one (the marker) give no usage: the estimate goes back
    # to the answers before them (e5 and a5, a5's usage).
    report = analyze(load(str(store(tmp_path, SHAPES, "shapes.sqlite"))))
    anchor = next(it for it in report.context if it.record_id == "e5")
    usage = report.ledger.records[seq_of(report, "a5")].message.usage.total  # type: ignore[union-attr]
    assert report.context_tokens == usage + sum(it.tokens for it in report.ensure_tokens()[anchor.index + 1 :])  # type: ignore[misc]


def test_the_index_and_the_follower_shape_the_request_as_a_full_read(tmp_path: Path) -> None:
    """Row by row through every case (the trailing user message moved, then merged with the next
    one once an answer follows; runs growing): the follower's report is a full read's."""
    path = store(tmp_path, SHAPES)
    fast, whole = openclaw_sqlite.load(str(path), None, None), openclaw_sqlite.load(str(path), None, None, index=False)
    assert _ids(analyze(fast)) == _ids(analyze(whole))
    grown = tmp_path / "grown.sqlite"
    shutil.copyfile(BASE, grown)
    fol = Follower(str(grown))
    fol.poll()
    tail = [later("u8", "u7", "U8"), said("a8", "u8", "A8"), said("a9", "a8", "A9"), user("u9", "a9", "U9")]
    grew = 0
    for k, row in enumerate([*SHAPES, *tail]):
        append(grown, [row], LEAF_SEQ + 1 + k)
        up = fol.poll()
        assert up is not None, row["id"]
        grew += up.whole == GROWN
        assert as_json(fol.report) == full_json(str(grown)), row["id"]
    assert grew == len(SHAPES) + len(tail) - 1  # (read where the last read ended: all but the new root)
    assert ("u7", "u8") in _ids(fol.report) and ("a8", "a9") in _ids(fol.report)


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


# ---------------------------------------------------------------------------------------- the runtime


def test_openclaw_sends_the_shaped_request_as_predicted(tmp_path: Path) -> None:
    """The real OpenClaw 2026.9.6 resumes SHAPES: it sends what inspector predicts, item for item:
    the bootstrap message first, each merge as one message (a merged user message dated by its last
    record), the two kept apart as two, the failed runs as written and as the marker, and the trailing
    user message ahead of the new prompt in its message."""
    path = store(tmp_path, SHAPES)
    message = "[turn:sh1] and now?"
    try:
        rc, reqs = resume(path, "s1", message, tmp_path / "scratch")
    except NotInstalled as e:
        pytest.fail(f"{e} (tests/install_runtimes.sh installs it): OpenClaw's reading cannot be checked", pytrace=False)
    assert rc == 0, (tmp_path / "scratch" / "openclaw.stderr.log").read_text()[-2000:]
    sent = sent_as_predicted(_first_agent_request(reqs), analyze(load(str(path))), message)
    assert len(sent) == 12  # (11 messages and the prompt's)
