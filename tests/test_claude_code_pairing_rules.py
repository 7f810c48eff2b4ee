"""Rules of Claude Code's request building that inspector did not follow, each observed with the
real CLI (`tests/peers/claude_code_resume/order_probe.py`: before, 10 of its probes differed; now
none of 45; `type_probe.py`: "reply call id a number", now all 74).

A call whose id an earlier call of the request already has (a reply repeating a call id, a reply
holding one id twice): `Pqi` (`ensureToolResultPairing`, offset 322914102) removes it as it goes,
sends "[Tool use interrupted]" for a reply left with no block, and then removes the call's result
too (no call of the reply before it makes it): a message left with nothing is sent as "(no
content)". inspector sent the repeated call and its result.

A line of calls none of which is answered, followed by a reply without calls (an API error's reply,
any other) that ends the session: the turn is done, so `lre` leaves the line out on resume, as it
does when the conversation goes on; no "[Tool call interrupted ...]" result is made up for it.
inspector kept it with such a result, as for a session that stopped inside its turn.

A synthetic API error (`isApiErrorMessage`, model "<synthetic>"): Claude Code takes it out before it
joins and pairs the lines (`Ff`, `dV`), so one between a reply's calls and their results splits
nothing; and a conversation that ends on one gets no "No response requested." on resume (the resume
judges the turn by the lines it loaded: it ended on a reply). inspector let it end the calls before
it (made-up results, the later results removed) and appended that reply.

A call id that is a number: Claude Code counts any value as a call's id and a result answers it by
the same value (`===`), so a reply whose only call has the id 5 goes unanswered and is left out
(type probe "reply call id a number"); inspector removed the id (a wrong type) and sent the reply.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspector.analysis import analyze
from inspector.analysis.engine import Report
from inspector.formats import load_bytes
from tests.test_claude_code import _jsonl, _line, follow_each_line

INTERRUPTED = "[Tool use interrupted]"


def _call(k: int) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"t{k}", "name": "Bash", "input": {"command": f"echo {k}"}}


def _res(k: int, text: str = "") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": f"t{k}", "content": text or f"out {k}"}


def _text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def _chain(*steps: tuple[str, list[dict[str, Any]]], **kw: Any) -> list[dict[str, Any]]:
    """A prompt, then each step ("u": a user line, "a": a reply, "E": an API error's reply, "S": a
    synthetic one, model "<synthetic>") under the one before."""
    objs = [_line("user", "p", None, "question")]
    for k, (kind, content) in enumerate(steps):
        extra: dict[str, Any] = {"isApiErrorMessage": True} if kind in "ES" else {}
        if kind != "u":
            extra["stop"] = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        objs.append(_line("user" if kind == "u" else "assistant", f"x{k}", objs[-1]["uuid"], content, **extra))
        if kind == "S":
            objs[-1]["message"]["model"] = "<synthetic>"
    return objs


def _report(objs: list[dict[str, Any]]) -> Report:
    return analyze(load_bytes(_jsonl(objs), "t.jsonl"))


def _item(rep: Report, rid: str) -> Any:
    return next(it for it in rep.context if it.record_id == rid)


def test_a_reply_repeating_an_earlier_call_id_is_sent_without_it_and_its_result_removed() -> None:
    """Order probe "a call id reused by a later reply": the second reply is sent as "[Tool use
    interrupted]", the second result's message as "(no content)"."""
    rep = _report(_chain(("a", [_call(1)]), ("u", [_res(1)]), ("a", [_call(1)]), ("u", [_res(1, "second")]), ("a", [_text("done")])))
    again = _item(rep, "x2")
    assert again.text == INTERRUPTED and list(again.tool_call_ids) == [] and "'t1'" not in (again.note or "") and "t1" in (again.note or "")
    assert _item(rep, "x3").text == "(no content)" and list(_item(rep, "x3").removed_results) == ["t1"]
    assert [it.record_id for it in rep.context if not it.on_resume] == ["p", "x0", "x1", "x2", "x3", "x4"]
    assert not [it for it in rep.context if it.synthetic or it.orphan or it.unanswered]
    # The model never reads the second output: said, as for any result the runtime removes.
    assert [f.data["calls"] for f in rep.findings if f.code == "dropped_tool_result"] == [["t1"]]


