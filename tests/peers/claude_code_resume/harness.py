"""Resume a session file with the real Claude Code CLI (2.1.328, installed by
tests/peers/claude_code_hook/install.sh) offline, and capture the first request it sends.

The judge of issue 14 §3: a repaired transcript is copied into a scratch
`$CLAUDE_CONFIG_DIR/projects/<slug of the work dir>/<sessionId>.jsonl`, then

    claude -p "[R1] ..." --resume <sessionId> --output-format stream-json --verbose

runs in that work dir against the scripted local Messages API of
`../shared/peers/claude_code/fake_anthropic.py` (imported from there, not copied) on 127.0.0.1,
with an environment built from nothing (tests/peers/claude_code_hook/harness.py's). The first
main-loop `/v1/messages` request the CLI sends is what it rebuilt from the file.

`request_records` maps that request back to transcript lines: each tool_use block by its id, each
tool_result by the call it answers, each text or thinking by the line that holds it; what maps to no line is
what the runtime adds itself (system reminders it renders, the new prompt) and is returned apart.

`generate` drives the CLI through the scripted incident sessions of SESSIONS (issue 14 §4), as
`../shared/peers/claude_code/generate.py` does for the peer corpus:

    python3 tests/peers/claude_code_resume/harness.py generate OUT_DIR
    python3 tests/peers/claude_code_resume/harness.py resume FILE.jsonl OUT_DIR
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
HOOK_HARNESS = os.path.join(os.path.dirname(HERE), "claude_code_hook", "harness.py")


def _load(name: str, path: str) -> Any:
    """A module by file, under its own name (both harnesses are called harness.py)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


# The hook harness: check_installed, child_env, the CLI runner, the fake API.
cli = _load("claude_code_hook_harness", HOOK_HARNESS)

HarnessError = cli.HarnessError
VERSION = cli.VERSION
NEXT_PROMPT = "[R1] Carry on where we left off."
RESUME_PLANS: dict[str, list[tuple[str, Any]]] = {"[R1]": [("text", 120)]}
ALLOWED = "Bash Read Write Edit"
NO_CONTENT = "(no content)"  # the text the CLI sends for a reply whose content is an empty list (`Cp`)
# The text of the result the CLI makes up as it builds a request for a call the reply right before
# its user message makes and that message does not answer (`Pqi`, `xGi`, offset 322701448): never
# written to the transcript, it answers a call a line's result may answer too (a result the CLI
# removes from a later message), so it is told from that line's by its text.
MISSING_RESULT = "[Tool result missing due to internal error]"
# What the CLI sends for a user message all of whose blocks were results it removed (`Pqi`): after a
# reply, NO_CONTENT; as the request's first message, this. On no line: credited to the item
# predicted with that text.
ORPHANS_REMOVED = "[Orphaned tool result removed due to conversation resume]"
# What it sends for a reply all of whose blocks were calls it removed, each with the id of an
# earlier call (`Pqi`, offset 322915307). On no line: credited to the item predicted with it.
REPEATED_CALLS_REMOVED = "[Tool use interrupted]"


