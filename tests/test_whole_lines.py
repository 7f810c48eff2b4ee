"""Claude Code and Codex load through `whole_lines` (issue 15): the lines split and parsed exactly as
`jsonl.read_lines` does, never past the size the file had when the load started, and the garbage
collector left as it was found."""

from __future__ import annotations

import gc
import io
from pathlib import Path
from typing import Any

import pytest

from inspector.formats import load, registry
from inspector.formats.jsonl import parse_bytes
from inspector.formats.whole_lines import collector_paused, read_lines_upto
from tests.bad_input_seeds import SEEDS, encode

GOOD = encode("codex", SEEDS["codex"])
SHAPES = {
    "clean": GOOD,
    "blank lines": GOOD.replace(b"\n", b"\n\n  \n", 2),
    "truncated last line": GOOD[:-9],
    "no final newline": GOOD.rstrip(b"\n"),
    "malformed middle line": GOOD.replace(b"\n", b"\n{oops\n", 1),
    "glued objects": GOOD.replace(b"}\n", b"}", 1),
}


def _same(a: list, b: list) -> None:
    assert [(r.line, r.offset, r.length, r.objects, r.runtime_skips) for r in a] == [
        (r.line, r.offset, r.length, r.objects, r.runtime_skips) for r in b
    ]
    assert [(d.line, d.problem, d.message) for r in a if (d := r.diagnostic)] == [
        (d.line, d.problem, d.message) for r in b if (d := r.diagnostic)
    ]


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("upto", [None, 1, 3])
def test_lines_are_read_line_by_line_as_read_lines_reads_them(shape: str, upto: int | None) -> None:
    data = SHAPES[shape]
    got, consumed = read_lines_upto(io.BytesIO(data), len(data), upto)
    want, size, _ = parse_bytes(data, "s", upto)
    _same(got, want)
    assert consumed == size


def test_bytes_appended_after_the_load_started_are_not_read() -> None:
    start = GOOD[: GOOD.index(b"\n", 200) + 1]
    got, consumed = read_lines_upto(io.BytesIO(GOOD), len(start), None)
    want, size, _ = parse_bytes(start, "s")
    _same(got, want)
    assert consumed == size == len(start)
    # A line cut by the size the file had is its last line, as a truncated write would be.
    cut, n = read_lines_upto(io.BytesIO(GOOD), len(start) + 10, None)
    assert n == len(start) + 10 and cut[-1].diagnostic is not None and cut[-1].diagnostic.problem == "truncated_line"


@pytest.mark.parametrize("fmt", ["claude_code", "codex", "native"])
def test_the_line_formats_stream_and_leave_the_collector_on(fmt: str, tmp_path: Path) -> None:
    assert registry.get(fmt).stream is not None
    f = tmp_path / "s.jsonl"
    f.write_bytes(encode(fmt, SEEDS[fmt]))
    assert gc.isenabled()
    led = load(str(f))
    assert led.format == fmt and led.records and gc.isenabled()
    gc.disable()
    try:
        load(str(f))
        assert not gc.isenabled()  # off stays off
    finally:
        gc.enable()


def test_collector_paused_restores_on_error() -> None:
    with pytest.raises(RuntimeError), collector_paused():
        assert not gc.isenabled()
        raise RuntimeError
    assert gc.isenabled()


def test_only_the_console_script_freezes_what_it_loaded() -> None:
    """`gc.freeze` hides what is alive from the cyclic collector for good: right for a one-shot
    command, wrong for the app, `watch` or any caller of `main()` in a longer-lived process
    (the fuzzer runs thousands of commands in one)."""
    import gc
    import subprocess
    import sys

    from inspector.cli.main import main
    from tests.conftest import SAMPLES

    sample = str(SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl")
    before = gc.get_freeze_count()
    assert main(["analyze", sample, "--json"]) == 0
    # (no more frozen; fewer when an object an earlier freeze in this process held was freed: the
    # stdout encoder `main` replaces as it makes stdout print a lone surrogate as its escape)
    assert gc.get_freeze_count() <= before
    code = "import gc, sys; from inspector.cli import main as m; sys.argv = ['inspector', 'analyze', sys.argv[1]]; m.run()"
    probe = f"import atexit, gc; atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0)); {code}"
    out = subprocess.run([sys.executable, "-c", probe, sample], capture_output=True, text=True)
    assert "frozen True" in out.stdout


def test_a_one_shot_process_freezes_what_a_paused_block_made_before_collecting_again() -> None:
    """In the console script the collector never walks a load's objects: they are frozen as the
    pause ends, before the collector's first pass could walk them all (a long-lived process is
    left collecting as before: the test above)."""
    import subprocess
    import sys

    code = (
        "import gc\n"
        "from inspector.formats import whole_lines as w\n"
        "with w.collector_paused():\n"
        "    kept = [[i] for i in range(50000)]\n"
        "plain = gc.get_freeze_count()\n"
        "w.freeze_what_loads()\n"
        "with w.collector_paused():\n"
        "    kept2 = [[i] for i in range(50000)]\n"
        "print(plain, gc.get_freeze_count() >= 50000, gc.isenabled())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "True", "True"]


def test_a_store_loads_with_the_collector_paused_and_leaves_it_on(monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.formats import adk
    from tests.conftest import need_shared

    db = need_shared(Path(__file__).resolve().parents[2] / "shared" / "peers" / "adk" / "corpus" / "token_threshold.db")
    seen: list[bool] = []
    real = adk._load_sqlite

    def watched(*a: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*a)

    monkeypatch.setattr(adk, "_load_sqlite", watched)
    assert load(str(db)).records and seen == [False] and gc.isenabled()


def test_a_native_ledger_streams_up_to_the_size_it_had_when_the_load_started(tmp_path: Path) -> None:
    from inspector.formats import native

    data = encode("native", SEEDS["native"])
    cut = data.index(b"\n", len(data) // 2) + 1
    with io.BytesIO(data) as f:
        led, consumed = native.stream(f, "s", cut, None)
    want = native.build(parse_bytes(data[:cut], "s")[0], "s")
    assert consumed == cut and 0 < len(led.records) == len(want.records) < len(native.build(parse_bytes(data, "s")[0], "s").records)
    assert [(r.seq, r.line, r.id, r.offset, r.length) for r in led.records] == [
        (r.seq, r.line, r.id, r.offset, r.length) for r in want.records
    ]
    assert [d.message for d in led.diagnostics] == [d.message for d in want.diagnostics]
