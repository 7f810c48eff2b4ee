"""Reading JSONL ledgers line by line, robustly.

Every line becomes zero or more parsed objects plus, when it was not clean JSON, a Diagnostic that
names the line, says what was wrong and what was recovered. Nothing here raises on bad content;
only an unreadable file (missing, a directory, binary data) raises LoadError.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import orjson

from inspector.formats.bounded import (
    NotJson,
    describe,
    is_large,
    js_loads,
    js_raw_decode,
    loads_bounded,
    mb,
)
from inspector.formats.heads import utf8_replaced
from inspector.ledger.model import Diagnostic
from inspector.ledger.quoting import escape


class LoadError(Exception):
    """The file cannot be read as a session at all. The message names the file and the reason."""


@dataclass(slots=True)
class RawLine:
    line: int  # 1-based
    offset: int  # byte offset of the line's start
    length: int  # bytes, including the newline
    objects: list[Any]  # parsed JSON values (two or more when objects were glued on one line)
    diagnostic: Diagnostic | None = None
    # True when the producer's own JSON parser would skip the whole line (any parse error).
    runtime_skips: bool = False
    # True when read by JSON.parse's rules where a strict reader (orjson; Codex's serde_json) refuses
    # the line: a lone surrogate escape, or a number out of a double's range.
    lenient: bool = False
    # A line that does not parse but begins with a JSON value: that value (a reader that takes a
    # line's first value and ignores the rest, as Claude Code's does, reads it). None otherwise.
    leading: Any = None


_DECODER = json.JSONDecoder()


def split_glued(text: str) -> list[Any] | None:
    """Recover every JSON value from a line holding several glued together; None if it can't."""
    values = parse_values(text)
    return values if values is not None and len(values) > 1 else None


def parse_values(text: str) -> list[Any] | None:
    """Every JSON value on a line, one after another; None when it is not made of JSON values."""
    out: list[Any] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            break
        try:
            obj, end = js_raw_decode(text, i)
        except json.JSONDecodeError:
            return None
        out.append(obj)
        i = end
    return out or None


def _describe_json_error(text: str, truncated: bool) -> str:
    try:
        js_loads(text)
    except json.JSONDecodeError as e:
        what = "truncated JSON" if truncated else "invalid JSON"
        return f"{what} ({e.msg} at column {e.colno})"
    except ValueError as e:  # pragma: no cover - defensive
        return f"invalid JSON ({e})"
    return "not a JSON object"


_NOT_REGULAR = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def check_openable(path: str) -> int:
    """The size of a regular file we may read; anything else is refused before it is opened (a
    named pipe with no writer would block `open()` forever)."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise LoadError(f"{path}: {os_problem(e)}") from None
    if stat.S_ISDIR(st.st_mode):
        raise LoadError(f"{path}: is a directory, not a session file")
    if not stat.S_ISREG(st.st_mode):
        what = next((name for test, name in _NOT_REGULAR if test(st.st_mode)), "not a regular file")
        raise LoadError(f"{path}: not a session file ({what})")
    if not os.access(path, os.R_OK):
        raise LoadError(f"{path}: permission denied (the file cannot be read)")
    return st.st_size


class NotRegularFile(OSError):
    """`open_regular` was given something else than a regular file (a named pipe, a device, a
    socket): its `strerror` says what."""


def _without_waiting(path: str, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))


def open_regular(path: str, buffering: int = -1) -> BinaryIO:
    """`open(path, "rb")` for a regular file only. Opened without waiting (a named pipe with no
    writer blocks a plain `open()` forever; one opened so reads nothing, at once), then anything
    but a regular file closed again and refused: `NotRegularFile`. For the reads of a path nothing
    vetted before (`check_openable`): a file a walk found, a side file named after the session."""
    try:
        f = open(path, "rb", buffering=buffering, opener=_without_waiting)  # noqa: SIM115 - returned or closed
    except OSError as e:
        if e.errno == errno.ENXIO and stat.S_ISSOCK(os.stat(path).st_mode):  # (a socket cannot be opened)
            raise NotRegularFile(errno.EINVAL, "a socket", path) from None
        raise
    try:
        mode = os.fstat(f.fileno()).st_mode
    except OSError:
        f.close()
        raise
    if not stat.S_ISREG(mode):
        f.close()
        what = next((name for test, name in _NOT_REGULAR if test(mode)), "not a regular file")
        raise NotRegularFile(errno.EINVAL, what, path)
    return f


def read_regular(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a regular file (`open_regular`: a named pipe is refused, never waited on)."""
    with open_regular(os.fspath(path)) as f:
        return f.read()


