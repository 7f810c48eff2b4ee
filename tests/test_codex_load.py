"""Codex loading at the parse floor's side (issue 15): a rollout read from disk maps each line as it
is parsed and keeps a meta line's payload unparsed until asked for; what it gives is what the
whole build of the same lines gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.formats import appended, codex, load
from inspector.formats.jsonl import parse_bytes
from inspector.ledger.model import UNREAD
from tests.conftest import SHARED, need_shared

REAL = SHARED / "real_sessions" / "codex"
PEERS = SHARED / "peers" / "codex" / "corpus"


def _rollouts() -> list[Path]:
    need_shared(REAL)
    peers = [p for p in sorted(PEERS.glob("*.jsonl")) if not p.name.endswith((".requests.jsonl", ".stream.jsonl"))]
    return sorted(REAL.glob("*.jsonl")) + peers


def _meta_line(payload: object, ts: str = "2026-01-01T00:00:00Z") -> str:
    return json.dumps({"timestamp": ts, "type": "event_msg", "payload": payload})


def test_a_meta_lines_payload_is_read_when_asked_for_and_equals_the_whole_build(tmp_path: Path) -> None:
    f = tmp_path / "rollout.jsonl"
    lines = [
        json.dumps({"timestamp": "t", "type": "session_meta", "payload": {"id": "s1", "cwd": "/x"}}),
        _meta_line({"type": "token_count", "info": {"last_token_usage": {"input_tokens": "many"}}}),  # wrong type
        _meta_line({"type": "agent_reasoning", "text": "thinking"}),
        json.dumps({"timestamp": "t", "type": "response_item", "payload": {"type": "ghost_snapshot", "ghost_commit": {"id": "c"}}}),
        json.dumps({"timestamp": "t", "type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}}),
    ]
    f.write_text("\n".join(lines) + "\n")
    led = load(str(f))
    whole = codex.build(parse_bytes(f.read_bytes())[0], None)
    meta = [r for r in led.records if r.kind == "meta"]
    assert len(meta) == 3 and all(r._extra is UNREAD for r in meta)  # nothing parsed kept
    assert [r.extra for r in led.records] == [r.extra for r in whole.records]
    assert led.records[1].extra == {"type": "token_count", "info": {"last_token_usage": {}}}  # as the build removed it
    assert [d.message for d in led.diagnostics] == [d.message for d in whole.diagnostics]
    assert led.records[0].extra == {"id": "s1", "cwd": "/x"} and led.records[0]._extra is not UNREAD  # the header kept


@pytest.mark.parametrize("path", _rollouts(), ids=lambda p: p.name[:40])
def test_a_real_rollout_streamed_equals_its_whole_build(path: Path) -> None:
    led = load(str(path))
    whole = codex.build(parse_bytes(path.read_bytes())[0], None)
    assert [(r.kind, r.type, r.id, r.line, r.runtime_visible, r.never_sent) for r in led.records] == [
        (r.kind, r.type, r.id, r.line, r.runtime_visible, r.never_sent) for r in whole.records
    ]
    assert [r.extra for r in led.records] == [r.extra for r in whole.records]
    assert [d.message for d in led.diagnostics] == [d.message for d in whole.diagnostics]


def _line(t: str, payload: dict[str, object]) -> str:
    return json.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": t, "payload": payload})


# (with the fields Codex 0.169 requires of it: without them it refuses the rollout, `codex_lines.META_TEXTS`)
META = {"id": "s1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/x", "originator": "codex_cli_rs", "cli_version": "0.169.0"}

HEAD = [
    _line("session_meta", META),
    _line("response_item", {"type": "message", "role": "user", "id": "u1", "content": [{"type": "input_text", "text": "hi"}]}),
    _line("response_item", {"type": "message", "role": "assistant", "id": "a1", "content": [{"type": "output_text", "text": "hello"}]}),
]
USAGE = _meta_line({"type": "token_count", "info": {"last_token_usage": {"input_tokens": 120, "output_tokens": 7}, "model_context_window": 9000}})


def _grown(tmp_path: Path, more: list[str]) -> tuple[object, object, object]:
    """(the ledger of HEAD, it extended by `more`, the full build of both)."""
    f = tmp_path / "rollout.jsonl"
    f.write_text("\n".join(HEAD) + "\n")
    led = load(str(f))
    start = f.stat().st_size
    with open(f, "a") as out:
        out.write("\n".join(more) + "\n")
    lines, _, _ = appended.complete_lines(f.read_bytes()[start:], start, len(HEAD) + 1)
    return led, codex.extend(led, lines), load(str(f))


def test_an_appended_usage_line_updates_a_copy_of_the_reply_it_reports(tmp_path: Path) -> None:
    dup = _line("response_item", {"type": "message", "role": "user", "id": "u1", "content": [{"type": "input_text", "text": "again"}]})
    led, grown, full = _grown(tmp_path, [USAGE, dup])
    assert grown is not None
    assert led.records[2].message.usage is None and len(led.records) == 3  # the given ledger as it was
    assert grown.records[2].message.usage == full.records[2].message.usage is not None
    assert grown.settings.window == full.settings.window == 9000 and led.settings.window is None
    assert [r.id for r in grown.records] == [r.id for r in full.records]  # the reused id: its line's
    assert grown.records[-1].id == "L5" and grown.leaf_seq == full.leaf_seq


@pytest.mark.parametrize(
    "line",
    [
        _line("compacted", {"message": "summary"}),
        _meta_line({"type": "thread_rolled_back", "num_turns": 1}),
        _line("session_meta", {"id": "s2"}),
        _meta_line({"type": "token_count", "info": {"last_token_usage": {"input_tokens": "many"}}}),
        json.dumps({"timestamp": "t", "type": "event_msg"}),
    ],
    ids=["checkpoint", "rollback", "second header", "wrong type", "no payload"],
)
def test_an_append_that_changes_what_came_before_needs_the_full_build(tmp_path: Path, line: str) -> None:
    led, grown, _ = _grown(tmp_path, [line])
    assert grown is None and len(led.records) == 3


def test_a_report_grows_with_the_rollout_without_a_full_analysis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.analysis import analyze
    from inspector.analysis import incremental as incr
    from inspector.analysis.export import analyze_json, context_json

    call = _line("response_item", {"type": "function_call", "name": "shell", "call_id": "c1", "arguments": "{}", "id": "f1"})
    out = _line("response_item", {"type": "function_call_output", "call_id": "c1", "output": "ok"})
    usage = _meta_line({"type": "token_count", "info": {"last_token_usage": {"input_tokens": 120, "output_tokens": 7}}})
    led, grown, full = _grown(tmp_path, [usage, call, out])  # (a new window would need the full analysis)
    assert grown is not None
    old = analyze(led)

    def no_full_analysis(*_a: object, **_k: object) -> None:
        raise AssertionError("a full analysis")

    monkeypatch.setattr(incr, "analyze", no_full_analysis)
    rep = incr.extend_report(old, grown, len(led.records))
    want = analyze(full)
    for r in (rep, want):
        r.ensure_tokens()
    assert (analyze_json(rep), context_json(rep)) == (analyze_json(want), context_json(want))


def test_a_rollout_read_from_bytes_keeps_its_payloads() -> None:
    from inspector.formats import load_bytes

    led = load_bytes(("\n".join([*HEAD, USAGE]) + "\n").encode(), "not-a-file.jsonl")
    assert led.records[3]._extra is not UNREAD  # nothing to read it again from
    assert led.records[3].extra == {"type": "token_count", "info": {"last_token_usage": {"input_tokens": 120, "output_tokens": 7}, "model_context_window": 9000}}


# ------------------------------------------------------------------ index first (codex_heads)


def _fields_of(led: object) -> list[tuple[object, ...]]:
    """Every record as the analysis sees it: its index fields, message, unknown fields, checkpoint."""
    out = []
    for r in led.records:  # type: ignore[attr-defined]
        own = tuple(getattr(r, f) for f in r.__struct_fields__ if f not in ("_source", "_message", "_extra"))
        out.append((*own, r.message, r.extra))
    return out


def _same_as_whole_build(path: Path) -> object:
    led = load(str(path))
    whole = codex.build(parse_bytes(path.read_bytes())[0], None)
    assert _fields_of(led) == _fields_of(whole)
    assert [(d.line, d.problem, d.message, d.seqs) for d in led.diagnostics] == [
        (d.line, d.problem, d.message, d.seqs) for d in whole.diagnostics
    ]
    assert (led.header, led.settings, led.instructions, led.leaf_seq) == (whole.header, whole.settings, whole.instructions, whole.leaf_seq)
    return led


@pytest.mark.parametrize(
    "path", [*_rollouts(), *sorted((Path(__file__).parent / "peers" / "codex_resume" / "sessions").glob("*.jsonl"))], ids=lambda p: p.name[:40]
)
def test_every_field_of_a_rollout_read_from_its_heads_is_the_whole_builds(path: Path) -> None:
    _same_as_whole_build(path)


def _item(payload: dict[str, object], **top: object) -> str:
    return json.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": "response_item", "payload": payload, **top}, ensure_ascii=False)


EDGES = [
    _line("session_meta", {"id": "s1", "cwd": "/x", "model_provider": "openai"}),
    _line("turn_context", {"model": "gpt-a", "summary": "auto"}),
    _item({"type": "message", "role": "user", "id": "u1", "content": [{"type": "input_text", "text": "first ✓"}]}),
    _item({"type": "reasoning", "id": "r1", "summary": [{"type": "summary_text", "text": "think"}], "encrypted_content": "e"}),
    _item({"type": "function_call", "name": "shell", "call_id": "c1", "arguments": "{\"cmd\": [\"ls\"]}", "status": "done"}),
    _item({"type": "function_call_output", "call_id": "c1", "output": {"content": "oops", "success": False}}),
    _meta_line({"type": "token_count", "info": {"last_token_usage": {"input_tokens": 50, "cached_input_tokens": 10, "output_tokens": 5}}}),
    _line("turn_context", {"model": "gpt-b"}),
    _item({"type": "message", "role": "assistant", "id": "a1", "content": [{"type": "output_text", "text": "done"}], "phase": "final_answer"}),
    _meta_line({"type": "token_count", "info": {"last_token_usage": {"input_tokens": 70, "output_tokens": 9}, "model_context_window": 1000}}),
    _item({"type": "message", "role": "user", "content": [{"type": "input_text"}, {"type": "input_text", "text": None}]}),
    _item({"type": "message", "role": "user", "content": "second"}),
    _item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": 7}]}),  # wrong type: whole line
    _item({"type": "ghost_snapshot", "ghost_commit": {"id": "g"}}),
    _item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "third"}]}),
    _item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "bye"}]}),
    _meta_line({"type": "thread_rolled_back", "num_turns": 1}),
    _item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "SUM"}]}, metadata={"compaction_output": True}),
    _line(
        "compacted",
        {
            "message": "SUM",
            "replacement_history": [
                {"type": "message", "role": "user", "id": "u1", "content": [{"type": "input_text", "text": "first ✓"}]},
                {"type": "reasoning", "id": "r9", "summary": [{"type": "summary_text", "text": "think"}], "encrypted_content": "e"},
                {"type": "function_call", "name": "shell", "call_id": "c1", "arguments": "{}"},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "SUM"}]},
            ],
        },
    ),
    _meta_line({"type": "token_count", "info": {"last_token_usage": {"input_tokens": 90, "output_tokens": 1}}}),
    _item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "after"}]}),
    _meta_line({"type": "token_count", "info": {"last_token_usage": {"input_tokens": 95, "output_tokens": 2}}}),
    "{\"timestamp\": \"t\", \"type\": \"event_msg\", \"payload\": {\"type\": \"agent_message\", \"message\": \"caf\xe9\"}}",
    _line("compacted", {"message": "again"}),
    _item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "last"}]}),
]


def test_a_rollout_read_from_its_heads_maps_as_the_whole_build_does(tmp_path: Path) -> None:
    f = tmp_path / "rollout.jsonl"
    data = ("\n".join(EDGES) + "\n").encode()
    f.write_bytes(data.replace("caf\xe9".encode(), b"caf\xe9"))  # one line of invalid UTF-8
    led = _same_as_whole_build(f)
    items = [r for r in led.records if r.type.startswith("response_item:")]  # type: ignore[attr-defined]
    assert sum(r._message is None for r in load(str(f)).records if r.kind == "message") == 5  # read from the head (a text content: Codex skips it)
    assert items[0].extra is None and items[2].extra == {"status": "done"}
    cp = next(r.checkpoint for r in led.records if r.kind == "checkpoint")  # type: ignore[attr-defined]
    assert [h.seq for h in cp.replacement if h.seq is not None] == [2, 3, 4]  # reasoning matched by its content


def test_an_item_id_another_record_already_has_gives_its_line_id_on_both_paths(tmp_path: Path) -> None:
    """A record's id is its item's own unless an earlier record has it: an item's id, or the id
    made for an earlier line without one (`L3`, `L7.1` of a glued second object), found without a
    set of every line's id; a later line's id taken early is still made for that line."""
    lines = [
        _line("session_meta", {"id": "s1", "cwd": "/x"}),
        _item({"type": "message", "role": "user", "id": "u1", "content": "a"}),
        _meta_line({"type": "agent_message", "message": "no id: L3"}),
        _item({"type": "message", "role": "user", "id": "L3", "content": "b"}),  # L3 taken: L4
        _item({"type": "message", "role": "user", "id": "u1", "content": "c"}),  # u1 taken: L5
        _item({"type": "message", "role": "user", "id": "L9", "content": "d"}),  # L9 free yet
        _item({"type": "message", "role": "user", "id": "L03", "content": "e"}) + _item({"type": "message", "role": "user", "content": "f"}),
        _item({"type": "message", "role": "assistant", "id": "L7.1", "content": "g"}),  # L7.1 taken: L8
        _item({"type": "message", "role": "assistant", "content": "h"}),  # L9 (again)
        _meta_line({"type": "agent_message", "message": "x", "id": "L9"}),  # taken: L10
        _item({"type": "reasoning", "id": "L1x", "summary": []}),
        _item({"type": "reasoning", "id": "L", "summary": []}),
        _meta_line({"type": "agent_message", "message": "x", "id": "L12"}),  # L12 free: line 12 has its own
    ]
    f = tmp_path / "rollout.jsonl"
    f.write_text("\n".join(lines) + "\n")
    led = _same_as_whole_build(f)
    ids = [r.id for r in led.records]  # type: ignore[attr-defined]
    assert ids == ["s1", "u1", "L3", "L4", "L5", "L9", "L03", "L7.1", "L8", "L9", "L10", "L1x", "L", "L12"]


def _by_id_walked(led: object) -> dict[str, int]:
    return {r.id: r.seq for r in led.records if r.id is not None and r.runtime_visible}  # type: ignore[attr-defined]


def test_the_loaders_index_codes_are_what_reading_every_record_finds(tmp_path: Path) -> None:
    """The `RecordIndex` a rollout's loader makes as it reads (`mark_code` per record, the ints
    its seqs are) is what reading every record finds, read from heads or whole: a reply marked
    never sent on its line, one an older Codex's checkpoint finds after it (`_Builder._handoff`),
    a checkpoint, glued objects; and the analysis reading it is the one reading the records."""
    from inspector.analysis import analyze
    from inspector.analysis.export import analyze_json, context_json
    from inspector.ledger.model import mark_code

    said = lambda role, text, **top: _item({"type": "message", "role": role, "content": [{"type": "output_text", "text": text}]}, **top)  # noqa: E731
    lines = [
        *EDGES,
        said("assistant", "marked on its line", metadata={"compaction_output": True}),
        said("assistant", "after it: the marked one is no handoff"),
        said("user", "go on"),
        said("assistant", "the summary an older Codex wrote"),
        _line("compacted", {"message": "so: the summary an older Codex wrote"}),
        said("user", "one") + said("user", "glued"),
    ]
    f = tmp_path / "rollout.jsonl"
    f.write_text("\n".join(lines) + "\n")
    led = load(str(f))
    whole = codex.build(parse_bytes(f.read_bytes())[0], None)
    for x in (led, whole):
        ix = x.record_index()
        assert ix is not None and ix.marks is None
        assert ix.codes == bytes(map(mark_code, x.records)) and ix.seqs == list(range(len(x.records)))
    texts = {r.message.text(): r.never_sent for r in led.records if r.message is not None}
    assert texts["marked on its line"] and texts["the summary an older Codex wrote"] and not texts["after it: the marked one is no handoff"]
    plain = load(str(f))
    plain.index = None
    for out in (analyze_json, context_json):
        assert out(analyze(led)) == out(analyze(plain))


def test_ids_are_found_through_the_loaders_index_as_a_walk_finds_them(tmp_path: Path) -> None:
    """`Ledger.ids_to_seqs` asks the loader's `RecordIndex.find_ids` (no walk of the records):
    every id resolves to the record a walk of the records resolves it to (the last visible one),
    an item id, a line's own id, one an item took before its line came (`L5` on line 2, then
    line 5's), a reused item id (its line's), glued objects' (`L7.1`), a rolled-back record's."""

    def item(i: str | None, text: str) -> str:
        p: dict[str, object] = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
        if i is not None:
            p["id"] = i
        return json.dumps({"timestamp": "t", "type": "response_item", "payload": p})

    lines = [
        json.dumps({"timestamp": "t", "type": "session_meta", "payload": {"id": "s1"}}),
        item("L5", "takes line 5's id"),
        item("m1", "first"),
        item("m1", "reused id"),
        _meta_line({"type": "agent_reasoning", "text": "x"}),
        item(None, "no id") + item("g2", "glued"),
        item("r1", "rolled back"),
        _meta_line({"type": "thread_rolled_back", "num_turns": 1}),
        item("L7.1", "a line id of a later line"),
    ]
    f = tmp_path / "rollout.jsonl"
    f.write_text("\n".join(lines) + "\n")
    led = load(str(f))
    ix = led.record_index()
    assert ix is not None and ix.find_ids is not None
    walked = _by_id_walked(led)
    ids = {r.id for r in led.records if r.id is not None} | {"L99", "nope", "L", "Lx.1", "L6.1"}
    assert not next(r for r in led.records if r.id == "r1").runtime_visible  # (rolled back)
    assert [r.id for r in led.records if r.line in (5, 6)] == ["L5", "L6", "g2"] and "L7.1" in ids
    assert led.ids_to_seqs(ids) == {i: walked[i] for i in ids if i in walked}
    assert led._by_id is None  # (not built for it)
    for path in _rollouts():
        led = load(str(path))
        walked = _by_id_walked(led)
        ids = {r.id for r in led.records if r.id is not None}
        assert led.record_index() is not None
        assert led.ids_to_seqs(ids) == walked


def test_checkpoints_match_head_read_items_as_the_whole_build_matches_them(tmp_path: Path) -> None:
    """A head-read item stays in the history as its seq, its entry made from its record when a
    checkpoint asks (`_Builder._entry`): each checkpoint keeps, by id and by content, what the
    whole build keeps: a call with an empty call id, an output, an item whose id an earlier
    record took, a reasoning item (keyed when asked), an item an earlier checkpoint removed and a
    later one restores, and a roll-back and a rebuild without a replacement history."""

    def line(typ: str, payload: dict[str, object]) -> str:
        return json.dumps({"timestamp": "t", "type": typ, "payload": payload})

    def msg(i: str | None, role: str, text: str) -> dict[str, object]:
        p: dict[str, object] = {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}
        return {**p, "id": i} if i is not None else p

    call = {"type": "function_call", "id": "fc1", "call_id": "", "name": "sh", "arguments": "{}"}
    out = {"type": "function_call_output", "call_id": "", "output": "ok"}
    reason = {"type": "reasoning", "id": "rs1", "summary": [{"type": "summary_text", "text": "hm"}]}
    call2 = {"type": "function_call", "id": "fc2", "call_id": "c2", "name": "sh", "arguments": "{}"}
    out2 = {"type": "function_call_output", "call_id": "c2", "output": "ok"}
    lines = [
        line("session_meta", {"id": "s1"}),
        line("event_msg", {"type": "agent_reasoning", "id": "u2", "text": "takes u2"}),
        line("response_item", msg("u1", "user", "first")),
        line("response_item", msg("u2", "user", "second, its id taken")),
        line("response_item", call),
        line("response_item", out),
        line("response_item", reason),
        line("response_item", call2),
        line("response_item", out2),
        line("event_msg", {"type": "agent_reasoning", "id": "t9", "text": "takes t9"}),
        line("response_item", msg("d1", "user", "dup")),
        line("response_item", msg("t9", "user", "dup")),  # (seq 11: kept by its id, not d1 by content)
        line("response_item", msg("b1", "user", "same")),  # (seq 12: kept by content)
        line("response_item", msg(None, "user", "same")),  # (line 14: its id is its line's, L14, not its item's)
        line("response_item", msg("a1", "assistant", "summary")),
        line("compacted", {"message": "summary", "replacement_history": [msg("u1", "user", "first"), call, out, reason, msg("t9", "user", "dup"), msg("L14", "user", "same"), msg(None, "user", "same"), msg(None, "user", "summary")]}),
        line("response_item", msg("u3", "user", "third")),
        line("response_item", msg("u4", "user", "fourth")),
        line("event_msg", {"type": "thread_rolled_back", "num_turns": 1}),
        line("compacted", {"message": "again", "replacement_history": [msg("u3", "user", "third"), call2, msg("u2", "user", "second, its id taken"), msg("L14", "user", "same"), msg("x", "user", "again")]}),
        line("response_item", msg("u5", "user", "fifth")),
        line("compacted", {"message": "legacy"}),
    ]
    f = tmp_path / "rollout.jsonl"
    f.write_text("\n".join(lines) + "\n")
    led = load(str(f))
    whole = codex.build(parse_bytes(f.read_bytes())[0], None)
    cps = [r.checkpoint for r in led.records if r.checkpoint is not None]
    assert len(cps) == 3
    assert [c.replacement for c in cps] == [r.checkpoint.replacement for r in whole.records if r.checkpoint is not None]
    assert [(r.id, r.runtime_visible) for r in led.records] == [(r.id, r.runtime_visible) for r in whole.records]
    kept = [[h.seq for h in c.replacement or []] for c in cps]
    assert kept[0][:7] == [2, 4, 5, 6, 11, 12, 13] and kept[1][:4] == [16, 7, 3, 12]  # (by id and by content; restored)


def test_a_rollouts_lines_read_a_block_at_a_time_are_the_lines_iterating_it_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`codex._blocks` (the lines a block at a time, read with pread, or from a file without a
    descriptor; a block's last line cut and read again as the next one's first) gives the lines
    iterating the file gives, to any stop, whatever the block size: lines longer than a block, a
    lone CR, no newline at the end, non-ASCII and invalid UTF-8; each block says truly whether it
    is ASCII. And a rollout loaded with tiny blocks maps as the whole build does, to any line."""
    import io
    import random

    rng = random.Random(15)
    pieces = [b"a", b"\r", b"\xc3\xa9", b"\xff", b" " * 70, b"{}", b"\n", b"\n", b"\n"]
    cases = [b"", b"\n", b"no newline", b"x" * 200 + b"\n" + b"y" * 3]
    cases += [b"".join(rng.choice(pieces) for _ in range(rng.randrange(1, 300))) for _ in range(60)]
    for k, data in enumerate(cases):
        f = tmp_path / f"c{k}"
        f.write_bytes(data)
        for size in (1, 2, 3, 7, 64, 1 << 16):
            monkeypatch.setattr(codex, "_BLOCK_BYTES", size)
            for stop in {len(data), len(data) // 2, len(data) + 5}:
                want = io.BytesIO(data[:stop]).readlines()
                with open(f, "rb") as g:
                    blocks = list(codex._blocks(g, 0, stop))
                got = [ln for lines, _ in blocks for ln in lines]
                plain = [ln for lines, _ in codex._blocks(io.BytesIO(data), 0, stop) for ln in lines]  # (no descriptor)
                assert got == plain == want, (k, size, stop)
            with open(f, "rb") as g:
                assert all(ascii == lines.getvalue().isascii() for lines, ascii in codex._blocks(g, 0, len(data)))  # type: ignore[attr-defined]
    f = tmp_path / "rollout.jsonl"
    lines = [*EDGES, _item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "long " * 40}]})]
    f.write_bytes(("\n".join(lines) + "\n").encode().replace("caf\xe9".encode(), b"caf\xe9") + b'{"timestamp": "t", "type": "event_msg", "payl')
    for size in (1, 50, 333):
        monkeypatch.setattr(codex, "_BLOCK_BYTES", size)
        _same_as_whole_build(f)
        for at in (1, 7, len(lines)):
            led = load(str(f), upto_line=at)
            whole = codex.build(parse_bytes(b"".join(f.read_bytes().splitlines(keepends=True)[:at]))[0], None)
            assert _fields_of(led) == _fields_of(whole) and [d.message for d in led.diagnostics] == [d.message for d in whole.diagnostics]
