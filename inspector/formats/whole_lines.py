"""Loading a JSONL format whose adapter maps every line as it is read (Claude Code, Codex, native): the file
read from the open handle `load` already has, up to the size it had when we started, and parsed and
mapped with the cyclic garbage collector paused (issue 15).

Parsing a 100 MB transcript makes millions of dicts, lists and strings, none in a cycle; each one
counts towards the collector's next pass, and each full pass walks everything parsed so far: on a
100 MB Codex rollout that was half the load time. The lines are split exactly as `jsonl.read_lines`
splits them (the last line known for the truncation diagnosis), a block at a time (`head_blocks`).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import accumulate, compress
from operator import not_
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


# The bytes read at a time (then cut after the block's last newline; a longer line is read whole).
BLOCK_BYTES = 1 << 16


def read_heads_upto(
    f: BinaryIO,
    limit: int,
    upto_line: int | None,
    decode: Callable[[bytes], Any] | None,
    on_head: Callable[[Any, bytes, int, int], bool],
    on_line: Callable[[RawLine], None],
) -> int:
    """The lines of `f` within its first `limit` bytes (or `upto_line` lines), for an index-first
    loader (issue 15): each clean line's head decoded (`decode`, a msgspec decoder of the fields the
    mapping reads) and given to `on_head(head, raw, line, offset)`; a line whose head does not
    decode, or that `on_head` declines (False), is parsed whole and given to `on_line` (every line,
    when `decode` is None: `read_lines_upto`). Returns the bytes consumed. (`head_blocks` reads
    them; a loader may loop over its blocks itself.)"""
    reading = head_blocks(f, limit, upto_line, decode)
    for blk in reading:
        line = blk.line0
        for i, (h, raw, at) in enumerate(zip(blk.heads, blk.raws, blk.offsets, strict=False)):
            line += 1
            if h is None or not on_head(h, raw, line, at):
                rl = blk.whole(i)
                if rl is not None:
                    on_line(rl)
    return reading.consumed


class HeadBlock:
    """A block of a file's lines (`head_blocks`): line `line0 + i + 1` is `raws[i]` (with its
    newline), at byte `offsets[i]`, its head `heads[i]` (None: parse it whole, `whole(i)`)."""

    __slots__ = ("heads", "last", "line0", "offsets", "raws")

    def __init__(self, heads: list[Any], raws: list[bytes], offsets: list[int], line0: int, last: int) -> None:
        self.heads = heads
        self.raws = raws
        self.offsets = offsets  # (one more: where the block ends)
        self.line0 = line0
        self.last = last  # the index of the file's last line, when it is in this block (else -1)

    def whole(self, i: int) -> RawLine | None:
        """Line i parsed whole (None: a blank line)."""
        return parse_line(self.raws[i], self.line0 + i + 1, self.offsets[i], i == self.last)


class head_blocks:
    """The lines of `f` within its first `limit` bytes (or `upto_line` lines) as `HeadBlock`s, each
    line's head decoded by `decode` (None: no heads); `consumed`, once they are all read, says the
    bytes they took. The lines are split as `jsonl.read_lines` splits them (at each newline, the
    file's last line known for the truncation diagnosis).

    The file is read a block at a time (`BLOCK_BYTES`, cut after its last newline) and the block's
    lines split, measured and decoded in C (`_block_heads`): no Python runs per line but the
    mapping's. msgspec is as strict as orjson about what is JSON but does not check the UTF-8 of
    what it skips, so a line that is not ASCII is checked; a line over `bounded.LARGE_LINE_BYTES`
    is always parsed whole (its bounded read says what it left unread)."""

    def __init__(self, f: BinaryIO, limit: int, upto_line: int | None, decode: Callable[[bytes], Any] | None) -> None:
        self.consumed = 0
        self._it = self._read(f, limit, upto_line, decode)

    def __iter__(self) -> Iterator[HeadBlock]:
        return self._it

    def _read(self, f: BinaryIO, limit: int, upto_line: int | None, decode: Callable[[bytes], Any] | None) -> Iterator[HeadBlock]:
        lineno = 0
        blocks = _blocks(f, limit)
        block = next(blocks, None)
        while block is not None:
            after = next(blocks, None)  # (one block ahead: whether this block's last line is the file's)
            raws = _block_lines(block)
            last = len(raws) - 1 if after is None else -1
            if upto_line is not None and lineno + len(raws) >= upto_line:
                del raws[upto_line - lineno :]
                after = None
            lengths = list(map(len, raws))
            offsets = list(accumulate(lengths, initial=self.consumed))
            yield HeadBlock(_block_heads(raws, lengths, block, decode), raws, offsets, lineno, last)
            lineno += len(raws)
            self.consumed = offsets[-1]
            block = after


def _blocks(f: BinaryIO, limit: int) -> Iterator[bytes]:
    """`f`'s first `limit` bytes, in blocks of whole lines (the last may end without a newline: at
    `limit`, or where the file ended)."""
    left, carry = limit, b""
    while left > 0:
        data = f.read(min(BLOCK_BYTES, left))
        if not data:
            break
        left -= len(data)
        buf = carry + data if carry else data
        carry = b""
        if left > 0 and not buf.endswith(b"\n"):
            cut = buf.rfind(b"\n") + 1
            if cut == 0:  # a line longer than the block: the rest of it
                rest = f.readline(left)
                left -= len(rest)
                buf += rest
            else:
                buf, carry = buf[:cut], buf[cut:]
        yield buf
    if carry:
        yield carry


def _block_lines(block: bytes) -> list[bytes]:
    """A block's lines, each with its newline (split at newlines only, as iterating a binary file
    does: `bytes.splitlines` also splits at a carriage return)."""
    if b"\r" not in block:
        return block.splitlines(keepends=True)
    raws = [raw + b"\n" for raw in block.split(b"\n")]
    last = raws.pop()
    if len(last) > 1:
        raws.append(last[:-1])
    return raws


def _block_heads(raws: list[bytes], lengths: list[int], block: bytes, decode: Callable[[bytes], Any] | None) -> list[Any]:
    """Each line's head (None: not decoded, the line is parsed whole): decoded in C, line by line
    (a line alone, never several glued as `decode_lines` would read them), resumed after a line
    that does not decode."""
    from inspector.formats.bounded import LARGE_LINE_BYTES
    from inspector.formats.heads import DECODE_ERRORS, valid_utf8

    if decode is None:
        return [None] * len(raws)
    if raws and max(lengths) > LARGE_LINE_BYTES:
        return [_line_head(raw, decode) for raw in raws]
    heads: list[Any] = []
    rest = iter(raws)
    while True:
        try:
            heads.extend(map(decode, rest))  # (what decoded before an error stays in `heads`)
            break
        except DECODE_ERRORS:
            heads.append(None)
    if not block.isascii():  # (a line's UTF-8 checked only where it is not ASCII, as is most)
        for i in compress(range(len(raws)), map(not_, map(bytes.isascii, raws))):
            if not valid_utf8(raws[i]):
                heads[i] = None
    return heads


def _line_head(raw: bytes, decode: Callable[[bytes], Any]) -> Any:
    """One line's head alone (in a block that holds a large line)."""
    from inspector.formats.bounded import LARGE_LINE_BYTES
    from inspector.formats.heads import DECODE_ERRORS, valid_utf8

    if len(raw) > LARGE_LINE_BYTES or not (raw.isascii() or valid_utf8(raw)):
        return None
    try:
        return decode(raw)
    except DECODE_ERRORS:
        return None
