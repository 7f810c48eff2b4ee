"""A native ledger read index-first (`native_heads`: a clean message line's head decoded, its content
read again on demand) is the ledger a whole-line load builds: the same records, messages (routes
included) and diagnostics, line for line, for every field of a message set to every JSON type,
removed, or joined by an unknown key, and for every field of every block the same (issue 15)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.analysis.export import analyze_json, context_json
from inspector.formats import load, native
from inspector.formats.jsonl import read_lines
from inspector.ledger.model import mark_code
from tests.field_mutations import NUMBER_MARKERS, mutated, raw_numbers

from .test_native_format import ASSISTANT, HEADER, RUN, SAMPLES, TOOL, USER

# One value of every JSON type, and the edges the head decoder must judge as the builder does.
VALUES: list[Any] = [
    None, True, False, 0, -1, 7, 1.5, -0.0, 2**70, "", "x", "stop", "user", "2025-03-01",
    "2025-03-01T10:00:00Z\n", "r1", "call-1", [], [1], {}, {"a": 1}, *NUMBER_MARKERS,
]
MESSAGES = [USER, ASSISTANT, TOOL]
SEED = 20261201


def _mutations(msg: dict[str, Any]) -> list[dict[str, Any]]:
    """Every field of the message, and of each of its blocks and its usage, set to every value in
    VALUES, removed, or beside an unknown key."""
    places: list[tuple[dict[str, Any], ...]] = []

    def visit(path: tuple[Any, ...], obj: dict[str, Any]) -> None:
        keys = sorted(native._MESSAGE_KEYS) if not path else list(obj)  # every field a message may have
        for k in [*keys, "unknown_key"]:
            places.append((path, k))  # type: ignore[arg-type]
            v = obj.get(k)
            if isinstance(v, dict):
                visit((*path, k), v)
            elif isinstance(v, list):
                for i, b in enumerate(v):
                    if isinstance(b, dict):
                        visit((*path, k, i), b)

    visit((), msg)
    return mutated(msg, places, VALUES)


def _fields(led) -> list[tuple[Any, ...]]:  # type: ignore[no-untyped-def]
    return [
        (r.seq, r.line, r.kind, r.type, r.id, r.parent_id, r.timestamp, r.offset, r.length, r.role,
         r.stop_reason, r.source_role, tuple(r.call_ids), r.result_id, r.never_sent, r.run_id,
         r.runtime_visible, r.message, r.checkpoint, r.extra)
        for r in led.records
    ]


def _diags(led) -> list[tuple[Any, ...]]:  # type: ignore[no-untyped-def]
    return [(d.line, d.problem, d.message, d.severity, d.recovered, list(d.seqs)) for d in led.diagnostics]


def _same_both_ways(path: Path) -> None:
    lazy = load(str(path))
    lines, _, _ = read_lines(str(path))
    whole = native.build(lines, str(path))
    assert _diags(lazy) == _diags(whole), path.read_text()[:2000]
    assert _fields(lazy) == _fields(whole), path.read_text()[:2000]


def test_the_head_path_reads_clean_lines_and_only_those(tmp_path: Path) -> None:
    """The clean examples load from their heads (content left in the file until asked for), and
    a line with a wrong-typed field does not."""
    f = tmp_path / "s.jsonl"
    bad = {**USER, "id": "m9", "ts": True}
    f.write_text("".join(json.dumps(o) + "\n" for o in [HEADER, RUN, USER, ASSISTANT, TOOL, bad]))
    led = load(str(f))
    lazy = {r.id for r in led.records if r._message is None and r._source is not None}
    assert lazy == {"m1", "m2", "m3"}
    assert led.records[3].message is not None and led.records[3].message.route is not None  # its run's route
    _same_both_ways(f)


@pytest.mark.parametrize("base", MESSAGES, ids=lambda m: m["role"])
def test_every_mutation_of_a_message_loads_as_the_whole_line_load_builds_it(tmp_path: Path, base: dict[str, Any]) -> None:
    muts = _mutations(base)
    assert len(muts) > 200
    # Many mutated lines to a file (each its own id, so a duplicate id is not what differs), then
    # one line per file for a seeded sample (where the line's neighbours do not hide a difference).
    f = tmp_path / "all.jsonl"
    body = []
    for i, m in enumerate(muts):
        if isinstance(m.get("id"), str) and m["id"]:
            m["id"] = f"{m['id']}-{i}"
        body.append(json.dumps(m))
    f.write_text(raw_numbers("\n".join([json.dumps(HEADER), json.dumps(RUN), *body]) + "\n"))
    _same_both_ways(f)
    for i, m in enumerate(random.Random(SEED).sample(muts, 60)):
        g = tmp_path / f"one-{i}.jsonl"
        g.write_text(raw_numbers(json.dumps(m) + "\n" + json.dumps(RUN)))  # headerless, run after it, no final newline
        _same_both_ways(g)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_every_sample_reads_the_same_both_ways(path: Path) -> None:
    _same_both_ways(path)
    lines, _, _ = read_lines(str(path))
    whole = analyze(native.build(lines, str(path)))
    lazy = analyze(load(str(path)))
    for doc in (analyze_json, context_json):
        a, b = doc(lazy), doc(whole)
        assert a == b


@pytest.mark.parametrize("bad_time", [None, "yesterday", "2025-03-01T10:00:00Z\n", "2025-03-01\n2025-03-02"])
def test_times_are_checked_all_at_once_and_the_file_read_again_when_one_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad_time: str | None
) -> None:
    """A head's time is taken unchecked and every head's time checked at the end in one regex call
    (`native_heads.all_times_valid`): all valid, the file is read once; one not (a word, a time
    with the newline `$` lets through, two times on two lines), it is read again with each time
    checked, and the ledger is the whole-line load's."""
    from inspector.formats import native_heads

    checked: list[bytes] = []

    class Counting:
        def decode(self, raw: bytes) -> Any:
            checked.append(raw)
            return native_heads.msgspec.json.Decoder(native_heads.MessageHead).decode(raw)

    monkeypatch.setattr(native_heads, "DECODER", Counting())
    msgs = [{**USER, "ts": "2025-03-01 10:00"}, ASSISTANT, {**TOOL, "ts": 1740823200}]
    if bad_time is not None:
        msgs.append({**USER, "id": "m9", "ts": bad_time})
    f = tmp_path / "s.jsonl"
    f.write_text("".join(json.dumps(o) + "\n" for o in [HEADER, RUN, *msgs]))
    _same_both_ways(f)
    assert bool(checked) == (bad_time is not None)


