"""`inspector search QUERY [PATH...]`: full text across sessions, from the index (issue 18 point 3)."""

from __future__ import annotations

import argparse
import sqlite3
import sys

from inspector.cli import args as argtypes
from inspector.cli.output import emit_json
from inspector.cli.scan import (
    add_common,
    add_paths_argument,
    open_index,
    read_times,
    resolve_paths,
    row_filter,
    scanned_rows,
)

EPILOG = """\
examples:
  inspector search "rate limit"                       in every session of the default places
  inspector search compact ~/.pi/agent/sessions --since 7d
  inspector search 'read_file OR edit_file' DIR --fts  an FTS5 expression as written
  inspector search token DIR --json

Searches message text, tool names and checkpoint summaries (SQLite FTS5, in the index `scan` keeps):
every word must appear (prefix: `compa*`). Each hit names the session file, the line and the role.
Exit 0 with hits, 1 without, 2 on a usage error.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "search",
        help="full-text search across sessions: message text, tool names, summaries",
        description="Search every session under PATH (default: the default places) for QUERY, through the "
        "index `inspector scan` keeps (sessions not indexed yet are read first).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("query", metavar="QUERY", help="words that must all appear (see --fts)")
    add_paths_argument(p)
    p.add_argument("--fts", action="store_true", help="QUERY is an SQLite FTS5 expression (AND, OR, NOT, NEAR, \"phrases\")")
    p.add_argument("--limit", type=argtypes.positive_count, default=50, metavar="N", help="at most N hits, best first (default 50)")
    p.add_argument("--json", action="store_true", help="emit the hits as JSON")
    add_common(p)


def run(args: argparse.Namespace) -> int:
    from inspector.store.index import index_key, match_expression

    problem = read_times(args)
    if problem:
        print(f"inspector search: {problem}", file=sys.stderr)
        return 2
    paths, problem = resolve_paths(args.paths)
    if problem:
        print(f"inspector: {problem}", file=sys.stderr)
        return 2
    match = args.query if args.fts else match_expression(args.query)
    if not match:
        print("inspector: search: the query has no word to look for", file=sys.stderr)
        return 2
    index = open_index()
    if index is None:
        return 2
    keep = row_filter(args)
    with index:
        scope = [index_key(r.path) for r in scanned_rows(index, paths, args) if r.error is None and keep(r)]
        try:
            hits = index.search(match, scope, limit=max(1, args.limit))
        except sqlite3.OperationalError as e:
            print(f"inspector: search: {args.query!r} is not a query FTS5 understands ({e})", file=sys.stderr)
            return 2
    if args.json:
        emit_json({
            "schema": "inspector.search/1",
            "query": args.query,
            "hits": [
                {"path": h.path, "line": h.line, "role": h.role, "kind": h.kind, "snippet": h.snippet,
                 "marks": [list(m) for m in h.marks],
                 "session_id": h.session_id, "format": h.format}
                for h in hits
            ],
        })
    else:
        from rich.console import Console
        from rich.text import Text

        console = Console(highlight=False)
        for h in hits:
            snippet = Text(h.snippet)
            for a, b in h.marks:
                snippet.stylize("bold yellow", a, b)
            console.print(Text.assemble((h.path, "bold"), ":", (str(h.line), "cyan"), "  ", (h.role, "magenta"),
                                        f" {h.kind}  ", snippet))
        print(f"{len(hits):,} hits in {len(scope):,} sessions", file=sys.stderr)
    return 0 if hits else 1
