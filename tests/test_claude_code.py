"""Claude Code transcripts (issue 6): every line type, the parentUuid tree across compact
boundaries, replies merged by message.id, and the next request checked against what the real
Claude Code 2.1.328 sent (`../shared/peers/claude_code/`)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.analysis.engine import Report
from inspector.formats import load, load_bytes, registry
from tests.conftest import REPO, SHARED, app_reaches, need_shared

REAL = SHARED / "real_sessions" / "claude_code"
PEERS = SHARED / "peers" / "claude_code" / "corpus"
SESSIONS: list[Any] = sorted(p.name.removesuffix(".requests.jsonl") for p in PEERS.glob("*.requests.jsonl")) if PEERS.exists() else []
# Without ../shared the peer tests still run, once, and fail naming the missing folder.
PEER_CASES = SESSIONS or [""]


def _need(path: Path) -> None:
    need_shared(path)


# ------------------------------------------------------------------------------------------ real files


def _raw_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _blocks_as_written(path: Path) -> Counter[str]:
    c: Counter[str] = Counter()
    for o in _raw_lines(path):
        m = o.get("message")
        if isinstance(m, dict) and isinstance(m.get("content"), list):
            c.update(b.get("type") for b in m["content"] if isinstance(b, dict))
    return c


# From SOURCES.md: lines, line types (system lines by subtype), content blocks.
EXPECTED: dict[str, dict[str, Any]] = {
    "spotter__8463c716__agent-acompact-f46190.jsonl": {
        "lines": 7,
        "types": {"user": 6, "assistant": 1},
        "blocks": {"text": 1},
        "meta": 5,
        "compactions": 0,
    },
    "spotter__subagent.jsonl": {
        "lines": 96,
        "types": {"progress": 44, "assistant": 28, "user": 20, "file-history-snapshot": 3, "system:stop_hook_summary": 1},
        "blocks": {"tool_use": 16, "tool_result": 16, "text": 10, "thinking": 4},
        "meta": 1,
        "compactions": 0,
    },
    "spotter__tool_heavy.jsonl": {
        "lines": 39,
        "types": {"user": 13, "progress": 10, "assistant": 9, "file-history-snapshot": 3, "queue-operation": 2, "system:local_command": 2},
        "blocks": {"tool_use": 6, "tool_result": 6, "text": 4, "thinking": 1},
        "meta": 1,
        "compactions": 0,
    },
    "agent-sessions__claude_small.jsonl": {
        "lines": 89,
        "types": {
            "attachment": 38, "user": 10, "assistant": 10,
            "system:api_error": 4, "system:compact_boundary": 2, "system:session_start": 1, "system:stop_hook_summary": 1,
            "system:api_refusal": 1, "system:error": 1, "system:turn_duration": 1, "system:model_refusal_fallback": 1,
            "worktree-state": 2, "summary": 1, "progress": 1, "queue-operation": 1, "file-history-snapshot": 1,
            "agent-name": 1, "custom-title": 1, "ai-title": 1, "last-prompt": 1, "permission-mode": 1, "mode": 1,
            "frame-link": 1, "pr-link": 1, "started": 1, "result": 1, "relocated": 1, "bridge-session": 1, "atis-latch": 1,
        },
        "blocks": {"text": 9, "thinking": 6, "tool_use": 3, "tool_result": 3, "image": 1, "fallback": 1},
        "compactions": 2,
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_file_loads_with_the_counts_sources_states(name: str) -> None:
    path = REAL / name
    _need(path)
    exp = EXPECTED[name]
    led = load(str(path))
    assert led.format == "claude_code"
    assert len(led.records) == exp["lines"] and max(r.line for r in led.records) == exp["lines"]
    assert Counter(r.type for r in led.records) == exp["types"]
    # Our blocks (replies merged across their lines, summaries folded into checkpoints) are the
    # blocks as written, each once.
    assert _blocks_as_written(path) == exp["blocks"]
    ours: Counter[str] = Counter()
    for r in led.records:
        if r.message is not None:
            ours.update({"tool_call": "tool_use"}.get(b.type, b.type) if b.type != "other" else b.raw.get("type") for b in r.message.blocks)
    for t in ("tool_use", "tool_result", "thinking", "image", "fallback"):
        assert ours[t] == exp["blocks"].get(t, 0), t
    assert len([r for r in led.records if r.kind == "checkpoint"]) == exp["compactions"]
    if "meta" in exp:
        assert sum(1 for r in led.records if (r.extra or {}).get("isMeta") is True and r.type == "user") == exp["meta"]
    report = analyze(led)  # and the analysis runs on it
    assert report.findings is not None


def test_replies_written_block_by_block_are_one_message_with_usage_once() -> None:
    path = REAL / "spotter__subagent.jsonl"
    _need(path)
    report = analyze(load(str(path)))
    led = report.ledger
    # Lines 6-12 are one reply (message.id ...3xEieBJx): text, thinking, text, four tool calls;
    # its first text is "\n\n", which Claude Code drops as it merges the lines (`Rzi`): the real
    # CLI resuming this file sent thinking, text, the four calls.
    first = next(r for r in led.records if r.line == 6)
    assert first.kind == "message" and first.extra["merged_lines"] == [6, 7, 8, 9, 10, 11, 12]
    m = first.message
    assert [b.type for b in m.blocks] == ["thinking", "text"] + ["tool_call"] * 4
    assert all(led.records[s].kind == "meta" and led.records[s].extra["merged_into_line"] == 6 for s in range(6, 12))
    raw = _raw_lines(path)[5]["message"]["usage"]
    assert m.usage.input == raw["input_tokens"] and m.usage.cache_read == raw["cache_read_input_tokens"]
    # Each API reply is one item of the next request; all 16 calls are answered in it.
    calls = [c for it in report.context for c in it.tool_call_ids]
    answered = [it.tool_result_id for it in report.context if it.role == "tool"]
    assert len(calls) == 16 and sorted(calls) == sorted(answered)
    assert not [f for f in report.findings if f.code in ("orphan_tool_result", "unanswered_tool_call")]


def test_parallel_results_off_the_parent_chain_are_still_sent() -> None:
    """spotter__subagent lines 77-86: two calls of one reply; the next reply hangs off the second
    result (line 86), so the first result (line 82) is not on the parentUuid chain, yet it is sent."""
    path = REAL / "spotter__subagent.jsonl"
    _need(path)
    report = analyze(load(str(path)))
    lines = [it.line for it in report.context]
    assert lines.index(77) < lines.index(82) < lines.index(86) < lines.index(87)
    rec82 = next(r for r in report.ledger.records if r.line == 82)
    assert report.states[rec82.seq] == "live"
    assert rec82.extra["parentUuid"] == _raw_lines(path)[81]["parentUuid"]  # as written, kept


def _without_message_ids(path: Path) -> bytes:
    """The transcript as another tool re-extracts it: assistant lines without `message.id`."""
    objs = _raw_lines(path)
    for o in objs:
        if o.get("type") == "assistant" and isinstance(o.get("message"), dict):
            o["message"].pop("id", None)
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


def test_a_transcript_without_message_ids_is_read_as_claude_code_resumes_it() -> None:
    """spotter__subagent with message.id stripped (its lines keep their requestId). Claude Code
    2.1.328 reads each id-less reply as one of the missing id, `undefined` (`claude_code._undefined_id`):
    it recovers no parallel line or result off the chain for it (`O_r`), and merges each into the
    latest before it across tool results (`_merge_undefined_ids`); a line of thinking only goes.
    Checked against the real CLI resuming this file: the same records, in the same order, but for
    one call cut off mid-turn (docs/runtimes/claude_code.md, not mirrored)."""
    path = REAL / "spotter__subagent.jsonl"
    _need(path)
    report = analyze(load_bytes(_without_message_ids(path), "noid.jsonl"))
    line = {r.seq: r.line for r in report.ledger.records}
    first = next(r for r in report.ledger.records if r.line == 6)
    assert first.extra["merged_lines"] == [6, 8, 9, 10, 18, 19, 22, 24, 28, 29, 32, 33, 35, 36, 57, 58, 67, 72, 77, 81, 87, 92]
    sent = [line[it.seq] for it in report.context if it.seq is not None]
    assert sent == [4, 5, 6, 16, 21, 23, 26, 30, 34, 56, 66, 68, 76, 86, 91, 69, 71]
    # The parallel call lines 11 and 12 and the results 13-15 hang off the chain: never sent.
    states = {line[s]: st for s, st in enumerate(report.states)}
    assert [states[x] for x in (11, 12, 13, 14, 15)] == ["inactive"] * 5
    assert states[7] == "excluded"  # (thinking only)


def test_the_replies_without_message_ids_of_a_tool_heavy_session_are_what_claude_code_sends() -> None:
    """spotter__tool_heavy with message.id stripped: the request the real CLI built on resuming it
    (recorded), record for record: the replies on the chain merged into the one at line 5, the
    results, the prompts after them, and the reply Claude Code appends on resume."""
    path = REAL / "spotter__tool_heavy.jsonl"
    _need(path)
    report = analyze(load_bytes(_without_message_ids(path), "noid.jsonl"))
    line = {r.seq: r.line for r in report.ledger.records}
    sent = [line[it.seq] for it in report.context if it.seq is not None]
    assert sent == [4, 5, 11, 17, 33, 36, 38, 18, 20, 21, 22, 23, 24, 26, 39]
    assert report.context[-1].on_resume
    assert report.ledger.records[next(s for s, x in line.items() if x == 5)].extra["merged_lines"] == [5, 12, 13, 27, 29, 34, 37]


def _calls_without_ids(request_ids: bool) -> list[dict[str, Any]]:
    """Two calls on consecutive assistant lines without a message.id, their results on
    consecutive user lines in the other order, then an answer, every line chained onto the one before."""
    calls = [{"type": "tool_use", "id": f"t{k}", "name": "Read", "input": {"file_path": f"f{k}"}} for k in (1, 2)]
    objs = [
        _line("user", "u1", None, "read both"),
        _line("assistant", "a1", "u1", [calls[0]], stop="tool_use"),
        _line("assistant", "a2", "a1", [calls[1]], stop="tool_use"),
        _line("user", "r2", "a2", [{"type": "tool_result", "tool_use_id": "t2", "content": "body 2"}]),
        _line("user", "r1", "r2", [{"type": "tool_result", "tool_use_id": "t1", "content": "body 1"}]),
        _line("assistant", "a3", "r1", [{"type": "text", "text": "done"}]),
    ]
    for o in objs:
        if o["type"] == "assistant":
            del o["message"]["id"]
            if request_ids:
                o["requestId"] = f"req-{o['uuid']}"
    return objs


def test_replies_without_message_ids_are_one_reply_to_claude_code() -> None:
    """Lines without a message.id but with a requestId (as Claude Code writes them): to Claude
    Code the missing id is one id, and it merges each reply into the latest of it since the last
    user message holding no tool result (`claude_code._merge_undefined_ids`; order probes
    "no-id: ..."): one reply making both calls, both answered, no synthetic result; the answer
    after the results joins it too, so the request ends on the results and nothing is appended on
    resume (the last line is a reply's: order probe "no-id: call, result, call2, result2, done")."""
    objs = _calls_without_ids(request_ids=True)
    report = analyze(load_bytes(_jsonl(objs)))
    assert [(it.role, it.record_id, it.synthetic) for it in report.context] == [
        ("user", "u1", False), ("assistant", "a1", False), ("tool", "r2", False), ("tool", "r1", False),
    ]
    assert report.context[1].tool_call_ids == ["t1", "t2"]
    assert report.ledger.records[1].extra["merged_lines"] == [2, 3, 6]
    assert not [f for f in report.findings if f.code in ("unanswered_tool_call", "orphan_tool_result")]
    # A sibling (a regenerated reply hanging off the same user line) is not on the chain of the
    # answer, which joins it instead.
    objs[2]["parentUuid"] = "u1"
    report = analyze(load_bytes(_jsonl(objs)))
    assert [it.record_id for it in report.context] == ["u1", "a2", "r2"]
    assert report.context[1].tool_call_ids == ["t2"]


def test_a_prompt_ends_the_reply_that_replies_without_message_ids_join() -> None:
    """A user message holding no tool result ends what the next reply without an id joins (Claude
    Code clears its map of replies by id there: order probe "no-id: text, typed, call, result,
    done"); a result, or a prompt joined to one, does not (order probe "no-id: call, result, text
    typed, done")."""
    call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "f"}}
    objs = [
        _line("user", "u1", None, "go"),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "first"}]),
        _line("user", "u2", "a1", "typed"),
        _line("assistant", "a2", "u2", [call], stop="tool_use"),
        _line("user", "r1", "a2", [{"type": "tool_result", "tool_use_id": "t1", "content": "body"}]),
        _line("user", "u3", "r1", "typed again"),
        _line("assistant", "a3", "u3", [{"type": "text", "text": "done"}]),
    ]
    for o in objs:
        if o["type"] == "assistant":
            del o["message"]["id"]
            o["requestId"] = f"req-{o['uuid']}"
    report = analyze(load_bytes(_jsonl(objs)))
    assert [it.record_id for it in report.context] == ["u1", "a1", "u2", "a2", "r1", "u3"]
    assert report.ledger.records[3].extra["merged_lines"] == [4, 7]


