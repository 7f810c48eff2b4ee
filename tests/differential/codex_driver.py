"""Drive the real Codex 0.169.0 through generated scenarios (issue 16, point 1).

Each scenario is a sequence of `codex exec --json` runs (`resume <thread>` after the first) against
the scripted local Responses API of tests/peers/codex_resume/fake_model.py on 127.0.0.1, in a
scratch CODEX_HOME with the environment built from nothing, as tests/peers/codex_resume/resume.py
runs it. What the scenario varies: turns; per turn its tool rounds, parallel calls, failing commands
and text sizes; a kill mid-tool (the next run resumes); the auto-compaction window (`model_auto_compact_token_limit`) and which reply
reports a usage over it (Codex compacts before its next request: mid tool loop, or before the next
prompt); what the summarizer answers (a summary, an empty text, an HTTP 500, a stream cut short);
manual compactions between turns (`codex exec` sends a `/compact` prompt to the model as it is, so
they go through `codex app-server`'s `thread/compact/start`, what the TUI's `/compact` asks).

Every request the CLI sends is logged with its body and the number of rollout lines written when it
arrived (`rollout_lines`), so the check can open the rollout as it stood (`load(..., upto_line=N)`).
Per scenario the folder holds scenario.json, session.jsonl (the rollout), requests.jsonl,
result.json.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import threading
import time
import traceback
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.differential import space
from tests.peers.codex_resume import resume as harness
from tests.peers.codex_resume.fake_model import FakeModel, Reply, _Handler, input_text, is_compaction

WORDS = ["alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma"]
KILLED = "sleep 30"  # the command Codex is killed in
OVER = 90_000
FAIL = "fail"  # a reply item: the request fails (its "how")  # reported total tokens that put Codex over any window the space draws


def available() -> str | None:
    """None when the pinned Codex runs here, else why not."""
    have = harness.installed_version()
    if have is None:
        return f"Codex {harness.CODEX_VERSION} not found at {harness.CODEX}: run tests/install_codex.sh"
    if have != harness.CODEX_VERSION:
        return f"Codex {have} is installed, the judge is {harness.CODEX_VERSION}: run tests/install_codex.sh"
    return None


def digest(text: str) -> str:
    """A text as the check compares it."""
    return hashlib.sha256(text.encode()).hexdigest()[:12]


# ------------------------------------------------------------------------------------ the space


def _round(rng: random.Random, turn: int, k: int) -> list[str]:
    cmds = []
    for j in range(rng.choice([1, 1, 1, 2, 2, 3])):
        word = rng.choice(WORDS)
        if rng.random() < 0.2:  # a failing command: a non-zero exit in the output
            cmds.append(f"ls /nonexistent-{word}-{turn}-{k}-{j}")
        else:
            cmds.append(f"echo {word}-{turn}-{k}-{j}")
    return cmds


def scenario(seed: int, index: int) -> dict[str, Any]:
    """The same (seed, index) always gives the same scenario."""
    rng = random.Random(f"codex/{seed}/{index}")
    turns: list[dict[str, Any]] = []
    for i in range(rng.randint(1, 4)):
        steps: list[list[Any]] = [["tool", _round(rng, i, k)] for k in range(rng.choice([0, 1, 1, 2, 3]))]
        steps.append(["text", rng.choice([40, 200, 600, 1500])])
        turn: dict[str, Any] = {
            "marker": f"[P{i}]",
            "ask": f"[P{i}] Task {i}: " + "detail " * rng.choice([0, 3, 30]),
            "steps": steps,
        }
        if rng.random() < 0.35:  # this reply reports a usage over the window: Codex compacts next
            turn["over_window_step"] = rng.randrange(len(steps))
        turns.append(turn)
    # Codex killed mid-tool (its command still running): the call has no output in the rollout;
    # the next run resumes the thread. Drawn apart, so the rest of the space stays as it was.
    kill = random.Random(f"codex/{seed}/{index}/kill")
    for turn in turns:
        tools = [k for k, s in enumerate(turn["steps"]) if s[0] == "tool"]
        if tools and kill.random() < 0.15:
            k = kill.choice(tools)
            turn["steps"][k][1][-1] = KILLED
            turn["kill_at_step"] = k
            turn["steps"] = turn["steps"][: k + 1]
            if turn.get("over_window_step", 0) > k:
                del turn["over_window_step"]
    # Rounds that say something before their calls (one reply: a message, then the calls), and
    # commands with a long output (Codex cuts what it sends of it). Drawn apart, as the kill is.
    extra = random.Random(f"codex/{seed}/{index}/rounds")
    for turn in turns:
        for step in turn["steps"]:
            if step[0] != "tool":
                continue
            if extra.random() < 0.25:
                step.append(f"Running {len(step[1])} command(s) " + "now " * extra.choice([1, 20]))
            if extra.random() < 0.15 and step[1][-1] != KILLED:
                step[1][0] = f"seq 1 {extra.choice([2_000, 20_000, 60_000])}"
    # Prompts past Codex's budget for the user messages a compaction keeps, long summaries.
    big = random.Random(f"codex/{seed}/{index}/sizes")
    for turn in turns:
        if big.random() < 0.15:
            turn["ask"] += " ".join(f"w{j}" for j in range(big.choice([3_000, 8_000, 15_000])))
    # Replies that reason first (a reasoning item with its summary and encrypted content, before
    # the message or the calls), a few with encrypted content only, a few answers of reasoning
    # only: what a reasoning model writes, and what Codex keeps and sends of each. Drawn apart.
    think = random.Random(f"codex/{seed}/{index}/reasoning")
    for turn in turns:
        marks = space.thinking_marks(think, turn["steps"], ((0.30, "summary"), (0.06, "encrypted")), 0.04)
        if marks:
            turn["reasoning"] = marks
    # Manual compactions between turns (`thread/compact/start` through the app server), drawn apart.
    manual = random.Random(f"codex/{seed}/{index}/manual")
    turns = [x for t in turns for x in ([t, {"compact": True}] if manual.random() < 0.15 else [t])]
    return {
        "runtime": "codex",
        "name": f"codex-s{seed}-{index:04d}",
        "seed": seed,
        "index": index,
        "auto_compact_limit": rng.choice([15_000, 30_000, 60_000]),
        "summarizer": rng.choice(["good", "good", "good", "empty"]),
        "turns": turns,
        "summary_words": big.choice([0, 0, 0, 2_000, 10_000]),
        **_summarizer_failure(seed, index),
    }


def _summarizer_failure(seed: int, index: int) -> dict[str, Any]:
    """Which summarizer request fails and how (an HTTP 500, a stream cut before its end), or
    nothing; drawn apart, so the rest of the space stays as it was."""
    rng = random.Random(f"codex/{seed}/{index}/summarizer-failure")
    if rng.random() >= 0.2:
        return {}
    return {"summarizer_fails": {"request": rng.choice([1, 1, 2]), "how": rng.choice(["http_500", "cut_stream"])}}


# ------------------------------------------------------------------------------------ the model


def _summary(kind: str, prompt: str, k: int, words: int = 0) -> str:
    """The summarizer's k-th reply (numbered: two summaries never read alike; no marker in it, so
    the script never takes a summary for a prompt), WORDS words longer."""
    if kind == "empty":
        return ""
    pad = "".join(f" s{j}" for j in range(words))
    return f"Handoff notes {k} (fake model): scripted prompts ran, the latest was {prompt.strip('[]')}.{pad}"


def _marker(body: dict[str, Any]) -> str:
    """The newest `[Pn]` user prompt of the request."""
    for it in reversed(body.get("input") or []):
        if it.get("type", "message") == "message" and it.get("role") == "user":
            t = input_text(it)
            if t.startswith("[P") and "]" in t:
                return t[: t.index("]") + 1]
    return "[?]"


class Script:
    """The scenario's replies: per prompt its steps in order (a counter per prompt, so a turn goes on
    where it was after a mid-turn compaction), the summarizer's replies, the usage to report; every
    request is stamped with the rollout lines written when it arrived."""

    def __init__(self, sc: dict[str, Any], rollout_lines: Any) -> None:
        self.plans = {t["marker"]: t["steps"] for t in sc["turns"] if "marker" in t}
        self.over = {t["marker"]: t["over_window_step"] for t in sc["turns"] if "over_window_step" in t}
        self.reasoning = {t["marker"]: t["reasoning"] for t in sc["turns"] if "reasoning" in t}
        self.summarizer = sc["summarizer"]
        self.summary_words = sc.get("summary_words", 0)
        self.fails: dict[str, Any] = sc.get("summarizer_fails") or {}
        self.rollout_lines = rollout_lines
        self.done: dict[str, int] = {}
        self.summaries = 0
        self.log: list[dict[str, Any]] = []
        self.calls = 0

    def __call__(self, body: dict[str, Any]) -> Reply:
        n = _settled(self.rollout_lines)
        marker = _marker(body)
        if is_compaction(body):
            self.summaries += 1
            if self.fails.get("request") == self.summaries:
                self.log.append({"kind": "compact_failed", "rollout_lines": n, "body": body})
                return [{"type": FAIL, "how": self.fails["how"]}], None
            self.log.append({"kind": "compact", "rollout_lines": n, "body": body})
            return [{"type": "message", "text": _summary(self.summarizer, marker, self.summaries, self.summary_words)}], None
        self.log.append({"kind": "main", "rollout_lines": n, "body": body})
        steps = self.plans.get(marker, [["text", 100]])
        k = self.done.get(marker, 0)
        self.done[marker] = k + 1
        total = OVER if self.over.get(marker) == k else None
        step = steps[k] if k < len(steps) else ["text", 100]
        out = self._reasoned(marker, k, self._reply(marker, k, step))
        return out, total

    def _reasoned(self, marker: str, k: int, out: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The reply with the reasoning item the scenario gives this step, first (`scenario`)."""
        how = self.reasoning.get(marker, {}).get(str(k))
        if how is None:
            return out
        tag = f"{marker}s{k}"
        summary = [] if how == "encrypted" else [f"**Reasoning {tag}** " + " ".join(random.Random(tag).choice(WORDS) for _ in range(30))]
        item = {"type": "reasoning", "summary": summary, "encrypted": f"gAAAA{tag}" + "e" * 120}
        return [item] if how == "only" and out[-1]["type"] == "message" else [item, *out]

    def _reply(self, marker: str, k: int, step: list[Any]) -> list[dict[str, Any]]:
        if step[0] == "tool":
            out = []
            for cmd in step[1]:
                self.calls += 1
                out.append({"type": "function_call", "name": "exec_command", "call_id": f"call_d{self.calls:03d}",
                            "arguments": json.dumps({"cmd": cmd})})
            if len(step) > 2:  # a preamble message before the calls
                out.insert(0, {"type": "message", "text": f"{marker} {step[2]}"})
            return out
        text = f"{marker} step {k}: " + " ".join(random.Random(f"{marker}{k}").choice(WORDS) for _ in range(step[1] // 6))
        return [{"type": "message", "text": text}]


def _settled(count: Any, quiet_s: float = 0.2, limit_s: float = 3.0) -> int:
    """The rollout's line count once it has not grown for quiet_s (Codex writes its rollout from
    another task: a line can land a moment after the request it precedes)."""
    n, since, start = count(), time.monotonic(), time.monotonic()
    while time.monotonic() - since < quiet_s and time.monotonic() - start < limit_s:
        time.sleep(0.03)
        m = count()
        if m != n:
            n, since = m, time.monotonic()
    return n


def _size(f: Path | None) -> int:
    return f.stat().st_size if f is not None else 0


class _FailingHandler(_Handler):
    """The fake model's handler, that can also fail a request: an HTTP 500, or a stream cut
    after its first event (no `response.completed`)."""

    def _stream(self, out: list[dict[str, Any]], total: int | None) -> None:
        if not (out and out[0]["type"] == FAIL):
            super()._stream(out, total)
            return
        if out[0]["how"] == "http_500":
            self._json(500, {"error": {"message": "fake summarizer failure", "type": "server_error"}})
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        created = {"type": "response.created", "response": {"id": "resp_cut", "object": "response", "status": "in_progress", "output": []}}
        self.wfile.write(f"event: response.created\ndata: {json.dumps(created)}\n\n".encode())
        self.wfile.flush()


class _Model(FakeModel):
    """FakeModel served by _FailingHandler."""

    def __init__(self, script: Any) -> None:
        ThreadingHTTPServer.__init__(self, ("127.0.0.1", 0), _FailingHandler)
        self.script = script
        self.lock = threading.Lock()
        self.bodies: list[dict[str, Any]] = []
        threading.Thread(target=self.serve_forever, daemon=True).start()


# ------------------------------------------------------------------------------------ one scenario


def compact_thread(thread: str, work: Path, env: dict[str, str], timeout: float = 60) -> tuple[int, str, str]:
    """A manual compaction: `codex app-server` over stdio (JSON-RPC lines), the thread resumed and
    `thread/compact/start` asked, until Codex notifies `thread/compacted` or the turn ends (what
    the TUI's `/compact` asks; `codex exec` sends a `/compact` prompt to the model as it is)."""
    p = subprocess.Popen([str(harness.CODEX), "app-server"], cwd=work, env=env, start_new_session=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert p.stdin is not None and p.stdout is not None
    lines: list[str] = []
    done = threading.Event()

    def read() -> None:
        assert p.stdout is not None
        for line in p.stdout:
            lines.append(line)
            try:
                o = json.loads(line)
            except ValueError:
                continue
            if isinstance(o, dict) and (o.get("method") in ("thread/compacted", "turn/completed") or ("error" in o and "id" in o)):
                done.set()
        done.set()

    threading.Thread(target=read, daemon=True).start()

    def send(o: dict[str, Any]) -> None:
        assert p.stdin is not None
        p.stdin.write(json.dumps(o) + "\n")
        p.stdin.flush()

    send({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "inspector-differential", "version": "0"}}})
    send({"method": "initialized"})
    send({"id": 2, "method": "thread/resume", "params": {"threadId": thread}})
    send({"id": 3, "method": "thread/compact/start", "params": {"threadId": thread}})
    done.wait(timeout)
    time.sleep(0.5)  # the rollout's last lines
    os.killpg(p.pid, signal.SIGKILL)
    _, err = p.communicate(timeout=30)
    return p.returncode, "".join(lines), err


def run(sc: dict[str, Any], out: Path) -> dict[str, Any]:
    """Run one scenario into out/<name>/; returns its result line."""
    d = out / sc["name"]
    d.mkdir(parents=True, exist_ok=True)
    (d / "scenario.json").write_text(json.dumps(sc, indent=1) + "\n")
    home, work, tmp = d / "home", d / "work", d / "tmp"
    chome = home / ".codex"
    for x in (chome, work, tmp):
        x.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(work)], check=True, env={"PATH": "/usr/bin:/bin", "HOME": str(home)})

    def rollout() -> Path | None:
        found = sorted((chome / "sessions").rglob("rollout-*.jsonl")) if (chome / "sessions").exists() else []
        return found[0] if found else None

    def rollout_lines() -> int:
        f = rollout()
        if f is None:
            return 0
        return f.read_bytes().count(b"\n")

    script = Script(sc, rollout_lines)
    lock = threading.Lock()

    def reply(body: dict[str, Any]) -> Reply:
        with lock:
            return script(body)

    srv = _Model(reply)
    config = harness.CONFIG.replace(
        "model_context_window = 100000", f"model_auto_compact_token_limit = {sc['auto_compact_limit']}\nmodel_context_window = 100000"
    )
    (chome / "config.toml").write_text(config.format(url=srv.url))
    env = harness.codex_env(home, d)
    thread: str | None = None
    runs = []
    try:
        for t in sc["turns"]:
            if t.get("compact"):
                if thread is not None:
                    rc, stdout, err = compact_thread(thread, work, env)
                    runs.append({"prompt": "thread/compact/start", "rc": rc, "stderr": err[-300:], "stdout": stdout[-600:]})
                continue
            args = ["exec", "--json", "--skip-git-repo-check"]
            if thread:
                args += ["resume", thread]
            args.append(t["ask"])
            stop = None
            if "kill_at_step" in t:
                before = _size(rollout())

                def stop(before: int = before) -> bool:  # this run's call, not an earlier kill's
                    f = rollout()
                    return f is not None and KILLED.encode() in f.read_bytes()[before:]

            rc, stdout, err = harness.run_codex(args, work, env, timeout=120, stop_when=stop)
            for line in stdout.splitlines():
                try:
                    o = json.loads(line)
                except ValueError:
                    continue
                if isinstance(o, dict) and o.get("type") == "thread.started":
                    thread = o.get("thread_id") or thread
            runs.append({"prompt": t["ask"][:60], "rc": rc, "stderr": err[-300:]})
    finally:
        srv.close()
    f = rollout()
    if f is None:
        raise RuntimeError(f"{sc['name']}: Codex wrote no rollout under {chome}")
    (d / "session.jsonl").write_bytes(f.read_bytes())
    with open(d / "requests.jsonl", "w") as fh:
        for r in script.log:
            # the check reads the input and the base instructions' digest (20k characters a request)
            instructions = r["body"].get("instructions")
            r["body"] = {"input": r["body"].get("input") or [],
                         "instructions_digest": digest(instructions) if instructions else None}
            fh.write(json.dumps(r) + "\n")
    res = {"name": sc["name"], "runs": runs, "requests": len(script.log)}
    (d / "result.json").write_text(json.dumps(res, indent=1) + "\n")
    return res


def run_all(scenarios: list[dict[str, Any]], out: Path) -> Iterator[dict[str, Any]]:
    """Drive Codex through the scenarios (its CLI runs per turn), yielding each one's result line."""
    for sc in scenarios:
        try:
            yield run(sc, out)
        except Exception:
            yield {"name": sc["name"], "crash": traceback.format_exc()}
