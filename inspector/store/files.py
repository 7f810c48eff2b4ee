"""The file operations every write of the store goes through, and the one guard they share.

A hostile or unusual file system must not turn a write into damage: a destination that is a
device, a named pipe, a folder or a symbolic link is refused before anything is written (the
atomic replace would otherwise put a regular file where the device node or the link was), a
read-only file is not replaced, and an `OSError` becomes a sentence naming the path the user gave
and the cause (missing folder, permission denied, read-only file system, disk full), never the
name of an internal temporary file.

Symbolic links: `--out` refuses a link (replacing it would cut the link, writing through it
would write somewhere the user did not name); a session file given through a link is resolved
(`os.path.realpath`) by the caller, which names the target it wrote into.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from inspector.compaction.entries import WriteError

# Test hook: called with the name of each step of a write (the crash-safety tests kill the process
# there). Never set outside tests.
Step = Callable[[str], None]


def _no_step(name: str) -> None:
    return None


_CAUSES = {
    errno.ENOENT: "no such file or folder",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "disk full (no space left on device)",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large for this file system",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.EISDIR: "it is a folder",
    errno.ELOOP: "too many levels of symbolic links (a loop?)",
    errno.ENAMETOOLONG: "the name is too long",
    errno.EIO: "input/output error (a failing disk or a lost network mount?)",
    errno.ETXTBSY: "the file is busy",
}


def os_cause(e: OSError) -> str:
    """What went wrong, in words (without the file name: the caller names the path it was given)."""
    return _CAUSES.get(e.errno or -1, e.strerror or str(e))


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a symbolic link"),
)


def file_kind(mode: int) -> str:
    """'a regular file', 'a folder', 'a character device', ... for a stat mode."""
    if stat.S_ISREG(mode):
        return "a regular file"
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def backup_file_problem(path: str) -> str | None:
    """Why a sidecar's backup file cannot be what it restores from (None: a regular file is there)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return f"its backup file {path} is missing"
    return None if stat.S_ISREG(mode) else f"its backup file {path} is {file_kind(mode)}, not a regular file"


def _read_only_fs(path: str | Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def why_not_writable(path: str | Path, st: os.stat_result) -> str | None:
    """Why the existing file `path` must not be written (None: it may). A file with no write bit
    is read-only even for root: somebody protected it."""
    if _read_only_fs(path):
        return "is on a read-only file system"
    if not st.st_mode & 0o222:
        return f"is read-only (mode {stat.filemode(st.st_mode)})"
    if not os.access(path, os.W_OK):
        return "is not writable by you (permission denied)"
    return None


def check_destination(path: str | Path, label: str) -> None:
    """Refuse a destination a new file must not replace or cannot be created at: anything but a
    regular writable file or a new name in an existing writable folder. Raises WriteError naming
    `label` and `path` as the caller got them."""
    name = f"{label} {path}"
    if not str(path) or str(path).endswith(os.sep):
        raise WriteError(f"{label} {str(path)!r} names a folder, not a file; nothing written")
    try:
        st: os.stat_result | None = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):  # the folder check below says which part is missing
        st = None
    except OSError as e:
        raise WriteError(f"{name}: cannot look at it ({os_cause(e)}); nothing written") from e
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            raise WriteError(
                f"{name} is a symbolic link to {os.readlink(path)}: inspector does not write through a link (it "
                f"would replace the link, or write where you did not say); name the file itself "
                f"({os.path.realpath(path)}) or a new path; nothing written"
            )
        if not stat.S_ISREG(st.st_mode):
            raise WriteError(f"{name} is {file_kind(st.st_mode)}, not a regular file; nothing written")
        why = why_not_writable(path, st)
        if why is not None:
            raise WriteError(f"{name} {why}; nothing written (make it writable or give another path)")
    folder = Path(path).parent
    try:
        fst = os.stat(folder)
    except FileNotFoundError:
        raise WriteError(f"{name}: the folder {folder} does not exist; nothing written") from None
    except OSError as e:
        raise WriteError(f"{name}: cannot reach the folder {folder} ({os_cause(e)}); nothing written") from e
    if not stat.S_ISDIR(fst.st_mode):
        raise WriteError(f"{name}: {folder} is {file_kind(fst.st_mode)}, not a folder; nothing written")
    if _read_only_fs(folder):
        raise WriteError(f"{name}: the folder {folder} is on a read-only file system; nothing written")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise WriteError(f"{name}: permission denied: cannot create files in the folder {folder}; nothing written")


