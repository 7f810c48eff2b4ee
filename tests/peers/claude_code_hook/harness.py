"""Drive the real Claude Code CLI (2.1.328, installed by install.sh) offline with `inspector hook
claude-code` configured as its SessionStart and PreCompact hook.

The CLI runs in print mode against the scripted local Messages API of
`../shared/peers/claude_code/fake_anthropic.py` (imported from there, not copied), in a scratch
HOME whose `~/.claude/settings.json` configures the hook, with an environment built from nothing,
as `../shared/peers/claude_code/generate.py` runs it. One session, three runs:

1. `[H1]`: a Bash call, then text;
2. `/compact`: Claude Code runs PreCompact, asks the model for the summary, runs SessionStart
   with source `compact`, then writes the boundary;
3. `[H2]` with `--resume`: SessionStart with source `resume`, then the next request.

The hook command carries `--window` (the fake model's window is whatever we say), small enough
that the session's request is over budget, so the hook has something to say. What the CLI
received from each hook is in its stream-json output (`system`/`hook_response`: stdout, exit
code); every request it sent is in the fake server's log, bodies included.

    python3 tests/peers/claude_code_hook/harness.py OUT_DIR   # prints a summary as JSON
"""

from __future__ import annotations

import glob
import json
import os
import shlex
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PEER = os.path.join(os.path.dirname(REPO), "shared", "peers", "claude_code")
CLAUDE = os.path.join(HERE, "runtime", "node_modules", "@anthropic-ai", "claude-code-linux-x64", "claude")
VERSION = "2.1.328"
RUN_TIMEOUT_S = 120
WINDOW = 500  # tokens: smaller than the request both before (~13k) and after the compaction (~600 counted)
RESERVE = 100

PLANS: dict[str, list[tuple[str, Any]]] = {
    "[H1]": [("tool", [("Bash", {"command": "echo hello-from-fake", "description": "Say hello"})]), ("text", 300)],
    "[H2]": [("text", 200)],
}
PROMPTS = ["[H1] Please say hello using bash.", "/compact", "[H2] Are you still there?"]


class HarnessError(Exception):
    """The harness could not run: the message names the cause."""


@dataclass
class Run:
    prompt: str
    rc: int
    stream: list[dict[str, Any]]
    stderr: str


@dataclass
class Session:
    transcript: str
    runs: list[Run]
    requests: list[dict[str, Any]]  # the fake server's log, one entry per request, with `body`
    hook_command: str
    home: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def hook_responses(self) -> list[tuple[int, dict[str, Any]]]:
        """(run index, event) of every hook answer the CLI reported, in order."""
        return [
            (i, ev)
            for i, run in enumerate(self.runs)
            for ev in run.stream
            if ev.get("type") == "system" and ev.get("subtype") == "hook_response"
        ]


def _fake_anthropic() -> Any:
    if not os.path.isfile(os.path.join(PEER, "fake_anthropic.py")):
        raise HarnessError(f"{PEER}/fake_anthropic.py is missing: the harness uses the shared peer's fake Messages API")
    sys.path.insert(0, PEER)
    try:
        import fake_anthropic
    finally:
        sys.path.remove(PEER)
    return fake_anthropic


def stop_server(srv: Any) -> None:
    """Stop the shared peer's fake Messages API and its lifetime timer: `FakeServer.start` arms a
    `threading.Timer` to shut it down after its lifetime, a thread that would sleep on past the
    run; a worker process left with threads cannot fork (the forked reading helper's tests, which
    run after these on the same pytest worker, need it single-threaded)."""
    srv.shutdown()
    srv.server_close()
    for t in threading.enumerate():
        if isinstance(t, threading.Timer) and getattr(t, "function", None) == srv.shutdown:
            t.cancel()
            t.join()


def check_installed() -> None:
    """HarnessError naming why the pinned CLI cannot run here."""
    if not os.path.isfile(CLAUDE):
        raise HarnessError(
            f"Claude Code {VERSION} is not installed at {CLAUDE}: run tests/peers/claude_code_hook/install.sh "
            "(npm @anthropic-ai/claude-code, linux-x64)"
        )
    try:
        out = subprocess.run(
            [CLAUDE, "--version"], capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"}
        )
    except OSError as e:
        raise HarnessError(f"{CLAUDE} cannot be started: {e}") from None
    if VERSION not in out.stdout:
        raise HarnessError(f"{CLAUDE} --version says {out.stdout.strip()!r}, not {VERSION}: run install.sh again")