def test_a_reply_whose_text_line_follows_its_unanswered_call_line_is_resumed_with_a_reply() -> None:
    """A reply written on two lines, its call then its text, the session ending before the call's
    result: Claude Code makes the result up and appends its reply on resume (order probe "call
    line, then its text line, call unanswered, session ends"): the text line belongs to the last
    message sent, so the conversation does not end on a reply (`claude_code._joins_earlier`)."""
    call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "f"}}
    objs = [
        _line("user", "u1", None, "go"),
        _line("assistant", "a1", "u1", [call], mid="m1", stop=None),
        _line("assistant", "a2", "a1", [{"type": "text", "text": "after"}], mid="m1", stop="tool_use"),
    ]
    report = analyze(load_bytes(_jsonl(objs)))
    assert [(it.record_id, it.synthetic, it.on_resume) for it in report.context] == [
        ("u1", False, False), ("a1", False, False), (None, True, False), (None, True, True),
    ]


def test_replies_without_message_id_or_request_id_are_replies_of_their_own() -> None:
    """Without a requestId either, Claude Code stamps a fresh message.id on each such line as it
    loads the transcript (`claude_code._undefined_id`): each is a reply of its own, so the first
    call's result comes after the second's reply, a result is made up for it, and its own is
    dropped (order probe "no id, no requestId: two call lines, results in the other order, done")."""
    report = analyze(load_bytes(_jsonl(_calls_without_ids(request_ids=False))))
    assert [(it.role, it.record_id, it.synthetic) for it in report.context] == [
        ("user", "u1", False), ("assistant", "a1", False), ("tool", None, True), ("assistant", "a2", False),
        ("tool", "r2", False), ("assistant", "a3", False),
    ]


def _kinds(report: Report, seq: int) -> str:
    shape = {"text": "t", "tool_call": "c", "thinking": "k"}
    return "".join(shape.get(b.type, "o") for b in report.ledger.records[seq].message.blocks)


def test_a_reply_s_calls_are_sent_after_its_other_blocks(tmp_path: Path) -> None:
    """Claude Code moves a reply's calls after its other blocks as it builds the request (`cXo`,
    offset 322793006, on each reply and on each merge, `Rzi`), unless a call sits between two
    thinking blocks (order probes "call line, then its text line, answered", "text, call, text
    lines of one reply, answered", "call and text in one line, answered", "thinking, call,
    thinking, text lines of one reply, answered"): read from bytes and from a file alike."""
    call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "f"}}
    think = [{"type": "thinking", "thinking": f"hm {k}", "signature": "s" * 40} for k in (1, 2)]
    res = [{"type": "tool_result", "tool_use_id": "t1", "content": "body"}]
    objs = [
        _line("user", "u1", None, "go"),
        _line("assistant", "a1", "u1", [call, {"type": "text", "text": "after"}], stop="tool_use"),
        _line("user", "r1", "a1", res),
        _line("assistant", "b1", "r1", [{"type": "text", "text": "one"}], mid="m2", stop=None),
        _line("assistant", "b2", "b1", [{**call, "id": "t2"}], mid="m2", stop=None),
        _line("assistant", "b3", "b2", [{"type": "text", "text": "two"}], mid="m2", stop="tool_use"),
        _line("user", "r2", "b3", [{**res[0], "tool_use_id": "t2"}]),
        _line("assistant", "c1", "r2", [think[0]], mid="m3", stop=None),
        _line("assistant", "c2", "c1", [{**call, "id": "t3"}], mid="m3", stop=None),
        _line("assistant", "c3", "c2", [think[1], {"type": "text", "text": "three"}], mid="m3", stop="tool_use"),
        _line("user", "r3", "c3", [{**res[0], "tool_use_id": "t3"}]),
    ]
    f = tmp_path / "order.jsonl"
    f.write_bytes(_jsonl(objs))
    for report in (analyze(load_bytes(_jsonl(objs))), analyze(load(str(f)))):
        assert [_kinds(report, s) for s in (1, 3, 7)] == ["tc", "ttc", "kckt"]
        assert report.context[3].tool_call_ids == ["t2"]


def test_a_text_of_whitespace_only_goes_when_a_reply_s_lines_are_merged(tmp_path: Path) -> None:
    """Claude Code drops a text block of whitespace only (JavaScript's) as it merges a reply's
    lines (`Rzi`, offset 322792083), unless it sits between two thinking blocks or only thinking
    would be left; a reply of one line keeps it (order probes "blank text line, then call line",
    "call line, then blank text line", "text, blank text, text lines", "blank text and call in one
    line", "thinking, blank text, thinking, text lines": 3 of 5 differed before)."""
    call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "f"}}
    think = [{"type": "thinking", "thinking": f"hm {k}", "signature": "s" * 40} for k in (1, 2)]

    def text(t: str) -> dict[str, Any]:
        return {"type": "text", "text": t}

    objs = [
        _line("user", "u1", None, "go"),
        _line("assistant", "a1", "u1", [text("\n\n")], mid="m1", stop=None),
        _line("assistant", "a2", "a1", [call], mid="m1", stop="tool_use"),
        _line("user", "r1", "a2", [{"type": "tool_result", "tool_use_id": "t1", "content": "body"}]),
        _line("assistant", "b1", "r1", [text("one")], mid="m2", stop=None),
        _line("assistant", "b2", "b1", [text("\u3000\n")], mid="m2", stop=None),
        _line("assistant", "b3", "b2", [text("two")], mid="m2"),
        _line("user", "u2", "b3", "next"),
        _line("assistant", "c1", "u2", [think[0]], mid="m3", stop=None),
        _line("assistant", "c2", "c1", [text(" ")], mid="m3", stop=None),
        _line("assistant", "c3", "c2", [think[1]], mid="m3", stop=None),
        _line("assistant", "c4", "c3", [text("after")], mid="m3"),
        _line("user", "u3", "c4", "and"),
        _line("assistant", "d1", "u3", [text("\n\n"), {**call, "id": "t2"}], mid="m4", stop="tool_use"),
        _line("user", "r2", "d1", [{"type": "tool_result", "tool_use_id": "t2", "content": "body"}]),
    ]
    f = tmp_path / "blank.jsonl"
    f.write_bytes(_jsonl(objs))
    for report in (analyze(load_bytes(_jsonl(objs))), analyze(load(str(f)))):
        assert [_kinds(report, s) for s in (1, 4, 8, 13)] == ["c", "tt", "ktkt", "tc"]


