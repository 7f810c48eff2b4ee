"""Drive the real Claude Code 2.1.328 through generated scenarios (issue 16, point 1).

Each scenario is a sequence of CLI runs in print mode (`claude -p PROMPT`, `--resume` after the
first) against the scripted local Messages API of `../shared/peers/claude_code/fake_anthropic.py`
(the peer's `Script`, its replies drawn from the scenario), as tests/peers/claude_code_hook's
harness runs it: a scratch HOME, an environment built from nothing, 127.0.0.1 only. What the
scenario varies: turns; per turn its tool rounds, parallel calls, failing commands and text size,
a round writing a file of 20-100 KB; the window auto-compaction works to (the model's 1M, or
`CLAUDE_CODE_AUTO_COMPACT_WINDOW` 200k / 400k) and which model reply reports a context near it
(Claude Code auto-compacts before its next request: mid tool loop, or before the next prompt);
manual `/compact`; what the summarizer answers (a summary, an empty one, an untagged reply, a reply
cut at max_tokens, an HTTP 400 once, for one attempt's retries or for all of them); a turn stopped
by `--max-turns` before its answer; the CLI killed while a command runs (the next run resumes).

Every request the CLI sends is logged with its body and the number of transcript lines written when
it arrived (`transcript_lines`), so the check can open the transcript as it stood
(`load(..., upto_line=N)`). Per scenario the folder holds scenario.json, session.jsonl (the
transcript), requests.jsonl, result.json.
"""

from __future__ import annotations

import glob
import importlib.util
import io
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.differential import space
from tests.peers.codex_resume.fake_model import open_event_stream

REPO = Path(__file__).resolve().parents[2]
HOOK_HARNESS = REPO / "tests" / "peers" / "claude_code_hook" / "harness.py"
ALLOWED = "Bash Read Write Edit"
KILLED = "timeout 30 tail -f /dev/null"  # the command the CLI is killed in (a bare `sleep 30` it refuses)
WINDOW = 1_000_000  # the model's context window as Claude Code takes it
NEAR_WINDOW = 990_000
SUMMARIZER_PROMPT = "CRITICAL: Respond with TEXT ONLY"  # the head of Claude Code's summarizer prompt  # input tokens reported to make the CLI auto-compact (its window is 1M)
WORDS = ["alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma"]


def _hook_harness() -> Any:
    name = "claude_code_hook_harness"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HOOK_HARNESS)
        assert spec is not None and spec.loader is not None
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


def available() -> str | None:
    """None when the pinned CLI and the peer's fake API are here, else why not."""
    h = _hook_harness()
    try:
        h.check_installed()
        h._fake_anthropic()
    except h.HarnessError as e:
        return str(e)
    return None


# ------------------------------------------------------------------------------------ the space


def _round(rng: random.Random, turn: int, k: int) -> list[list[Any]]:
    calls: list[list[Any]] = []
    for j in range(rng.choice([1, 1, 1, 2, 2, 3])):
        word = rng.choice(WORDS)
        if rng.random() < 0.2:  # a failing command: an is_error result
            cmd = f"ls /nonexistent-{word}-{turn}-{k}-{j}"
        else:
            cmd = f"echo {word}-{turn}-{k}-{j}"
        calls.append(["Bash", {"command": cmd, "description": f"step {turn}.{k}.{j}"}])
    return calls


