"""`inspector backups --json` and `inspector undo --json`: docs/repair-json.md. Built as plain
dicts by inspector/cli/store.py from the store's backups (their sidecars' fields); these models
state their shape and generate their JSON Schemas."""

from __future__ import annotations

from typing import Literal

from inspector.contracts.fields import Closed, Field, schema_key


class FileBackup(Closed):
    """One backup of a session file, taken just before inspector appended to it."""

    path: str = Field(description="the backup file (the session's bytes before the write)")
    session: str = Field(description="absolute path of the session file")
    created: str = Field(description="when the write was made, ISO-8601")
    size: int = Field(description="bytes before the write (= the backup's size)")
    sha256: str
    written_size: int = Field(description="bytes the write produced")
    written_sha256: str
    entry_id: str | None = Field(description="the record appended")
    what: str = Field(description="the repair and the checkpoint it installs, e.g. `repair resummarize: carried-summary checkpoint`")
    undone: str | None = Field(description="when the undo that restored it ran, ISO-8601; null while it is applied")


class InsertedRow(Closed):
    table: str
    rowid: int


class StoreBackup(Closed):
    """One backup of a database store (ADK, OpenClaw SQLite), taken just before inspector inserted rows into it."""

    path: str = Field(description="the backup database (the store before the write)")
    session: str = Field(description="absolute path of the store")
    created: str
    size: int = Field(description="bytes of the backup file")
    sha256: str
    selector: str | None = Field(description="the session inside the store (FILE#SESSION)")
    state_before: str = Field(description="the session's row digest before the write")
    state_after: str = Field(description="and right after it")
    rows: list[InsertedRow] = Field(description="the rows the write inserted")
    entry_id: str | None
    what: str
    undone: str | None


class DamagedBackup(Closed):
    backup: str = Field(description="the backup file the sidecar belongs to (it may be missing too)")
    sidecar: str
    problem: str = Field(description="what is wrong with the sidecar")


class BackupsDocument(Closed):
    """`inspector backups SESSION --json`: oldest first."""

    schema_: Literal["inspector.backups/1"] = schema_key("inspector.backups/1")
    session: str = Field(description="the session, absolute")
    folder: str = Field(description="where its backups are kept")
    backups: list[FileBackup | StoreBackup] = Field(
        description="its backups, oldest first: a session file's, or a database store's"
    )
    damaged: list[DamagedBackup] = Field(description="backups whose sidecar does not say what inspector wrote: listed, never used")


class UndoDocument(Closed):
    """`inspector undo SESSION --json`."""

    schema_: Literal["inspector.undo/1"] = schema_key("inspector.undo/1")
    session: str
    restored: FileBackup | StoreBackup = Field(description="the backup restored (a store's: its rows deleted), now marked undone")