def test_a_message_id_written_again_after_a_prompt_is_a_reply_of_its_own(tmp_path: Path) -> None:
    """Claude Code merges a reply into the latest one of its message.id only since the last user
    message holding no tool result or compact boundary (`yo`, offset 322784184), the line merged
    into being the first on the path (order probes "id repeated after a prompt, then text", "id
    repeated across a compact boundary", "id repeated after a prompt, the first off the chain")."""

    def text(t: str) -> list[dict[str, Any]]:
        return [{"type": "text", "text": t}]

    def ts(k: int) -> str:
        return f"2026-01-01T00:00:{k:02d}Z"

    after_prompt = [
        _line("user", "u1", None, "go", timestamp=ts(1)),
        _line("assistant", "a1", "u1", text("first"), mid="m1", timestamp=ts(2)),
        _line("user", "u2", "a1", "typed", timestamp=ts(3)),
        _line("assistant", "a2", "u2", text("again"), mid="m1", timestamp=ts(4)),
        _line("user", "u3", "a2", "two", timestamp=ts(5)),
    ]
    across = [*after_prompt[:2], _boundary("b1", "a1", timestamp=ts(3)), {**_summary("s1", "b1"), "timestamp": ts(3)},
              _line("assistant", "a2", "s1", text("again"), mid="m1", timestamp=ts(4)), _line("user", "u3", "a2", "two", timestamp=ts(5))]
    first_off = [
        after_prompt[0],
        _line("assistant", "a0", "u1", text("first"), mid="m1", timestamp=ts(1)),  # (a sibling, off the chain)
        _line("assistant", "a1", "u1", text("answer"), mid="m9", timestamp=ts(2)),
        *after_prompt[2:],
    ]
    want = {
        "after": ([("u1", 1), ("a1", 1), ("u2", 1), ("a2", 1), ("u3", 1)], {}),
        "across": ([("b1", 0), ("a2", 1), ("u3", 1)], {}),
        "first_off": ([("u1", 1), ("a1", 1), ("u2", 1), ("a2", 2), ("u3", 1)], {"a2": ["again", "first"]}),
    }
    for name, objs in (("after", after_prompt), ("across", across), ("first_off", first_off)):
        f = tmp_path / f"{name}.jsonl"
        f.write_bytes(_jsonl(objs))
        for report in (analyze(load_bytes(_jsonl(objs))), analyze(load(str(f)))):
            got = [(it.record_id, len(getattr(report.ledger.records[it.seq].message, "blocks", ()))) for it in report.context if not it.synthetic]
            assert got == want[name][0], name
            for rid, texts in want[name][1].items():
                rec = next(r for r in report.ledger.records if r.id == rid)
                assert [b.text for b in rec.message.blocks] == texts, name


def test_small_fixture_is_reported_not_fatal() -> None:
    path = REAL / "agent-sessions__claude_small.jsonl"
    _need(path)
    report = analyze(load(str(path)))
    codes = {f.code for f in report.findings}
    # Its ids are "[trimmed for fixture]" over and over: reported, the rest still loads.
    assert "duplicate_id" in codes
    cycle = [d for d in report.ledger.diagnostics if d.problem == "parent_cycle"]
    assert cycle and "line 89" in cycle[0].message
    # The cycle goes through the reused uuid: the finding says so and names the lines sharing it;
    # the rest is still shown, both compact boundaries and a next request (issue 12, point 27).
    (tree,) = [f for f in report.findings if f.code == "broken_tree"]
    assert tree.severity == "error" and "lines (42–89) share the uuid '[trimmed for fixture]'" in tree.message
    assert [v.record.line for v in report.checkpoints] == [21, 51]
    # It ends on a user line (line 87), so Claude Code would append its "No response requested." on resume.
    assert report.context and report.context[-2].line == 87
    assert report.context[-1].synthetic and report.context[-1].text == "No response requested."
    cps = [r for r in report.ledger.records if r.kind == "checkpoint"]
    assert cps[0].line == 21 and cps[0].checkpoint.summary == "Summary of prior context."
    assert cps[1].checkpoint.details["preservedSegment"] and cps[1].checkpoint.trigger is not None


# ------------------------------------------------------------------------------------------ detection / CLI


def test_detected_by_content_not_name(tmp_path: Path) -> None:
    path = PEERS / "manual_compact.jsonl"
    _need(path)
    odd = tmp_path / "whatever.log"
    odd.write_bytes(path.read_bytes())
    assert load(str(odd)).format == "claude_code"
    assert load_bytes(path.read_bytes()).format == "claude_code"
    assert "claude_code" in registry.names()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "inspector", *args], capture_output=True, text=True, cwd=REPO)


def test_cli_format_override_and_context_json() -> None:
    path = PEERS / "manual_compact.jsonl"
    _need(path)
    p = _cli("context", str(path), "--json", "--format", "claude_code")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["format"] == "claude_code"
    # Forcing another format is honoured (and this file is no pi session).
    p = _cli("analyze", str(path), "--json", "--format", "pi")
    assert p.returncode in (0, 1, 2)
    if p.returncode != 2:
        assert json.loads(p.stdout)["format"] == "pi"


def test_forcing_it_onto_another_format_says_so() -> None:
    led = load(str(REPO / "sample_sessions" / "pi" / "adr0302_amnesiac_fallback.jsonl"), fmt="claude_code")
    (d,) = [d for d in led.diagnostics if d.problem == "not_this_format"]
    assert d.severity == "error" and "no line of this file is a Claude Code transcript line" in d.message
    assert any(f.code == "malformed_line" and f.severity == "error" for f in analyze(led).findings)


def test_plan_works_and_a_repair_without_a_writer_refuses_clearly() -> None:
    path = PEERS / "manual_compact.jsonl"
    _need(path)
    p = _cli("plan", str(path), "--strategy", "recover")
    assert p.returncode == 0, (p.stdout, p.stderr)
    if registry.get("claude_code").writer is not None:
        return
    p = _cli("repair", str(path), "--strategy", "recover", "--out", "/tmp/never-written.jsonl")
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "claude_code sessions are read only" in p.stderr
    assert not Path("/tmp/never-written.jsonl").exists()


def test_the_planner_budgets_the_summary_wrapper_claude_code_sends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Claude Code summary is sent inside the wrapper the repair writes into the summary line
    (its `xye`: the opening, the tools used, the transcript note, ...; about 150 tokens), not
    around it at send time: the room the plan gives summary + tail leaves that wrapper out."""
    from inspector.analysis.tokens import get_tokenizer
    from inspector.cli.main import main
    from inspector.formats.claude_code_writer import summary_body

    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    src = REPO / "tests" / "peers" / "claude_code_resume" / "sessions" / "cc_parallel_then_compact.jsonl"
    budgets = ["--strategy", "recover", "--window", "16000", "--reserve", "2000"]
    assert main(["plan", str(src), *budgets, "--json"]) == 0
    available = json.loads(capsys.readouterr().out)["budgets"]["available"]
    out = tmp_path / "repaired.jsonl"
    assert main(["repair", str(src), *budgets, "--out", str(out)]) == 0
    capsys.readouterr()
    sent = json.loads(out.read_bytes().splitlines()[-1])["message"]["content"]
    tok = get_tokenizer()
    wrapper = tok.count(sent) - tok.count(summary_body(sent))
    assert wrapper > 100  # the wrapper is real text, not a rounding
    assert available <= 16000 - 2000 - wrapper


# ------------------------------------------------------------------------------------------ peers


def _requests(name: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (PEERS / f"{name}.requests.jsonl").read_text().splitlines() if x.strip()]


def _session_files(name: str) -> list[Path]:
    """The main transcript and its sub-agents' transcripts."""
    return [PEERS / f"{name}.jsonl", *sorted((PEERS / f"{name}.subagents").glob("subagents/*.jsonl"))]


def _reply_at(files: list[Path], req: dict[str, Any]) -> tuple[Path, int]:
    """Which file and line hold the reply to this request (the request was sent just before)."""
    first = req["reply_blocks"][0]
    for f in files:
        for i, o in enumerate(_raw_lines(f), start=1):
            m = o.get("message")
            if o.get("type") != "assistant" or not isinstance(m, dict) or not isinstance(m.get("content"), list):
                continue
            for b in m["content"]:
                if first["type"] == "tool_use" and b.get("type") == "tool_use" and b.get("id") == first["id"]:
                    return f, i
                if first["type"] == "text" and b.get("type") == "text" and b.get("text", "").startswith(first["text_head"]):
                    return f, i
    raise AssertionError(f"no transcript line holds the reply to request {req['n']}")


