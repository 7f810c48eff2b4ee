"""The `inspector` command line: a thin shell over the core (DESIGN §6-7).

Exit codes: 0 ok; 1 findings at or above `--fail-on`; 2 usage error or unreadable file.
"""

from __future__ import annotations

import argparse
import gc
import sys
import textwrap
from collections.abc import Sequence

from inspector.analysis import analyze
from inspector.analysis.export import analyze_json, context_json
from inspector.analysis.findings import SEVERITY_RANK
from inspector.cli import args as argtypes
from inspector.cli.output import emit_json, lenient_stdio
from inspector.formats import LoadError, load, registry
from inspector.formats.whole_lines import collector_paused, freeze_what_loads

_EXAMPLES = """\
examples:
  inspector SESSION.jsonl                      open the app on one session (timeline, holes, next request)
  inspector DIR                                the triage browser over every session in DIR
  inspector                                    the triage browser over the default places
{places}
  inspector analyze SESSION.jsonl              a report a person reads in ten seconds
  inspector analyze SESSION.jsonl --json       the same, for scripts and CI (docs/report-json.md)
  inspector analyze SESSION.jsonl --fail-on warning
  inspector context SESSION.jsonl [--json]     exactly what the model will receive next
  inspector context SESSION.jsonl --at 120     ... as the session stood when line 120 was written
  inspector analyze .adk/session.db#SESSION    one session of a Google ADK database (default: the
                                               most recent); lines are its events, in order
  inspector plan SESSION.jsonl --strategy resummarize          dry run of a repair
  inspector simulate SESSION --policy adk-token --token-threshold 50000
                                               what-if: replay under another compaction policy
  inspector repair SESSION.jsonl --strategy resummarize --out FIXED.jsonl

coverage states: live (after the latest checkpoint), retained (kept raw by it), summarized
(represented by its summary), excluded (never sent by design), hole (removed and represented
by nothing: amnesia), inactive (another branch of the tree).
"""


def epilog() -> str:
    """The examples, with the default places of every registered format."""
    indent = " " * 47
    places = textwrap.fill(f"({', '.join(registry.places())})", width=110, initial_indent=indent, subsequent_indent=indent)
    return _EXAMPLES.format(places=places)



