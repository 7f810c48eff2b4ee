"""Resume many pi session files with the real pi (0.73.1, `.pi/`), one pi process for all of them.

pi runs in RPC mode against a chat-completions server of this module on 127.0.0.1 (it logs each
request's body and answers one streamed text: a request whose ids or roles a scripted model would
choke on is still answered), with the isolation and RPC client of the shared peer's `generate.py`
(through `tests/peers/pi_hook/pi_harness`), auto-compaction and retries off and a 1M-token window,
so pi sends what it resumed as it is. Per
file: RPC `switch_session` to it (pi's own resume: `SessionManager.open`, its cwd check, a new
runtime), one prompt, and the first request pi then sends. A file pi cannot open, or cannot send,
gets why instead (the RPC error, or the error pi's reply ended with); a pi that died is started again
for the next file.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.peers.pi_hook import pi_harness as ph

PROMPT = "RESUME-PROBE: continue."
STEP_S = 60.0
SWITCH_S = 15.0  # a session pi cannot open in this long it never opens (a parent cycle: it walks forever)


class _Model(BaseHTTPRequestHandler):
    """Logs every request's JSON body (`server.bodies`); answers each with one streamed text."""

    server: _ModelServer

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.bodies.append(json.loads(body))
        base = {"id": "chatcmpl-probe", "object": "chat.completion.chunk", "created": 0, "model": ph.MODEL}
        chunks = [
            {
                **base,
                "choices": [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": "Probe answer."},
                        "finish_reason": None,
                    }
                ],
            },
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {**base, "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}},
        ]
        out = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _ModelServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Model)
        self.bodies: list[dict[str, Any]] = []


@dataclass(frozen=True)
class Resumed:
    """What pi did with one file: the messages of its first request (the system prompt and the
    probe's own prompt left out), or why it sent none; and whether that first request was its
    summarizer's (pi compacted the session before the prompt: with `compaction` on)."""

    messages: list[dict[str, Any]] | None
    error: str = ""
    summarized_first: bool = False
    model: str = ""  # the model that first request named


# The summarizer's system prompt (compaction/utils.js:150): a request that opens with it is a compaction's.
SUMMARIZER = "You are a context summarization assistant."


@dataclass(frozen=True)
class Models:
    """The models pi is given beside the fake one: built-in providers whose requests go to this
    module's server (`routed`: their models as pi ships them, its `baseUrl` and a key overridden),
    and the fake model's `input`."""

    routed: tuple[str, ...] = ()
    fake_input: tuple[str, ...] = ("text",)
    # pi started with `--provider fake --model fake-model`: every session is resumed with that model
    # (main.js `buildSessionOptions`, :226-239, a model given is not restored from the session); else
    # pi restores the session's own (sdk.js:105-113), as `pi -c` and `pi --session` do.
    cli_model: bool = True


def _configure(agent: Path, port: int, window: int = 1_000_000, compaction: bool = False, extra: Models = Models()) -> None:
    url = f"http://127.0.0.1:{port}/v1"
    models = {"providers": {ph.PROVIDER: {
        "baseUrl": url, "api": "openai-completions", "apiKey": "fake-key",
        "models": [{"id": ph.MODEL, "name": "Fake Model", "reasoning": False, "input": list(extra.fake_input), "contextWindow": window,
                    "maxTokens": 4096, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}],
    }, **{p: {"baseUrl": url, "apiKey": "fake-key"} for p in extra.routed}}}  # fmt: skip
    settings = {
        "compaction": {"enabled": compaction},
        "retry": {"enabled": False, "provider": {"maxRetries": 0}},
        "quietStartup": True,
        "enableInstallTelemetry": False,
    }
    (agent / "models.json").write_text(json.dumps(models))
    (agent / "settings.json").write_text(json.dumps(settings))


