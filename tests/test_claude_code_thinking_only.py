"""Claude Code 2.1.328 leaves out a reply of thinking blocks only (`claude_code._leave_out_thinking_only`).

An assistant line whose content is thinking and redacted_thinking blocks and nothing else is removed
from the conversation Claude Code resumes and from every request (`xXo`, offset 322908522), unless a
line of the same message.id holds another block; so the rules after it (the line rule for unanswered
calls, the pairing of results with the reply before them, the reply the resume appends) see the
conversation without it. Such lines are what an interrupted stream leaves (Claude Code writes a
reply a block per line, the thinking first). Checked against the real CLI by the order probes of
`tests/peers/claude_code_resume/order_probe.py` (27 of them; before, 17 differed).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.analysis.export import context_json
from inspector.formats import load
from inspector.live.incremental import Follower
from tests.conftest import need_shared
from tests.test_claude_code_line_rule import _need_claude_code
from tests.test_incremental import followed_json, full_json

# What the real Claude Code 2.1.328 sent on resume (`python -m tests.peers.claude_code_resume.order_probe`):
# the probe's lines in order (L0: its prompt), `miss` a result it made up, `resume` the reply it appends.
SENT = {
    "thinking-only reply, then text typed": "L0 L2 L3",
    "thinking-only reply, session ends": "L0 resume",
    "redacted-only reply, then text": "L0 L2 L3",
    "two thinking-only lines of one reply, then text": "L0 L3 L4",
    "thinking line, then its call line, unanswered, text": "L0 L3 L4",
    "thinking-only reply between a call and its result": "L0 L1 L3 L4",
    "unanswered call, then thinking-only reply, session ends": "L0 L1 miss resume",
    "call answered, thinking-only reply, session ends": "L0 L1 L2 resume",
    "thinking-only reply after a text reply, session ends": "L0 L1",
    "thinking line, text line": "L0 L1 L3 L4",
    "thinking line, then its call line, session ends": "L0 L1 miss resume",
}


def _predicted(names: set[str]) -> dict[str, str]:
    from tests.peers.claude_code_resume import order_probe
    from tests.test_claude_code_accepts import _predicted_item

    need_shared(order_probe.BASE)
    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for p, f in zip(order_probe.PROBES, order_probe.write_probes(Path(tmp)), strict=True):
            if p.name in names:
                predicted = context_json(analyze(load(str(f))))["messages"]
                items = [_predicted_item(m) for m in predicted]
                out[p.name] = order_probe._show((items, sorted(_predicted_item(m)[0] for m in predicted if m.get("orphan"))))
    return out


def test_inspector_predicts_what_claude_code_sent_of_replies_of_thinking_only() -> None:
    """The next request of each probe is what the real CLI sent on resume (recorded above): a reply
    of thinking only is not sent, the result after it answers the call before it, an unanswered
    call before it is the conversation's last (answered on resume), and the resume's reply is
    appended where the conversation, without it, ends on a result."""
    assert _predicted(set(SENT)) == SENT


def test_the_real_claude_code_leaves_out_replies_of_thinking_only_as_inspector_predicts() -> None:
    """The same probes through the pinned CLI (its first request on resume, block by block)."""
    from tests.peers.claude_code_resume import order_probe

    _need_claude_code(order_probe.BASE)
    with tempfile.TemporaryDirectory() as tmp:
        rows = order_probe.run(Path(tmp), set(SENT))
    assert {p.name for p, _, _ in rows} == set(SENT)
    sent = {p.name: order_probe._show(got if isinstance(got, str) else got[:2]) for p, got, _ in rows}
    assert sent == SENT
    assert not {p.name for p, got, want in rows if got != want}


def _line(uuid: str, parent: str | None, role: str, content: object, mid: str | None = None) -> bytes:
    msg: dict[str, object] = {"role": role, "content": content}
    if role == "assistant":
        msg.update(model="claude-x", id=mid, stop_reason=None, usage={"input_tokens": 10, "output_tokens": 2})
    o = {"type": role, "uuid": uuid, "parentUuid": parent, "sessionId": "s", "timestamp": "2026-12-01T00:00:00.000Z", "message": msg}
    return json.dumps(o).encode() + b"\n"


THINK = [{"type": "thinking", "thinking": "weighing it", "signature": "sig"}]


def test_a_reply_followed_while_only_its_thinking_is_written_is_sent_once_its_text_comes(tmp_path: Path) -> None:
    """Followed live, a reply's thinking line comes first (Claude Code writes a block per line):
    until its text line comes the reply is thinking only, and left out, as a full read says; once
    it comes the reply is sent. The follow agrees with a full read at each look."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(_line("u1", None, "user", "hello") + _line("a1", "u1", "assistant", [{"type": "text", "text": "hi"}], "m1") + _line("u2", "a1", "user", "and then?"))
    fol = Follower(str(path))
    fol.poll()
    looks = [_line("a2", "u2", "assistant", THINK, "m2"), _line("a3", "a2", "assistant", [{"type": "text", "text": "this"}], "m2")]
    for k, line in enumerate(looks):
        with open(path, "ab") as f:
            f.write(line)
        assert fol.poll() is not None
        assert followed_json(fol) == full_json(str(path), str(path))
        assert fol.report is not None
        reply = next(r for r in fol.report.ledger.records if r.id == "a2")
        assert reply.never_sent is (k == 0)
        sent = {it.record_id for it in fol.report.context}
        assert ("a2" in sent) is (k == 1)


@pytest.mark.parametrize("block", [THINK, [{"type": "redacted_thinking", "data": "x"}], [*THINK, *THINK]])
def test_a_reply_of_thinking_only_is_never_sent_with_a_diagnostic(tmp_path: Path, block: list[dict[str, object]]) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(_line("u1", None, "user", "hello") + _line("a1", "u1", "assistant", block, "m1") + _line("u2", "a1", "user", "typed"))
    rep = analyze(load(str(path)))
    assert [it.record_id for it in rep.context if not it.on_resume] == ["u1", "u2"]
    a1 = next(r for r in rep.ledger.records if r.id == "a1")
    assert a1.never_sent and rep.states[a1.seq] == "excluded"
    assert any(d.problem == "skipped_by_runtime" and "thinking blocks only" in d.message for d in rep.ledger.diagnostics)


def test_a_thinking_only_line_another_line_of_its_message_id_answers_for_is_sent(tmp_path: Path) -> None:
    """`wqi`: a line of thinking only is kept when another line of the same message.id holds
    another block, even one Claude Code reads as another reply (another sidechain value)."""
    lines = [
        _line("u1", None, "user", "hello"),
        _line("a1", "u1", "assistant", THINK, "m1"),
        _line("u2", "a1", "user", "typed"),
    ]
    other = json.loads(_line("a2", "u2", "assistant", [{"type": "text", "text": "done"}], "m1"))
    other["agentId"] = "x"  # (grouped apart by inspector: another agent's key)
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(lines) + json.dumps(other).encode() + b"\n")
    rep = analyze(load(str(path)))
    a1 = next(r for r in rep.ledger.records if r.id == "a1")
    assert not a1.never_sent
    assert "a1" in {it.record_id for it in rep.context}