def scenario(seed: int, index: int) -> dict[str, Any]:
    """The same (seed, index) always gives the same scenario."""
    rng = random.Random(f"claude_code/{seed}/{index}")
    turns: list[dict[str, Any]] = []
    for i in range(rng.randint(1, 4)):
        if turns and rng.random() < 0.15:
            turns.append({"compact": True})
            continue
        steps: list[list[Any]] = [["tool", _round(rng, i, k)] for k in range(rng.choice([0, 1, 1, 2, 3]))]
        steps.append(["text", rng.choice([40, 200, 600, 1500])])
        turn: dict[str, Any] = {
            "marker": f"[P{i}]",
            "ask": f"[P{i}] Task {i}: " + "detail " * rng.choice([0, 3, 30]),
            "steps": steps,
        }
        if rng.random() < 0.3:  # this reply reports a context near the window: auto-compaction next
            turn["near_window_step"] = rng.randrange(len(steps))
        if len(steps) > 2 and rng.random() < 0.2:  # --max-turns stops the turn before its answer
            turn["max_turns"] = rng.randint(1, len(steps) - 2)
        turns.append(turn)
    return {
        "runtime": "claude_code",
        "name": f"cc-s{seed}-{index:04d}",
        "seed": seed,
        "index": index,
        "summarizer": rng.choice(["good", "good", "good", "empty", "plain"]),
        "turns": _thoughts(seed, index, _widened(seed, index, turns)),
        **_summarizer_failure(seed, index),
        **_window(seed, index),
    }