def test_times_are_checked_a_thousand_at_a_time_every_one_of_them() -> None:
    # (one regex call over all of a big ledger's times took 200 MB: the engine keeps a frame per
    # repetition) every part is checked, the last one too.
    from inspector.formats import native_heads

    times = [f"2025-03-01T10:{i % 60:02d}:00Z" for i in range(3000)]
    assert native_heads.all_times_valid(times) and native_heads.all_times_valid([])
    for bad in (0, 1023, 1024, 2500, 2999):
        assert not native_heads.all_times_valid([*times[:bad], "10:00", *times[bad + 1 :]])


def test_times_that_are_numbers_are_valid_wherever_they_stand() -> None:
    """The loader lists every head's time, numbers (epoch seconds) among the strings, with no type
    test per line: `all_times_valid` is each string's `re.match`, whatever part of the list a number
    stands in (a join meeting it: the strings checked alone), a number never an invalid time."""
    import re

    from inspector.formats import native_heads

    usual = [f"2026-01-05T09:{i % 60:02d}:{i % 59:02d}.{i % 1000:03d}Z" for i in range(3000)]
    other = [f"2025-03-01 10:{i % 60:02d}" for i in range(3000)]  # (valid, not the usual shape: the regex)
    one_time = re.compile(native_heads.ISO_TS_PATTERN)
    rng = random.Random(f"{SEED}:number-times")
    for _ in range(60):
        times: list[Any] = list(rng.choice([usual, other, usual[:5]]))
        for _ in range(rng.randrange(1, 4)):
            times.insert(rng.randrange(len(times) + 1), rng.choice([0, 1740823200, 1.5, -3, 2**40]))
        if rng.random() < 0.5:
            times[rng.randrange(len(times))] = rng.choice(["10:00", "yesterday", "2026-01-05T9:00Z"])
        each = all(one_time.match(t) for t in times if isinstance(t, str))
        assert native_heads.all_times_valid(times) == each
    assert native_heads.all_times_valid([1, 2.5]) and not native_heads.all_times_valid([1, "x", *usual])


