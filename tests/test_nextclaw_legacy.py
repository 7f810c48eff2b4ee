"""NextClaw's legacy `sessions/<key>.jsonl` store (core's SessionStore, inspector/formats/
nextclaw_legacy.py), on files built from its own types (tests/nextclaw_store.py `LegacyStore`)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import random
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from inspector.analysis import analyze
from inspector.analysis.engine import EXCLUDED, HOLE, LIVE
from inspector.formats import load, nextclaw, nextclaw_legacy
from tests.nextclaw_store import Journal, LegacyStore

ROOT = Path(__file__).resolve().parent.parent


def request(p: Path) -> list[tuple[str, str | None]]:
    rep = analyze(load(str(p)))
    return [(it.role, it.record_id) for it in rep.context]


def test_detected_by_content_and_only_the_legacy_store(tmp_path: Path) -> None:
    s = LegacyStore()
    s.add("user", "Summarise the report")
    p = s.write(tmp_path / "sessions")
    assert nextclaw_legacy.looks_like_file(str(p)) and not nextclaw.looks_like_file(str(p))
    assert load(str(p)).format == "nextclaw_legacy"
    journal = Journal().write(tmp_path / "journal")  # the NCP journal and its sidecar are not it
    side = tmp_path / "x.metadata.json"
    side.write_text(Journal().lines[0] + "\n")
    assert not nextclaw_legacy.looks_like_file(str(journal)) and not nextclaw_legacy.looks_like_file(str(side))
    others = [o for o in sorted((ROOT / "sample_sessions").rglob("*.jsonl")) if nextclaw_legacy.looks_like_file(str(o))]
    assert others == []


def test_next_request_is_get_history_with_its_tool_call_blocks(tmp_path: Path) -> None:
    """getHistory (session.store.ts:266-288): a block whose calls are all answered is sent; one
    interrupted by another message is dropped whole, a result answering no open call is dropped,
    and so is a block still open at the end (session-history-window.utils.ts)."""
    s = LegacyStore()
    s.add("user", "Read r.md")  # event-1
    s.call("c1", "read_file", {"p": "r.md"})  # event-2
    s.result("c1", "read_file", "X")  # event-3
    s.call("c2", "grep", {"q": "y"})  # event-4: interrupted by event-5
    s.add("user", "never mind")  # event-5
    s.result("c2", "grep", "late")  # event-6: answers no open call
    s.add("assistant", "ok", reasoning_content="thinking")  # event-7
    s.call("c3", "ls", {})  # event-8: open at the end
    p = s.write(tmp_path)
    assert request(p) == [
        ("user", "event-1"),
        ("assistant", "event-2"),
        ("tool", "event-3"),
        ("user", "event-5"),
        ("assistant", "event-7"),
    ]
    rep = analyze(load(str(p)))
    dropped = [f for f in rep.findings if f.code == "dropped_tool_call"]
    assert [rep.ledger.records[f.records[0]].id for f in dropped] == ["event-4", "event-6", "event-8"]
    assert all("NextClaw's getHistory drops" in f.message for f in dropped)
    assert not [f for f in rep.findings if f.code in ("unanswered_tool_call", "orphan_tool_result")]
    assert rep.context and rep.ledger.records[6].message is not None
    assert [b.type for b in rep.ledger.records[6].message.blocks] == ["thinking", "text"]


def test_only_the_last_50_messages_are_sent(tmp_path: Path) -> None:
    s = LegacyStore()
    for i in range(53):
        s.add("user" if i % 2 == 0 else "assistant", f"m{i}")
    rep = analyze(load(str(s.write(tmp_path))))
    assert len(rep.context) == 50 and rep.context[0].record_id == "event-4"
    states = {rep.ledger.records[i].id: st for i, st in enumerate(rep.states)}
    assert [states[f"event-{n}"] for n in (1, 2, 3, 4)] == [EXCLUDED, EXCLUDED, EXCLUDED, LIVE]
    (window,) = [f for f in rep.findings if f.code == "history_window"]
    assert "3 messages (lines 2–4)" in window.message and "last 50" in window.message


def test_events_are_sent_in_seq_order_and_old_message_lines_are_read(tmp_path: Path) -> None:
    """Events sort by seq (session.store.ts:137-144); a line with no `_type` is a message written
    before events, role `assistant` when it names none (:112-135)."""
    meta = {"_type": "metadata", "created_at": "2026-08-20T09:00:00.000Z", "metadata": {}}
    lines = [
        meta,
        {"_type": "event", "seq": 2, "type": "message.assistant", "timestamp": "2026-08-20T09:00:02.000Z", "data": {"message": {"role": "assistant", "content": "two"}}},
        {"_type": "event", "seq": 1, "type": "message.user", "timestamp": "2026-08-20T09:00:01.000Z", "data": {"message": {"role": "user", "content": "one"}}},
        {"_type": "event", "seq": 3, "type": "session.renamed", "timestamp": "2026-08-20T09:00:03.000Z", "data": {"title": "x"}},
        {"content": [{"type": "text", "text": "three"}]},
    ]
    p = tmp_path / "k.jsonl"
    p.write_text("".join(json.dumps(o) + "\n" for o in lines))
    rep = analyze(load(str(p)))
    assert [(it.role, rep.ledger.records[it.seq].line) for it in rep.context if it.seq is not None] == [
        ("user", 3),
        ("assistant", 2),
        ("assistant", 5),
    ]


def test_a_line_that_does_not_parse_loses_the_session_as_nextclaw_does(tmp_path: Path) -> None:
    """One bad line makes SessionStore.load fail whole (:364-366): NextClaw starts an empty
    session under the key. Named with the file and line; every message is a hole; no traceback."""
    s = LegacyStore()
    s.add("user", "one")
    s.add("assistant", "two")
    lines = s.lines()
    lines.insert(2, '{"_type": "event", "seq": ')
    p = tmp_path / "k.jsonl"
    p.write_text("\n".join(lines) + "\n")
    rep = analyze(load(str(p)))
    assert rep.context == []
    assert [st for st in rep.states if st is not None and st == HOLE]
    msgs = {f.code: f.message for f in rep.findings}
    assert "k.jsonl: line 3: not JSON" in msgs["malformed_line"]
    assert "NextClaw fails to load this file" in msgs["hole"]
    out = subprocess.run([sys.executable, "-m", "inspector", "analyze", "--fail-on", "error", str(p)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 1 and "Traceback" not in out.stderr


def test_default_places_take_the_store_and_skip_its_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.store.places import default_places
    from inspector.tui.triage import discover

    monkeypatch.setenv("HOME", str(tmp_path))
    sessions = tmp_path / ".nextclaw" / "sessions"
    s = LegacyStore()
    s.add("user", "hi")
    p = s.write(sessions)
    (sessions / ".session-list-index.json").write_text("{}")
    _, files, _ = discover(default_places())
    assert [os.path.relpath(f, tmp_path) for f in files] == [os.path.relpath(p, tmp_path)]
    monkeypatch.setenv("NEXTCLAW_HOME", str(tmp_path / "elsewhere"))
    moved = LegacyStore().write(tmp_path / "elsewhere" / "sessions", "agent_main_s2")
    _, files, _ = discover(default_places())
    assert [os.path.relpath(f, tmp_path) for f in files] == [os.path.relpath(moved, tmp_path)]


def test_tool_calls_that_are_not_a_list_are_no_calls(tmp_path: Path) -> None:
    """Fuzz seed 17: an assistant event whose `tool_calls` is a number crashed the mapping
    (iterating a float); it is a message with no calls, and the rest loads."""
    from inspector.cli.main import main

    p = tmp_path / "agent_main_s1.jsonl"
    p.write_text(
        '{"_type": "event", "seq": 2, "type": "assistant.tool_call", "timestamp": "2026-08-20T09:00:02.000Z", '
        '"data": {"message": {"role": "assistant", "content": "", "timestamp": "2026-08-20T09:00:02.000Z", '
        '"tool_calls": 18446744073709551617}}}\n'
    )
    for argv in (["context", str(p), "--json"], ["analyze", str(p)]):
        assert main(argv) in (0, 1)


# One value of every JSON type, and the edges the index must judge as the message does.
VALUES: list[Any] = [None, True, False, 0, 7, 1.5, 2**70, "", " ", "x", " c1 ", "user", "assistant", "tool", "2026-08-20T09:00:01.120Z", [], [1], {}, {"a": 1}]
CALL = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
LEGACY_MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": [{"type": "text", "text": "q"}, {"type": "image"}], "timestamp": "2026-08-20T09:00:01.000Z"},
    {"role": "assistant", "content": "a", "reasoning_content": "r", "tool_calls": [CALL, {"id": " c2 "}], "timestamp": "2026-08-20T09:00:02.000Z"},
    {"role": "tool", "content": "ok", "tool_call_id": "c1", "name": "ls", "timestamp": "2026-08-20T09:00:03.000Z"},
    {"role": "system", "content": None},
]


def test_the_index_holds_what_each_lazily_built_message_gives(tmp_path: Path) -> None:
    """A message record's role, never-sent flag, tool-call ids and answered call are taken from the
    stored message without building it (`build`); its message is built on demand. For every
    field of an event and of its message (and of a tool call) set to every JSON type, removed, or beside
    an unknown key, the record holds what `Record._take` takes from the message built, and each
    timestamp reads as datetime reads it (`_iso_datetime`)."""
    from inspector.ledger.model import Record
    from tests.field_mutations import mutated

    lines: list[dict[str, Any]] = []
    for i, msg in enumerate(LEGACY_MESSAGES):
        kind = ("message.x", "message.user")[i % 2]  # (read whole / its head decoded)
        event = {"_type": "event", "seq": i + 1, "type": kind, "timestamp": "2026-08-20T09:00:00.000Z", "data": {"message": msg}}
        places = [((), k) for k in [*event, "unknown"]] + [(("data", "message"), k) for k in [*msg, "tool_calls", "tool_call_id", "unknown"]]
        if "tool_calls" in msg:
            places += [(("data", "message", "tool_calls", 0), k) for k in ("id", "function", "unknown")]
        lines += mutated(event, places, VALUES)
    rng = random.Random(15)
    rng.shuffle(lines)
    checked = 0
    for start in range(0, len(lines), 40):  # 40 lines a file: some in getHistory's window, some not
        p = tmp_path / f"k{start}.jsonl"
        p.write_text("".join(json.dumps(o) + "\n" for o in lines[start : start + 40]))
        led = load(str(p), fmt="nextclaw_legacy")
        for r in led.records:
            if r.kind != "message":
                continue
            ref = Record(r.seq, r.line, r.kind, r.type, r.id, None, r.timestamp, message=r.message, runtime_visible=True)
            assert (r.role, r.stop_reason, r.never_sent, r.source_role, r.call_ids, r.result_id) == (
                ref.role, ref.stop_reason, ref.never_sent, ref.source_role, ref.call_ids, ref.result_id,
            ), lines[start + r.line - 1]  # fmt: skip
            # (every other field as the public constructor gives it: `build` copies a template record)
            others = [f for f in Record.__struct_fields__ if f not in ("_source", "_message", "_extra", "never_sent")]
            assert [getattr(r, f) for f in others] == [getattr(ref, f) for f in others] and r.extra is None and r._extra is None
            checked += 1
    assert checked > 800
    for v in [*VALUES, " 2026-08-20T09:00:01.5+05:30 ", "2026-08-20T09:00:01-00:00", "2026-02-30T09:00:01Z", "2026-08-20T24:00:00Z"]:
        assert nextclaw_legacy._iso(v) == (nextclaw_legacy._iso_datetime(v.strip()) if isinstance(v, str) else None), v


def test_timestamps_written_by_hand_equal_datetimes_isoformat() -> None:
    """`_iso` writes NextClaw's own form's isoformat() by hand; for every string of that form and
    near it, what datetime.fromisoformat(...).isoformat() gives (None where it refuses)."""
    import itertools

    dates = ["1970-01-01", "2026-02-29", "2024-02-29", "0001-01-01", "9999-12-31", "2026-13-01", "0000-01-01", "2026-1-01"]
    times = ["00:00:00", "23:59:59", "24:00:00", "12:60:00", "12:00:60"]
    fracs = ["", ".5", ".123", ".000", ".1234", ".123456", ".000000", ".000100", ".1234567"]
    zones = ["Z", "+00:00", "-00:00", "+05:30", "-12:45", "+24:00", "-01:60", "", "z", "+0530", "+05:30:15", "+23:59"]
    for d, sep, t, fr, z, pad in itertools.product(dates, ["T", " "], times, fracs, zones, ["", " "]):
        ts = f"{pad}{d}{sep}{t}{fr}{z}{pad}"
        assert nextclaw_legacy._iso(ts) == nextclaw_legacy._iso_datetime(ts.strip()), ts


class Pairs(list):  # type: ignore[type-arg]
    """An object written with its (key, value) pairs as they are: a key may come twice."""


def _dumps(o: Any, style: int) -> str:
    """JSON text of `o` in one of three styles: JSON.stringify's (compact, UTF-8), json.dumps's
    (spaced, ASCII with \\u escapes), and compact with every key's first letter \\u-escaped."""
    if isinstance(o, dict | Pairs):
        items = o.items() if isinstance(o, dict) else o
        key = (lambda k: json.dumps(k)) if style != 2 else (lambda k: f'"\\u{ord(k[0]):04x}{json.dumps(k)[2:]}' if k else '""')
        sep = (",", ":") if style != 1 else (", ", ": ")
        return "{" + sep[0].join(f"{key(k)}{sep[1]}{_dumps(v, style)}" for k, v in items) + "}"
    if isinstance(o, list):
        return "[" + ",".join(_dumps(v, style) for v in o) + "]"
    return json.dumps(o, ensure_ascii=style == 1)


