"""The detail pane lays its content out a piece at a time (inspector/tui/lazy_static.py): the lines
of the pieces must be the lines of the whole, at every width, for every record the pane shows."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from rich.console import Console, Group, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text

from inspector.formats import load
from inspector.tui.detail import DetailPane, _assemble, _json_view
from inspector.tui.lazy_static import PIECE_LINES, LazyStatic, SyntaxLines, pieces
from tests.conftest import SAMPLES, SHARED, need_shared

WIDTHS = (1, 7, 23, 60, 97)


def _console() -> Console:
    return Console(width=200, file=io.StringIO(), color_system="truecolor", legacy_windows=False)


def _cells(lines: list[list[Segment]]) -> list[list[tuple[str, Style | None]]]:
    """What a line puts on screen: runs of text and their style (an empty segment, or no style
    beside the null style, are the same cells: Textual's base style replaces both alike)."""
    out = []
    for line in lines:
        runs: list[tuple[str, Style | None]] = []
        for seg in line:
            style = seg.style or None
            if not seg.text:
                continue
            if runs and runs[-1][1] == style:
                runs[-1] = (runs[-1][0] + seg.text, style)
            else:
                runs.append((seg.text, style))
        out.append(runs)
    return out


def _same_lines(renderables: list[RenderableType], widths: tuple[int, ...] = WIDTHS) -> None:
    console = _console()
    cut = pieces(renderables)
    for width in widths:
        opts = console.options.update(width=width)
        whole = console.render_lines(Group(*renderables), opts, pad=False)
        parts = [line for p in cut for line in console.render_lines(p, opts, pad=False)]
        assert _cells(parts) == _cells(whole), f"width {width}"


def _text(n: int, trailing: bool, spans: bool = True) -> Text:
    lines = [("\t" if i % 5 == 0 else "") + f"line {i} " + "word " * (i % 17) + ("宽字" if i % 7 == 0 else "") for i in range(n)]
    t = Text("\n".join(lines) + ("\n" if trailing else ""), style="italic #8b949e")
    if spans:
        for i in range(0, len(t.plain), 37):
            t.stylize("bold red", i, i + 53)  # spans across the cuts
    return t


@pytest.mark.parametrize("n", [0, 1, PIECE_LINES - 1, PIECE_LINES, PIECE_LINES + 1, 2 * PIECE_LINES, 3 * PIECE_LINES + 5])
@pytest.mark.parametrize("trailing", [False, True])
def test_a_long_text_cut_at_newlines_lays_out_as_the_whole(n: int, trailing: bool) -> None:
    t = _text(n, trailing)
    _same_lines([Text("head", style="bold"), t, Text(""), _text(n, trailing, spans=False)])
    if n > PIECE_LINES:
        assert len(pieces([t])) > 1


def test_blank_lines_and_a_no_wrap_text_are_kept() -> None:
    blank = Text("\n" * (3 * PIECE_LINES + 2))
    nowrap = _text(2 * PIECE_LINES, False)
    nowrap.no_wrap = True
    nowrap.overflow = "ellipsis"
    _same_lines([blank, nowrap])


# Lines a cut can fall beside: empty ones (alone and in runs, first and last), blanks, tabs,
# wide characters, words that wrap.
_LINE_KINDS = ("", "", "", " ", "\t", "x", "宽字宽字", "word " * 9, "  lead", "trail  ")


@pytest.mark.parametrize("seed", range(12))
def test_random_texts_with_empty_lines_lay_out_as_the_whole(seed: int) -> None:
    """Cuts beside empty lines (Rich lays out an empty line at a Text's start as one empty segment):
    random texts of PIECE_LINES-sized stretches, each line one of `_LINE_KINDS`, with spans."""
    import random

    rng = random.Random(seed)
    n = rng.choice((PIECE_LINES, PIECE_LINES + 1, 2 * PIECE_LINES, 3 * PIECE_LINES + rng.randrange(PIECE_LINES)))
    lines = [rng.choice(_LINE_KINDS) for _ in range(n)]
    for _ in range(rng.randrange(4)):  # a run of empty lines across a cut
        at = rng.randrange(n)
        lines[at : at + rng.randrange(1, 5)] = [""] * rng.randrange(1, 5)
    t = Text("\n".join(lines) + ("\n" if rng.random() < 0.5 else ""), style="italic")
    for i in range(0, len(t.plain), rng.randrange(5, 60)):
        t.stylize("bold red", i, i + rng.randrange(1, 40))
    _same_lines([t], widths=(1, 5, 40))


def _deep(i: int) -> object:
    return {"id": i, "text": "a long string value that wraps " * (i % 9), "list": [1, 2.5, None, True, "x\ty"], "nested": {"k": [i] * (i % 4)}}


@pytest.mark.parametrize("size", [0, 1, 3, 40, 200])
def test_highlighted_json_cut_at_lines_lays_out_as_the_whole(size: int) -> None:
    value = [_deep(i) for i in range(size)]
    views = _json_view(value)
    syn = views[0]
    assert isinstance(syn, Syntax)
    _same_lines(views)
    if size >= 40:
        assert sum(isinstance(p, SyntaxLines) for p in pieces(views)) > 1
    # code that ends with a newline, and a tab in the code itself
    _same_lines([Syntax(json.dumps(value, indent=2) + "\n", "json", theme="monokai", word_wrap=True, background_color="default")])
    _same_lines([Syntax("{\n\t\"a\":\t1\n}", "json", theme="monokai", word_wrap=True, background_color="default")])


def test_a_syntax_drawn_otherwise_is_left_whole() -> None:
    syn = Syntax("x = 1\n" * 50, "python", line_numbers=True, word_wrap=True)
    assert pieces([syn]) == [syn]
    _same_lines([syn], (30, 80))


def _files() -> list[Path]:
    found = sorted(SAMPLES.glob("*/*.jsonl"))
    for fmt in ("claude_code", "codex", "pi"):
        found += sorted(need_shared(SHARED / "real_sessions" / fmt).glob("*.jsonl"))
    return found


# CI checks every record of a session of up to SAMPLE records, and of a bigger one SAMPLE spread
# evenly plus the MOST_CUT cut into the most pieces (the two biggest Codex rollouts alone were three
# quarters of this file's time); INSPECTOR_EVERY_RECORD=1 checks every record of every session.
SAMPLE = 240
MOST_CUT = 24


def _records_to_check(shown: list[list[RenderableType]]) -> list[int]:
    if os.environ.get("INSPECTOR_EVERY_RECORD") == "1" or len(shown) <= SAMPLE:
        return list(range(len(shown)))
    step = len(shown) / SAMPLE
    spread = {int(i * step) for i in range(SAMPLE)} | {len(shown) - 1}
    most_cut = sorted(range(len(shown)), key=lambda i: len(pieces(shown[i])), reverse=True)[:MOST_CUT]
    return sorted(spread | set(most_cut))


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.name)
def test_the_records_of_the_samples_and_real_sessions_lay_out_as_the_whole(path: Path) -> None:
    led = load(str(path), fingerprint=False)
    led.load_messages([r.seq for r in led.records if r.kind == "message"])
    pane = DetailPane.__new__(DetailPane)  # (its building only: no app)
    pane._counts = pane._ctx_index = pane._findings_sorted = None
    shown: list[list[RenderableType]] = []
    for rec in led.records:
        for w in _assemble(pane._build(led, None, rec.seq)):
            if isinstance(w, LazyStatic):
                content = w.content
                assert isinstance(content, Group)
                shown.append(list(content.renderables))
    for i in _records_to_check(shown):
        _same_lines(shown[i], (23, 97))