def _our_blocks(report: Report) -> list[tuple[str, str, str | None]]:
    """Our next request, block by block: (kind, content key, record uuid)."""
    out: list[tuple[str, str, str | None]] = []
    led = report.ledger
    for it in report.context:
        if it.on_resume:
            continue  # these requests were sent while the CLI ran: what it appends on resume is not in them
        if it.kind == "summary":
            cp = led.records[it.seq]
            out.append(("text", it.text, cp.extra.get("summary_uuid")))
            continue
        if it.synthetic:
            out.append(("tool_result", it.tool_result_id or "", None))
            continue
        rec = led.records[it.seq]
        for b in rec.message.blocks:
            if b.type == "text":
                out.append(("text", b.text, rec.id))
            elif b.type == "tool_call":
                out.append(("tool_use", b.call_id, rec.id))
            elif b.type == "tool_result":
                out.append(("tool_result", b.call_id, rec.id))
    return out


def _their_blocks(req: dict[str, Any]) -> list[tuple[str, str, int]]:
    """What Claude Code sent, block by block (system-role messages are its own instructions)."""
    out: list[tuple[str, str, int]] = []
    for m in req["messages"]:
        if m["role"] == "system":
            continue
        for b in m["blocks"]:
            if b["type"] in ("text", "str"):
                out.append(("text", b["text_head"], b["len"]))
            elif b["type"] == "tool_use":
                out.append(("tool_use", b["id"], 0))
            elif b["type"] == "tool_result":
                out.append(("tool_result", b["tool_use_id"], 0))
    return out


def _injected(block: tuple[str, str, int]) -> bool:
    """Context Claude Code adds at send time from no transcript message (git status, attribution,
    attachments turned into reminders, the compaction prompt)."""
    kind, head, _ = block
    return kind == "text" and (head.startswith("<system-reminder>") or head.startswith("CRITICAL: Respond with TEXT ONLY"))


def _same(ours: tuple[str, str, str | None], theirs: tuple[str, str, int]) -> bool:
    if ours[0] != theirs[0]:
        return False
    if ours[0] != "text":
        return ours[1] == theirs[1]
    text, head, n = ours[1], theirs[1], theirs[2]
    if text[:100] == head or text[:100].rstrip() == head.rstrip():
        return True
    # A background task's notification is sent wrapped in a system notification.
    return text.startswith("<task-notification>") and head.startswith("<system-reminder>") and n > len(text)


def _align(ours: list[tuple[str, str, str | None]], theirs: list[tuple[str, str, int]]) -> list[str]:
    """Problems matching our blocks, in order, to the sent ones; skipped sent blocks must be
    injections."""
    problems: list[str] = []
    j = 0
    for o in ours:
        k = j
        while k < len(theirs) and not _same(o, theirs[k]):
            k += 1
        if k == len(theirs):
            problems.append(f"ours not sent: {o[0]} {o[1][:60]!r} ({o[2]})")
            continue
        problems += [f"sent, not ours: {t[0]} {t[1][:60]!r}" for t in theirs[j:k] if not _injected(t)]
        j = k + 1
    problems += [f"sent, not ours: {t[0]} {t[1][:60]!r}" for t in theirs[j:] if not _injected(t)]
    return problems


def test_peer_corpus_present() -> None:
    _need(PEERS)
    assert {"manual_compact", "subagent"} <= set(SESSIONS)


@pytest.mark.parametrize("name", PEER_CASES)
def test_every_request_claude_code_sent_is_our_next_request_then(name: str) -> None:
    """For every model call, `context --at LINE` (LINE = the line before its reply) lists what
    Claude Code sent, block by block, in order; compaction calls are checked separately."""
    files = _session_files(name)
    checked = 0
    for req in _requests(name):
        if req["kind"] != "main":
            continue
        f, line = _reply_at(files, req)
        report = analyze(load(str(f), upto_line=line - 1))
        problems = _align(_our_blocks(report), _their_blocks(req))
        assert not problems, f"request {req['n']} ({f.name} --at {line - 1}): {problems}"
        # And nothing the request carried from the transcript is missing from ours.
        uuids = {u for _, _, u in _our_blocks(report)}
        assert set(req["transcript_uuids_in_request"]) <= uuids | _merged_uuids(report)
        checked += 1
    assert checked == sum(1 for r in _requests(name) if r["kind"] == "main") > 0


def _merged_uuids(report: Report) -> set[str]:
    return {r.id for r in report.ledger.records if r.id and "merged_into_line" in (r.extra or {})}


@pytest.mark.parametrize("name", PEER_CASES)
def test_compaction_represents_what_its_request_summarized_and_holes_are_what_was_dropped(name: str) -> None:
    """The compaction call's transcript messages are exactly what the checkpoint's summary
    represents; a message that left the requests without being in a compaction call is a hole,
    and only such messages are holes."""
    reqs = _requests(name)
    report = analyze(load(str(PEERS / f"{name}.jsonl")))
    led = report.ledger
    by_uuid = {r.id: r for r in led.records if r.id}
    summarized: set[str] = set()
    for i, req in enumerate(reqs):
        if req["kind"] != "compact":
            continue
        sent = set(req["transcript_uuids_in_request"])
        summarized |= sent
        after = next(r for r in reqs[i + 1 :] if r["kind"] == "main")
        (v,) = [v for v in report.checkpoints if v.record.extra.get("summary_uuid") in after["transcript_uuids_in_request"]]
        represented = {led.records[s].id for s in v.represents}
        merged = {u for u in sent if "merged_into_line" in (by_uuid[u].extra or {})}
        assert represented == sent - merged
        retained = {led.records[s].id for s in v.retains}
        assert retained == set(v.checkpoint.details["preservedMessages"]["uuids"])
    main = [r for r in reqs if r["kind"] == "main"]
    ever = set().union(*(set(r["transcript_uuids_in_request"]) for r in main))
    last = set(main[-1]["transcript_uuids_in_request"])
    dropped = {u for u in ever - last if "merged_into_line" not in (by_uuid[u].extra or {})}
    holes = {led.records[s].id for s in report.path if report.states[s] == "hole"}
    assert holes == dropped - summarized
    for u in dropped & summarized:
        assert report.states[by_uuid[u].seq] == "summarized"


# ------------------------------------------------------------------------------------------ constructed


# What a constructed session ending on a user line gets last: Claude Code's reply on resume.
RESUME_REPLY = ("message", None)


def _line(kind: str, uuid: str, parent: str | None, content: Any = None, **kw: Any) -> dict[str, Any]:
    o: dict[str, Any] = {"parentUuid": parent, "isSidechain": False, "type": kind, "uuid": uuid, "sessionId": "s-1", "timestamp": "2026-01-01T00:00:00Z"}
    if kind in ("user", "assistant"):
        o["message"] = {"role": kind, "content": content}
        if kind == "assistant":
            o["message"].update(id=kw.pop("mid", f"msg-{uuid}"), model="claude-x", stop_reason=kw.pop("stop", "end_turn"))
    o.update(kw)
    return o


def _jsonl(objs: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


def _boundary(uuid: str, logical: str, **meta: Any) -> dict[str, Any]:
    return _line(
        "system", uuid, None, subtype="compact_boundary", content="Conversation compacted", logicalParentUuid=logical,
        compactMetadata={"trigger": "auto", "preTokens": 1000, **meta},
    )


def _summary(uuid: str, parent: str, text: str = "Summary: the user asked for two things.") -> dict[str, Any]:
    return _line("user", uuid, parent, text, isCompactSummary=True, isVisibleInTranscriptOnly=True)


def _states(report: Report) -> dict[str, str]:
    return {report.ledger.records[s].id: report.states[s] for s in report.path if report.states[s]}


def test_an_empty_summary_leaves_everything_it_removed_a_hole() -> None:
    path = PEERS / "manual_compact.jsonl"
    _need(path)
    objs = _raw_lines(path)
    assert objs[52]["isCompactSummary"] is True
    objs[52]["message"]["content"] = ""
    report = analyze(load_bytes(_jsonl(objs), "empty-summary.jsonl"))
    states = _states(report)
    assert Counter(states.values())["hole"] == 10
    assert states["31f62534-deb9-47a8-967a-7771c3ce0590"] == "retained"  # preserved verbatim
    (hole,) = [f for f in report.findings if f.code == "hole"]
    assert hole.severity == "error" and hole.by_role == {"user": 2, "assistant": 4, "tool": 4}
    assert report.context[0].kind == "message"  # no summary is sent


def test_a_missing_summary_line_breaks_the_chain_and_says_so() -> None:
    """The summary line of /compact deleted: the line after it names a parent no line holds, so
    Claude Code continues from the line written last at most 5 s before it (`lwn`/`ton`), the
    message the compaction preserved (line 43); that one names a line the compaction deleted, and
    the chain stops there: no summary, nothing before it (the real CLI sent exactly this)."""
    path = PEERS / "manual_compact.jsonl"
    _need(path)
    lines = path.read_bytes().splitlines(keepends=True)
    report = analyze(load_bytes(b"".join(lines[:52] + lines[53:]), "no-summary.jsonl"))
    bridged, stops = [d for d in report.ledger.diagnostics if d.problem == "dangling_parent"]
    assert bridged.line == 53 and "continues from line 43" in bridged.message and bridged.severity == "warning"
    assert stops.line == 43 and "no longer holds once it has read the compaction at line 52" in stops.message
    assert stops.severity == "error" and "not sent" in stops.message
    assert [it.record_id for it in report.context[:2]] == ["31f62534-deb9-47a8-967a-7771c3ce0590", "78e3229f-5440-44e0-9a5d-3c8a8cbd541d"]
    assert not any(it.kind == "summary" for it in report.context)
    assert any(f.code == "malformed_line" and "line 53" in f.message for f in report.findings)


def test_a_parent_named_but_missing_continues_from_the_line_written_within_5_s(tmp_path: Path) -> None:
    """Claude Code's chain walk falls back to the line written last at most 5 s before one whose
    parent it does not hold (the first written of a millisecond; the real CLI: the type probe's
    gaps), and stops when there is none."""
    def chain(gap_ms: int) -> list[str | None]:
        objs = [
            _line("user", "u1", None, "first", timestamp="2026-01-01T00:00:00.000Z"),
            _line("assistant", "a1", "u1", [{"type": "text", "text": "answer"}], timestamp="2026-01-01T00:00:01.000Z"),
            _line("user", "u2", "gone", "second", timestamp=f"2026-01-01T00:00:{1 + gap_ms // 1000:02d}.{gap_ms % 1000:03d}Z"),
        ]
        return [it.record_id for it in analyze(load_bytes(_jsonl(objs))).context if not it.synthetic]

    assert chain(5000) == ["u1", "a1", "u2"]
    assert chain(0) == ["u1", "a1", "u2"]  # (written the same millisecond: still before it)
    assert chain(5001) == ["u2"]
    # Of two lines written the same millisecond, the first in the file (`ton` sorts a reversed
    # list by time, stably, and takes the last of those not after the line).
    same = "2026-01-01T00:00:01.000Z"
    objs = [
        _line("user", "u1", None, "first", timestamp="2026-01-01T00:00:00.000Z"),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "answer"}], timestamp=same),
        _line("user", "x1", "a1", "aside", timestamp=same),
        _line("user", "u2", "gone", "second", timestamp="2026-01-01T00:00:02.000Z"),
    ]
    assert [it.record_id for it in analyze(load_bytes(_jsonl(objs))).context if not it.synthetic] == ["u1", "a1", "u2"]


