"""`inspector hook claude-code` and `inspector hook pi`: the session check run by the agent runtime
itself, where the compaction happens.

Claude Code (2.1.328) runs a command hook with the event as JSON on stdin (`session_id`,
`transcript_path`, `cwd`, `hook_event_name`, and `source` for SessionStart / `trigger` for
PreCompact) and reads its answer from the exit code and stdout:

- exit 0: success; for SessionStart, stdout JSON is read: `systemMessage` is shown to the user,
  `hookSpecificOutput.additionalContext` (with `hookEventName: "SessionStart"`) is added to what
  the model receives next. For PreCompact, stdout is plain text: Claude Code shows it to the user
  ("PreCompact [command] completed successfully: ...") and appends it to the summarizer's
  instructions ("Additional Instructions:").
- exit 2: a blocking error (for PreCompact: the compaction is not done). Never used here.
- any other code: a non-blocking error; stderr is shown, the agent goes on.

So the answer is: for SessionStart (source `compact` or `resume`) a warning and, for the model,
what was lost and where to read it; for PreCompact a note the user sees and the summarizer is
asked to keep; nothing (exit 0, empty stdout) when the session is sound or the event is another.
Our own trouble (stdin that is not an event, a transcript that cannot be read, a bug) is one line
on stderr and exit 1: reported, never blocking, and never a traceback. A mistyped flag is exit 1
as well (argparse's usage exit 2 would block a compaction).

When Claude Code runs SessionStart with source `compact`, the transcript does not hold the new
boundary yet: Claude Code writes it, and the hooks' output, after the hooks return (seen with the
real CLI, tests/peers/claude_code_hook/). The transcript then shows the session just before the
compaction, so only what no compaction brings back is reported then: holes. Orphans and the
budget are about the request the compaction rebuilds; they are checked at the next `resume`.

pi (0.73.1) has no command hooks: its extensions are TypeScript modules. The one we ship
(inspector/hooks/pi-extension.ts) runs `inspector hook pi --event E --session FILE` at
`session_compact` (emitted after the compaction entry is appended to the file, so everything is
checked then) and `session_start`, and gets one JSON object on stdout (PI_SCHEMA, see
`pi_answer`): what to notify the user (`ctx.ui.notify`) and what to tell the model (a message it
injects at the next `before_agent_start`). The check could not run (a usage error, a session that
cannot be read, a bug): one line on stderr and exit 2; the extension notifies it as an error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, NoReturn

import orjson

from inspector.analysis import Finding, Report, analyze
from inspector.cli import args as argtypes
from inspector.formats import LoadError, claude_code, load, pi
from inspector.ledger.jsontext import dumps_text

# The findings the hook speaks about: history the model lost, tool pairs the request breaks (or the
# runtime mends by removing a result the model then never reads), and a request too large for the
# window.
HOOK_CODES: tuple[str, ...] = ("hole", "orphan_tool_result", "unanswered_tool_call", "dropped_tool_result", "over_budget")
# What stays true however the pending compaction summarizes (see the module docstring).
SURVIVES_COMPACTION: tuple[str, ...] = ("hole",)
# SessionStart sources the check runs for (startup and clear begin with an empty context).
CHECKED_SOURCES = ("compact", "resume")
# pi: the events the extension reports, and the session_start reasons that open a session with a
# history (`new` opens an empty one; `reload` reopens the one already checked).
PI_EVENTS = ("session_compact", "session_start")
PI_CHECKED_REASONS = ("startup", "resume", "fork")
PI_SCHEMA = "inspector.hook.pi/1"
PI_EXTENSION = "hooks/pi-extension.ts"  # in the package
LOST_PROMPTS_SHOWN = 5  # user messages of a hole quoted to the model
PROMPT_CHARS = 200
EXIT_OK = 0
EXIT_NOT_BLOCKING = 1  # Claude Code: a non-blocking error (2 would block a compaction)
EXIT_CANNOT_CHECK = 2  # pi: the check could not run (pi gives exit codes no meaning: the project's rule)
# The exit code of our own trouble, per runtime.
ERROR_EXIT = {"claude-code": EXIT_NOT_BLOCKING, "pi": EXIT_CANNOT_CHECK}


class HookInputError(Exception):
    """The hook could not do its check; the message says why (one line, for stderr)."""


@dataclass(frozen=True, slots=True)
class HookEvent:
    """The fields of a Claude Code hook event the check uses."""

    name: str
    transcript_path: str
    source: str | None = None  # SessionStart: startup | resume | clear | compact
    trigger: str | None = None  # PreCompact: manual | auto


def parse_event(raw: bytes) -> HookEvent:
    """The event Claude Code wrote on stdin, or HookInputError naming what is wrong with it."""
    if not raw.strip():
        raise HookInputError("stdin is empty: Claude Code writes the hook event there as JSON")
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise HookInputError(f"stdin is not JSON ({e})") from None
    if not isinstance(obj, dict):
        raise HookInputError(f"stdin holds a JSON {type(obj).__name__}, not a hook event object")
    name = obj.get("hook_event_name")
    path = obj.get("transcript_path")
    if not isinstance(name, str):
        raise HookInputError("the hook event has no hook_event_name")
    if not isinstance(path, str) or not path:
        raise HookInputError(f"the {name} event has no transcript_path")
    source, trigger = obj.get("source"), obj.get("trigger")
    return HookEvent(
        name,
        path,
        source if isinstance(source, str) else None,
        trigger if isinstance(trigger, str) else None,
    )


def checked(event: HookEvent) -> bool:
    """Whether the event is one the check answers."""
    if event.name == "PreCompact":
        return True
    return event.name == "SessionStart" and event.source in CHECKED_SOURCES


def codes_for(event: HookEvent) -> tuple[str, ...]:
    pending_compaction = event.name == "SessionStart" and event.source == "compact"
    return SURVIVES_COMPACTION if pending_compaction else HOOK_CODES


def losses(report: Report, codes: Sequence[str]) -> list[Finding]:
    """The report's findings the hook speaks about, in the report's order (worst first)."""
    return [f for f in report.findings if f.code in codes]


def lost_prompts(report: Report, findings: Sequence[Finding]) -> list[tuple[int, str]]:
    """(line, first words) of the user messages the holes took, oldest first, a few at most."""
    out: list[tuple[int, str]] = []
    for f in findings:
        if f.code != "hole":
            continue
        for s in f.records:
            rec = report.ledger.records[s]
            if rec.role != "user" or rec.message is None:
                continue
            text = " ".join(rec.message.text().split())
            if text:
                out.append((rec.line, text[:PROMPT_CHARS] + ("…" if len(text) > PROMPT_CHARS else "")))
    out.sort()
    return out[:LOST_PROMPTS_SHOWN]


def warning_text(findings: Sequence[Finding]) -> str:
    """What the user is shown: one clause per finding."""
    parts = [f"{f.code}: {f.message}" for f in findings]
    return "inspector: this session " + ("has " if len(parts) == 1 else f"has {len(parts)} problems: ") + " · ".join(parts)


def model_context(report: Report, findings: Sequence[Finding], transcript: str) -> str:
    """What the model is told: what it no longer has, and where the full record is."""
    lines = ["A check of this session's transcript (inspector) found:"]
    lines += [f"- {f.message}" for f in findings]
    prompts = lost_prompts(report, findings)
    if prompts:
        lines.append("User messages you no longer have (transcript line: first words):")
        lines += [f"- line {line}: {text}" for line, text in prompts]
    if any(f.code == "hole" for f in findings):
        lines.append(
            f"The messages lost are still in the transcript file {transcript} (one JSON object per line; the line "
            "numbers above are its lines, counted from 1). Read them there before relying on what you remember, or "
            "ask the user."
        )
    return "\n".join(lines)


def summarizer_note(report: Report, findings: Sequence[Finding], transcript: str) -> str:
    """PreCompact: shown to the user and appended to the summarizer's instructions."""
    return (
        warning_text(findings)
        + f"\nState in the summary that this history was lost before this compaction and that it can be read in {transcript}."
    )


