"""Drive the real pi (0.73.1, the pinned runtime in `.pi/`, installed by tests/install_pi.sh)
offline with inspector's pi extension (inspector/hooks/pi-extension.ts) loaded by `-e`.

pi runs in RPC mode against the scripted OpenAI-compatible model of
`../shared/peers/pi/fake_llm.py`, with the isolation, settings and RPC client of
`../shared/peers/pi/generate.py` (both used from there, not copied): a scratch HOME, agent dir,
session dir, workspace and TMPDIR, nothing from the caller's PI_*/OPENAI*/ANTHROPIC* environment.
The extension runs `inspector hook pi` as INSPECTOR_BIN (this Python's `-m inspector`, through a
small wrapper that also logs every call).

One session, two pi processes:

1. `[turn:k01]`, `[turn:k02]` (tool-calling turns), then RPC `compact`: the scripted summarizer
   answers an empty summary, so everything the compaction removes is lost (a hole). pi appends
   the compaction entry and emits `session_compact`: the extension runs the check, notifies
   (an `extension_ui_request` on pi's stdout in RPC mode) and keeps the context for the model.
   Then `[turn:k03]`: `before_agent_start` injects it; the request pi sends carries it.
2. pi again with `--session FILE` (`session_start`, reason `startup`), `[turn:k04]`: the check
   runs again and notifies; the model already has the message in its request, so nothing is
   injected twice.

    python3 tests/peers/pi_hook/pi_harness.py OUT_DIR   # prints a summary as JSON
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
PEER = REPO.parent / "shared" / "peers" / "pi"
PI_PKG = Path(os.environ.get("PI_PKG_DIR") or REPO / ".pi" / "node_modules" / "@mariozechner" / "pi-coding-agent")
PI_CLI = PI_PKG / "dist" / "cli.js"
EXTENSION = REPO / "inspector" / "hooks" / "pi-extension.ts"
VERSION = "0.73.1"
PROVIDER, MODEL = "fake", "fake-model"
WINDOW, MAX_TOKENS, RESERVE, KEEP_RECENT = 16384, 4096, 4096, 1000
STEP_TIMEOUT_S = 180.0


class HarnessError(Exception):
    """The harness could not run: the message names the cause."""


@dataclass
class PiRun:
    """One pi process: what it printed on its RPC stdout (every event but streaming deltas)."""

    events: list[dict[str, Any]]
    stderr: str

    def notifications(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == "extension_ui_request" and e.get("method") == "notify"]

    def extension_errors(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == "extension_error"]


@dataclass
class Session:
    session_file: str
    runs: list[PiRun]
    requests: list[dict[str, Any]]  # fake_llm's log: one per request, `kind`, `turn`, `body`
    hook_calls: list[list[str]]  # the argv of every `inspector hook pi` the extension ran
    steps: dict[str, tuple[int, int]]  # step -> (last request seq before it, last one of it)
    extra: dict[str, Any] = field(default_factory=dict)

    def requests_of(self, step: str) -> list[dict[str, Any]]:
        """The requests pi sent during one step (`k01`…`k04`, `compact`), by when they came: the
        fake keys a request by the last `[turn:…]` tag of the last user message, and the message
        the extension injects after the k03 prompt quotes the lost prompts, tags included, so the
        fake answers k03 with k02's script (harmless here; its `turn` field says k02)."""
        first, end = self.steps[step]
        return [r for r in self.requests if first < r["seq"] <= end]


def _peer() -> Any:
    """The shared peer's generate.py (its RPC client, workspace and turn helpers)."""
    for f in ("generate.py", "fake_llm.py"):
        if not (PEER / f).is_file():
            raise HarnessError(f"{PEER / f} is missing: the harness uses the shared pi peer's {f}")
    # Under its own module name: another harness has a generate.py of its own
    # (tests/peers/openclaw/), and whichever is imported first as `generate` would be the other's.
    if "pi_peer_generate" in sys.modules:
        return sys.modules["pi_peer_generate"]
    spec = importlib.util.spec_from_file_location("pi_peer_generate", PEER / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(PEER))  # its own imports (fake_llm) are siblings
    try:
        sys.modules["pi_peer_generate"] = module
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(PEER))
    return module


