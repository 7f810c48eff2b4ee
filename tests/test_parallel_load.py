"""A big pi file is read by two processes, the loader from the start and a forked helper from the
end, a chunk at a time, until they meet: the ledger must be the one the serial path builds, record
for record, wherever they meet, including lines that need recovery in the helper's chunks."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from benchmarks.gen_pi_ledger import generate
from inspector.formats import fork_reader_ahead, load, pi
from inspector.formats import parallel as par
from inspector.ledger.model import Ledger

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the helper is forked")

SERIAL = 1 << 62  # no file is this big: the serial path
SMALL = 1 << 20  # a few-MB file takes the parallel path
CHUNK = 256 << 10  # so it has a dozen chunks


def _snapshot(led: Ledger) -> dict[str, Any]:
    """Everything the loader decides, with the types of what it keeps (tuple vs list matters)."""
    recs = []
    for r in led.records:
        recs.append(
            (
                r.seq,
                r.line,
                r.kind,
                r.type,
                r.id,
                r.parent_id,
                r.timestamp,
                type(r.timestamp),
                r.runtime_visible,
                r.offset,
                r.length,
                r.role,
                r.stop_reason,
                r.never_sent,
                r.source_role,
                r.call_ids,
                type(r.call_ids),
                r.result_id,
                r.run_id,
                r.checkpoint,
                r._message is None,  # read lazily or not, the same on both paths
                r.extra,
                r.message,
            )
        )
    return {
        "records": recs,
        "diagnostics": [(d.line, d.problem, d.message, d.recovered, d.severity, d.seqs) for d in led.diagnostics],
        "by_id": led.by_id(),
        "leaf": led.leaf_seq,
        "size": led.size,
        "sha256": led.sha256,
        "session": led.session_id,
        "header": led.header,
        "version": led.version,
        "migrated": led.migrated,
        "rejects": led.runtime_rejects_file,
        "upto": led.upto_line,
    }


@pytest.fixture(scope="module")
def base_lines(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    path = tmp_path_factory.mktemp("gen") / "ledger.jsonl"
    generate(str(path), 4000, 7, quiet=True)  # ~3.4 MB
    return path.read_bytes().splitlines(keepends=True)


def spy_forks(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every helper forked from now on, in order (None when the parallel path was not taken)."""
    made: list[Any] = []
    real = par.fork_helper

    def spy(*args: Any, **kw: Any) -> Any:
        h = real(*args, **kw)
        made.append(h)
        return h

    monkeypatch.setattr(par, "fork_helper", spy)
    # Other tests may leave idle threads behind (Textual's); the helper only reads and decodes.
    monkeypatch.setattr(par, "_single_threaded", lambda: True)
    return made


