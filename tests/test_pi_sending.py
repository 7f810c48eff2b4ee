"""What pi cannot open or send (`inspector/formats/pi_sending.py`), as the real pi showed it
(`tests/test_pi_line_rule.py` holds the same rules to the real pi; these need no runtime).

pi checks no types: a line that is JSON null stops its loader; a message entry without a message
on the active path stops it opening the session; a message whose content pi-ai cannot convert stops
every request while the message is in it (an answer dropped for its stop reason included: it is
converted first), and nothing while it is summarized away or beside the path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.formats import load, load_bytes
from inspector.ledger.jsontext import UNDEFINED, js_string

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-03-01T10:00:00Z", "cwd": "/w"}
WHEN = "2026-03-01T10:00:01Z"


def _msg(rid: str, parent: str | None, message: Any) -> dict[str, Any]:
    return {"type": "message", "id": rid, "parentId": parent, "timestamp": WHEN, "message": message}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def _reply(content: Any, stop: str = "stop") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "p",
        "model": "m",
        "stopReason": stop,
        "timestamp": 2,
    }


def _session(
    tmp: Path,
    x: dict[str, Any] | None,
    *,
    summarized: bool = False,
    beside: bool = False,
    raw: bytes | None = None,
) -> Path:
    """u1, a1, then X (the entry under test) and u2 under it: X in the next request; with SUMMARIZED,
    a compaction after X keeps nothing before it; BESIDE: u2 hangs under a1, X off the path."""
    entries: list[Any] = [
        HEADER,
        _msg("u1", None, _user("first")),
        _msg("a1", "u1", _reply([{"type": "text", "text": "answer"}])),
    ]
    last = "a1"
    if x is not None:
        entries.append({**x, "id": "x", "parentId": "a1"})
        last = "a1" if beside else "x"
    if summarized:
        entries.append(
            {
                "type": "compaction",
                "id": "c1",
                "parentId": last,
                "timestamp": WHEN,
                "summary": "S",
                "firstKeptEntryId": "u2",
                "tokensBefore": 9,
            }
        )
        last = "c1"
    entries.append(_msg("u2", last, _user("next")))
    lines = [json.dumps(e).encode() for e in entries]
    if raw is not None:
        lines.insert(3, raw)
    f = tmp / "s.jsonl"
    f.write_bytes(b"\n".join(lines) + b"\n")
    return f


def _errors(f: Path) -> list[tuple[str, str]]:
    report = analyze(load(str(f)))
    same = analyze(load_bytes(f.read_bytes(), str(f), fmt="pi"))  # the whole parse says the same as the index
    assert [(x.code, x.message) for x in same.findings] == [(x.code, x.message) for x in report.findings]
    return [(x.code, x.message) for x in report.findings if x.code in ("request_fails", "resume_refused")]


def _sent_ids(f: Path) -> list[str | None]:
    return [it.record_id for it in analyze(load(str(f))).context]


def test_a_line_that_is_json_null_means_pi_cannot_open_the_session(tmp_path: Path) -> None:
    f = _session(tmp_path, None, raw=b"null")
    errors = _errors(f)
    assert [c for c, _ in errors] == ["resume_refused"]
    assert "line 4: the line is JSON null" in errors[0][1] and "cannot open this session" in errors[0][1]
    assert _sent_ids(f) == ["u1", "a1", "u2"]  # the rest loads (the path goes on past the null line)
    # Any other value that is not an object is an entry pi ignores.
    assert [c for c, _ in _errors(_session(tmp_path, None, raw=b"[1]"))] == []


UNSENDABLE: dict[str, dict[str, Any]] = {
    "user content a number": _msg("", "", {"role": "user", "content": 5}),
    "user content null": _msg("", "", {"role": "user", "content": None}),
    "user content missing": _msg("", "", {"role": "user"}),
    "user content an object": _msg("", "", {"role": "user", "content": {"type": "text", "text": "t"}}),
    "user block null": _msg("", "", {"role": "user", "content": [None]}),
    "user text a number": _msg("", "", {"role": "user", "content": [{"type": "text", "text": 5}]}),
    "user text missing": _msg("", "", {"role": "user", "content": [{"type": "text"}]}),
    "custom content a number": _msg("", "", {"role": "custom", "customType": "c", "content": 5}),
    "custom_message content null": {
        "type": "custom_message",
        "timestamp": WHEN,
        "customType": "c",
        "content": None,
    },
    "reply content a string": _msg("", "", _reply("text")),
    "reply content null": _msg("", "", _reply(None)),
    "reply block null": _msg("", "", _reply([None])),
    "reply text null": _msg("", "", _reply([{"type": "text", "text": None}])),
    "reply thinking a number": _msg("", "", _reply([{"type": "thinking", "thinking": 5}])),
    "errored reply content null": _msg("", "", _reply(None, "error")),
    "result content null": _msg(
        "", "", {"role": "toolResult", "toolCallId": "c", "toolName": "t", "content": None}
    ),
    "result content a number": _msg(
        "", "", {"role": "toolResult", "toolCallId": "c", "toolName": "t", "content": 5}
    ),
    "result block null": _msg(
        "", "", {"role": "toolResult", "toolCallId": "c", "toolName": "t", "content": [None]}
    ),
}

SENDABLE: dict[str, dict[str, Any]] = {
    "user content a string": _msg("", "", {"role": "user", "content": "t"}),
    "user block a string": _msg("", "", {"role": "user", "content": ["t", {"type": "text", "text": "t"}]}),
    "user block of no known type": _msg("", "", {"role": "user", "content": [{"type": "probe", "text": 5}]}),
    "custom content a string": _msg("", "", {"role": "custom", "customType": "c", "content": "t"}),
    "reply thinking null or 0": _msg(
        "",
        "",
        _reply(
            [
                {"type": "thinking", "thinking": None},
                {"type": "thinking", "thinking": 0},
                {"type": "text", "text": "a"},
            ]
        ),
    ),
    "reply block a number": _msg("", "", _reply([5, {"type": "text", "text": "a"}])),
    "result content a string": _msg(
        "", "", {"role": "toolResult", "toolCallId": "c", "toolName": "t", "content": "t"}
    ),
    "result text a number": _msg(
        "",
        "",
        {"role": "toolResult", "toolCallId": "c", "toolName": "t", "content": [{"type": "text", "text": 5}]},
    ),
    "message a string": {"type": "message", "timestamp": WHEN, "message": "t"},
}


@pytest.mark.parametrize("name", list(UNSENDABLE))
def test_a_message_pi_ai_cannot_convert_stops_every_request_it_is_in(tmp_path: Path, name: str) -> None:
    errors = _errors(_session(tmp_path, UNSENDABLE[name]))
    assert [c for c, _ in errors] == ["request_fails"], errors
    assert (
        errors[0][1].startswith("line 4: ")
        and "TypeError" in errors[0][1]
        and "is in the next request" in errors[0][1]
    )
    # Summarized away, or beside the path, it is never converted: nothing stops.
    assert _errors(_session(tmp_path, UNSENDABLE[name], summarized=True)) == []
    assert _errors(_session(tmp_path, UNSENDABLE[name], beside=True)) == []


def test_the_headline_says_pi_sends_nothing(tmp_path: Path) -> None:
    """The one sentence read first: not "next request: N items" for a session pi sends nothing of."""
    from inspector.analysis.export import summary_line

    stuck = summary_line(analyze(load(str(_session(tmp_path, UNSENDABLE["user content a number"])))))
    assert "pi sends nothing (request_fails); the request as written: 4 items" in stuck, stuck
    fine = summary_line(analyze(load(str(_session(tmp_path, SENDABLE["user content a string"])))))
    assert "sends nothing" not in fine and "next request: 4 items" in fine, fine


@pytest.mark.parametrize("name", list(SENDABLE))
def test_a_message_pi_ai_converts_stops_nothing(tmp_path: Path, name: str) -> None:
    assert _errors(_session(tmp_path, SENDABLE[name])) == []


@pytest.mark.parametrize("message", [None, "missing"])
def test_a_message_entry_without_a_message_stops_pi_opening_the_session_while_it_is_on_the_path(
    tmp_path: Path, message: Any
) -> None:
    x = {"type": "message", "timestamp": WHEN} | ({} if message == "missing" else {"message": None})
    errors = _errors(_session(tmp_path, x))
    assert [c for c, _ in errors] == ["request_fails"] and "is on the active path" in errors[0][1]
    # summarized, it is still on the path pi walks when it opens the session
    assert [c for c, _ in _errors(_session(tmp_path, x, summarized=True))] == ["request_fails"]
    assert _errors(_session(tmp_path, x, beside=True)) == []


def test_a_message_with_no_content_at_all_is_left_out_of_the_request(tmp_path: Path) -> None:
    for x in (
        _msg("", "", {"role": "user", "content": []}),
        {"type": "custom_message", "timestamp": WHEN, "customType": "c", "content": []},
        _msg("", "", _reply([])),
    ):
        f = _session(tmp_path, x)
        assert _sent_ids(f) == ["u1", "a1", "u2"], x
        assert _errors(f) == []
    # (an answer with content, and a user's empty text, are sent)
    assert _sent_ids(_session(tmp_path, _msg("", "", _reply([{"type": "text", "text": "a"}])))) == [
        "u1",
        "a1",
        "x",
        "u2",
    ]
    assert _sent_ids(_session(tmp_path, _msg("", "", _user("")))) == ["u1", "a1", "x", "u2"]


def test_a_second_session_header_is_no_entry_pi_walks_through_nor_its_leaf(tmp_path: Path) -> None:
    header = {**HEADER, "id": "x"}
    f = _session(tmp_path, header)
    assert _sent_ids(f) == ["u2"]  # u2's parent, the second header, is not indexed: the path stops
    # Written last, it is not the leaf either: the entry before it is (session-manager.js:511-515).
    f = _session(tmp_path, header, beside=True)
    h, u1, a1, x, u2 = f.read_bytes().splitlines()
    f.write_bytes(b"\n".join([h, u1, a1, u2, x]) + b"\n")
    led = load(str(f))
    assert led.records[led.leaf_seq].id == "u2"
    assert _sent_ids(f) == ["u1", "a1", "u2"]


# String(value) in node 20 for each (checked there; tests/test_pi_line_rule.py runs the real pi).
JS_STRINGS = [
    (5, "5"),
    (1.5, "1.5"),
    (0.1, "0.1"),
    (1e21, "1e+21"),
    (1e-7, "1e-7"),
    (0.000001, "0.000001"),
    (-2.5, "-2.5"),
    (1e20, "100000000000000000000"),
    (3.0, "3"),
    (8.802085690828712e20, "880208569082871200000"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    ([1, None, [2, 3]], "1,,2,3"),
    ({"a": 1}, "[object Object]"),
    (True, "true"),
    (None, "null"),
    (UNDEFINED, "undefined"),
    ("x", "x"),
    (-0.0, "0"),
    (123456789012345678901234, "1.2345678901234569e+23"),
]


@pytest.mark.parametrize(("value", "text"), JS_STRINGS)
def test_a_value_written_into_text_as_javascript_writes_it(value: Any, text: str) -> None:
    assert js_string(value) == text


def test_a_summary_message_of_no_text_is_sent_as_pi_writes_it(tmp_path: Path) -> None:
    for summary, text in ((None, "null"), (UNDEFINED, "undefined")):
        m = {"role": "compactionSummary", "tokensBefore": 1} | (
            {} if summary is UNDEFINED else {"summary": summary}
        )
        f = _session(tmp_path, _msg("", "", m))
        report = analyze(load(str(f)))
        (item,) = [it for it in report.context if it.record_id == "x"]
        assert (
            report.ledger.records[item.seq].message.text()
            == f"The conversation history before this point was compacted into the following summary:\n\n<summary>\n{text}\n</summary>"
        )


@pytest.mark.parametrize("name", ["user text missing", "reply content null", "message null"])
def test_an_appended_entry_pi_fails_on_is_followed_as_a_full_read_says_it(tmp_path: Path, name: str) -> None:
    """The live follower grows a ledger from appended lines: one pi cannot send or open must reach
    the analysis as a full read's does (its extension had dropped the note: `python -m tests.fuzz_live`
    seed 74 found it)."""
    from inspector.live.incremental import Follower
    from tests.test_incremental import followed_json, full_json

    x = UNSENDABLE.get(name) or {"type": "message", "timestamp": WHEN, "message": None}
    f = _session(tmp_path, None)
    fol = Follower(str(f))
    fol.poll()
    with open(f, "ab") as out:
        out.write(json.dumps({**x, "id": "x2", "parentId": "u2"}).encode() + b"\n")
    fol.poll()
    assert followed_json(fol) == full_json(str(f), str(f))
    assert b"request_fails" in followed_json(fol)


def _long_session(tmp: Path, x: dict[str, Any], turns: int = 12) -> Path:
    """Turns of a user's question and an answer, X among the recent ones (within any keep-recent
    tail), then two more turns."""
    entries: list[Any] = [HEADER]
    parent = None
    for n in range(turns):
        for rid, m in (
            (f"u{n}", _user(f"question {n} " + "word " * 200)),
            (f"a{n}", _reply([{"type": "text", "text": f"answer {n} " + "word " * 200}])),
        ):
            entries.append(_msg(rid, parent, m))
            parent = rid
        if n == turns - 3:
            entries.append({**x, "id": "x", "parentId": parent})
            parent = "x"
    f = tmp / "long.jsonl"
    f.write_bytes(b"\n".join(json.dumps(e).encode() for e in entries) + b"\n")
    return f


@pytest.mark.parametrize("strategy", ["compact", "resummarize", "recover"])
def test_a_repair_of_a_session_pi_cannot_send_leaves_what_it_fails_on_out_of_the_request(
    tmp_path: Path, strategy: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stuck session (every request fails on one message): the repair's retained tail starts
    after that message, which the summary (or the recovery) stands for instead, so the repaired
    session can be sent; the plan says why."""
    from inspector.cli.main import main

    f = _long_session(tmp_path, UNSENDABLE["user content a number"])
    assert [c for c, _ in _errors(f)] == ["request_fails"]
    budget = ["--window", "100000", "--reserve", "4096", "--keep-recent", "20000"]
    assert main(["plan", str(f), "--strategy", strategy, *budget, "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert any("fails on line" in n and "the retained tail starts after it" in n for n in planned["notes"]), (
        planned["notes"]
    )
    out = tmp_path / f"repaired-{strategy}.jsonl"
    assert main(["repair", str(f), "--strategy", strategy, *budget, "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    assert _errors(out) == []
    assert "x" not in _sent_ids(out)


def test_a_session_pi_cannot_open_is_not_repaired_by_a_compaction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A message entry without a message on the path (pi reads every one's role when it opens the
    session, summarized or not) or a line that is JSON null: a compaction appended under the leaf
    changes neither, so `repair` refuses, saying why, and writes nothing."""
    from inspector.cli.main import main

    for f in (
        _long_session(tmp_path, {"type": "message", "timestamp": WHEN, "message": None}),
        _session(tmp_path, None, raw=b"null"),
    ):
        before = f.read_bytes()
        code = main(
            ["repair", str(f), "--strategy", "compact", "--window", "100000", "--reserve", "4096", "--write"]
        )
        err = capsys.readouterr().err
        assert code == 2 and "pi cannot open this session" in err, err
        assert f.read_bytes() == before
        # The dry run says so too.
        assert main(["plan", str(f), "--strategy", "compact", "--window", "100000", "--reserve", "4096", "--json"]) == 0
        notes = json.loads(capsys.readouterr().out)["notes"]
        assert any(n.startswith("repair cannot write this plan: pi cannot open this session") for n in notes), notes
    # Beside the path it stops nothing, and the repair goes ahead.
    f = _session(tmp_path, {"type": "message", "timestamp": WHEN, "message": None}, beside=True)
    assert (
        main(
            [
                "repair",
                str(f),
                "--strategy",
                "recover",
                "--window",
                "100000",
                "--reserve",
                "4096",
                "--out",
                str(tmp_path / "o.jsonl"),
            ]
        )
        == 0
    )