def test_preserved_messages_are_retained_and_sent_right_after_the_summary() -> None:
    """preservedMessages may name a message that is not the last before the boundary: it is kept
    verbatim (retained), the rest before the boundary is summarized."""
    objs = [
        _line("user", "u1", None, "first question"),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "first answer"}]),
        _line("user", "u2", "a1", "second question"),
        _line("assistant", "a2", "u2", [{"type": "text", "text": "second answer"}]),
        _boundary("b1", "a2", preservedMessages={"anchorUuid": "s1", "uuids": ["u2"], "allUuids": ["u2"]}),
        _summary("s1", "b1"),
        _line("user", "u3", "s1", "third question"),
    ]
    report = analyze(load_bytes(_jsonl(objs)))
    assert report.ledger.format == "claude_code"
    assert [(it.kind, it.record_id) for it in report.context] == [("summary", "b1"), ("message", "u2"), ("message", "u3"), RESUME_REPLY]
    assert report.context[0].text.startswith("Summary: the user asked")
    assert _states(report) == {"u1": "summarized", "a1": "summarized", "a2": "summarized", "u2": "retained", "u3": "live"}
    (v,) = report.checkpoints
    assert v.checkpoint.trigger == "auto" and v.checkpoint.tokens_before == 1000
    # The summary line is folded into the checkpoint, and says so.
    s1 = next(r for r in report.ledger.records if r.id == "s1")
    assert s1.kind == "meta" and s1.extra["summary_of_line"] == 5


def test_two_compactions_chain_their_summaries() -> None:
    objs = [
        _line("user", "u1", None, "q1"),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "r1"}]),
        _boundary("b1", "a1"),
        _summary("s1", "b1", "Summary one."),
        _line("user", "u2", "s1", "q2"),
        _line("assistant", "a2", "u2", [{"type": "text", "text": "r2"}]),
        _boundary("b2", "a2"),
        _summary("s2", "b2", "Summary two."),
        _line("user", "u3", "s2", "q3"),
    ]
    report = analyze(load_bytes(_jsonl(objs)))
    assert [(it.kind, it.record_id) for it in report.context] == [("summary", "b2"), ("message", "u3"), RESUME_REPLY]
    assert report.context[0].text == "Summary two."
    assert _states(report) == {"u1": "summarized", "a1": "summarized", "u2": "summarized", "a2": "summarized", "u3": "live"}
    assert not [f for f in report.findings if f.code == "hole"]


def test_sidechain_lines_in_a_main_file_are_not_the_leaf_nor_on_the_path() -> None:
    objs = [
        _line("user", "u1", None, "main question"),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "main answer"}]),
        _line("user", "x1", None, "sub-agent task", isSidechain=True),
        _line("assistant", "x2", "x1", [{"type": "text", "text": "sub-agent answer"}], isSidechain=True),
    ]
    report = analyze(load_bytes(_jsonl(objs)))
    assert report.ledger.records[report.ledger.leaf_seq].id == "a1"
    assert [it.record_id for it in report.context] == ["u1", "a1"]
    assert _states(report) == {"u1": "live", "a1": "live"}
    assert {report.ledger.records[s].id: report.states[s] for s in (2, 3)} == {"x1": "inactive", "x2": "inactive"}
    # A sub-agent's own file is all sidechain: its newest line is its leaf.
    sub = analyze(load_bytes(_jsonl(objs[2:])))
    assert [it.record_id for it in sub.context] == ["x1", "x2"]


def _api_error(uuid: str, parent: str, model: str = "<synthetic>") -> dict[str, Any]:
    """An API error line as Claude Code writes it (`li` -> `u3o`, offset 322722222: model `<synthetic>`)."""
    o = _line("assistant", uuid, parent, [{"type": "text", "text": "API Error: 529 overloaded"}], isApiErrorMessage=True, stop="stop_sequence")
    o["message"]["model"] = model
    return o


def test_api_error_replies_are_excluded_and_a_dangling_call_gets_a_synthetic_result() -> None:
    objs = [
        _line("user", "u1", None, "run it"),
        _api_error("e1", "u1"),
        _line("assistant", "a1", "e1", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "sleep 30"}}], stop="tool_use"),
    ]
    report = analyze(load_bytes(_jsonl(objs)))
    assert _states(report)["e1"] == "excluded"
    assert [(it.role, it.record_id, it.synthetic) for it in report.context] == [
        ("user", "u1", False),
        ("assistant", "a1", False),
        ("tool", None, True),
        ("assistant", None, True),  # then, on resume, Claude Code's "No response requested." (the peer README, interrupted_tool)
    ]
    assert report.context[-2].tool_result_id == "t1"


def test_an_api_error_line_naming_a_real_model_is_sent() -> None:
    """Claude Code leaves out only a synthetic API error (`dV`: isApiErrorMessage and model
    `<synthetic>`); one naming a model is sent as any reply (the real CLI: the type probe's
    "reply isApiErrorMessage true")."""
    objs = [_line("user", "u1", None, "run it"), _api_error("e1", "u1", model="claude-x"), _line("user", "u2", "e1", "again")]
    report = analyze(load_bytes(_jsonl(objs)))
    assert [it.record_id for it in report.context if not it.synthetic] == ["u1", "e1", "u2"]


_CAVEAT = "<local-command-caveat>The command below was run directly in Claude Code, not sent to you as a request.</local-command-caveat>"
_COMMAND = "<command-name>/cost</command-name>\n<command-message>cost</command-message>\n<command-args></command-args>"
_STDOUT = "<local-command-stdout>Total cost: $0.00</local-command-stdout>"


@pytest.mark.parametrize(
    ("tail", "replied"),
    [
        ([("a prompt never answered", {})], True),
        ([(_CAVEAT, {"isMeta": True}), (_COMMAND, {}), (_STDOUT, {})], False),  # a local command: no turn open
        ([(_COMMAND, {}), (_STDOUT, {})], True),  # no caveat, and not all meta lines: a turn
        ([(_STDOUT, {"isMeta": True})], False),  # the command's output as a meta line alone
        ([(_CAVEAT, {}), (_COMMAND, {}), (_STDOUT, {})], True),  # a caveat counts only as a meta line
        ([(_CAVEAT, {"isMeta": True}), ("/cost", {})], False),  # the bare command, after its caveat
        ([(_CAVEAT, {"isMeta": True, "timestamp": "2025-12-31T00:00:00Z"}), ("/cost", {})], True),  # caveat older
        ([("/cost", {"promptSource": "sdk"})], True),  # a prompt from elsewhere is no local command
        ([], False),  # ends on the reply
    ],
)
def test_a_turn_left_open_gets_claude_codes_reply_on_resume(tail: list[tuple[str, dict[str, Any]]], replied: bool) -> None:
    """Claude Code 2.1.328 appends a `<synthetic>` "No response requested." when it resumes a
    conversation whose last line is a user line, unless those lines are a local command's (its
    `L4`; docs/runtimes/claude_code.md §2): predicted as a synthetic item, on resume only."""
    objs = [_line("user", "u0", None, "hello"), _line("assistant", "a0", "u0", [{"type": "text", "text": "hi"}])]
    parent = "a0"
    for i, (text, kw) in enumerate(tail):
        objs.append(_line("user", f"t{i}", parent, text, **kw))
        parent = f"t{i}"
    report = analyze(load_bytes(_jsonl(objs)))
    last = report.context[-1]
    assert (last.synthetic and last.on_resume) is replied
    if replied:
        assert (last.role, last.text, last.seq) == ("assistant", "No response requested.", None)
        assert [it.record_id for it in report.context[:-1]] == ["u0", "a0", *[f"t{i}" for i in range(len(tail))]]