def test_the_usual_time_shape_is_taken_without_the_regex_and_only_it() -> None:
    """`_all_in_the_usual_shape` (toISOString's shape, checked with no regex) says yes only where
    the regex does; whatever it declines, the regex decides: the answer is each time's `re.match`."""
    import re

    from inspector.formats import native_heads

    usual = [f"2026-01-05T09:{i % 60:02d}:{i % 59:02d}.{i % 1000:03d}Z" for i in range(9000)]
    one_time = re.compile(native_heads.ISO_TS_PATTERN)
    part = native_heads._SHAPES_AT_ONCE
    assert len(usual) > 2 * part
    cases = [
        [], usual, usual[:1], usual[:part], usual[: part + 1],
        [*usual[:part], "x"], [*usual[: part - 1], "2026-01-05T09:00:00Z"],  # the last of a part, the first of the next
        ["2026-01-05T09:00:10.043Z\n2026-01-05T09:00:10.043Z"],  # two in one: as many newlines as a join of two
        ["\u0662\u0660\u0662\u0666-01-05T09:00:10.043Z"],  # digits `\d` takes, not ASCII ones
        ["2026-01-05t09:00:10.043Z"], ["2026-0a-05T09:00:10.043Z"], ["2026-01-05T09:00:10.043+01:00"],
        ["2026-01-05T09:00:10.043ZZ"], ["2026-01-05T09:00:10.04Z"], ["2026-01-05T09:00:10.0433"],
    ]  # fmt: skip
    for times in cases:
        each = all(one_time.match(t) for t in times)
        assert native_heads.all_times_valid(times) == each, times[-1:]
        if native_heads._all_in_the_usual_shape(times):
            assert each, times[-1:]
    assert native_heads._all_in_the_usual_shape(usual)  # the shape the fast path is for


def test_duplicate_ids_and_undefined_runs_read_the_same_both_ways(tmp_path: Path) -> None:
    """The loader's one-pass checks (no id repeated, every run named defined) decide only whether
    the record-by-record passes run: repeated ids and undefined runs, on lines read from their heads
    and on lines parsed whole, give the whole-line load's diagnostics and routes, and the id index
    it keeps is `Ledger.by_id`'s."""
    parsed = {**USER, "id": "p1", "run": "r1", "extra_key": 1}  # parsed whole (an unknown key), naming a run
    cases = {
        "clean": [HEADER, RUN, USER, {**ASSISTANT, "run": "r1"}, TOOL],
        "ids": [HEADER, RUN, USER, ASSISTANT, {**TOOL, "id": USER["id"]}, {**parsed, "id": ASSISTANT["id"]}],
        "runs": [HEADER, {**ASSISTANT, "run": "nowhere"}, {**parsed, "id": "p0", "run": "gone"}, RUN, parsed],
        "run after": [HEADER, {**ASSISTANT, "run": "r1"}, parsed, RUN],
        "header late": [USER, HEADER, HEADER, {**USER, "id": "m0"}],
    }
    for name, objs in cases.items():
        f = tmp_path / f"{name}.jsonl"
        f.write_text("".join(json.dumps(o) + "\n" for o in objs))
        _same_both_ways(f)
        led = load(str(f))
        codes = {d.problem for d in led.diagnostics}
        assert ("duplicate_id" in codes) == (name == "ids"), name
        assert any("which no run record defines" in d.message for d in led.diagnostics) == (name == "runs"), name
        assert led._by_id == {r.id: r.seq for r in led.records if r.id is not None and r.runtime_visible}, name
        for r in led.records:
            if r.run_id is not None and r.run_id in led.runs:
                assert r.message is not None and r.message.route == led.runs[r.run_id].route, name


