#!/usr/bin/env python3
"""Resume variants of the corpus store with the real OpenClaw and compare, item for item, what it sent
with inspector's next request as OpenClaw shapes it (merges, the bootstrap message, a trailing user
message moved into the prompt: inspector/formats/openclaw_turns.py; heartbeats: openclaw_heartbeat).

    python -m tests.peers.openclaw.turns_probe [--only NAME ...] [--workers 2] [--keep DIR | --recheck DIR]

Each variant is the corpus's `s1.sqlite` with rows appended (a new root, or under its leaf), resumed
for one turn (~10-25 s each, two at a time: all of them ~10 min). A variant agrees when
`tests.test_openclaw.sent_as_predicted` holds: every message OpenClaw sent before the prompt's is the
predicted one (role, texts, calls, dates), and the prompt's message starts with the moved trailing
message when one is predicted. Variants named `provider-*` configure the scripted model under another
provider id (the store's answers say the same provider): OpenClaw's plugin for it then owns the
transcript policy. tests/test_openclaw_turns.py resumes one store holding every case on each run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.peers.openclaw.generate import STORE_IN_HOME, offline_openclaw, run_turn
from tests.peers.openclaw.resume import NotInstalled, resume
from tests.peers.openclaw.type_probe import BASE, LEAF
from tests.test_openclaw_failed_turns import CALL, answer, append, result, user
from tests.test_openclaw_heartbeat import POLL, SPANS, calling, compaction, custom
from tests.test_openclaw_runtime_context import runtime_context
from tests.test_openclaw_turns import SHAPES, later, rows, said

Rows = list[dict[str, Any]]


def _nested(eid: str, parent: str) -> dict[str, Any]:
    """A nested-tool record (`excludeFromContext`: never replayed)."""
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": "2026-12-02T09:00:00.000Z",
            "message": {"role": "custom", "customType": "openclaw.nested-tool.v1", "content": "", "display": True,
                        "excludeFromContext": True, "details": {}, "timestamp": 1796202000000}}  # fmt: skip


def _extension(eid: str, parent: str) -> dict[str, Any]:
    return {"type": "custom_message", "customType": "other.note", "content": "EXTENSION-NOTE", "display": True,
            "id": eid, "parentId": parent, "timestamp": "2026-12-02T09:00:00.000Z"}  # fmt: skip


def _parts(eid: str, parent: str) -> dict[str, Any]:
    o = user(eid, parent, "")
    o["message"]["content"] = [{"type": "text", "text": f"  {eid}-PART1 "}, {"type": "text", "text": ""}, {"type": "text", "text": f"{eid}-PART2"}]
    return o


def _string(eid: str, parent: str) -> dict[str, Any]:
    o = user(eid, parent, "")
    o["message"]["content"] = f"{eid}-STRING"
    return o


def _failed_call(eid: str, parent: str) -> dict[str, Any]:
    return answer(eid, parent, [{"type": "text", "text": f"{eid}-TEXT"}, {**CALL, "id": f"call{eid}"}], "error")


def _reset(eid: str, parent: str, first_kept: str) -> dict[str, Any]:
    return {"type": "reset", "id": eid, "parentId": parent, "timestamp": "2026-12-02T09:00:00.000Z", "reason": "reset", "firstKeptEntryId": first_kept}


def _with_provider(chain: Rows, provider: str) -> Rows:
    out = json.loads(json.dumps(chain))
    for o in out:
        m = o.get("message")
        if isinstance(m, dict) and m.get("role") == "assistant":
            m["provider"] = provider
    return out


def _shape_variants() -> dict[str, Rows]:
    u, a = user, said
    return {
        "shapes": SHAPES,
        "two users": rows(LEAF, (u, "u1", "U1"), (later, "u2", "U2"), (a, "a2", "A2")),
        "three users, a string and parts": rows(LEAF, (u, "u1", "U1"), (_string, "u2"), (_parts, "u3"), (a, "a3", "A3")),
        "two answers after the corpus's": rows(LEAF, (a, "a1", "A1"), (a, "a2", "A2"), (u, "u2", "U2"), (a, "a3", "A3")),
        "answers, the last with a call": rows(LEAF, (u, "u1", "U1"), (a, "a1", "A1"), (calling, "a2"), (result, "r2", CALL["id"]), (a, "a3", "A3")),
        "a trailing user message": rows(LEAF, (u, "u1", "U1"), (a, "a1", "A1"), (_parts, "u2")),
        "two trailing user messages": rows(LEAF, (u, "u1", "U1"), (a, "a1", "A1"), (u, "u2", "U2"), (u, "u3", "U3")),
        "a trailing user message after calls": rows(LEAF, (u, "u1", "U1"), (calling, "a1"), (u, "u2", "U2")),
        "a new root: an answer first": rows(None, (a, "a0", "A0"), (u, "u1", "U1"), (a, "a1", "A1")),
        "a new root: two answers first": rows(None, (a, "a0", "A0"), (a, "a1", "A1"), (u, "u1", "U1"), (a, "a2", "A2")),
        "a new root: a user message only": rows(None, (u, "u0", "U0")),
        "a reset keeping an answer first": rows(LEAF, (u, "u1", "U1"), (a, "a1", "A1"), (u, "u2", "U2"), (a, "a2", "A2"), (_reset, "r1", "a1"), (u, "u3", "U3"), (a, "a3", "A3")),
        "a compaction keeping an answer first": rows(LEAF, (u, "u1", "U1"), (a, "a1", "A1"), (u, "u2", "U2"), (a, "a2", "A2"), (compaction, "c1", "a1"), (u, "u3", "U3"), (a, "a3", "A3")),
        "runtime context between users": rows(LEAF, (u, "u1", "U1"), (runtime_context, "r1"), (u, "u2", "U2"), (a, "a2", "A2")),
        "runtime context after users": rows(LEAF, (u, "u1", "U1"), (u, "u2", "U2"), (runtime_context, "r2"), (a, "a2", "A2")),
        "an extension message between users": rows(LEAF, (u, "u1", "U1"), (_extension, "x1"), (u, "u2", "U2"), (a, "a2", "A2")),
        "a nested-tool record between answers": rows(LEAF, (u, "u1", "U1"), (a, "a1", "A1"), (_nested, "n1"), (a, "a2", "A2"), (u, "u2", "U2"), (a, "a3", "A3")),
        "a silent answer between users": rows(LEAF, (u, "u1", "U1"), (a, "q1", "NO_REPLY"), (u, "u2", "U2"), (a, "a2", "A2")),
        "an aborted blank answer between users": rows(LEAF, (u, "u1", "U1"), (a, "b1", "", "aborted"), (u, "u2", "U2"), (a, "a2", "A2")),
        "a failed call between users": rows(LEAF, (u, "u1", "U1"), (_failed_call, "f1"), (u, "u2", "U2"), (a, "a2", "A2")),
        "an answer then a failed call": rows(LEAF, (u, "u1", "U1"), (a, "a1", "A1"), (_failed_call, "f1"), (u, "u2", "U2"), (a, "a2", "A2")),
        "failed then not, not then failed": rows(LEAF, (u, "u1", "U1"), (a, "e1", "E1", "error"), (a, "a1", "A1"), (u, "u2", "U2"), (a, "a2", "A2"), (a, "e2", "E2", "aborted"), (u, "u3", "U3"), (a, "a3", "A3")),
        "two failed answers": rows(LEAF, (u, "u1", "U1"), (a, "e1", "E1", "error"), (a, "e2", "E2", "error"), (u, "u2", "U2"), (a, "a2", "A2")),
    }  # fmt: skip


def _heartbeat_variants() -> dict[str, Rows]:
    """SPANS (every heartbeat rule in one store) cut after each of its user messages (that message
    trailing: moved into the prompt, not filtered) and whole, and heartbeats next to merges."""
    out: dict[str, Rows] = {"heartbeats": SPANS}
    for k, row in enumerate(SPANS):
        if row.get("message", {}).get("role") == "user" and k + 1 < len(SPANS):
            out[f"heartbeats up to {row['id']}"] = SPANS[: k + 1]
    u, a = user, said
    out["a user message then a poll"] = rows(LEAF, (u, "u1", "U1"), (u, "p1", POLL), (a, "k1", "HEARTBEAT_OK"), (u, "u2", "U2"), (a, "a2", "A2"))
    out["a poll then an answer then an ack"] = rows(LEAF, (u, "p1", POLL), (a, "a1", "Checking."), (a, "k1", "HEARTBEAT_OK"), (u, "u2", "U2"), (a, "a2", "A2"))
    out["a poll with its context between users"] = rows(LEAF, (u, "u1", "U1"), (runtime_context, "r1"), (u, "p2", POLL), (runtime_context, "r2"), (a, "k2", "HEARTBEAT_OK"), (u, "u3", "U3"), (a, "a3", "A3"))
    out["a poll after another custom message"] = rows(LEAF, (u, "u1", "U1"), (a, "a1", "A1"), (custom, "x1"), (u, "p2", POLL), (a, "k2", "HEARTBEAT_OK"), (u, "u3", "U3"), (a, "a3", "A3"))
    return out  # fmt: skip


def _provider_variants() -> dict[str, tuple[Rows, str]]:
    """SHAPES with its answers of another provider, run under that provider id: OpenAI's plugin
    merges nothing and adds no bootstrap; Anthropic's merges (answers and user messages) and adds none."""
    return {f"provider-{p}": (_with_provider(SHAPES, p), p) for p in ("openai", "anthropic")}