def project_slug(path: str) -> str:
    """The folder name Claude Code keeps a work dir's sessions under (every non-alphanumeric
    character a dash, as `~/.claude/projects/` shows)."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def session_id_of(transcript: str) -> str:
    with open(transcript, "rb") as f:
        for raw in f:
            try:
                o = json.loads(raw)
            except ValueError:
                continue
            if isinstance(o, dict) and isinstance(o.get("sessionId"), str) and o.get("isSidechain") is not True:
                return o["sessionId"]
    raise HarnessError(f"{transcript}: no line names its sessionId, so Claude Code cannot resume it by id")


@dataclass
class Resumed:
    transcript: str  # the copy the CLI resumed (and appended to)
    rc: int
    stderr: str
    requests: list[dict[str, Any]]  # the fake server's log, bodies included

    def first_main(self) -> dict[str, Any]:
        for r in self.requests:
            if r.get("kind") == "main":
                return r["body"]
        raise HarnessError(f"claude --resume sent no main-loop request (rc {self.rc}; stderr: {self.stderr[-600:]})")


def _scratch(base: str) -> tuple[str, str, str]:
    home, work, tmp = (os.path.join(base, d) for d in ("home", "work", "tmp"))
    for d in (home, work, tmp, os.path.join(home, ".claude")):
        os.makedirs(d, exist_ok=True)
    subprocess.run(["git", "init", "-q", work], check=True, env={"PATH": "/usr/bin:/bin", "HOME": home})
    return home, work, tmp


def resume(transcript: str, base: str, prompt: str = NEXT_PROMPT, extra: tuple[str, ...] = ()) -> Resumed:
    """Resume a copy of `transcript` in a scratch HOME under `base` and log what the CLI sends
    (`extra`: more arguments for the CLI, such as `--model M` or `--debug-file F`)."""
    cli.check_installed()
    fa = cli._fake_anthropic()
    sid = session_id_of(transcript)
    home, work, tmp = _scratch(base)
    proj = os.path.join(home, ".claude", "projects", project_slug(work))
    os.makedirs(proj, exist_ok=True)
    copy = os.path.join(proj, f"{sid}.jsonl")
    shutil.copyfile(transcript, copy)
    log = os.path.join(base, "requests.raw.jsonl")
    srv = fa.FakeServer(fa.Script(RESUME_PLANS, work), log, keep_bodies=True)
    srv.start()
    try:
        args = ["-p", prompt, "--resume", sid, "--output-format", "stream-json", "--verbose", "--allowedTools", ALLOWED, *extra]
        rc, _out, err = cli._run_cli(args, work, cli.child_env(home, srv.url, tmp))
    finally:
        cli.stop_server(srv)
    requests = []
    if os.path.exists(log):
        with open(log) as f:
            requests = [json.loads(line) for line in f]
    return Resumed(copy, rc, err[-2000:], requests)


def resume_many(transcripts: list[str], base: str, workers: int = 3) -> list[Resumed]:
    """`resume` for each, a few at a time (each in its own scratch folder under `base`)."""
    cli.check_installed()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda it: resume(it[1], os.path.join(base, f"r{it[0]:03d}")), enumerate(transcripts)))


# ------------------------------------------------------------------------------ request → lines


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


class _Index:
    """(kind, key) -> the uuids of the lines holding it, in file order: ("tool_use", id),
    ("tool_result", call id), ("text", the text stripped), ("thinking", its text). Where several
    lines hold the same text (a repeated "[Request interrupted by user]", each `/compact`'s
    caveat, command and output lines) the text alone cannot tell them apart: each block takes the
    first of them not taken yet that is in `prefer`, else the first that follows the line the
    request's previous block came from (a request carries its lines in transcript order), else
    the first."""

    def __init__(self, prefer: set[str]) -> None:
        self.lines: dict[tuple[str, str], list[str]] = {}
        self.place: dict[str, int] = {}
        self.prefer = prefer
        self.taken: set[str] = set()
        self.last = -1
        self.result_texts: dict[str, set[str]] = {}  # call id -> the texts of the lines' results answering it

    def add(self, key: tuple[str, str], uuid: str) -> None:
        self.lines.setdefault(key, []).append(uuid)
        self.place.setdefault(uuid, len(self.place))

    def get(self, key: tuple[str, str]) -> str | None:
        found = self.lines.get(key)
        if not found:
            return None
        free = [u for u in found if u not in self.taken]
        pick = next((u for u in free if u in self.prefer), None)
        pick = pick or next((u for u in free if self.place[u] > self.last), None)
        pick = pick or (free or found)[0 if free else -1]
        self.taken.add(pick)
        self.last = self.place[pick]
        return pick


_FIRST = json.JSONDecoder()


def _first_value(text: str) -> Any:
    """A line's first JSON value, at any depth (Claude Code's JSON.parse has no depth limit; a
    line nested deeper than Python's recursion limit is read with a higher one)."""
    try:
        return _FIRST.raw_decode(text, len(text) - len(text.lstrip()))[0]
    except RecursionError:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 50_000))
        try:
            return _FIRST.raw_decode(text, len(text) - len(text.lstrip()))[0]
        finally:
            sys.setrecursionlimit(limit)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _as_sent(text: str) -> str:
    """A text as the request carries it: a lone surrogate becomes U+FFFD on the wire (UTF-8)."""
    return _SURROGATE.sub("\ufffd", text)