def test_one_user_line_answering_parallel_calls_answers_them_all() -> None:
    """The Messages API shape: one user message with a tool_result per call. Every call it answers
    is answered (no synthetic result, no unanswered finding); a result for a call not in context
    is removed from the message by Claude Code (`Pqi`; observed: the order probe's "result answering
    no call, beside its own"), not sent as an orphan: the line is sent with its other results."""
    calls = [{"type": "tool_use", "id": f"t{k}", "name": "Read", "input": {"file_path": f"f{k}"}} for k in (1, 2)]
    results = [{"type": "tool_result", "tool_use_id": f"t{k}", "content": f"body {k}"} for k in (1, 2)]
    objs = [
        _line("user", "u1", None, "read both"),
        _line("assistant", "a1", "u1", calls, stop="tool_use"),
        _line("user", "r1", "a1", results),
        _line("assistant", "a2", "r1", [{"type": "text", "text": "done"}]),
    ]
    report = analyze(load_bytes(_jsonl(objs)))
    assert [(it.role, it.record_id, it.synthetic) for it in report.context] == [
        ("user", "u1", False), ("assistant", "a1", False), ("tool", "r1", False), ("assistant", "a2", False),
    ]
    assert not any(it.unanswered or it.orphan for it in report.context)
    assert not [f for f in report.findings if f.code in ("unanswered_tool_call", "orphan_tool_result")]

    stray = [*results, {"type": "tool_result", "tool_use_id": "t9", "content": "from elsewhere"}]
    objs[2] = _line("user", "r1", "a1", stray)
    report = analyze(load_bytes(_jsonl(objs)))
    it = report.context[2]
    assert (it.record_id, it.tool_result_id, it.orphan) == ("r1", "t1", False)
    assert it.note is not None and "removes its result for t9" in it.note
    assert not [f for f in report.findings if f.code == "orphan_tool_result"]


def test_a_parent_cycle_is_reported_by_its_lines_and_the_rest_is_shown() -> None:
    """Lines 5 and 6 name each other as parent: the cycle is one finding naming both lines; the
    lines before it are read in file order, so the compaction and the next request are still there."""
    objs = [
        _line("user", "u1", None, "first"),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "ok"}]),
        _boundary("b1", "a1"),
        _summary("s1", "b1"),
        _line("user", "u2", "x2", "second"),
        _line("assistant", "x2", "u2", [{"type": "text", "text": "done"}]),
    ]
    report = analyze(load_bytes(_jsonl(objs)))
    (tree,) = [f for f in report.findings if f.code == "broken_tree"]
    assert tree.message.startswith("line 5: parentUuid leads back into its own ancestry (a cycle through lines 5, 6)")
    (d,) = [d for d in report.ledger.diagnostics if d.problem == "parent_cycle"]
    assert d.line == 5, "the diagnostic's line is the one its message names first"
    assert sorted(report.ledger.records[s].line for s in tree.records) == [5, 6]
    assert [v.record.line for v in report.checkpoints] == [3]
    assert [(it.kind, it.line) for it in report.context] == [("summary", 3), ("message", 5), ("message", 6)]
    assert _states(report)["u1"] == "summarized"


def test_bad_lines_are_reported_by_line_and_the_rest_loads() -> None:
    good = _jsonl([_line("user", "u1", None, "hello"), _line("assistant", "a1", "u1", [{"type": "text", "text": "hi"}])])
    data = (
        good
        + b'{"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"s-1","message":"not an object"}\n'
        + b'{"type":"brand-new-line-type","sessionId":"s-1","x":1}\n'
        + b'{"type":"user", "uuid": \n'
        + _jsonl([_line("user", "u3", "a1", "still here")])
    )
    led = load_bytes(data, "bad.jsonl")
    assert led.format == "claude_code"
    by_line = {d.line: d for d in led.diagnostics}
    assert by_line[3].problem == "invalid_field" and "line 3" in by_line[3].message
    assert by_line[5].problem == "malformed_json" and "line 5" in by_line[5].message
    kinds = {r.line: r.kind for r in led.records}
    assert kinds == {1: "message", 2: "message", 3: "unknown", 4: "unknown", 6: "message"}
    report = analyze(led)
    assert [it.record_id for it in report.context] == ["u1", "a1", "u3", None]  # None: the reply on resume
    assert {f.code for f in report.findings} >= {"malformed_line"}


def test_other_formats_are_not_taken_for_claude_code() -> None:
    samples = sorted((REPO / "sample_sessions").glob("*/*.jsonl"))
    assert samples
    for p in samples:
        assert load(str(p)).format != "claude_code", p


# ------------------------------------------------------------------------------------------ app


@pytest.mark.anyio
async def test_session_view_opens_a_claude_code_transcript_and_shows_every_record() -> None:
    from inspector.tui.app import create_app
    from inspector.tui.detail import DetailPane
    from inspector.tui.timeline import Timeline

    path = PEERS / "manual_compact.jsonl"
    _need(path)
    app = create_app([str(path)])
    async with app.run_test(size=(140, 40)) as pilot:
        await app_reaches(pilot, lambda: getattr(app.screen, "report", None) is not None)
        report = app.screen.report
        assert report is not None and report.ledger.format == "claude_code"
        await pilot.press("c")  # next checkpoint: the compact boundary
        tl = app.screen.query_one(Timeline)
        assert report.ledger.records[tl.current_seq].line == 52
        # Every record (messages, meta lines, the checkpoint) shows in the detail pane.
        for r in report.ledger.records:
            tl.go_to(r.seq)
            await pilot.pause()
        assert app.screen.query_one(DetailPane) is not None
        await pilot.press("3")  # the next request
        await pilot.pause()


def test_auto_compaction_mid_turn_keeps_the_pair_and_flags_the_summarized_live_question() -> None:
    """The peers README's auto_compact run: the boundary is written between a tool result and the
    next reply; the request after it is [summary, tool_use, tool_result], and the turn's own
    prompt survives only in the summary."""
    objs = [
        _line("user", "u0", None, "[A1] hi"),
        _line("assistant", "a0", "u0", [{"type": "text", "text": "hello"}]),
        _line("user", "u1", "a0", "[A2] Run two steps"),
        _line("assistant", "a1", "u1", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}], stop="tool_use"),
        _line("user", "r1", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]),
        _boundary("b1", "r1", preservedSegment={"headUuid": "a1", "anchorUuid": "s1", "tailUuid": "r1"}),
        _summary("s1", "b1"),
    ]
    report = analyze(load_bytes(_jsonl(objs)))
    assert [(it.kind, it.record_id) for it in report.context] == [("summary", "b1"), ("message", "a1"), ("message", "r1"), RESUME_REPLY]
    assert _states(report) == {"u0": "summarized", "a0": "summarized", "u1": "summarized", "a1": "retained", "r1": "retained"}
    (f,) = [f for f in report.findings if f.code == "live_question_summarized"]
    assert "[A2] Run two steps" in f.message


def test_a_sub_agent_transcript_loads_on_its_own_and_its_start_names_it(tmp_path: Path) -> None:
    """The real layout: `<session>.jsonl` and `<session>/subagents/agent-<id>.jsonl`."""
    main, (sub,) = PEERS / "subagent.jsonl", list((PEERS / "subagent.subagents" / "subagents").glob("agent-*.jsonl"))
    _need(main)
    sid = _raw_lines(main)[2]["sessionId"]
    (tmp_path / sid / "subagents").mkdir(parents=True)
    (tmp_path / f"{sid}.jsonl").write_bytes(main.read_bytes())
    copied = tmp_path / sid / "subagents" / sub.name
    copied.write_bytes(sub.read_bytes())
    led = load(str(tmp_path / f"{sid}.jsonl"))
    (start,) = [r for r in led.records if "subagent_transcript" in (r.extra or {})]
    assert start.role == "tool" and start.extra["subagent_transcript"] == str(copied)
    report = analyze(load(start.extra["subagent_transcript"]))
    assert report.ledger.format == "claude_code"
    assert [it.role for it in report.context] == ["user", "assistant", "tool", "assistant"]


def test_a_glued_line_is_read_as_claude_code_reads_it_its_first_value() -> None:
    """Line 22 (the first tool result) and line 23 (an attachment) glued together, as a crash
    mid-write leaves them: Claude Code reads the line's first JSON value and ignores the rest, so
    the line after them, whose parent is the attachment, names a record it does not hold (the
    real CLI resumed this file; its request is what `context` predicts)."""
    path = PEERS / "manual_compact.jsonl"
    _need(path)
    lines = path.read_bytes().splitlines(keepends=True)
    data = b"".join([*lines[:21], lines[21].rstrip(b"\n") + lines[22], *lines[23:]])
    report = analyze(load_bytes(data, "glued.jsonl"))
    led = report.ledger
    (glued,) = [d for d in led.diagnostics if d.problem == "glued_objects"]
    assert glued.line == 22 and glued.severity == "warning"  # (what it ignores is an attachment)
    assert [led.records[s].runtime_visible for s in glued.seqs] == [True, False]
    (d,) = [d for d in led.diagnostics if d.problem == "dangling_parent"]
    assert d.line == 24 and "names the record of line 22 that Claude Code does not read" in d.message


