"""A reply written on several lines, some of whose calls never get a result: Claude Code leaves out
the lines, not the reply.

Claude Code writes a reply's blocks as lines of their own sharing `message.id` (parallel calls: a
line each). On resume it drops, line by line (`lre`, offset 322803002, from `iKn`), each assistant
line none of whose calls is answered, once the conversation goes on after it; the reply's other
lines are sent, a line of its text too even when none of its calls is answered (observed; its
`dropSiblingBlocks` drops such lines only of an unfinished reply of the last turn), and no "[Tool
result missing ...]" is made up for the calls it dropped. A reply on one line none of whose calls is
answered goes whole, its text too (as before); one line holding an answered call and an unanswered
one is kept, the missing result made up (as before). Before, inspector merged the reply
and made up a result for every call left unanswered, whatever line it was on. Checked against the
real CLI by `tests/peers/claude_code_resume/order_probe.py` (probes "parallel calls on their own
lines, ..."); here without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspector.analysis import analyze
from inspector.analysis.engine import Report
from inspector.formats import load_bytes
from tests.test_claude_code import _jsonl, _line, follow_each_line

MISSING = "[Tool result missing due to internal error]"


def _call(k: int) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"t{k}", "name": "Bash", "input": {"command": f"echo {k}"}}


def _res(k: int) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": f"t{k}", "content": f"out {k}"}


def _reply_lines(*lines: list[dict[str, Any]], parent: str = "p") -> list[dict[str, Any]]:
    """One reply (message.id "m") written a line per content list, each under the one before."""
    out = []
    for k, content in enumerate(lines):
        out.append(_line("assistant", f"a{k}", out[-1]["uuid"] if out else parent, content, mid="m", stop="tool_use"))
    return out


def _transcript(reply: list[dict[str, Any]], *after: tuple[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    objs = [_line("user", "p", None, "question"), *reply]
    for k, (kind, content) in enumerate(after):
        objs.append(_line("user" if kind == "u" else "assistant", f"x{k}", objs[-1]["uuid"], content))
    return objs


def _report(objs: list[dict[str, Any]]) -> Report:
    return analyze(load_bytes(_jsonl(objs), "t.jsonl"))


def _reply_item(rep: Report) -> Any:
    return next(it for it in rep.context if it.record_id == "a0")


def test_a_line_whose_call_is_never_answered_is_left_out_and_no_result_made_up() -> None:
    objs = _transcript(_reply_lines([{"type": "text", "text": "working"}], [_call(1)], [_call(2)]), ("u", [_res(1)]), ("a", [{"type": "text", "text": "done"}]))
    rep = _report(objs)
    assert list(_reply_item(rep).tool_call_ids) == ["t1"] and not _reply_item(rep).unanswered
    assert not [it for it in rep.context if it.synthetic]
    d = [d for d in rep.ledger.diagnostics if d.problem == "skipped_by_runtime"]
    assert len(d) == 1 and "'t2'" in d[0].message and "other lines" in d[0].message


def test_a_line_with_an_answered_call_and_an_unanswered_one_is_kept_and_the_result_made_up() -> None:
    objs = _transcript(_reply_lines([_call(1), _call(2)], [_call(3)]), ("u", [_res(1)]), ("u", [_res(3)]), ("a", [{"type": "text", "text": "done"}]))
    rep = _report(objs)
    assert list(_reply_item(rep).tool_call_ids) == ["t1", "t2", "t3"]
    assert [it.text for it in rep.context if it.synthetic] == [MISSING]


def test_a_reply_on_one_line_keeps_its_unanswered_call_with_a_result_made_up() -> None:
    objs = _transcript(_reply_lines([_call(1), _call(2)]), ("u", [_res(1)]), ("a", [{"type": "text", "text": "done"}]))
    rep = _report(objs)
    assert list(_reply_item(rep).tool_call_ids) == ["t1", "t2"]
    assert [it.text for it in rep.context if it.synthetic] == [MISSING]


def test_a_reply_none_of_whose_calls_is_answered_keeps_its_line_of_text() -> None:
    """Observed (order probe "parallel calls on their own lines, none answered"): the text line is
    sent, the call lines are not."""
    objs = _transcript(_reply_lines([{"type": "text", "text": "working"}], [_call(1)], [_call(2)]), ("u", [{"type": "text", "text": "go on"}]), ("a", [{"type": "text", "text": "ok"}]))
    rep = _report(objs)
    it = _reply_item(rep)
    assert list(it.tool_call_ids) == [] and not rep.ledger.records[it.seq].never_sent
    assert not [x for x in rep.context if x.synthetic]


def test_a_reply_of_call_lines_none_answered_goes_whole() -> None:
    objs = _transcript(_reply_lines([_call(1)], [_call(2)]), ("u", [{"type": "text", "text": "go on"}]), ("a", [{"type": "text", "text": "ok"}]))
    rep = _report(objs)
    assert not [it for it in rep.context if it.record_id == "a0"]
    assert "leaves the whole reply out" in next(d.message for d in rep.ledger.diagnostics if d.problem == "skipped_by_runtime")


def test_a_reply_on_one_line_none_of_whose_calls_is_answered_goes_whole_its_text_too() -> None:
    objs = _transcript(_reply_lines([{"type": "text", "text": "working"}, _call(1)]), ("u", [{"type": "text", "text": "go on"}]), ("a", [{"type": "text", "text": "ok"}]))
    rep = _report(objs)
    assert not [it for it in rep.context if it.record_id == "a0"]


def test_the_calls_the_conversation_ends_on_keep_their_lines() -> None:
    """The reply the conversation ends on: its calls get the "[Tool call interrupted ...]" results
    the resume adds, so every line of it is answered and kept."""
    objs = _transcript(_reply_lines([_call(1)], [_call(2)]))
    rep = _report(objs)
    assert list(_reply_item(rep).tool_call_ids) == ["t1", "t2"]


def test_in_the_turn_the_session_stopped_in_the_line_is_kept() -> None:
    """The session stopped mid-turn (its last message a result): Claude Code answers the call on
    resume instead of leaving its line out (order probe "parallel calls on their own lines, one
    answered, session ends"), as inspector predicts: the call kept, a result made up for it."""
    objs = _transcript(_reply_lines([_call(1)], [_call(2)]), ("u", [_res(1)]))
    rep = _report(objs)
    assert list(_reply_item(rep).tool_call_ids) == ["t1", "t2"]
    assert not [d for d in rep.ledger.diagnostics if d.problem == "skipped_by_runtime"]
    # Its result is a line Claude Code appends last: after the turn's results, in the same message
    # (observed: "L0 L1 L3 miss resume").
    sent = [(it.record_id, it.tool_result_id if it.synthetic else None) for it in rep.context if not it.on_resume]
    assert sent == [("p", None), ("a0", None), ("x0", None), (None, "t2")]
    assert next(it for it in rep.context if it.synthetic and it.role == "tool").text.startswith("[Tool call interrupted")


def test_followed_line_by_line_the_reply_reads_as_the_full_build(tmp_path: Path) -> None:
    """Live, results arrive one by one: after the first, the reply's other call line is left out
    (were Claude Code resumed then), and sent again once its result comes."""
    objs = _transcript(
        _reply_lines([{"type": "text", "text": "working"}], [_call(1)], [_call(2)], [_call(3)]),
        ("u", [_res(1)]), ("u", [_res(3)]), ("u", [_res(2)]), ("a", [{"type": "text", "text": "done"}]),
    )
    assert follow_each_line(tmp_path, objs, "parallel")
    objs2 = _transcript(_reply_lines([_call(1)], [_call(2)]), ("u", [_res(1)]), ("a", [_call(4)]), ("u", [_res(4)]), ("a", [{"type": "text", "text": "done"}]))
    assert follow_each_line(tmp_path, objs2, "parallel, one never answered, the turn done")
    objs3 = _transcript(_reply_lines([_call(1)], [_call(2)]), ("u", [_res(1)]), ("u", [{"type": "text", "text": "next"}]), ("a", [{"type": "text", "text": "ok"}]))
    assert follow_each_line(tmp_path, objs3, "parallel, one never answered, a new prompt")
