"""Claude Code leaves out the signed thinking of a reply of another model than the request's
(`yio`, docs/runtimes/claude_code.md): the real CLI resumes a transcript whose replies hold
thinking, some of them relabelled another model, and what it sends must be what
`inspector context --json` predicts: the same items, the same thinking blocks in order (the signed
and redacted thinking of the other model's replies left out, its unsigned thinking kept, the
newest model's kept), and each trimmed reply counted on what it sends.

The transcript is the peer corpus's manual_compact.jsonl (Claude Code 2.1.328, model
claude-opus-5-5), given thinking blocks; the CLI resumes it with the newest reply's model, which
the prediction assumes (the session's settings name it: the transcript does not record it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.cli.main import main
from inspector.formats import load
from inspector.ledger.jsontext import dumps_text
from tests.test_claude_code_accepts import PEERS, _harness, _predicted_item, _sent_items

OTHER_MODEL = "claude-sonnet-4-5"
# The blocks put ahead of each reply line's content, by the line's number in manual_compact.jsonl,
# and whether the line's reply is relabelled OTHER_MODEL: the three replies the request carries
# (after the compaction: the preserved reply on line 43, then lines 80 and 84, the newest).
THOUGHTS: dict[int, tuple[list[dict[str, Any]], bool]] = {
    43: ([{"type": "thinking", "thinking": "t43 signed", "signature": "c2lnLTQz"},
          {"type": "thinking", "thinking": "t43 unsigned"}], True),
    80: ([{"type": "thinking", "thinking": "t80 signed", "signature": "c2lnLTgw"},
          {"type": "redacted_thinking", "data": "cmVkYWN0ZWQtODA="}], True),
    84: ([{"type": "thinking", "thinking": "t84 signed", "signature": "c2lnLTg0"}], False),
}  # fmt: skip


def _with_thinking(src: Path, dst: Path) -> str:
    """manual_compact.jsonl given `THOUGHTS`; returns the newest reply's model."""
    out = []
    model = ""
    for n, raw in enumerate(src.read_bytes().splitlines(), 1):
        o = json.loads(raw)
        if o.get("type") == "assistant":
            blocks, other = THOUGHTS.get(n, ([], False))
            o["message"]["content"] = [*blocks, *o["message"]["content"]]
            if other:
                o["message"]["model"] = OTHER_MODEL
            model = o["message"]["model"]
        out.append(json.dumps(o))
    dst.write_text("\n".join(out) + "\n")
    return model


def _resume_with_model(harness: Any, transcript: Path, model: str, base: Path) -> Any:
    """`harness.resume` with the user's model configured (its settings.json) as `model`."""
    settings = base / "home" / ".claude"
    os.makedirs(settings, exist_ok=True)
    (settings / "settings.json").write_text(json.dumps({"model": model}))
    return harness.resume(str(transcript), str(base))


def _thinking(blocks: list[dict[str, Any]]) -> list[str]:
    """The thinking blocks of API content: a thinking's text, a redacted one's data."""
    return [b.get("thinking") if b.get("type") == "thinking" else f"redacted:{b.get('data')}" for b in blocks if b.get("type") in ("thinking", "redacted_thinking")]


def _predicted_thinking(report: Any) -> list[str]:
    """`_thinking` of each predicted reply as it is sent (a trimmed one: `RecordSource.sent_message`)."""
    out: list[str] = []
    for it in report.context:
        if it.role != "assistant" or it.seq is None or it.text:
            continue
        rec = report.ledger.records[it.seq]
        m = rec._source.sent_message(rec) if it.trimmed else rec.message
        out += [b.text if b.type == "thinking" else f"redacted:{b.raw.get('data')}" for b in m.blocks
                if b.type == "thinking" or (b.type == "other" and b.raw.get("type") == "redacted_thinking")]  # fmt: skip
    return out


