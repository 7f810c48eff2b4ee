"""Loading a JSONL format whose adapter maps every line as it is read (Claude Code, Codex): the file
read from the open handle `load` already has, up to the size it had when we started, and parsed and
mapped with the cyclic garbage collector paused (issue 15).

Parsing a 100 MB transcript makes millions of dicts, lists and strings, none in a cycle; each one
counts towards the collector's next pass, and each full pass walks everything parsed so far: on a
100 MB Codex rollout that was half the load time. The lines are split exactly as `jsonl.read_lines`
splits them (one line behind, so the last line is known for the truncation diagnosis).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

from inspector.formats.jsonl import RawLine, parse_line
from inspector.ledger.model import Ledger

_freeze_loads = False  # set for a one-shot process by `freeze_what_loads`


def freeze_what_loads() -> None:
    """For a one-shot process only (the console script): what a load makes lives until the
    process exits, so each `collector_paused` block ends by moving it out of the cyclic
    collector's sight (`gc.freeze`). Without it, the collector's first pass after the block walks
    every object the block made (all of it still in the youngest generation: 0.33 s of a 20 MB
    native ledger's 0.46 s load), and later passes walk it again. Never for the app, `watch` or a
    caller of `main()` in a longer-lived process: a frozen cycle is never collected."""
    global _freeze_loads
    _freeze_loads = True


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block (as it was, after; what the block made
    frozen first in a one-shot process, `freeze_what_loads`). A long-lived process (the app,
    `watch`) keeps collecting afterwards."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if _freeze_loads:
            gc.freeze()
        if was:
            gc.enable()


def read_lines_upto(f: BinaryIO, limit: int, upto_line: int | None) -> tuple[list[RawLine], int]:
    """Every line of `f` (at its start) within its first `limit` bytes, parsed (or `upto_line`
    lines); returns them and the bytes consumed."""
    out: list[RawLine] = []
    consumed = read_heads_upto(f, limit, upto_line, None, _no_head, out.append)
    return out, consumed


def _no_head(_h: Any, _raw: bytes, _line: int, _offset: int) -> bool:
    return False


def streamer(build: Callable[[list[RawLine], str | None], Ledger]) -> Callable[..., tuple[Ledger, int]]:
    """A format's `stream` (`base.LineStreamer`) over its `build`."""

    def stream(
        f: BinaryIO, path: str, limit: int, upto_line: int | None, after_fork: Callable[[], Any] | None = None
    ) -> tuple[Ledger, int]:
        if after_fork is not None:
            after_fork()  # (the hasher's thread: no helper process here)
        with collector_paused():
            lines, consumed = read_lines_upto(f, limit, upto_line)
            return build(lines, path), consumed

    return stream


def read_heads_upto(
    f: BinaryIO,
    limit: int,
    upto_line: int | None,
    decode: Callable[[bytes], Any] | None,
    on_head: Callable[[Any, bytes, int, int], bool],
    on_line: Callable[[RawLine], None],
) -> int:
    """The lines of `f` within its first `limit` bytes (or `upto_line` lines), for an index-first
    loader (issue 15): each clean line's head decoded
    (`decode`, a msgspec decoder of the fields the mapping reads) and given to `on_head(head, raw,
    line, offset)`; a line whose head does not decode, or that `on_head` declines (False), is
    parsed whole and given to `on_line` (every line, when `decode` is None: `read_lines_upto`), each
    line's parsed objects freed before the next is read. Returns the bytes consumed. The lines are
    split as `jsonl.read_lines` splits them, one line behind, so the last line is known for the
    truncation diagnosis.

    msgspec does not check the UTF-8 of what it skips, so a line that is not ASCII is checked
    first; a line over `bounded.LARGE_LINE_BYTES` is always parsed whole (its bounded read says
    what it left unread). msgspec is as strict as orjson about JSON's grammar, but not about a
    number's range: it skips `1e400` or a 30-digit integer where orjson refuses them. The whole
    path agrees all the same: a line orjson refuses is read again by `jsonl.recover_line` with
    Python's json, which takes such numbers (as JSON.parse does) and says nothing of them.

    Line by line on purpose (issue 15, measured): reading 64 KiB blocks, splitting them and
    decoding each block's lines in C (`map` over the lines, resumed after a failing one; never
    `decode_lines`, which reads glued objects and objects across lines as clean) cost more, not
    less (20 MB: Codex 47 -> 51 ms, native 65 -> 70 ms): a block's lines and heads all live at
    once, where each line read here is freed, and its memory reused, before the next."""
    from inspector.formats.bounded import LARGE_LINE_BYTES
    from inspector.formats.heads import DECODE_ERRORS, valid_utf8

    offset, lineno = 0, 0
    prev: bytes | None = None
    prev_offset = 0
    for raw in f:
        if prev is not None:
            rl = parse_line(prev, lineno, prev_offset, False)
            if rl is not None:
                on_line(rl)
        lineno += 1
        if upto_line is not None and lineno > upto_line:
            prev = None
            break
        n = len(raw)
        if offset + n > limit:  # appended while we read: stop at the size we started with
            raw = raw[: limit - offset]
            n = len(raw)
            if not n:
                prev = None
                break
        h = None
        if decode is not None and n <= LARGE_LINE_BYTES and (raw.isascii() or valid_utf8(raw)):
            try:
                h = decode(raw)
            except DECODE_ERRORS:
                h = None
        if h is not None and on_head(h, raw, lineno, offset):
            prev = None
        else:
            prev, prev_offset = raw, offset
        offset += n
        if offset >= limit:
            break
    if prev is not None:
        rl = parse_line(prev, lineno, prev_offset, True)
        if rl is not None:
            on_line(rl)
    return offset