def answer(event: HookEvent, report: Report) -> str | None:
    """What the hook prints on stdout for this event and report; None: nothing (all is well)."""
    found = losses(report, codes_for(event))
    if not found:
        return None
    if event.name == "PreCompact":
        return summarizer_note(report, found, event.transcript_path)
    out: dict[str, Any] = {
        "systemMessage": warning_text(found),
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": model_context(report, found, event.transcript_path),
        },
    }
    return dumps_text(out)


def session_report(path: str, fmt: str, window: int | None, reserve: int | None) -> Report:
    """The analysis of the session file a hook was given (HookInputError when it cannot be read),
    as the runtime reads it on the start, resume or compaction the hook reports: afresh."""
    try:
        led = load(path, fmt=fmt)
    except LoadError as e:
        raise HookInputError(str(e)) from None
    except OSError as e:
        raise HookInputError(f"{path}: {e.strerror or e}") from None
    return analyze(led, window=window, reserve=reserve, reloaded=True)


def check(event: HookEvent, window: int | None, reserve: int | None) -> str | None:
    """Analyse the event's transcript and answer it (HookInputError when it cannot be read)."""
    return answer(event, session_report(event.transcript_path, claude_code.NAME, window, reserve))


# ------------------------------------------------------------------------------------------ pi