def check_installed() -> None:
    """HarnessError naming why the pinned pi cannot run here."""
    if not PI_CLI.is_file():
        raise HarnessError(f"pi {VERSION} is not installed at {PI_PKG}: run tests/install_pi.sh (npm @mariozechner/pi-coding-agent)")
    try:
        version = json.loads((PI_PKG / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError) as e:
        raise HarnessError(f"{PI_PKG}/package.json cannot be read: {e}") from None
    if version != VERSION:
        raise HarnessError(f"{PI_PKG} holds pi {version}, not {VERSION}: run tests/install_pi.sh again")
    try:
        subprocess.run(["node", "--version"], capture_output=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError) as e:
        raise HarnessError(f"node cannot be run ({e}): pi needs it") from None


def _script(gen: Any) -> dict[str, Any]:
    turns = {f"k0{k}": gen.standard_turn(k, pad_final=1200) for k in (1, 2, 3)}
    turns["k04"] = {"steps": [gen.final("Still here.", pad=200)]}
    for t in turns.values():  # whatever the compaction asks the summarizer, the answer is empty
        t["summary"] = t["summary_prefix"] = "empty"
    return {"turns": turns, "model": MODEL, "context_window": WINDOW}


def _inspector_wrapper(path: Path, log: Path) -> None:
    """INSPECTOR_BIN: logs its argv (one JSON line per call), then runs this Python's inspector."""
    path.write_text(
        "#!/bin/sh\n"
        f"printf '%s\\n' \"$*\" >> {shlex.quote(str(log))}\n"
        f"exec {shlex.quote(sys.executable)} -m inspector \"$@\"\n"
    )
    path.chmod(0o755)


def _start_fake(base: Path, script: dict[str, Any]) -> tuple[subprocess.Popen[bytes], int, Path]:
    (base / "script.json").write_text(json.dumps(script, indent=1))
    log, port_file = base / "requests.raw.jsonl", base / "port"
    with open(base / "fake.err", "wb") as err:  # the child keeps its own copy of the descriptor
        fake = subprocess.Popen(
            [sys.executable, str(PEER / "fake_llm.py"), "--script", str(base / "script.json"), "--log", str(log),
             "--port-file", str(port_file), "--max-seconds", "600", "--idle-seconds", "240", "--max-requests", "200"],
            stderr=err,
        )  # fmt: skip
    deadline = time.time() + 15
    while not port_file.exists() or not port_file.read_text().strip():
        if fake.poll() is not None or time.time() > deadline:
            _stop(fake)
            raise HarnessError(f"fake_llm.py did not start: {(base / 'fake.err').read_text()[-400:]}")
        time.sleep(0.05)
    return fake, int(port_file.read_text()), log


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a process this harness started (by its PID)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def _configure(agent: Path, port: int) -> None:
    models = {"providers": {PROVIDER: {
        "baseUrl": f"http://127.0.0.1:{port}/v1", "api": "openai-completions", "apiKey": "fake-key",
        "models": [{"id": MODEL, "name": "Fake Model", "reasoning": False, "input": ["text"], "contextWindow": WINDOW,
                    "maxTokens": MAX_TOKENS, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}],
    }}}  # fmt: skip
    settings = {
        "compaction": {"enabled": True, "reserveTokens": RESERVE, "keepRecentTokens": KEEP_RECENT},
        "retry": {"enabled": True, "maxRetries": 0},
        "quietStartup": True,
        "enableInstallTelemetry": False,
    }
    (agent / "models.json").write_text(json.dumps(models, indent=1))
    (agent / "settings.json").write_text(json.dumps(settings, indent=1))


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _count(log: Path) -> int:
    """How many requests fake_llm has logged (it writes each before answering it)."""
    return len(log.read_text().splitlines()) if log.exists() else 0


def _prompt(rpc: Any, text: str) -> None:
    before = rpc.st["agent_end"]
    resp = rpc.wait_response(rpc.send({"type": "prompt", "message": text}), STEP_TIMEOUT_S)
    if not resp.get("success"):
        raise HarnessError(f"pi rejected the prompt {text!r}: {resp.get('error')}")
    rpc.wait_settled(before + 1, timeout=STEP_TIMEOUT_S)
    rpc.drain()


def _compact(rpc: Any) -> None:
    resp = rpc.wait_response(rpc.send({"type": "compact"}), STEP_TIMEOUT_S)
    if not resp.get("success"):
        raise HarnessError(f"pi's compact failed: {resp.get('error')}")
    rpc.wait_settled(0, timeout=STEP_TIMEOUT_S)
    rpc.drain()


def run_session(base_dir: str) -> Session:
    """Run both pi processes in `base_dir` (created; scratch HOME, agent dir, workspace, tmp under it)."""
    check_installed()
    gen = _peer()
    base = Path(base_dir)
    home, agent, sessions, ws, tmp = (base / d for d in ("home", "agent", "sessions", "ws", "tmp"))
    for d in (home, agent, sessions, ws, tmp):
        d.mkdir(parents=True, exist_ok=True)
    gen.seed_workspace(ws)
    calls_log, wrapper = base / "hook_calls.txt", base / "inspector"
    _inspector_wrapper(wrapper, calls_log)
    fake, port, log = _start_fake(base, _script(gen))
    runs: list[PiRun] = []
    marks: dict[str, tuple[int, int]] = {}
    try:
        _configure(agent, port)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "OPENAI", "ANTHROPIC", "INSPECTOR"))}
        env.update(HOME=str(home), PI_CODING_AGENT_DIR=str(agent), PI_OFFLINE="1", PI_TELEMETRY="0", TMPDIR=str(tmp),
                   NO_COLOR="1", INSPECTOR_BIN=str(wrapper))  # fmt: skip
        argv = ["node", str(PI_CLI), "--mode", "rpc", "--provider", PROVIDER, "--model", MODEL, "--session-dir", str(sessions),
                "--no-context-files", "--no-extensions", "--no-skills", "--no-prompt-templates", "--no-themes", "--offline",
                "-e", str(EXTENSION)]  # fmt: skip
        session_file = ""
        for n, steps in enumerate(
            (
                [("prompt", gen.user_text("k01", "Check module 01.")), ("prompt", gen.user_text("k02", "Check module 02.")),
                 ("compact", None), ("prompt", gen.user_text("k03", "Check module 03."))],
                [("prompt", gen.user_text("k04", "Are you still there?"))],
            )
        ):  # fmt: skip
            extra = ["--session", session_file] if session_file else []
            rpc = gen.PiRpc(argv + extra, cwd=str(ws), env=env, stderr_path=base / f"pi{n}.err", transcript_path=base / f"rpc{n}.jsonl")
            try:
                for kind, arg in steps:
                    before = _count(log)
                    _prompt(rpc, arg) if kind == "prompt" else _compact(rpc)
                    marks[arg.split("]")[0].removeprefix("[turn:") if arg else kind] = (before, _count(log))
                session_file = rpc.get_state().get("sessionFile") or session_file
            except (TimeoutError, RuntimeError) as e:
                raise HarnessError(f"pi run {n}: {e}; stderr: {(base / f'pi{n}.err').read_text()[-600:]}") from None
            finally:
                rpc.close()
            runs.append(PiRun(_events(base / f"rpc{n}.jsonl"), (base / f"pi{n}.err").read_text()[-2000:]))
    finally:
        _stop(fake)
    if not session_file or not Path(session_file).is_file():
        raise HarnessError(f"pi wrote no session file under {sessions} (get_state said {session_file!r})")
    calls = [line.split() for line in calls_log.read_text().splitlines()] if calls_log.exists() else []
    return Session(session_file, runs, _events(log), calls, marks)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: pi_harness.py OUT_DIR", file=sys.stderr)
        return 2
    try:
        s = run_session(os.path.abspath(argv[0]))
    except HarnessError as e:
        print(f"harness: {e}", file=sys.stderr)
        return 2
    summary = {
        "session_file": s.session_file,
        "hook_calls": s.hook_calls,
        "steps": s.steps,
        "requests": [{"seq": r.get("seq"), "kind": r.get("kind"), "turn": r.get("turn"), "step": r.get("step")} for r in s.requests],
        "notifications": [[n.get("notifyType"), n.get("message", "")[:160]] for run in s.runs for n in run.notifications()],
        "extension_errors": [e for run in s.runs for e in run.extension_errors()],
    }
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
