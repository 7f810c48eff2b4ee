"""Writing a repair into the session file itself, and taking it back (DESIGN §5, "Writing").

The rules, in the order `install` follows them:

1. **Locked.** An exclusive `flock` on the session file for the whole write (a second inspector
   waits for nobody: it is refused at once).
2. **Unchanged since analysed.** The file's bytes are re-read under the lock and must be exactly
   what was analysed (size and sha256); if an agent appended meanwhile nothing is written.
3. **Backed up.** A copy of those bytes goes to the user data dir
   (`$INSPECTOR_DATA_DIR`, else `$XDG_DATA_HOME/inspector`, else `~/.local/share/inspector`),
   under `backups/<file name>-<hash of its path>/`, with a sidecar naming the session, the bytes
   before and the bytes the write will produce. Temp file, fsync, rename: a backup either exists
   complete or not at all. Backups are never deleted by this tool.
4. **Append only, in one write.** The record (preceded by a newline when the last line lacks one)
   is appended with a single `write` on an `O_APPEND` descriptor and fsynced: a process killed at
   any moment leaves the file either as it was or complete. Existing bytes are never rewritten.
5. **Verified.** The file is re-loaded and re-analysed; if it is not what the plan promised (the
   new checkpoint is the latest on the active path, and the caller's own expectations), the
   appended bytes are cut off again (`ftruncate` to the old size) and the error says so.

A database store (the format's `Writer.store`) is written by `inspector.store.dbwrite` instead:
rows inserted in one transaction, with the same guarantees; `install`, `undo` and `backup_entries`
are the one entry point for both, and dispatch on the store. A JSON dump (a store that is one JSON
object, not lines) is never written in place: `--out` writes a repaired copy.

`undo` restores the last backup after the same unchanged check (the file must be exactly what
this tool wrote); as the write was an append, restoring is a truncation to the backup's size.

Both truncations go through `_cut_back`: the whole file must be exactly what the write produced
(size and sha256), and right before the cut the record and one byte past it are read again, so an
appender that ignores the lock never loses a byte to us: if anything follows our record, nothing
is cut. A backup whose sidecar does not read is listed as damaged and blocks `undo` (it cannot say
what its write appended) with a message saying how to restore by hand.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from inspector.analysis import analyze
from inspector.analysis.engine import Report
from inspector.compaction.entries import WriteError, appended_bytes, check_writable, now_iso, record_id
from inspector.formats import LoadError, load, registry
from inspector.formats.jsonl import read_regular
from inspector.ledger.jsontext import dumps, loads
from inspector.store.files import (
    Step,
    _no_step,
    backup_file_problem,
    discard_backup,
    open_for_append,
    os_cause,
    read_all,
    write_atomic,
)

if TYPE_CHECKING:
    from inspector.ledger.model import Ledger
    from inspector.store.dbwrite import DbBackup

BACKUP_SCHEMA = "inspector-backup/1"


class VerifyError(WriteError):
    """The write happened but its result was not what the plan promised; it has been undone."""


# What each kind of built checkpoint is called where a backup names it.
_KIND_WORDS = {"summary": "summary", "recovery": "recovery", "carry": "carried-summary"}


def repair_what(strategy: str, kind: str, origin: str | None = None) -> str:
    """What a backup says it was taken for: the repair and the checkpoint it installs."""
    what = f"repair {strategy}: {_KIND_WORDS.get(kind, kind)} checkpoint"
    return f"{what}, from {origin}" if origin else what


@dataclass(frozen=True, slots=True)
class Backup:
    """One backup of a session, taken just before inspector appended to it."""

    path: str  # the backup file (the session's bytes before the write)
    session: str  # absolute path of the session file
    created: str  # ISO timestamp
    size: int  # bytes before the write (= the backup's size)
    sha256: str
    written_size: int  # bytes the write produced
    written_sha256: str
    entry_id: str | None  # the record appended
    what: str  # e.g. "repair resummarize: carried-summary checkpoint" (repair_what)
    undone: str | None = None  # ISO timestamp of the undo that restored it, if any

    @property
    def meta_path(self) -> str:
        return self.path + ".json"

    @property
    def change(self) -> str:
        return f"{self.size:,} → {self.written_size:,} bytes"


@dataclass(slots=True)
class Installed:
    """A write that landed and verified."""

    path: str
    backup: Backup | DbBackup
    entry_id: str | None
    size_before: int
    size_after: int
    report: Report  # the session as re-loaded and re-analysed after the write
    link: str | None = None  # the name the session was given by, when it is a symbolic link to `path`


@dataclass(frozen=True, slots=True)
class DamagedBackup:
    """A backup whose sidecar does not say what inspector wrote: listed, never used."""

    path: str  # the backup file the sidecar belongs to (it may be missing too)
    problem: str

    @property
    def meta_path(self) -> str:
        return self.path + ".json"


# ---------------------------------------------------------------------------------------- places


def data_dir() -> Path:
    env = os.environ.get("INSPECTOR_DATA_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "share") / "inspector"


def backup_dir(session: str) -> Path:
    """Where a session's backups live: one folder per session path."""
    absolute = os.path.realpath(session)  # one folder per file, whatever link names it
    tag = hashlib.sha256(absolute.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return data_dir() / "backups" / f"{os.path.basename(absolute)}-{tag}"


_STR, _INT, _OPT_STR = (str,), (int,), (str, type(None))
_SIDECAR_FIELDS = {
    "session": _STR, "created": _STR, "size": _INT, "sha256": _STR, "written_size": _INT,
    "written_sha256": _STR, "entry_id": _OPT_STR, "what": _STR, "undone": _OPT_STR,
}


def _read_sidecar(meta: Path) -> Backup | DamagedBackup:
    """The backup a sidecar describes, or why it cannot be trusted. The backup file is the
    sidecar's name without `.json`, wherever the data folder has moved."""
    path = str(meta)[: -len(".json")]

    def damaged(problem: str) -> DamagedBackup:
        return DamagedBackup(path, problem)

    try:
        obj = loads(read_regular(meta))  # (a path's byte that is not UTF-8: its escape, `_save_meta`)
    except OSError as e:
        return damaged(f"the sidecar cannot be read ({os_cause(e)})")
    except orjson.JSONDecodeError as e:
        return damaged(f"the sidecar is not valid JSON ({e})")
    if not isinstance(obj, dict) or obj.get("schema") != BACKUP_SCHEMA:
        return damaged(f"the sidecar is not an {BACKUP_SCHEMA} record")
    for name, types in _SIDECAR_FIELDS.items():
        if name not in obj:
            if name == "undone":
                continue
            return damaged(f"the sidecar has no {name!r}")
        v = obj[name]
        if isinstance(v, bool) or not isinstance(v, types):
            return damaged(f"the sidecar's {name!r} is not a {'whole number' if types is _INT else 'string'}")
    if not 0 <= obj["size"] < obj["written_size"]:
        return damaged(f"the sidecar's sizes make no sense ({obj['size']} → {obj['written_size']} bytes)")
    why = backup_file_problem(path)
    if why is not None:
        return damaged(why)
    return Backup(path=path, **{k: obj.get(k) for k in _SIDECAR_FIELDS})


def backup_entries(session: str) -> list[Backup | DbBackup | DamagedBackup]:
    """Every backup of this session, good or damaged, oldest first (backup files are named by the
    time of the write): a file's (`*.jsonl`) and a database store's (`*.db`, dbwrite). A crash
    while writing a sidecar leaves only a temporary file, ignored."""
    from inspector.store import dbwrite

    d = backup_dir(session)
    if not d.is_dir():
        return []
    found: list[Backup | DbBackup | DamagedBackup] = [_read_sidecar(meta) for meta in d.glob("*.jsonl.json")]
    for meta in dbwrite.sidecars(d):
        b = dbwrite.read_sidecar(meta)
        found.append(b if not isinstance(b, str) else DamagedBackup(str(meta)[: -len(".json")], b))
    return sorted(found, key=lambda b: os.path.basename(b.path))


def list_backups(session: str) -> list[Backup | DbBackup]:
    """The usable backups of this session, oldest first."""
    return [b for b in backup_entries(session) if not isinstance(b, DamagedBackup)]


# ---------------------------------------------------------------------------------------- file ops


@contextlib.contextmanager
def _locked(path: str) -> Iterator[int]:
    """The session file opened for appending, under an exclusive lock held until the block ends."""
    fd = open_for_append(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise WriteError(f"{path}: another process holds a lock on it (another inspector writing?); nothing written") from None
        try:
            yield fd
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _check_unchanged(path: str, data: bytes, size: int, sha256: str | None, since: str) -> None:
    if len(data) != size or (sha256 is not None and hashlib.sha256(data).hexdigest() != sha256):
        grew = " (something appended to it: is the agent still running?)" if len(data) > size else ""
        raise WriteError(
            f"{path} changed since it was {since} ({size:,} → {len(data):,} bytes){grew}; nothing written: "
            "analyse it again"
        )


def _cut_back(fd: int, size: int, written_size: int, written_sha256: str) -> str | None:
    """Truncate the locked session back to `size` bytes (what it held before our write), only
    when the file is exactly what our write produced (`written_size` bytes with that sha256): the
    bytes kept are verified unchanged, and what is cut is our record and nothing else. An appender
    that ignores the lock may write at any moment, so the end of the file is looked at once more
    right before the cut: bytes anyone else appended are never cut. Returns None when done, else
    why not (the file untouched)."""
    now = read_all(fd)
    if len(now) != written_size or hashlib.sha256(now).hexdigest() != written_sha256:
        if len(now) > written_size and hashlib.sha256(memoryview(now)[:written_size]).hexdigest() == written_sha256:
            return "something was appended after inspector's record (is the agent still running?)"
        return f"it is not what inspector wrote ({written_size:,} → {len(now):,} bytes)"
    ours = now[size:]
    del now
    # The last look, adjacent to the cut: one byte more than our record says whether anything follows it.
    if os.pread(fd, len(ours) + 1, size) != ours:
        return "something was appended after inspector's record while it was checked (is the agent still running?)"
    os.ftruncate(fd, size)
    os.fsync(fd)
    return None


def _append(fd: int, path: str, before: bytes, added: bytes) -> None:
    """Append `added` in one write (a loop only for the odd short write) and fsync. If that fails
    (disk full, an I/O error), whatever part of it landed is cut off again."""
    n = 0
    try:
        while n < len(added):
            n += os.write(fd, added[n:])
        os.fsync(fd)
    except OSError as e:
        cause = os_cause(e)
        if n == 0:
            raise WriteError(f"{path}: cannot append the record ({cause}); nothing written, the file is as before") from e
        written = hashlib.sha256(before + added[:n]).hexdigest()
        why = _cut_back(fd, len(before), len(before) + n, written)
        if why is None:
            raise WriteError(f"{path}: cannot append the record ({cause}); the part written was removed again, the file is as before") from e
        raise WriteError(
            f"{path}: cannot append the record ({cause}), and the {n:,} bytes of it written could not be taken back: {why}; "
            "they stay at the end of the file"
        ) from e


def _save_meta(b: Backup, step: Step, label: str) -> None:
    """The sidecar; a session path with a byte that is not UTF-8 (a lone surrogate in Python) is
    written as its escape (`jsontext.dumps`), which `jsontext.loads` reads back as the same path."""
    meta = {"schema": BACKUP_SCHEMA, **asdict(b)}
    write_atomic(Path(b.meta_path), dumps(meta, option=orjson.OPT_INDENT_2) + b"\n", step, label)


# ---------------------------------------------------------------------------------------- install


def check_in_place(led: Ledger) -> None:
    """Refuse a session that is never written in place: a store that is one JSON document (a JSON
    dump) is only ever written as a repaired copy (`--out`). Databases and JSON lines pass."""
    from inspector.store import dbwrite

    w = registry.get(led.format).writer
    if w is None or led.path is None:
        return
    path = os.path.realpath(led.path)
    if w.store is not None and not dbwrite.is_database(path):
        raise WriteError(f"{path} is a JSON dump of the session, never written in place: write a repaired copy with --out FILE")
    if w.store is None and w.copy is not None:
        raise WriteError(f"{path} is one JSON document, never appended to in place: write a repaired copy with --out FILE")


def install(
    report: Report,
    entry: dict[str, Any],
    *,
    lines: list[dict[str, Any]] | None = None,
    what: str = "repair",
    expect: Callable[[Report], list[str]] | None = None,
    step: Step = _no_step,
) -> Installed:
    """Append `entry` to the session `report` was made from, under the rules above. Raises
    WriteError (nothing written) or VerifyError (written, found wrong, taken back)."""
    led = report.ledger
    if led.path is None:
        raise WriteError("the session was not read from a file")
    check_writable(led)
    check_in_place(led)
    path = os.path.realpath(led.path)
    w = registry.get(led.format).writer
    if w is not None and w.store is not None:
        return _install_in_store(report, entry, lines, what, expect, step)
    step("start")
    with _locked(path) as fd:
        step("locked")
        before = read_all(fd)
        _check_unchanged(path, before, led.size, led.sha256, "analysed")
        after = appended_bytes(before, entry, lines)
        added = after[len(before) :]
        d = backup_dir(path)
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise WriteError(f"backup folder {d}: cannot create it ({os_cause(e)}); nothing written") from e
        stamp = now_iso().replace(":", "").replace("-", "")
        name = f"{stamp}-{record_id(entry) or 'record'}.jsonl"
        backup = Backup(
            path=str(d / name),
            session=path,
            created=now_iso(),
            size=len(before),
            sha256=hashlib.sha256(before).hexdigest(),
            written_size=len(after),
            written_sha256=hashlib.sha256(after).hexdigest(),
            entry_id=record_id(entry),
            what=what,
        )
        write_atomic(Path(backup.path), before, step, "backup")
        _save_meta(backup, step, "backup sidecar")
        step("backed up")
        try:
            _append(fd, path, before, added)
        except WriteError:
            with contextlib.suppress(OSError):
                if read_all(fd) == before:  # nothing landed, or what did was cut off again
                    discard_backup(backup.path, backup.meta_path)
            raise
        step("appended")
        problem, new_report = _verify(path, led.format, entry, backup, report, expect)
        if problem is not None:
            _take_back(fd, path, backup, problem)
            mark_undone(backup, step)
            step("taken back")
            raise VerifyError(
                f"{path}: the written session is not what the plan promised ({problem}); the record was removed "
                f"again, the file is as before (backup: {backup.path})"
            )
        step("verified")
    assert new_report is not None
    link = led.path if os.path.abspath(led.path) != path else None
    return Installed(path, backup, record_id(entry), len(before), len(after), new_report, link)


def _install_in_store(
    report: Report,
    entry: dict[str, Any],
    lines: list[dict[str, Any]] | None,
    what: str,
    expect: Callable[[Report], list[str]] | None,
    step: Step,
) -> Installed:
    """A database store's install (inspector.store.dbwrite); a store's JSON dump is a copy only."""
    from inspector.store import dbwrite

    led = report.ledger
    assert led.path is not None
    path = os.path.realpath(led.path)
    size_before = os.path.getsize(path)
    backup, new_report = dbwrite.install(report, entry, lines or [entry], what, expect, step, backup_dir)
    link = led.path if os.path.abspath(led.path) != path else None
    return Installed(path, backup, record_id(entry), size_before, os.path.getsize(path), new_report, link)


def _verify(
    path: str,
    fmt: str,
    entry: dict[str, Any],
    backup: Backup,
    report: Report,
    expect: Callable[[Report], list[str]] | None,
) -> tuple[str | None, Report | None]:
    """(what is wrong or None, the session re-loaded and re-analysed when it reads back). The
    load's own size and sha256 say whether the file is exactly the bytes written."""
    try:
        led = load(path, fmt=fmt)
    except LoadError as e:
        return f"it does not read back: {e}", None
    if led.size != backup.written_size or led.sha256 != backup.written_sha256:
        return f"the file holds {led.size:,} bytes, not the {backup.written_size:,} written: it changed while writing", None
    rep = analyze(led, window=report.window, reserve=report.reserve)
    new_id = record_id(entry)
    last = rep.checkpoints[-1].record.id if rep.checkpoints else None
    if new_id is not None and last != new_id:
        return f"the new checkpoint {new_id} is not the latest on the active path", rep
    issues = expect(rep) if expect is not None else []
    return ("; ".join(issues) if issues else None), rep


def _take_back(fd: int, path: str, b: Backup, problem: str) -> None:
    """Remove exactly the bytes this write appended (see `_cut_back`), or say why they stay."""
    why = _cut_back(fd, b.size, b.written_size, b.written_sha256)
    if why is not None:
        raise WriteError(
            f"{path}: the written session is not what the plan promised ({problem}), and the record could not be "
            f"taken back: {why}; the appended record was left in place and nothing else was touched (the backup "
            f"{b.path} holds the bytes before it; `inspector undo` once nothing else writes to it)"
        )


# ---------------------------------------------------------------------------------------- undo


def mark_undone(b: Backup | DbBackup, step: Step = _no_step) -> bool:
    """Record in its sidecar that a write is no longer in the session (undone, taken back, or
    never landed), so that `undo` passes over it to the write before; False when the sidecar
    could not be rewritten."""
    from inspector.store import dbwrite

    save = dbwrite.save_meta if isinstance(b, dbwrite.DbBackup) else _save_meta
    try:
        save(replace(b, undone=now_iso()), step, "backup sidecar")  # type: ignore[arg-type]
    except WriteError:
        return False
    return True


def never_landed(path: str, b: Backup | DbBackup, marked: bool) -> str:
    """What `undo` says of a newest write that is not in the session (it never landed, or was taken
    back by a version of inspector that left it open)."""
    then = "marked so now: `inspector undo` again takes back the write before it, if any" if marked else "its sidecar could not be marked"
    return f"{path} already matches the backup of {b.created} (that write never landed or was taken back); nothing to undo; {then}"


def damaged_advice(session: str, b: DamagedBackup) -> str:
    """What the user can do about a damaged sidecar: the backup file is the session's bytes before
    that write, so a session that still starts with them is restored by cutting it to their size."""
    from inspector.store import dbwrite

    if b.path.endswith(dbwrite.BACKUP_SUFFIX):
        return dbwrite.restore_advice(session, b.path).capitalize() + "."
    try:
        n = os.path.getsize(b.path)
        fix = (
            f"The backup file holds the {n:,} bytes the session had before that write: if the session still starts "
            f"with them (`cmp -n {n} {b.path} {session}`), `truncate -s {n} {session}` restores it"
        )
    except OSError:
        fix = "Its backup file is gone, so that write cannot be undone from it"
    return f"{fix}; if that write was already undone, move the sidecar aside and undo the one before it."


def _newest_to_undo(path: str) -> Backup | DbBackup:
    """The newest backup not undone yet; refused when there is none, or when the newest is damaged
    (it cannot say whether its write was undone, so an older one must not be restored over it)."""
    open_ = [e for e in backup_entries(path) if isinstance(e, DamagedBackup) or e.undone is None]
    if not open_:
        raise WriteError(f"{path}: no backup to restore (inspector has not written to it, or every write was undone)")
    b = open_[-1]
    if isinstance(b, DamagedBackup):
        raise WriteError(
            f"{path}: the sidecar of its newest backup is damaged ({b.meta_path}: {b.problem}); without it inspector "
            f"cannot tell what that write appended, so nothing was restored. {damaged_advice(path, b)}"
        )
    return b


def undo(session: str, step: Step = _no_step) -> Backup | DbBackup:
    """Restore the session to its newest backup that has not been undone yet. Refused (WriteError)
    unless the file is exactly what inspector wrote after that backup (a database store: unless
    the session's rows are exactly what that write left; then its rows are deleted)."""
    path = os.path.realpath(session)
    b = _newest_to_undo(path)
    if not isinstance(b, Backup):
        from inspector.store import dbwrite

        return dbwrite.undo(b, step)
    try:
        saved = read_regular(b.path)
    except OSError as e:
        raise WriteError(f"{b.path}: cannot read the backup ({os_cause(e)}); nothing restored") from e
    if len(saved) != b.size or hashlib.sha256(saved).hexdigest() != b.sha256:
        raise WriteError(f"{b.path}: the backup is damaged (size or sha256 differ from its sidecar); nothing restored")
    with _locked(path) as fd:
        step("locked")
        why = _cut_back(fd, b.size, b.written_size, b.written_sha256)
        if why is not None:
            now = read_all(fd)
            if len(now) == b.size and hashlib.sha256(now).hexdigest() == b.sha256:
                raise WriteError(never_landed(path, b, mark_undone(b, step)))
            raise WriteError(
                f"{path} changed since it was written by inspector ({b.created}): {why}; nothing written, nothing "
                "restored: the file is left as it is"
            )
        step("truncated")
        done = replace(b, undone=now_iso())
        try:
            _save_meta(done, step, "backup sidecar")
        except WriteError as e:  # the session is restored all the same: say that first
            raise WriteError(
                f"{path} was restored to the backup of {b.created}, but the backup could not be marked undone ({e}); "
                "a second undo will find the file already matching it"
            ) from e
        step("recorded")
    return done