def variants() -> dict[str, tuple[Rows, str]]:
    out = {name: (chain, "fake") for name, chain in {**_shape_variants(), **_heartbeat_variants()}.items()}
    return {**out, **_provider_variants()}


def resume_as(store: Path, message: str, scratch: Path, provider: str) -> tuple[int, list[dict[str, Any]]]:
    """`resume.resume` with the scripted model configured under `provider` (generate.py's
    configuration, its provider renamed: the harness the recorded probes are keyed on is untouched)."""
    if provider == "fake":
        return resume(store, "s1", message, scratch)
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    with offline_openclaw(scratch, {"turns": {}}) as (env, ws, raw):
        conf = scratch / "home" / ".openclaw" / "openclaw.json"
        c = json.loads(conf.read_text())
        c["models"]["providers"] = {provider: c["models"]["providers"]["fake"]}
        c["agents"]["defaults"]["model"]["primary"] = f"{provider}/fake-model"
        conf.write_text(json.dumps(c, indent=2))
        target = scratch / "home" / STORE_IN_HOME
        target.parent.mkdir(parents=True)
        shutil.copyfile(store, target)
        rc = run_turn(env, ws, message, scratch / "openclaw.stderr.log", session_id="s1")
    reqs = [json.loads(x) for x in raw.read_text(encoding="utf-8").splitlines()] if raw.exists() else []
    return rc, reqs