def _duplicated(line: dict[str, Any], path: tuple[Any, ...], key: str, value: Any, after: bool) -> Pairs:
    """`line` with the object at `path` holding `key` twice: `value` before the one it has (which
    JSON.parse keeps), or after it (which JSON.parse keeps instead)."""
    def rebuild(o: Any, rest: tuple[Any, ...]) -> Any:
        if rest and isinstance(o, list):
            return [rebuild(v, rest[1:]) if n == rest[0] else v for n, v in enumerate(o)]
        if rest:
            return Pairs((k, rebuild(v, rest[1:]) if k == rest[0] else v) for k, v in o.items())
        pairs = Pairs(o.items())
        at = next((n for n, (k, _) in enumerate(pairs) if k == key), len(pairs))
        pairs.insert(at + 1 if after else at, (key, value))
        return pairs
    return rebuild(line, path)  # type: ignore[no-any-return]


def _read_both(p: Path, monkeypatch: pytest.MonkeyPatch) -> dict[bool, Any]:
    """What `_read_events` and `load` give for file `p` with the head path on and off."""
    got = {}
    for on in (True, False):
        monkeypatch.setattr(nextclaw_legacy, "_HEADS", on)
        with open(p, "rb") as f:
            events, meta, broken = nextclaw_legacy._read_events(f, "s", None, diags := [])
        led = nextclaw_legacy.load(str(p), None)
        _codes_hold(led)
        recs = [(r.seq, r.line, r.kind, r.type, r.id, r.timestamp, r.role, r.call_ids, r.result_id, r.never_sent, r.extra,
                 repr(r.message)) for r in led.records]  # fmt: skip
        got[on] = ([repr(e) for e in events], meta, broken, [repr(d) for d in diags], recs, [repr(d) for d in led.diagnostics])
    return got


