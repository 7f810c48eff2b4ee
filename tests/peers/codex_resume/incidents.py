"""Codex incident rollouts (issue 14 §4), written by the real Codex CLI 0.169.0 against a scripted
fake model, saved as tests/peers/codex_resume/sessions/<name>.jsonl.

    PYTHONPATH=. python3 -m tests.peers.codex_resume.incidents   # ~10 s, rewrites sessions/

Each session: `codex exec` runs a first prompt (`[I1]`: one exec_command, then a text reply), then
`codex exec resume <thread>` runs the next ones; the fake model reports 60,000 tokens for a reply
(over `model_auto_compact_token_limit` = 15,000), so Codex compacts before the next turn and asks
the fake model for the summary, which the script answers as the incident needs:

- `codex_empty_summary`: the summarizer replies with an empty text (an amnesiac fallback: Codex
  writes its summary prefix and nothing after it).
- `codex_killed_mid_tool`: the turn's exec_command runs `sleep 30` and Codex is killed (SIGKILL)
  as soon as the call is in the rollout: the call has no output.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.peers.codex_resume import resume as harness
from tests.peers.codex_resume.fake_model import FakeModel, Reply, Script, input_text, is_compaction

SESSIONS = harness.HERE / "sessions"
SCRATCH = Path("/tmp/inspector-codex-incidents")
BIG = 60_000  # reported for the reply that makes Codex compact next
EMPTY = ""


def _marker(body: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The newest `[In]` user prompt and the items after it."""
    items = body.get("input") or []
    for k in range(len(items) - 1, -1, -1):
        it = items[k]
        if it.get("type", "message") == "message" and it.get("role") == "user":
            t = input_text(it)
            if t.startswith("[I"):
                return t[: t.index("]") + 1], items[k + 1 :]
    return "[?]", []


def script(summary: str, tools: dict[str, str], big: str) -> Script:
    """Each prompt: its command (TOOLS) first if it has one, then a text reply; the reply to BIG
    reports BIG tokens; the summarizer is answered with SUMMARY."""
    def reply(body: dict[str, Any]) -> Reply:
        if is_compaction(body):
            return [{"type": "message", "text": summary}], None
        marker, after = _marker(body)
        ran = any(it.get("type") == "function_call_output" for it in after)
        if marker in tools and not ran:
            return [{"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": tools[marker]})}], None
        return [{"type": "message", "text": f"{marker} done (fake model)."}], BIG if marker == big else None
    return reply


INCIDENTS: dict[str, tuple[Script, list[str], str | None]] = {
    # name: (script, prompts, kill when this text is in the rollout)
    "codex_empty_summary": (
        script(EMPTY, {"[I1]": "echo one"}, "[I2]"),
        ["[I1] Say one with the shell.", "[I2] What did the shell say?", "[I3] Thanks, go on."], None),
    "codex_killed_mid_tool": (
        script("unused", {"[I1]": "echo one", "[I2]": "sleep 30"}, ""),
        ["[I1] Say one with the shell.", "[I2] Wait half a minute in the shell."], '"type":"function_call"'),
}


def _rollout(chome: Path) -> Path:
    (f,) = sorted((chome / "sessions").rglob("rollout-*.jsonl"))
    return f


def generate(name: str) -> Path:
    sc, prompts, kill_on = INCIDENTS[name]
    scratch = SCRATCH / name
    shutil.rmtree(scratch, ignore_errors=True)
    home, work = scratch / "home", scratch / "work"
    chome = home / ".codex"
    for d in (chome, work, scratch / "tmp"):
        d.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(work)], check=True, env={"PATH": "/usr/bin:/bin", "HOME": str(home)})
    srv = FakeModel(sc)
    try:
        config = harness.CONFIG.format(url=srv.url).replace("model_context_window", "model_auto_compact_token_limit = 15000\nmodel_context_window")
        (chome / "config.toml").write_text(config)
        env = harness.codex_env(home, scratch)
        thread = None
        for n, prompt in enumerate(prompts):
            last = n == len(prompts) - 1
            args = ["exec", "--json", "--skip-git-repo-check", *(["resume", thread] if thread else []), prompt]

            def stop(chome: Path = chome, kill_on: str | None = kill_on) -> bool:
                found = list((chome / "sessions").rglob("rollout-*.jsonl"))
                tail = found[0].read_text().splitlines()[-3:] if found else []
                return kill_on is not None and any(kill_on in x and "sleep" in x for x in tail)

            code, out, err = harness.run_codex(args, work, env, 120, stop if last and kill_on else None)
            if not (last and kill_on):
                assert code == 0, (name, prompt, err[-1500:])
            if thread is None:
                thread = json.loads(out.splitlines()[0])["thread_id"]
    finally:
        srv.close()
    dest = SESSIONS / f"{name}.jsonl"
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_rollout(chome), dest)
    return dest


def main() -> None:
    for name in INCIDENTS:
        f = generate(name)
        print(f"{f}: {len(f.read_bytes().splitlines())} lines")


if __name__ == "__main__":
    main()