@pytest.mark.parametrize("tail", [b" 1", b"xyz", b",", b'{"type": "user"}'])
def test_what_follows_a_lines_first_value_is_ignored(tail: bytes) -> None:
    """Claude Code reads a line's first JSON value whatever follows it on the line (the real CLI:
    a number, text, a comma, a second object after it); we read it too, and say what was ignored."""
    objs = [_line("user", "u1", None, "first"), _line("assistant", "a1", "u1", [{"type": "text", "text": "answer"}])]
    data = _jsonl(objs).rstrip(b"\n") + tail + b"\n" + _jsonl([_line("user", "u2", "a1", "next")])
    report = analyze(load_bytes(data))
    assert [it.record_id for it in report.context if not it.synthetic] == ["u1", "a1", "u2"]
    assert any(d.line == 2 for d in report.ledger.diagnostics)


def test_the_next_request_view_names_the_reply_added_on_resume(tmp_path: Path) -> None:
    """The reply Claude Code appends on resume is shown as that, not as a synthetic tool result."""
    import asyncio

    from rich.console import Console

    from inspector.cli.render import render_context
    from inspector.tui.app import create_app
    from inspector.tui.context_view import NextRequestView

    objs = [_line("user", "u0", None, "hello"), _line("assistant", "a0", "u0", [{"type": "text", "text": "hi"}])]
    objs.append(_line("user", "u1", "a0", "still there?"))
    f = tmp_path / "open_turn.jsonl"
    f.write_bytes(_jsonl(objs))
    console = Console(record=True, width=160)
    console.print(render_context(analyze(load(str(f)))))
    assert "added on resume" in console.export_text()
    app = create_app([str(f)])

    async def body() -> None:
        async with app.run_test(size=(140, 40)) as pilot:
            await app_reaches(pilot, lambda: getattr(app.screen, "report", None) is not None)
            await pilot.press("3")  # the next request
            await pilot.pause(0.1)
            view = app.screen.query_one(NextRequestView)
            assert view.items[-1].on_resume
            head = str(view.query_one("#next-head").render())
            assert "adds on resume" in head and "synthetic result" not in head
            row = [str(c) for c in view.table.get_row_at(len(view.items) - 1)]
            assert "on resume" in row and any(c.startswith("added on resume: ") for c in row)

    asyncio.run(body())


@pytest.mark.parametrize(
    ("kind", "content", "why"),
    [
        ("user", 5, "not a string or a list"),
        ("user", None, "not a string or a list"),
        ("user", {"type": "text", "text": "x"}, "not a string or a list"),
        ("user", ["x", None, {"text": "no type"}], "holds no block"),
        ("user", [{"text": "no type"}], "holds no block"),
        ("assistant", " \n\u3000", "is blank text"),
        ("assistant", [7], "holds no block"),
    ],
)
def test_a_line_claude_code_drops_is_not_sent_and_its_children_chain_past_it(tmp_path: Path, kind: str, content: Any, why: str) -> None:
    """Claude Code drops a user or assistant line whose message content it cannot read (`jrn`) and
    links its children to its parent (`Brn`): the line is never sent, the history before it is
    (the real CLI: the type probe's "content a number", "content null", "content an object")."""
    objs = [
        _line("user", "u1", None, "first prompt"),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "first answer"}]),
        _line(kind, "d1", "a1", content),
        _line("user", "u2", "d1", "next prompt"),
    ]
    f = tmp_path / "t.jsonl"
    f.write_bytes(_jsonl(objs))
    for path in ("whole", "stream"):  # (parsed whole; read from the file, heads first)
        report = analyze(load_bytes(f.read_bytes()) if path == "whole" else load(str(f)))
        sent = [it.record_id for it in report.context if not it.synthetic]
        assert sent == ["u1", "a1", "u2"], (path, sent)
        assert any(d.line == 3 and why in d.message and "Claude Code drops the line" in d.message for d in report.ledger.diagnostics), path


def test_a_block_that_is_not_an_object_with_a_string_type_is_removed() -> None:
    """Claude Code keeps a line with some readable blocks and removes the others (`Irn`)."""
    blocks = [{"type": "text", "text": "kept"}, "loose", None, 3, {"text": "no type"}, {"type": 5}]
    objs = [_line("user", "u1", None, blocks), _line("assistant", "a1", "u1", [{"type": "text", "text": "ok"}])]
    report = analyze(load_bytes(_jsonl(objs)))
    m = report.ledger.records[0].message
    assert [(b.type, b.text) for b in m.blocks] == [("text", "kept")]


# What the real Claude Code 2.1.328 sent on resume for a reply whose tool calls were not all
# answered (each case a transcript it resumed; docs/runtimes/claude_code.md, "Unanswered calls"):
# the items after the first prompt, as (record id or synthetic text, ...).
_INTERRUPTED = "[Tool call interrupted: the session ended before this call's result was recorded"
_MISSING = "[Tool result missing due to internal error]"


def _call(i: int) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"q{i}", "name": "Bash", "input": {"command": "true"}}


def _result(i: int) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": f"q{i}", "content": f"result {i}"}


UNANSWERED_CASES: dict[str, tuple[list[dict[str, Any]], list[str]]] = {
    # a reply [text, call], then a prompt: the whole reply is left out
    "then_a_prompt": (
        [_line("assistant", "d1", "u0", [{"type": "text", "text": "t"}, _call(1)], stop="tool_use"), _line("user", "c1", "d1", "go on")],
        ["c1"],
    ),
    # the conversation ends on the reply: its call gets the interrupted result
    "at_the_end": ([_line("assistant", "d1", "u0", [{"type": "text", "text": "t"}, _call(1)], stop="tool_use")], ["d1", _INTERRUPTED]),
    # one call of two answered, then a prompt: the reply is sent, the other call gets the missing
    # result, first in the joined user message (`Pqi`), then the result, then the prompt (`fXo`)
    "partly_answered": (
        [
            _line("assistant", "d1", "u0", [_call(1), _call(2)], stop="tool_use"),
            _line("user", "r1", "d1", [_result(1)]),
            _line("user", "c1", "r1", "go on"),
        ],
        ["d1", _MISSING, "r1", "c1"],
    ),
    # another reply after it, then a prompt: only the first reply is left out
    "then_a_reply": (
        [
            _line("assistant", "d1", "u0", [_call(1)], stop="tool_use"),
            _line("assistant", "d2", "d1", [{"type": "text", "text": "t2"}], mid="m2"),
            _line("user", "c1", "d2", "go on"),
        ],
        ["d2", "c1"],
    ),
    # the result after a prompt: the call is answered (consecutive user lines are one message), and
    # the result is sent ahead of the prompt (`NU` / `fXo`: the joined message's results first)
    "answered_late": (
        [
            _line("assistant", "d1", "u0", [_call(1)], stop="tool_use"),
            _line("user", "c1", "d1", "go on"),
            _line("user", "r1", "c1", [_result(1)]),
        ],
        ["d1", "r1", "c1"],
    ),
}


@pytest.mark.parametrize("case", sorted(UNANSWERED_CASES))
def test_a_reply_with_unanswered_calls_is_sent_as_claude_code_sends_it(tmp_path: Path, case: str) -> None:
    tail, want = UNANSWERED_CASES[case]
    objs = [_line("user", "u0", None, "first prompt"), *tail]
    f = tmp_path / "t.jsonl"
    f.write_bytes(_jsonl(objs))
    for report in (analyze(load_bytes(f.read_bytes())), analyze(load(str(f)))):
        got = [it.text[: len(_INTERRUPTED)] if it.synthetic else it.record_id for it in report.context if not it.on_resume]
        assert got[1:] == want, case
        left_out = [d for d in report.ledger.diagnostics if d.problem == "skipped_by_runtime"]
        assert [d.line for d in left_out] == ([2] if case in ("then_a_prompt", "then_a_reply") else [])


@pytest.mark.parametrize("case", sorted(UNANSWERED_CASES))
def test_a_followed_transcript_leaves_out_a_reply_once_the_conversation_goes_on(tmp_path: Path, case: str) -> None:
    """The live follower, one line at a time: what it says is sent equals a fresh analysis at
    every step (a reply at the end keeps its call until a prompt follows it unanswered)."""
    tail, _ = UNANSWERED_CASES[case]
    assert follow_each_line(tmp_path, [_line("user", "u0", None, "first prompt"), *tail], case)  # (not all read again whole)


def follow_each_line(tmp_path: Path, objs: list[dict[str, Any]], case: str) -> int:
    """`objs` written to a transcript one line at a time, followed live: at every step the follower
    says what a fresh analysis says. How many looks grew the ledger from the appended line."""
    from inspector.live.incremental import GROWN, Follower
    from tests.test_incremental import followed_json, full_json

    lines = [json.dumps(o).encode() + b"\n" for o in objs]
    f = tmp_path / "t.jsonl"
    f.write_bytes(lines[0])
    fol = Follower(str(f))
    fol.poll()
    grown = 0
    for line in lines[1:]:
        with open(f, "ab") as out:
            out.write(line)
        up = fol.poll()
        grown += up is not None and up.whole == GROWN
        assert followed_json(fol) == full_json(str(f), str(f)), (case, line)
    return grown


def test_a_line_without_a_uuid_is_reached_by_time_and_sent() -> None:
    """A user line with no uuid: the next line's parent names nothing, so the walk continues from
    the line written last within 5 s, that one, and on to its parent (the real CLI: the type
    probe's "no uuid", "uuid null", "uuid a number" send all three)."""
    objs = [
        _line("user", "u1", None, "first", timestamp="2026-01-01T00:00:00.000Z"),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "answer"}], timestamp="2026-01-01T00:00:01.000Z"),
        _line("user", "x", "a1", "no uuid", timestamp="2026-01-01T00:00:02.000Z"),
        _line("user", "u2", "x", "after", timestamp="2026-01-01T00:00:02.000Z"),
    ]
    del objs[2]["uuid"]
    report = analyze(load_bytes(_jsonl(objs)))
    assert [it.line for it in report.context if not it.synthetic] == [1, 2, 3, 4]


