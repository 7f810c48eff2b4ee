"""Reading a SQLite store without changing it (issue 11), for every SQLite adapter: no locks
taken, nothing written beside it (-wal, -shm), every SQLite error a LoadError whose message
escapes what the database holds."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from inspector.formats.jsonl import LoadError, open_regular
from inspector.ledger.model import Diagnostic
from inspector.ledger.quoting import escape

# Every SQLite database file begins with these 16 bytes (sqlite.org/fileformat.html, 1.3.1).
SQLITE_MAGIC = b"SQLite format 3\x00"

# What reading a damaged database raises: SQLite's errors, and UnicodeDecodeError when Python
# cannot decode SQLite's message, which quotes the damaged schema.
ERRORS: tuple[type[Exception], ...] = (sqlite3.DatabaseError, UnicodeDecodeError)

T = TypeVar("T")  # what `schema_look` reads


def quoted(name: str) -> str:
    """A table's or column's name as an SQL identifier (a store's own names, whatever they hold)."""
    return '"' + name.replace('"', '""') + '"'


def has_magic(path: str) -> bool:
    """Does the file begin as a SQLite database does? Raises OSError when it cannot be read."""
    with open_regular(path) as f:  # (a named pipe: refused, never waited on)
        return f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC


def immutable(path: str) -> sqlite3.Connection:
    """The file alone as it is (no -wal read, no lock, no -shm): for a quick look (detection)."""
    con = sqlite3.connect("file:" + urllib.parse.quote(path) + "?mode=ro&immutable=1", uri=True)
    con.text_factory = _lenient_text
    return con


def sort_key(value: Any) -> tuple[int, Any]:
    """A column value as SQLite's ORDER BY ranks it across storage classes: NULL, then numbers
    (integers and reals compared as numbers), then text, then blobs (a damaged store's column may
    hold any of them, which Python does not compare with each other)."""
    if value is None:
        return (0, 0)
    if isinstance(value, int | float):
        return (1, value)
    if isinstance(value, str):
        return (2, value)
    return (3, bytes(value))


def schema_look(path: str, look: Callable[[sqlite3.Connection], T], found: Callable[[T], bool]) -> T | None:
    """What `look` reads of a SQLite file's schema, for detection (never raises; None: no SQLite
    file SQLite can read). Read as `immutable` reads it, the file alone; when that fails, or
    `found` says it is not what was looked for, and a -wal is beside it, as `read_only` reads it,
    the file and its log, as the loader reads them (the tables may lie in the log alone, not yet
    checkpointed while the runtime runs, or the file alone be cut short where its log is not)."""
    try:
        if not has_magic(path):
            return None
        con = immutable(path)
        try:
            seen = look(con)
        finally:
            con.close()
        if found(seen) or not _side_size(path + "-wal"):
            return seen
    except OSError:
        return None
    except ERRORS:
        if not _side_size(path + "-wal"):
            return None
    try:
        with read_only(path, path, []) as con:
            return look(con)
    except (LoadError, OSError, *ERRORS):
        return None


def tables_and_event_columns(path: str) -> tuple[set[str], set[str]] | None:
    """(table names, columns of its `events` table) of a SQLite file (the ADK stores, Python's and
    Go's, are told apart by these), as `schema_look` reads them."""
    return schema_look(path, _tables_and_event_columns, lambda shape: "events" in shape[0])


def _tables_and_event_columns(con: sqlite3.Connection) -> tuple[set[str], set[str]]:
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    cols = {r[1] for r in con.execute("PRAGMA table_info(events)")} if "events" in tables else set()
    return tables, cols


def store_session_ids(path: str, query: str) -> list[str]:
    """The session ids `query` lists in the store at `path` (read as `read_only` reads it);
    [] when it cannot be read: loading the file then says why."""
    try:
        with read_only(path, path, []) as con:
            return [str(r[0]) for r in con.execute(query) if r[0] is not None]
    except (LoadError, *ERRORS):
        return []


@contextlib.contextmanager
def read_only(path: str, name: str, notes: list[Diagnostic]) -> Iterator[sqlite3.Connection]:
    """A connection that reads `path` without changing it, its -wal or its -shm (shared with the
    OpenClaw store). A non-empty -wal holds commits not yet in the file, which an immutable open
    would not see: then the file and its log are copied aside and the copy is read. A -journal
    means a write is under way: said in `notes`. Every SQLite error is a LoadError."""
    with contextlib.ExitStack() as stack:
        target = path
        wal = _side_size(path + "-wal")
        if wal:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="inspector-sqlite-"))
            target = os.path.join(tmp, "copy.db")
            try:
                shutil.copyfile(path, target)
                shutil.copyfile(path + "-wal", target + "-wal")
            except OSError as e:
                raise LoadError(f"{name}: cannot copy the database and its -wal aside to read them ({e.strerror})") from None
            notes.append(
                Diagnostic(
                    0,
                    "sqlite_wal",
                    f"{name}: a write-ahead log of {wal:,} bytes is beside it; read together with the database "
                    "from a private copy (neither is changed)",
                    severity="info",
                )
            )
        if _side_size(path + "-journal"):
            notes.append(
                Diagnostic(
                    0,
                    "sqlite_locked",
                    f"{name}: locked: another process is writing to it (a -journal is beside it); read as it is "
                    "on disk now, which may lack that write",
                )
            )
        uri = "file:" + urllib.parse.quote(target) + ("?mode=ro" if wal else "?mode=ro&immutable=1")
        try:
            con = sqlite3.connect(uri, uri=True)
        except sqlite3.Error as e:
            raise LoadError(f"{name}: cannot open as SQLite ({escape(str(e))})") from None
        stack.callback(con.close)
        con.text_factory = _lenient_text
        try:
            yield con
        except sqlite3.OperationalError as e:
            if "locked" in str(e) or "busy" in str(e):
                raise LoadError(f"{name}: the database is locked by another process ({escape(str(e))}); try again") from None
            raise LoadError(f"{name}: SQLite database could not be read ({escape(str(e))})") from None
        except ERRORS as e:
            raise LoadError(f"{name}: SQLite database could not be read ({escape(str(e))})") from None


# What `read_only` says of the files beside a database: the store's own notes, ahead of every
# other diagnostic of a ledger read from it (then, where the store holds several, which session).
NOTES = frozenset({"sqlite_wal", "sqlite_locked"})


def leading_notes(diags: list[Diagnostic]) -> int:
    """How many of a store's ledger's first diagnostics are about the store, not a row: the
    `read_only` notes, then the session choice (what a follower reads again on each look)."""
    n = 0
    while n < len(diags) and diags[n].problem in NOTES:
        n += 1
    return n + (n < len(diags) and diags[n].problem == "session_choice")


def _side_size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _lenient_text(b: bytes) -> str:
    """TEXT columns (names, ids): invalid UTF-8 read with U+FFFD rather than refusing the file;
    event JSON is read as bytes and its bad bytes reported per row."""
    return b.decode("utf-8", errors="replace")