def hook_command() -> str:
    return " ".join(
        shlex.quote(a)
        for a in (sys.executable, "-m", "inspector", "hook", "claude-code", "--window", str(WINDOW), "--reserve", str(RESERVE))
    )


def settings(command: str) -> dict[str, Any]:
    """The settings snippet docs/hooks.md documents, with this command."""
    hook = {"type": "command", "command": command}
    return {
        "hooks": {
            "SessionStart": [{"matcher": "compact|resume", "hooks": [hook]}],
            "PreCompact": [{"hooks": [hook]}],
        }
    }


def child_env(home: str, base_url: str, tmp: str) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-api03-fake-local-key-000000000000",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_BUG_COMMAND": "1",
        "DISABLE_NON_ESSENTIAL_MODEL_CALLS": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "TMPDIR": tmp,
    }


def _run_cli(args: list[str], cwd: str, env: dict[str, str]) -> tuple[int, str, str]:
    p = subprocess.Popen(
        [CLAUDE, *args], cwd=cwd, env=env, start_new_session=True, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        out, err = p.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)  # the group of the process this harness started, nothing else
        out, err = p.communicate(timeout=30)
        raise HarnessError(f"claude {' '.join(args[:2])} did not finish in {RUN_TIMEOUT_S} s; stderr: {err[-400:]}") from None
    return p.returncode, out, err


def run_session(base: str) -> Session:
    """Run the three steps in `base` (created; a scratch HOME, work dir and tmp under it)."""
    check_installed()
    fa = _fake_anthropic()
    home, work, tmp = (os.path.join(base, d) for d in ("home", "work", "tmp"))
    for d in (home, work, tmp):
        os.makedirs(d, exist_ok=True)
    os.makedirs(os.path.join(home, ".claude"), exist_ok=True)
    subprocess.run(["git", "init", "-q", work], check=True, env={"PATH": "/usr/bin:/bin", "HOME": home})
    command = hook_command()
    with open(os.path.join(home, ".claude", "settings.json"), "w") as f:
        json.dump(settings(command), f, indent=1)
    log = os.path.join(base, "requests.raw.jsonl")
    srv = fa.FakeServer(fa.Script(PLANS, work), log, keep_bodies=True)
    srv.start()
    env = child_env(home, srv.url, tmp)
    session_id: str | None = None
    runs: list[Run] = []
    try:
        for prompt in PROMPTS:
            args = ["-p", prompt, "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash Read Write Edit"]
            if session_id:
                args += ["--resume", session_id]
            rc, out, err = _run_cli(args, work, env)
            stream = []
            for line in out.splitlines():
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError:
                    continue
                stream.append(obj)
                session_id = obj.get("session_id") or session_id
            runs.append(Run(prompt, rc, stream, err[-2000:]))
    finally:
        stop_server(srv)
    found = glob.glob(os.path.join(home, ".claude", "projects", "*", f"{session_id}.jsonl"))
    if not found:
        raise HarnessError(f"Claude Code wrote no transcript for session {session_id} under {home}/.claude/projects")
    with open(log) as f:
        requests = [json.loads(line) for line in f]
    return Session(found[0], runs, requests, command, home)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: harness.py OUT_DIR", file=sys.stderr)
        return 2
    try:
        s = run_session(os.path.abspath(argv[0]))
    except HarnessError as e:
        print(f"harness: {e}", file=sys.stderr)
        return 2
    summary = {
        "transcript": s.transcript,
        "runs": [{"prompt": r.prompt, "rc": r.rc} for r in s.runs],
        "requests": [{"n": r["n"], "kind": r.get("kind"), "n_messages": r.get("n_messages")} for r in s.requests],
        "hooks": [
            {"run": i, "hook": ev.get("hook_name"), "exit_code": ev.get("exit_code"), "stdout": ev.get("stdout")}
            for i, ev in s.hook_responses()
        ],
    }
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