def _sent_text(blocks: list[dict[str, Any]]) -> str:
    """What the tokenizer counts of an assistant message as sent (`engine.text_for_tokens`)."""
    parts: list[str] = []
    for b in blocks:
        if b.get("type") in ("text", "thinking"):
            parts.append(b.get("text") or b.get("thinking") or "")
        elif b.get("type") == "tool_use":
            parts += [b["name"], dumps_text(b["input"])]
    return "\n".join(p for p in parts if p)


def test_claude_code_leaves_out_the_signed_thinking_of_another_models_replies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    harness = _harness()
    try:
        harness.cli.check_installed()
    except harness.HarnessError as e:
        pytest.fail(f"Claude Code cannot be run, so what it sends cannot be checked: {e}", pytrace=False)
    if not PEERS.exists():
        pytest.fail(f"{PEERS} is missing (the checkout expects ../shared next to it)", pytrace=False)
    f = tmp_path / "manual_compact_thinking.jsonl"
    model = _with_thinking(PEERS / "manual_compact.jsonl", f)
    run = _resume_with_model(harness, f, model, tmp_path / "resume")
    assert run.rc == 0, run.stderr
    body = run.first_main()
    assert body["model"] == model

    assert main(["context", str(f), "--json"]) == 0
    predicted = json.loads(capsys.readouterr().out)["messages"]
    report = analyze(load(str(f)))
    items = _sent_items(harness, body, run.transcript, report.ledger, predicted)[0]
    assert items == [_predicted_item(m) for m in predicted]

    sent = [t for m in body["messages"] if m["role"] == "assistant" for t in _thinking(m["content"] if isinstance(m["content"], list) else [])]
    assert sent == ["t43 unsigned", "t84 signed"]  # (what Claude Code did: the rule itself)
    assert _predicted_thinking(report) == sent

    # Each trimmed reply is counted on what is sent (not its usage, which counted its thinking).
    trimmed = [m for m in predicted if m.get("note", "").startswith("Claude Code leaves out this reply's signed thinking")]
    assert [m["line"] for m in trimmed] == [43, 80]
    asked = [m for m in predicted if m["role"] == "assistant"]
    replies = [m["content"] for m in body["messages"] if m["role"] == "assistant"]
    assert len(replies) == len(asked)
    tok = report._tokenizer
    for m, content in zip(asked, replies, strict=True):
        if m in trimmed:
            assert (m["tokens"], m["tokens_from"]) == (tok.count_many([_sent_text(content)])[0], "tiktoken"), m["line"]


def _reply(uuid: str, parent: str, model: str, text: str, signed: bool = True) -> dict[str, Any]:
    from tests.test_claude_code import _line

    thinking = {"type": "thinking", "thinking": f"thought of {uuid}", **({"signature": f"sig-{uuid}"} if signed else {})}
    o = _line("assistant", uuid, parent, [thinking, {"type": "text", "text": text}])
    o["message"]["model"] = model
    return o


def test_a_followed_transcript_leaves_out_thinking_as_a_full_read_does(tmp_path: Path) -> None:
    """The live follower, one line at a time, says what a full read says at every step: a reply of
    another model changes the model the session is taken to resume with, and so whose signed
    thinking is left out all along the path (the full build then); one of the same model, or a
    reply whose thinking is unsigned, grows the ledger."""
    from tests.test_claude_code import _line, follow_each_line

    objs = [
        _line("user", "u1", None, "first"),
        _reply("a1", "u1", "model-a", "one"),
        _line("user", "u2", "a1", "second"),
        _reply("a2", "u2", "model-a", "two"),
        _line("user", "u3", "a2", "third"),
        _reply("a3", "u3", "model-b", "three"),  # (a1's and a2's thinking left out from here)
        _line("user", "u4", "a3", "fourth"),
        _reply("a4", "u4", "model-b", "four", signed=False),
        _line("user", "u5", "a4", "fifth"),
        _reply("a5", "u5", "model-a", "five"),  # (back to model-a: a3's and a4's signed thinking left out)
        _line("user", "u6", "a5", "sixth"),
    ]
    assert follow_each_line(tmp_path, objs, "models") >= 6
    report = analyze(load(str(tmp_path / "t.jsonl")))
    assert [it.line for it in report.context if it.trimmed] == [6]