def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("session", metavar="SESSION", help=f"a session file ({registry.labels()})")
    p.add_argument("--json", action="store_true", help="emit JSON (stable contract, see docs/report-json.md)")
    p.add_argument(
        "--at",
        type=argtypes.line_number,
        metavar="LINE",
        help="read the session as it stood when LINE was the last line written (what did the model see then?)",
    )
    p.add_argument("--format", choices=registry.names(), help="force the input format instead of detecting it from the content")
    p.add_argument("--window", type=argtypes.tokens, metavar="N", help="context window in tokens (when the session does not record it)")
    p.add_argument("--reserve", type=argtypes.tokens, metavar="N", help="tokens reserved for the reply (when the session does not record it)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="inspector",
        description="Inspect the session ledgers of coding agents: what each compaction covered, where "
        "history fell into holes, and what the model will actually receive next.",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _version_flag(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_reading_commands(sub)
    _add_repair_commands(sub)
    from inspector.cli import export as export_cli
    from inspector.cli import scan as scan_cli
    from inspector.cli import search as search_cli
    from inspector.cli import simulate as simulate_cli
    from inspector.cli import usage as usage_cli

    simulate_cli.add_parser(sub)
    from inspector.cli import hook as hook_cli
    from inspector.cli import watch as watch_cli

    for across in (scan_cli, search_cli, usage_cli, export_cli):  # across sessions (issue 18)
        across.add_parser(sub)
    watch_cli.add_parser(sub)
    # Listed for --help; `main` hands `hook` to its own parser (a usage error must not exit 2).
    hook_cli.add_arguments(sub.add_parser("hook", help=hook_cli.HELP, description=hook_cli.DESCRIPTION))
    return parser


def _add_reading_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """`analyze` and `context`: what a session holds and what its runtime sends next."""
    a = sub.add_parser(
        "analyze",
        help="diagnose a session: checkpoints, coverage, holes, orphans, findings",
        description="Diagnose a session: which compactions covered what, which messages fell into holes, "
        "which tool results are orphaned, and what the next request contains.",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(a)
    a.add_argument(
        "--fail-on",
        choices=("error", "warning"),
        help="exit with status 1 when a finding of this severity (or worse) exists",
    )
    c = sub.add_parser(
        "context",
        help="exactly what the model will receive next, item by item with tokens",
        description="List exactly what the runtime will send to the model next, after its send-time rules "
        "(summary wrapper, retained and live messages, dropped errors, synthetic tool results).",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(c)


def _add_repair_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """`plan`, `repair`, `backups` and `undo`: a repair planned, carried out, listed and taken back."""
    pl = sub.add_parser(
        "plan",
        help="dry run of a repair: the requests, the checkpoint and the session after it (calls and writes nothing)",
        description="Plan a repair without calling a summarizer or writing anything: the requests it would make "
        "(range, chunk boundaries, prompt tokens, output budget), the checkpoint it would install (boundary, "
        "represents, retains, shape, size) and the coverage, next request and findings after it.",
        epilog=REPAIR_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(pl)
    _repair_args(pl, repair_flags=False)
    rp = sub.add_parser(
        "repair",
        help="carry a repair out: summarize (or recover), show the checkpoint and before/after; --out writes a copy, "
        "--write the session itself",
        description="Carry a repair out with a summarizer (the offline extractive one by default) and show the "
        "resulting checkpoint and a before/after comparison. Without --out or --write nothing is written. With "
        "--out FILE, write a copy of the session with the checkpoint appended. With --write, append it to the "
        "session file itself: under an exclusive lock, only if the file is still exactly what was analysed, "
        "after a backup (in the user data dir; `inspector backups` lists them), verified by reading it back "
        "(taken back if it is not what the plan promised); `inspector undo` restores the backup. Exit 1 when "
        "the repair failed open (nothing installed), 2 on usage or configuration errors or a refused write.",
        epilog=REPAIR_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(rp)
    _repair_args(rp, repair_flags=True)
    for name, text, desc in (
        ("backups", "list the backups inspector took before writing to a session",
         "List the backups taken before each `repair --write` into this session: when, the bytes before and "
         "after, the record appended, whether it was undone, and where the backup file is."),
        ("undo", "restore a session from the backup taken before inspector's last write to it",
         "Restore the session to the backup taken before inspector's last write into it. Refused when the "
         "file is not exactly what inspector wrote (an agent appended since): nothing is lost either way, "
         "and the backup file is kept."),
    ):
        sp = sub.add_parser(name, help=text, description=desc)
        sp.add_argument("session", metavar="SESSION", help="the session file")
        sp.add_argument("--json", action="store_true", help="emit JSON")


REPAIR_EPILOG = """\
examples:
  inspector plan SESSION.jsonl --strategy resummarize          what a rebuild from source would do
  inspector plan SESSION.jsonl --strategy compact --window 128000 --json
  inspector repair SESSION.jsonl --strategy resummarize --out repaired.jsonl
  inspector repair SESSION.jsonl --strategy recover --out repaired.jsonl
  inspector repair SESSION.jsonl --strategy resummarize --write  into the session itself (backed up first)
  inspector backups SESSION.jsonl                              the backups taken before each write
  inspector undo SESSION.jsonl                                 restore the last one
  inspector repair SESSION.jsonl --strategy compact --provider openai --model gpt-4.1 --progress --out fixed.jsonl

strategies: compact (roll the summary forward from the previous boundary), resummarize (rebuild from
source everything no sound summary represents, in chunks of at most 16 requests), recover (no model
call: the carried summary, a recovery notice and the recent window, verbatim).
"""


def _repair_args(p: argparse.ArgumentParser, *, repair_flags: bool) -> None:
    from inspector.compaction import STRATEGIES

    p.add_argument(
        "--strategy",
        choices=STRATEGIES,
        required=True,
        help="compact | resummarize | recover (see below)",
    )
    p.add_argument("--keep-recent", type=argtypes.tokens, metavar="N", help="tokens of recent messages a checkpoint keeps raw")
    p.add_argument(
        "--request-tokens",
        type=argtypes.tokens,
        metavar="N",
        help="largest prompt of one summarizer request (default: window minus the output budget)",
    )
    if not repair_flags:
        return
    p.add_argument(
        "--provider",
        choices=("extractive", "openai", "anthropic"),
        default="extractive",
        help="summarizer: extractive (offline, default), openai (chat completions), anthropic (messages)",
    )
    p.add_argument("--model", metavar="M", help="summarizer model (openai / anthropic)")
    p.add_argument("--base-url", metavar="URL", help="summarizer endpoint (OpenAI-compatible servers, proxies)")
    p.add_argument("--config", metavar="FILE", help="provider config file (keys come from the environment or this file)")
    p.add_argument("--timeout", type=argtypes.seconds, default=120, metavar="S", help="seconds per summarizer request")
    dest = p.add_mutually_exclusive_group()
    dest.add_argument("--out", metavar="FILE", help="write a copy of the session with the checkpoint appended")
    dest.add_argument(
        "--write",
        action="store_true",
        help="append the checkpoint to the session file itself: locked, refused if the file changed since it was "
        "analysed, backed up first (see `inspector backups`), verified after, undone by `inspector undo`",
    )
    p.add_argument("--progress", action="store_true", help="show request i of N while the summarizer runs")


def version_line() -> str:
    """`inspector --version`: the installed distribution's version (the source tree's when run
    from a checkout that was never installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        v = version("inspector")
    except PackageNotFoundError:  # pragma: no cover - run from an uninstalled checkout
        v = "unknown (not installed)"
    return f"inspector {v}"


class _VersionAction(argparse.Action):
    """argparse's `version` action with the version looked up when asked for (reading the installed
    distribution's metadata was a tenth of the start of every command)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: object, values: object, option_string: str | None = None) -> None:
        parser._print_message(version_line() + "\n", sys.stdout)
        parser.exit()


def _version_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--version", action=_VersionAction, help="print the version and exit")


COMMANDS = (
    "analyze", "context", "plan", "repair", "backups", "undo", "simulate", "scan", "search", "usage", "export",
    "hook", "watch",
)
ACROSS = ("scan", "search", "usage", "export")  # each module's run(args)


def app_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="inspector",
        description="Open the inspector app: the session view for one file, the triage browser for a "
        "directory (or, with no argument, the default places). Commands: "
        + ", ".join(COMMANDS)
        + " (inspector COMMAND --help).",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _version_flag(p)
    p.add_argument("paths", nargs="*", metavar="PATH", help="a session file, or directories of sessions")
    p.add_argument("--at", type=argtypes.line_number, metavar="LINE", help="open the session as it stood when LINE was written")
    p.add_argument("--window", type=argtypes.tokens, metavar="N", help="context window in tokens")
    p.add_argument("--reserve", type=argtypes.tokens, metavar="N", help="tokens reserved for the reply")
    return p


def run_app(argv: Sequence[str]) -> int:
    args = app_parser().parse_args(argv)
    import os

    for p in args.paths:
        if not os.path.exists(p):
            print(f"inspector: {p}: no such file or directory", file=sys.stderr)
            return 2
    if len(args.paths) == 1 and args.at is None:
        from inspector.formats import fork_reader_ahead

        # Before Textual's import and threads: a big session's reading helper starts decoding on
        # the second core now, while the app starts (its load takes the helper over).
        fork_reader_ahead(args.paths[0])
    from inspector.tui.app import create_app, process_started

    launched = process_started()  # the header's "ready in" counts the wait from the user's command
    create_app(args.paths, window=args.window, reserve=args.reserve, at_line=args.at, launched=launched).run()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    lenient_stdio()  # (here, not only in `run`: a program calling `main` prints what a session holds too)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help")):
        return run_app(argv)
    if argv[0] == "hook":
        from inspector.cli import hook as hook_cli

        return hook_cli.run(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command in ("backups", "undo"):
        from inspector.cli import store as store_cli

        return store_cli.run(args)
    if args.command == "simulate":
        from inspector.cli import simulate as simulate_cli

        return simulate_cli.run(args)
    if args.command == "watch":
        from inspector.cli import watch as watch_cli

        return watch_cli.run(args)
    if args.command in ACROSS:
        import importlib

        return int(importlib.import_module(f"inspector.cli.{args.command}").run(args))
    try:
        # Only `repair` writes: the other commands need no hash of the file's bytes.
        ledger = load(args.session, fmt=args.format, upto_line=args.at, fingerprint=args.command == "repair")
        if _ONE_SHOT:
            # One command, one session, then the process exits: what was loaded lives to the end,
            # so the cyclic collector need not walk it again (the app and `watch` never do this,
            # nor a caller of main() in a longer-lived process).
            gc.freeze()
    except LoadError as e:
        print(f"inspector: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"inspector: {args.session}: {e.strerror or e}", file=sys.stderr)
        return 2
    with collector_paused():  # (the analysis makes no cycles either; frozen after, in a one-shot process)
        report = analyze(ledger, window=args.window, reserve=args.reserve)
    if args.command == "analyze":
        if args.json:
            emit_json(analyze_json(report))
        else:
            from inspector.cli.render import print_group, render_analysis

            print_group(render_analysis(report))
        if args.fail_on:
            limit = SEVERITY_RANK[args.fail_on]
            if any(SEVERITY_RANK[f.severity] <= limit for f in report.findings):
                return 1
        return 0
    if args.command in ("plan", "repair"):
        from inspector.cli import repair as repair_cli
        if args.command == "plan":
            return repair_cli.run_plan(args, report)
        return repair_cli.run_repair(args, report)
    if args.command == "context":
        if args.json:
            emit_json(context_json(report))
        else:
            from inspector.cli.render import print_group, render_context

            print_group(render_context(report))
        return 0
    parser.error(f"unknown command {args.command!r}")  # pragma: no cover - argparse rejects it first
    return 2


_ONE_SHOT = False  # set by the console script only (`run`)


def run() -> None:
    global _ONE_SHOT
    _ONE_SHOT = True
    freeze_what_loads()
    try:
        code = main()
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:
        code = 0
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()