@dataclass(frozen=True, slots=True)
class PiEvent:
    """The pi extension event the check runs for, and the session file it is about."""

    name: str  # session_compact | session_start
    session_path: str
    reason: str | None = None  # session_start: startup | reload | new | resume | fork


def pi_checked(event: PiEvent) -> bool:
    """Whether the check runs for this pi event (session_compact: the entry is in the file)."""
    if event.name == "session_compact":
        return True
    return event.name == "session_start" and event.reason in PI_CHECKED_REASONS


def already_in_request(report: Report, text: str) -> bool:
    """Whether a message of the next request already says exactly this (told at an earlier check)."""
    for item in report.context:
        message = report.ledger.records[item.seq].message if item.seq is not None else None
        if message is not None and message.text().strip() == text:
            return True
    return False


def notify_type(findings: Sequence[Finding]) -> str:
    """pi's notify level for these findings."""
    return "error" if any(f.severity == "error" for f in findings) else "warning"


def pi_answer(event: PiEvent, report: Report | None) -> dict[str, Any]:
    """The JSON object `inspector hook pi` prints (report None: the event is not checked).

    `notify` (with `notify_type`) is for `ctx.ui.notify`, `context` for the message the extension
    injects before the next agent turn; both null when there is nothing to say. `context` is also
    null when the next request already carries that very text (the model was told at an earlier
    check, and the message is still in its request).
    """
    found = losses(report, HOOK_CODES) if report is not None else []
    context = model_context(report, found, event.session_path) if report is not None and found else None
    if context is not None and report is not None and already_in_request(report, context):
        context = None
    return {
        "schema": PI_SCHEMA,
        "event": event.name,
        "reason": event.reason,
        "session": event.session_path,
        "checked": report is not None,
        "findings": [{"code": f.code, "severity": f.severity, "message": f.message} for f in found],
        "notify": warning_text(found) if found else None,
        "notify_type": notify_type(found) if found else None,
        "context": context,
    }


def pi_event(args: argparse.Namespace) -> PiEvent:
    if not args.event or not args.session:
        raise HookInputError("pi needs --event (session_compact or session_start) and --session FILE")
    if args.event == "session_start" and not args.reason:
        raise HookInputError("--event session_start needs --reason (pi's event.reason)")
    return PiEvent(args.event, args.session, args.reason)


def check_pi(event: PiEvent, window: int | None, reserve: int | None) -> str:
    report = session_report(event.session_path, pi.NAME, window, reserve) if pi_checked(event) else None
    return dumps_text(pi_answer(event, report))


class _HookParser(argparse.ArgumentParser):
    """A usage error exits with the runtime's error code (1 for Claude Code, where argparse's 2
    would block a compaction)."""

    usage_exit = EXIT_NOT_BLOCKING

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(self.usage_exit, f"{self.prog}: error: {message}\n")