def fsync_dir(d: str | Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path: str | Path, data: bytes, step: Step = _no_step, label: str = "file", *, mode: int = 0o600) -> None:
    """Create or replace `path` with `data`: temp file in the same folder, fsync, rename, fsync the
    folder. A reader sees the old file or the complete new one, never a part. Refused (WriteError,
    nothing written) where `check_destination` says so, checked again right before the rename.
    The file's `mode`: private (0600) unless said (a report: `usual_mode`; a copy of a session:
    the session's)."""
    path = Path(path)
    check_destination(path, label)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".inspector-", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise WriteError(f"{label} {path}: cannot create a file in {path.parent} ({os_cause(e)}); nothing written") from e
    try:
        if mode != 0o600:  # (mkstemp's)
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            half = len(data) // 2
            f.write(data[:half])
            f.flush()
            step(f"{label}: half written")
            f.write(data[half:])
            f.flush()
            os.fsync(f.fileno())
        step(f"{label}: temp file complete")
        check_destination(path, label)  # it may have become a link or a device meanwhile
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise WriteError(f"{label} {path}: cannot write it ({os_cause(e)}); nothing written") from e
        raise
    fsync_dir(path.parent)


def mode_of(path: str | Path | None) -> int:
    """The permission bits of the file at `path` (0600 when there is none to look at): a copy of a
    session is as private as the session."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode) if path is not None else 0o600
    except OSError:
        return 0o600


def usual_mode(path: str | Path) -> int:
    """The mode a file written at `path` would usually get: the file's there now, or a new file's
    under this process's umask (0666 less it)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0o022)  # (read by setting it: put straight back)
        os.umask(umask)
        return 0o666 & ~umask


def discard_backup(data: str, sidecar: str) -> None:
    """Remove the backup of a write that wrote nothing (refused, or taken back before it landed):
    kept, it would be listed as a write and be the one `undo` restores, which it then refuses
    (the session is not what that write would have left), hiding the earlier writes behind it.
    The sidecar goes first: a backup without one is never listed."""
    for p in (sidecar, data):
        with contextlib.suppress(OSError):
            os.unlink(p)


def check_appendable(path: str) -> None:
    """Refuse a session file that must not be appended to: anything but a writable regular file."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise WriteError(f"{path}: cannot open it for writing ({os_cause(e)}); nothing written") from e
    if not stat.S_ISREG(st.st_mode):
        raise WriteError(f"{path} is {file_kind(st.st_mode)}, not a regular file: only a session file is written; nothing written")
    why = why_not_writable(path, st)
    if why is not None:
        raise WriteError(f"{path} {why}; nothing written (make it writable, or write a copy with --out)")


def open_for_append(path: str) -> int:
    """The (already resolved) session file opened read-write for appending, refused unless it is
    a writable regular file. Never blocks (a named pipe is refused, not waited on) and never
    follows a link (a session swapped for one since it was resolved is refused)."""
    check_appendable(path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        cause = "it is a symbolic link now" if e.errno == errno.ELOOP else os_cause(e)
        raise WriteError(f"{path}: cannot open it for writing ({cause}); nothing written") from e
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):  # swapped between the look and the open
        os.close(fd)
        raise WriteError(f"{path} is {file_kind(mode)}, not a regular file: only a session file is written; nothing written")
    return fd


def read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    pos = 0
    while True:
        b = os.pread(fd, 1 << 20, pos)
        if not b:
            return b"".join(chunks)
        chunks.append(b)
        pos += len(b)
