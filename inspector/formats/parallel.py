"""A big JSONL file read by two processes (issue 13: no single format's): this one appends every
chunk's records in file order, and a forked helper decodes chunks ahead of it. A format supplies
how a chunk is decoded (`ChunkCodec`); pi's, Claude Code's and Codex's streaming loaders use it."""

from __future__ import annotations

import atexit
import contextlib
import gc
import io
import mmap
import os
import select
import signal
import stat
import struct
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import msgspec

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no helper process
    fcntl = None  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class ChunkCodec:
    """How one format's chunks (bytes `start`..`end` of the file, whole lines) are decoded ahead
    of its loader: `heads` in the helper, into msgpack-encodable items; `records` in the loader
    itself (while it waits for the helper), into what `items` decodes the helper's answer to."""

    heads: Callable[[int, int, int], list[Any]]
    records: Callable[[int, int, int], list[Any]]
    items: msgspec.msgpack.Decoder


def read_range(fd: int, start: int, end: int) -> bytes:
    """Bytes `start`..`end` of the file, read with pread (the file offset is shared with the other
    process); fewer when the file shrank meanwhile."""
    parts = []
    pos = start
    while pos < end:
        b = os.pread(fd, end - pos, pos)
        if not b:
            break  # the file shrank: what was read ends the range
        parts.append(b)
        pos += len(b)
    return parts[0] if len(parts) == 1 else b"".join(parts)


# Files at least this big are read by two processes, a chunk of about CHUNK_BYTES at a time: this
# one appends every chunk's records in file order, and a forked helper decodes chunks ahead of it.
# Whoever is free takes the next free chunk, so a core that is slower or busier simply does less
# (see `Helper`). The helper buys wall time with CPU: its chunks are decoded once there, sent as
# msgpack and decoded again here, so a load with it costs more CPU than one without (a 20 MB pi
# session 87-92 ms against 74-78, 100 MB 420 against 378; issue 15 measures CPU), and on a busy
# machine it buys no wall time either. Only a session this big, whose wait the user would feel,
# is worth it.
PARALLEL_MIN_BYTES = 256 << 20
CHUNK_BYTES = 1 << 20
# Where the helper starts, as a share of the chunks: the loader reads the ones before itself
# meanwhile, then appends the helper's (far cheaper than decoding them).
HELPER_START = 0.15
_DONE = struct.Struct("<iqq")  # the helper's note: chunk index, where its frame is, its length
_FREE, _LOADER, _HELPER = 0, 1, 2


class Helper:
    """A forked process that decodes chunks of the file (`ChunkCodec.heads`) ahead of the loader.

    `owner` (shared memory, one byte per chunk, changed only under a POSIX record lock on the
    helper's answer file, which the kernel drops if the helper dies) says who took each chunk. The
    helper takes the first free chunk from `HELPER_START` on (then from there backwards), writes
    its records into that anonymous in-memory file (so it never blocks on a reader) and a note on
    a pipe; it only reads, decodes and writes. The loader walks the chunks in order: a free one it
    reads itself; one the helper has finished it appends; one still in the helper's hands it does
    not wait for while there is a free chunk further on to decode meanwhile."""

    def __init__(
        self, pid: int, fd: int, out: int, notes: int, owner: mmap.mmap, bounds: list[int], codec: ChunkCodec
    ) -> None:
        self.pid = pid
        self.codec = codec
        self.fd = fd  # the ledger (read with pread: the file offset is shared with this process)
        self.out = out  # the helper's records
        self.notes = notes  # the helper's notes (non-blocking read end)
        self.owner = owner
        self.bounds = bounds  # chunk i is bytes bounds[i]..bounds[i+1]
        self.next = 0  # the next chunk to append
        self.done: dict[int, tuple[int, int]] = {}  # chunks the helper finished: where their records are
        self.ahead: dict[int, list[Any]] = {}  # chunks the loader decoded ahead
        self.ended = False  # the helper exited (its notes pipe is closed)
        self.own_below = len(bounds) - 1  # the loader takes free chunks only below this (tests)
        self.appended = 0  # chunks of the helper's appended
        self.owns_fd = False  # `fd` is the helper's own (forked ahead: `fork_ahead`), closed with it

    def step(self, offset: int) -> int | list[Any] | None:
        """The loader has appended everything before `offset`, the start of the next chunk: where
        that chunk ends if the loader is to read it itself, its records if they are decoded
        already, or None if the helper failed (the loader then reads the rest itself)."""
        i = self.next
        if i >= len(self.bounds) - 1 or offset != self.bounds[i]:
            return None
        while True:
            self._read_notes()
            if i in self.ahead:
                self.next = i + 1
                return self.ahead.pop(i)
            if i in self.done:
                where, length = self.done.pop(i)
                try:
                    items = self.codec.items.decode(os.pread(self.out, length, where))
                except (OSError, msgspec.DecodeError):
                    return None
                self.next = i + 1
                self.appended += 1
                return items
            with _Lock(self.out):
                if self.owner[i] == _FREE and i < self.own_below:
                    self.owner[i] = _LOADER
                    self.next = i + 1
                    return self.bounds[i + 1]
                # The helper has chunk i: decode a free one further on meanwhile.
                ahead = self.owner.find(b"\x00", i + 1, self.own_below)
                if ahead >= 0:
                    self.owner[ahead] = _LOADER
            if ahead >= 0:
                self.ahead[ahead] = self.codec.records(self.fd, self.bounds[ahead], self.bounds[ahead + 1])
            elif self.ended:
                return None  # the helper is gone without finishing chunk i
            else:
                select.select([self.notes], [], [])  # nothing else to do: wait for the helper

    def _read_notes(self) -> None:
        while not self.ended:
            try:
                data = os.read(self.notes, _DONE.size * 256)
            except BlockingIOError:
                return
            if not data:
                self.ended = True
                return
            for i, where, length in _DONE.iter_unpack(data):
                self.done[i] = (where, length)

    def close(self, kill: bool = False) -> bool:
        """Reap the helper (`kill`: its work is not wanted); True when it exited cleanly."""
        if self.pid <= 0:
            return False
        if kill:
            os.kill(self.pid, signal.SIGKILL)
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            status = -1
        self.pid = 0
        return status == 0

    def release(self) -> None:
        for fd in (self.out, self.notes, self.fd if self.owns_fd else -1):
            if fd >= 0:
                os.close(fd)
        self.out = self.notes = -1
        if self.owns_fd:
            self.fd, self.owns_fd = -1, False
        self.owner.close()