def _widened(seed: int, index: int, turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Kills mid-tool and large rounds, each drawn apart (so the rest of the space stays as it
    was): the CLI killed while a command runs (the call has no result; the next run resumes), and
    a round writing a file of 20-100 KB (a kept round past the 15,000 tokens Claude Code lets its
    summarizer see of it, or not)."""
    kill = random.Random(f"claude_code/{seed}/{index}/kill")
    big = random.Random(f"claude_code/{seed}/{index}/sizes")
    for i, turn in enumerate(turns):
        tools = [k for k, s in enumerate(turn.get("steps", [])) if s[0] == "tool"]
        if tools and big.random() < 0.2:
            k = big.choice(tools)
            size = big.choice([20_000, 55_000, 62_000, 100_000])
            path = f"{{WORKDIR}}/big-{i}-{k}.txt"
            turn["steps"][k][1][0] = ["Write", {"file_path": path, "content": _filler(f"{seed}/{index}/{i}", size)}]
        if tools and kill.random() < 0.12:
            k = kill.choice(tools)
            turn["steps"][k][1][-1] = ["Bash", {"command": KILLED, "description": f"step {i}.{k} (killed)"}]
            turn["kill_at_step"] = k
            turn["steps"] = turn["steps"][: k + 1]
            turn.pop("max_turns", None)
            if turn.get("near_window_step", 0) > k:
                del turn["near_window_step"]
    return turns


def _thoughts(seed: int, index: int, turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Some replies think first (a thinking block with its signature, before the text or the
    calls), a few hold a redacted thinking block, a few answers are thinking only: what a model
    with extended thinking writes, and what Claude Code keeps, strips or sends of each. Drawn
    apart, so the rest of every scenario is what it was before thinking was drawn. A turn's
    `thinking` maps a step (its index, as a string) to "think", "redacted" or "only"."""
    rng = random.Random(f"claude_code/{seed}/{index}/thinking")
    for turn in turns:
        marks = space.thinking_marks(rng, turn.get("steps", []), ((0.30, "think"), (0.04, "redacted")), 0.04)
        if marks:
            turn["thinking"] = marks
    return turns


def _thinking_blocks(how: str, marker: str, step: int) -> list[dict[str, Any]]:
    """The blocks a reply that thinks starts with (`_thoughts`)."""
    tag = f"{marker}s{step}"
    if how == "redacted":
        return [{"type": "redacted_thinking", "data": f"RDT-{tag}-" + "x" * 40}]
    text = f"Thinking about {marker} step {step}. " + _filler(f"think/{tag}", 300)
    return [{"type": "thinking", "thinking": text, "signature": f"sig-{tag}-" + "s" * 60}]


def _window(seed: int, index: int) -> dict[str, Any]:
    """The window auto-compaction works to (`CLAUDE_CODE_AUTO_COMPACT_WINDOW`), or the model's
    1M; drawn apart."""
    rng = random.Random(f"claude_code/{seed}/{index}/window")
    w = rng.choice([None, None, 200_000, 400_000])
    return {} if w is None else {"auto_compact_window": w}


def _filler(tag: str, n: int) -> str:
    return space.prose(tag, n, WORDS)


def _summarizer_failure(seed: int, index: int) -> dict[str, Any]:
    """Which summarizer request fails and how (an HTTP 400 refusal, a reply cut at max_tokens),
    or nothing; drawn apart."""
    rng = random.Random(f"claude_code/{seed}/{index}/summarizer-failure")
    if rng.random() >= 0.2:
        return {}
    how = rng.choice(["http_400", "max_tokens"])
    times = rng.choice([1, 1, 4, 12]) if how == "http_400" else 1  # refused once (retried), an attempt's retries, all
    return {"summarizer_fails": {"request": rng.choice([1, 1, 2]), "how": how, "times": times}}


# ------------------------------------------------------------------------------------ the model


def _summary(kind: str, marker: str, k: int) -> str:
    """The summarizer's k-th reply (numbered: two summaries never read alike)."""
    if kind == "empty":
        return "<analysis>\n</analysis>\n<summary>\n</summary>"
    if kind == "plain":  # no tags: the reply as it is
        return f"Summary {k}: the conversation so far ran scripted prompts up to {marker}."
    return (
        "<analysis>\nThe fake model reviewed the conversation.\n</analysis>\n<summary>\n"
        f"1. Primary Request and Intent (summary {k}): scripted prompts; the latest one was {marker}.\n</summary>"
    )


def _settled(count: Any, quiet_s: float = 0.25, limit_s: float = 3.0, written: Any = None) -> int:
    """The transcript's line count once it has not grown for quiet_s: Claude Code flushes its
    transcript writes a moment after it sends the request they precede (observed: the boundary and
    summary of an auto-compaction, the tool result of a tool round, arrive after the request).
    `written`: says when the request's own last line is in the file, waited for first (up to 10 s:
    on a loaded machine the flush can come later than any quiet spell)."""
    start = time.monotonic()
    while written is not None and not written() and time.monotonic() - start < 10.0:
        time.sleep(0.05)
    n, since, start = count(), time.monotonic(), time.monotonic()
    while time.monotonic() - since < quiet_s and time.monotonic() - start < limit_s:
        time.sleep(0.05)
        m = count()
        if m != n:
            n, since = m, time.monotonic()
    return n


def _last_line_mark(fa: Any, body: dict[str, Any]) -> bytes | None:
    """What the transcript holds once the line with the request's newest message is written: the
    id its last tool result answers, or the start of its last prompt text, as the line writes them
    (a queued prompt's own bookkeeping line, written first, holds the text too, but not so); None
    for what the CLI adds itself (the summarizer prompt, system reminders)."""
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    content = users[-1].get("content") if users else None
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    for b in reversed(blocks):
        if not isinstance(b, dict):
            continue
        if b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
            return b'"tool_use_id":' + json.dumps(b["tool_use_id"]).encode()
        t = b.get("text")
        if b.get("type") == "text" and isinstance(t, str) and t.startswith("[P"):
            return b'"role":"user","content":' + json.dumps(t[:40])[:-1].encode()
    return None


def _script(fa: Any, sc: dict[str, Any], work: str, transcript_lines: Any) -> Any:
    """The peer's Script with the scenario's plans, usage and summaries; every request is stamped
    with how many transcript lines were written when it arrived."""
    plans = {
        t["marker"]: [(s[0], [tuple(c) for c in s[1]] if s[0] == "tool" else s[1]) for s in t["steps"]]
        for t in sc["turns"]
        if "marker" in t
    }
    near = {t["marker"]: t["near_window_step"] for t in sc["turns"] if "near_window_step" in t}
    thinks = {t["marker"]: t["thinking"] for t in sc["turns"] if "thinking" in t}
    script = fa.Script(plans, work)
    own = script.reply
    summaries: list[str] = []

    fails = sc.get("summarizer_fails") or {}

    def reply(body: dict[str, Any]) -> tuple[str, list[dict[str, Any]], str, int]:
        # logged with the body (the server logs the same object)
        mark = _last_line_mark(fa, body)
        written = (lambda: script.transcript_holds(mark)) if mark else None
        body["transcript_lines_at_arrival"] = _settled(transcript_lines, written=written)
        kind, blocks, stop, tokens = own(body)
        msgs = body.get("messages") or []
        if kind == "compact":
            marker, _ = script.current_prompt(msgs[:-1])
            summaries.append(marker)
            text = _summary(sc["summarizer"], marker, len(summaries))
            if fails.get("how") == "max_tokens" and fails.get("request") == len(summaries):
                body["summarizer_failed"] = "max_tokens"  # cut mid summary: no closing tag
                text, stop = text[: max(20, len(text) * 2 // 3)], "max_tokens"
            blocks = [{"type": "text", "text": text}]
        elif kind == "main":
            marker, step = script.current_prompt(msgs)
            if near.get(marker) == step:
                tokens = sc.get("auto_compact_window", WINDOW) - (WINDOW - NEAR_WINDOW)
            how = thinks.get(marker, {}).get(str(step))
            if how == "only" and stop == "end_turn":
                blocks, how = [], "think"
            if how is not None:
                blocks = _thinking_blocks(how, marker, step) + blocks
            if any(b.get("type") == "tool_use" and (b.get("input") or {}).get("command") == KILLED for b in blocks):
                script.kill_pending = True
        return kind, blocks, stop, tokens

    classify = script.classify

    def classify_continued(body: dict[str, Any]) -> str:
        """A summarizer request continued after its reply hit max_tokens ends with Claude Code's
        own "Output token limit hit" prompt: still the summarizer's."""
        users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
        if any(SUMMARIZER_PROMPT in fa._text_of(m.get("content")) for m in users[-2:-1]):
            return "compact"
        return classify(body)

    script.classify = classify_continued
    script.reply = reply
    script.kill_pending = False
    script.transcript_lines = transcript_lines
    return script


def _refusing_handler(fa: Any, sc: dict[str, Any]) -> type:
    """The peer's request handler, answering the summarizer request the scenario fails with an
    HTTP 400 (Claude Code does not retry it), logged as the peer logs the others."""
    fails = sc.get("summarizer_fails") or {}
    seen = [0]

    class Refusing(fa.Handler):  # type: ignore[misc, name-defined]
        def do_POST(self) -> None:
            n = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(n) if n else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
            script = self.server.script
            if self.path.split("?")[0].endswith("/v1/messages") and script.classify(body) == "compact":
                seen[0] += 1
                if fails.get("how") == "http_400" and fails["request"] <= seen[0] < fails["request"] + fails.get("times", 1):
                    mark = _last_line_mark(fa, body)
                    written = (lambda: script.transcript_holds(mark)) if mark else None
                    body["transcript_lines_at_arrival"] = _settled(script.transcript_lines, written=written)
                    body["summarizer_failed"] = "http_400"
                    self._log({"method": "POST", "path": self.path, "kind": "compact", "body": body})
                    error = {"type": "invalid_request_error", "message": "fake: the summarizer refuses"}
                    self._send_json(400, {"type": "error", "error": error})
                    return
            if self.path.split("?")[0].endswith("/v1/messages"):
                self._answer(body)
                return
            self.rfile = io.BytesIO(raw)
            super().do_POST()

        def _answer(self, body: dict[str, Any]) -> None:
            """The peer's answer (logged as it logs it, the body kept), streamed with the block
            types the peer does not stream: thinking (its text, then its signature) and redacted
            thinking, as the Messages API streams them."""
            kind, blocks, stop, in_tokens = self.server.script.reply(body)
            self._log({
                "method": "POST", "path": self.path, "kind": kind, "model": body.get("model"),
                "stream": bool(body.get("stream")), "n_messages": len(body.get("messages") or []),
                "reply_blocks": [b["type"] for b in blocks], "stop_reason": stop, "body": body,
            })  # fmt: skip
            msg_id = "msg_fake_" + os.urandom(10).hex()
            model = body.get("model") or "claude-fake"
            usage = {"input_tokens": in_tokens, "output_tokens": max(1, len(json.dumps(blocks)) // 4),
                     "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}  # fmt: skip
            if not body.get("stream"):
                message = {"id": msg_id, "type": "message", "role": "assistant", "model": model, "content": blocks,
                           "stop_reason": stop, "stop_sequence": None, "usage": usage}  # fmt: skip
                self._send_json(200, message)
                return
            open_event_stream(self)
            start = {"id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
                     "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}  # fmt: skip
            events: list[tuple[str, dict[str, Any]]] = [("message_start", {"message": start}), ("ping", {})]
            for i, b in enumerate(blocks):
                events += [(name, {"index": i, **data}) for name, data in _block_events(b)]
            events += [
                ("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": usage["output_tokens"]}}),
                ("message_stop", {}),
            ]  # fmt: skip
            for name, data in events:
                self.wfile.write(f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode())
                self.wfile.flush()

    return Refusing


def _block_events(b: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """One content block as the Messages API streams it: its start, its deltas, its stop."""
    t = b["type"]
    if t == "text":
        text = b["text"]
        head, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": text[k : k + 400]} for k in range(0, len(text), 400)]
    elif t == "thinking":
        text = b["thinking"]
        head = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": text[k : k + 400]} for k in range(0, len(text), 400)]
        deltas.append({"type": "signature_delta", "signature": b["signature"]})
    elif t == "tool_use":
        js = json.dumps(b["input"])
        head = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": js[k : k + 64]} for k in range(0, len(js), 64)]
    else:  # redacted thinking: whole at its start
        head, deltas = b, []
    return [
        ("content_block_start", {"content_block": head}),
        *(("content_block_delta", {"delta": d}) for d in deltas),
        ("content_block_stop", {}),
    ]


# ------------------------------------------------------------------------------------ one scenario


def run(sc: dict[str, Any], out: Path) -> dict[str, Any]:
    """Run one scenario into out/<name>/; returns its result line."""
    h = _hook_harness()
    fa = h._fake_anthropic()
    d = out / sc["name"]
    d.mkdir(parents=True, exist_ok=True)
    (d / "scenario.json").write_text(json.dumps(sc, indent=1) + "\n")
    home, work, tmp = (str(d / x) for x in ("home", "work", "tmp"))
    for x in (home, work, tmp):
        os.makedirs(x, exist_ok=True)
    os.makedirs(os.path.join(home, ".claude"), exist_ok=True)
    subprocess.run(["git", "init", "-q", work], check=True, env={"PATH": "/usr/bin:/bin", "HOME": home})

    def transcript() -> str | None:
        found = [f for f in glob.glob(os.path.join(home, ".claude", "projects", "*", "*.jsonl"))]
        return found[0] if found else None

    def transcript_lines() -> int:
        f = transcript()
        if f is None:
            return 0
        with open(f, "rb") as fh:
            return sum(1 for line in fh if line.endswith(b"\n"))

    def transcript_holds(mark: bytes) -> bool:
        f = transcript()
        return f is not None and mark in Path(f).read_bytes()

    log = d / "requests.raw.jsonl"
    script = _script(fa, sc, work, transcript_lines)
    script.transcript_holds = transcript_holds
    srv = fa.FakeServer(script, str(log), keep_bodies=True)
    srv.RequestHandlerClass = _refusing_handler(fa, sc)
    srv.start()
    env = h.child_env(home, srv.url, tmp)
    if "auto_compact_window" in sc:
        env["CLAUDE_CODE_AUTO_COMPACT_WINDOW"] = str(sc["auto_compact_window"])
    sid: str | None = None
    runs = []
    try:
        for t in sc["turns"]:
            prompt = "/compact" if t.get("compact") else t["ask"]
            args = ["-p", prompt, "--output-format", "stream-json", "--verbose", "--allowedTools", ALLOWED]
            if sid:
                args += ["--resume", sid]
            if "max_turns" in t:
                args += ["--max-turns", str(t["max_turns"])]
            rc, stdout, err = _run_cli(h, script, args, work, env)
            for line in stdout.splitlines():
                try:
                    sid = json.loads(line).get("session_id") or sid
                except (ValueError, AttributeError):
                    continue
            runs.append({"prompt": prompt[:60], "rc": rc, "stderr": err[-300:]})
    finally:
        h.stop_server(srv)
    f = transcript()
    if f is None:
        raise RuntimeError(f"{sc['name']}: Claude Code wrote no transcript under {home}")
    (d / "session.jsonl").write_bytes(Path(f).read_bytes())
    reqs = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
    with open(d / "requests.jsonl", "w") as fh:
        for r in reqs:
            if r.get("kind") in ("main", "compact", "side"):
                r["transcript_lines"] = r["body"].pop("transcript_lines_at_arrival")
                if r["body"].get("summarizer_failed"):
                    r["summarizer_failed"] = r["body"]["summarizer_failed"]
                r["body"] = {"messages": r["body"].get("messages") or []}  # the check reads only these
                fh.write(json.dumps(r) + "\n")
    log.unlink(missing_ok=True)
    res = {"name": sc["name"], "runs": runs, "requests": len(reqs)}
    (d / "result.json").write_text(json.dumps(res, indent=1) + "\n")
    return res


def _run_cli(h: Any, script: Any, args: list[str], cwd: str, env: dict[str, str]) -> tuple[int, str, str]:
    """One CLI run, as the hook harness runs it; killed (its process group, which this started)
    a moment after the model asked for the command the scenario kills it in, while it runs."""
    p = subprocess.Popen(
        [h.CLAUDE, *args], cwd=cwd, env=env, start_new_session=True, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    script.kill_pending = False
    deadline = time.monotonic() + h.RUN_TIMEOUT_S
    while p.poll() is None and time.monotonic() < deadline:
        if script.kill_pending:
            time.sleep(1.5)  # the command has started (and the call's line is written)
            os.killpg(p.pid, signal.SIGKILL)
            script.kill_pending = False
            break
        time.sleep(0.05)
    if p.poll() is None and not script.kill_pending and time.monotonic() >= deadline:
        os.killpg(p.pid, signal.SIGKILL)
    out, err = p.communicate(timeout=30)
    return p.returncode, out, err


# Lines our reader does not interpret and that make a transcript large: Claude Code's record of
# each request's shape and blobs, and the prompt snapshot it attaches (the system prompt, verbatim).
_BULKY = ("api-request-shape", "api-request-blob", "api-request")
_KEEP_KEYS = ("type", "subtype", "uuid", "parentUuid", "isSidechain", "timestamp", "sessionId")


def trim_for_fixture(session: Path) -> None:
    """Cut the bulky lines of a kept transcript to their type and links, line for line (the
    requests name lines by number), so a fixture stays small; every other line is as written."""
    out = []
    for raw in session.read_bytes().splitlines(keepends=True):
        try:
            o = json.loads(raw)
        except ValueError:
            out.append(raw)
            continue
        att = o.get("attachment") if isinstance(o, dict) else None
        if isinstance(o, dict) and (
            o.get("type") in _BULKY or (isinstance(att, dict) and att.get("type") == "prompt_snapshot")
        ):
            small = {k: o[k] for k in _KEEP_KEYS if k in o}
            small["trimmed_for_fixture"] = True
            raw = json.dumps(small).encode() + b"\n"
        out.append(raw)
    session.write_bytes(b"".join(out))
