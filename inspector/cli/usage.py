"""`inspector usage [PATH...] [--by day|project|session|model]`: tokens and cost across sessions,
sub-agents rolled up into their parent (issue 18 point 4)."""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import sys
from typing import TYPE_CHECKING

from inspector.cli.output import emit_json, table_console
from inspector.cli.scan import (
    add_common,
    add_paths_argument,
    open_index,
    read_times,
    resolve_paths,
    row_filter,
    scanned_rows,
)

if TYPE_CHECKING:
    from inspector.analysis.usage import PriceTable, UsageGroup

from inspector.analysis import GROUPINGS  # (not from analysis.usage: the price table's pydantic models)

EPILOG = """\
examples:
  inspector usage                                  by session, every default place
  inspector usage --by day --since 30d             the last thirty days, day by day
  inspector usage ~/.claude/projects --by project
  inspector usage DIR --by model --prices my-prices.json --json

Tokens are what each runtime recorded for its requests (de-duplicated where a reply spans several
lines). A sub-agent counts towards its parent session and the parent's project, and is shown apart
(`sub-agents`; --json: `subagent_usage` and `subagent_names`): a Claude Code transcript
(<session>/subagents/agent-*.jsonl), a Codex child rollout (its session_meta names the session that
spawned it), an ADK sub-agent (events another agent of the session authored: SESSION#agent). Cost comes from the price table shipped with inspector
(its source and date are printed) or --prices FILE (the same JSON shape); a model the table does not
price has an unknown cost, never 0. --since/--until select the days the tokens were used on.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "usage",
        help="tokens and cost by day, project, session or model, sub-agents rolled up",
        description="Sum the usage the runtimes recorded across sessions, with their cost.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_paths_argument(p)
    p.add_argument("--by", choices=GROUPINGS, default="session", help="group by day | project | session | model")
    p.add_argument("--prices", metavar="FILE", help="a price table to use instead of the shipped one (JSON)")
    p.add_argument("--json", action="store_true", help="emit the groups as JSON")
    add_common(p)


def _day(secs: float | None) -> str | None:
    return _dt.datetime.fromtimestamp(secs, _dt.UTC).date().isoformat() if secs is not None else None


def run(args: argparse.Namespace) -> int:
    from inspector.analysis.usage import PriceTableError, group_usage, load_prices
    from inspector.store.index import index_key
    from inspector.store.places import subagent_files

    try:
        prices = load_prices(args.prices)
    except PriceTableError as e:
        print(f"inspector: {e}", file=sys.stderr)
        return 2
    problem = read_times(args)
    if problem:
        print(f"inspector usage: {problem}", file=sys.stderr)
        return 2
    paths, problem = resolve_paths(args.paths)
    if problem:
        print(f"inspector: {problem}", file=sys.stderr)
        return 2
    # A session file named on its own brings its sub-agents' transcripts with it.
    paths += [s for p in paths if os.path.isfile(p) for s in subagent_files(p)]
    index = open_index()
    if index is None:
        return 2
    keep = row_filter(argparse.Namespace(**{**vars(args), "since": None, "until": None}))
    with index:
        scope = [index_key(r.path) for r in scanned_rows(index, paths, args) if r.error is None and keep(r)]
        items = index.usage_items(scope)
    since, until = _day(args.since), _day(args.until)
    items = [
        i for i in items
        if (since is None or (i.day is not None and i.day >= since)) and (until is None or (i.day is not None and i.day <= until))
    ]
    groups = group_usage(items, args.by, prices)
    if args.json:
        emit_json(_usage_json(args, groups, prices))
        return 0
    _print_table(args, groups, prices)
    return 0


def _usage_json(args: argparse.Namespace, groups: list[UsageGroup], prices: PriceTable) -> dict[str, object]:
    """`usage --json` (inspector.usage/1)."""
    return {
        "schema": "inspector.usage/1",
        "by": args.by,
        "prices": {"source": prices.source, "date": prices.date, "currency": prices.currency, "file": args.prices},
        "groups": [
            {
                "key": g.key, "sessions": len(g.sessions), "subagents": len(g.subagents),
                "subagent_names": sorted(g.subagents), "requests": g.requests,
                "usage": g.usage.to_dict(), "subagent_usage": g.subagent_usage.to_dict(),
                "cost": g.cost, "cost_known": round(g.cost_known, 6), "unpriced_models": sorted(g.unpriced_models),
            }
            for g in groups
        ],
    }


def _print_table(args: argparse.Namespace, groups: list[UsageGroup], prices: PriceTable) -> None:
    """The usage table, a total row under it, and the price table's name (and unpriced models) on stderr."""
    from rich.table import Table

    from inspector.analysis.usage import UsageGroup, cost_text

    t = Table(expand=True, box=None, header_style="bold", pad_edge=False)
    # Only the columns that say something: one session per session row; sub-agents when there are any.
    cols = ["sessions"] if args.by != "session" else []
    cols += ["sub-agents"] if any(g.subagents for g in groups) else []
    cols += ["requests", "input", "output", "cache read", "cache write"]
    t.add_column(args.by, no_wrap=True, overflow="ellipsis", min_width=12, ratio=1)
    for col in [*cols, "cost"]:
        t.add_column(col, justify="right", no_wrap=True)

    def cells(g: UsageGroup) -> list[str]:
        u = g.usage
        every = {"sessions": f"{len(g.sessions):,}", "sub-agents": f"{len(g.subagents):,}" if g.subagents else "–",
                 "requests": f"{g.requests:,}", "input": short(u.input), "output": short(u.output),
                 "cache read": short(u.cache_read), "cache write": short(u.cache_write)}
        return [every[c] for c in cols] + [cost_text(g, prices.currency)]

    for g in groups:
        t.add_row(g.key if args.by != "session" else os.path.basename(g.key), *cells(g))
    all_ = UsageGroup("total")
    for g in groups:
        all_.usage = all_.usage + g.usage
        all_.requests += g.requests
        all_.cost_known += g.cost_known
        all_.unpriced_models |= g.unpriced_models
        all_.sessions |= g.sessions
        all_.subagents |= g.subagents
    if groups:
        t.add_row("total", *cells(all_), style="bold")
    console = table_console()
    console.print(t)
    note = f"prices: {args.prices or 'inspector/prices.json'} ({prices.date})"
    if all_.unpriced_models:
        note += " · no price for " + ", ".join(sorted(all_.unpriced_models))
    print(note, file=sys.stderr)


def short(n: int) -> str:
    """A token count in a table cell: 950, 12.8k, 3.49M (the JSON has every digit)."""
    if n < 10_000:
        return f"{n:,}"
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


def _home(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if home and home != "/" and path.startswith(home + os.sep) else path