def _codes_hold(led: Any) -> None:
    """The ledger's index holds each record's `mark_code` as its records hold it once loaded
    (what the analysis's path scan reads instead of the records)."""
    from inspector.ledger.model import mark_code

    ix = led.record_index()
    assert ix is not None and ix.codes is not None
    assert bytes(ix.codes) == bytes(map(mark_code, led.records))


def _heads_taken(text: bytes) -> int:
    """How many of the lines of `text` the head decode takes."""
    return sum(nextclaw_legacy._head(raw) is not None for raw in text.splitlines(keepends=True))


def test_the_head_path_gives_what_the_whole_path_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`_read_events` decodes each line's head (`_LineHead`, msgspec) and parses the whole line with
    orjson only when the head refuses it: with the head path on or off, the same events, metadata,
    first broken line and diagnostics, and the same ledger (records, messages, diagnostics). For every
    field of an event, its message, a tool call and its function set to every JSON type, removed,
    beside an unknown key, or written twice (before and after the one kept); numbers no double holds
    written raw (orjson refuses them: the session is lost); timestamps of every form near NextClaw's;
    three ways of writing JSON (keys escaped too); invalid UTF-8; legacy message lines, metadata,
    blank and broken lines; and the real conversations the benchmark's journal is made of, and the
    fuzz seeds."""
    from benchmarks.gen_formats import _nextclaw_legacy_load
    from tests.conftest import SHARED, need_shared
    from tests.field_mutations import NUMBER_MARKERS, mutated, raw_numbers
    from tests.fuzz.seeds import _nextclaw_legacy

    stamps = ["2026-08-20T09:00:01.120Z", "2026-08-20T09:00:01.000Z", "2026-08-20T23:59:59.999Z", "2026-02-30T09:00:01.000Z",
              "2026-08-20T24:00:01.000Z", "2026-08-20T09:60:01.000Z", "2026-08-20T09:00:60.000Z", "2026-08-20T09:00:01.12xZ",
              "2026-08-20T09:00:01.120z", "2026-08-20 09:00:01.120Z", " 2026-08-20T09:00:01.120Z", "2026-08-20T09:00:01.120+00:00"]  # fmt: skip
    numbers = [2**63 - 1, 2**63, 2**64, -(2**63) - 1, 1.0, 3.0, 0.5, -0.0, 1e308, 9.2e18, 2.5e19, " 5 ", "\U0001f600 é"]
    markers = [*NUMBER_MARKERS, "@400 digits@"]  # (the last an integer orjson refuses and msgspec takes)
    values = [*VALUES, *stamps, *numbers, *markers, [{"id": "c1"}, {"id": " c2 "}, {"id": 3}, 4], {"message": {"role": "user"}}]
    lines: list[Any] = []
    one_call = {"role": "assistant", "content": "", "tool_calls": [CALL]}
    for i, msg in enumerate([*LEGACY_MESSAGES, one_call, {"role": "other", "content": "x"}, {"role": "", "content": "x"}]):
        kind = "assistant.tool_call" if i % 2 else "message.user"  # (types NextClaw writes: the head decode takes no other)
        event = {"_type": "event", "seq": i + 1, "type": kind, "timestamp": "2026-08-20T09:00:00.000Z", "data": {"message": msg}}
        places = [((), k) for k in [*event, "unknown"]] + [(("data",), k) for k in ("message", "role", "unknown")]
        places += [(("data", "message"), k) for k in [*msg, "content", "tool_calls", "tool_call_id", "name", "reasoning_content", "unknown"]]
        if "tool_calls" in msg:
            places += [(("data", "message", "tool_calls", 0), k) for k in ("id", "type", "function", "unknown")]
            places += [(("data", "message", "tool_calls", 0, "function"), k) for k in ("name", "arguments", "unknown")]
        lines += mutated(event, places, values)
        for (path, key), value, after in itertools.product(places, [*values[::3], *markers, "metadata", "other"], (False, True)):
            lines.append(_duplicated(event, path, key, value, after))
    lines += [dict(m) for m in LEGACY_MESSAGES] + [{"_type": "metadata", "created_at": "x"}, {"role": 1}, [1], "s", 3]
    rng = random.Random(1515)
    rng.shuffle(lines)
    written = [raw_numbers(_dumps(o, n % 3)).replace('"@400 digits@"', "1" + "0" * 400).encode() + b"\n" for n, o in enumerate(lines)]
    refused = [w for w in written if b"1e400" in w or b"0" * 400 in w]  # (orjson refuses the line: the read stops there)
    written = [w for w in written if w not in refused]
    texts = [b"".join(written[k : k + 60]) for k in range(0, len(written), 60)]
    texts += [b"".join(written[k : k + 2]) + r + written[k + 2] for k, r in enumerate(refused)]
    clean = texts[:8]
    texts += [t.replace(b"\n", b"\n\n", 3) + b"{not json\n" + t for t in clean[:3]]  # blank lines, then a broken one
    texts += [t.replace(b"\n", b"\r\n") for t in clean[:3]] + [b"null\n" + clean[0]]
    for t in clean:  # invalid UTF-8 in a string the head reads, one it does not, and in a key
        texts += [t.replace(b'"user"', b'"us\xffer"', 1), t.replace(b'"x"', b'"\xed\xa0\x80"', 1), t.replace(b'"role"', b'"rol\xc3"', 1),
                  t.replace(b'"x"', b'"\\ud800"', 1)]  # (and a lone surrogate)
    need_shared(SHARED / "real_sessions" / "pi")
    header, turns = _nextclaw_legacy_load()
    real = [header[0], *(e for turn in turns for e in turn)]
    texts += [b"".join(orjson.dumps(o) + b"\n" for o in real), "".join(_dumps(o, 1) + "\n" for o in real[:400]).encode()]
    texts += [p.read_bytes() for p in _nextclaw_legacy(tmp_path / "seeds")]
    compared = taken = 0
    for k, text in enumerate(texts):
        p = tmp_path / f"s{k}.jsonl"
        p.write_bytes(text)
        got = _read_both(p, monkeypatch)
        assert got[True] == got[False], k
        compared += len(got[True][0])
        taken += _heads_taken(text) if got[True][2] is None else 0
    assert compared > 8000 and taken > 4000, (compared, taken)


def test_times_at_once_are_iso_of_each() -> None:
    """`_times` writes a list of NextClaw's own timestamps at once (one match, two replaces): what
    `_iso` gives each, for lists all of that form and lists with one of any other form among them."""
    own = ["2026-08-20T09:00:01.120Z", "2026-08-20T09:00:01.000Z", "2026-08-20T23:59:59.999Z", "2024-12-31T00:00:00.100Z",
           "2026-04-30T09:00:00.000Z", "2026-01-31T09:00:00.010Z", "0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z"]  # fmt: skip
    others = ["2026-02-30T09:00:01.000Z", "2024-02-29T09:00:01.000Z", "2026-02-29T09:00:01.000Z", "2026-04-31T09:00:01.000Z",
              "0000-01-01T00:00:00.000Z", "2026-08-20T24:00:01.000Z", "2026-08-20T09:60:01.000Z", "2026-08-20T09:00:60.000Z",
              "2026-08-20T09:00:01.12xZ", "2026-08-20T09:00:01.120z", "2026-08-20 09:00:01.120Z", " 2026-08-20T09:00:01.120Z",
              "2026-08-20T09:00:01.120+00:00", "2026-08-20T09:00:01Z", "2026-08-20T09:00:01.1200Z", "2026-08-2\u0661T09:00:01.120Z",
              "2026-08-20T09:00:01.120Z\n2026-08-20T09:00:01.120Z", "2026-08-20T09:00:01.120Z\n", "", "x", None]  # fmt: skip
    assert nextclaw_legacy._times(own) == [nextclaw_legacy._iso(s) for s in own]
    assert nextclaw_legacy._times([]) == []
    for other in others:
        for at in (0, 3, len(own)):
            stamps = [*own[:at], other, *own[at:]]
            assert nextclaw_legacy._times(stamps) == [nextclaw_legacy._iso(s) for s in stamps], other


def test_times_checked_at_once_on_random_runs_of_times() -> None:
    """`_all_iso_strings` checks a list of times in C, by columns (their shape, the tens of minutes
    and seconds, each run of one date and hour): `_times` of random lists of NextClaw's own times,
    running over days, hours, months and years (leap days too), with one character of one time
    changed (to every digit and a few other characters), is what `_iso` gives each time."""
    year_0 = ["2000-01-01T00:00:00.000Z", "0000-01-01T00:00:00.000Z"]  # (a run of one date but for its thousands)
    assert nextclaw_legacy._times(year_0) == [nextclaw_legacy._iso(s) for s in year_0]
    rng = random.Random(1516)
    start = datetime(2023, 12, 31, 21, 0, 0)
    for trial in range(40):
        at = start + timedelta(days=rng.randrange(800), seconds=rng.randrange(86400))
        stamps = []
        for _ in range(rng.choice((1, 2, 7, 60))):
            at += timedelta(seconds=rng.choice((1, 59, 3599, 86399, 86401 * 31)), milliseconds=rng.randrange(1000))
            stamps.append(at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z")
        assert nextclaw_legacy._times(stamps) == [nextclaw_legacy._iso(s) for s in stamps]
        k = rng.randrange(len(stamps))
        for pos in range(24):
            for c in "0123456789-:.TZ \u0663":
                changed = [*stamps[:k], stamps[k][:pos] + c + stamps[k][pos + 1 :], *stamps[k + 1 :]]
                assert nextclaw_legacy._times(changed) == [nextclaw_legacy._iso(s) for s in changed], (trial, changed[k])


def test_date_hours_of_times_in_order_are_every_times_own() -> None:
    """`_date_hours` finds the runs of times in order by bisecting: it names the date and hour of
    every time, each once, for random lists in order (one run, many, a run of one time, a time
    repeated) and out of order (each time's own)."""
    rng = random.Random(1519)
    start = datetime(2025, 12, 31, 22, 0, 0)
    for trial in range(200):
        at = start + timedelta(seconds=rng.randrange(86400 * 60))
        stamps = []
        for _ in range(rng.choice((1, 2, 5, 40, 300))):
            at += timedelta(seconds=rng.choice((0, 1, 60, 3599, 3600, 86400, rng.randrange(20000))), milliseconds=rng.randrange(1000))
            stamps.append(at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z")
        if trial % 3 == 0:
            rng.shuffle(stamps)
        hours = list(nextclaw_legacy._date_hours(stamps))
        assert sorted(hours) == sorted({s[:13] for s in stamps}), trial


def test_one_pass_while_seqs_rise_and_the_sort_when_they_do_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`load` makes each record as its line is read while every event's seq is above the one before
    it (`_read_in_order`), and reads the file again, sorted, at the first that is not: both give
    what `build` gives (the events read, sorted, then made records), for files of NextClaw's own
    lines with every other kind of line among them (metadata, a legacy message, an event without a
    message, an unknown role, blank and broken lines, lines the head decode refuses), sent and
    unsent messages, open and closed tool-call blocks, and each of these with one seq going down."""
    s = LegacyStore()
    s.add("user", "Read r.md")
    s.call("c1", "read_file", {"p": "r.md"})
    s.result("c1", "read_file", "X")
    s.call("c2", "grep", {"q": "y"})
    s.add("user", "never mind")
    s.result("c2", "grep", "late")
    for i in range(52):
        s.add("assistant" if i % 2 else "user", f"turn {i}", **({"reasoning_content": "why"} if i == 7 else {}))
    s.call("c3", "ls", {})
    s.call("c4", "ls", {})
    s.result(" c4 ", "ls", "ok")  # (answers c4: the id stripped)
    s.result("  ", "ls", "none")  # (answers no call: a blank id is none)
    own = s.lines()
    extra = [
        json.dumps({"role": "user", "content": "a legacy line"}),
        json.dumps({"_type": "event", "seq": 1000, "type": "run.started", "timestamp": "2026-08-20T09:00:00.000Z", "data": {"runId": "r"}}),
        json.dumps({"_type": "event", "seq": 1001, "type": "x", "timestamp": "2026-02-29T09:00:00.000Z",
                    "data": {"message": {"role": "developer", "content": "y"}}}),
        json.dumps({"_type": "event", "seq": 1002, "type": " ", "timestamp": "soon", "data": {"message": {"role": "tool", "content": "z",
                    "tool_call_id": " c9 ", "extra": 1}}}),
        "", "  ", json.dumps({"_type": "metadata", "created_at": "later"}),
    ]
    texts = {"own": own, "blank": [*own[:5], "", *own[5:]]}
    for k, line in enumerate(extra):
        texts[f"extra {k}"] = [*own[:30], line, *own[30:]]  # (seq 1000+ at line 31: the next one goes down)
        texts[f"extra {k} at the end"] = [*own, line]
    texts["broken"] = [*own[:40], "{not json", *own[40:]]
    texts["seq down"] = [*own[:20], own[21], own[20], *own[22:]]
    taken = 0
    for label, lines in texts.items():
        p = tmp_path / f"{label}.jsonl"
        p.write_text("\n".join(lines) + "\n", encoding="utf-8")
        with open(p, "rb") as f:
            read = nextclaw_legacy._read_in_order(f, str(p), None, [])
        taken += read is not None
        got = {}
        for on in (True, False):
            monkeypatch.setattr(nextclaw_legacy, "_HEADS", on)
            led = load(str(p))
            _codes_hold(led)
            rep = analyze(led)
            plain = analyze(dataclasses.replace(led, index=None))  # (its records read, not its index)
            assert (plain.states, plain.context) == (rep.states, rep.context), label
            recs = [(r.seq, r.line, r.kind, r.type, r.id, r.timestamp, r.role, r.source_role, r.call_ids, r.result_id,
                     r.never_sent, r.extra, repr(r.message)) for r in led.records]  # fmt: skip
            got[on] = (recs, [repr(d) for d in led.diagnostics], led.header, led.runtime_rejects_file,
                       [(it.role, it.record_id, it.tokens) for it in rep.context])  # fmt: skip
        assert got[True] == got[False], label
        assert any(r[10] for r in got[True][0]) and any(not r[10] for r in got[True][0] if r[2] == "message"), label
    # Taken: own, blank, broken, every extra at the end, and within the file the blank lines and the metadata (the
    # legacy line takes the next free seq, which the event after it has too: that one's seq does not rise).
    assert taken == 3 + len(extra) + 3


def test_event_ids_from_the_stream_are_the_seqs_formatted() -> None:
    """`_event_ids(first)` gives f"event-{seq}" for first, first + 1, ... across thousands (each
    made from its thousand's prefix and its last three digits)."""
    rng = random.Random(1517)
    firsts = [1, 2, 998, 999, 1000, 1001, 1999, 2000, 99_999, 1_000_000, *(rng.randrange(1, 10**7) for _ in range(30))]
    for first in firsts:
        ids = nextclaw_legacy._event_ids(first)
        assert [ids() for _ in range(2100)] == [f"event-{s}" for s in range(first, first + 2100)], first


def test_ids_of_rising_seqs_with_gaps_are_the_whole_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A record's id is f"event-{seq}" whether its line's seq is the one after the last (the id
    stream's next) or jumps ahead, is written as a float, is left out or not positive (the next
    free one), or follows another kind of line: the records `load` makes reading each line's head,
    in one pass, are those it makes parsing each line whole (random rising seqs, over thousands)."""
    rng = random.Random(1518)
    for trial in range(12):
        s = LegacyStore()
        for k in range(rng.choice((40, 300, 1200))):
            s.add("user" if k % 2 == 0 else "assistant", f"m{k}")
        lines, seq = s.lines()[:1], 0  # (seq: the one NextClaw gives the last event)
        for line in s.lines()[1:]:
            o, pick = json.loads(line), rng.random()
            if pick < 0.1:  # (left out or not positive: the next free one)
                if pick < 0.05:
                    del o["seq"]
                else:
                    o["seq"] = rng.choice((0, -3))
                seq += 1
            else:
                seq += rng.choice((1, 1, 1, 1, 2, 999, 1000, 1001, rng.randrange(1, 5000)))
                o["seq"] = float(seq) if pick < 0.15 else seq
            lines.append(json.dumps(o))
            if rng.random() < 0.02:  # (a legacy line takes the next free one too)
                lines.append(json.dumps({"role": "user", "content": "a legacy line"}))
                seq += 1
        p = tmp_path / f"t{trial}.jsonl"
        p.write_text("\n".join(lines) + "\n", encoding="utf-8")
        with open(p, "rb") as f:
            assert nextclaw_legacy._read_in_order(f, str(p), None, []) is not None, trial  # (every seq rises)
        got = {}
        for on in (True, False):
            monkeypatch.setattr(nextclaw_legacy, "_HEADS", on)
            led = load(str(p))
            got[on] = [(r.seq, r.line, r.id, r.role, r.timestamp) for r in led.records]
        assert got[True] == got[False], trial
        assert len({r[2] for r in got[True]}) == len(got[True]) > 30


def test_a_text_nested_deep_is_read_as_text_not_recursed_into(capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m tests.fuzz --seed 130`: a message part whose text is a value nested hundreds of
    levels deep crashed the read (str() of it: RecursionError); it is written as text with room to
    recurse (`jsontext.py_str`), as every reader writes such a value."""
    from inspector.cli.main import main

    found = Path(__file__).parent / "fuzz" / "found" / "nextclaw-legacy-text-nested-deep.jsonl"
    assert main(["simulate", "--policy", "adk-sliding", "--json", str(found)]) == 0
    assert main(["analyze", "--json", str(found)]) == 0
    capsys.readouterr()