def _index(transcript: str, prefer: set[str]) -> _Index:
    idx = _Index(prefer)
    with open(transcript, "rb") as f:
        for n, raw in enumerate(f, 1):
            try:  # (Claude Code reads a line's first JSON value and ignores the rest of the line)
                text = raw.decode("utf-8", "replace")
                o = _first_value(text)
            except ValueError:
                continue
            m = o.get("message") if isinstance(o, dict) else None
            if isinstance(o, dict) and o.get("type") == "system" and o.get("subtype") == "local_command":
                m = {"content": o.get("content")}  # a local command's note, sent as a user text
            if not isinstance(m, dict):
                continue
            if not isinstance(o.get("uuid"), str):  # a message line without one: named `line:N`, as a prediction names it
                if o.get("type") not in ("user", "assistant"):
                    continue
                o = {**o, "uuid": f"line:{n}"}
            if o.get("type") == "assistant" and m.get("content") == []:
                idx.add(("text", NO_CONTENT), o["uuid"])  # what Claude Code sends of a reply with no content (`Eqi`)
            for b in _blocks(m.get("content")):
                t = b.get("type")
                if t == "tool_use" and isinstance(b.get("id"), str):
                    idx.add(("tool_use", b["id"]), o["uuid"])
                elif t == "tool_result" and isinstance(b.get("tool_use_id"), str):
                    idx.add(("tool_result", b["tool_use_id"]), o["uuid"])
                    idx.result_texts.setdefault(b["tool_use_id"], set()).add(_result_text(b.get("content")))
                elif t == "text" and isinstance(b.get("text"), str):
                    idx.add(("text", _as_sent(b["text"]).strip()), o["uuid"])
                elif t == "thinking":  # (its text as JSON: a damaged line's may be no string)
                    idx.add(("thinking", json.dumps(b.get("thinking"))), o["uuid"])
                elif t not in ("tool_use", "tool_result", "text"):  # a block of another type, sent as written
                    idx.add(("block", json.dumps(b, sort_keys=True)), o["uuid"])
    return idx


def _reminded(idx: _Index, text: str) -> str | None:
    """The line whose text Claude Code sends inside a system reminder of its own (a background
    task's `<task-notification>` line ends one: "[SYSTEM NOTIFICATION - NOT USER INPUT] ...")."""
    body = text.strip()
    if not (body.startswith("<system-reminder>") and body.endswith("</system-reminder>")):
        return None
    inner = body.removesuffix("</system-reminder>").rstrip()
    hits = [key for key in idx.lines if key[0] == "text" and len(key[1]) > 40 and inner.endswith("\n" + key[1])]
    return idx.get(hits[-1]) if hits else None


def _result_text(c: Any) -> str:
    return c if isinstance(c, str) else "\n".join(str(x.get("text", "")) for x in _blocks(c) if x.get("type") == "text")


@dataclass
class Sent:
    """One content block of the request: the transcript line it came from (None: added by the runtime)."""

    role: str
    kind: str  # text | thinking | tool_use | tool_result | another block type
    line_uuid: str | None
    call_id: str | None
    text: str
    message: int = -1  # the index of the request message holding it