def test_a_repeated_call_left_unanswered_gets_no_result_made_up() -> None:
    """Order probe "a call id reused, the second unanswered": the call is removed, so nothing answers it."""
    rep = _report(_chain(("a", [_call(1)]), ("u", [_res(1)]), ("a", [_call(1)]), ("u", [_text("typed")]), ("a", [_text("done")])))
    assert _item(rep, "x2").text == INTERRUPTED
    assert not [it for it in rep.context if it.synthetic or it.unanswered]


def test_a_repeated_call_beside_text_leaves_the_text() -> None:
    """Order probe "a call id reused beside text": the reply is sent (its text), its call is not."""
    rep = _report(_chain(("a", [_call(1)]), ("u", [_res(1)]), ("a", [_text("again"), _call(1)]), ("u", [_res(1, "second")]), ("a", [_text("done")])))
    again = _item(rep, "x2")
    assert again.text == "" and list(again.tool_call_ids) == []
    assert _item(rep, "x3").text == "(no content)"


def test_a_call_id_twice_in_one_reply_is_sent_once() -> None:
    """Order probe "a call id twice in one reply": the second block goes, the first is answered."""
    rep = _report(_chain(("a", [_call(1), _call(1)]), ("u", [_res(1)]), ("a", [_text("done")])))
    item = _item(rep, "x0")
    assert list(item.tool_call_ids) == ["t1"] and item.text == "" and item.note
    assert not [it for it in rep.context if it.synthetic or it.unanswered or it.removed_results]


def test_an_unanswered_call_before_an_api_error_that_ends_the_session_is_left_out() -> None:
    """Order probe "an API error after an unanswered call, session ends": the call's line is not
    sent, no "[Tool call interrupted ...]" result made up; the error's reply is sent."""
    rep = _report(_chain(("a", [_call(1)]), ("E", [_text("API Error: 500 overloaded")])))
    assert [it.record_id for it in rep.context if not it.on_resume] == ["p", "x1"]
    assert not [it for it in rep.context if it.synthetic]
    assert rep.ledger.records[next(r.seq for r in rep.ledger.records if r.id == "x0")].never_sent


def test_any_reply_without_calls_ends_the_turn_as_an_api_error_does() -> None:
    """Order probes "a reply after an unanswered call, session ends", "a later call unanswered,
    then an API error, session ends"; answered in part, the line stays (its missing result made up)."""
    rep = _report(_chain(("a", [_call(1)]), ("a", [_text("later reply")])))
    assert [it.record_id for it in rep.context if not it.on_resume] == ["p", "x1"]
    rep = _report(_chain(("a", [_call(1)]), ("u", [_res(1)]), ("a", [_call(2)]), ("E", [_text("API Error")])))
    assert [it.record_id for it in rep.context if not it.on_resume] == ["p", "x0", "x1", "x3"]
    rep = _report(_chain(("a", [_call(1), _call(2)]), ("u", [_res(1)]), ("E", [_text("API Error")])))
    assert [it.tool_result_id for it in rep.context if it.synthetic] == ["t2"]
    assert [it.text for it in rep.context if it.synthetic] == ["[Tool result missing due to internal error]"]


def test_only_the_calls_after_the_last_reply_without_calls_are_answered_on_resume() -> None:
    """Order probe "an API error between two unanswered calls, session ends": the first call's line
    is left out, the second (the reply the session ends on) answered with "[Tool call interrupted ...]"."""
    rep = _report(_chain(("a", [_call(1)]), ("E", [_text("API Error: 500 overloaded")]), ("a", [_call(2)])))
    assert [it.record_id for it in rep.context if not it.on_resume and not it.synthetic] == ["p", "x1", "x2"]
    assert [(it.tool_result_id, it.text[:22]) for it in rep.context if it.synthetic and it.role == "tool"] == [("t2", "[Tool call interrupted")]


def test_a_session_ending_on_the_call_still_keeps_it() -> None:
    """The other side of the turn rule: the reply the session ends on makes the call, so Claude Code
    answers it on resume ("[Tool call interrupted ...]"), as before."""
    rep = _report(_chain(("a", [_text("thinking")]), ("a", [_call(1)])))
    assert [it.record_id for it in rep.context if not it.on_resume and not it.synthetic][-1] == "x1"
    assert [it.text[:22] for it in rep.context if it.synthetic and it.role == "tool"] == ["[Tool call interrupted"]


