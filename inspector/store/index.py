"""The persistent index across sessions (issue 18 point 2, DESIGN §6): one SQLite file in the
user's cache dir that serves `scan`, `search` and `usage`.

A session is keyed on its file's identity: real path, device/inode, size, mtime and a hash of its
head. A file whose identity is unchanged is never read again; any change (a grown session
included) re-reads it in full for now: the incremental analysis of a grown file is the live
issue's. The file is schema-versioned and names its owner; anything else found at its place (a
damaged file, another program's database, an older schema) is moved aside and rebuilt, never
trusted. Several scans may share it at once: WAL journal, a busy timeout, and a lock file around
the check-and-create of the schema.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from inspector.analysis.sessions import ScanRow, SearchDocument, UsageEntry
from inspector.analysis.tokens import cache_dir  # (one cache dir: the token ranks' index is kept there too)
from inspector.analysis.usage import UsageItem
from inspector.formats import split_selector
from inspector.formats.jsonl import open_regular
from inspector.ledger.jsontext import printable
from inspector.ledger.model import Usage

APP_ID = "inspector-index"
SCHEMA_VERSION = 3  # 2: rows carry their findings by code, usage its sub-agent, sessions their id; 3: a forked
# Codex child's usage leaves out its copy of the parent's history (rows an older build stored counted it)
INDEX_FILE = "index.sqlite"
HEAD_BYTES = 4096
BUSY_TIMEOUT_MS = 30_000

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    real_path TEXT NOT NULL UNIQUE,
    dev INTEGER NOT NULL, ino INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    head TEXT NOT NULL,
    session_id TEXT,
    row TEXT NOT NULL,
    indexed_at REAL NOT NULL
);
CREATE INDEX sessions_session_id ON sessions(session_id);
CREATE TABLE usage (
    session INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    day TEXT, model TEXT, agent TEXT,
    input INTEGER NOT NULL, output INTEGER NOT NULL, cache_read INTEGER NOT NULL, cache_write INTEGER NOT NULL,
    requests INTEGER NOT NULL
);
CREATE INDEX usage_session ON usage(session);
CREATE TABLE doc_meta (
    rowid INTEGER PRIMARY KEY,
    session INTEGER NOT NULL, line INTEGER NOT NULL, role TEXT NOT NULL, kind TEXT NOT NULL
);
CREATE INDEX doc_meta_session ON doc_meta(session);
CREATE VIRTUAL TABLE docs USING fts5(text, tokenize = 'unicode61 remove_diacritics 2');
"""


def index_path() -> str:
    return os.path.join(cache_dir(), INDEX_FILE)


@dataclass(slots=True, frozen=True)
class FileIdentity:
    """What says a session file is the one the index read."""

    real_path: str
    dev: int
    ino: int
    size: int
    mtime_ns: int
    head: str  # sha256 of the first HEAD_BYTES (and a database's -wal file's size and mtime)


def _text(value: str | None) -> str | None:
    """A session's text as SQLite can hold it (`jsontext.printable`: a lone surrogate as its escape)."""
    return value if value is None else printable(value)


def index_key(path: str) -> str:
    """What the index files a session under: its file's real path; a session of a
    multi-session store (`FILE#SESSION`) as `REAL_FILE#SESSION`. A name's byte that is not UTF-8
    (which Python keeps as a lone surrogate, and SQLite cannot take) is filed as its escape
    (`jsontext.printable`), as the row shows it."""
    base, session = split_selector(path)
    real = os.path.realpath(base)
    return printable(real if session is None else f"{real}#{session}")


