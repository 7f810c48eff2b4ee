"""The analysis reads the path's records once (`engine.PathScan`, issue 15) and the checkpoint
views, the next request's sources, the coverage states and the compaction-storm rule then read that
scan instead of the records: on every sample and real session of the formats that share the engine,
and on mutants of them whose path records have every kind, role, source role, stop reason and
never-sent flag those readers tell apart, each must give exactly what it gives reading the records."""

from __future__ import annotations

import copy
import dataclasses
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from inspector.analysis import analyze
from inspector.analysis import engine as E
from inspector.analysis import export as X
from inspector.analysis import findings as F
from inspector.formats import load
from inspector.ledger.model import mark_code
from tests.conftest import REPO

SHARED = REPO.parent / "shared"
FILES = sorted((REPO / "sample_sessions").glob("*/*.jsonl"))
for _fmt in ("claude_code", "codex", "pi"):
    FILES += sorted((SHARED / "real_sessions" / _fmt).glob("*.jsonl"))[:4]

KINDS = ["message", "checkpoint", "meta", "header", "unknown"]
ROLES = ["user", "assistant", "tool", "system", None]
SOURCE_ROLES = [None, "user", "custom", "system", "developer"]
STOPS = [None, "stop", "error", "aborted", "length", "tool_use"]
SEED = 20261202


def _views(views: list[E.CheckpointView]) -> list[tuple[Any, ...]]:
    return [
        (v.index, v.seq, v.pos, v.cut, sorted(v.keep), v.rep, v.own, v.first_kept_seq, v.first_kept_found, v.carried_forward, v.empty_summary)
        for v in views
    ]


def _both(led: Any) -> None:
    """Every reader of the scan against the same reader of the records, on this ledger."""
    rt = E.registry.get(led.format).runtime
    tok = E.get_tokenizer()
    path, _ = E.active_path(led, rt)
    scan = E.PathScan(led.records, path, rt)
    views = E.checkpoint_views(led, path, rt)
    assert _views(E.checkpoint_views(led, path, rt, scan)) == _views(views)
    for forgotten in (frozenset(), frozenset(path[-3:])):
        assert E.effective_context(led, path, views, rt, tok, forgotten, scan) == E.effective_context(led, path, views, rt, tok, forgotten)
        lost = set(path[:2])
        assert E.coverage(led, path, views, rt, lost, forgotten, scan) == E.coverage(led, path, views, rt, lost, forgotten)
    report = analyze(led)
    assert report._scan is not None and report._scan.path is report.path
    slow = dataclasses.replace(report, _scan=None)
    for threshold in (1, 2, 3):
        assert _storm_data(F._storms(report, threshold)) == _storm_data(F._storms(slow, threshold))


def _storm_data(found: list[F.Finding]) -> list[tuple[str, str, list[int]]]:
    return [(f.code, f.message, f.records) for f in found]


