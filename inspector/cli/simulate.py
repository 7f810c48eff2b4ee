"""`inspector simulate SESSION --policy ...`: replay a session under another compaction policy.

Prints a compact table (baseline = what the session recorded, beside the what-if) and an ASCII
plot of the prompt before each model call; `--json` gives the series (docs/simulate-json.md).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from inspector.cli import args as argtypes
from inspector.formats import LoadError, load, registry

if TYPE_CHECKING:
    from inspector.analysis import simulate as sim

# The simulator is imported by the functions that run it: every command builds this parser.

POLICIES = ("pi", "adk-sliding", "adk-token", "adk-both", "recorded")

EPILOG = """\
examples:
  inspector simulate SESSION.jsonl --policy pi --context-window 128000 --keep-recent-tokens 20000
  inspector simulate session.db --policy adk-token --token-threshold 50000 --event-retention-size 8
  inspector simulate session.json --policy adk-both --compaction-interval 2 --overlap-size 1 \\
      --token-threshold 1200 --event-retention-size 10 --summary-tokens 130
  inspector simulate SESSION --policy recorded --json     the policy the session was recorded with

The summarizer is not called: a simulated summary is --summary-tokens big (or --summary-ratio of
what it summarizes; default: the median of the session's own summaries, else 500 tokens).
"""


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "simulate",
        help="what-if: replay the session under another compaction policy (prompt per call, summarizer calls, "
        "holes, live questions lost)",
        description="Replay the session turn by turn under a compaction policy and show what would have "
        "happened: prompt tokens before each model call, compactions and summarizer calls, holes, live questions "
        "lost, and warnings for configurations the seeds show broken. The session's own record is the baseline.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("session", metavar="SESSION", help="a session file (any format inspector reads)")
    p.add_argument(
        "--policy", choices=POLICIES, required=True, help="pi | adk-sliding | adk-token | adk-both | recorded"
    )
    p.add_argument("--json", action="store_true", help="emit the series as JSON (docs/simulate-json.md)")
    p.add_argument("--format", choices=registry.names(), help="force the input format")
    g = p.add_argument_group("pi")
    g.add_argument(
        "--context-window",
        type=argtypes.tokens,
        metavar="N",
        help="contextWindow (default: the session's, else its model's from the table the repair plan uses, else 200000)",
    )
    g.add_argument(
        "--reserve-tokens", type=argtypes.tokens_or_zero, metavar="N", help="reserveTokens (default: the session's, else 16384)"
    )
    g.add_argument(
        "--keep-recent-tokens",
        type=argtypes.tokens_or_zero,
        metavar="N",
        help="keepRecentTokens (default: the session's, else 20000)",
    )
    a = p.add_argument_group("ADK EventsCompactionConfig")
    a.add_argument(
        "--compaction-interval",
        type=argtypes.positive_count,
        metavar="N",
        help="sliding window: new invocations per summary (default 3)",
    )
    a.add_argument(
        "--overlap-size", type=argtypes.count, metavar="N", help="sliding window: invocations re-covered (default 1)"
    )
    a.add_argument(
        "--token-threshold",
        type=argtypes.tokens_or_zero,
        metavar="N",
        help="token threshold: prompt tokens that trigger (required)",
    )
    a.add_argument(
        "--event-retention-size", type=argtypes.count, metavar="N", help="token threshold: raw events kept (default 5)"
    )
    a.add_argument(
        "--no-progress-gate", action="store_true", help="replay without ADK 2.13's worth-compacting check"
    )
    s = p.add_argument_group("summary size")
    sx = s.add_mutually_exclusive_group()
    sx.add_argument("--summary-tokens", type=argtypes.tokens_or_zero, metavar="N", help="each simulated summary is N tokens")
    sx.add_argument(
        "--summary-ratio", type=argtypes.ratio, metavar="R", help="each simulated summary is R of what it summarizes"
    )


def policy_from_args(
    args: argparse.Namespace, led: object, sess: sim.Session
) -> tuple[sim.Policy | None, str]:
    from inspector.analysis import simulate as sim
    from inspector.analysis.window import ledger_window

    name = args.policy
    if name == "recorded":
        return sim.recorded_policy(led, sess)  # type: ignore[arg-type]
    if name == sim.PiPolicy.name:
        st = sess.settings
        # The window the repair plan and the app use (inspector.analysis.window), else pi's default.
        window = ledger_window(led, args.context_window or None)  # type: ignore[arg-type]
        said = f"contextWindow {window.tokens or sim.PI_CONTEXT_WINDOW:,}: " + (
            window.origin("given with --context-window") if window.tokens else "pi's default; " + window.origin("")
        )
        return (
            sim.PiPolicy(
                window.tokens or sim.PI_CONTEXT_WINDOW,
                args.reserve_tokens
                if args.reserve_tokens is not None
                else st.get("reserve") or sim.PI_RESERVE_TOKENS,
                args.keep_recent_tokens
                if args.keep_recent_tokens is not None
                else st.get("keep_recent") or sim.PI_KEEP_RECENT_TOKENS,
            ),
            said,
        )
    sliding = name in ("adk-sliding", "adk-both")
    token = name in ("adk-token", "adk-both")
    if token and args.token_threshold is None:
        return None, f"--policy {name} needs --token-threshold"
    interval = args.compaction_interval if args.compaction_interval is not None else 3
    if sliding and interval < 1:
        return None, "--compaction-interval must be at least 1"
    return (
        sim.AdkPolicy(
            interval if sliding else None,
            (args.overlap_size if args.overlap_size is not None else 1) if sliding else None,
            args.token_threshold if token else None,
            (args.event_retention_size if args.event_retention_size is not None else 5) if token else None,
            progress_gate=not args.no_progress_gate,
        ),
        "",
    )


def ascii_plot(series: list[tuple[str, str, list[int]]], width: int = 72, height: int = 14) -> list[str]:
    """A plain-text plot of several series (label, mark, y values by call number), same axes."""
    n = max((len(ys) for _, _, ys in series), default=0)
    top = max((max(ys) for _, _, ys in series if ys), default=0)
    if n == 0 or top <= 0:
        return ["(no model calls)"]
    cols = min(width, n)
    grid = [[" "] * cols for _ in range(height)]
    for _, mark, ys in series:
        for c in range(cols):
            # The largest value among the calls this column stands for (peaks stay visible).
            lo, hi = c * n // cols, max(c * n // cols + 1, (c + 1) * n // cols)
            chunk = ys[lo:hi]
            if not chunk:
                continue
            y = max(chunk)
            row = height - 1 - min(height - 1, round(y / top * (height - 1)))
            cell = grid[row][c]
            grid[row][c] = mark if cell in (" ", mark) else "*"
    label_w = len(f"{top:,}")
    lines = []
    for r, row in enumerate(grid):
        val = top * (height - 1 - r) / (height - 1)
        tick = f"{round(val):,}" if r in (0, height // 2, height - 1) else ""
        lines.append(f"{tick:>{label_w}} |{''.join(row)}")
    lines.append(" " * label_w + " +" + "-" * cols)
    lines.append(
        " " * label_w + f"  model call 1 .. {n}" + (f" ({n / cols:.1f} per column)" if n > cols else "")
    )
    legend = "   ".join(f"{mark} {label}" for label, mark, _ in series)
    lines.append(" " * label_w + f"  {legend}   (* both)")
    return lines


def render(s: sim.Simulation) -> str:
    b, w = s.baseline, s.whatif
    out = [
        f"{s.session}  ·  {s.format}  ·  {s.events} events, {s.turns} turns  ·  summary size: {s.summary_size}",
        f"what-if: {w.label} " + " ".join(f"{k}={v}" for k, v in w.policy.items() if v is not None),
        "",
        f"{'':28}{'recorded':>14}{'what-if':>14}",
    ]

    def row(name: str, x: object, y: object) -> None:
        out.append(f"{name:28}{x!s:>14}{y!s:>14}")

    row("model calls", len(b.calls), len(w.calls))
    row("compactions", len(b.compactions), len(w.compactions))
    row("summarizer calls", b.summarizer_calls, w.summarizer_calls)
    row("peak prompt tokens", f"{b.peak:,}", f"{w.peak:,}")
    row("final prompt tokens", f"{b.final:,}", f"{w.final:,}")
    na = "n/a"  # the baseline's coverage is not modelled for this runtime (inspector analyze has it)
    row("holes (events)", len(b.holes) if b.coverage_known else na, len(w.holes))
    row(
        "live questions lost (calls)",
        len(b.live_questions_lost) if b.coverage_known else na,
        len(w.live_questions_lost),
    )
    if w.compactions:
        out.append("")
        out.append("what-if compactions:")
        for i, c in enumerate(w.compactions[:20]):
            seed = f" + seed S{c.seeded_from}" if c.seeded_from is not None else ""
            summ = c.summarized_seqs
            span = f"{summ[0]}..{summ[-1]} ({len(summ)})" if summ else "-"
            out.append(
                f"  S{i:<3} turn {c.turn:<4} {c.trigger}/{c.when:<16} after event {c.after_seq}: summarizes {span}{seed};"
                f" prompt {c.prompt_before:,} -> {c.prompt_after:,}"
            )
        if len(w.compactions) > 20:
            out.append(f"  … {len(w.compactions) - 20} more (--json for all)")
    out.append("")
    out.append("prompt tokens before each model call:")
    out.extend(
        "  " + line
        for line in ascii_plot(
            [
                ("recorded", "o", [c.prompt_tokens for c in b.calls]),
                (f"what-if ({w.label})", "#", [c.prompt_tokens for c in w.calls]),
            ]
        )
    )
    if s.warnings:
        out.append("")
        out.append("warnings:")
        out.extend(f"  ! {x.code}: {x.message}" for x in s.warnings)
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    from inspector.analysis import simulate as sim

    try:
        led = load(args.session, fmt=args.format, fingerprint=False)  # read only: no write-back hash
    except LoadError as e:
        print(f"inspector: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"inspector: {args.session}: {e.strerror or e}", file=sys.stderr)
        return 2
    sess = sim.prepare(led)
    policy, why = policy_from_args(args, led, sess)
    if policy is None:
        print(f"inspector: {args.session}: {why}", file=sys.stderr)
        return 2
    size = sim.SummarySize(args.summary_tokens, args.summary_ratio)
    result = sim.simulate(led, policy, size, session=sess)
    if args.json:
        from inspector.cli.output import emit_json

        obj = sim.simulation_json(result)
        if args.policy == "recorded":
            obj["recorded_policy_inferred_from"] = why
        emit_json(obj)
    else:
        if why:
            print(f"recorded policy: {why}" if args.policy == "recorded" else why)
        print(render(result))
    return 0
