"""Drive the real pi 0.73.1 through generated scenarios (issue 16), offline.

pi runs in RPC mode against the scripted OpenAI-compatible model of `../shared/peers/pi/fake_llm.py`
on 127.0.0.1, with the isolation, settings and RPC client of `../shared/peers/pi/generate.py` (its
`run_scenario`, used from there, not copied: scratch HOME, agent dir, session dir, workspace, TMPDIR).
Per scenario, `OUT/<name>/` gets

    scenario.json    the scenario (space.pi_scenario)
    session.jsonl    the session file pi wrote
    requests.jsonl   every request pi sent, in order: kind (agent | summary_initial | summary_update |
                     turn_prefix), turn, step, attempt, status, time, and the messages (the system
                     prompt and tool list are left out: they are not in the session file)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.differential.campaign import REPO

PEER = REPO.parent / "shared" / "peers" / "pi"
PI_PKG = Path(os.environ.get("PI_PKG_DIR") or REPO / ".pi" / "node_modules" / "@mariozechner" / "pi-coding-agent")
VERSION = "0.73.1"


def pi_available() -> str | None:
    """None when the pinned pi and the shared peer harness can be run, else why not."""
    for f in ("generate.py", "fake_llm.py", "context.mjs"):
        if not (PEER / f).is_file():
            return f"{PEER / f} is missing: the pi driver runs the shared peer's harness"
    try:
        version = json.loads((PI_PKG / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return f"pi {VERSION} is not installed at {PI_PKG}: run tests/install_pi.sh"
    if version != VERSION:
        return f"{PI_PKG} holds pi {version}, not {VERSION}: run tests/install_pi.sh"
    if shutil.which("node") is None:
        return "node is not installed: pi needs it"
    return None


SETTLE_S = 90.0  # the longest a prompt or /compact may take before the scenario counts as crashed
# pi's overflow recovery (agent-session.js:1562-1570) retries with agent.continue(), which does
# nothing when the context ends with a successful answer (the "silent overflow" of pi-ai's
# isContextOverflow, utils/overflow.js:122-127): no agent_start follows, so the retry the harness
# waits for is given up once pi has been quiet this long.
NO_RETRY_QUIET_S = 2.0


def _generate() -> Any:
    """The shared peer's generate.py, pointed at the pinned pi of this checkout, its RPC client
    knowing that an overflow retry may never start."""
    from tests.peers.pi_hook.pi_harness import _peer

    gen = _peer()
    gen.PI_PKG = PI_PKG
    gen.PI_CLI = PI_PKG / "dist" / "cli.js"
    if not getattr(gen, "_differential", False):
        base = gen.PiRpc

        class Rpc(base):  # type: ignore[misc, valid-type]
            def wait_settled(self, min_agent_end: int, timeout: float = SETTLE_S, quiet: float = 0.6) -> Any:
                deadline = time.time() + min(timeout, SETTLE_S)
                while True:
                    with self.lock:
                        if self.st["continue_pending"] and time.time() - self.st["last"] > NO_RETRY_QUIET_S:
                            self.st["continue_pending"] = False
                    try:
                        return base.wait_settled(self, min_agent_end, timeout=2.5, quiet=quiet)
                    except TimeoutError:
                        if time.time() > deadline:
                            raise

        gen.PiRpc = Rpc
        gen._differential = True
    return gen


def peer_scenario(sc: dict[str, Any]) -> dict[str, Any]:
    """The scenario in generate.run_scenario's terms: pi settings, the fake model's script, actions."""
    script: dict[str, Any] = {"turns": {t["tag"]: t["script"] for t in sc["turns"]}}
    if sc.get("overflow_errors"):
        script["enforce_context_window"] = sc["pi"]["contextWindow"]
    actions: list[tuple[Any, ...]] = []
    for t in sc["turns"]:
        actions.append(tuple(t["action"]))
        if t["action"][0] == "prompt_kill":  # pi starts again on the same session file
            actions.append(("resume", None))
        if "compact" in t:
            actions.append(("compact", t["compact"]))
    return {"description": sc["name"], "pi": sc["pi"], "script": script, "actions": actions}


def _request(row: dict[str, Any]) -> dict[str, Any]:
    msgs = row["body"].get("messages") or []
    if msgs and msgs[0].get("role") in ("system", "developer"):
        msgs = msgs[1:]
    keep = ("seq", "time", "kind", "turn", "step", "attempt", "mode", "status", "estPromptTokens")
    return {**{k: row.get(k) for k in keep}, "messages": msgs}


def run_one(gen: Any, sc: dict[str, Any], out: Path, scratch: Path) -> None:
    d = out / sc["name"]
    d.mkdir(parents=True, exist_ok=True)
    (d / "scenario.json").write_text(json.dumps(sc, indent=1) + "\n")
    peer_out = scratch / "out"
    gen.run_scenario(sc["name"], peer_scenario(sc), peer_out, scratch, log=lambda _m: None)
    shutil.copyfile(peer_out / f"{sc['name']}.jsonl", d / "session.jsonl")
    raw = scratch / sc["name"] / "requests.raw.jsonl"
    rows = [json.loads(x) for x in raw.read_text().splitlines() if x.strip()]
    (d / "requests.jsonl").write_text("".join(json.dumps(_request(r)) + "\n" for r in rows))


def run_pi(scenarios: list[dict[str, Any]], out: Path) -> Iterator[dict[str, Any]]:
    """Drive pi through the scenarios one after another, yielding each one's result line."""
    gen = _generate()
    os.environ["PI_PKG_DIR"] = str(PI_PKG)  # the peer's context.mjs imports pi from there
    out.mkdir(parents=True, exist_ok=True)
    for sc in scenarios:
        scratch = Path(tempfile.mkdtemp(prefix="pi-diff-"))
        try:
            run_one(gen, sc, out, scratch)
            yield {"name": sc["name"]}
        except (OSError, RuntimeError, TimeoutError, ValueError, subprocess.SubprocessError):
            yield {"name": sc["name"], "crash": traceback.format_exc(limit=4)}
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":  # python -m tests.differential.pi_driver SCENARIOS.json OUT
    for line in run_pi(json.loads(Path(sys.argv[1]).read_text()), Path(sys.argv[2])):
        print(json.dumps(line), flush=True)
