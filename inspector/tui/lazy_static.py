"""A Static that lays out only what is on screen at once, and the rest of its content after.

Textual lays out a `height: auto` Static whole, twice: once to learn its height, once to draw it
(`Visual.get_height`, then `Visual.to_strips` of every line). The detail pane shows one record in
one such Static: a long message (up to 400 lines of text or highlighted JSON) cost a key 30-50 ms
of Rich layout on the main thread, when 40 lines were on screen (issue 15.2).

`LazyStatic` cuts its content (a Rich `Group`) into pieces of a few lines each, at line breaks
where the layout of the whole equals the layout of its parts (a Text's lines wrap one by one, and
so do a word-wrapped Syntax's), lays out the pieces that fill the first screen when its height is
asked, and the others in short steps once the screen is painted; its height grows to the whole
when they are done (nothing is left out: the pane scrolls through all of it, as before).
`pieces()` is the cut, `tests/test_tui_lazy_static.py` holds the layout of the pieces equal to the
layout of the whole.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from textual.geometry import Size
from textual.strip import Strip
from textual.timer import Timer
from textual.visual import RichVisual, Visual
from textual.widgets import Static

PIECE_LINES = 16  # lines of a Text or of a Syntax per piece
STEP_SECONDS = 0.004  # the rest is laid out in steps of about this long, between which keys run
STEP_AFTER = 0.02  # ... starting this long after the first screen was painted
STEP_GAP = 0.002  # ... this long apart (a Textual timer needs a positive interval)


class SyntaxLines:
    """Some lines of a word-wrapped Syntax without line numbers, drawn as `Syntax` draws them: each
    line of the highlighted code laid out on its own, left-justified, on a transparent background."""

    def __init__(self, lines: list[Text]) -> None:
        self.lines = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        wrap_options = options.update(width=options.max_width, height=None, justify="left")
        new_line = Segment("\n")
        for line in self.lines:
            for wrapped in console.render_lines(line, wrap_options, style=Style.null(), pad=False):
                yield from wrapped
                yield new_line


def _cuttable_syntax(r: Syntax) -> bool:
    """The Syntax the detail pane makes: word-wrapped, nothing beside or around the code."""
    return (
        r.word_wrap
        and not r.line_numbers
        and not r.indent_guides
        and r.line_range is None
        and not r.highlight_lines
        and not any(r.padding)
        and r.code_width is None
        and not r.dedent
        and r.background_style.bgcolor is not None
        and r.background_style.bgcolor.is_default
    )


def _syntax_lines(r: Syntax) -> list[Text]:
    """The lines `Syntax` lays out one by one: its code ending in a newline, tabs expanded,
    highlighted, split at newlines (a last empty line only when the code ends with one)."""
    code = r.code
    ends_on_nl = code.endswith("\n")
    processed = (code if ends_on_nl else code + "\n").expandtabs(r.tab_size)
    return list(r.highlight(processed).split("\n", allow_blank=ends_on_nl))


def _text_pieces(t: Text) -> Iterator[Text]:
    """A Text cut at every PIECE_LINES-th newline (the newline itself dropped: each piece ends a
    line, as the whole did there), or at the next newline between two lines that are not empty
    (Rich lays out an empty line at the start of a Text as one empty segment, not as none)."""
    plain = t.plain
    start = 0
    pos = -1
    n = len(plain)
    while True:
        for _ in range(PIECE_LINES):
            pos = plain.find("\n", pos + 1)
            if pos < 0:
                break
        while pos >= 0 and (pos == start or pos + 1 >= n or plain[pos - 1] == "\n" or plain[pos + 1] == "\n"):
            pos = plain.find("\n", pos + 1)
        if pos < 0:
            yield t if start == 0 else _like(t[start:], t)
            return
        yield _like(t[start:pos], t)
        start = pos + 1


def _like(piece: Text, whole: Text) -> Text:
    """A slice keeps the style, justification and overflow of the whole (`Text.divide`), not
    these."""
    piece.no_wrap = whole.no_wrap
    piece.tab_size = whole.tab_size
    piece.end = whole.end
    return piece


def pieces(renderables: Iterable[RenderableType]) -> list[RenderableType]:
    """The renderables of a Group, long Texts and Syntaxes cut into pieces of a few lines."""
    out: list[RenderableType] = []
    for r in renderables:
        if isinstance(r, Text) and r.plain.count("\n", 0, len(r.plain)) >= PIECE_LINES and r.end == "\n":
            out += _text_pieces(r)
        elif isinstance(r, Syntax) and _cuttable_syntax(r):
            lines = _syntax_lines(r)
            out += [SyntaxLines(lines[i : i + PIECE_LINES]) for i in range(0, len(lines), PIECE_LINES)]
        elif isinstance(r, Group):
            out += pieces(r.renderables)
        else:
            out.append(r)
    return out


class LazyStatic(Static):
    """A Static whose content is a Rich Group, laid out a screen first (see the module)."""

    def __init__(self, content: RenderableType = "", **kwargs: object) -> None:
        super().__init__(content, **kwargs)  # type: ignore[arg-type]
        self._pieces: list[RenderableType] | None = None
        self._strips: list[Strip] = []
        self._width = -1
        self._next = 0
        self._step_timer: Timer | None = None

    def update(self, content: RenderableType = "", *, layout: bool = True) -> None:  # type: ignore[override]
        self._forget()
        super().update(content, layout=layout)  # type: ignore[arg-type]

    def _forget(self) -> None:
        self._pieces = None
        self._strips = []
        self._width = -1
        self._next = 0
        if self._step_timer is not None:
            self._step_timer.stop()
            self._step_timer = None

    @property
    def complete(self) -> bool:
        """Every piece is laid out at the current width."""
        return self._pieces is not None and self._next >= len(self._pieces)

    def _lay_out(self, width: int, lines: int | None, until: float | None = None) -> None:
        """Lay out pieces at `width` until `lines` lines are there (None: all), or until `until`."""
        if width != self._width:
            self._strips = []
            self._next = 0
            self._width = width
        if self._pieces is None:
            content = self.content
            self._pieces = pieces(content.renderables if isinstance(content, Group) else [content])
        style = self.visual_style
        todo = self._pieces
        while self._next < len(todo) and (lines is None or len(self._strips) < lines):
            piece = todo[self._next]
            self._next += 1
            self._strips += Visual.to_strips(self, RichVisual(self, piece), width, None, style)
            if until is not None and time.perf_counter() >= until:
                break

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if width <= 0:
            return 0
        self._lay_out(width, viewport.height)
        if not self.complete and self._step_timer is None:
            self._step_timer = self.set_timer(STEP_AFTER, self._step)
        return len(self._strips)

    def _step(self) -> None:
        """Lay out some more; once all is there, the height is the whole."""
        self._step_timer = None
        if self._pieces is None or self._width < 0:
            return
        self._lay_out(self._width, None, until=time.perf_counter() + STEP_SECONDS)
        if self.complete:
            self.refresh(layout=True)
        else:
            self._step_timer = self.set_timer(STEP_GAP, self._step)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if width != self._width or (y >= len(self._strips) and not self.complete):
            self._lay_out(width, y + 1)
            if not self.complete and self._step_timer is None:
                self._step_timer = self.set_timer(STEP_AFTER, self._step)
        if 0 <= y < len(self._strips):
            return self._strips[y]
        return Strip.blank(width, self.visual_style.rich_style)