def _mutate(led: Any, rng: random.Random) -> None:
    """Give records of the ledger (on its path or not) other index fields (the loader's list of
    them, `RecordIndex`, no longer theirs: dropped)."""
    led.index = None
    records = led.records
    for r in rng.sample(records, min(len(records), max(3, len(records) // 4))):
        field = rng.choice(["kind", "role", "source_role", "stop_reason", "never_sent"])
        if field == "kind":
            r.kind = rng.choice(KINDS)
        elif field == "role":
            r.role = rng.choice(ROLES)
        elif field == "source_role":
            r.source_role = rng.choice(SOURCE_ROLES)
        elif field == "stop_reason":
            r.stop_reason = rng.choice(STOPS)
        else:
            r.never_sent = not r.never_sent


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_scan_reads_the_path_as_the_records_do(path: Path) -> None:
    _both(load(str(path)))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_scan_reads_mutated_records_as_the_records_do(path: Path) -> None:
    rng = random.Random(f"{SEED}:{path.name}")
    for _ in range(6):
        led = load(str(path))
        _mutate(led, rng)
        _both(led)


def test_a_scan_of_another_path_is_not_read() -> None:
    """A report grown from another (analysis.incremental: `dataclasses.replace` with a new path)
    keeps the old scan: the storm rule reads the records then."""
    reports = [analyze(load(str(p))) for p in FILES]
    report = max(reports, key=lambda r: len(r.checkpoints))
    assert report.checkpoints
    cps = {v.seq for v in report.checkpoints}
    other = dataclasses.replace(report, path=[s for s in report.path if s not in cps])
    assert other._scan is report._scan and other._scan.path is not other.path
    assert _storm_data(F._storms(other, 1)) == _storm_data(F._storms(dataclasses.replace(other, _scan=None), 1)) == []


def _states_both(led: Any, rng: random.Random) -> None:
    """The run-at-a-time states (`engine._run_states`, a path in file order) against the
    message-at-a-time ones (`_scanned_states`), with the latest view's cut, position, kept
    records and represented ranges moved about and either rule for dropped replies."""
    rt = E.registry.get(led.format).runtime
    path, _ = E.active_path(led, rt)
    scan = E.PathScan(led.records, path, rt)
    if not scan.in_order():
        return
    views = E.checkpoint_views(led, path, rt, scan)
    n = len(path)
    for k in range(8):
        if views and k:
            v = views[-1]
            v.pos = rng.randrange(n) if n else 0
            v.cut = rng.randrange(v.pos + 2)
            v.keep = frozenset(rng.sample(path, min(n, rng.randrange(4)))) if n else frozenset()
            ends = sorted(rng.sample(range(n + 1), min(n + 1, 2 * rng.randrange(4))))
            v.rep = E.merge(list(zip(ends[::2], ends[1::2], strict=True)))
        for summarizes in (True, False):
            r = dataclasses.replace(rt, summarizes_dropped=summarizes)
            out = []
            for fn in (E._run_states, E._scanned_states):
                states: list[str | None] = [None] * len(led.records)
                by = [0] * len(led.records)
                fn(path, views, r, scan, states, by)
                out.append((states, by))
            assert out[0] == out[1]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_states_set_a_run_at_a_time_are_the_states_set_one_at_a_time(path: Path) -> None:
    _states_both_on(path, random.Random(f"{SEED}:states:{path.name}"), mutants=4)


def _states_both_on(path: Path, rng: random.Random, mutants: int) -> None:
    """`_states_both` on the file as read, then on `mutants` mutated copies of it."""
    _states_both(load(str(path)), rng)
    for _ in range(mutants):
        led = load(str(path))
        _mutate(led, rng)
        _states_both(led, rng)


def _reports_and_slow(path: Path, salt: str, mutants: int = 4) -> Iterator[tuple[Any, E.Report, E.Report]]:
    """The file's ledger, then `mutants` mutated copies of it: each with its analysis and the
    same report without its scan (`_scan` None: every reader reads the records)."""
    rng = random.Random(f"{SEED}:{salt}:{path.name}")
    for k in range(mutants + 1):
        led = load(str(path))
        if k:
            _mutate(led, rng)
        report = analyze(led)
        yield led, report, dataclasses.replace(report, _scan=None)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_hole_rules_read_the_scan_as_the_path(path: Path) -> None:
    """The holes found among the scan's messages, their causes and role counts (each counted once
    for both rules), against the same read from the whole path, on the file and mutants of it."""
    for led, report, slow in _reports_and_slow(path, "holes"):
        assert F.hole_positions(report) == [i for i, s in enumerate(report.path) if report.states[s] == E.HOLE]
        assert F.hole_positions(report) == F.hole_positions(slow)
        found = F.find_history(report)
        assert _finding_data(found) == _finding_data(F.find_history(slow))
        for f in found:  # (each cause's counts shared by both rules: still its own records')
            if f.code == "hole":
                assert f.by_role == F.role_counts(report, f.records) and str(len(f.records)) in f.message
        seqs = [s for s in report.path if report.states[s] is not None]
        counts = Counter(led.records[s].role for s in seqs)
        assert F.role_counts(report, seqs) == {k: counts[k] for k in ("system", "user", "assistant", "tool") if counts[k]}


def _finding_data(found: list[F.Finding]) -> list[tuple[Any, ...]]:
    return [(f.code, f.severity, f.message, f.records, f.by_role, f.data) for f in found]


@pytest.mark.parametrize("short", [1, 2, E._SHORT_SPAN])
def test_states_are_stored_a_run_of_positions_at_a_time_as_one_at_a_time(monkeypatch: pytest.MonkeyPatch, short: int) -> None:
    """`engine._store` (a slice per run of consecutive positions when the path is a run of seqs)
    stores what the one-at-a-time loop stores (one state, or each position's own), on paths that
    are runs of seqs and paths that are not, with positions that are one run, a few runs, scattered
    or none; `_spans` cuts the positions, in order, into ranges each consecutive or short."""
    monkeypatch.setattr(E, "_SHORT_SPAN", short)
    rng = random.Random(f"{SEED}:store:{short}")
    for k in range(300):
        n = rng.randrange(0, 200)
        first = rng.randrange(0, 5)
        path = list(range(first, first + n)) if k % 3 else sorted(rng.sample(range(first, first + 2 * n + 1), n))
        gaps = rng.choice([0, 1, 3, n // 2 + 1])
        skip = set(rng.sample(range(n), min(n, gaps)))
        positions = [i for i in range(n) if i not in skip] if k % 5 else sorted(rng.sample(range(n), rng.randrange(n + 1)))
        spans = E._spans(positions)
        assert [i for lo, hi, _ in spans for i in range(lo, hi)] == list(range(len(positions)))
        for lo, hi, consecutive in spans:
            assert consecutive == (positions[hi - 1] - positions[lo] == hi - 1 - lo) or (not consecutive and hi - lo <= short)
            assert consecutive or hi - lo <= short
        base = path[0] if path and path[-1] - path[0] == len(path) - 1 else None
        size = (path[-1] + 1) if path else 0
        fast: list[str | None] = [None] * size
        slow: list[str | None] = [None] * size
        E._store(fast, path, base, positions, E.LIVE)
        for i in positions:
            slow[path[i]] = E.LIVE
        assert fast == slow
        by_position = [f"at {i}" for i in range(n)]  # (each position's own value: `summarized_by`'s store)
        E._store(fast, path, base, positions, None, by_position)
        for i in positions:
            slow[path[i]] = by_position[i]
        assert fast == slow


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_run_states_cut_to_the_shortest_spans_are_the_states_set_one_at_a_time(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """As above with `_spans` halving down to single positions (every cut `_run_states` may make)."""
    monkeypatch.setattr(E, "_SHORT_SPAN", 1)
    _states_both_on(path, random.Random(f"{SEED}:spans:{path.name}"), mutants=2)


def test_the_coded_messages_are_found_by_search_as_by_a_scan() -> None:
    """`engine._nonzero` finds the positions of every nonzero code, in order (none, all, adjacent,
    at either end), as reading each code does."""
    rng = random.Random(f"{SEED}:nonzero")
    cases = [bytearray(), bytearray(5), bytearray([1, 2, 1]), bytearray([0, 0, 2]), bytearray([2, 0, 0])]
    cases += [bytearray(rng.choice([0, 0, 0, 1, 2]) for _ in range(rng.randrange(60))) for _ in range(200)]
    for codes in cases:
        assert E._nonzero(codes) == [j for j, c in enumerate(codes) if c]


def test_context_items_share_only_the_empty_tuple() -> None:
    """`ContextItem`'s call lists default to the empty tuple, which no item can change in place
    (one item's calls never show in another's), and the items `sent_items` makes for replies each
    hold a list of their own, as the JSON contract's `tool_call_ids` is."""
    from inspector.ledger.model import Record

    a = E.ContextItem(0, "user", "message", 1, "a", 2, False, "")
    assert a.tool_call_ids == () and a.unanswered == ()
    with pytest.raises(AttributeError):
        a.tool_call_ids.append("c1")  # type: ignore[attr-defined]
    recs = []
    for s, calls in enumerate([(), ("c1",), (), ("c2", "c3")]):
        r = Record(s, s + 1, "message", "message", f"m{s}", role="assistant", call_ids=calls)
        recs.append(r)
    items = E.sent_items(recs, list(range(len(recs))), E.registry.get("native").runtime, set())
    lists = [it.tool_call_ids for it in items if it.role == "assistant"]
    assert lists == [[], ["c1"], [], ["c2", "c3"]]
    assert all(type(x) is list for x in lists) and len({id(x) for x in lists}) == len(lists)


def _plain_sent_items(records: list[Any], sources: list[int], rt: Any, in_context_calls: set[str], forgotten: frozenset[int]) -> list[Any]:
    """`engine.sent_items` as it was written before its settled calls were found in C (a closure
    flushing each reply's calls, a new answered set per reply): the reference."""
    items: list[Any] = []
    pending: tuple[str, ...] = ()
    answered: set[str] = set()
    pending_item: Any = None

    def flush() -> None:
        nonlocal pending, answered, pending_item
        missing = [c for c in pending if c not in answered]
        if missing and pending_item is not None:
            pending_item.unanswered = missing
            if rt.synthesize_missing_results:
                for c in missing:
                    items.append(E.ContextItem(0, "tool", "message", None, None, None, True, rt.synthetic_result_text, tool_result_id=c))
        pending, answered, pending_item = (), set(), None

    for s in sources:
        rec = records[s]
        if rec.never_sent:
            continue
        role = rec.role
        if role == "assistant":
            if pending:
                flush()
            if rec.stop_reason in rt.drop_stop_reasons or s in forgotten:
                continue
            item = E.ContextItem(0, "assistant", "message", s, rec.id, rec.line, False, "", tool_call_ids=list(rec.call_ids))
            items.append(item)
            if rec.call_ids:
                pending, answered, pending_item = rec.call_ids, set(), item
                in_context_calls.update(rec.call_ids)
        elif role == "tool":
            rid = rec.result_id
            if rt.many_results_per_message:
                rids = [rid] if rid is not None else []
                answered.update(rids)
                orphan = not rids or not in_context_calls.issuperset(rids)
            elif rid is not None:
                answered.add(rid)
                orphan = rid not in in_context_calls
            else:
                orphan = True
            items.append(E.ContextItem(0, "tool", "message", s, rec.id, rec.line, False, "", tool_result_id=rid, orphan=orphan))
        elif role is not None:
            if role == "user" and pending:
                flush()
            items.append(E.ContextItem(0, role, "message", s, rec.id, rec.line, False, ""))
    flush()
    return items


def test_the_items_sent_are_those_of_the_plain_pairing() -> None:
    """`engine.sent_items` (a reply's calls settled found by one superset test, the answered set
    cleared rather than made anew) gives the items, unanswered calls, synthetic results and calls in
    context of the plain pairing, on random messages: every role, calls drawn from a few ids (answered,
    not, twice, out of turn, before any call), never-sent and dropped replies, forgotten answers, and
    runtimes that synthesize results, drop stop reasons or take many results a message."""
    from inspector.ledger.model import STOP_REASONS, Record

    rng = random.Random(f"{SEED}:sent")
    base_rt = E.registry.get("native").runtime
    ids = ["c0", "c1", "c2", "c3"]
    for k in range(600):
        records = []
        for s in range(rng.randrange(40)):
            r = Record(s, s + 1, "message", "message", f"m{s}")
            r.role, r.never_sent = rng.choice(["assistant", "assistant", "tool", "tool", "user", "system", None]), rng.random() < 0.1
            r.stop_reason = rng.choice([None, None, *STOP_REASONS])
            r.call_ids = tuple(rng.choice(ids) for _ in range(rng.choice([0, 0, 1, 1, 2, 3]))) if r.role == "assistant" else ()
            r.result_id = rng.choice([*ids, None]) if r.role == "tool" else None
            records.append(r)
        sources = [s for s in range(len(records)) if rng.random() < 0.9]
        forgotten = frozenset(s for s in sources if rng.random() < 0.1)
        rt = dataclasses.replace(
            base_rt,
            drop_stop_reasons=frozenset(rng.sample(STOP_REASONS, rng.randrange(3))),
            synthesize_missing_results=rng.random() < 0.5,
            synthetic_result_text=rng.choice(["", "aborted"]),
            many_results_per_message=rng.random() < 0.3,
        )
        before = set(rng.sample(ids, rng.randrange(3)))
        calls_fast, calls_plain = set(before), set(before)
        fast = E.sent_items(records, sources, rt, calls_fast, forgotten)
        plain = _plain_sent_items(records, sources, rt, calls_plain, forgotten)
        assert [msgspec.structs.asdict(i) for i in fast] == [msgspec.structs.asdict(i) for i in plain], k
        assert calls_fast == calls_plain, k


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_summarizer_range_holds_a_message_as_its_slice_says(path: Path) -> None:
    """`findings._summarized_any` reads its checkpoint's own ranges position by position, as a
    slice of the path would list them: on every checkpoint of the file and with its ranges moved
    (empty, one position, past messages and off them)."""
    report = analyze(load(str(path)))
    rng = random.Random(f"{SEED}:own:{path.name}")
    n = len(report.path)
    for v in report.checkpoints:
        recs = v._records
        ranges = [sorted(rng.randrange(n + 1) for _ in range(2)) for _ in range(8)]
        for own in [v.own, [], *[[(lo, hi)] for lo, hi in ranges], [(lo, lo + 1) for lo, _ in ranges if lo < n]]:
            w = copy.copy(v)
            w.own = own
            want = any(recs[s].kind == "message" for lo, hi in w.own for s in w._path[lo:hi])
            assert F._summarized_any(w) == want, (v.index, w.own)


def test_the_flags_picked_by_search_or_slices_are_the_flags_compressed() -> None:
    """`engine.picked` (few 1s: searched; few 0s: sliced between; else `compress`) picks what
    `compress` picks, at every density (none, all, a few at either end or adjacent), the items as
    long as the flags or longer, each picked item the item object itself."""
    from itertools import compress

    rng = random.Random(f"{SEED}:picked")
    cases = [b"", b"\x00", b"\x01", b"\x01" * 40, b"\x00" * 40, b"\x01" + b"\x00" * 40 + b"\x01", b"\x00" + b"\x01" * 40 + b"\x00"]
    for _ in range(400):
        p = rng.choice([0.0, 0.01, 0.05, 0.08, 0.2, 0.5, 0.92, 0.95, 0.99, 1.0])
        cases.append(bytes(int(rng.random() < p) for _ in range(rng.randrange(300))))
    for flags in cases:
        items = [rng.randrange(10**6) + 1000 for _ in range(len(flags) + rng.choice([0, 0, 3]))]
        for f in (flags, bytearray(flags)):
            got = E.picked(items, f)
            assert got == list(compress(items, f)), flags
            assert all(a is b for a, b in zip(got, compress(items, f), strict=True))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_analysis_knows_a_linear_path_in_file_order(path: Path) -> None:
    """`analyze` tells its scan that a linear runtime's path is in file order (each seq once)
    without checking: on every file, with records taken off the path (a roll-back's), and with a
    tree's path out of file order (two of its records swapped), the scan says what the check says."""
    rng = random.Random(f"{SEED}:order:{path.name}")
    for k in range(5):
        led = load(str(path))
        if k == 4:
            rt = E.registry.get(led.format).runtime
            walked, _ = E.active_path(led, rt)
            if not rt.tree or len(walked) < 2:
                continue
            i = rng.randrange(len(walked) - 1)
            walked[i], walked[i + 1] = walked[i + 1], walked[i]
            led.resolved_path = walked
        elif k:
            led.index = None  # (the loader listed what was on the path: no longer so)
            for r in rng.sample(led.records, min(len(led.records), max(1, len(led.records) // 5))):
                r.runtime_visible = False
        report = analyze(led)
        assert report._scan is not None
        assert report._scan.in_order() is E._increasing(report.path)


# ------------------------------------------------------------------ the loader's record index


CODEX_FILES = sorted((SHARED / "real_sessions" / "codex").glob("*.jsonl")) + sorted((REPO / "tests").glob("**/fixtures/codex-*/*.jsonl"))
CODEX_FILES += sorted((REPO / "tests" / "peers" / "codex_resume" / "sessions").glob("*.jsonl"))
CODEX_FILES = [p for p in CODEX_FILES if b'"response_item"' in p.read_bytes()]  # (not a runtime's requests)


def _codex_variants(path: Path, tmp: Path) -> list[Path]:
    """The file, and copies of it with its header moved down or gone, with roll-backs (records
    taken off the path) and with a compaction line cut in half (a line read whole, diagnosed)."""
    import orjson

    lines = path.read_bytes().splitlines(keepends=True)
    ts = orjson.loads(lines[-1]).get("timestamp")

    def roll_back(n: int) -> bytes:
        return orjson.dumps({"timestamp": ts, "type": "event_msg", "payload": {"type": "thread_rolled_back", "num_turns": n}}) + b"\n"

    mid = len(lines) * 2 // 3
    cut = [ln[: len(ln) // 2] + b"\n" if b'"compacted"' in ln[:80] else ln for ln in lines]
    variants = {
        "as_is": lines,
        "header_moved": lines[1:3] + lines[:1] + lines[3:],
        "no_header": lines[1:],
        "rolled_back": [*lines[:mid], roll_back(1), *lines[mid:], roll_back(2)],
        "compaction_cut": cut,
    }
    out = []
    for name, body in variants.items():
        f = tmp / f"{path.stem}.{name}.jsonl"
        f.write_bytes(b"".join(body))
        out.append(f)
    return out


def _scan_fields(scan: E.PathScan) -> tuple[Any, ...]:
    return (scan.msgs, bytes(scan.codes), scan.turns, scan.breaks, scan.cps)


@pytest.mark.parametrize("path", CODEX_FILES, ids=lambda p: p.name)
def test_the_loaders_record_index_lists_what_the_records_hold(path: Path, tmp_path: Path) -> None:
    """A Codex ledger's `RecordIndex` (what the loader listed as it read: each record's
    `mark_code`, the ints 0 .. n-1 its seqs are, and what a file-order path leaves out) is what
    reading every record finds, whether the lines were read from their heads or whole; the path
    and the scan made from it are the ones made by reading every record."""
    from inspector.formats.codex import build
    from inspector.formats.jsonl import parse_line

    for f in _codex_variants(path, tmp_path):
        raw = f.read_bytes().splitlines(keepends=True)
        offsets = [sum(map(len, raw[:i])) for i in range(len(raw))]
        whole = build([rl for i, ln in enumerate(raw) if (rl := parse_line(ln, i + 1, offsets[i], i == len(raw) - 1))], None)
        for led in (load(str(f)), whole):
            ix = led.record_index()
            assert ix is not None
            assert ix.marks is None and ix.codes == bytes(map(mark_code, led.records))  # (the codes say which records are marked)
            assert ix.seqs == list(range(len(led.records)))
            walked = [r.seq for r in led.records if r.runtime_visible and r.kind != "header"]
            if ix.off_path is not None:
                assert ix.off_path == sorted(set(range(len(led.records))) - set(walked))
            else:
                assert len(walked) + sum(r.kind == "header" for r in led.records) < len(led.records)  # (a roll-back's)
            rt = E.registry.get(led.format).runtime
            path_, _ = E.active_path(led, rt)
            assert path_ == walked
            fast, slow = E.PathScan(led.records, path_, rt, True, ix.marks, ix.codes), E.PathScan(led.records, path_, rt, True)
            assert _scan_fields(fast) == _scan_fields(slow)
            slow_led = dataclasses.replace(led, index=None)
            assert analyze(led).states == analyze(slow_led).states


def test_a_record_index_is_not_read_for_records_grown_or_replaced() -> None:
    """A ledger whose records are not the ones its index was taken with (grown by an append,
    replaced by `dataclasses.replace`) reads its records."""
    led = load(str(CODEX_FILES[0]))
    assert led.record_index() is not None
    led.records.append(msgspec.structs.replace(led.records[-1], seq=len(led.records)))
    assert led.record_index() is None
    led = load(str(CODEX_FILES[0]))
    assert dataclasses.replace(led, records=list(led.records)).record_index() is None


def test_the_scan_reads_only_the_marked_records_of_a_run_of_seqs() -> None:
    """`engine._positions`: every (position, seq) of the path unless the path is a run of seqs
    in file order and marks are given; then only the marked seqs inside the run, each at its
    position, whatever marks lie outside it."""
    rng = random.Random(f"{SEED}:positions")
    for _ in range(500):
        first, n = rng.randrange(4), rng.randrange(40)
        run = rng.random() < 0.7
        path = list(range(first, first + n)) if run else sorted(rng.sample(range(first, first + 2 * n + 1), n))
        marks = sorted(rng.sample(range(first + 2 * n + 3), rng.randrange(first + 2 * n + 3)))
        got = list(E._positions(path, True, marks))
        if path and path[-1] - path[0] == len(path) - 1:  # (a sample may make a run too)
            assert got == [(i, s) for i, s in enumerate(path) if s in set(marks)]
        else:
            assert got == list(enumerate(path))
        assert list(E._positions(path, None, marks)) == list(enumerate(path))
        assert list(E._positions(path, True, None)) == list(enumerate(path))


def _plain_span(report: Any, ivs: list[tuple[int, int]]) -> dict[str, Any]:
    """`export.PathCounts.span` by reading every record of each range of path positions."""
    records, path = report.ledger.records, report.path
    by_role = dict.fromkeys(X.PathCounts.ROLES, 0)
    lines = []
    for lo, hi in ivs:
        for i in range(lo, hi):
            r = records[path[i]]
            if r.kind == "message" and r.role in by_role:
                by_role[r.role] += 1
                lines.append(r.line)
    out: dict[str, Any] = {"count": sum(by_role.values()), "by_role": {k: n for k, n in by_role.items() if n}}
    if lines:
        out["first_line"], out["last_line"] = min(lines), max(lines)
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_json_counts_read_from_the_scan_are_the_records_own(path: Path) -> None:
    """`analyze --json`'s counts of messages by role over ranges of the path (each checkpoint's
    removes, represents, retains) and of the ledger's messages, read from the analysis's scan,
    against the same counted record by record, on the file and mutants of it (records before
    and after a linear path made messages too)."""
    rng = random.Random(f"{SEED}:json:{path.name}:ranges")
    for led, report, slow in _reports_and_slow(path, "json"):
        assert X.message_count(report) == sum(r.kind == "message" for r in led.records) == X.message_count(slow)
        assert X.analyze_json(report) == X.analyze_json(slow)
        counts, n = X.PathCounts(report), len(report.path)
        for _ in range(20):
            ivs = sorted(tuple(sorted(rng.randint(0, n) for _ in range(2))) for _ in range(rng.randint(1, 3)))
            assert counts.span(ivs) == _plain_span(report, ivs)


def test_the_scan_from_the_loaders_mark_codes_is_the_scan_of_the_records() -> None:
    """`PathScan` given the loader's `mark_code` of each record (`RecordIndex.codes`) picks its
    lists out of the codes in C and reads no record: on random records (every kind, role, source
    role, stop reason and never-sent flag, checkpoint records with and without their checkpoint),
    random runs of seqs (from seq 0 or later) and the drop sets of every runtime and random ones,
    the scan is the one made by reading the records."""
    from inspector.ledger.model import STOP_REASONS, Checkpoint, Record, mark_code

    rng = random.Random(f"{SEED}:codes")
    base_rt = E.registry.get("native").runtime
    drops = {E.registry.get(name).runtime.drop_stop_reasons for name in E.registry.names()}
    drops |= {frozenset(rng.sample(STOP_REASONS, rng.randrange(len(STOP_REASONS) + 1))) for _ in range(20)}
    for k in range(400):
        records = []
        # (mixed kinds, or nearly all one: `engine.picked`'s searched and sliced lists)
        pool = rng.choice([["message", "message", "checkpoint", "meta", "header"], ["message"] * 40 + ["checkpoint", "meta"], ["meta"] * 40 + ["message", "checkpoint"]])
        for s in range(rng.randrange(200)):
            kind = rng.choice(pool)
            cp = Checkpoint(summary="s") if kind == "checkpoint" and rng.random() < 0.7 else None
            r = Record(s, s + 1, kind, kind, f"r{s}", checkpoint=cp)
            r.role, r.source_role = rng.choice(ROLES), rng.choice(SOURCE_ROLES)
            r.stop_reason, r.never_sent = rng.choice([None, *STOP_REASONS]), rng.random() < 0.2
            records.append(r)
        marks = [r.seq for r in records if r.kind in ("message", "checkpoint")]
        codes = bytes(map(mark_code, records))
        a = rng.randrange(len(records) + 1)
        path = list(range(a, rng.randrange(a, len(records) + 1)))
        rt = dataclasses.replace(base_rt, drop_stop_reasons=rng.choice(sorted(drops, key=sorted)))
        fast = E.PathScan(records, path, rt, True, rng.choice([None, marks]), codes)
        slow = E.PathScan(records, path, rt)
        assert _scan_fields(fast) == _scan_fields(slow), k
        assert type(fast.codes) is bytearray
        assert all(fast.path[i] - path[0] == i for i in fast.msgs + fast.turns + fast.breaks), k


def test_seqs_without_made_of_the_loaders_ints_are_those_made_anew() -> None:
    """`seqs_without` taking a loader's ints (`RecordIndex.seqs`) gives the seqs it makes anew:
    none, one or many left out, at the start, inside, at the end; never the loader's list itself."""
    from inspector.ledger.model import seqs_without

    rng = random.Random(f"{SEED}:seqs_without")
    for _ in range(300):
        n = rng.randrange(0, 40)
        left = sorted(rng.sample(range(n), rng.randrange(min(n, 4) + 1))) if n else []
        ints = list(range(n))
        got = seqs_without(left, n, ints)
        assert got == seqs_without(left, n) == [i for i in range(n) if i not in left]
        assert got is not ints and all(a is ints[a] for a in got)
