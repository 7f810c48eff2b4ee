"""Bad input (issue 2, point 9): a clear diagnostic naming the line, the rest loads, no traceback."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.analysis import analyze, findings
from inspector.formats import LoadError, load

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"}


def _msg(i: str, parent: str | None, role: str, text: str, **extra: object) -> dict:
    m: dict = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}
    if role == "assistant":
        m.update({"stopReason": "stop", "provider": "p", "model": "m", "api": "openai-completions"})
    m.update(extra)
    return {"type": "message", "id": i, "parentId": parent, "timestamp": "2026-01-01T00:00:01Z", "message": m}


def _lines(*objs: dict) -> str:
    return "".join(json.dumps(o) + "\n" for o in objs)


GOOD = [HEADER, _msg("a1", None, "user", "hello"), _msg("a2", "a1", "assistant", "hi"), _msg("a3", "a2", "user", "next")]


def _cli(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inspector", "analyze", str(path), *args],
        capture_output=True,
        text=True,
        check=False,
    )


def _no_traceback(p: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout, p.stderr


def test_truncated_last_line(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text(_lines(*GOOD) + json.dumps(_msg("a4", "a3", "assistant", "cut off"))[:40])
    led = load(str(f))
    (d,) = led.diagnostics
    assert d.line == 5 and d.problem == "truncated_line" and "last line 5" in d.message
    assert [r.id for r in led.records if r.id] == ["a1", "a2", "a3"]
    p = _cli(f, "--json")
    _no_traceback(p)
    out = json.loads(p.stdout)
    assert any(x["code"] == "malformed_line" and "line 5" in x["message"] for x in out["findings"])


@pytest.mark.parametrize(
    "last",
    [
        b'{"type": "message", "id": "a4", "parentId": "a3", "message": {"role": "assistant", "content": "\xff\xfe cut',  # bad UTF-8, cut
        b'{"type": "message", "id": "a4", "parentId": "a3", "message": {"role": "assistant", "content": "\xff cut\n',  # bad UTF-8, newline
        b'{"type": "message", "id": "a4", "parentId": ]\n',  # malformed, ends with its newline
        b'{"type": "message", "id": "a4", "parentId": "a3", "message": {"role": "assistant", "content": "cut',  # only cut
    ],
)
def test_a_bad_last_line_is_described_as_reading_the_whole_file_describes_it(tmp_path: Path, last: bytes) -> None:
    """pi's loader streams the file and learns a line was the last only afterwards: its diagnostic
    is then the one the whole file's read gives (`load_bytes`), the invalid UTF-8 said, not only the
    truncation (found by `python -m tests.fuzz_heads`)."""
    from inspector.formats import load_bytes

    f = tmp_path / "s.jsonl"
    f.write_bytes(_lines(*GOOD).encode() + last)
    for at in (None, 5):  # (read up to its line too, `--at 5`: a line without its newline still ends the file)
        streamed, whole = load(str(f), upto_line=at), load_bytes(f.read_bytes(), name=str(f), upto_line=at)
        assert [r.id for r in streamed.records if r.id] == ["a1", "a2", "a3"]
        assert [dataclasses.astuple(d) for d in streamed.diagnostics] == [dataclasses.astuple(d) for d in whole.diagnostics], at
    (d,) = streamed.diagnostics
    assert ("invalid UTF-8 at byte" in d.message) == (b"\xff" in last)
    # A line cut by the end of the file is its last; one that ends with its newline is malformed
    # wherever it stands (the file may grow: `inspector watch` would else keep "last line" for it).
    cut = not last.endswith(b"\n")
    assert (d.line, d.problem) == (5, "truncated_line" if cut else "malformed_json")
    assert d.message.startswith("last line 5: " if cut else "line 5: ")


def test_malformed_line_in_the_middle_rest_loads(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    text = _lines(*GOOD[:2]) + "{not json at all\n" + _lines(*GOOD[2:])
    f.write_text(text)
    led = load(str(f))
    (d,) = led.diagnostics
    assert d.line == 3 and d.problem == "malformed_json" and "line 3" in d.message
    assert len([r for r in led.records if r.message]) == 3


def test_invalid_utf8_is_replaced_and_reported(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    good = _lines(*GOOD).encode()
    bad = json.dumps(_msg("a4", "a3", "assistant", "caf\u00e9")).encode().replace(b"\\u00e9", b"\xe9")
    f.write_bytes(good + bad + b"\n")
    led = load(str(f))
    (d,) = led.diagnostics
    assert d.line == 5 and d.problem == "invalid_utf8" and "line 5" in d.message
    last = led.records[-1]
    assert last.message is not None and last.message.text() == "caf\ufffd"
    _no_traceback(_cli(f))


def test_binary_file(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    with pytest.raises(LoadError, match="line 1: binary data"):
        load(str(f))
    p = _cli(f)
    _no_traceback(p)
    assert p.returncode == 2 and str(f) in p.stderr and "binary" in p.stderr


def test_empty_file(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text("")
    p = _cli(f)
    _no_traceback(p)
    assert p.returncode == 2 and str(f) in p.stderr and "empty" in p.stderr


def test_missing_file_and_directory(tmp_path: Path) -> None:
    p = _cli(tmp_path / "nope.jsonl")
    _no_traceback(p)
    assert p.returncode == 2 and "no such file" in p.stderr
    p = _cli(tmp_path)
    assert p.returncode == 2 and "directory" in p.stderr


def test_missing_header(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text(_lines(*GOOD[1:]))
    led = load(str(f))
    assert led.format == "pi" and led.runtime_rejects_file
    (d,) = [d for d in led.diagnostics if d.problem == "missing_header"]
    assert d.line == 1 and "no session header" in d.message
    report = analyze(led)
    assert report.context == []  # pi discards the whole file and starts an empty session
    holes = [x for x in report.findings if x.code == "hole"]
    assert holes and holes[0].by_role == {"user": 2, "assistant": 1}
    # The hole says why in pi's own terms (its Runtime's reason, not a fallback naming pi).
    assert "pi rejects this file (no valid header)" in holes[0].message
    _no_traceback(_cli(f))


def test_a_rejected_file_without_a_stated_reason_names_its_runtime(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text(_lines(*GOOD[1:]))
    led = load(str(f))
    report = analyze(led)
    report.runtime = dataclasses.replace(report.runtime, name="toy", file_rejected=None)
    (hole,) = [x for x in findings.find_history(report) if x.code == "hole"]
    assert "toy rejects this file whole" in hole.message and "pi" not in hole.message


def test_parent_cycle(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    objs = [HEADER, _msg("a1", "a3", "user", "hello"), _msg("a2", "a1", "assistant", "hi"), _msg("a3", "a2", "user", "x")]
    f.write_text(_lines(*objs))
    report = analyze(load(str(f)))
    (finding,) = [x for x in report.findings if x.code == "broken_tree"]
    assert "cycle" in finding.message and "line" in finding.message
    assert len(report.path) == 3  # every record walked once, then stopped
    _no_traceback(_cli(f))


def test_duplicate_ids(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    objs = [*GOOD, _msg("a2", "a3", "assistant", "again")]
    f.write_text(_lines(*objs))
    led = load(str(f))
    (d,) = [d for d in led.diagnostics if d.problem == "duplicate_id"]
    assert d.line == 5 and "line 3" in d.message
    report = analyze(led)
    assert any(x.code == "duplicate_id" for x in report.findings)
    _no_traceback(_cli(f))


def test_not_a_session(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text('{"hello": "world"}\n')
    p = _cli(f)
    _no_traceback(p)
    assert p.returncode == 2 and "line 1" in p.stderr and "not a session ledger" in p.stderr


def test_glued_objects_both_recovered(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    a4 = json.dumps(_msg("a4", "a3", "assistant", "one"))
    a5 = json.dumps(_msg("a5", "a4", "user", "two"))
    f.write_text(_lines(*GOOD) + a4 + a5 + "\n" + json.dumps(_msg("a6", "a5", "assistant", "three")) + "\n")
    led = load(str(f))
    (d,) = led.diagnostics
    assert d.problem == "glued_objects" and d.line == 5 and "2 JSON objects" in d.message
    assert [r.id for r in led.records if r.line == 5] == ["a4", "a5"]
    report = analyze(led)
    # pi skips line 5, so a6's parent a5 is unknown: the path is a6 alone.
    assert [led.records[s].id for s in report.path] == ["a6"]
    (mal,) = [x for x in report.findings if x.code == "malformed_line"]
    assert "path breaks there" in mal.message
    (hole,) = [x for x in report.findings if x.code == "hole"]
    assert hole.by_role == {"user": 3, "assistant": 2}
