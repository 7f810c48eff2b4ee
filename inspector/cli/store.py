"""`inspector backups` and `inspector undo`: the store's backups from the command line."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import asdict

from rich.console import Console
from rich.text import Text

from inspector.cli.output import emit_json
from inspector.compaction.entries import WriteError
from inspector.store.files import os_cause
from inspector.store.writeback import Backup, backup_dir, list_backups, undo


def backups_text(session: str, backups: list[Backup]) -> Text:
    """One block per backup, oldest first (paths are long: they get a line of their own)."""
    t = Text(f"Backups of {session} (oldest first)\n", style="bold")
    for k, b in enumerate(backups, 1):
        t.append(f"{k:>3}. {b.created}  {b.what}  record {b.entry_id or '—'}  ")
        t.append(f"undone {b.undone}" if b.undone else "applied", style="dim" if b.undone else "green")
        t.append(f"\n     {b.size:,} → {b.written_size:,} bytes\n     {b.path}\n")
    return t


def run(args: argparse.Namespace) -> int:
    session = args.session
    if not os.path.isfile(session):
        print(f"inspector: {session}: no such file", file=sys.stderr)
        return 2
    if args.command == "backups":
        found = list_backups(session)
        if args.json:
            emit_json({"session": os.path.abspath(session), "folder": str(backup_dir(session)),
                   "backups": [asdict(b) for b in found]})
            return 0
        if not found:
            Console().print(f"No backups of {session} (inspector has not written to it). They would be in {backup_dir(session)}.")
            return 0
        Console().print(backups_text(session, found), soft_wrap=True)
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
        emit_json({"session": done.session, "restored": asdict(done)})
    else:
        Console().print(
            Text(f"Restored {done.session} to the backup of {done.created} ({done.size:,} bytes; the record "
                 f"{done.entry_id} is gone). The backup stays at {done.path}.", style="green")
        )
    return 0