MESSAGE = "[turn:tp1] and now?"


def _slug(name: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in name)


def probe(name: str, chain: Rows, provider: str, out: Path) -> tuple[str, str]:
    """(agree | differ | failed, why) of one variant, resumed with the real OpenClaw."""
    path = out / f"{_slug(name)}.sqlite"
    shutil.copyfile(BASE, path)
    append(path, chain)
    rc, reqs = resume_as(path, MESSAGE, out / f"scratch-{_slug(name)}", provider)
    return verdict(path, rc, reqs)


def verdict(path: Path, rc: int, reqs: list[dict[str, Any]]) -> tuple[str, str]:
    """Whether OpenClaw's first chat request (of REQS, its exit code RC) is inspector's prediction of PATH."""
    from inspector.analysis import analyze
    from inspector.formats import load
    from tests.test_openclaw import sent_as_predicted
    from tests.test_openclaw_accepts import _first_agent_request

    # (under OpenAI's provider id its memory plugin asks the scripted server for embeddings first: no chat request)
    reqs = [r for r in reqs if "messages" in r["body"]]
    if rc != 0 or not [r for r in reqs if r["kind"] == "agent"]:
        return "failed", f"openclaw exited {rc} after {len(reqs)} request(s)"
    try:
        sent_as_predicted(_first_agent_request(reqs), analyze(load(str(path))), MESSAGE)
    except Exception as e:  # (an assertion, or a comparison that could not be made: a difference all the same)
        return "differ", f"{type(e).__name__}: " + " ".join(str(e).split())[:600]
    return "agree", ""


def recheck(kept: Path) -> list[tuple[str, str, str]]:
    """Each variant kept by `--keep` in KEPT compared again with inspector's prediction as it is now
    (OpenClaw not run: what it sent then is read from its scratch folder)."""
    out = []
    for name in variants():
        log = kept / f"scratch-{_slug(name)}" / "requests.raw.jsonl"
        if log.exists():
            reqs = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()]
            out.append((name, *verdict(kept / f"{_slug(name)}.sqlite", 0, reqs)))
    return out


def run(out: Path, only: Sequence[str] | None = None, workers: int = 2) -> list[tuple[str, str, str]]:
    todo = [(n, c, p) for n, (c, p) in variants().items() if only is None or n in only]
    missing = set(only or ()) - {n for n, _, _ in todo}
    assert not missing, f"no such variants: {sorted(missing)}"

    def one(t: tuple[str, Rows, str]) -> tuple[str, str]:
        return probe(*t, out)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return [(n, *r) for (n, _, _), r in zip(todo, pool.map(one, todo), strict=True)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="run only the variants of these names")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--keep", help="keep the stores and OpenClaw's scratch folders in this folder")
    ap.add_argument("--recheck", help="compare what OpenClaw sent in a folder --keep filled with inspector's prediction now")
    a = ap.parse_args()
    t0 = time.time()
    try:
        if a.recheck:
            results = recheck(Path(a.recheck))
        elif a.keep:
            Path(a.keep).mkdir(parents=True, exist_ok=True)
            results = run(Path(a.keep), a.only, a.workers)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                results = run(Path(tmp), a.only, a.workers)
    except NotInstalled as e:
        print(f"turns_probe: {e}", file=sys.stderr)
        return 2
    for name, verdict, why in results:
        print(f"{verdict:7} {name}" + (f": {why}" if why else ""))
    n = sum(v == "agree" for _, v, _ in results)
    print(f"{n} of {len(results)} agree ({time.time() - t0:.0f} s)")
    return 0 if n == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