def _last_prompt(leaf: str) -> dict[str, Any]:
    return {"type": "last-prompt", "lastPrompt": "p", "leafUuid": leaf, "sessionId": "s-1"}


@pytest.mark.parametrize(
    ("appended", "resumed_from"),
    [
        # lines that go on from the checkpoint's leaf: resumed from the newest
        ([_line("user", "d1", "a1", "more"), _line("user", "c1", "d1", "again")], "c1"),
        # a root (parentUuid null) and a line under it: the checkpoint's leaf
        ([_line("user", "d1", None, "more"), _line("user", "c1", "d1", "again")], "a1"),
        # under a line of a type Claude Code does not know: the checkpoint's leaf
        ([{**_line("user", "d1", "a1", "more"), "type": "User"}, _line("user", "c1", "d1", "again")], "a1"),
    ],
)
def test_claude_code_resumes_from_the_last_prompts_leaf_unless_the_newest_line_goes_on_from_it(
    appended: list[dict[str, Any]], resumed_from: str
) -> None:
    """Several chains ending in a user or assistant line: Claude Code resumes from the one the
    newest `last-prompt` line names, unless the newest line descends from it (the real CLI: the
    type probe's "parentUuid null/missing/a number", "type uppercased/a number")."""
    objs = [
        _line("user", "u1", None, "first", timestamp="2026-01-01T00:00:00.000Z"),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "answer"}], timestamp="2026-01-01T00:00:01.000Z"),
        _last_prompt("a1"),
        *({**o, "timestamp": "2026-01-01T01:00:00.000Z"} for o in appended),
    ]
    report = analyze(load_bytes(_jsonl(objs)))
    sent = [it.record_id for it in report.context if not it.synthetic]
    assert sent[-1] == resumed_from, sent


def test_a_followed_transcript_resumes_where_claude_code_would_as_lines_arrive(tmp_path: Path) -> None:
    """The live follower, a line at a time, over the last-prompt cases and a branch off a turn the
    last-prompt line names the end of: what it says is sent equals a fresh analysis each time."""
    from inspector.live.incremental import Follower
    from tests.test_incremental import followed_json, full_json

    base = [
        _line("user", "u1", None, "first", timestamp="2026-01-01T00:00:00.000Z"),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "answer"}], timestamp="2026-01-01T00:00:01.000Z"),
        _line("user", "u2", "a1", "second", timestamp="2026-01-01T00:00:02.000Z"),
        _line("assistant", "a2", "u2", [{"type": "text", "text": "answer 2"}], mid="m2", timestamp="2026-01-01T00:00:03.000Z"),
        _last_prompt("a2"),
    ]
    tails = [
        [_line("user", "d1", None, "root"), _line("user", "c1", "d1", "again")],
        [_line("user", "d1", "u2", "a branch off the turn"), _line("assistant", "c1", "d1", [{"type": "text", "text": "x"}], mid="m3")],
        [_line("user", "d1", "a2", "more"), _last_prompt("d1"), _line("user", "c1", "d1", "again")],
    ]
    for n, tail in enumerate(tails):
        lines = [json.dumps(o).encode() + b"\n" for o in [*base, *({**o, "timestamp": "2026-01-01T01:00:00.000Z"} if "timestamp" in o else o for o in tail)]]
        f = tmp_path / f"t{n}.jsonl"
        f.write_bytes(b"".join(lines[: len(base)]))
        fol = Follower(str(f))
        fol.poll()
        for line in lines[len(base) :]:
            with open(f, "ab") as out:
                out.write(line)
            fol.poll()
            assert followed_json(fol) == full_json(str(f), str(f)), (n, line)


@pytest.mark.parametrize(
    "tail",
    [
        # a reply whose parentUuid is its own uuid, then a last-prompt line naming it (fuzz_live seed
        # 915 case 342): the newest line is named, so it is resumed from
        [_line("assistant", "x1", "x1", [{"type": "text", "text": "loops"}]), _last_prompt("x1")],
        # a root, then a sidechain line under the named line: a line goes on from it, so the newest
        [_line("user", "x1", None, "root"), {**_line("user", "s1", "a1", "aside"), "isSidechain": True}],
    ],
    ids=["last-prompt-names-the-newest", "a-line-under-the-named-one"],
)
def test_a_followed_transcript_resumes_from_the_newest_line_again(tmp_path: Path, tail: list[dict[str, Any]]) -> None:
    """A last-prompt line named a line the newest does not descend from, so the resume was from it;
    an appended line that makes Claude Code resume from the newest line again (the full build asks
    `_last_prompt_leaf` from the newest line, not from where the resume was) is followed so."""
    objs = [
        _line("user", "u1", None, "first", timestamp="2026-01-01T00:00:00.000Z"),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "answer"}], timestamp="2026-01-01T00:00:01.000Z"),
        _last_prompt("a1"),
        *({**o, "timestamp": "2026-01-01T01:00:00.000Z"} for o in tail),
    ]
    follow_each_line(tmp_path, objs, "resumed again from the newest line")
    report = analyze(load_bytes(_jsonl(objs)))
    assert [it.record_id for it in report.context if not it.synthetic][-1] == "x1"


def test_a_followed_fallback_off_the_new_chain_is_no_longer_reported(tmp_path: Path) -> None:
    """A reply's second line names no line, so the walk from it fell back by time to the reply's
    first line (a dangling_parent warning); a result under that first line is the newest line then,
    and the walk from it never meets the second line: the follow drops the warning as the full
    build does (fuzz_live seed 953 case 24 kept it)."""
    call = {"type": "tool_use", "id": "q1", "name": "Bash", "input": {"command": "true"}}
    objs = [
        _line("user", "u1", None, "go", timestamp="2026-01-01T00:00:00.000Z"),
        _line("assistant", "a1", "u1", [call], mid="m1", stop="tool_use", timestamp="2026-01-01T00:00:01.000Z"),
        _line("assistant", "a2", "gone", [{**call, "id": "q2"}], mid="m1", stop="tool_use", timestamp="2026-01-01T00:00:02.000Z"),
        _line("user", "r1", "a1", [_result(1), _result(2)], timestamp="2026-01-01T00:00:03.000Z"),
    ]
    follow_each_line(tmp_path, objs, "fallback off the new chain")
    assert not [d for d in load_bytes(_jsonl(objs)).diagnostics if d.problem == "dangling_parent"]


def test_a_followed_fallback_goes_to_an_appended_line_off_the_chain(tmp_path: Path) -> None:
    """The walk fell back by time from a line naming no parent; appended together, a branch line
    written between that line and the one fallen back to, and a reply under the first: the full
    build's walk falls back to the branch line (the one written last before), and so does the
    follow."""
    from inspector.live.incremental import Follower
    from tests.test_incremental import followed_json, full_json

    objs = [
        _line("user", "u1", None, "go", timestamp="2026-01-01T00:00:00.000Z"),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "answer"}], timestamp="2026-01-01T00:00:01.000Z"),
        _line("user", "u2", "gone", "next", timestamp="2026-01-01T00:00:03.000Z"),
    ]
    tail = [
        _line("user", "z1", "u1", "a branch", timestamp="2026-01-01T00:00:02.000Z"),
        _line("assistant", "w1", "u2", [{"type": "text", "text": "more"}], timestamp="2026-01-01T00:00:04.000Z"),
    ]
    f = tmp_path / "t.jsonl"
    f.write_bytes(_jsonl(objs))
    fol = Follower(str(f))
    fol.poll()
    with open(f, "ab") as out:
        out.write(_jsonl(tail))
    fol.poll()
    assert followed_json(fol) == full_json(str(f), str(f))
    report = analyze(load_bytes(_jsonl([*objs, *tail])))
    assert [it.record_id for it in report.context if not it.synthetic] == ["u1", "z1", "u2", "w1"]


@pytest.mark.parametrize("side", [[1], {"a": 1}, 1, "false"])
def test_a_gap_under_a_line_whose_is_sidechain_is_no_boolean_falls_back_on_its_own_side(side: Any) -> None:
    """Claude Code groups lines by isSidechain as JavaScript compares values (an array or an object
    a group of its own, 1 not true): no other line shares such a side, so nothing is continued from
    (fuzz seed 122: an array there crashed the fallback's index)."""
    objs = [
        _line("user", "u1", None, "first", timestamp="2026-01-01T00:00:00.000Z"),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "answer"}], timestamp="2026-01-01T00:00:01.000Z"),
        {**_line("user", "u2", "gone", "second", timestamp="2026-01-01T00:00:02.000Z"), "isSidechain": side},
    ]
    report = analyze(load_bytes(_jsonl(objs)))
    assert [it.record_id for it in report.context if not it.synthetic] == ["u2"]


def test_a_finding_quotes_a_huge_call_id_shortened() -> None:
    """A call id of megabytes (fuzz seed 124: `plan` printed it whole into a table cell and did not
    end within 240 s) is quoted shortened in the unanswered-call finding."""
    huge = "t" * 2_000_000
    objs = [_line("user", "u1", None, "go"), _line("assistant", "a1", "u1", [{"type": "tool_use", "id": huge, "name": "Bash", "input": {}}], stop="tool_use")]
    (f,) = [f for f in analyze(load_bytes(_jsonl(objs))).findings if f.code == "unanswered_tool_call"]
    assert len(f.message) < 1000