def file_identity(path: str) -> FileIdentity:
    """The identity of the file at `path` now (`FILE#SESSION`: the store file's, filed under
    the session's key). Raises OSError when it cannot be read."""
    base, _session = split_selector(path)
    real = os.path.realpath(base)
    st = os.stat(real)
    h = hashlib.sha256()
    with open_regular(real) as f:  # (a named pipe the walk found: refused, never waited on)
        h.update(f.read(HEAD_BYTES))
    with contextlib.suppress(OSError):  # a SQLite store in WAL mode changes in its -wal file first
        wal = os.stat(real + "-wal")
        h.update(f"wal:{wal.st_size}:{wal.st_mtime_ns}".encode())
    return FileIdentity(index_key(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, h.hexdigest())


class IndexUnavailable(Exception):
    """The index cannot be opened or created at all (an unwritable cache dir)."""


@dataclass(slots=True)
class SearchHit:
    """One place a query matched: the session file, the record's line and role, and a snippet
    of the text around the match (`marks`: the matched spans in it, as offsets)."""

    path: str
    line: int
    role: str
    kind: str  # text | tool | summary
    snippet: str
    marks: list[tuple[int, int]]
    session_id: str | None
    format: str | None


_OPEN, _CLOSE = "\x02", "\x03"


def _marked(snippet: str) -> tuple[str, list[tuple[int, int]]]:
    """The snippet's text without FTS5's match markers, and where the marked spans are."""
    text: list[str] = []
    marks: list[tuple[int, int]] = []
    pos = 0
    start = None
    for ch in " ".join(snippet.split()):
        if ch == _OPEN:
            start = pos
        elif ch == _CLOSE:
            if start is not None:
                marks.append((start, pos))
            start = None
        else:
            text.append(ch)
            pos += 1
    return "".join(text), marks


def match_expression(query: str) -> str:
    """Plain words as an FTS5 expression every word must match: each word quoted (so `-`, `:`
    and other FTS5 syntax in it are literal); a trailing `*` keeps its prefix meaning."""
    terms = []
    for word in query.split():
        prefix = word.endswith("*") and len(word) > 1
        core = word.rstrip("*") if prefix else word
        terms.append('"' + core.replace('"', '""') + '"' + ("*" if prefix else ""))
    return " ".join(terms)


class SessionIndex:
    """An open index. Not shared between threads or processes: each opens its own."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path or index_path()
        self.rebuilt_because: str | None = None  # set when a bad file was found and replaced
        folder = os.path.dirname(self.path) or "."
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as e:
            raise IndexUnavailable(f"{folder}: cannot create the index folder ({e.strerror or e})") from None
        with self._creation_lock():
            self.db = self._open_valid()
        self._pending = 0
        self._last_commit = time.monotonic()

    # ----------------------------------------------------------------------------- opening

    @contextlib.contextmanager
    def _creation_lock(self) -> Iterator[None]:
        try:
            fd = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as e:
            raise IndexUnavailable(f"{self.path}.lock: cannot create ({e.strerror or e})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return db

    def _open_valid(self) -> sqlite3.Connection:
        problem = None
        if os.path.exists(self.path):
            try:
                db = self._connect()
                problem = _why_not_ours(db)
                if problem is None:
                    db.execute("PRAGMA journal_mode = WAL")
                    db.execute("PRAGMA synchronous = NORMAL")
                    db.execute("PRAGMA foreign_keys = ON")
                    return db
                db.close()
            except sqlite3.DatabaseError as e:
                problem = f"not a readable SQLite database ({e})"
            self.rebuilt_because = problem
            self._move_aside()
        try:
            db = self._connect()
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA foreign_keys = ON")
            db.execute("BEGIN IMMEDIATE")
            for stmt in _SCHEMA.strip().split(";\n"):
                if stmt.strip():
                    db.execute(stmt)
            db.executemany(
                "INSERT INTO meta(key, value) VALUES (?, ?)", [("app", APP_ID), ("schema", str(SCHEMA_VERSION))]
            )
            db.execute("COMMIT")
        except sqlite3.Error as e:
            raise IndexUnavailable(f"{self.path}: cannot create the index ({e})") from None
        return db

    def _move_aside(self) -> None:
        """Keep what was found (a user may want to look), out of the way; drop its journal files."""
        aside = f"{self.path}.bad-{int(time.time())}-{os.getpid()}"
        with contextlib.suppress(OSError):
            os.replace(self.path, aside)
        for suffix in ("-wal", "-shm", "-journal"):
            with contextlib.suppress(OSError):
                os.remove(self.path + suffix)

    def close(self) -> None:
        self.commit()
        self.db.close()

    def __enter__(self) -> SessionIndex:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------------------- sessions

    def cached_row(self, ident: FileIdentity) -> ScanRow | None:
        """The stored row of an unchanged file; None when the file is new or changed."""
        got = self.db.execute(
            "SELECT dev, ino, size, mtime_ns, head, row FROM sessions WHERE real_path = ?", (ident.real_path,)
        ).fetchone()
        if got is None or tuple(got[:5]) != (ident.dev, ident.ino, ident.size, ident.mtime_ns, ident.head):
            return None
        try:
            return ScanRow.model_validate_json(got[5])
        except ValueError:
            return None  # a row an older build wrote differently: read the file again

    def path_of_session(self, session_id: str) -> str | None:
        """The file of the session with this id (a parent a child rollout names), when indexed."""
        self.commit()
        got = self.db.execute(
            "SELECT real_path FROM sessions WHERE session_id = ? ORDER BY indexed_at LIMIT 1", (session_id,)
        ).fetchone()
        return got[0] if got else None

    def children_of(self, parent: str) -> list[str]:
        """The sub-agent transcripts the index names `parent` as the parent of, by path."""
        self.commit()
        got = self.db.execute(
            "SELECT json_extract(row, '$.path') FROM sessions WHERE json_extract(row, '$.parent') IN (?, ?)"
            " ORDER BY real_path",
            (parent, index_key(parent)),
        ).fetchall()
        return [g[0] for g in got if g[0]]

    def update_row(self, real_path: str, row: ScanRow) -> None:
        """Replace a stored row (a child's parent found after it was read), the rest as it is."""
        if self._pending == 0:
            self.db.execute("BEGIN IMMEDIATE")
        self.db.execute("UPDATE sessions SET row = ? WHERE real_path = ?", (row.model_dump_json(by_alias=True), real_path))
        self._pending += 1

    def session_id_of(self, real_path: str) -> int | None:
        got = self.db.execute("SELECT id FROM sessions WHERE real_path = ?", (real_path,)).fetchone()
        return got[0] if got else None

    def store(
        self,
        ident: FileIdentity,
        row: ScanRow,
        usage: Sequence[UsageEntry] = (),
        docs: Iterable[SearchDocument] = (),
    ) -> None:
        """Replace what the index holds about this file. Committed in batches (see `commit`)."""
        db = self.db
        if self._pending == 0:
            db.execute("BEGIN IMMEDIATE")
        old = self.session_id_of(ident.real_path)
        if old is not None:
            self._delete(old)
        cur = db.execute(
            "INSERT INTO sessions(real_path, dev, ino, size, mtime_ns, head, session_id, row, indexed_at)"
            " VALUES (?,?,?,?,?,?,?,?,?)",
            (ident.real_path, ident.dev, ident.ino, ident.size, ident.mtime_ns, ident.head, row.session_id,
             row.model_dump_json(by_alias=True), time.time()),
        )
        sid = cur.lastrowid
        db.executemany(
            "INSERT INTO usage(session, day, model, agent, input, output, cache_read, cache_write, requests)"
            " VALUES (?,?,?,?,?,?,?,?,?)",
            [(sid, e.day, _text(e.model), _text(e.agent), e.usage.input, e.usage.output, e.usage.cache_read,
              e.usage.cache_write, e.requests) for e in usage],
        )
        for d in docs:
            rid = db.execute(
                "INSERT INTO doc_meta(session, line, role, kind) VALUES (?,?,?,?)", (sid, d.line, d.role, d.kind)
            ).lastrowid
            db.execute("INSERT INTO docs(rowid, text) VALUES (?, ?)", (rid, printable(d.text)))
        self._pending += 1
        if self._pending >= 200 or time.monotonic() - self._last_commit > 1.0:
            self.commit()

    def _delete(self, sid: int) -> None:
        """Drop one session and what the index holds of it (inside the open batch)."""
        db = self.db
        db.execute("DELETE FROM docs WHERE rowid IN (SELECT rowid FROM doc_meta WHERE session = ?)", (sid,))
        db.execute("DELETE FROM doc_meta WHERE session = ?", (sid,))
        db.execute("DELETE FROM usage WHERE session = ?", (sid,))
        db.execute("DELETE FROM sessions WHERE id = ?", (sid,))

    def forget_gone_sessions(self, store_file: str, present: Iterable[str]) -> int:
        """Drop the rows filed under a file that it no longer gives: a store's sessions deleted
        since it was read (`FILE#SESSION`), its own row when it now holds several sessions, or
        its sessions' rows when it now holds one. `present`: what the file gives now. Returns
        how many rows went."""
        real = index_key(split_selector(store_file)[0])
        keep = {index_key(p) for p in present}
        got = self.db.execute(
            "SELECT id, real_path FROM sessions WHERE real_path = ? OR (real_path > ? AND real_path < ?)",
            (real, real + "#", real + "$"),  # `$` follows `#`: every `REAL#…` key, by the unique index
        ).fetchall()
        gone = [sid for sid, key in got if key not in keep]
        if not gone:
            return 0
        if self._pending == 0:
            self.db.execute("BEGIN IMMEDIATE")
        for sid in gone:
            self._delete(sid)
        self._pending += 1
        return len(gone)

    def commit(self) -> None:
        if self._pending:
            self.db.execute("COMMIT")
            self._pending = 0
        self._last_commit = time.monotonic()

    # ----------------------------------------------------------------------------- queries

    def _scope(self, real_paths: Iterable[str] | None) -> str:
        """A temp table of the sessions a query is limited to; '' when it is not limited."""
        if real_paths is None:
            return ""
        self.commit()
        self.db.execute("CREATE TEMP TABLE IF NOT EXISTS scope(real_path TEXT PRIMARY KEY)")
        self.db.execute("DELETE FROM scope")
        self.db.executemany("INSERT OR IGNORE INTO scope VALUES (?)", ((p,) for p in real_paths))
        return " AND s.real_path IN (SELECT real_path FROM scope)"

    def search(self, match: str, real_paths: Iterable[str] | None = None, limit: int = 50) -> list[SearchHit]:
        """Hits for an FTS5 MATCH expression, best first. Raises sqlite3.OperationalError on a
        malformed expression."""
        where = self._scope(real_paths)
        rows = self.db.execute(
            "SELECT s.row, m.line, m.role, m.kind, snippet(docs, 0, char(2), char(3), '…', 12) FROM docs"
            " JOIN doc_meta m ON m.rowid = docs.rowid JOIN sessions s ON s.id = m.session"
            f" WHERE docs MATCH ?{where} ORDER BY rank LIMIT ?",
            (match, limit),
        ).fetchall()
        out: list[SearchHit] = []
        for row_json, line, role, kind, snip in rows:
            row = ScanRow.model_validate_json(row_json)
            text, marks = _marked(snip)
            out.append(SearchHit(row.path, line, role, kind, text, marks, row.session_id, row.format))
        return out

    def usage_items(self, real_paths: Iterable[str] | None = None) -> list[UsageItem]:
        where = self._scope(real_paths)
        got = self.db.execute(
            "SELECT s.row, u.day, u.model, u.input, u.output, u.cache_read, u.cache_write, u.requests, u.agent"
            f" FROM usage u JOIN sessions s ON s.id = u.session WHERE 1{where}"
        ).fetchall()
        rows_by_json: dict[str, ScanRow] = {}
        out: list[UsageItem] = []
        for row_json, day, model, i, o, cr, cw, n, agent in got:
            row = rows_by_json.get(row_json)
            if row is None:
                row = rows_by_json[row_json] = ScanRow.model_validate_json(row_json)
            out.append(UsageItem(row.path, row.parent, row.project, day, model, Usage(i, o, cr, cw), n, agent))
        return out


def _why_not_ours(db: sqlite3.Connection) -> str | None:
    """None when this database is an index of this schema; else what it is instead."""
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    except sqlite3.DatabaseError as e:
        return f"not a readable SQLite database ({e})"
    if "meta" not in tables:
        return "another program's database (no inspector meta table)"
    try:
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as e:
        return f"an unreadable meta table ({e})"
    if meta.get("app") != APP_ID:
        return f"another program's database (app {meta.get('app')!r})"
    if meta.get("schema") != str(SCHEMA_VERSION):
        return f"index schema {meta.get('schema')!r}, this build writes {SCHEMA_VERSION}"
    missing = {"sessions", "usage", "doc_meta", "docs"} - tables
    if missing:
        return f"an incomplete index (no {', '.join(sorted(missing))})"
    try:
        db.execute("SELECT count(*) FROM sessions").fetchone()
        db.execute("SELECT count(*) FROM docs WHERE docs MATCH 'x'").fetchone()
    except sqlite3.DatabaseError as e:
        return f"a damaged index ({e})"
    return None