def request_blocks(body: dict[str, Any], transcript: str, prefer: set[str] | None = None) -> list[Sent]:
    """The request's content blocks, in order, each with the transcript line it came from."""
    idx = _index(transcript, prefer or set())
    out: list[Sent] = []
    for n, m in enumerate(body.get("messages") or []):
        role = str(m.get("role"))
        at = len(out)
        for b in _blocks(m.get("content")):
            t = b.get("type")
            if t == "tool_use":
                out.append(Sent(role, "tool_use", idx.get(("tool_use", b.get("id", ""))), b.get("id"), ""))
            elif t == "tool_result":
                text = _result_text(b.get("content"))
                cid = b.get("tool_use_id")
                made_up = text == MISSING_RESULT and text not in idx.result_texts.get(cid or "", ())
                out.append(Sent(role, "tool_result", None if made_up else idx.get(("tool_result", cid or "")), cid, text))
            elif t == "text":
                text = b.get("text", "")
                out.append(Sent(role, "text", idx.get(("text", text.strip())) or _reminded(idx, text), None, text))
            elif t == "thinking":
                out.append(Sent(role, "thinking", idx.get(("thinking", json.dumps(b.get("thinking")))), None, str(b.get("thinking", ""))))
            else:
                out.append(Sent(role, str(t), idx.get(("block", json.dumps(b, sort_keys=True))), None, json.dumps(b)[:200]))
        for s in out[at:]:
            s.message = n
    return out


# ------------------------------------------------------------------------------ incident sessions


@dataclass(frozen=True)
class Scripted:
    """A session the real CLI writes: prompts run one after another (`--resume` after the first),
    the fake model's plans, and input-token counts it reports (to make the CLI auto-compact)."""

    prompts: tuple[str, ...]
    plans: dict[str, list[tuple[str, Any]]]
    usage: dict[str, int]
    what: str
    max_turns: dict[str, int] = field(default_factory=dict)  # prompt -> --max-turns (stops a turn mid-task)
    summary: str | None = None  # the fake model's reply to a compaction request, in place of its own


_A2 = "[A2] Run three steps: list the files, count them, then tell me what you found."
_C2 = "[C2] Now write notes.txt and read it back."

SESSIONS: dict[str, Scripted] = {
    # Auto-compaction mid-turn (the model reports 990,000 input tokens), and the turn stopped by
    # --max-turns before its answer: the prompt in flight is only in the summary (a live question
    # summarized); the preserved segment is that turn's tool call and result.
    "cc_live_question_summarized": Scripted(
        ("[A1] Say hello with bash.", _A2),
        {
            "[A1]": [("tool", [("Bash", {"command": "echo hello", "description": "Say hello"})]), ("text", 400)],
            "[A2]": [("tool", [("Bash", {"command": "ls -a", "description": "List files"})]),
                     ("tool", [("Bash", {"command": "ls -a | wc -l", "description": "Count them"})]),
                     ("tool", [("Bash", {"command": "echo found", "description": "Report"})]), ("text", 300)],
        },
        {"[A2]": 990_000},
        "auto-compact between a tool result and the next reply; the turn stops before its answer",
        max_turns={_A2: 2},
    ),
    # A manual /compact whose summary says nothing (the model answered an empty <summary>): every
    # message it removed is a hole.
    "cc_amnesiac_compact": Scripted(
        ("[C1] Say hello with bash, twice.", "/compact", _C2),
        {
            "[C1]": [("tool", [("Bash", {"command": "echo hello", "description": "one"})]),
                     ("tool", [("Bash", {"command": "echo again", "description": "two"})]), ("text", 600)],
            "[C2]": [("tool", [("Write", {"file_path": "{WORKDIR}/notes.txt", "content": "a note\n"})]),
                     ("tool", [("Read", {"file_path": "{WORKDIR}/notes.txt"})]), ("text", 300)],
        },
        {},
        "a compaction whose summary is empty",
        summary="<analysis>\n</analysis>\n<summary>\n</summary>",
    ),
    # Parallel calls whose results are written on separate branches, then a manual /compact, then
    # more calls: the call/result pairs straddle what a cut may take.
    "cc_parallel_then_compact": Scripted(
        ("[B1] Run two commands in parallel.", "/compact", "[B2] What did they print?"),
        {
            "[B1]": [("tool", [("Bash", {"command": "echo one", "description": "one"}),
                               ("Bash", {"command": "echo two", "description": "two"})]), ("text", 600)],
            "[B2]": [("tool", [("Bash", {"command": "echo three", "description": "three"}),
                               ("Bash", {"command": "echo four", "description": "four"})]), ("text", 500)],
        },
        {},
        "parallel tool calls, a manual compaction, more parallel calls after it",
    ),
}


