"""The order of what Claude Code sends inside one joined user message, and the results it removes.

Claude Code 2.1.328 joins consecutive user lines into one API message with its tool results first
(`NU` / `fXo`, offsets 322793647 / 322796584), then `Pqi` (`ensureToolResultPairing`, offset
322914102) puts the "[Tool result missing ...]" results it makes up ahead of them and removes every
result whose call the reply right before the message does not make, a second result for one call
too; a message left with nothing is sent as "(no content)", or as its own placeholder when it opens
the request. `context --json` predicts the items in that order (a line holding a result and text is
an item where its result is). Checked against the real CLI by
`tests/peers/claude_code_resume/order_probe.py` (21 of its probes; before, 18 differed); here without it.
Before, inspector sent the items in line order, its synthetic results last, and such results as
orphans.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.analysis.engine import Report
from inspector.formats import load, load_bytes
from tests.test_claude_code import _boundary, _jsonl, _line, _summary, follow_each_line

MISSING = "[Tool result missing due to internal error]"


def _call(k: int) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"t{k}", "name": "Bash", "input": {"command": f"echo {k}"}}


def _res(k: int | str, text: str = "out") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": k if isinstance(k, str) else f"t{k}", "content": text}


def _text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def _turn(*steps: tuple[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """A prompt, then each step (("a" | "u", content), the next one's parent the one before), then a closing reply."""
    out = [_line("user", "p", None, "question")]
    for k, (kind, content) in enumerate((*steps, ("a", [_text("done")]))):
        uid = f"{kind}{k}"
        extra = {"stop": "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"} if kind == "a" else {}
        out.append(_line("assistant" if kind == "a" else "user", uid, out[-1]["uuid"], content, **extra))
    return out


def _report(objs: list[dict[str, Any]]) -> Report:
    return analyze(load_bytes(_jsonl(objs), "joined.jsonl"))


def _sent(rep: Report) -> list[str]:
    """The items: a record by its id, a made-up result by its text's head, the reply on resume apart."""
    return [it.text[:12] if it.synthetic else str(it.record_id) for it in rep.context if not it.on_resume]


def _state(rep: Report, rid: str) -> str:
    return rep.states[next(r.seq for r in rep.ledger.records if r.id == rid)]


# (steps, the items sent after the prompt, in order; the results' lines left out)
CASES: dict[str, tuple[tuple[tuple[str, list[dict[str, Any]]], ...], list[str]]] = {
    "text then result": ((("a", [_call(1)]), ("u", [_text("typed")]), ("u", [_res(1)])), ["a0", "u2", "u1", "a3"]),
    "result then text": ((("a", [_call(1)]), ("u", [_res(1)]), ("u", [_text("typed")])), ["a0", "u1", "u2", "a3"]),
    "two results, text between": (
        (("a", [_call(1), _call(2)]), ("u", [_res(1)]), ("u", [_text("typed")]), ("u", [_res(2)])),
        ["a0", "u1", "u3", "u2", "a4"],
    ),
    "text, then a line with text and result": (
        (("a", [_call(1)]), ("u", [_text("typed")]), ("u", [_text("mixed"), _res(1)])),
        ["a0", "u2", "u1", "a3"],
    ),
    "text, image, result": (
        (("a", [_call(1)]), ("u", [_text("typed")]), ("u", [{"type": "image", "source": {}}]), ("u", [_res(1)])),
        ["a0", "u3", "u1", "u2", "a4"],
    ),
    "missing result, text before": (
        (("a", [_call(1), _call(2)]), ("u", [_text("typed")]), ("u", [_res(1)])),
        ["a0", MISSING[:12], "u2", "u1", "a3"],
    ),
    "missing result, no user line": ((("a", [_call(1), _call(2)]), ("u", [_res(1)]), ("a", [_call(3)]), ("u", [_res(3)])), ["a0", MISSING[:12], "u1", "a2", "u3", "a4"]),
    "result answering no call, own line": ((("a", [_call(1)]), ("u", [_res(1)]), ("u", [_res("nowhere")])), ["a0", "u1", "a3"]),
    "result answering no call, beside text": (
        (("a", [_call(1)]), ("u", [_res(1)]), ("u", [_text("typed"), _res("nowhere")])),
        ["a0", "u1", "u2", "a3"],
    ),
    "result twice": ((("a", [_call(1)]), ("u", [_res(1)]), ("u", [_res(1, "again")])), ["a0", "u1", "a3"]),
    "result of an earlier reply, text beside": (
        (("a", [_call(1)]), ("a", [_text("between")]), ("u", [_text("typed")]), ("u", [_res(1)])),
        ["a0", MISSING[:12], "a1", "u2", "a4"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_joined_user_message_is_sent_results_first_without_the_results_it_removes(case: str) -> None:
    steps, want = CASES[case]
    rep = _report(_turn(*steps))
    assert _sent(rep)[1:] == want, case
    assert not any(it.orphan for it in rep.context)
    assert not [f for f in rep.findings if f.code == "orphan_tool_result"]
    # A line left with nothing is not sent: excluded, not live.
    sent = {it.record_id for it in rep.context}
    for r in rep.ledger.records:
        if r.kind == "message" and r.id not in sent and r.id != "p":
            assert _state(rep, r.id) == "excluded", (case, r.id)


def test_a_line_some_of_whose_results_are_removed_says_so_and_is_sent_as_the_rest() -> None:
    rep = _report(_turn(("a", [_call(1)]), ("u", [_res(1)]), ("u", [_text("typed"), _res("nowhere")])))
    it = next(it for it in rep.context if it.record_id == "u2")
    assert (it.role, it.tool_result_id, it.orphan) == ("user", None, False)
    assert it.note is not None and "removes its result for nowhere" in it.note
    assert _state(rep, "u2") == "live"


def test_a_message_left_with_nothing_is_sent_as_no_content() -> None:
    """The result answers the call of a reply before the one right before it: removed, the message
    it was alone in sent as "(no content)" in its place (observed: the order probe)."""
    rep = _report(_turn(("a", [_call(1)]), ("a", [_text("between")]), ("u", [_res(1)])))
    assert _sent(rep)[1:] == ["a0", MISSING[:12], "a1", "u2", "a3"]
    it = next(it for it in rep.context if it.record_id == "u2")
    assert (it.role, it.text) == ("user", "(no content)") and "in place of a user message" in str(it.note)
    assert _state(rep, "u2") == "live"


def test_a_request_opening_with_results_only_sends_the_placeholder() -> None:
    objs = [_line("user", "r", None, [_res("nowhere")]), _line("user", "r2", "r", [_res("elsewhere")]), _line("assistant", "a", "r2", [_text("ok")])]
    rep = _report(objs)
    assert [(it.record_id, it.text) for it in rep.context] == [
        ("r", "[Orphaned tool result removed due to conversation resume]"), ("a", ""),
    ]
    assert (_state(rep, "r"), _state(rep, "r2")) == ("live", "excluded")


@pytest.mark.parametrize("prompt", [True, False])
def test_a_result_after_the_summary_with_no_reply_before_it_is_removed(prompt: bool) -> None:
    """The summary opens the first message: a result kept after it (no reply before it) is removed
    and the summary sent without it, no placeholder (the real CLI: the golden bad-input seed's
    preserved result)."""
    objs = [
        _line("user", "u1", None, "read a.py"),
        _line("assistant", "a1", "u1", [_call(1)], stop="tool_use"),
        _line("user", "r1", "a1", [_res(1)]),
        _boundary("b", "r1", preservedSegment={"headUuid": "r1", "tailUuid": "r1"}),
        _summary("s", "b"),
        *([_line("user", "u2", "s", "and b.py")] if prompt else []),
        _line("assistant", "a2", "u2" if prompt else "s", [_text("ok")]),
    ]
    rep = _report(objs)
    assert [it.record_id for it in rep.context] == ["b", *(["u2"] if prompt else []), "a2"]
    assert _state(rep, "r1") == "excluded" and rep.context[0].text.startswith("Summary")


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_followed_joined_message_is_what_a_fresh_analysis_says(tmp_path: Path, case: str) -> None:
    """The live follower, one line at a time (the message is built again from its reply on each
    append: a result after a user's text goes ahead of it, and may be removed or answer a call)."""
    assert follow_each_line(tmp_path, _turn(*CASES[case][0]), case)


def test_a_followed_line_under_a_line_moved_before_the_boundary_reads_as_the_full_build(tmp_path: Path) -> None:
    """The real /compact transcript with the attachment line its next prompt hangs under moved up
    before the compact boundary (`tests.fuzz_live --seed 481 --kinds claude_code`, case 277, a
    `reorder_lines` mutation): Claude Code deletes that line once it reads the boundary (`w_r`) and
    the prompt continues from the line written last before it (`dangling_parent`). The follower,
    growing the file up to that prompt, walked through the deleted line as if it were held."""
    from inspector.live.incremental import Follower
    from tests.conftest import SHARED, need_shared
    from tests.test_incremental_stores import as_json

    lines = need_shared(SHARED / "peers/claude_code/corpus/manual_compact.jsonl").read_bytes().splitlines(keepends=True)
    moved = next(k for k, line in enumerate(lines) if b'"uuid":"78ea5cda-2c5f-45b6-802c-29e3fc199769"' in line)
    boundary = next(k for k, line in enumerate(lines) if b'"compact_boundary"' in line)
    lines.insert(boundary, lines.pop(moved))
    prompt = next(k for k, line in enumerate(lines) if line.startswith(b'{"parentUuid":"78ea5cda'))
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(lines[:prompt]))
    fol = Follower(str(path))
    fol.poll()
    with path.open("ab") as f:
        f.write(lines[prompt])
    up = fol.poll()
    full = analyze(load(str(path)))
    assert "dangling_parent" in [d.problem for d in full.ledger.diagnostics]
    assert up is not None
    assert as_json(fol.report) == as_json(full)
