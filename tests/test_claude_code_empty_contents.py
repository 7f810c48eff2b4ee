"""A Claude Code line whose message content is an empty list, as Claude Code 2.1.328 sends it.

A user line's is skipped as the request is built (`tft`, in `mTe`'s `case"user"`): nothing of it is
sent, though it is loaded, so a transcript ending on one gets "No response requested." on resume.
A reply's is sent as "(no content)" (`Eqi`), text the model receives and the count holds; a reply
written over several lines is one message by then, so it is empty only when no line holds a block.
Checked against the real CLI by `tests/peers/claude_code_resume/type_probe.py` (the probes "content
empty" and "reply content empty"); here without it. Before, inspector predicted an item with no text
for each (no tokens), and no resume reply after a trailing empty user line.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from inspector.analysis import analyze
from inspector.analysis.engine import Report
from inspector.analysis.export import context_json
from inspector.analysis.tokens import get_tokenizer
from inspector.formats import load_bytes
from tests.test_claude_code import _jsonl, _line
from tests.test_incremental import grow_and_compare

NO_CONTENT = "(no content)"


def _head() -> list[dict[str, Any]]:
    return [
        _line("user", "u1", None, [{"type": "text", "text": "hello"}]),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "hi there"}], requestId="r1"),
    ]


def _report(objs: list[dict[str, Any]]) -> Report:
    rep = analyze(load_bytes(_jsonl(objs), "empty.jsonl"))
    rep.ensure_tokens()
    return rep


def _items(rep: Report) -> list[dict[str, Any]]:
    return context_json(rep)["messages"]


def test_a_user_line_with_empty_content_is_not_sent_and_the_line_after_it_is() -> None:
    rep = _report([*_head(), _line("user", "u2", "a1", []), _line("user", "u3", "u2", "AFTER")])
    items = _items(rep)
    assert [m["record_id"] for m in items] == ["u1", "a1", "u3", None]  # (then the resume reply)
    assert items[-1]["on_resume"] and items[-1]["preview"] == "No response requested."
    u2 = next(r for r in rep.ledger.records if r.id == "u2")
    assert rep.states[u2.seq] == "excluded"


def test_a_reply_with_empty_content_is_sent_as_no_content_and_counted_so() -> None:
    empty = _line("assistant", "a2", "a1", [], requestId="r2")
    empty["message"]["usage"] = {"input_tokens": 10, "output_tokens": 5}
    rep = _report([*_head(), empty, _line("user", "u3", "a2", "AFTER")])
    items = _items(rep)
    assert [m["record_id"] for m in items] == ["u1", "a1", "a2", "u3", None]
    a2 = items[2]
    assert a2["preview"] == NO_CONTENT and "in place of the reply's content" in a2["note"]
    # What is sent is counted, not the reply's recorded output (5).
    assert a2["tokens_from"] == "tiktoken" and a2["tokens"] == get_tokenizer().count(NO_CONTENT)


def test_a_reply_one_of_whose_lines_holds_a_block_is_sent_as_written() -> None:
    first = _line("assistant", "a2", "a1", [], mid="msg-2", requestId="r2")
    second = _line("assistant", "a3", "a2", [{"type": "text", "text": "the rest"}], mid="msg-2", requestId="r2")
    rep = _report([*_head(), first, second, _line("user", "u3", "a3", "AFTER")])
    a2 = next(m for m in _items(rep) if m["record_id"] == "a2")
    assert a2["preview"] == "the rest" and "note" not in a2


def test_a_transcript_ending_on_an_empty_user_line_gets_the_resume_reply() -> None:
    """Observed: the real CLI loads the line, finds the turn unfinished and appends its reply after
    the reply before it; a transcript ending on an empty reply gets none ("(no content)" is last)."""
    items = _items(_report([*_head(), _line("user", "u2", "a1", [])]))
    assert [m["record_id"] for m in items] == ["u1", "a1", None]
    assert items[-1]["on_resume"] and items[-1]["preview"] == "No response requested."
    items = _items(_report([*_head(), _line("assistant", "a2", "a1", [])]))
    assert [m["record_id"] for m in items] == ["u1", "a1", "a2"] and items[-1]["preview"] == NO_CONTENT


def test_a_followed_transcript_reads_empty_contents_as_the_full_analysis(tmp_path: Path) -> None:
    objs = [*_head(), _line("assistant", "a2", "a1", []), _line("user", "u2", "a2", [])]
    objs += [_line("user", "u3", "u2", "AFTER"), _line("assistant", "a3", "u3", [], mid="msg-3")]
    objs += [_line("assistant", "a4", "a3", [{"type": "text", "text": "x"}], mid="msg-3"), _line("user", "u4", "a4", [])]
    src = tmp_path / "empty.jsonl"
    src.write_bytes(_jsonl(objs))
    rng = random.Random(7)
    batches = sum(grow_and_compare(str(src), str(tmp_path), rng)[0] for _ in range(12))
    assert batches > 12


def test_an_empty_reply_s_usage_anchors_the_context_estimate() -> None:
    """The request Claude Code accepted for an empty reply is measured by its usage: the estimate of
    the next request starts from it (only a failed reply sent as a runtime's marker is skipped)."""
    empty = _line("assistant", "a2", "a1", [], requestId="r2")
    empty["message"]["usage"] = {"input_tokens": 1000, "output_tokens": 5}
    rep = _report([*_head(), empty, _line("user", "u3", "a2", "AFTER")])
    assert rep.tokens_source.startswith("usage") and rep.context_tokens >= 1005, (rep.context_tokens, rep.tokens_source)
