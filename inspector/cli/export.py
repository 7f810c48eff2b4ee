"""`inspector export SESSION --html FILE | --markdown FILE [--redact]` (issue 18 point 5)."""

from __future__ import annotations

import argparse
import sys

from inspector.analysis import analyze
from inspector.cli import args as argtypes
from inspector.formats import LoadError, load, registry

EPILOG = """\
examples:
  inspector export SESSION.jsonl --html report.html            a self-contained page (no network needed)
  inspector export SESSION.jsonl --markdown report.md --redact without any message text

The report holds the header sentence, the coverage band as a picture, the checkpoints with what each
removes, represents and retains, every finding with its records, the next request and the version
of inspector that made it. --redact drops message and summary text and the file's name, keeping
counts, roles, lines, tokens and findings.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "export",
        help="a self-contained HTML or Markdown report of one session, to attach to a bug report",
        description="Write one session's analysis as a report to share: HTML (style and pictures inline) "
        "or Markdown.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("session", metavar="SESSION", help="a session file (any format inspector reads)")
    dest = p.add_mutually_exclusive_group(required=True)
    dest.add_argument("--html", metavar="FILE", help="write an HTML report (- for stdout)")
    dest.add_argument("--markdown", metavar="FILE", help="write a Markdown report (- for stdout)")
    p.add_argument("--redact", action="store_true", help="leave out message and summary text; keep structure and counts")
    p.add_argument("--format", choices=registry.names(), help="force the input format")
    p.add_argument("--window", type=argtypes.tokens, metavar="N", help="context window in tokens")
    p.add_argument("--reserve", type=argtypes.tokens, metavar="N", help="tokens reserved for the reply")


def run(args: argparse.Namespace) -> int:
    from inspector.cli.main import version_line
    from inspector.cli.output import utf8
    from inspector.compaction.entries import WriteError
    from inspector.store.files import check_destination, usual_mode, write_atomic

    target = args.html or args.markdown
    label = "--html" if args.html else "--markdown"
    try:  # before the analysis: a report that cannot be written is told at once
        if target != "-":
            check_destination(target, label)
    except WriteError as e:
        print(f"inspector: {e}", file=sys.stderr)
        return 2
    try:
        led = load(args.session, fmt=args.format, fingerprint=False)  # read only: no write-back hash
    except LoadError as e:
        print(f"inspector: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"inspector: {args.session}: {e.strerror or e}", file=sys.stderr)
        return 2
    report = analyze(led, window=args.window, reserve=args.reserve)
    from inspector.analysis.report_export import html_report, markdown_report

    render = html_report if args.html else markdown_report
    text = render(report, version_line(), redact=args.redact)
    if target == "-":
        sys.stdout.write(text)
        return 0
    try:
        # As every file inspector makes: a regular file or a new name (never through a link, a pipe
        # or a device: `-` writes to stdout), replaced whole or not at all; with the mode any
        # program's new file gets (not a backup's 0600).
        write_atomic(target, utf8(text), label=label, mode=usual_mode(target))
    except WriteError as e:
        print(f"inspector: {e}", file=sys.stderr)
        return 2
    print(f"wrote {target}", file=sys.stderr)
    return 0