def os_problem(e: OSError) -> str:
    """What an OSError from stat/open means for the user."""
    if isinstance(e, NotRegularFile):
        return f"not a file ({e.strerror})"
    if e.errno == errno.ELOOP:
        return "symlink loop (a symbolic link that leads back to itself)"
    if e.errno in (errno.EACCES, errno.EPERM):
        return "permission denied (a folder on the way cannot be searched, or the file cannot be read)"
    if e.errno == errno.ENOENT:
        return "no such file"
    if e.errno == errno.ENOTDIR:
        return "no such file (a part of the path is not a folder)"
    return f"cannot read ({e.strerror})"


# The read buffer of a session file read line by line: with the default 8 KiB, every line longer
# than the buffer is put together from several reads, and iterating a 20 MB file's lines cost
# 8-10 ms (Claude Code 9.1, Codex 8.6, pi 7.9, native 9.9) where 256 KiB costs 3-7 (3.4, 7.2, 5.4,
# 7.2; issue 15).
READ_BUFFER_BYTES = 256 << 10


def read_lines(path: str, upto_line: int | None = None) -> tuple[list[RawLine], int, str]:
    """Read a JSONL file. Returns (lines, bytes read, sha256 of the bytes read)."""
    check_openable(path)
    try:
        f = open(path, "rb", buffering=READ_BUFFER_BYTES)  # noqa: SIM115 - closed below
    except OSError as e:
        raise LoadError(f"{path}: {os_problem(e)}") from None
    with f:
        head = f.read(8192)
        if b"\x00" in head:
            raise LoadError(f"{path}: line 1: binary data (NUL bytes), not a JSONL session file")
        f.seek(0)
        return _parse_stream(f, path, upto_line)


def parse_bytes(data: bytes, name: str = "<bytes>", upto_line: int | None = None) -> tuple[list[RawLine], int, str]:
    import io

    if b"\x00" in data[:8192]:
        raise LoadError(f"{name}: line 1: binary data (NUL bytes), not a JSONL session file")
    return _parse_stream(io.BytesIO(data), name, upto_line)


def _parse_stream(f: Any, name: str, upto_line: int | None) -> tuple[list[RawLine], int, str]:
    h = hashlib.sha256()
    out: list[RawLine] = []
    offset = 0
    lineno = 0
    prev: bytes | None = None
    prev_offset = 0
    # Process one line behind so we know which line is the last one (truncation diagnosis).
    for raw in f:
        if prev is not None:
            _one(out, lineno, prev_offset, prev, False)
        lineno += 1
        if upto_line is not None and lineno > upto_line:
            prev = None
            break
        h.update(raw)
        prev, prev_offset = raw, offset
        offset += len(raw)
    if prev is not None:
        _one(out, lineno, prev_offset, prev, True)
    return out, offset, h.hexdigest()


def _one(out: list[RawLine], lineno: int, offset: int, raw: bytes, is_last: bool) -> None:
    rl = parse_line(raw, lineno, offset, is_last)
    if rl is not None:
        out.append(rl)


def parse_line(raw: bytes, lineno: int, offset: int, is_last: bool) -> RawLine | None:
    """One line of any JSONL format, parsed (None: a blank line). Every reader of a line, first
    read or read again, goes through here, so a huge line costs what `bounded` allows everywhere."""
    if is_large(raw):
        return _large_line(raw, lineno, offset, is_last)
    try:
        return RawLine(lineno, offset, len(raw), [orjson.loads(raw)])
    except orjson.JSONDecodeError:
        return recover_line(raw, lineno, offset, is_last)


def line_object(raw: bytes, lineno: int, offset: int) -> Any:
    """A line read again (a lazily-read record's content): its first JSON value, {} if none."""
    rl = parse_line(raw, lineno, offset, False)
    return rl.objects[0] if rl is not None and rl.objects else {}


def _large_line(raw: bytes, lineno: int, offset: int, is_last: bool) -> RawLine | None:
    """A line over `bounded.LARGE_LINE_BYTES`: read within bounded time and memory, what was left
    unread said in a diagnostic. (Glued objects are not looked for in such a line.)"""
    if raw.isspace():
        return None
    size = mb(len(raw))
    data, bad_at = utf8_replaced(raw)
    notes = [f"invalid UTF-8 at byte {bad_at}, read with U+FFFD in its place"] if bad_at >= 0 else []
    try:
        value, cuts = loads_bounded(data)
    except NotJson as e:
        truncated = is_last and not raw.endswith(b"\n")
        what = "truncated JSON" if truncated else "invalid JSON"
        why = "; ".join([*notes, f"{what} ({e})"])
        where = "last line" if truncated else "line"
        problem = "truncated_line" if truncated else "malformed_json"
        diag = Diagnostic(lineno, problem, f"{where} {lineno}: a line of {size}: {why}; skipped", recovered="nothing")
        return RawLine(lineno, offset, len(raw), [], diag, runtime_skips=True)
    except RecursionError:
        return _too_deep_line(raw, lineno, offset)
    if cuts:
        notes.append(describe(cuts))
    if not notes:
        return RawLine(lineno, offset, len(raw), [value])
    problem = "invalid_utf8" if bad_at >= 0 and not cuts else "large_line"
    recovered = "the record, without what was not read" if cuts else "the record, with replacement characters"
    diag = Diagnostic(lineno, problem, f"line {lineno}: a line of {size}: {'; '.join(notes)}", recovered=recovered)
    return RawLine(lineno, offset, len(raw), [value], diag)


