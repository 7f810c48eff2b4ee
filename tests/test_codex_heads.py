"""The Codex head path (`codex._read`: a line's record from its `codex_heads` head, its payload
left in the file) against the whole build of the same lines, on every field of every line kind the
heads map set to every JSON type, removed, and beside an unknown key: a line the head takes must
map exactly as the whole line does (diagnostics, usage, ids, routes, history keys), and any other
must be left to the whole-line path."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests.field_mutations import NUMBER_MARKERS, mutated, raw_numbers

from .test_codex_load import _same_as_whole_build

# One value of every JSON type, and the edges the head decoder must judge as the builder does.
VALUES: list[Any] = [
    None, True, False, 0, -1, 7, 1.5, -0.0, 2**70, "", "x", "L2", "L3", "message", "user", "assistant", "token_count",
    "thread_rolled_back", "2026-01-01T00:00:00Z", [], [1], [{"type": "input_text", "text": "t"}], {}, {"a": 1},
    *NUMBER_MARKERS,
]
SEED = 20261202
TS = "2026-01-01T00:00:00Z"


def _line(t: str, payload: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"timestamp": TS, "type": t, "payload": payload, **top}


HEADER = _line("session_meta", {"id": "s1", "cwd": "/x", "model_provider": "openai"})
TURN = _line("turn_context", {"model": "gpt-a", "summary": "auto"})
USER = _line("response_item", {"type": "message", "role": "user", "id": "u1", "content": [{"type": "input_text", "text": "hi"}]})
REASONING = _line(
    "response_item", {"type": "reasoning", "id": "r1", "summary": [{"type": "summary_text", "text": "think"}], "encrypted_content": "e"}
)
CALL = _line("response_item", {"type": "function_call", "name": "shell", "call_id": "c1", "arguments": "{\"cmd\": 1}", "status": "done"})
OUTPUT = _line("response_item", {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "oops"}]})
ASSISTANT = _line(
    "response_item",
    {"type": "message", "role": "assistant", "id": "a1", "content": [{"type": "output_text", "text": "done"}], "phase": "final_answer"},
    metadata={"compaction_output": False},
)
TOKENS = _line(
    "event_msg",
    {"type": "token_count", "info": {"last_token_usage": {"input_tokens": 70, "cached_input_tokens": 10, "output_tokens": 9}, "model_context_window": 1000}},
)
# A token count without a window, after each mutant (the settings' window is the last one reported).
PLAIN_TOKENS = _line("event_msg", {"type": "token_count", "info": {"last_token_usage": {"input_tokens": 80, "output_tokens": 3}}})
ROLLBACK = _line("event_msg", {"type": "thread_rolled_back", "num_turns": 1})
USAGE_RECORD = _line("token_usage_record", {"usage": {"input_tokens": 5, "output_tokens": 1}})
GHOST = _line("response_item", {"type": "ghost_snapshot", "ghost_commit": {"id": "g"}})
WEB = _line("response_item", {"type": "web_search_call", "id": "ws1", "status": "completed", "action": {"type": "search", "query": "q"}})
SUMMARY_ITEM = _line("response_item", {"type": "compaction", "encrypted_content": "enc"})
# What follows each mutated line: a reply its usage goes to, the summarizer's reply (its usage is
# not the checkpoint's tokens_before), and a checkpoint that matches the history by id and content
# (so a mutated key or id that maps differently shows in its retains).
TAIL = [
    ASSISTANT,
    PLAIN_TOKENS,
    _line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "SUM"}]}, metadata={"compaction_output": True}),
    _line("event_msg", {"type": "token_count", "info": {"last_token_usage": {"input_tokens": 900, "output_tokens": 30}}}),
    _line(
        "compacted",
        {
            "message": "SUM",
            "replacement_history": [
                USER["payload"], REASONING["payload"], CALL["payload"], OUTPUT["payload"], WEB["payload"],
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "SUM"}]},
            ],
        },
    ),
    USER,
]  # fmt: skip

# Each line kind the heads map, and the places (path, key) of its fields.
_PAYLOAD = ("payload",)
BASES: dict[str, tuple[dict[str, Any], list[tuple[tuple[Any, ...], str]]]] = {
    "user": (USER, [((), "type"), ((), "timestamp"), ((), "payload"), ((), "id"), *[(_PAYLOAD, k) for k in ("type", "role", "id", "content", "phase", "zz")],
                    (("payload", "content", 0), "text"), (("payload", "content", 0), "type")]),
    "reasoning": (REASONING, [(_PAYLOAD, k) for k in ("type", "id", "summary", "content", "encrypted_content", "zz")] + [(("payload", "summary", 0), "text")]),
    "call": (CALL, [(_PAYLOAD, k) for k in ("type", "name", "call_id", "arguments", "id", "status", "replacement_history")]),
    "output": (OUTPUT, [(_PAYLOAD, k) for k in ("type", "call_id", "output", "id")] + [(("payload", "output", 0), "type"), (("payload", "output", 0), "text")]),
    "assistant": (ASSISTANT, [((), "metadata"), (("metadata",), "compaction_output"), *[(_PAYLOAD, k) for k in ("role", "phase", "content", "id")]]),
    "tokens": (TOKENS, [((), "type"), (_PAYLOAD, "type"), (_PAYLOAD, "info"), (_PAYLOAD, "id"), (("payload", "info"), "last_token_usage"),
                        (("payload", "info"), "model_context_window"), (("payload", "info", "last_token_usage"), "input_tokens"),
                        (("payload", "info", "last_token_usage"), "cached_input_tokens"), (("payload", "info", "last_token_usage"), "output_tokens"),
                        (("payload", "info", "last_token_usage"), "cache_write_input_tokens")]),
    "rollback": (ROLLBACK, [(_PAYLOAD, "type"), (_PAYLOAD, "num_turns"), (_PAYLOAD, "message")]),
    "turn": (TURN, [((), "type"), (_PAYLOAD, "model"), (_PAYLOAD, "model_provider"), (_PAYLOAD, "summary"), (_PAYLOAD, "base_instructions")]),
    "usage_record": (USAGE_RECORD, [(_PAYLOAD, "usage"), (("payload", "usage"), "input_tokens"), (("payload", "usage"), "output_tokens")]),
    "ghost": (GHOST, [(_PAYLOAD, "type"), (_PAYLOAD, "ghost_commit"), (_PAYLOAD, "role")]),
    "web": (WEB, [(_PAYLOAD, k) for k in ("type", "id", "status", "action", "role", "content")] + [((), "metadata")]),
    "summary_item": (SUMMARY_ITEM, [(_PAYLOAD, k) for k in ("type", "encrypted_content", "id", "summary")]),
}  # fmt: skip


def _mutations(base: dict[str, Any], places: list[tuple[tuple[Any, ...], str]]) -> list[dict[str, Any]]:
    return mutated(base, places, VALUES)


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text(raw_numbers("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in lines)))
    return path


@pytest.mark.parametrize("kind", sorted(BASES))
def test_every_mutation_of_a_line_loads_as_the_whole_build_maps_it(tmp_path: Path, kind: str) -> None:
    base, places = BASES[kind]
    muts = _mutations(base, places)
    assert len(muts) > 50
    # Every mutant in one rollout (each after a reply its usage would go to, and followed by another
    # and a token count; a checkpoint at the end), then each in a file of its own, where no
    # neighbour hides a difference (in a seeded order).
    body: list[dict[str, Any]] = [HEADER, TURN, USER, REASONING, CALL, OUTPUT]
    for m in muts:
        body += [ASSISTANT, m, ASSISTANT, PLAIN_TOKENS]
    _same_as_whole_build(_write(tmp_path / "all.jsonl", [*body, *TAIL]))
    random.Random(f"{SEED}-{kind}").shuffle(muts)
    for i, m in enumerate(muts):
        _same_as_whole_build(_write(tmp_path / f"one-{i}.jsonl", [HEADER, TURN, USER, REASONING, CALL, OUTPUT, ASSISTANT, m, *TAIL]))


def test_the_head_path_takes_the_clean_lines(tmp_path: Path) -> None:
    """The clean examples load from their heads (their payload left in the file: the roll-back
    reads the user message's)."""
    from inspector.formats import load

    f = _write(tmp_path / "r.jsonl", [HEADER, TURN, USER, REASONING, CALL, OUTPUT, ASSISTANT, TOKENS, ROLLBACK, USAGE_RECORD, GHOST, WEB, SUMMARY_ITEM])
    led = load(str(f))
    assert [r._source is not None for r in led.records] == [False, *[True] * 12]
    _same_as_whole_build(f)


def test_a_line_id_is_its_number_formatted() -> None:
    """`codex.line_id_stream`: f"L{line}" for the lines 1, 2, 3, ..., each thousand's made at once
    (`_thousand_ids`), far ones too."""
    from itertools import islice

    from inspector.formats.codex import _thousand_ids, line_id_stream

    assert list(islice(line_id_stream(), 30_500)) == [f"L{i}" for i in range(1, 30_501)]
    for k in (999, 1000, 9999, 10_000, 123_456):
        assert list(_thousand_ids(k)) == [f"L{1000 * k + i}" for i in range(1000)]


def test_the_ids_of_a_long_rollout_are_the_whole_builds(tmp_path: Path) -> None:
    """Lines past the first thousands (their ids made a thousand at a time in `codex._read`) get
    the ids the whole build gives them: items without ids of their own, and meta lines."""
    body: list[dict[str, Any]] = [HEADER, TURN]
    plain_user = _line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]})
    plain_reasoning = _line("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "e"})
    while len(body) < 2600:
        body += [plain_user, plain_reasoning, CALL, OUTPUT, PLAIN_TOKENS, TURN, GHOST]
    led = _same_as_whole_build(_write(tmp_path / "long.jsonl", body))
    assert [r.id for r in led.records][995:1005] == [f"L{i}" for i in range(996, 1006)]  # type: ignore[attr-defined]


def test_a_long_rollout_read_up_to_a_line_stops_at_that_line(tmp_path: Path) -> None:
    """`--at LINE` past the first thousands (one test a line in `codex._read` for both the line
    limit and a new thousand's ids): the rollout read up to line k is the file of its first k lines."""
    from inspector.formats import load

    from .test_codex_load import _fields_of

    body: list[dict[str, Any]] = [HEADER, TURN]
    while len(body) < 2600:
        body += [USER, REASONING, CALL, OUTPUT, PLAIN_TOKENS, TURN, GHOST]
    f = _write(tmp_path / "long.jsonl", body)
    lines = f.read_bytes().splitlines(keepends=True)
    for k in (1, 999, 1000, 1001, 1999, 2000, 2001, 2500):
        first = tmp_path / f"first-{k}.jsonl"
        first.write_bytes(b"".join(lines[:k]))
        led = load(str(f), upto_line=k)
        assert led.records[-1].line == k
        assert _fields_of(led) == _fields_of(load(str(first)))


def test_a_cut_line_read_up_to_it_is_the_last_line_only_where_the_file_ends(tmp_path: Path) -> None:
    """`--at LINE` on a cut line (`codex._read` reads the lines as a slice, then one line more to
    know): diagnosed as the whole file's read diagnoses that line when more lines follow it (not
    the last line: invalid JSON), as the last line (truncated) only where the file ends there."""
    from inspector.formats import load

    body: list[dict[str, Any]] = [HEADER, TURN]
    while len(body) < 1200:
        body += [USER, CALL, OUTPUT, PLAIN_TOKENS]
    lines = _write(tmp_path / "r.jsonl", body).read_bytes().splitlines(keepends=True)

    def diags(led: Any, k: int) -> list[tuple[str, str]]:
        return [(d.problem, d.message) for d in led.diagnostics if d.line == k]

    for k in (5, 1000, 1001):
        cut = [*lines[: k - 1], lines[k - 1][:40], *lines[k:]]
        f = tmp_path / f"cut-{k}.jsonl"
        f.write_bytes(b"".join(cut))
        whole = diags(load(str(f)), k)
        assert whole and whole[0][1].startswith(f"line {k}:")
        assert diags(load(str(f), upto_line=k), k) == whole
        ends = tmp_path / f"ends-{k}.jsonl"
        ends.write_bytes(b"".join(cut[:k]))
        last = diags(load(str(ends)), k)
        assert last != whole
        assert diags(load(str(ends), upto_line=k), k) == last


def test_a_reply_after_the_provider_changes_takes_the_new_route(tmp_path: Path) -> None:
    """A head-read reply's route is taken again where the provider alone changes (a header read
    after the first replies), as the whole build gives it (`_Builder._route`)."""
    reply = _line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]})
    led = _same_as_whole_build(_write(tmp_path / "late-header.jsonl", [TURN, reply, PLAIN_TOKENS, HEADER, reply, PLAIN_TOKENS, TURN, reply]))
    routes = [r.message.route for r in led.records if r.kind == "message"]  # type: ignore[attr-defined]
    assert [(x.model_id, x.connection_id) for x in routes] == [("gpt-a", None), ("gpt-a", "openai"), ("gpt-a", "openai")]