class _Pi:
    """One pi RPC process in `base`'s scratch dirs, started again when it dies."""

    def __init__(self, base: Path, ws: Path, cli_model: bool = True) -> None:
        self.base, self.ws, self.runs, self.cli_model = base, ws, 0, cli_model
        self.gen = ph._peer()
        self.rpc: Any = None

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "OPENAI", "ANTHROPIC"))}
        b = self.base
        env.update(
            HOME=str(b / "home"),
            PI_CODING_AGENT_DIR=str(b / "agent"),
            PI_OFFLINE="1",
            PI_TELEMETRY="0",
            TMPDIR=str(b / "tmp"),
            NO_COLOR="1",
        )
        return env

    def get(self) -> Any:
        if self.rpc is not None and self.rpc.proc.poll() is None:
            return self.rpc
        self.runs += 1
        model = ["--provider", ph.PROVIDER, "--model", ph.MODEL] if self.cli_model else []
        argv = [
            "node", str(ph.PI_CLI), "--mode", "rpc", *model,
            "--session-dir", str(self.base / "sessions"), "--no-context-files", "--no-extensions", "--no-skills",
            "--no-prompt-templates", "--no-themes", "--offline",
        ]  # fmt: skip
        self.rpc = self.gen.PiRpc(argv, cwd=str(self.ws), env=self._env(), stderr_path=self.base / f"pi{self.runs}.err",
                                  transcript_path=self.base / f"rpc{self.runs}.jsonl")  # fmt: skip
        return self.rpc

    def stderr(self) -> str:
        return (self.base / f"pi{self.runs}.err").read_text(errors="replace").strip()

    def close(self, kill: bool = False) -> None:
        """Stop pi (KILL: at once; one stuck in a loop never reads its closed stdin)."""
        if self.rpc is not None:
            if kill and self.rpc.proc.poll() is None:
                self.rpc.proc.kill()
            self.rpc.close()


def _reply_error(rpc: Any, since: int) -> str:
    ends = [e for e in rpc.events[since:] if e.get("type") == "message_end" and e.get("role") == "assistant"]
    return next(
        (e["errorMessage"] for e in reversed(ends) if e.get("errorMessage")), "no request and no error"
    )


def _one(pi: _Pi, f: Path, bodies: list[dict[str, Any]]) -> Resumed:
    try:
        rpc = pi.get()
        resp = rpc.wait_response(rpc.send({"type": "switch_session", "sessionPath": str(f)}), SWITCH_S)
        if not resp.get("success"):
            return Resumed(None, f"switch_session: {resp.get('error')}")
        after, since, ends = len(bodies), len(rpc.events), rpc.st["agent_end"]
        resp = rpc.wait_response(rpc.send({"type": "prompt", "message": PROMPT}), STEP_S)
        if not resp.get("success"):
            return Resumed(None, f"prompt: {resp.get('error')}")
        deadline = time.time() + STEP_S
        while rpc.st["agent_end"] <= ends:
            if rpc.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("pi exited" if rpc.proc.poll() is not None else "no agent_end")
            time.sleep(0.02)
    except (RuntimeError, TimeoutError, OSError) as e:
        pi.close(kill=True)
        tail = pi.stderr().splitlines()[-1:] or [""]
        return Resumed(None, f"pi failed ({e}): {tail[0][:160]}")
    if len(bodies) == after:
        return Resumed(None, f"reply error: {_reply_error(rpc, since)[:160]}")
    msgs = bodies[after].get("messages") or []
    model = str(bodies[after].get("model"))
    if msgs and SUMMARIZER in json.dumps(msgs[0]):  # (its system prompt: pi compacted first)
        return Resumed(None, "summarized first", summarized_first=True)
    if msgs and msgs[0].get("role") in ("system", "developer"):
        msgs = msgs[1:]
    if msgs and msgs[-1].get("role") == "user" and PROMPT in json.dumps(msgs[-1]):
        msgs = msgs[:-1]
    return Resumed(msgs, model=model)


def resume_many(files: list[Path], base: Path, window: int = 1_000_000, compaction: bool = False, extra: Models = Models()) -> list[Resumed]:
    """Each file resumed in turn by one pi (the files are resumed in place: pass copies), its model
    given `window` tokens, pi's auto-compaction on or off, the `extra` models given too."""
    ph.check_installed()
    for d in ("home", "agent", "sessions", "ws", "tmp"):
        (base / d).mkdir(parents=True, exist_ok=True)
    model = _ModelServer()
    threading.Thread(target=model.serve_forever, daemon=True).start()
    pi = _Pi(base, base / "ws", extra.cli_model)
    try:
        _configure(base / "agent", model.server_address[1], window, compaction, extra)
        return [_one(pi, f, model.bodies) for f in files]
    finally:
        pi.close()
        model.shutdown()
        model.server_close()
