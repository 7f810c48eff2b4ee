"""Hostile files (issue 11, points 2 and 4): deep nesting is a diagnostic on its line and the
rest loads; what is not a regular file is refused before it is opened, with the real cause."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from inspector.formats import LoadError, load, load_bytes
from inspector.formats.jsonl import CUT_SCAN_BYTES
from tests.bad_input_seeds import SEEDS, encode, exercise


@pytest.mark.parametrize("depth", [10_000, 100_000])
@pytest.mark.parametrize("fmt", ["pi", "native", "claude_code", "codex"])
@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_a_deeply_nested_line_is_a_diagnostic_and_the_rest_loads(fmt: str, depth: int, opener: str, tmp_path: Path) -> None:
    closer = "]" if opener == "[" else "}"
    good = encode(fmt, SEEDS[fmt])
    lines = good.splitlines(keepends=True)
    deep = (opener * depth + "1" + closer * depth).encode() + b"\n"
    data = b"".join([*lines[:2], deep, *lines[2:]])
    f = tmp_path / "s.jsonl"
    f.write_bytes(data)
    for led in (load(str(f)), load_bytes(data, str(f))):
        (d,) = [d for d in led.diagnostics if d.problem == "too_deep"]
        assert d.line == 3 and "line 3" in d.message and "nested deeper than" in d.message
        # Every other line's record is there; the deep line is read, its values past 128 levels as a
        # placeholder (JSON.parse reads any depth: `jsonl.cut_deep`), or skipped when it is too big.
        assert len([r for r in led.records if r.line != 3]) == len(load_bytes(good, "s").records)
        deep_records = [r for r in led.records if r.line == 3]
        assert len(deep_records) == (opener != "[" and depth * 6 <= CUT_SCAN_BYTES)
        exercise(led)


def test_a_deep_line_with_invalid_utf8_too(tmp_path: Path) -> None:
    lines = encode("pi", SEEDS["pi"]).splitlines(keepends=True)
    deep = b'{"type":"x\xff","a":' + b"[" * 5000 + b"]" * 5000 + b"}\n"
    led = load_bytes(b"".join([*lines[:2], deep, *lines[2:]]), "s")
    assert [d.line for d in led.diagnostics if d.problem == "too_deep"] == [3]


def test_a_named_pipe_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    out: list[BaseException] = []

    def run() -> None:
        try:
            load(str(fifo))
        except LoadError as e:
            out.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), "load() blocked on a named pipe"
    assert out and "not a session file (a named pipe)" in str(out[0]) and str(fifo) in str(out[0])


def test_a_device_is_refused() -> None:
    with pytest.raises(LoadError, match="not a session file \\(a character device\\)"):
        load("/dev/null")


def test_a_symlink_loop_says_so(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.symlink_to(b)
    b.symlink_to(a)
    with pytest.raises(LoadError, match="symlink loop"):
        load(str(a))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads everything")
def test_permission_denied_says_so(tmp_path: Path) -> None:
    d = tmp_path / "locked"
    d.mkdir()
    f = d / "s.jsonl"
    f.write_bytes(encode("pi", SEEDS["pi"]))
    d.chmod(0o600)  # no search permission
    try:
        with pytest.raises(LoadError, match="permission denied") as e:
            load(str(f))
        assert str(f) in str(e.value)
    finally:
        d.chmod(0o700)
    f.chmod(0)
    try:
        with pytest.raises(LoadError, match="permission denied"):
            load(str(f))
    finally:
        f.chmod(0o600)


def _adk_dump() -> bytes:
    import json

    return json.dumps(SEEDS["adk"], indent=1).encode()


def test_an_adk_dump_with_a_bom_loads(tmp_path: Path) -> None:
    f = tmp_path / "s.json"
    f.write_bytes(b"\xef\xbb\xbf" + _adk_dump())
    assert load(str(f)).format == "adk"


def test_an_adk_dump_with_a_bad_byte_names_its_line_and_column(tmp_path: Path) -> None:
    lines = _adk_dump().split(b"\n")
    lines[30] = lines[30][:5] + b"\xff" + lines[30][5:]
    f = tmp_path / "s.json"
    f.write_bytes(b"\n".join(lines))
    with pytest.raises(LoadError, match=r"line 31, column 6: invalid UTF-8 \(byte 0xff\)"):
        load(str(f))


def test_a_truncated_adk_dump_says_so_at_its_end(tmp_path: Path) -> None:
    data = _adk_dump()
    f = tmp_path / "s.json"
    f.write_bytes(data[: len(data) // 2])
    with pytest.raises(LoadError) as e:
        load(str(f))
    last = data[: len(data) // 2].count(b"\n") + 1
    assert f"line {last}, column" in str(e.value) and "truncated" in str(e.value) and "line 1 " not in str(e.value)


def test_a_large_truncated_adk_dump_names_its_last_line(tmp_path: Path) -> None:
    """Found by the fuzzer: a dump over 4 MB is read bounded, and its decoder names no byte for a
    truncation, so the message named no line."""
    import orjson

    doc = orjson.loads(_adk_dump())
    doc["events"][-1]["content"]["parts"][0]["text"] = "lorem ipsum " * 500_000  # 6 MB
    data = orjson.dumps(doc, option=orjson.OPT_INDENT_2)
    cut = data[: len(data) - 200]
    f = tmp_path / "s.json"
    f.write_bytes(cut)
    with pytest.raises(LoadError) as e:
        load(str(f))
    last = cut.count(b"\n") + 1
    assert f"line {last}, column" in str(e.value) and "truncated" in str(e.value), str(e.value)


@pytest.mark.parametrize("parts", [True, 3, "x", {"text": "y"}])
def test_an_adk_dump_whose_parts_is_no_list_is_a_diagnostic(parts: object, tmp_path: Path) -> None:
    """Found by the fuzzer: the dump's append order was worked out from `content.parts` before the
    field guard, so a `parts` of another type past `--at` crashed."""
    import orjson

    doc = orjson.loads(_adk_dump())
    doc["events"][-1]["content"]["parts"] = parts
    f = tmp_path / "s.json"
    f.write_bytes(orjson.dumps(doc))
    led = load(str(f))
    assert any("content.parts" in d.message for d in led.diagnostics)
    exercise(led)
    exercise(load(str(f), upto_line=1))  # --at 1: the later events are not field-checked


# -- named pipes, sockets and devices where a walk or a session's name leads (not given by name): a
# `scan`/`usage`/`search` of a folder, a NextClaw session's side file, a config or price table. A
# plain `open()` of a pipe with no writer blocks forever; each command runs in a subprocess with a
# deadline, so a regression fails here instead of hanging the suite.

PIPE_NAMES = ("pipe.jsonl", "session.db", "runtime.sqlite", "dump.json", "agent_main_s1.metadata.json")


def _inspector(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([sys.executable, "-m", "inspector", *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`inspector {' '.join(args)}` blocked (a named pipe opened and waited on?)")


def _tree_with_pipes(tmp_path: Path) -> Path:
    d = tmp_path / "tree"
    (d / "nested").mkdir(parents=True)
    (d / "good.jsonl").write_bytes(encode("pi", SEEDS["pi"]))
    for name in PIPE_NAMES:
        os.mkfifo(d / "nested" / name)
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(d / "nested" / "sock.jsonl"))
    finally:
        sock.close()
    (d / "nested" / "null.jsonl").symlink_to("/dev/null")
    return d


def test_a_folder_with_named_pipes_is_scanned_without_blocking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    d = _tree_with_pipes(tmp_path)
    res = _inspector("scan", str(d), "--json")
    assert res.returncode == 0, res.stderr
    rows = {Path(r["path"]).name: r for r in map(json.loads, res.stdout.splitlines())}  # (one JSON object a row)
    assert rows["good.jsonl"].get("error") is None and rows["good.jsonl"]["records"] > 0
    assert rows["pipe.jsonl"]["error"] == "not a session file (a named pipe)"
    assert rows["sock.jsonl"]["error"] == "not a session file (a socket)"
    assert rows["null.jsonl"]["error"] == "not a session file (a character device)"
    assert set(rows) == {"good.jsonl", "pipe.jsonl", "sock.jsonl", "null.jsonl"}  # (a pipe is no store: not listed)
    for cmd in (["usage", str(d)], ["search", "anything", str(d)]):
        res = _inspector(*cmd)
        assert res.returncode in (0, 1) and "Traceback" not in res.stderr, res.stderr


def test_the_triage_browser_lists_a_folder_with_named_pipes(tmp_path: Path) -> None:
    d = _tree_with_pipes(tmp_path)
    script = (
        "import asyncio, sys\n"
        "from inspector.tui.app import create_app\n"
        "from inspector.tui.triage import TriageScreen\n"
        "async def main():\n"
        "    app = create_app([sys.argv[1]])\n"
        "    async with app.run_test(size=(160, 50)) as pilot:\n"
        "        for _ in range(300):\n"
        "            await pilot.pause(0.05)\n"
        "            s = app.screen\n"
        "            if isinstance(s, TriageScreen) and s.finished:\n"
        "                print('listed', len(s.rows))\n"
        "                return\n"
        "asyncio.run(main())\n"
    )
    try:
        res = subprocess.run([sys.executable, "-c", script, str(d)], capture_output=True, text=True, timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail("the triage browser blocked on a named pipe")
    assert res.returncode == 0 and "listed 4" in res.stdout, (res.stdout, res.stderr)


def test_a_nextclaw_side_file_that_is_a_pipe_is_a_diagnostic(tmp_path: Path) -> None:
    from tests.fuzz.seeds import build_seeds

    (journal,) = [p for k, p in build_seeds(tmp_path / "seeds") if k == "nextclaw" and "provider" in str(p)]
    side = journal.with_name(journal.name.replace(".jsonl", ".metadata.json"))
    side.unlink(missing_ok=True)
    os.mkfifo(side)
    res = _inspector("analyze", str(journal), "--json")
    assert res.returncode == 0, res.stderr
    found = [f["message"] for f in json.loads(res.stdout)["findings"] if str(side) in f["message"]]
    assert found and "not a file (a named pipe)" in found[0]


def test_a_config_or_price_table_that_is_a_pipe_is_refused(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(encode("pi", SEEDS["pi"]))
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    res = _inspector("usage", str(session), "--prices", str(pipe))
    assert res.returncode == 2 and f"{pipe}: cannot read (a named pipe)" in res.stderr
    res = _inspector("repair", str(session), "--strategy", "compact", "--provider", "openai", "--config", str(pipe))
    assert res.returncode == 2 and f"config file {pipe} cannot be read: a named pipe" in res.stderr


def test_a_codex_call_whose_arguments_nest_too_deep_is_kept_as_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A call's `arguments` is a JSON text Codex parses when it runs the tool; one nested deeper than
    Python's reader goes (still under the size it parses) is kept as the text it is, as one that is
    no JSON is: the export, which reads every message, crashed on it."""
    import orjson

    from inspector.cli.main import main
    from tests.conftest import SHARED

    lines = (SHARED / "real_sessions" / "codex" / "agent-sessions__codex_small.jsonl").read_bytes().splitlines()
    deep = "[" * 50_000 + "]" * 50_000
    for i, raw in enumerate(lines):
        o = orjson.loads(raw)
        if o.get("payload", {}).get("type") == "function_call":
            o["payload"]["arguments"] = deep
            lines[i] = orjson.dumps(o)
            break
    else:
        pytest.fail("no function_call in the real Codex session")
    f = tmp_path / "rollout.jsonl"
    f.write_bytes(b"\n".join(lines) + b"\n")
    assert main(["export", str(f), "--markdown", "-"]) == 0
    assert "_Made by inspector" in capsys.readouterr().out
    calls = [b for r in load(str(f)).records if r.message is not None for b in r.message.blocks if b.type == "tool_call"]
    assert [b.args for b in calls if b.args == deep] == [deep]