HELP = "run as a Claude Code hook or from the pi extension: warn when a compaction or resume finds holes, orphans, dropped tool results or an over-budget request"
DESCRIPTION = (
    "claude-code: run as a Claude Code hook (SessionStart with matcher compact|resume, and PreCompact): read the "
    "hook event on stdin, analyse its transcript, and answer in Claude Code's hook output format: a warning for "
    "the user and, at SessionStart, context for the model naming what it lost. Silent when the session is sound. "
    "Exit 0; 1 (a non-blocking error for Claude Code) when the event or the transcript cannot be read. "
    "pi: run by the pi extension (inspector/hooks/pi-extension.ts) with --event and --session; prints one JSON "
    "object (notify, notify_type, context, findings); exit 0, or 2 when the session cannot be read. docs/hooks.md."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runtime", choices=tuple(ERROR_EXIT), help="the runtime that runs the hook")
    p.add_argument("--window", type=argtypes.tokens, metavar="N", help="context window in tokens (enables the budget check)")
    p.add_argument("--reserve", type=argtypes.tokens, metavar="N", help="tokens reserved for the reply")
    p.add_argument("--event", choices=PI_EVENTS, help="pi: the extension event the check runs for")
    p.add_argument("--session", metavar="FILE", help="pi: the session file (ctx.sessionManager.getSessionFile())")
    p.add_argument("--reason", metavar="REASON", help="pi: session_start's event.reason (startup, resume, fork, new, reload)")
    p.add_argument("--extension-path", action="store_true", help="pi: print the path of the pi extension to install, and exit")


def parser(usage_exit: int = EXIT_NOT_BLOCKING) -> argparse.ArgumentParser:
    p = _HookParser(prog="inspector hook", description=DESCRIPTION)
    p.usage_exit = usage_exit
    add_arguments(p)
    return p


def pi_extension_path() -> str:
    """The pi extension shipped in the package (the file `pi -e` or settings' "extensions" loads)."""
    path = Path(str(resources.files("inspector"))) / PI_EXTENSION
    if not path.is_file():
        raise HookInputError(f"{path} is missing from this installation of inspector")
    return str(path)


def answer_for(runtime: str, args: argparse.Namespace, stdin: bytes | None) -> str | None:
    """What the hook prints for this runtime (HookInputError when it cannot check)."""
    return ANSWERS[runtime](args, stdin)


def answer_pi(args: argparse.Namespace, _stdin: bytes | None) -> str | None:
    """pi's extension passes the session and event as flags."""
    return pi_extension_path() if args.extension_path else check_pi(pi_event(args), args.window, args.reserve)


def answer_claude_code(args: argparse.Namespace, stdin: bytes | None) -> str | None:
    """Claude Code writes its hook event as JSON on stdin."""
    given = [f"--{name.replace('_', '-')}" for name in ("event", "session", "reason", "extension_path") if getattr(args, name)]
    if given:
        raise HookInputError(f"{', '.join(given)} is for pi: Claude Code writes its event on stdin")
    event = parse_event(sys.stdin.buffer.read() if stdin is None else stdin)
    return check(event, args.window, args.reserve) if checked(event) else None


# The hook's runtimes (the `runtime` argument), each answered its own way.
ANSWERS = {"claude-code": answer_claude_code, "pi": answer_pi}


def run(argv: Sequence[str], stdin: bytes | None = None) -> int:
    argv = list(argv)
    args = parser(ERROR_EXIT.get(argv[0] if argv else "", EXIT_NOT_BLOCKING)).parse_args(argv)
    fail = ERROR_EXIT[args.runtime]
    try:
        out = answer_for(args.runtime, args, stdin)
    except HookInputError as e:
        print(f"inspector hook {args.runtime}: {e}", file=sys.stderr)
        return fail
    except Exception as e:  # a bug of ours must not fail the agent: say it, do not block
        print(f"inspector hook {args.runtime}: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return fail
    if out:
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    return EXIT_OK
