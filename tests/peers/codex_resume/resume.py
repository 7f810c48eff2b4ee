"""Resume a rollout with the real Codex CLI and capture the first request it sends.

`resume(rollout, prompt, scratch)` copies the rollout into a scratch CODEX_HOME
(`sessions/YYYY/MM/DD/rollout-<ts>-<thread id>.jsonl`, where Codex looks sessions up), runs
`codex exec --json --skip-git-repo-check resume <thread id> "<prompt>"` against `FakeModel` on
127.0.0.1 with the environment built from nothing (as ../shared/peers/codex/generate.py does:
plugins, apps, web search, updates, analytics and feedback off, so the CLI talks to nothing but the
fake), and returns every request body the CLI sent, its exit code and stderr.

The Codex binary is the one tests/install_codex.sh installs (pinned 0.169.0).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.peers.codex_resume.fake_model import FakeModel, Script, text_reply

HERE = Path(__file__).resolve().parent
CODEX_VERSION = "0.169.0"
CODEX = HERE / "runtime" / "node_modules" / "@openai" / "codex-linux-x64" / "vendor" / "x86_64-unknown-linux-musl" / "bin" / "codex"

CONFIG = """model = "fake-model"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
model_context_window = 100000
check_for_update_on_startup = false
web_search = "disabled"

[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false
remote_plugin = false
plugin_sharing = false
apps = false
in_app_updates = false
daemon_auto_start = false
browser_use = false
browser_use_external = false
in_app_browser = false
computer_use = false

[model_providers.fake]
name = "Fake"
base_url = "{url}/v1"
env_key = "FAKE_OPENAI_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"""


@dataclass
class Resumed:
    requests: list[dict[str, Any]]  # every /responses body, in order
    returncode: int
    stderr: str
    stdout: str


def installed_version() -> str | None:
    """`codex --version`'s version, or None when the binary is missing or does not run."""
    if not CODEX.exists():
        return None
    try:
        out = subprocess.run([str(CODEX), "--version"], capture_output=True, text=True, timeout=60,
                             env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}, check=False).stdout
    except OSError:
        return None
    return out.split()[-1] if out.split() else None


def provider_of(rollout: Path) -> str | None:
    """The provider ROLLOUT's thread runs on: its newest `thread_settings_applied` event's
    `model_provider_id` (newer Codex writes one), else its session_meta's `model_provider`."""
    found = None
    with open(rollout, "rb") as f:
        for raw in f:
            if b"model_provider" not in raw:
                continue
            try:
                p = json.loads(raw).get("payload") or {}
            except (ValueError, AttributeError):
                continue
            v = (p.get("thread_settings") or {}).get("model_provider_id") if p.get("type") == "thread_settings_applied" else p.get("model_provider")
            found = v if isinstance(v, str) else found
    return found


def config_for(rollout: Path, url: str) -> str:
    """CONFIG for resuming ROLLOUT against the fake at URL. A thread of the built-in `openai`
    provider (real rollouts are) is refused by Codex under another ("Cannot change this thread's
    model provider from `openai` to `fake` on resume", no request): it resumes with that provider,
    its base URL moved to the fake (`openai_base_url`; no key needed there). Codex then tries a
    Responses WebSocket first (the fake has none: a few seconds of retries), then posts as usual."""
    text = CONFIG.format(url=url)
    if provider_of(rollout) == "openai":
        text = text.replace('model_provider = "fake"', f'model_provider = "openai"\nopenai_base_url = "{url}/v1"')
    return text


def thread_of(rollout: Path) -> tuple[str, str]:
    """(thread id, the session_meta timestamp) of a rollout: its first line."""
    with open(rollout, "rb") as f:
        head = json.loads(f.readline())
    p = head["payload"]
    return p["id"], p.get("timestamp") or head["timestamp"]


def codex_env(home: Path, scratch: Path) -> dict[str, str]:
    """The environment Codex runs in, built from nothing: the fake model is its only peer."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "CODEX_HOME": str(home / ".codex"),
            "LANG": "C.UTF-8", "TERM": "dumb", "FAKE_OPENAI_KEY": "sk-fake-local-000",
            "NO_PROXY": "127.0.0.1,localhost", "RUST_LOG": "error", "TMPDIR": str(scratch / "tmp")}


def run_codex(args: list[str], work: Path, env: dict[str, str], timeout: float,
              stop_when: Callable[[], bool] | None = None) -> tuple[int, str, str]:
    """Run `codex ARGS` in WORK; killed (its whole process group, SIGKILL) after TIMEOUT seconds or
    as soon as STOP_WHEN says so (checked every 50 ms). Its exit code, stdout and stderr."""
    p = subprocess.Popen([str(CODEX), *args], cwd=work, env=env, start_new_session=True, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    note = ""
    while stop_when is not None and p.poll() is None:
        if stop_when():
            os.killpg(p.pid, signal.SIGKILL)
            note = "\n[harness] killed when asked"
            break
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    try:
        out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate(timeout=30)
        note = f"\n[harness] killed after {timeout:.0f} s"
    return p.returncode, out, err + note


def resume(rollout: Path, prompt: str, scratch: Path, timeout: float = 120, script: Script = text_reply) -> Resumed:
    thread, ts = thread_of(rollout)
    home = scratch / "home"
    chome = home / ".codex"
    work = scratch / "work"
    day = chome / "sessions" / ts[0:4] / ts[5:7] / ts[8:10]
    day.mkdir(parents=True)
    work.mkdir()
    (scratch / "tmp").mkdir()
    stamp = ts[:19].replace(":", "-")
    shutil.copyfile(rollout, day / f"rollout-{stamp}-{thread}.jsonl")
    subprocess.run(["git", "init", "-q", str(work)], check=True, env={"PATH": "/usr/bin:/bin", "HOME": str(home)})
    srv = FakeModel(script)
    try:
        (chome / "config.toml").write_text(config_for(rollout, srv.url))
        args = ["exec", "--json", "--skip-git-repo-check", "resume", thread, prompt]
        code, out, err = run_codex(args, work, codex_env(home, scratch), timeout)
        with srv.lock:
            bodies = list(srv.bodies)
    finally:
        srv.close()
    return Resumed(bodies, code, err, out)
