"""`inspector backups` and `inspector undo`: the store's backups from the command line."""

from __future__ import annotations

import argparse
import os
import stat
import sys
from dataclasses import asdict

from rich.console import Console
from rich.text import Text

from inspector.cli.output import emit_json
from inspector.compaction.entries import WriteError
from inspector.store.files import file_kind, os_cause
from inspector.store.writeback import Backup, DamagedBackup, backup_dir, backup_entries, damaged_advice, undo

BACKUPS_SCHEMA = "inspector.backups/1"  # `backups --json` (inspector/contracts/backups.py)
UNDO_SCHEMA = "inspector.undo/1"  # `undo --json`


def backups_text(session: str, entries: list[Backup | DamagedBackup]) -> Text:
    """One block per backup, oldest first (paths are long: they get a line of their own); a
    damaged one says what is wrong with it and what can be done."""
    t = Text(f"Backups of {session} (oldest first)\n", style="bold")
    for k, b in enumerate(entries, 1):
        if isinstance(b, DamagedBackup):
            t.append(f"{k:>3}. ")
            t.append("damaged", style="bold red")
            t.append(f"  {b.problem}\n     sidecar {b.meta_path}\n     {damaged_advice(session, b)}\n")
            continue
        t.append(f"{k:>3}. {b.created}  {b.what}  record {b.entry_id or '—'}  ")
        t.append(f"undone {b.undone}" if b.undone else "applied", style="dim" if b.undone else "green")
        t.append(f"\n     {b.change}\n     {b.path}\n")
    return t


def _not_a_session(session: str) -> str | None:
    try:
        mode = os.stat(session).st_mode
    except FileNotFoundError:
        return "no such file"
    except OSError as e:
        return os_cause(e)
    return None if stat.S_ISREG(mode) else f"{file_kind(mode)}, not a session file"


def run(args: argparse.Namespace) -> int:
    session = args.session
    why = _not_a_session(session)
    if why is not None:
        print(f"inspector: {session}: {why}", file=sys.stderr)
        return 2
    if args.command == "backups":
        entries = backup_entries(session)
        found = [b for b in entries if not isinstance(b, DamagedBackup)]  # a file's and a database store's
        if args.json:
            damaged = [{"backup": b.path, "sidecar": b.meta_path, "problem": b.problem}
                       for b in entries if isinstance(b, DamagedBackup)]
            emit_json({"schema": BACKUPS_SCHEMA, "session": os.path.abspath(session), "folder": str(backup_dir(session)),
                       "backups": [asdict(b) for b in found], "damaged": damaged})
            return 0
        if not entries:
            Console().print(f"No backups of {session} (inspector has not written to it). They would be in {backup_dir(session)}.")
            return 0
        Console().print(backups_text(session, entries), soft_wrap=True)
        return 0
    try:
        done = undo(session)
    except WriteError as e:
        print(f"inspector: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"inspector: {session}: {os_cause(e)}", file=sys.stderr)
        return 2
    if args.json:
        emit_json({"schema": UNDO_SCHEMA, "session": done.session, "restored": asdict(done)})
    elif not isinstance(done, Backup):  # a database store: our rows deleted
        Console().print(Text(f"Restored {done.session}: deleted the rows of the write of {done.created} ({done.change}; "
                             f"the record {done.entry_id} is gone). The backup stays at {done.path}.", style="green"))
    else:
        Console().print(
            Text(f"Restored {done.session} to the backup of {done.created} ({done.size:,} bytes; the record "
                 f"{done.entry_id} is gone). The backup stays at {done.path}.", style="green")
        )
    return 0