# orjson reads at most this many levels of nesting; a deeper line is reported, never recursed into.
MAX_DEPTH = 1024


def recover_line(raw: bytes, lineno: int, offset: int, is_last: bool) -> RawLine | None:
    """A line orjson rejected: blank (None), too deeply nested, invalid UTF-8, glued objects, or
    unreadable."""
    try:
        if not _too_deep(raw):
            return _recover_line(raw, lineno, offset, is_last)
    except RecursionError:
        pass  # Python's json module recurses: a deep line that is also not clean UTF-8
    return _too_deep_line(raw, lineno, offset)


def _too_deep_line(raw: bytes, lineno: int, offset: int) -> RawLine:
    """A line nested deeper than orjson reads. JSON.parse reads any depth (pi, Claude Code, OpenClaw,
    NextClaw read such a line), so it is read with each value that starts `CUT_DEPTH` levels down in
    place of a placeholder (`cut_deep`): its record is there, and what the runtime reads of it but
    that deep value. A line too big to scan, or not JSON once cut, is skipped."""
    cut = cut_deep(raw) if len(raw) <= CUT_SCAN_BYTES else None
    if cut is not None:
        value, n = cut
        return RawLine(
            lineno,
            offset,
            len(raw),
            [value],
            Diagnostic(
                lineno,
                "too_deep",
                f"line {lineno}: JSON nested deeper than {MAX_DEPTH} levels: read with {n} value{'s' if n != 1 else ''} "
                f"nested deeper than {CUT_DEPTH} levels as a placeholder",
                recovered=f"the record, its values past {CUT_DEPTH} levels as placeholders",
            ),
        )
    return RawLine(
        lineno,
        offset,
        len(raw),
        [],
        Diagnostic(
            lineno,
            "too_deep",
            f"line {lineno}: JSON nested deeper than {MAX_DEPTH} levels; skipped",
            recovered="nothing",
        ),
        runtime_skips=True,
    )


# A too-deep line is read with what starts this many levels down as a placeholder; scanned for its
# structure up to this size (a bigger one is skipped, as before: the scan is a Python loop).
CUT_DEPTH = 128
CUT_SCAN_BYTES = 4_000_000
# A string (passed over whole), or a run of openers or of closers of either kind.
_STRUCTURE = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[{]+|[\]}]+', re.S)


def cut_deep(raw: bytes) -> tuple[Any, int] | None:
    """RAW's JSON value with every list or object that opens `CUT_DEPTH` levels down read as a
    placeholder string, and how many were; None when there is none, or the rest is not JSON."""
    data, _ = utf8_replaced(raw)
    parts: list[bytes] = []
    depth, start, last, cuts = 0, -1, 0, 0
    for m in _STRUCTURE.finditer(data):
        first = m.group()[:1]
        if first == b'"':
            continue
        n = m.end() - m.start()
        if first in b"[{":
            if start < 0 and depth <= CUT_DEPTH < depth + n:
                start = m.start() + (CUT_DEPTH - depth)  # the opener that goes past CUT_DEPTH
            depth += n
            continue
        if start >= 0 and depth - n <= CUT_DEPTH < depth:  # the closer back to CUT_DEPTH
            end = m.start() + (depth - CUT_DEPTH)
            parts += [data[last:start], b'"[a value nested deeper than %d levels: %d bytes not read]"' % (CUT_DEPTH, end - start)]
            last, start, cuts = end, -1, cuts + 1
        depth -= n
    if not cuts:
        return None
    parts.append(data[last:])
    text = b"".join(parts)
    try:
        return orjson.loads(text), cuts
    except orjson.JSONDecodeError:
        try:
            return js_loads(text.decode("utf-8", errors="replace")), cuts
        except (json.JSONDecodeError, RecursionError):
            return None


