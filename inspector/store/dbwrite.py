"""Writing a repair into a database store, and taking it back (DESIGN §5, "Writing", for
databases). Generic: the format's `StoreWriter` says what its schema needs; this module opens,
locks, checks, backs up, inserts, verifies, takes back and undoes, for every SQLite store.

The rules, in the order `install` follows them:

1. **Locked.** The store is opened read-write and `BEGIN IMMEDIATE` takes its write lock with no
   busy wait: a store another connection is writing to (the agent running) is refused at once,
   with SQLite's reason. WAL and rollback-journal stores alike.
2. **Known schema.** The writer's `refusal` (a schema version it does not know, a missing table).
3. **Unchanged since analysed.** The writer's `state` digest of the session's rows must equal
   `ledger.store_state`, taken the same way when the session was loaded.
4. **Backed up.** SQLite's online backup API copies the store (read through a second connection
   while the write lock is held, so it is the store as checked) into the data dir,
   `backups/<file name>-<hash of its path>/`, temp file, fsync, rename; a sidecar names the rows
   the write inserts and the session's digests before and after.
5. **Inserted, in one transaction**, then COMMIT. Existing rows are never updated or deleted.
6. **Verified.** The store is re-loaded and re-analysed; if it is not what the plan promised,
   exactly our rows are deleted again in a transaction, only if the session's rows are still
   exactly what the write left (else nothing is touched and the error says so).

`undo` deletes the rows of the newest backup not undone yet, after the same check; if the
session changed since, nothing is deleted and the message says how to restore the backup by hand.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import stat
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from inspector.analysis import analyze
from inspector.analysis.engine import Report
from inspector.compaction.entries import WriteError, check_writable, now_iso
from inspector.formats import LoadError, load, registry, sqlite_files
from inspector.formats.base import Row, StoreWriter
from inspector.formats.jsonl import read_regular
from inspector.ledger.jsontext import dumps, loads
from inspector.ledger.model import Ledger
from inspector.store.files import (
    Step,
    _no_step,
    backup_file_problem,
    discard_backup,
    mode_of,
    os_cause,
    write_atomic,
)

BACKUP_SCHEMA = "inspector-db-backup/1"
# What a store operation may raise: what reading a damaged file does (sqlite_files.ERRORS), any
# other SQLite error, and a value past SQLite's integers (a sequence number one past a damaged row's
# 2**63 - 1).
FAILS: tuple[type[Exception], ...] = (*sqlite_files.ERRORS, sqlite3.Error, OverflowError)
BACKUP_SUFFIX = ".db"


def is_database(path: str) -> bool:
    """Is this file a SQLite database (its first 16 bytes)?"""
    try:
        return sqlite_files.has_magic(path)
    except OSError:
        return False


def store_writer(led: Ledger) -> StoreWriter | None:
    w = registry.get(led.format).writer
    return w.store if w is not None else None


@dataclass(frozen=True, slots=True)
class InsertedRow:
    table: str
    rowid: int


@dataclass(frozen=True, slots=True)
class DbBackup:
    """One backup of a database store, taken just before inspector inserted rows into it."""

    path: str  # the backup database (the store before the write)
    session: str  # absolute path of the store
    created: str
    size: int  # bytes of the backup file
    sha256: str
    selector: str | None  # the session inside the store (FILE#SESSION)
    state_before: str  # the session's row digest before the write
    state_after: str  # and right after it
    rows: list[InsertedRow] = field(default_factory=list)
    entry_id: str | None = None
    what: str = "repair"
    undone: str | None = None

    @property
    def meta_path(self) -> str:
        return self.path + ".json"

    @property
    def change(self) -> str:
        by: dict[str, list[int]] = {}
        for r in self.rows:
            by.setdefault(r.table, []).append(r.rowid)
        parts = [f"{len(ids)} row{'s' if len(ids) != 1 else ''} into {t} (rowid {', '.join(map(str, ids))})" for t, ids in by.items()]
        return "inserted " + "; ".join(parts)


# ---------------------------------------------------------------------------------------- sidecars


def save_meta(b: DbBackup, step: Step, label: str) -> None:
    meta = {"schema": BACKUP_SCHEMA, **asdict(b)}
    write_atomic(Path(b.meta_path), dumps(meta, option=orjson.OPT_INDENT_2) + b"\n", step, label)  # (as writeback's)


_FIELDS = ("session", "created", "size", "sha256", "state_before", "state_after", "what")


def read_sidecar(meta: Path) -> DbBackup | str:
    """The backup a sidecar describes, or why it cannot be trusted."""
    path = str(meta)[: -len(".json")]
    try:
        obj = loads(read_regular(meta))
    except OSError as e:
        return f"the sidecar cannot be read ({os_cause(e)})"
    except orjson.JSONDecodeError as e:
        return f"the sidecar is not valid JSON ({e})"
    if not isinstance(obj, dict) or obj.get("schema") != BACKUP_SCHEMA:
        return f"the sidecar is not an {BACKUP_SCHEMA} record"
    missing = [k for k in (*_FIELDS, "rows") if k not in obj]
    if missing:
        return f"the sidecar has no {missing[0]!r}"
    rows = obj["rows"]
    if not isinstance(rows, list) or not rows or not all(
        isinstance(r, dict) and isinstance(r.get("table"), str) and type(r.get("rowid")) is int for r in rows
    ):
        return "the sidecar's 'rows' do not name the rows inserted"
    why = backup_file_problem(path)
    if why is not None:
        return why
    try:
        return DbBackup(
            path=path,
            **{k: obj[k] for k in _FIELDS},
            selector=obj.get("selector"),
            rows=[InsertedRow(r["table"], r["rowid"]) for r in rows],
            entry_id=obj.get("entry_id"),
            undone=obj.get("undone"),
        )
    except TypeError as e:
        return f"the sidecar does not read ({e})"


def sidecars(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"*{BACKUP_SUFFIX}.json")) if folder.is_dir() else []


def restore_advice(session: str, backup: str) -> str:
    """How to put a store back to a backup by hand (what inspector will not do over newer rows)."""
    return (
        f"to restore the whole store to the backup by hand, stop everything using it, then "
        f"`sqlite3 {session} \".restore {backup}\"` (rows written after the backup are lost)"
    )


# ---------------------------------------------------------------------------------------- transactions


@contextlib.contextmanager
def write_lock(path: str) -> Iterator[sqlite3.Connection]:
    """The store opened read-write inside `BEGIN IMMEDIATE` (no busy wait), rolled back unless
    the block commits; a SQLite error inside it is a WriteError saying so."""
    try:
        con = sqlite3.connect(path, isolation_level=None, timeout=0)
    except FAILS as e:
        raise WriteError(f"{path}: cannot open the database for writing ({e}); nothing written") from e
    try:
        try:
            con.execute("BEGIN IMMEDIATE")
        except FAILS as e:
            if "locked" in str(e) or "busy" in str(e):
                raise WriteError(
                    f"{path}: another connection holds a write lock on it ({e}: is the agent still running?); nothing written"
                ) from e
            raise WriteError(f"{path}: cannot start a write transaction ({e}); nothing written") from e
        try:
            yield con
        except FAILS as e:  # a damaged page met mid-way, a disk that fails: nothing committed
            raise WriteError(f"{path}: the store failed ({e}); its transaction was rolled back, nothing changed") from e
        finally:
            if con.in_transaction:
                with contextlib.suppress(*FAILS):
                    con.execute("ROLLBACK")
    finally:
        con.close()


def _insert(con: sqlite3.Connection, row: Row) -> InsertedRow:
    cols = list(row.values)
    names = ", ".join(map(sqlite_files.quoted, cols))
    cur = con.execute(f"INSERT INTO {sqlite_files.quoted(row.table)} ({names}) VALUES ({', '.join('?' * len(cols))})", [row.values[c] for c in cols])
    assert cur.lastrowid is not None
    return InsertedRow(row.table, cur.lastrowid)


def _delete(con: sqlite3.Connection, rows: list[InsertedRow]) -> None:
    for r in reversed(rows):
        con.execute(f'DELETE FROM "{r.table.replace(chr(34), chr(34) * 2)}" WHERE rowid=?', (r.rowid,))


def _backup_to(path: str, dest: str, step: Step) -> tuple[int, str]:
    """SQLite's online backup of the store into `dest` (temp file, fsync, rename): (bytes, sha256)."""
    tmp = dest + ".tmp"
    try:
        src = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0)
        try:
            dst = sqlite3.connect(tmp)
            try:
                src.backup(dst)
            finally:
                dst.close()
        finally:
            src.close()
        step("backup written")
        with open(tmp, "rb") as f:
            data = f.read()
            os.fsync(f.fileno())
        os.replace(tmp, dest)
    except (*FAILS, OSError) as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise WriteError(f"backup {dest}: cannot write it ({e}); nothing written") from e
    return len(data), hashlib.sha256(data).hexdigest()