def _script(fa: Any, spec: Scripted, work: str) -> Any:
    """The fake model for a scripted session: the peer's Script, with its compaction reply replaced
    where the session says so."""
    script = fa.Script(spec.plans, work, spec.usage)
    if spec.summary is not None:
        own = script.reply

        def reply(body: dict[str, Any]) -> tuple[str, list[dict[str, Any]], str, int]:
            kind, blocks, stop, tokens = own(body)
            if kind == "compact":
                blocks = [{"type": "text", "text": spec.summary}]
            return kind, blocks, stop, tokens

        script.reply = reply
    return script


def generate(out_dir: str, names: list[str] | None = None) -> dict[str, str]:
    """Run each scripted session with the real CLI; returns name -> the transcript it wrote
    (copied to OUT_DIR/<name>.jsonl, scratch paths rewritten to /home/user/claude_code-resume/<name>)."""
    cli.check_installed()
    fa = cli._fake_anthropic()
    os.makedirs(out_dir, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="cc-resume-gen-")  # HOMEs and work dirs, removed at the end
    try:
        return _generate(fa, out_dir, scratch, names or list(SESSIONS))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _generate(fa: Any, out_dir: str, scratch: str, names: list[str]) -> dict[str, str]:
    done: dict[str, str] = {}
    for name in names:
        spec = SESSIONS[name]
        base = os.path.join(scratch, name)
        home, work, tmp = _scratch(base)
        log = os.path.join(base, "requests.raw.jsonl")
        srv = fa.FakeServer(_script(fa, spec, work), log, keep_bodies=False)
        srv.start()
        sid: str | None = None
        try:
            for prompt in spec.prompts:
                args = ["-p", prompt, "--output-format", "stream-json", "--verbose", "--allowedTools", ALLOWED]
                if sid:
                    args += ["--resume", sid]
                if prompt in spec.max_turns:
                    args += ["--max-turns", str(spec.max_turns[prompt])]
                rc, out, err = cli._run_cli(args, work, cli.child_env(home, srv.url, tmp))
                if rc != 0 and prompt not in spec.max_turns:  # --max-turns ends the run with 1
                    raise HarnessError(f"{name}: claude {prompt!r} exited {rc}: {err[-400:]}")
                for line in out.splitlines():
                    try:
                        sid = json.loads(line).get("session_id") or sid
                    except (ValueError, AttributeError):
                        continue
        finally:
            cli.stop_server(srv)
        found = glob.glob(os.path.join(home, ".claude", "projects", "*", f"{sid}.jsonl"))
        if not found:
            raise HarnessError(f"{name}: Claude Code wrote no transcript for session {sid}")
        shown = "/home/user/claude_code-resume/" + name
        with open(found[0]) as f:
            text = f.read().replace(base, shown).replace(project_slug(base), project_slug(shown))
        dest = os.path.join(out_dir, f"{name}.jsonl")
        with open(dest, "w") as f:
            f.write(text)
        done[name] = dest
    return done


def main(argv: list[str]) -> int:
    try:
        if len(argv) == 2 and argv[0] == "generate":
            print(json.dumps(generate(os.path.abspath(argv[1])), indent=1))
            return 0
        if len(argv) == 3 and argv[0] == "resume":
            r = resume(os.path.abspath(argv[1]), os.path.abspath(argv[2]))
            body = r.first_main()
            print(json.dumps([s.__dict__ for s in request_blocks(body, r.transcript)], indent=1))
            return 0
    except HarnessError as e:
        print(f"harness: {e}", file=sys.stderr)
        return 2
    print("usage: harness.py generate OUT_DIR | resume FILE.jsonl OUT_DIR", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