@pytest.fixture
def helpers(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every helper forked, in order, with chunks of `CHUNK` bytes."""
    monkeypatch.setattr(par, "CHUNK_BYTES", CHUNK)
    return spy_forks(monkeypatch)


def _loader_stops_at(monkeypatch: pytest.MonkeyPatch, at: int) -> None:
    """The loader reads the chunks before byte `at` (at least the first) and leaves every chunk
    from there to the helper, which takes only those: who decodes what is fixed."""
    real_fork = par.fork_helper

    def fork(fd: int, size: int, *args: Any, **kw: Any) -> Any:
        bounds = par._chunk_bounds(fd, size, par.CHUNK_BYTES)
        k = max(1, sum(1 for b in bounds[:-1] if b < at))
        monkeypatch.setattr(par, "_helpers_order", lambda start, n: list(range(k, n)))
        h = real_fork(fd, size, *args, **kw)
        if h is not None:
            h.own_below = k
        return h

    monkeypatch.setattr(par, "fork_helper", fork)


def _both(path: Path, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", SERIAL)
    serial = _snapshot(load(str(path), **kw))
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", SMALL)
    parallel = _snapshot(load(str(path), **kw))
    return serial, parallel


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(lines))
    return path


def _assert_same(serial: dict[str, Any], parallel: dict[str, Any]) -> None:
    assert serial.keys() == parallel.keys()
    for k in serial:
        if k == "records":
            assert len(serial[k]) == len(parallel[k])
            for a, b in zip(serial[k], parallel[k], strict=True):
                assert a == b
        else:
            assert serial[k] == parallel[k], k


def test_clean_file_same_ledger(base_lines: list[bytes], tmp_path: Path, monkeypatch, helpers) -> None:
    path = _write(tmp_path / "clean.jsonl", base_lines)
    serial, parallel = _both(path, monkeypatch)
    assert [h is not None for h in helpers] == [False, True]
    assert len(helpers[1].bounds) > 10 and helpers[1].pid == 0  # chunks; reaped
    assert helpers[1].appended > 0
    assert len(serial["records"]) == len(base_lines)
    _assert_same(serial, parallel)


@pytest.mark.parametrize("share", [0.0, 0.3, 0.9, 1.0])
def test_same_ledger_wherever_they_meet(
    share: float, base_lines: list[bytes], tmp_path: Path, monkeypatch, helpers
) -> None:
    path = _write(tmp_path / "clean.jsonl", base_lines)
    size = path.stat().st_size
    at = int(size * share) + (share == 1)
    _loader_stops_at(monkeypatch, at)
    serial, parallel = _both(path, monkeypatch)
    h = helpers[1]
    assert h is not None
    chunks = len(h.bounds) - 1
    assert h.appended == chunks - max(1, sum(1 for b in h.bounds[:-1] if b < at))
    _assert_same(serial, parallel)


def test_a_slow_helper_leaves_more_to_the_loader(
    base_lines: list[bytes], tmp_path: Path, monkeypatch, helpers
) -> None:
    import time

    real = par._pwrite_all

    def slow(*args: Any) -> Any:  # in the helper only
        time.sleep(0.2)
        return real(*args)

    monkeypatch.setattr(par, "_pwrite_all", slow)
    path = _write(tmp_path / "clean.jsonl", base_lines)
    serial, parallel = _both(path, monkeypatch)
    assert helpers[1].appended < (len(helpers[1].bounds) - 1) // 2  # the loader took most chunks
    _assert_same(serial, parallel)


def test_bad_lines_in_the_helpers_part(base_lines: list[bytes], tmp_path: Path, monkeypatch, helpers) -> None:
    lines = list(base_lines)
    n = len(lines)
    a, b, c, d, e = (n * 6) // 10, (n * 7) // 10, (n * 8) // 10, (n * 9) // 10, n - 5
    lines[a] = lines[a].rstrip(b"\n") + lines[a + 1]  # two entries glued on one line
    del lines[a + 1]
    lines[b] = lines[b][: len(lines[b]) // 2] + b"\n"  # malformed (cut in the middle)
    lines[c] = lines[c].replace(b'"text":"', b'"text":"\xff\xfe', 1)  # invalid UTF-8
    lines.insert(d, b"\n")  # a blank line
    lines.insert(d + 1, b"[1, 2]\n")  # JSON, not an object
    lines[e] = lines[e].replace(b'"type":"message"', b'"type":"label"', 1)  # another entry type
    path = _write(tmp_path / "bad.jsonl", lines)
    _loader_stops_at(monkeypatch, sum(map(len, lines[: n // 2])))  # the bad lines are the helper's
    serial, parallel = _both(path, monkeypatch)
    assert helpers[1] is not None and helpers[1].appended >= (len(helpers[1].bounds) - 1) // 3
    problems = {p for _, p, *_ in serial["diagnostics"]}
    assert {"glued_objects", "malformed_json", "invalid_utf8", "not_an_object"} <= problems
    _assert_same(serial, parallel)


def test_truncated_last_line(base_lines: list[bytes], tmp_path: Path, monkeypatch, helpers) -> None:
    lines = list(base_lines)
    lines[-1] = lines[-1][: len(lines[-1]) // 2]  # no newline, cut short: still being written
    path = _write(tmp_path / "trunc.jsonl", lines)
    _loader_stops_at(monkeypatch, 0)
    serial, parallel = _both(path, monkeypatch)
    assert helpers[1] is not None and helpers[1].appended == len(helpers[1].bounds) - 2
    assert serial["diagnostics"][-1][1] == "truncated_line"
    _assert_same(serial, parallel)


def test_duplicate_id_in_the_helpers_part(base_lines: list[bytes], tmp_path: Path, monkeypatch, helpers) -> None:
    lines = list(base_lines)
    lines.insert(len(lines) - 3, lines[len(lines) * 3 // 4])  # the same entry written twice
    path = _write(tmp_path / "dup.jsonl", lines)
    _loader_stops_at(monkeypatch, 0)
    serial, parallel = _both(path, monkeypatch)
    assert helpers[1] is not None and helpers[1].appended == len(helpers[1].bounds) - 2
    assert any(p == "duplicate_id" for _, p, *_ in serial["diagnostics"])
    _assert_same(serial, parallel)


def test_a_failing_helper_falls_back_to_reading_here(
    base_lines: list[bytes], tmp_path: Path, monkeypatch, helpers
) -> None:
    path = _write(tmp_path / "clean.jsonl", base_lines)
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", SERIAL)
    serial = _snapshot(load(str(path)))

    def boom(*_: Any) -> Any:
        raise RuntimeError("the helper fails")

    monkeypatch.setattr(par, "_pwrite_all", boom)  # runs in the forked helper only
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", SMALL)
    parallel = _snapshot(load(str(path)))
    assert helpers[-1] is not None and helpers[-1].pid == 0  # forked, failed, reaped
    _assert_same(serial, parallel)


def test_upto_line_reads_serially(base_lines: list[bytes], tmp_path: Path, monkeypatch, helpers) -> None:
    path = _write(tmp_path / "clean.jsonl", base_lines)
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", SMALL)
    led = load(str(path), upto_line=len(base_lines) - 10)
    assert helpers == [] or helpers == [None]
    assert len(led.records) == len(base_lines) - 10


def test_chunks_start_at_lines_and_heads_split_them_like_the_file(tmp_path: Path) -> None:
    """Lines longer than a chunk, and a last line without its newline."""
    lines = [b'{"type":"message","id":"a%d","message":{"role":"user","content":"%s"}}\n' % (i, b"x" * (i * 37 % 300)) for i in range(60)]
    lines[-1] = lines[-1].rstrip(b"\n")
    data = b"".join(lines)
    path = tmp_path / "l.jsonl"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        bounds = par._chunk_bounds(fd, len(data), 64)
        start = len(lines[0]) + len(lines[1])
        got = pi._heads_of_range(fd, start, len(data))
        by_chunks = [h for i in range(len(bounds) - 1) for h in pi._heads_of_range(fd, bounds[i], bounds[i + 1])]
    finally:
        os.close(fd)
    starts = {sum(map(len, lines[:i])) for i in range(len(lines))}
    assert bounds[0] == 0 and bounds[-1] == len(data) and set(bounds[:-1]) <= starts
    assert bounds == sorted(set(bounds)) and len(bounds) > 20
    assert by_chunks[2:] == got
    expected, at = [], start
    for x in lines[2:]:
        h = pi._line_head(x, at)
        expected.append(len(x) if h is None else h)
        at += len(x)
    assert got == expected
    assert all(type(h) is tuple for h in got[:-1]) and got[-1] == pi._line_head(lines[-1], at - len(lines[-1]))


def _edge_lines(tag: str) -> list[bytes]:
    """Message lines at the edges of the fast path (the helper decides them with `_line_head`, the
    loading process with its inlined copy of it: the two must agree)."""
    bodies = [
        '"message":{"role":"user","content":"plain"}',
        '"message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","data":"x"}]}',
        '"message":{"role":"user","content":5}',
        '"message":{"role":"user","content":["not an object"]}',
        '"message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"r","arguments":{}},'
        '{"type":"toolCall","id":7},{"type":"toolCall","id":""},{"type":"text","text":"t"}],"stopReason":"toolUse"}',
        '"message":{"role":"assistant","content":"just text","stopReason":"length"}',
        '"message":{"role":"assistant","content":[],"stopReason":"weird"}',
        '"message":{"role":"assistant","content":[],"stopReason":5}',
        '"message":{"role":"assistant","content":[],"stopReason":[1]}',
        '"message":{"role":"assistant","content":[],"stopReason":{"a":1}}',
        '"message":{"role":"toolResult","toolCallId":"c1","toolName":"r","content":[{"type":"text","text":"ok"}]}',
        '"message":{"role":"toolResult","toolCallId":5,"content":"odd id"}',
        '"message":{"role":"bashExecution","command":"ls","output":"x","excludeFromContext":true}',
        '"message":{"role":"bashExecution","command":"ls","output":"x","excludeFromContext":false}',
        '"message":{"role":"bashExecution","command":"ls","output":"x","excludeFromContext":"yes"}',
        '"message":{"role":"custom","customType":"n","content":"note","display":true}',
        '"message":{"role":"compactionSummary","summary":"s"}',
        '"message":{"role":"hookMessage","content":"h"}',
        '"message":{"content":"no role"}',
        '"message":{"role":5,"content":"numeric role"}',
        '"message":null',
        '"message":"a string"',
        '"message":{"role":"user","content":"caf\u00e9 \u2603 \U0001f600","extraField":{"k":[1,2]}},"entryExtra":1',
        '"message":{"role":"user","content":"esc\\u0061ped \\ud83d\\ude00 \\n"}',
        '"message":{"role":"user","content":"dup"},"message":{"role":"assistant","content":"dup2"}',
    ]
    out = []
    prev = f"{tag}00"
    for i, body in enumerate(bodies, 1):
        rid = f"{tag}{i:02d}"
        out.append(f'{{"type":"message","id":"{rid}","parentId":"{prev}","timestamp":"2026-01-01T00:00:{i:02d}Z",{body}}}\n'.encode())
        prev = rid
    n = len(bodies)
    out += [
        f'{{"type":"message","parentId":"{prev}","message":{{"role":"user","content":"no id"}}}}\n'.encode(),
        f'{{"type":"message","id":5,"parentId":"{prev}","message":{{"role":"user","content":"int id"}}}}\n'.encode(),
        f'{{"type":"message","id":"{tag}{n + 1}","parentId":5,"message":{{"role":"user","content":"int parent"}}}}\n'.encode(),
        f'{{"type":"message","id":"{tag}{n + 2}","parentId":null,"timestamp":17,"message":{{"role":"user","content":"t"}}}}\n'.encode(),
        f'{{"type":"message","id":"{tag}{n + 3}","parentId":"{tag}{n + 2}","timestamp":{{"at":1}},"message":{{"role":"user","content":"t"}}}}\n'.encode(),
        f'{{"type":"message","id":"{tag}{n + 4}","parentId":"{tag}{n + 3}","message":{{"role":"user","content":"bad \xff utf8"}}}}\n'.encode("latin-1"),
        f'{{"type":"custom_message","id":"{tag}{n + 5}","parentId":"{tag}{n + 4}","customType":"x","content":"c","display":true}}\n'.encode(),
        f'{{"type":"label","id":"{tag}{n + 6}","parentId":"{tag}{n + 5}","targetId":"{tag}01","label":"l"}}\n'.encode(),
        f'{{"type":"compaction","id":"{tag}{n + 7}","parentId":"{tag}{n + 6}","summary":"s","firstKeptEntryId":"{tag}03","tokensBefore":9}}\n'.encode(),
        f'{{"type":"message","id":"{tag}{n + 8}","parentId":"{tag}{n + 7}","message":{{"role":"user","content":"after"}}}}\n'.encode(),
    ]
    return out


def test_edge_lines_decided_alike_by_the_helper_and_here(tmp_path: Path, monkeypatch, helpers) -> None:
    header = b'{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00Z","cwd":"/x"}\n'
    first, second = _edge_lines("a"), _edge_lines("b")
    filler = [b'{"type":"message","id":"z%03d","parentId":null,"message":{"role":"user","content":"f"}}\n' % i for i in range(40)]
    lines = [header, *first, *filler, *second]
    path = _write(tmp_path / "edge.jsonl", lines)
    second_at = sum(map(len, lines[: 1 + len(first) + len(filler)]))
    monkeypatch.setattr(par, "CHUNK_BYTES", 300)
    _loader_stops_at(monkeypatch, second_at - 1000)  # `first` is the loader's, `second` the helper's
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", SERIAL)
    serial = _snapshot(load(str(path)))
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", 1)
    parallel = _snapshot(load(str(path)))
    h = helpers[-1]
    assert h is not None and h.own_below > 1
    assert sum(map(len, lines[: 1 + len(first)])) <= h.bounds[h.own_below] <= second_at
    assert h.appended == len(h.bounds) - 1 - h.own_below
    _assert_same(serial, parallel)
    # Each copy was decided alike: the same fields for a-lines as for the matching b-lines.
    recs = serial["records"]
    by_line = {r[1]: r for r in recs}
    off = len(first) + len(filler)
    for i in range(2, 2 + len(first)):
        a, b = by_line.get(i), by_line.get(i + off)
        assert (a is None) == (b is None)
        if a is not None:
            # kind, type, role, stop reason, never sent, source role, call ids, result id, lazily read
            pick = (2, 3, 11, 12, 13, 14, 15, 16, 17, 20)
            assert [a[k] for k in pick] == [b[k] for k in pick], i


def test_records_are_not_tracked_by_the_collector_and_a_ledger_is_still_freed(base_lines, tmp_path) -> None:
    """Records are built by the hundred thousand: the cyclic GC does not track them (gc=False),
    which is safe because nothing a record refers to refers back to it."""
    import gc

    from inspector.analysis import analyze

    path = _write(tmp_path / "clean.jsonl", base_lines)
    led = load(str(path))
    assert not gc.is_tracked(led.records[-1])
    report = analyze(led)
    for r in led.records[:50]:
        _ = r.message, r.extra  # read lazily, kept on the record
    del led, report, r
    gc.collect()
    assert not [o for o in gc.get_objects() if isinstance(o, Ledger) and o.path == str(path)]


def test_a_session_of_a_hundred_megabytes_is_read_by_one_process(tmp_path: Path) -> None:
    # The helper costs CPU (its chunks are decoded there, sent as msgpack and decoded again here):
    # issue 15 measures CPU, so a 100 MB session (the benchmark's size) is read here alone.
    f = tmp_path / "big.jsonl"
    size = 100 << 20
    with open(f, "wb") as out:
        out.truncate(size)  # (sparse: a newline every MB is all the decision reads)
        for at in range(par.CHUNK_BYTES - 1, size, par.CHUNK_BYTES):
            out.seek(at)
            out.write(b"\n")
    with open(f, "rb") as g:
        helper = par.fork_helper(g.fileno(), size, pi._CODEC)
        if helper is not None:
            helper.close(kill=True)
            helper.release()
    assert helper is None


# -- a helper forked ahead (the app: `cli.main.run_app` forks it before Textual's threads run)


def _load_in_a_thread(path: Path) -> Ledger:
    """`load` as the app runs it: in a worker thread, where no helper may be forked."""

    out: list[Ledger] = []
    t = threading.Thread(target=lambda: out.append(load(str(path), fingerprint=False)))
    t.start()
    t.join()
    return out[0]


@pytest.fixture
def ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    # A helper forks only while the process has one thread: one an earlier test in this worker left
    # running (a scripted server's timer, ...) would make every fork here refuse.
    alive = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    assert not alive, f"threads an earlier test left running in this pytest worker: {alive}"
    monkeypatch.setattr(par, "CHUNK_BYTES", CHUNK)
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", SMALL)
    yield
    par.discard_ahead()


def _serial(path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", SERIAL)
    try:
        return _snapshot(load(str(path), fingerprint=False))
    finally:
        monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", SMALL)


def _held(path: Path) -> par.Helper:
    st = path.stat()
    return par._ahead[(st.st_dev, st.st_ino)][0]


def test_a_helper_forked_ahead_is_taken_over_by_the_apps_load(base_lines, tmp_path, monkeypatch, ahead) -> None:
    path = _write(tmp_path / "big.jsonl", base_lines)
    serial = _serial(path, monkeypatch)
    assert fork_reader_ahead(str(path))
    helper = _held(path)
    led = _load_in_a_thread(path)
    assert par._ahead == {} and helper.pid == 0 and helper.fd == -1  # taken over, reaped, its file closed
    assert helper.appended > 0  # its chunks were used, though the load ran where it could fork none
    _assert_same(serial, _snapshot(led))


def test_a_helper_that_finished_before_its_load_leaves_the_first_chunk_to_the_loader(
    base_lines, tmp_path, monkeypatch, ahead
) -> None:
    path = _write(tmp_path / "big.jsonl", base_lines)
    serial = _serial(path, monkeypatch)
    assert fork_reader_ahead(str(path))
    helper = _held(path)
    os.waitpid(helper.pid, 0)  # every chunk it takes is done before the load begins
    helper.pid = 0
    led = _load_in_a_thread(path)
    assert helper.appended == len(helper.bounds) - 2  # all but chunk 0, the loader's own
    _assert_same(serial, _snapshot(led))


@pytest.mark.parametrize("change", ["appended", "rewritten"])
def test_a_file_changed_after_the_fork_is_not_read_from_its_helper(
    change: str, base_lines, tmp_path, monkeypatch, ahead
) -> None:
    path = _write(tmp_path / "big.jsonl", base_lines)
    assert fork_reader_ahead(str(path))
    helper = _held(path)
    os.waitpid(helper.pid, 0)  # its chunks decoded from the file as it was
    helper.pid = 0
    if change == "appended":
        _write(path, [*base_lines, base_lines[-1].replace(b'"id":"', b'"id":"x', 1)])
    else:  # the same size, other bytes in the helper's chunks (ids: each record's own)
        half = len(base_lines) // 2
        _write(path, base_lines[:half] + [_same_size_other_id(ln) for ln in base_lines[half:]])
        os.utime(path, ns=(1, 1))  # (and another age, as any write gives it)
    assert path.stat().st_ino == (tmp_path / "big.jsonl").stat().st_ino
    serial = _serial(path, monkeypatch)
    led = _load_in_a_thread(path)
    assert par._ahead == {} and helper.appended == 0 and helper.fd == -1  # dropped, closed
    _assert_same(serial, _snapshot(led))


def _same_size_other_id(line: bytes) -> bytes:
    """The line with the first character of its id changed (same length)."""
    at = line.find(b'"id":"')
    if at < 0:
        return line
    k = at + len(b'"id":"')
    return line[:k] + (b"z" if line[k : k + 1] != b"z" else b"y") + line[k + 1 :]


def test_a_helper_never_taken_over_is_killed(base_lines, tmp_path, ahead) -> None:
    path = _write(tmp_path / "big.jsonl", base_lines)
    assert fork_reader_ahead(str(path))
    helper = _held(path)
    pid = helper.pid
    par.discard_ahead()  # (registered with atexit at the first fork ahead)
    assert par._ahead == {} and helper.pid == 0 and helper.fd == -1
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped


def test_only_a_big_regular_file_of_a_chunked_format_gets_a_helper_ahead(base_lines, tmp_path, ahead) -> None:
    path = _write(tmp_path / "big.jsonl", base_lines)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # no writer: opening it would wait forever
    native_file = tmp_path / "ledger.jsonl"
    header = b'{"type":"ledger","format":"inspector-ledger","version":1,"id":"l","created":"2026-01-01T00:00:00Z"}\n'
    line = b'{"type":"message","id":"m","ts":"2026-01-01T00:00:00Z","role":"user","content":"x"}\n'
    native_file.write_bytes(header + line * (SMALL // len(line) + 10))  # big, but native ledgers have no chunk codec
    assert not fork_reader_ahead(str(fifo))
    assert not fork_reader_ahead(str(tmp_path))
    assert not fork_reader_ahead(str(tmp_path / "missing.jsonl"))
    assert not fork_reader_ahead(str(native_file))
    assert not fork_reader_ahead(f"{path}#session")
    assert par._ahead == {}
    small = _write(tmp_path / "small.jsonl", base_lines[:100])
    assert not fork_reader_ahead(str(small))
    assert fork_reader_ahead(str(path))
    assert not fork_reader_ahead(str(path))  # one helper a file
    assert len(par._ahead) == 1


# -- Claude Code: the same two-process read (`claude_code._CODEC`), the serial ledger line for line


def _cc(obj: dict[str, Any]) -> bytes:
    import json

    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _cc_edge_lines(tag: str) -> list[bytes]:
    """Every kind of line the head path and the general path decide between, ids made unique by `tag`."""
    s = {"sessionId": f"s-{tag}", "timestamp": "2026-01-01T00:00:00.000Z"}
    u, a = f"u-{tag}", f"a-{tag}"

    def asst(uuid: str, parent: str | None, content: Any, mid: str | None = None, **kw: Any) -> bytes:
        msg: dict[str, Any] = {"role": "assistant", "model": kw.pop("model", "claude-x"), "content": content, "stop_reason": kw.pop("stop", "end_turn")}
        if mid is not None:
            msg["id"] = mid
        msg["usage"] = {"input_tokens": 10, "output_tokens": 3}
        return _cc({"type": "assistant", "uuid": uuid, "parentUuid": parent, **s, "message": msg, **kw})

    def user(uuid: str, parent: str | None, content: Any, **kw: Any) -> bytes:
        return _cc({"type": "user", "uuid": uuid, "parentUuid": parent, **s, "message": {"role": "user", "content": content}, **kw})

    call = [{"type": "tool_use", "id": f"c1-{tag}", "name": "Bash", "input": {"command": "ls"}}]
    two = [*call, {"type": "tool_use", "id": f"c2-{tag}", "name": "Read", "input": {}}]
    result = lambda cid, text="ok": {"type": "tool_result", "tool_use_id": cid, "content": text}  # noqa: E731
    return [
        user(u, None, "hello"),
        asst(a, u, [{"type": "text", "text": "let me"}], f"m-{tag}"),
        asst(f"{a}2", a, two, f"m-{tag}", stop="tool_use"),  # the same reply, a second line
        asst(f"{a}3", f"{a}2", [{"type": "thinking", "thinking": "hm"}]),  # no message.id, thinking only: left out
        user(f"{u}r", f"{a}3", [result(f"c1-{tag}"), result(f"c2-{tag}", [{"type": "text", "text": "x"}])], toolUseResult={"agentId": f"ag-{tag}"}),
        user(f"{u}r1", f"{u}r", [result(f"c1-{tag}")], toolUseResult="Error: no"),
        user(f"{u}e", f"{u}r1", [result("")]),  # an empty call id
        asst(f"{a}4", f"{u}e", [result(f"c1-{tag}")], f"m4-{tag}"),  # a result inside a reply: general
        user(f"{u}s1", f"{a}4", "side", isSidechain=True, agentId=f"ag-{tag}"),
        user(f"{u}s2", f"{u}s1", "side", isSidechain="yes"),  # not a plain value: read here
        user(f"{u}s3", f"{u}s2", "side", isSidechain={"a": [1, 2.5]}),
        user(f"{u}s4", f"{u}s3", "side", isSidechain=2**70),
        asst(f"{a}5", f"{u}s4", [{"type": "text", "text": "x"}], f"m5-{tag}", isSidechain=1, stop="max_tokens"),
        asst(f"{a}6", f"{a}5", [{"type": "text", "text": 5}], f"m6-{tag}"),  # a text of a wrong type: general
        asst(f"{a}7", f"{a}6", "a plain string", f"m7-{tag}", stop=7),
        _cc({"type": "system", "subtype": "compact_boundary", "uuid": f"b-{tag}", "parentUuid": None, "logicalParentUuid": f"{a}7", **s,
             "content": "Conversation compacted", "compactMetadata": {"trigger": "auto", "preTokens": 1000}}),
        user(f"{u}c", f"b-{tag}", "This session is being continued... Summary: all done", isCompactSummary=True),
        asst(f"{a}8", f"{u}c", [{"type": "text", "text": "API Error"}], f"m8-{tag}", isApiErrorMessage=True),
        _cc({"type": "file-history-snapshot", "messageId": f"{u}c", "snapshot": {"files": []}, "isSnapshotUpdate": False}),
        _cc({"type": "summary", "summary": "s", "leafUuid": f"{a}8"}),
        _cc({"type": "progress", "uuid": f"p-{tag}", "parentUuid": f"{a}8", **s, "data": {"x": 1}}),
        _cc({"type": "queue-operation", "operation": "enqueue", **s}),
        _cc({"type": "last-prompt", "lastPrompt": "x"}),
        _cc({"type": "system", "subtype": "local_command", "uuid": f"l-{tag}", "parentUuid": f"p-{tag}", **s, "content": "<command-name>/x</command-name>"}),
        _cc({"type": "weird", "uuid": f"w-{tag}"}),
        _cc({"type": "user", "uuid": 5, "parentUuid": f"l-{tag}", **s, "message": {"role": "user", "content": "wrong uuid type"}}),
        _cc({"type": "user", "uuid": f"{u}t", "parentUuid": f"l-{tag}", "sessionId": None, "timestamp": 1.5, "message": {"role": "user", "content": "t"}}),
        _cc({"type": "user", "uuid": f"{u}n", "message": {"role": "user", "content": "no parent, no session"}}),
        _cc({"type": "user", "uuid": "", "parentUuid": "", **s, "message": {"role": "user", "content": "empty ids"}}),
        _cc({"type": "user", "uuid": f"{u}big", "parentUuid": f"{u}t", **s, "timestamp": 1e300, "message": {"role": "user", "content": "t"}}),
        user(f"{u}x", f"{u}t", "caf\xe9 \u2603 non-ascii"),
        user(f"{u}y", f"{u}x", "x" * 2500),  # over the (patched) large-line size: read by `bounded`
        b'{"type":"user","uuid":"bad-' + tag.encode() + b'","message":{"role":"user","content":"\xff\xfe"}}\n',  # not UTF-8
        b'{"type":"user","uuid":"broken-' + tag.encode() + b'",\n',
        b"[1, 2]\n",
        b'{"type":"summary","leafUuid":"g1"}{"type":"summary","leafUuid":"g2"}\n',
        b"\n",
        b"   \n",
        user(f"{u}z", f"{u}x", [{"type": "text", "text": "after the odd lines"}]),
        asst(f"{a}9", f"{u}z", [{"type": "text", "text": "one"}], requestId="r9"),  # no message.id, a requestId ...
        user(f"{u}9", f"{a}9", "between"),  # ... a user line after it, on a branch of its own ...
        asst(f"{a}10", f"{a}9", [{"type": "text", "text": "two"}], requestId="r10"),  # ... so this one, chained on, joins it
        _cc({"type": "system", "subtype": "local_command", "uuid": f"l2-{tag}", "parentUuid": f"{a}10", **s, "content": "<local-command-stdout>x</local-command-stdout>"}),
        asst(f"{a}11", f"{a}10", [{"type": "text", "text": "three"}], requestId=None),  # a local command's note beside it: this joins too
        asst(f"{a}12", f"{a}11", [{"type": "thinking", "thinking": "t", "signature": "s"}], f"m12-{tag}"),  # thinking only: left out
        asst(f"{a}13", f"{a}12", [{"type": "redacted_thinking", "data": "d"}], f"m13-{tag}"),  # ... redacted too
        asst(f"{a}14", f"{a}13", [{"type": "thinking", "thinking": "t", "signature": "s"}], f"m14-{tag}"),  # ... kept: its
        asst(f"{a}15", f"{a}14", [{"type": "text", "text": "four"}], f"m14-{tag}"),  # ... reply's next line holds text
        # A reply of another model with signed thinking (left out of what is sent), one of the newest's.
        asst(f"{a}16", f"{a}15", [{"type": "thinking", "thinking": "t", "signature": "s"}, {"type": "text", "text": "five"}], f"m16-{tag}", model="claude-y"),
        asst(f"{a}17", f"{a}16", [{"type": "thinking", "thinking": "t", "signature": "s"}, {"type": "text", "text": "six"}], f"m17-{tag}"),
    ]


def _signed_thinking(led: Any) -> tuple[dict[int, Any], str | None, set[int]]:
    """What the Claude Code index keeps of the lines holding signed thinking, and the model taken for the request's."""
    src = led.records[0]._source
    return src.signed, src.request_model, src.foreign


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_claude_code_odd_lines_are_read_alike_by_the_helper_and_here(share: float, tmp_path: Path, monkeypatch, helpers) -> None:
    from inspector.formats import bounded

    monkeypatch.setattr(bounded, "LARGE_LINE_BYTES", 2000)  # (before the fork: the helper has it too)
    first, second = _cc_edge_lines("a"), _cc_edge_lines("b")
    filler = [_cc({"type": "progress", "uuid": f"f{i}", "parentUuid": None, "sessionId": "s", "data": {}}) for i in range(30)]
    lines = [*first, *filler, *second, b'{"type":"user","uuid":"cut']  # a truncated last line
    path = _write(tmp_path / "edge.jsonl", lines)
    (tmp_path / "edge" / "subagents").mkdir(parents=True)
    for tag in "ab":  # the sub-agents the tool results name (`toolUseResult.agentId`)
        (tmp_path / "edge" / "subagents" / f"agent-ag-{tag}.jsonl").write_bytes(b"")
    monkeypatch.setattr(par, "CHUNK_BYTES", 300)  # about a line a chunk
    _loader_stops_at(monkeypatch, int(path.stat().st_size * share))
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", SERIAL)
    led = load(str(path))
    serial, signed = _snapshot(led), _signed_thinking(led)
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", 1)
    led = load(str(path))
    parallel = _snapshot(led)
    assert _signed_thinking(led) == signed
    assert signed[1] == "claude-x" and len(signed[2]) == 2, signed  # (the two copies' claude-y lines: one on the path)
    h = helpers[-1]
    assert h is not None and h.appended == len(h.bounds) - 1 - h.own_below
    assert (h.appended > 0) == (share < 1)
    assert len(serial["records"]) > 70 and len(serial["diagnostics"]) > 5
    assert any(d[0] == len(lines) and "truncated" in d[2] for d in serial["diagnostics"]), serial["diagnostics"][-3:]
    assert sum(1 for r in serial["records"] if r[21] and "subagent_transcript" in r[21]) == 2
    assert sum(1 for d in serial["diagnostics"] if "thinking blocks only" in d[2]) == 3  # (the path's: the second copy's)
    assert sum(1 for r in serial["records"] if r[21] and len(r[21].get("merged_lines", ())) == 3) == 1  # (its replies without an id)
    _assert_same(serial, parallel)


def test_claude_code_same_ledger_and_analysis_with_a_helper(tmp_path: Path, monkeypatch, helpers) -> None:
    import orjson

    from benchmarks.gen_formats import generate
    from inspector.analysis import analyze
    from inspector.analysis.export import analyze_json, context_json

    path = Path(generate("claude_code", 2, 3, str(tmp_path / "cc.jsonl")))
    serial_led = _serial_load(path, monkeypatch)
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", SMALL)
    led = load(str(path))
    assert helpers[-1] is not None and helpers[-1].appended > 0
    _assert_same(_snapshot(serial_led), _snapshot(led))
    led, serial_led = load(str(path)), _serial_load(path, monkeypatch)  # (the snapshots read every message)
    for out in (analyze_json, context_json):
        assert orjson.dumps(out(analyze(led))) == orjson.dumps(out(analyze(serial_led)))


def _serial_load(path: Path, monkeypatch: pytest.MonkeyPatch) -> Ledger:
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", SERIAL)
    try:
        return load(str(path))
    finally:
        monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", SMALL)


def test_claude_code_the_session_and_format_are_taken_from_the_helpers_lines_in_file_order(
    tmp_path: Path, monkeypatch, helpers
) -> None:
    """The loader's first chunk says nothing of the session: its id is the first line's that
    names one (a line the helper read from its head, before a general-path line naming another),
    and the file looks like Claude Code's because of the helper's lines alone."""
    lines = [
        _cc({"type": "summary", "summary": "x" * 400}),  # chunk 0, the loader's: no session, no leafUuid
        _cc({"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "from-the-head", "message": {"role": "user", "content": "hi"}}),
        _cc({"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "from-a-whole-line", "isApiErrorMessage": True,
             "message": {"role": "assistant", "content": [{"type": "text", "text": "API Error"}]}}),
        *[_cc({"type": "user", "uuid": f"u{i}", "parentUuid": "a1", "sessionId": "s", "message": {"role": "user", "content": "x"}}) for i in range(2, 30)],
    ]
    path = _write(tmp_path / "first.jsonl", lines)
    monkeypatch.setattr(par, "CHUNK_BYTES", 300)
    _loader_stops_at(monkeypatch, 0)
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", SERIAL)
    serial = _snapshot(load(str(path)))
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", 1)
    parallel = _snapshot(load(str(path)))
    assert helpers[-1] is not None and helpers[-1].own_below == 1 and helpers[-1].appended > 0
    assert serial["session"] == "from-the-head"
    assert not [d for d in serial["diagnostics"] if "Claude Code" in d[2]]  # (it looks like one)
    _assert_same(serial, parallel)