def test_followed_line_by_line_both_rules_read_as_the_full_build(tmp_path: Path) -> None:
    """Live: the call kept (answered on resume) while the session ends on it, left out once a reply
    without calls ends the turn; a repeated call removed as it is appended."""
    objs = _chain(("a", [_call(1)]), ("E", [_text("API Error: 500")]), ("u", [_text("again")]), ("a", [_call(2)]), ("u", [_res(2)]),
                  ("a", [_call(2)]), ("u", [_res(2, "second")]), ("a", [_text("done")]))  # fmt: skip
    follow_each_line(tmp_path, objs, "API error, then a repeated call")
    objs = _chain(("a", [_call(1)]), ("E", [_text("API Error: 500")]), ("a", [_call(2)]), ("a", [_text("later")]), ("u", [_text("go")]),
                  ("a", [_call(3)]), ("a", [_call(4)]), ("E", [_text("API Error: 529")]), ("a", [_call(5)]))  # fmt: skip
    follow_each_line(tmp_path, objs, "replies without calls between unanswered calls")


def _numbered(call_id: Any, result_id: Any) -> list[dict[str, Any]]:
    call = {**_call(1), "id": call_id}
    return _chain(("a", [_text("working"), call]), ("u", [{**_res(1), "tool_use_id": result_id}]), ("a", [_text("done")]))


def test_a_call_id_that_is_a_number_is_a_call_no_string_id_answers() -> None:
    """Type probe "reply call id a number": unanswered, the conversation going on, the reply is left out."""
    rep = _report(_chain(("a", [_text("working"), {**_call(1), "id": 5}]), ("u", [_text("go on")]), ("a", [_text("ok")])))
    assert "x0" not in [it.record_id for it in rep.context]
    assert any("'5 (a number)'" in d.message for d in rep.ledger.diagnostics if d.problem == "skipped_by_runtime")
    rep = _report(_numbered(5, "5"))  # (=== tells the number from the string: the reply left out, its result removed)
    assert "x0" not in [it.record_id for it in rep.context] and not [it for it in rep.context if it.synthetic and it.role == "tool"]
    assert [f.data["calls"] for f in rep.findings if f.code == "dropped_tool_result"] == [["5"]]


def test_a_result_answers_a_numbered_call_by_the_same_number() -> None:
    for call_id, result_id in ((5, 5), (5, 5.0), (2.5, 2.5)):
        rep = _report(_numbered(call_id, result_id))
        assert len(_item(rep, "x0").tool_call_ids) == 1 and _item(rep, "x1").tool_result_id == _item(rep, "x0").tool_call_ids[0]
        assert not [it for it in rep.context if it.synthetic and it.role == "tool"]
        assert not [f for f in rep.findings if f.code in ("dropped_tool_result", "unanswered_tool_call")]


def _sent(rep: Report) -> list[str | None]:
    return [it.record_id if not it.synthetic else ("resume" if it.on_resume else f"made up for {it.tool_result_id}") for it in rep.context]


def test_a_synthetic_api_error_between_calls_and_results_splits_nothing() -> None:
    """Order probes "a synthetic API error between a call and its result", "... between two results"."""
    rep = _report(_chain(("a", [_call(1)]), ("S", [_text("API Error: 500")]), ("u", [_res(1)]), ("a", [_text("done")])))
    assert _sent(rep) == ["p", "x0", "x2", "x3"] and not rep.ledger.records[_item(rep, "x2").seq].never_sent
    assert not [f for f in rep.findings if f.code == "dropped_tool_result"]
    rep = _report(_chain(("a", [_call(1), _call(2)]), ("u", [_res(1)]), ("S", [_text("API Error: 500")]), ("u", [_res(2)]), ("a", [_text("done")])))
    assert _sent(rep) == ["p", "x0", "x1", "x3", "x4"] and [_item(rep, x).tool_result_id for x in ("x1", "x3")] == ["t1", "t2"]


def test_a_session_ending_on_a_synthetic_api_error_gets_no_reply_on_resume() -> None:
    """Order probes "a synthetic API error answering the prompt, session ends", "... after an
    unanswered call, session ends": nothing after the prompt (the call's line left out too)."""
    assert _sent(_report(_chain(("S", [_text("API Error: 500")])))) == ["p"]
    assert _sent(_report(_chain(("a", [_call(1)]), ("S", [_text("API Error: 500")])))) == ["p"]
    # (an API error naming a real model is sent as a reply: nothing appended either)
    assert _sent(_report(_chain(("E", [_text("API Error: 500")])))) == ["p", "x0"]
    # (the reply is appended where the conversation ends on the prompt itself)
    assert _sent(_report(_chain(("u", [_text("more")])))) == ["p", "x0", "resume"]