def test_a_records_seq_is_its_place_where_a_line_makes_no_record_or_two(tmp_path: Path) -> None:
    """`codex._read` gives a line's record the previous line's number object as its seq while
    every line so far made one record: a blank line (no record), two objects glued on one line
    (two records) and a line the head declines (parsed whole, one line behind) each move the
    records off their lines, and the seqs stay the records' places, as the whole build gives them.
    Where records and lines align the seq is shared (the memory the fast path saves)."""
    head = [HEADER, TURN, USER, REASONING, CALL, OUTPUT, ASSISTANT, TOKENS] + [TURN, PLAIN_TOKENS] * 150  # (ints past 256: not cached)
    after = [TURN, USER, CALL, OUTPUT, ASSISTANT, PLAIN_TOKENS, GHOST]
    text = "".join(json.dumps(o) + "\n" for o in head)
    text += "\n"  # a blank line: no record
    text += "".join(json.dumps(o) + "\n" for o in after)
    text += json.dumps(TURN) + json.dumps(PLAIN_TOKENS) + "\n"  # glued: two records on one line
    text += "".join(json.dumps(o) + "\n" for o in after)
    text += json.dumps(_line("no_such_line_type", {"x": 1})) + "\n"  # parsed whole
    text += "".join(json.dumps(o) + "\n" for o in after)
    f = tmp_path / "off.jsonl"
    f.write_text(text)
    led = _same_as_whole_build(f)
    recs = led.records  # type: ignore[attr-defined]
    assert [r.seq for r in recs] == list(range(len(recs)))
    assert all(recs[i].seq is recs[i - 1].line for i in range(2, len(head)))
    assert recs[len(head)].line == len(head) + 2 and recs[-1].line == len(recs)  # (one line without a record, one with two)
    assert len({id(r.type) for r in recs[: len(head)] if r.type == "turn_context"}) == 1  # (one string, not each line's copy)


