"""OpenClaw's own transcript records: answers it writes and never replays to a model.

OpenClaw writes assistant messages of its own into a session's transcript: a delivery mirror of what
a channel was sent ("✅ New session started · model: …" at the start of a session begun by /new, a
final reply mirrored to Telegram), a message the gateway injected. Its replay drops every one of
them before anything else reads the request (`normalizeAssistantReplayContent`, openclaw 2026.9.6
dist/builtin-openclaw-q1hiFm14.mjs:4580-4583): an answer whose provider is "openclaw" and whose model
is "delivery-mirror" or "gateway-injected", or that carries an `openclawDeliveryMirror` marker of a
known kind (`isTranscriptOnlyOpenClawAssistantMessage`,
dist/transcript-only-openclaw-assistant-CVgy4bjA.mjs:6-39). Found on real sessions (CroCooCn/zhipuclaw,
`.openclaw/agents/*/sessions/*.jsonl`, imported by `openclaw doctor --fix` and resumed): OpenClaw
sent the session without its first message, the mirror, where inspector predicted it.

pi keeps them (its own loader knows no such answer): the JSONL reader, pi's rule, is not changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.analysis.engine import EXCLUDED, LIVE
from inspector.formats import load, openclaw_sqlite
from tests.peers.openclaw.resume import NotInstalled, resume
from tests.peers.openclaw.type_probe import LEAF
from tests.test_openclaw import sent_as_predicted
from tests.test_openclaw_accepts import _first_agent_request
from tests.test_openclaw_failed_turns import CALL, USAGE, WHEN, answer, result, seq_of, store, user

MIRROR_TEXT = "✅ New session started · model: fake/fake-model"


def mirror(eid: str, parent: str, provider: Any = "openclaw", model: Any = "delivery-mirror", **extra: Any) -> dict[str, Any]:
    """An answer as OpenClaw's delivery mirror writes it (`appendAssistantMessageToSessionTranscript`,
    dist/session-transcript-runtime-CePvNE-m.mjs:650-660), of PROVIDER and MODEL."""
    msg = {"role": "assistant", "content": [{"type": "text", "text": MIRROR_TEXT}], "api": "openai-responses",
           "provider": provider, "model": model, "usage": USAGE, "stopReason": "stop", "timestamp": 1796202000000, **extra}  # fmt: skip
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": WHEN, "message": msg}


# (provider, model, extra fields) -> whether OpenClaw leaves the answer out.
CASES: dict[str, tuple[Any, Any, dict[str, Any], bool]] = {
    "a delivery mirror": ("openclaw", "delivery-mirror", {}, True),
    "a gateway-injected answer": ("openclaw", "gateway-injected", {}, True),
    "a marker of a known kind, provenance stripped": ("fake", "fake-model", {"openclawDeliveryMirror": {"kind": "channel-final"}}, True),
    "a cron delivery context marker": (None, None, {"openclawDeliveryMirror": {"kind": "cron-direct-delivery-context"}}, True),
    "another model of provider openclaw": ("openclaw", "mirror", {}, False),
    "the model of another provider": ("fake", "delivery-mirror", {}, False),
    "a model name padded": ("openclaw", " delivery-mirror", {}, False),
    "a marker of an unknown kind": ("fake", "fake-model", {"openclawDeliveryMirror": {"kind": "other"}}, False),
    "a marker that is a list": ("fake", "fake-model", {"openclawDeliveryMirror": [{"kind": "channel-final"}]}, False),
}


@pytest.mark.parametrize("case", CASES)
def test_openclaws_own_answers_are_left_out_of_the_request(tmp_path: Path, case: str) -> None:
    provider, model, extra, left_out = CASES[case]
    rows = [user("pp1", LEAF, "BEFORE"), answer("pa1", "pp1", [{"type": "text", "text": "an answer"}], "stop"), mirror("pm1", "pa1", provider, model, **extra)]
    path = store(tmp_path, rows)
    report = analyze(load(str(path)))
    m = seq_of(report, "pm1")
    sent = [it for it in report.context if it.seq == m]
    assert report.states[m] == (EXCLUDED if left_out else LIVE), case
    assert report.ledger.records[m].never_sent == left_out and len(sent) == (0 if left_out else 1), case
    assert not [f for f in report.findings if f.code in ("hole", "unanswered_tool_call", "orphan_tool_result")]
    # the transcript index's fast mapping reads it as the whole parse does
    fast, whole = openclaw_sqlite.load(str(path), None, None), openclaw_sqlite.load(str(path), None, None, index=False)
    assert [(r.seq, r.never_sent) for r in fast.records] == [(r.seq, r.never_sent) for r in whole.records]


def test_a_mirrors_call_goes_with_it_and_its_result_is_left_out_as_an_orphan(tmp_path: Path) -> None:
    """Dropped first, a mirror making a call leaves its result without its call: OpenClaw drops it
    (its pairing), as any orphan result of an openai-completions model."""
    rows = [user("pp1", LEAF, "BEFORE"), mirror("pm1", "pp1"), result("pr1", "pm1", CALL["id"]), user("pc1", "pr1", "AFTER")]
    rows[1]["message"]["content"].append(CALL)
    report = analyze(load(str(store(tmp_path, rows))))
    for eid in ("pm1", "pr1"):
        assert report.states[seq_of(report, eid)] == EXCLUDED, eid
    assert not [f for f in report.findings if f.code in ("orphan_tool_result", "unanswered_tool_call")]


def test_openclaw_resumes_a_store_holding_a_delivery_mirror_as_predicted(tmp_path: Path) -> None:
    """The real OpenClaw 2026.9.6 on the corpus store with a turn and the delivery mirror of its
    reply appended: its first request is our next request (the mirror not in it)."""
    rows = [user("pp1", LEAF, "BEFORE"), answer("pa1", "pp1", [{"type": "text", "text": "an answer"}], "stop"), mirror("pm1", "pa1")]
    path = store(tmp_path, rows)
    report = analyze(load(str(path)))
    assert seq_of(report, "pm1") not in {it.seq for it in report.context}
    message = "[turn:r1] are you still there?"
    try:
        rc, reqs = resume(path, "s1", message, tmp_path / "scratch")
    except NotInstalled as e:
        pytest.fail(f"{e} (tests/install_runtimes.sh installs it): OpenClaw's reading cannot be checked", pytrace=False)
    assert rc == 0, (tmp_path / "scratch" / "openclaw.stderr.log").read_text()[-2000:]
    sent = sent_as_predicted(_first_agent_request(reqs), report, message)
    assert MIRROR_TEXT not in repr(sent)