def test_followed_line_by_line_a_synthetic_api_error_reads_as_the_full_build(tmp_path: Path) -> None:
    objs = _chain(("a", [_call(1), _call(2)]), ("u", [_res(1)]), ("S", [_text("API Error: 500")]), ("u", [_res(2)]), ("a", [_call(3)]),
                  ("S", [_text("API Error: 529")]), ("u", [_text("again")]), ("S", [_text("API Error: 500")]))  # fmt: skip
    follow_each_line(tmp_path, objs, "synthetic API errors")


def test_a_reply_whose_text_line_comes_before_its_call_line_ends_the_turn_before_it(tmp_path: Path) -> None:
    """Claude Code's rule is line by line: the reply's text line, making no call, ends the turn of
    the unanswered call before it (left out), though the reply goes on with a call (answered on
    resume). Order probe "a call, then a reply's text and call lines, session ends"; followed line
    by line as the full build (fuzz_live seed 651 case 255)."""
    objs = [
        _line("user", "p", None, "question"),
        _line("assistant", "x0", "p", [_call(1)], stop="tool_use"),
        _line("assistant", "x1", "x0", [_text("then")], mid="m1", stop=None),
        _line("assistant", "x2", "x1", [_call(2)], mid="m1", stop="tool_use"),
    ]
    follow_each_line(tmp_path, objs, "a reply's call line after its text line")
    rep = _report(objs)
    assert [it.record_id for it in rep.context if not it.synthetic] == ["p", "x1"]
    assert [(it.tool_result_id, it.text[:22]) for it in rep.context if it.synthetic and it.role == "tool"] == [("t2", "[Tool call interrupted")]


def test_the_walk_back_to_the_turn_s_prompt_stops_where_the_links_go_round() -> None:
    """The follower's walk back to the turn's prompt, on two replies naming each other as parent
    (as ids a later line reuses make them, by_id reading the later: fuzz_live seed 661 case 186, a
    progress line reusing a reply's uuid): None (the follower then builds whole), not a list
    growing until the machine ran out of memory."""
    from inspector.formats.claude_code import _turn_path

    led = load_bytes(_jsonl([_line("assistant", "a", "b", [_text("one")]), _line("assistant", "b", "a", [_text("two")])]), "t.jsonl")
    led.records[0].parent_id = "b"  # (the loader breaks such a loop; ids a later line reuses make one, as by_id reads them)
    led.leaf_seq = len(led.records) - 1
    assert _turn_path(led, led.records) is None


def _copied_reply(copy_says: str) -> list[dict[str, Any]]:
    """A reply and its result written twice under the prompt (the second time a copy, its result
    saying `copy_says`), the conversation going on from the copy: Claude Code recovers the reply's
    first line off the chain (`O_r`) with its result, and removes the copy's result (no call of the
    reply before it is unanswered; the chain line stands for the reply). Seen in a real transcript (Crazytieguy/alignment-hive,
    6f2580aa-....jsonl, Claude Code 2.0.76: lines 101-104 written again as 4035-4040)."""
    p = _line("user", "p", None, "question")
    a1 = _line("assistant", "a1", "p", [_call(1)], mid="m1", stop="tool_use")
    r1 = _line("user", "r1", "a1", [_res(1, "clean")])
    a2 = _line("assistant", "a2", "p", [_call(1)], mid="m1", stop="tool_use")
    r2 = _line("user", "r2", "a2", [_res(1, copy_says)])
    return [p, a1, r1, a2, r2, _line("user", "u2", "r2", "go on")]


def test_a_result_removed_as_a_copy_of_one_sent_for_the_same_call_loses_nothing() -> None:
    """The real CLI sends the first line and its result and removes the copy's (resumed: the request
    as predicted, for the real transcript and for both cases here). When the copy says what the
    result sent says, the model reads that output: no `dropped_tool_result` (it was a warning, "The
    model never reads that output", twice on that real file). When it says something else, it is."""
    rep = _report(_copied_reply("clean"))
    assert [it.record_id for it in rep.context if not it.on_resume] == ["p", "a2", "r1", "u2"]
    assert rep.dropped_results == [4]
    assert not [f for f in rep.findings if f.code == "dropped_tool_result"]
    rep = _report(_copied_reply("changed since"))
    assert [it.record_id for it in rep.context if not it.on_resume] == ["p", "a2", "r1", "u2"]
    assert [f.data["calls"] for f in rep.findings if f.code == "dropped_tool_result"] == [["t1"]]