def test_an_output_answering_the_last_call_keeps_the_calls_id_string(tmp_path: Path) -> None:
    """`_Builder._head_item`: an output's result id is the last call's id string (one string less
    per output) when it answers that call; an output answering an earlier call (parallel calls)
    keeps its own, equal to that call's."""
    call2 = _line("response_item", {**CALL["payload"], "call_id": "c2"})
    output2 = _line("response_item", {**OUTPUT["payload"], "call_id": "c2"})
    led = _same_as_whole_build(_write(tmp_path / "calls.jsonl", [HEADER, TURN, USER, CALL, call2, output2, OUTPUT, ASSISTANT]))
    recs = led.records  # type: ignore[attr-defined]
    assert [(r.call_ids, r.result_id) for r in recs[3:7]] == [(("c1",), None), (("c2",), None), ((), "c2"), ((), "c1")]
    assert recs[5].result_id is recs[4].call_ids[0]


def test_a_checkpoint_keeps_the_item_its_replacement_names_by_id_among_equal_ones(tmp_path: Path) -> None:
    """`_Builder._index`: two head-read user messages of the same text; the replacement history
    repeats the second's id, so the checkpoint keeps that one (by id), not the first of equal
    content (`_index_keys`, which reads no id, only serves a replacement without ids); without
    an id it keeps the first."""
    def user(iid: str | None) -> dict[str, Any]:
        item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "same"}]}
        return _line("response_item", {**item, "id": iid} if iid else item)

    for named, kept in (("u2", "u2"), (None, "u1")):
        rh = [user(named)["payload"], {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "summary"}]}]
        cp = _line("compacted", {"message": "summary", "replacement_history": rh})
        led = _same_as_whole_build(_write(tmp_path / f"ids-{kept}.jsonl", [HEADER, TURN, user("u1"), ASSISTANT, user("u2"), ASSISTANT, cp]))
        (rec,) = [r for r in led.records if r.kind == "checkpoint"]  # type: ignore[attr-defined]
        assert rec.checkpoint.explicit_retains == [kept]