def test_the_line_loop_stops_where_the_whole_line_load_stops(tmp_path: Path) -> None:
    """`native._read` (the head step inlined in its own loop) read up to a line (`--at`) or up to
    a size (a file appended to while it is read): the ledger is the whole-line load's of that prefix,
    a cut last line included (said truncated, as the whole-line reader says it)."""
    from inspector.formats.jsonl import parse_bytes

    f = tmp_path / "s.jsonl"
    objs = [HEADER, RUN, USER, ASSISTANT, TOOL, {**USER, "id": "m9", "extra_key": 1}, {**ASSISTANT, "id": "m10"}]
    data = "".join(json.dumps(o) + "\n" for o in objs).encode()
    f.write_bytes(data)
    ends = [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    for k in range(1, len(objs) + 1):
        lazy = load(str(f), upto_line=k)
        whole = native.build(parse_bytes(data[: ends[k - 1]])[0], str(f))
        assert _diags(lazy) == _diags(whole) and _fields(lazy) == _fields(whole), k
    for limit in sorted({*ends, *(e - 7 for e in ends), 5, len(data) - 1}):
        with open(f, "rb") as fh:
            led, consumed = native.stream(fh, str(f), limit, None)
        whole = native.build(parse_bytes(data[:limit])[0], str(f))
        assert consumed == limit
        assert _diags(led) == _diags(whole), limit
        assert _fields(led) == _fields(whole), limit


def test_a_line_cut_at_a_broken_line_says_last_line_only_at_the_files_end(tmp_path: Path) -> None:
    """`--at` a line the general path parses (`native._read`, its line count and cut kept by
    `enumerate` and `islice`): that line is the file's last only when nothing follows it, as the
    line-by-line count said before (its diagnostic reads "line 3", not "last line 3", while a
    line follows); "last line" is said of a line the file's end cuts, not of one ending with its
    newline."""
    f = tmp_path / "s.jsonl"
    lines = [json.dumps(HEADER), json.dumps(USER), '{"type": "message", "id": "m2", oops', json.dumps({**USER, "id": "m3"})]
    f.write_text("\n".join(lines) + "\n")
    for k, lines_read in ((3, 3), (4, 4), (None, 4)):
        led = load(str(f), upto_line=k)
        assert [r.line for r in led.records] == [ln for ln in (1, 2, 4) if ln <= lines_read], k
        assert [d.message.split(":")[0] for d in led.diagnostics] == ["line 3"], k
    f.write_text("\n".join(lines[:3]))  # (the file's end cuts it: the last line, truncated)
    assert [d.message.split(":")[0] for d in load(str(f), upto_line=3).diagnostics] == ["last line 3"]
    f.write_text("\n".join(lines[:3]) + "\n")  # (it ends with its newline: malformed wherever it stands)
    assert [d.message.split(":")[0] for d in load(str(f), upto_line=3).diagnostics] == ["line 3"]


def test_seqs_stay_right_after_lines_that_make_no_record_or_two(tmp_path: Path) -> None:
    """`native._read` takes a head's seq from the line before's number while every line made one
    record: after a line that makes none (a JSON array, a blank line) or two (objects glued on one
    line), each record's seq is still its place in the ledger."""
    f = tmp_path / "s.jsonl"
    glued = json.dumps({**USER, "id": "g1"}) + json.dumps({**USER, "id": "g2"})
    lines = [json.dumps(HEADER), json.dumps(RUN), json.dumps(USER), "[1]", json.dumps({**ASSISTANT, "id": "m3"}), "",
             json.dumps({**TOOL, "id": "m4"}), glued, json.dumps({**USER, "id": "m5"}), "[]", "[]", json.dumps({**USER, "id": "m6"})]  # fmt: skip
    f.write_text("\n".join(lines) + "\n")
    _same_both_ways(f)
    led = load(str(f))
    assert [r.seq for r in led.records] == list(range(len(led.records))) and len(led.records) == 9


def test_the_id_index_is_one_pass_when_no_id_repeats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no id repeated, the record-by-record duplicate pass does not run, and the index kept is
    `Ledger.by_id`'s, on every sample and a file mixing heads and parsed lines."""
    calls: list[str] = []
    real = native.report_duplicate_ids
    monkeypatch.setattr(native, "report_duplicate_ids", lambda led, *a, **k: calls.append(led.path) or real(led, *a, **k))
    f = tmp_path / "mixed.jsonl"
    parsed = {**USER, "id": "p1", "extra_key": 1}
    f.write_text("".join(json.dumps(o) + "\n" for o in [HEADER, RUN, USER, parsed, ASSISTANT, TOOL]))
    for path in [f, *SAMPLES]:
        led = load(str(path))
        if len({r.id for r in led.records if r.id is not None}) == sum(r.id is not None for r in led.records):
            assert led.path not in calls, path
        assert led._by_id == {r.id: r.seq for r in led.records if r.id is not None and r.runtime_visible}, path


# Messages whose `mark_code` differ (read from their heads or parsed whole): every role, a role no
# runtime knows, stop reasons dropped or not, meta.
_CODED = [{**USER, "role": r} for r in ("system", "tool", "assistant", "operator")] + [
    {**ASSISTANT, "stop_reason": s} for s in ("error", "aborted", "deferred", "length", "other", "bogus", None)
] + [{**m, "meta": v} for m in (USER, ASSISTANT, TOOL) for v in (True, False, "yes")] + [{**USER, "stop_reason": "error"}]


def test_the_record_index_lists_what_the_records_say(tmp_path: Path) -> None:
    """The loader lists its records as it makes them (`RecordIndex`: the messages and checkpoints,
    the header the path leaves out), so the analysis reads only those: on random ledgers (headers
    first, late, twice or none; runs, checkpoints, unknown records, glued objects, arrays, broken
    and blank lines, lines of every shape and samples) the lists are what the records say, and
    the analysis and the next request are what they are without the lists."""
    from .test_native_format import CHECKPOINT, FAILED, GOOD

    rng = random.Random(SEED + 15)
    shapes = [HEADER, RUN, USER, ASSISTANT, TOOL, FAILED, CHECKPOINT, {"type": "note", "id": "n1"}, {"type": 3}, [1], "", "{oops",
              {**USER, "extra_key": 1}, {**CHECKPOINT, "represents": 4}, {**RUN, "model": 5}, *_CODED]  # fmt: skip
    texts = [p.read_text() for p in SAMPLES]
    for k in range(40):
        objs = [rng.choice(shapes) for _ in range(rng.randrange(1, 14))]
        if k % 3 == 0:
            objs = [*GOOD, *objs]
        lines = [o if isinstance(o, str) else json.dumps({**o, "id": f"x{i}"} if isinstance(o, dict) and "id" in o else o) for i, o in enumerate(objs)]
        if k % 5 == 0 and len(lines) > 2:
            lines[1] += lines.pop(2)  # two objects glued on one line
        texts.append("\n".join(lines) + "\n")
    for k, text in enumerate(texts):
        f = tmp_path / f"s{k}.jsonl"
        f.write_text(text)
        led = load(str(f), "native")
        ix = led.record_index()
        assert ix is not None, k
        assert ix.marks is None, k  # (the codes say which records are marked)
        assert ix.off_path == [r.seq for r in led.records if r.kind == "header" or not r.runtime_visible], k
        assert ix.codes == bytes(map(mark_code, led.records)), k
        indexed = analyze(led)
        plain = load(str(f), "native")
        plain.index = None
        unindexed = analyze(plain)
        assert analyze_json(indexed) == analyze_json(unindexed) and context_json(indexed) == context_json(unindexed), k


def test_the_path_shares_the_records_seq_ints_and_not_an_id_index_grown_since(tmp_path: Path) -> None:
    """The linear path is made from the records' own seq int objects when every record but the
    header has an id of its own (`RecordIndex.path_of`, the loader's id index); not once that index
    has grown with appended records (`appended.grown` shares it), nor when an id repeats or
    another record has none; the path is the same either way."""
    from inspector.analysis import engine as E
    from inspector.formats.jsonl import parse_line

    rt = native.FORMAT.runtime
    f = tmp_path / "s.jsonl"
    objs = [HEADER, RUN, USER, ASSISTANT, TOOL, *({**USER, "id": f"u{i}"} for i in range(300))]
    f.write_text("".join(json.dumps(o) + "\n" for o in objs))
    led = load(str(f), "native")
    path, _ = E.active_path(led, rt)
    assert path == [r.seq for r in led.records if r.kind != "header"]
    assert all(s is led.records[s].seq for s in path)
    extra = [json.dumps({**USER, "id": f"new{i}"}).encode() + b"\n" for i in range(3)]
    grown = native.extend(led, [parse_line(raw, len(objs) + i + 1, 0, False) for i, raw in enumerate(extra)])  # type: ignore[misc]
    assert grown is not None and led._by_id is grown._by_id and len(led._by_id) == len(led.records) - 1 + 3
    assert E.active_path(led, rt)[0] == path
    assert E.active_path(grown, rt)[0] == [r.seq for r in grown.records if r.kind != "header"]
    for other, shared in (([*objs, {**USER, "id": "u7"}], False), ([*objs, {"type": "note"}], False), ([*objs, HEADER], False), (objs[1:], True)):
        f.write_text("".join(json.dumps(o) + "\n" for o in other))
        led = load(str(f), "native")
        assert led.index is not None and (led.index.path_of is not None) == shared
        assert E.active_path(led, rt)[0] == [r.seq for r in led.records if r.kind != "header"]