class _Lock:
    """An exclusive POSIX record lock on a file, held by this process (not shared with a child)."""

    __slots__ = ("fd",)

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __enter__(self) -> None:
        fcntl.lockf(self.fd, fcntl.LOCK_EX, 0, 0, os.SEEK_SET)

    def __exit__(self, *_: object) -> None:
        fcntl.lockf(self.fd, fcntl.LOCK_UN, 0, 0, os.SEEK_SET)


def _chunk_bounds(fd: int, size: int, chunk: int) -> list[int]:
    """0, the start of the first line at or after each multiple of `chunk`, and `size`."""
    bounds = [0]
    pos = chunk
    while pos < size:
        start = pos
        while pos < size:
            window = os.pread(fd, min(1 << 12, size - pos), pos)
            if not window:
                return [*bounds, size] if bounds[-1] < size else bounds
            i = window.find(b"\n")
            if i >= 0:
                pos += i + 1
                break
            pos += len(window)
        if pos >= size:
            break
        bounds.append(pos)
        pos = max(pos, start) + chunk
    bounds.append(size)
    return bounds


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _single_threaded() -> bool:
    return threading.active_count() == 1


def fork_helper(
    fd: int, size: int, codec: ChunkCodec, min_bytes: int | None = None, chunk: int | None = None
) -> Helper | None:
    """The helper of the file open at `fd` (`size` bytes, as the loader reads it): the one forked
    ahead for it (`fork_ahead`), when the file is as it was then, or a new one (`_fork`)."""
    if _ahead:
        helper = _adopt(fd, size, codec)
        if helper is not None:
            return helper
    return _fork(fd, size, codec, min_bytes, chunk)


@contextlib.contextmanager
def helper_of(f: Any, limit: int, codec: ChunkCodec, upto_line: int | None, min_bytes: int | None = None) -> Iterator[Helper | None]:
    """The helper of a whole read of the buffered file `f` up to `limit` (`fork_helper`), None for
    a read up to a line or of anything else; reaped when the read is done (killed if its work is
    not wanted any more)."""
    helper = None
    if upto_line is None and isinstance(f, io.BufferedReader):
        helper = fork_helper(f.fileno(), limit, codec, min_bytes)
    try:
        yield helper
    finally:
        if helper is not None:
            helper.close(kill=not helper.ended)
            helper.release()