def test_a_replys_usage_is_read_from_its_token_count_line_with_the_message(tmp_path: Path) -> None:
    """A lazily-read reply keeps only the offset of the token count that reported its usage
    (`_Fields.usages`), read again with the message: the whole build's usage; the file changed
    since (that line no longer a token count): no usage, never a crash."""
    f = _write(tmp_path / "u.jsonl", [HEADER, TURN, USER, ASSISTANT, TOKENS])
    led = _same_as_whole_build(f)
    reply = led.records[3]  # type: ignore[attr-defined]
    assert reply._source.usages[reply.seq] is led.records[4].offset  # type: ignore[attr-defined]
    from inspector.formats import load

    led = load(str(f))
    lines = f.read_bytes().splitlines(keepends=True)
    f.write_bytes(b"".join(lines[:4]) + b" " * (len(lines[4]) - 1) + b"\n")
    assert led.records[3].message.usage is None  # type: ignore[attr-defined]


def test_a_call_with_an_empty_call_id_is_kept_by_the_checkpoint_repeating_it(tmp_path: Path) -> None:
    """`_Builder._head_item`: a call whose call id is empty has no call ids on its record, so its
    history key (the item type and the empty id) is kept apart; a replacement history repeating the
    call keeps its record, as the whole build does: a function call (the common shapes, tested
    first) and a custom tool call (`_other_item`)."""
    for kind in ("function_call", "custom_tool_call"):
        call = _line("response_item", {"type": kind, "name": "shell", "call_id": "", "arguments": "{}", "input": "x"})
        rh = [USER["payload"], call["payload"], {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "SUM"}]}]
        cp = _line("compacted", {"message": "SUM", "replacement_history": rh})
        led = _same_as_whole_build(_write(tmp_path / f"{kind}.jsonl", [HEADER, TURN, USER, call, ASSISTANT, cp]))
        (rec,) = [r for r in led.records if r.kind == "checkpoint"]  # type: ignore[attr-defined]
        assert rec.checkpoint.explicit_retains == ["u1", "L4"]