def _too_deep(raw: bytes) -> bool:
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        return "depth limit" in str(e) or "recursion" in str(e).lower()
    return False


def _recover_line(raw: bytes, lineno: int, offset: int, is_last: bool) -> RawLine | None:
    body = raw.strip()
    if not body:
        return None
    has_nl = raw.endswith(b"\n")
    # Invalid UTF-8: Node (pi) decodes with U+FFFD replacement and parses what is left, so do we.
    bad_at = -1
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        text = body.decode("utf-8", errors="replace")
        bad_at = e.start
    if bad_at >= 0:
        try:
            obj = js_loads(text)
            return RawLine(
                lineno,
                offset,
                len(raw),
                [obj],
                Diagnostic(
                    lineno,
                    "invalid_utf8",
                    f"line {lineno}: invalid UTF-8 at byte {bad_at}; read with U+FFFD in its place",
                    recovered="the record, with replacement characters",
                ),
            )
        except json.JSONDecodeError:
            pass
    values = parse_values(text)
    if values is not None and len(values) == 1:
        # orjson is stricter than JSON.parse (lone surrogates in \u escapes): pi reads it, so do we.
        return RawLine(lineno, offset, len(raw), values, lenient=True)
    glued = values
    if glued is not None:
        kinds = ", ".join(_kind(o) for o in glued)
        return RawLine(
            lineno,
            offset,
            len(raw),
            glued,
            Diagnostic(
                lineno,
                "glued_objects",
                f"line {lineno}: {len(glued)} JSON objects glued together on one line ({kinds})",
                recovered=f"all {len(glued)} objects",
            ),
            runtime_skips=True,
        )
    truncated = is_last and not has_nl
    why = _describe_json_error(text, truncated)
    if bad_at >= 0:
        why = f"invalid UTF-8 at byte {bad_at} and {why}"
    where = "last line" if truncated else "line"
    return RawLine(
        lineno,
        offset,
        len(raw),
        [],
        Diagnostic(
            lineno,
            "truncated_line" if truncated else "malformed_json",
            f"{where} {lineno}: {why}; skipped",
            recovered="nothing",
        ),
        runtime_skips=True,
        leading=None if truncated else _leading_value(text),
    )


def _leading_value(text: str) -> Any:
    """The JSON value `text` begins with (after blanks), None when it does not begin with one."""
    try:
        return js_raw_decode(text, len(text) - len(text.lstrip(" \t\r\n")))[0]
    except (json.JSONDecodeError, RecursionError):
        return None


def describe_as_last_line(rl: RawLine, raw: bytes) -> None:
    """Streaming readers learn a line was the file's last only afterwards: its diagnostic made again
    as reading the whole file makes it (`parse_line` told it is the last line: truncated, with
    whatever else was wrong with it, such as invalid UTF-8). A line that ends with its newline is
    described the same wherever it stands."""
    d = rl.diagnostic
    if d is None or raw.endswith(b"\n"):
        return
    fresh = parse_line(raw, rl.line, rl.offset, True)
    if fresh is not None and fresh.diagnostic is not None:
        d.problem, d.message, d.recovered = fresh.diagnostic.problem, fresh.diagnostic.message, fresh.diagnostic.recovered


class PrefixHasher(threading.Thread):
    """sha256 of a file's first `size` bytes, computed on another core while we parse (hashlib
    releases the GIL on large buffers). Write-back compares it before touching the file."""

    def __init__(self, path: str, size: int) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.size = size
        self.digest: str | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            h = hashlib.sha256()
            left = self.size
            with open(self.path, "rb") as f:
                while left > 0:
                    chunk = f.read(min(left, 1 << 20))
                    if not chunk:
                        break
                    h.update(chunk)
                    left -= len(chunk)
            self.digest = h.hexdigest()
        except BaseException as e:  # pragma: no cover - file vanished mid-read
            self.error = e

    def result(self) -> str:
        if self.is_alive() or self.ident is not None:
            self.join()
        if self.error is not None or self.digest is None:
            raise LoadError(f"{self.path}: cannot read ({self.error})")
        return self.digest


def hash_prefix(path: str, size: int) -> str:
    h = PrefixHasher(path, size)
    h.run()
    return h.result()


def _kind(o: Any) -> str:
    if isinstance(o, dict):
        t = o.get("type")
        if t == "message" and isinstance(o.get("message"), dict):
            return f"message/{escape(str(o['message'].get('role')), 40)}"
        return escape(str(t), 40) if t is not None else "object"
    return type(o).__name__


def iter_objects(lines: list[RawLine]) -> Iterator[tuple[RawLine, Any]]:
    for rl in lines:
        for o in rl.objects:
            yield rl, o