def _fork(fd: int, size: int, codec: ChunkCodec, min_bytes: int | None = None, chunk: int | None = None) -> Helper | None:
    """Fork a helper for a big file, when that can help and is safe: a file of at least
    `min_bytes`, `os.fork`, an in-memory file for its answer and record locks, a second core, and
    no other thread in this process (a forked child gets only the calling thread; locks the
    others held would stay held)."""
    if size < (PARALLEL_MIN_BYTES if min_bytes is None else min_bytes):
        return None
    if fcntl is None or not hasattr(os, "fork") or not hasattr(os, "memfd_create"):
        return None
    if _cores() < 2 or not _single_threaded():
        return None
    bounds = _chunk_bounds(fd, size, CHUNK_BYTES if chunk is None else chunk)
    n = len(bounds) - 1
    if n < 2:
        return None
    try:
        out = os.memfd_create("inspector-pi-helper", os.MFD_CLOEXEC)
    except OSError:
        return None
    notes_r, notes_w = os.pipe()
    owner = mmap.mmap(-1, n)  # shared with the child (MAP_SHARED), all _FREE
    start = min(n - 1, max(1, int(n * HELPER_START)))
    try:
        pid = os.fork()
    except OSError:
        for x in (out, notes_r, notes_w):
            os.close(x)
        owner.close()
        return None
    if pid == 0:  # the helper: read, decode, write, exit; never returns
        code = 1
        try:
            gc.disable()
            os.close(notes_r)
            order = _helpers_order(start, n)
            where = 0
            for i in order:
                with _Lock(out):
                    if owner[i] != _FREE:
                        continue
                    owner[i] = _HELPER
                data = msgspec.msgpack.encode(codec.heads(fd, bounds[i], bounds[i + 1]))
                _pwrite_all(out, data, where)
                os.write(notes_w, _DONE.pack(i, where, len(data)))
                where += len(data)
            code = 0
        except BaseException:
            pass
        finally:
            os._exit(code)
    os.close(notes_w)
    os.set_blocking(notes_r, False)
    return Helper(pid, fd, out, notes_r, owner, bounds, codec)


# Helpers forked ahead of their loads (`fork_ahead`), by the file's (device, inode): each with the
# file's size and modification time at its fork.
_ahead: dict[tuple[int, int], tuple[Helper, tuple[int, int]]] = {}


def fork_ahead(path: str, codec: ChunkCodec, min_bytes: int | None = None) -> bool:
    """Fork the helper of a big file now, for the load of it that comes later (`fork_helper`
    hands it over): the app's, which runs in a worker thread once Textual's threads run, where no
    fork is safe, and so would read the whole file on one core. Forked at the command's start, the
    helper decodes chunks on the second core while the app starts (issue 15.3: the app's analysis
    never slower than the CLI's, which forks its own). False when no helper was forked (a small
    file, no second core, not a regular file, another thread already running). A helper not
    claimed is killed at exit; one whose file changed meanwhile when its load comes."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # (a FIFO: refused below, never waited on)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino)
        helper = None if not stat.S_ISREG(st.st_mode) or key in _ahead else _fork(fd, st.st_size, codec, min_bytes)
    except OSError:
        helper = None
    if helper is None:
        os.close(fd)
        return False
    helper.owns_fd = True
    if not _ahead:
        atexit.register(discard_ahead)
    _ahead[key] = (helper, (st.st_size, st.st_mtime_ns))
    return True


def _adopt(fd: int, size: int, codec: ChunkCodec) -> Helper | None:
    """The helper forked ahead for the file at `fd`, if the file is still the size and age it had
    then (appended or rewritten since: the helper's chunks may not be the file's; it is killed)."""
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    held = _ahead.pop((st.st_dev, st.st_ino), None)
    if held is None:
        return None
    helper, stamp = held
    if helper.codec is codec and st.st_size == size and stamp == (st.st_size, st.st_mtime_ns):
        return helper
    _discard(helper)
    return None


def discard_ahead() -> None:
    """Kill and reap every helper forked ahead and not claimed (at exit, or when the app is done)."""
    while _ahead:
        _discard(_ahead.popitem()[1][0])


def _discard(helper: Helper) -> None:
    helper.close(kill=True)
    helper.release()


def _helpers_order(start: int, n: int) -> list[int]:
    """The chunks the helper tries, in order: from `start` to the end, then back from `start`,
    never chunk 0, which is the loader's own (its first read: a helper forked ahead, `fork_ahead`,
    may have finished all the rest before its load begins)."""
    return [*range(start, n), *range(start - 1, 0, -1)]


def _pwrite_all(fd: int, data: bytes, where: int) -> None:
    view = memoryview(data)
    while view:
        k = os.pwrite(fd, view, where)
        view = view[k:]
        where += k
