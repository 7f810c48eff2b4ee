"""Repair every damaged session of the type probe, and hold the repaired file to the real pi.

    python -m tests.peers.pi_resume.repair_probe [--strategies compact,recover] [--as-written]

The type probe (`type_probe.py`) appends a damaged entry and a clean one under it to the pi peer
corpus's `normal.jsonl` (or damages one of its own lines), a hundred-odd ways, one copy per probe.
Each copy is repaired in place (`inspector repair --write`, the extractive summarizer, pi's peer
budgets and a short recent window so there is something to summarize) with each strategy; a noop
plan or a refusal is shown with its reason. Then the pinned pi resumes every repaired copy
(`resume.resume_many`: one pi process, RPC `switch_session` and a prompt), and its whole first
request must be what `inspector context --json` predicts of the copy (`sent_as_predicted`: each
message's role, text and tool call ids, in order, as pi-ai's chat-completions conversion writes
them), or pi must send nothing where `analyze` says it stops (as the line rule's
`type_probe.predicted`). (tests/test_pi_accepts.py holds repaired sessions to pi's own context
builder, `context.mjs`; here the request itself is the judge: that builder walks some damaged
copies forever and counts their damaged lines as malformed.)

Prints one row per copy and the count that differ; exits 1 when any does.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from tests.peers import repair_campaign
from tests.peers.pi_resume import resume, type_probe

BUDGETS = ["--window", "16384", "--reserve", "4096"]
STRATEGIES = {"compact": ["--keep-recent", "800", *BUDGETS], "recover": BUDGETS, "resummarize": ["--keep-recent", "800", *BUDGETS]}
NAMES = [p.name for p in type_probe.PROBES]
_ROLE = {"user": "user", "assistant": "assistant", "tool": "tool"}


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [c["text"] for c in content or [] if isinstance(c, dict) and c.get("type") == "text"]


def _sent(m: dict[str, Any]) -> tuple[Any, ...]:
    """A message of pi's request as the comparison sees it: role, text, tool call ids."""
    if m["role"] == "tool":
        return ("tool", m.get("content"), [m.get("tool_call_id")])
    if m["role"] == "assistant":
        return ("assistant", "".join(_texts(m.get("content"))), [c.get("id") for c in m.get("tool_calls") or []])
    return (m["role"], "\n".join(_texts(m.get("content"))), [])


# pi-ai's conversion for the harness's model (text input only, `resume._configure`): an image is
# sent as a placeholder text (providers/transform-messages.js:1-2), and every text without its lone
# surrogates (utils/sanitize-unicode.js:21-24).
_IMAGE = {"user": "(image omitted: model does not support images)", "tool": "(tool image omitted: model does not support images)"}
_LONE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")


def _predicted(report: Any, it: Any, m: dict[str, Any]) -> tuple[Any, ...]:
    """A predicted message as pi-ai's chat-completions conversion would write it
    (`providers/openai-completions.js` convertMessages: an assistant's non-blank texts joined with
    nothing, a result's texts with newlines, a user's parts one by one)."""
    if it.kind == "summary" or it.seq is None:
        return (m["role"], _LONE.sub("", it.text), [m["tool_call_id"]] if m["role"] == "tool" else [])
    msg = report.ledger.records[it.seq].message
    blocks = msg.blocks if msg is not None else []
    if m["role"] == "assistant":
        texts = [b.text or "" for b in blocks if b.type == "text"]
        return ("assistant", _LONE.sub("", "".join(t for t in texts if t.strip())), list(m.get("tool_call_ids") or []))
    # (the reader's result block holds the result's texts)
    texts = [_IMAGE.get(m["role"], "") if b.type == "image" else b.text or "" for b in blocks if b.type in ("text", "tool_result", "image")]
    return (m["role"], _LONE.sub("", "\n".join(texts)), [m["tool_call_id"]] if m["role"] == "tool" else [])


def sent_as_predicted(messages: list[dict[str, Any]], f: Path, predicted: list[dict[str, Any]]) -> str | None:
    """pi's first request on resuming F (its MESSAGES, the system prompt and the new prompt left
    out) against `inspector context --json`'s PREDICTED messages: None when every message is the
    predicted one, in order, else the first difference."""
    from inspector.analysis import analyze
    from inspector.formats import load

    report = analyze(load(str(f)))
    if len(report.context) != len(predicted):
        return f"the analysis has {len(report.context)} items, context --json {len(predicted)}"
    want = [_predicted(report, it, m) for it, m in zip(report.context, predicted, strict=True)]
    got = [_sent(m) for m in messages]
    if got != want:
        i = next((k for k, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want)))
        return f"message {i} of {len(want)} predicted: sent {str(got[i])[:160] if i < len(got) else None}, predicted {str(want[i])[:160] if i < len(want) else None}"
    return None


def _row(r: resume.Resumed, f: Path) -> str | None:
    """None when pi did with F what inspector predicts (refused: `analyze` says pi stops, as the
    line rule's `type_probe.predicted`), else the first difference."""
    from inspector.analysis import analyze
    from inspector.formats import load

    try:
        stops = any(x.code in ("resume_refused", "request_fails", "broken_tree") for x in analyze(load(str(f))).findings)
        if r.messages is None or stops:
            return None if r.messages is None and stops else ("pi sent a request, inspector predicted none" if stops else f"pi sent nothing: {r.error[:200]}")
        return sent_as_predicted(r.messages, f, repair_campaign.predicted_messages(f))
    except Exception as e:  # a row the comparison cannot make is a row to look at, not the end of the run
        return f"comparison failed: {type(e).__name__}: {str(e)[:200]}"


def check(written: list[tuple[str, Path]], scratch: Path) -> list[tuple[str, str | None]]:
    """(label, None or the first difference) for each copy pi resumed."""
    copies = scratch / "resumed"
    copies.mkdir(parents=True, exist_ok=True)
    resumed = []
    for k, (_, f) in enumerate(written):  # (pi writes to what it resumes: a copy each, the name its own)
        resumed.append(copies / f"{k:03d}-{f.name}")
        resumed[-1].write_bytes(f.read_bytes())
    runs = resume.resume_many(resumed, scratch / "run")
    return [(label, _row(r, f)) for (label, f), r in zip(written, runs, strict=True)]


def main(argv: list[str] | None = None) -> int:
    return repair_campaign.main(argv, __doc__, "pi", NAMES, STRATEGIES,
                                lambda probes: type_probe.write_probes(probes, probes.parent / "resume" / "run" / "ws"),
                                lambda written, out: check(written, out / "resume"))  # fmt: skip

if __name__ == "__main__":
    sys.exit(main())