def test_a_config_nested_too_deep_is_a_config_error(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(encode("pi", SEEDS["pi"]))
    cfg = tmp_path / "deep.toml"
    cfg.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    res = _inspector("repair", str(session), "--strategy", "compact", "--provider", "openai", "--config", str(cfg))
    assert res.returncode == 2 and "nested too deep" in res.stderr and "Traceback" not in res.stderr


def test_a_maka_row_nested_too_deep_for_python_is_digested(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """maka's source digest writes every event as its own stable JSON (a recursive walk, as maka's
    `stableStringify` is): an event nested deep ran it out of stack and `repair` crashed. The store
    is the fuzz campaign's reproducer (seed 115, case 9967: maka-v3's seed, `row_deep_nesting`)."""
    import shutil

    from inspector.cli.main import main

    store = tmp_path / "runtime.sqlite"
    shutil.copyfile(Path(__file__).parent / "fuzz" / "found" / "maka-row-nested-deep.sqlite", store)
    assert main(["repair", "--strategy", "recover", "--out", str(tmp_path / "copy.sqlite"), str(store)]) == 2
    assert "maka sessions are read only" in capsys.readouterr().err
    for argv in (["plan", "--strategy", "recover"], ["analyze", "--json"], ["context", "--json"]):
        assert main([*argv, str(store)]) in (0, 1)


def test_a_line_nested_past_orjson_is_read_as_json_parse_reads_it(tmp_path: Path) -> None:
    """pi (JSON.parse) reads a line nested however deep, and sends the message: a chain through it
    goes on. Its values past 128 levels are read as a placeholder; brackets and escaped quotes in
    its strings are text, not structure."""
    from inspector.analysis import analyze
    from inspector.formats.jsonl import CUT_DEPTH, cut_deep

    lines = encode("pi", SEEDS["pi"]).splitlines(keepends=True)
    last = json.loads(lines[-1])
    deep = {**last, "id": "deep", "message": {"role": "user", "content": "DEEP-TEXT ]]}} \\\" [[", "timestamp": 6}}
    body = json.dumps(deep).encode()[:-1] + b', "x": ' + b"[" * 3000 + b'"]\\"[{"' + b"]" * 3000 + b', "y": [[1]]}'
    after = {**last, "id": "after", "parentId": "deep", "message": {"role": "user", "content": "AFTER", "timestamp": 7}}
    f = tmp_path / "s.jsonl"
    f.write_bytes(b"".join(lines) + body + b"\n" + json.dumps(after).encode() + b"\n")
    report = analyze(load(str(f)))
    texts = [report.ledger.records[it.seq].message.text() for it in report.context if it.kind == "message" and it.seq is not None]
    assert texts[-2:] == ["DEEP-TEXT ]]}} \\\" [[", "AFTER"]
    (d,) = [d for d in report.ledger.diagnostics if d.problem == "too_deep"]
    assert "read with 1 value nested deeper than 128 levels as a placeholder" in d.message
    value, n = cut_deep(body)  # type: ignore[misc]
    x = value["x"]
    for _ in range(CUT_DEPTH - 1):  # (x opens at level 2, inside the entry: the list at level 129 is cut)
        x = x[0]
    assert n == 1 and x == f"[a value nested deeper than {CUT_DEPTH} levels: {2 * (3000 - CUT_DEPTH + 1) + 7} bytes not read]"
    assert value["y"] == [[1]] and value["message"]["content"] == deep["message"]["content"]