def _selector(led: Ledger) -> str:
    assert led.path is not None
    path = os.path.realpath(led.path)
    return f"{path}#{led.session_id}" if led.session_id is not None else path


def _intact(path: str, store: StoreWriter) -> None:
    """Refuse a damaged database: SQLite's own check of every page (`PRAGMA quick_check`). A
    session may read clean from a store whose other pages are damaged, but inserting rows (or
    deleting them again on `undo`) walks b-trees the damage may lie in. Read before the write lock
    is taken (a pass over the whole file: seconds on a big store, which an agent writing to it
    would otherwise wait out, or fail on at its busy timeout)."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0)
        try:
            if store.functions is not None:
                store.functions(con)  # (the check evaluates the schema's CHECKs)
            found = [str(r[0]) for r in con.execute("PRAGMA quick_check(3)").fetchall()]
        finally:
            con.close()
    except FAILS as e:
        raise WriteError(f"{path}: the database cannot be checked ({e}); nothing written") from e
    if found != ["ok"]:
        raise WriteError(
            f"{path}: the database is damaged (SQLite's quick_check: {'; '.join(found)[:300]}); nothing written: "
            "write a repaired copy with --out, or repair the store first (sqlite3 .recover)"
        )


def _checked(con: sqlite3.Connection, path: str, store: StoreWriter, led: Ledger) -> str:
    if store.functions is not None:
        store.functions(con)
    why = store.refusal(con, led)
    if why is not None:
        raise WriteError(f"{path}: {why}")
    if led.store_state is None:
        raise WriteError(f"{path}: the session's rows could not all be read when it was analysed (a damaged store?); nothing written")
    state = store.state(con, led)
    if state != led.store_state:
        raise WriteError(
            f"{path}: the session changed since it was analysed (its rows differ: is the agent still running?); "
            "nothing written: analyse it again"
        )
    return state


# ---------------------------------------------------------------------------------------- install


def install(
    report: Report,
    entry: dict[str, Any],
    lines: list[dict[str, Any]],
    what: str,
    expect: Callable[[Report], list[str]] | None,
    step: Step,
    backup_dir: Callable[[str], Path],
) -> tuple[DbBackup, Report]:
    """Insert the writer's rows for `lines` into the store `report` was made from, under the rules
    above: (the backup, the store re-loaded and re-analysed). Raises WriteError (nothing written)
    or VerifyError (written, found wrong, taken back)."""
    from inspector.store.writeback import VerifyError, mark_undone

    led = report.ledger
    assert led.path is not None
    store = store_writer(led)
    assert store is not None
    check_writable(led)
    path = os.path.realpath(led.path)
    step("start")
    step("checking")  # (`_intact`: a pass over the whole file, seconds on a big store)
    _intact(path, store)
    with write_lock(path) as con:
        step("locked")
        before = _checked(con, path, store, led)
        rows = store.rows(entry, lines, led, con)
        d = backup_dir(path)
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise WriteError(f"backup folder {d}: cannot create it ({os_cause(e)}); nothing written") from e
        stamp = now_iso().replace(":", "").replace("-", "")
        dest = str(d / f"{stamp}-{entry.get('id') or 'record'}{BACKUP_SUFFIX}")
        size, sha = _backup_to(path, dest, step)
        backup = DbBackup(dest, path, now_iso(), size, sha, led.session_id, before, "", [], entry.get("id"), what)
        try:
            backup = _inserted(con, path, store, led, rows, backup, step)
        except WriteError:
            discard_backup(dest, dest + ".json")  # rolled back: nothing was written
            raise
        step("inserted")
    problem, new_report = _verify(led, entry, report, expect)
    if problem is not None:
        _take_back(path, store, led, backup, problem)
        mark_undone(backup, step)
        step("taken back")
        raise VerifyError(
            f"{path}: the written session is not what the plan promised ({problem}); its rows were deleted "
            f"again, the store is as before (backup: {backup.path})"
        )
    step("verified")
    assert new_report is not None
    return backup, new_report


def _inserted(
    con: sqlite3.Connection, path: str, store: StoreWriter, led: Ledger, rows: list[Row], backup: DbBackup, step: Step
) -> DbBackup:
    """Insert the rows, name them in the backup's sidecar, commit: the backup as saved. Raises
    WriteError when the store refuses any of it (nothing committed: the lock's block rolls back)."""
    try:
        inserted = [_insert(con, r) for r in rows]
        backup = replace(backup, state_after=store.state(con, led), rows=inserted)
    except FAILS as e:
        raise WriteError(f"{path}: the store refused the rows ({e}); nothing written (rolled back)") from e
    save_meta(backup, step, "backup sidecar")  # names the rows before they are committed
    step("backed up")
    try:
        con.execute("COMMIT")
    except FAILS as e:
        raise WriteError(f"{path}: the store did not commit the rows ({e}); nothing written (rolled back)") from e
    return backup


def _verify(
    led: Ledger, entry: dict[str, Any], report: Report, expect: Callable[[Report], list[str]] | None
) -> tuple[str | None, Report | None]:
    try:
        new = load(_selector(led), fmt=led.format)
    except LoadError as e:
        return f"it does not read back: {e}", None
    rep = analyze(new, window=report.window, reserve=report.reserve)
    new_id = entry.get("id")
    last = rep.checkpoints[-1].record.id if rep.checkpoints else None
    if new_id is not None and last != new_id:
        return f"the new checkpoint {new_id} is not the latest on the active path", rep
    issues = expect(rep) if expect is not None else []
    return ("; ".join(issues) if issues else None), rep


def _take_back(path: str, store: StoreWriter, led: Ledger, b: DbBackup, problem: str) -> None:
    why = _delete_ours(path, store, led, b)
    if why is not None:
        raise WriteError(
            f"{path}: the written session is not what the plan promised ({problem}), and its rows could not be "
            f"deleted again: {why}; they were left in place and nothing else was touched ({restore_advice(path, b.path)})"
        )


def _delete_ours(path: str, store: StoreWriter, led: Ledger, b: DbBackup) -> str | None:
    """Delete exactly the backup's rows, when the session's rows are exactly what the write left;
    None when done, else why not (nothing deleted)."""
    with write_lock(path) as con:
        now = store.state(con, led)
        if now != b.state_after:
            return "the session changed since inspector wrote to it (is the agent still running?)"
        _delete(con, b.rows)
        if store.state(con, led) != b.state_before:
            return "deleting its rows would not give back the session as it was"
        con.execute("COMMIT")
    return None


# ---------------------------------------------------------------------------------------- undo


def undo(b: DbBackup, step: Step = _no_step) -> DbBackup:
    """Delete the rows the backup's write inserted (the store otherwise untouched); refused unless
    the session is exactly what that write left."""
    from inspector.store.writeback import mark_undone, never_landed

    path = b.session
    try:
        led = load(f"{path}#{b.selector}" if b.selector is not None else path)
    except LoadError as e:
        raise WriteError(f"{path}: cannot read the store ({e}); nothing restored") from e
    store = store_writer(led)
    if store is None:
        raise WriteError(f"{path}: {led.format} stores are not written by this tool; nothing restored")
    with write_lock(path) as con:
        step("locked")
        now = store.state(con, led)
    if now == b.state_before:
        raise WriteError(never_landed(path, b, mark_undone(b, step)))
    try:
        why = _delete_ours(path, store, led, b)
    except WriteError as e:  # the store failed mid-way (a damaged page): rolled back
        raise WriteError(f"{e}; nothing restored; {restore_advice(path, b.path)}") from e
    if why is not None:
        raise WriteError(f"{path} changed since it was written by inspector ({b.created}): {why}; nothing restored; {restore_advice(path, b.path)}")
    step("deleted")
    done = replace(b, undone=now_iso())
    try:
        save_meta(done, step, "backup sidecar")
    except WriteError as e:
        raise WriteError(f"{path}: its rows were deleted, but the backup could not be marked undone ({e})") from e
    return done


# ---------------------------------------------------------------------------------------- --out


def write_copy(led: Ledger, entry: dict[str, Any], lines: list[dict[str, Any]], out: str) -> int:
    """A copy of the store (online backup) with the rows inserted, written to `out` atomically."""
    assert led.path is not None
    store = store_writer(led)
    assert store is not None
    path = os.path.realpath(led.path)
    tmp = out + ".inspector-tmp"
    with write_lock(path) as con:  # nobody writes while the copy is taken
        _checked(con, path, store, led)
        _backup_to(path, tmp, _no_step)
    mode = mode_of(path)  # (a copy of the store is as private as the store: writable by its owner until done)
    try:
        os.chmod(tmp, mode | stat.S_IWUSR)
        cp = sqlite3.connect(tmp, isolation_level=None)
        try:
            cp.execute("BEGIN IMMEDIATE")
            for r in store.rows(entry, lines, led, cp):
                _insert(cp, r)
            cp.execute("COMMIT")
        finally:
            cp.close()
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, out)
    except (*FAILS, OSError) as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise WriteError(f"--out {out}: cannot write the copy ({e})") from e
    return os.path.getsize(out)
