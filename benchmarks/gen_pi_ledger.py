"""Generate a large, realistic pi v3 session ledger for benchmarks (deterministic, seeded).

The entry shapes are copied from files the real pi 0.73.1 wrote (`shared/peers/pi/corpus/`):
a `session` header, `model_change`, `thinking_level_change`, then turns of
user prompt -> assistant tool-call steps (read / bash / edit / write, sometimes parallel calls),
each followed by its `toolResult` -> a final assistant answer (`stopReason: "stop"`).
Assistant messages carry pi's `usage {input, output, cacheRead, cacheWrite, totalTokens, cost}`
(anthropic-messages shape, growing cache reads). Occasionally: thinking blocks with a signature,
a persisted `error` assistant message followed by pi's retry, an `aborted` answer, a `length` stop,
failing tool results (`isError`), truncated bash output with pi's `details.truncation`.

Every ~1,500-3,000 records a `compaction` entry is appended the way pi does it: after the end of a
turn, `parentId` = the current leaf, `firstKeptEntryId` = the user/assistant message where pi's
cut point lands (walking back `keepRecentTokens` = 20,000 chars/4 tokens, never a toolResult),
`tokensBefore`, a summary in pi's `## Goal ...` template (split-turn section when the cut lands
inside a turn) with the cumulative `<read-files>`/`<modified-files>` block and
`details {readFiles, modifiedFiles}`. Ids are 8 hex chars; every `parentId` is the previous entry.

The file is streamed to disk (a temp file renamed at the end); memory stays small and flat.
Sizes are calibrated so 100,000 records make about 85 MB (85.0 MB with the default seed; other
seeds land within a few percent). A shorter file is a prefix of a longer one with the same seed,
except possibly its last turn, cut short so the file ends on a complete turn. pi 0.73.1's
own loader (`shared/peers/pi/context.mjs`) reads the default 100k file without complaint: all
99,999 entries on the path, every `firstKeptEntryId` found.

    python -m benchmarks.gen_pi_ledger --records 100000 --out benchmarks/out/pi_100k.jsonl
"""

from __future__ import annotations

import argparse
import base64
import os
import random
import string
import sys
import time
from collections import deque
from datetime import UTC, datetime
from typing import Any

import orjson

# Bump when the output for a given (records, seed) changes, so cached benchmark files regenerate.
GENERATOR_VERSION = 1

DEFAULT_RECORDS = 100_000
DEFAULT_SEED = 20261130

KEEP_RECENT_TOKENS = 20_000  # pi's default compaction.keepRecentTokens
COMPACTION_EVERY = (1_500, 3_000)  # records between compactions (uniform)
PROVIDER = "anthropic"
API = "anthropic-messages"
MODELS = ("claude-sonnet-4-5", "claude-opus-4-5")
# $ per million tokens: input, output, cacheRead, cacheWrite (pi's model table for these models).
PRICES = {
    "claude-sonnet-4-5": (3.0, 15.0, 0.3, 3.75),
    "claude-opus-4-5": (5.0, 25.0, 0.5, 6.25),
}
CWD = "/home/dev/src/ledgerkit"
START_MS = 1_767_603_600_000  # 2026-01-05T09:00:00Z

_OPT = orjson.OPT_APPEND_NEWLINE

# ------------------------------------------------------------------------------------ vocabulary

_WORDS = [
    "ledger",
    "record",
    "parser",
    "window",
    "budget",
    "summary",
    "compaction",
    "checkpoint",
    "session",
    "cursor",
    "offset",
    "chunk",
    "token",
    "index",
    "branch",
    "leaf",
    "parent",
    "path",
    "stream",
    "reader",
    "writer",
    "schema",
    "header",
    "request",
    "response",
    "route",
    "provider",
    "model",
    "usage",
    "cache",
    "retry",
    "timeout",
    "backoff",
    "lock",
    "fsync",
    "rename",
    "snapshot",
    "replay",
    "journal",
    "migration",
    "version",
    "field",
    "value",
    "buffer",
    "decoder",
    "encoder",
    "payload",
    "message",
    "content",
    "block",
    "tool",
    "call",
    "result",
    "error",
    "handler",
    "config",
    "registry",
    "scheduler",
    "worker",
    "queue",
    "batch",
    "limit",
    "threshold",
    "estimate",
    "boundary",
    "range",
    "tail",
    "coverage",
    "hole",
    "finding",
    "report",
    "render",
    "view",
    "table",
    "column",
    "row",
    "filter",
    "sort",
]
_VERBS = [
    "parse",
    "load",
    "read",
    "write",
    "validate",
    "check",
    "compute",
    "build",
    "resolve",
    "merge",
    "split",
    "flush",
    "open",
    "close",
    "append",
    "truncate",
    "render",
    "count",
    "collect",
    "normalize",
    "migrate",
    "detect",
    "scan",
    "apply",
    "emit",
    "update",
]
_PKGS = ("core", "io", "store", "analysis", "formats", "render", "cli", "providers", "util", "net")


def _ident(rng: random.Random) -> str:
    return f"{rng.choice(_VERBS)}_{rng.choice(_WORDS)}"


def _sentence(rng: random.Random, lo: int = 8, hi: int = 20) -> str:
    n = rng.randint(lo, hi)
    words = [rng.choice(_WORDS) if rng.random() < 0.7 else rng.choice(_VERBS) for _ in range(n)]
    words[0] = words[0].capitalize()
    if rng.random() < 0.3:
        words.insert(rng.randint(1, n - 1), f"`{_ident(rng)}()`")
    return " ".join(words) + "."


def _py_line(rng: random.Random, depth: int) -> str:
    ind = "    " * depth
    r = rng.random()
    if r < 0.25:
        return f"{ind}{rng.choice(_WORDS)} = {_ident(rng)}({rng.choice(_WORDS)}, {rng.choice(_WORDS)}={rng.randint(0, 4096)})"
    if r < 0.4:
        return f"{ind}if {rng.choice(_WORDS)}.{rng.choice(_WORDS)} is None or len({rng.choice(_WORDS)}) > {rng.randint(1, 512)}:"
    if r < 0.5:
        return f"{ind}return {rng.choice(_WORDS)}"
    if r < 0.6:
        return f"{ind}# {_sentence(rng, 5, 12)}"
    if r < 0.7:
        return f"{ind}for {rng.choice(_WORDS)} in self.{rng.choice(_WORDS)}s:"
    if r < 0.8:
        return f'{ind}raise {rng.choice(_WORDS).capitalize()}Error(f"{{{rng.choice(_WORDS)}}}: {_sentence(rng, 3, 8)}")'
    if r < 0.9:
        return f"{ind}self.{rng.choice(_WORDS)}.append({rng.choice(_WORDS)}[{rng.randint(0, 64)}:])"
    return ""


def _ts_line(rng: random.Random, depth: int) -> str:
    ind = "  " * depth
    r = rng.random()
    if r < 0.3:
        return f"{ind}const {rng.choice(_WORDS)} = await this.{_ident(rng)}({rng.choice(_WORDS)}, {{ {rng.choice(_WORDS)}: {rng.randint(0, 999)} }});"
    if r < 0.45:
        return f"{ind}if (!{rng.choice(_WORDS)} || {rng.choice(_WORDS)}.length > {rng.randint(1, 512)}) {{"
    if r < 0.55:
        return f"{ind}return {rng.choice(_WORDS)};"
    if r < 0.65:
        return f"{ind}// {_sentence(rng, 5, 12)}"
    if r < 0.8:
        return f"{ind}{rng.choice(_WORDS)}.{rng.choice(_VERBS)}({rng.choice(_WORDS)} as {rng.choice(_WORDS).capitalize()});"
    if r < 0.9:
        return f"{ind}}}"
    return ""


def _md_line(rng: random.Random, depth: int) -> str:
    r = rng.random()
    if r < 0.1:
        return f"## {rng.choice(_WORDS).capitalize()} {rng.choice(_WORDS)}"
    if r < 0.35:
        return f"- {_sentence(rng, 4, 12)}"
    if r < 0.45:
        return ""
    return " ".join(_sentence(rng) for _ in range(rng.randint(1, 3)))


def _make_file(rng: random.Random, path: str) -> list[str]:
    ext = path.rsplit(".", 1)[-1]
    n = int(rng.lognormvariate(4.7, 0.8))  # median ~110 lines, long tail
    n = max(12, min(n, 2400))
    if ext == "py":
        lines = [f'"""{_sentence(rng)}"""', "", "from __future__ import annotations", ""]
        maker = _py_line
    elif ext == "ts":
        lines = [f'import {{ {_ident(rng)} }} from "./{rng.choice(_WORDS)}.js";', ""]
        maker = _ts_line
    else:
        lines = [f"# {rng.choice(_WORDS).capitalize()} {rng.choice(_WORDS)}", ""]
        maker = _md_line
    depth = 0
    while len(lines) < n:
        if ext in ("py", "ts") and rng.random() < 0.06:
            name = _ident(rng)
            lines.append("")
            lines.append(
                f"def {name}(self, {rng.choice(_WORDS)}: str) -> None:"
                if ext == "py"
                else f"export function {name}({rng.choice(_WORDS)}: string): void {{"
            )
            depth = 1
            continue
        line = maker(rng, depth)
        lines.append(line)
        if line.endswith((":", "{")):
            depth = min(4, depth + 1)
        elif ext in ("py", "ts") and depth > 1 and rng.random() < 0.25:
            depth -= 1
    return lines


class Workspace:
    """A deterministic fake repository the agent reads, greps, edits and tests."""

    def __init__(self, rng: random.Random, n_files: int = 120) -> None:
        paths: list[str] = []
        seen: set[str] = set()
        while len(paths) < n_files:
            r = rng.random()
            if r < 0.55:
                p = f"src/ledgerkit/{rng.choice(_PKGS)}/{rng.choice(_WORDS)}_{rng.choice(_WORDS)}.py"
            elif r < 0.75:
                p = f"tests/{rng.choice(_PKGS)}/test_{rng.choice(_WORDS)}_{rng.choice(_WORDS)}.py"
            elif r < 0.92:
                p = f"web/src/{rng.choice(_PKGS)}/{rng.choice(_WORDS)}{rng.choice(_WORDS).capitalize()}.ts"
            else:
                p = f"docs/{rng.choice(_WORDS)}-{rng.choice(_WORDS)}.md"
            if p not in seen:
                seen.add(p)
                paths.append(p)
        self.paths = paths
        self.files = {p: _make_file(rng, p) for p in paths}
        # A session works mostly on a hot subset of the tree.
        self.hot = paths[: max(10, n_files // 4)]

    def pick(self, rng: random.Random) -> str:
        return rng.choice(self.hot) if rng.random() < 0.8 else rng.choice(self.paths)


# ------------------------------------------------------------------------------------ generator


def _fmix32(h: int) -> int:
    """murmur3's finalizer: a bijection on 32-bit ints, so sequential inputs give unique ids."""
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    h ^= h >> 16
    return h


_B62 = string.ascii_letters + string.digits


class Generator:
    def __init__(self, out: Any, records: int, seed: int) -> None:
        self.out = out
        self.target = records
        self.rng = random.Random(seed)
        self.id_salt = random.Random(seed ^ 0x5EED).getrandbits(32)
        self.ws = Workspace(random.Random(seed + 1))
        self.written = 0
        self.bytes = 0
        self.n_id = 0
        self.leaf: str | None = None
        self.now_ms = START_MS
        self.model = MODELS[0]
        self.thinking = "medium"
        self.resp_n = 0
        # Context accounting (chars/4, like pi's estimate).
        self.ctx_tokens = 0
        self.pending_tokens = 0  # added since the last assistant request (cache write)
        # Recent path entries since the last compaction: (id, role, tokens). Bounded.
        self.recent: deque[tuple[str, str, int]] = deque(maxlen=4000)
        self.since_compaction = 0
        self.next_compaction = self.rng.randint(*COMPACTION_EVERY)
        self.n_compactions = 0
        self.prev_summary_n = 0
        self.read_files: set[str] = set()
        self.modified_files: set[str] = set()
        self.turn_n = 0
        self.done_log: deque[str] = deque(maxlen=12)
        self.counts: dict[str, int] = {}

    # -- primitives

    def _new_id(self) -> str:
        self.n_id += 1
        return f"{_fmix32((self.n_id + self.id_salt) & 0xFFFFFFFF):08x}"

    def _iso(self, ms: int) -> str:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"

    def _tick(self, lo_ms: int, hi_ms: int) -> int:
        self.now_ms += self.rng.randint(lo_ms, hi_ms)
        return self.now_ms

    def _emit(self, obj: dict[str, Any], kind: str) -> None:
        data = orjson.dumps(obj, option=_OPT)
        self.out.write(data)
        self.bytes += len(data)
        self.written += 1
        self.since_compaction += 1
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def left(self) -> int:
        return self.target - self.written

    def _entry(self, typ: str, **fields: Any) -> str:
        eid = self._new_id()
        obj = {"type": typ, "id": eid, "parentId": self.leaf, "timestamp": self._iso(self._tick(1, 15))}
        obj.update(fields)
        self._emit(obj, typ)
        self.leaf = eid
        return eid

    def _message(self, msg: dict[str, Any], role: str, tokens: int) -> str:
        eid = self._new_id()
        ts = msg["timestamp"] + self.rng.randint(1, 12)
        obj = {
            "type": "message",
            "id": eid,
            "parentId": self.leaf,
            "timestamp": self._iso(ts),
            "message": msg,
        }
        self._emit(obj, role)
        self.leaf = eid
        self.recent.append((eid, role, tokens))
        self.ctx_tokens += tokens
        self.pending_tokens += tokens
        return eid

    def _call_id(self) -> str:
        return "toolu_01" + "".join(self.rng.choices(_B62, k=22))

    def _usage(self, output_tokens: int) -> dict[str, Any]:
        rng = self.rng
        inp = rng.randint(1, 12)
        write = max(0, self.pending_tokens - inp)
        read = max(0, self.ctx_tokens - self.pending_tokens)
        pi_, po, pr, pw = PRICES[self.model]
        cost = {
            "input": inp * pi_ / 1e6,
            "output": output_tokens * po / 1e6,
            "cacheRead": read * pr / 1e6,
            "cacheWrite": write * pw / 1e6,
        }
        cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
        self.pending_tokens = 0
        return {
            "input": inp,
            "output": output_tokens,
            "cacheRead": read,
            "cacheWrite": write,
            "totalTokens": inp + output_tokens + read + write,
            "cost": cost,
        }

    def _zero_usage(self) -> dict[str, Any]:
        z = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
        return {**z, "totalTokens": 0, "cost": {**z, "total": 0}}

    def _assistant(self, content: list[dict[str, Any]], stop: str, error: str | None = None) -> str:
        self.resp_n += 1
        ms = self._tick(1_500, 25_000) if stop != "error" else self._tick(200, 4_000)
        chars = sum(
            len(b.get("text") or b.get("thinking") or "") + len(orjson.dumps(b.get("arguments") or {}))
            for b in content
        )
        tokens = chars // 4 + 1
        msg: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": API,
            "provider": PROVIDER,
            "model": self.model,
            "usage": self._usage(tokens) if stop not in ("error", "aborted") else self._zero_usage(),
            "stopReason": stop,
            "timestamp": ms,
        }
        if stop != "error":
            msg["responseId"] = "msg_01" + "".join(self.rng.choices(_B62, k=22))
        if error is not None:
            msg["errorMessage"] = error
        # Error/aborted messages are dropped at send time: they add nothing to the next request.
        return self._message(msg, "assistant", tokens if stop not in ("error", "aborted") else 0)

    # -- content

    def _thinking(self) -> dict[str, Any]:
        rng = self.rng
        text = "\n\n".join(
            " ".join(_sentence(rng) for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 2))
        )
        sig = base64.b64encode(rng.randbytes(rng.randint(120, 420))).decode()
        return {"type": "thinking", "thinking": text, "thinkingSignature": sig}

    def _prose(self, paragraphs: int) -> str:
        rng = self.rng
        parts = []
        for _ in range(paragraphs):
            if rng.random() < 0.25:
                parts.append("\n".join(f"- {_sentence(rng, 5, 14)}" for _ in range(rng.randint(2, 6))))
            elif rng.random() < 0.1:
                p = self.ws.pick(rng)
                lines = self.ws.files[p]
                i = rng.randrange(len(lines))
                lang = "python" if p.endswith(".py") else "ts" if p.endswith(".ts") else ""
                parts.append(f"```{lang}\n" + "\n".join(lines[i : i + rng.randint(3, 14)]) + "\n```")
            else:
                parts.append(" ".join(_sentence(rng) for _ in range(rng.randint(1, 4))))
        return "\n\n".join(parts)

    def _user_prompt(self) -> str:
        rng = self.rng
        p = self.ws.pick(rng)
        r = rng.random()
        if r < 0.35:
            text = f"In {p}, {_sentence(rng).lower()} Can you {rng.choice(_VERBS)} the {rng.choice(_WORDS)} handling and add a test?"
        elif r < 0.6:
            text = f"{_sentence(rng)} {_sentence(rng)} Please look at {p} and {self.ws.pick(rng)}."
        elif r < 0.8:
            text = rng.choice(
                ("continue", "yes, go ahead", "ok, now run the tests", "commit that", "looks good, next step")
            )
        elif r < 0.95:
            text = self._prose(rng.randint(1, 3))
        else:  # pasted log / stack trace
            text = (
                "I get this when running it:\n\n```\n"
                + self._pytest_output(fail=True)[0]
                + "\n```\nwhat's wrong?"
            )
        return f"[{self.turn_n}] {text}" if rng.random() < 0.02 else text

    def _slice(self, path: str, lo: int, n: int) -> str:
        return "\n".join(self.ws.files[path][lo : lo + n])

    def _pytest_output(self, fail: bool) -> tuple[str, bool]:
        rng = self.rng
        files = [p for p in rng.sample(self.ws.paths, 5) if p.startswith("tests/")] or [self.ws.paths[0]]
        lines = [
            "============================= test session starts ==============================",
            "platform linux -- Python 3.11.7, pytest-8.3.4, pluggy-1.5.0",
            f"rootdir: {CWD}",
            "configfile: pyproject.toml",
            f"collected {rng.randint(20, 900)} items",
            "",
        ]
        for f in files:
            dots = "".join("F" if fail and rng.random() < 0.08 else "." for _ in range(rng.randint(3, 40)))
            lines.append(f"{f} {dots}{' ' * max(1, 60 - len(dots))}[{rng.randint(1, 100):3d}%]")
        if fail:
            for _ in range(rng.randint(1, 3)):
                f = rng.choice(files)
                lines += ["", f"____________________ test_{_ident(rng)} ____________________", ""]
                src = self.ws.files[f]
                i = rng.randrange(len(src))
                lines += ["    " + s for s in src[i : i + rng.randint(3, 10)]]
                lines += [
                    f">       assert {rng.choice(_WORDS)} == {rng.randint(0, 99)}",
                    f"E       AssertionError: {_sentence(rng, 4, 9)}",
                    "",
                    f"{f}:{i + 3}: AssertionError",
                ]
            lines.append(
                f"=========================== {rng.randint(1, 5)} failed, {rng.randint(20, 900)} passed in {rng.uniform(0.5, 40):.2f}s ==========================="
            )
        else:
            lines.append(
                f"============================== {rng.randint(20, 900)} passed in {rng.uniform(0.5, 40):.2f}s =============================="
            )
        return "\n".join(lines), fail

    def _tool_step(self) -> tuple[str, dict[str, Any], str, bool, dict[str, Any] | None]:
        """One tool call: (name, arguments, result text, isError, details)."""
        rng = self.rng
        ws = self.ws
        r = rng.random()
        path = ws.pick(rng)
        if r < 0.36:  # read
            lines = ws.files[path]
            args: dict[str, Any] = {"path": path}
            if rng.random() < 0.03:
                missing = path.rsplit("/", 1)[0] + f"/{rng.choice(_WORDS)}.py"
                return (
                    "read",
                    {"path": missing},
                    f"ENOENT: no such file or directory, access '{CWD}/{missing}'",
                    True,
                    None,
                )
            if len(lines) > 40 and rng.random() < 0.99:
                off = rng.randrange(len(lines))
                n = rng.randint(3, 15)
                args.update(offset=off + 1, limit=n)
                text = self._slice(path, off, n)
                if off + n < len(lines):
                    text += f"\n\n[{len(lines) - off - n} more lines in file. Use offset={off + n + 1} to continue.]"
            else:  # whole file, cut at pi's 50 KB / 2000-line read limit
                shown, size = 0, 0
                while shown < min(2000, len(lines)) and size + len(lines[shown]) + 1 <= 51_200:
                    size += len(lines[shown]) + 1
                    shown += 1
                text = "\n".join(lines[:shown])
                if shown < len(lines):
                    text += f"\n\n[Showing lines 1-{shown} of {len(lines)} (50.0KB limit). Use offset={shown + 1} to continue.]"
            self.read_files.add(path)
            return "read", args, text, False, None
        if r < 0.72:  # bash
            k = rng.random()
            if k < 0.3:
                word = rng.choice(_WORDS)
                cmd = f"grep -rn '{word}' src tests | head -{rng.choice((20, 40, 80))}"
                hits = []
                for _ in range(rng.randint(0, 8)):
                    p = ws.pick(rng)
                    i = rng.randrange(len(ws.files[p]))
                    hits.append(f"{p}:{i + 1}:{ws.files[p][i]}")
                return "bash", {"command": cmd}, "\n".join(hits) if hits else "(no output)", False, None
            if k < 0.5:
                fail = rng.random() < 0.3
                cmd = rng.choice(
                    ("python -m pytest -q", "python -m pytest -x tests/", f"python -m pytest -q {path}")
                )
                out, failed = self._pytest_output(fail)
                if failed:
                    out += "\n\nCommand exited with code 1"
                return "bash", {"command": cmd, "timeout": 600}, out, failed, None
            if k < 0.62:
                cmd = "git diff --stat && git diff | head -200"
                ps = rng.sample(ws.hot, rng.randint(1, 4))
                out = "\n".join(
                    f" {p} | {rng.randint(1, 80)} {'+' * rng.randint(1, 20)}{'-' * rng.randint(0, 10)}"
                    for p in ps
                )
                for p in ps:
                    src = ws.files[p]
                    i = rng.randrange(len(src))
                    out += f"\ndiff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -{i + 1},7 +{i + 1},8 @@\n"
                    out += "\n".join(
                        (" " if rng.random() < 0.7 else rng.choice("+-")) + s
                        for s in src[i : i + rng.randint(3, 12)]
                    )
                return "bash", {"command": cmd}, out, False, None
            if k < 0.72:
                d = path.rsplit("/", 1)[0]
                cmd = f"ls -la {d}"
                out = "\n".join(
                    f"-rw-r--r-- 1 dev dev {rng.randint(100, 90000):6d} Jan {rng.randint(1, 28):2d} 1{rng.randint(0, 9)}:{rng.randint(10, 59)} {p.rsplit('/', 1)[-1]}"
                    for p in ws.paths
                    if p.startswith(d)
                )
                return "bash", {"command": cmd}, out or "(no output)", False, None
            if k < 0.7235:  # very long output, truncated by pi (50 KB limit), full log kept in a temp file
                cmd = f"python -m ledgerkit.cli scan --verbose {rng.choice(_WORDS)}s/"
                total_lines = rng.randint(1500, 6000)
                start = total_lines - rng.randint(400, 700)
                body = "\n".join(
                    f"{i}: {rng.choice(_VERBS)} {rng.choice(_WORDS)} {rng.choice(_WORDS)} at offset {rng.randint(0, 1 << 24)}"
                    for i in range(start, total_lines)
                )
                log = f"/tmp/pi-bash-{rng.getrandbits(64):016x}.log"
                text = (
                    body
                    + f"\n\n[Showing lines {start + 1}-{total_lines} of {total_lines} (50.0KB limit). Full output: {log}]"
                )
                details = {
                    "truncation": {
                        "content": body,
                        "truncated": True,
                        "truncatedBy": "bytes",
                        "totalLines": total_lines,
                        "totalBytes": len(body) * total_lines // max(1, total_lines - start),
                        "outputLines": total_lines - start,
                        "outputBytes": len(body),
                        "lastLinePartial": False,
                        "firstLineExceedsLimit": False,
                        "maxLines": 2000,
                        "maxBytes": 51200,
                    },
                    "fullOutputPath": log,
                }
                return "bash", {"command": cmd}, text, False, details
            cmd = rng.choice(
                (
                    f"wc -l {path}",
                    "python -c 'import ledgerkit; print(ledgerkit.__version__)'",
                    "git status --short",
                    f"ruff check {path}",
                    f"git log --oneline -{rng.randint(3, 15)}",
                )
            )
            fail = rng.random() < 0.12
            out = "\n".join(_sentence(rng, 3, 10) for _ in range(rng.randint(1, 6)))
            if fail:
                out += f"\n\nCommand exited with code {rng.choice((1, 2, 127))}"
            return "bash", {"command": cmd}, out, fail, None
        if r < 0.93:  # edit
            src = ws.files[path]
            i = rng.randrange(len(src))
            old = "\n".join(src[i : i + rng.randint(1, 3)])
            new = old + "\n" + _py_line(rng, 2) if path.endswith(".py") else old + "\n" + _ts_line(rng, 1)
            args = {"path": path, "edits": [{"oldText": old, "newText": new}]}
            if rng.random() < 0.06:
                return (
                    "edit",
                    args,
                    f"Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines.",
                    True,
                    None,
                )
            self.modified_files.add(path)
            ctx = src[max(0, i - 2) : i + 3]
            diff = (
                "\n".join(f"  {max(0, i - 2) + j + 1} {s}" for j, s in enumerate(ctx))
                + f"\n+ {i + 2} {new.splitlines()[-1]}\n    ..."
            )
            return (
                "edit",
                args,
                f"Successfully replaced 1 block(s) in {path}.",
                False,
                {"diff": diff, "firstChangedLine": i + 1},
            )
        # write
        content = "\n".join(ws.files[path][: rng.randint(4, 20)]) + "\n"
        self.modified_files.add(path)
        return (
            "write",
            {"path": path, "content": content},
            f"Successfully wrote {len(content.encode())} bytes to {path}",
            False,
            None,
        )

    # -- turns

    def turn(self) -> None:
        rng = self.rng
        self.turn_n += 1
        ms = self._tick(8_000, 240_000)
        prompt = self._user_prompt()
        self._message(
            {"role": "user", "content": [{"type": "text", "text": prompt}], "timestamp": ms},
            "user",
            len(prompt) // 4 + 1,
        )
        if self.left() <= 0:
            return
        steps = min(40, int(rng.expovariate(1 / 5.5)) + 1)
        aborted_at = rng.randrange(steps) if rng.random() < 0.012 else -1
        for step in range(steps):
            if self.left() <= 1:
                break
            if rng.random() < 0.012:  # provider error, persisted; pi retries (usually)
                msg = rng.choice(
                    (
                        '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
                        '500 {"type":"error","error":{"type":"api_error","message":"Internal server error"}}',
                        "terminated",
                        "fetch failed",
                    )
                )
                self._assistant([], "error", msg)
                if rng.random() < 0.2 or self.left() <= 1:
                    return
            if step == aborted_at:
                self._assistant(
                    [{"type": "text", "text": self._prose(1)[: rng.randint(10, 400)]}],
                    "aborted",
                    "Request was aborted",
                )
                return
            n_calls = 1 if rng.random() < 0.85 else rng.randint(2, 3)
            if self.left() < 2 + n_calls:  # keep room for every result and the final answer
                break
            content: list[dict[str, Any]] = []
            if self.thinking != "off" and rng.random() < 0.1:
                content.append(self._thinking())
            if rng.random() < 0.45:
                content.append(
                    {"type": "text", "text": _sentence(rng, 5, 18) if rng.random() < 0.92 else self._prose(1)}
                )
            calls = []
            for _ in range(n_calls):
                name, args, text, is_error, details = self._tool_step()
                cid = self._call_id()
                content.append({"type": "toolCall", "id": cid, "name": name, "arguments": args})
                calls.append((cid, name, text, is_error, details))
            self._assistant(content, "toolUse")
            for cid, name, text, is_error, details in calls:
                ms = self._tick(20, 6_000 if name == "bash" else 300)
                msg: dict[str, Any] = {
                    "role": "toolResult",
                    "toolCallId": cid,
                    "toolName": name,
                    "content": [{"type": "text", "text": text}],
                }
                if details is not None:
                    msg["details"] = details
                msg["isError"] = is_error
                msg["timestamp"] = ms
                self._message(msg, "toolResult", len(text) // 4 + 1)
        if self.left() <= 0:
            return
        content = []
        if self.thinking != "off" and rng.random() < 0.2:
            content.append(self._thinking())
        content.append({"type": "text", "text": self._prose(rng.randint(1, 3))})
        self._assistant(content, "length" if rng.random() < 0.01 else "stop")
        self.done_log.append(_sentence(rng, 4, 10).rstrip("."))

    def compaction(self) -> None:
        rng = self.rng
        # pi's findCutPoint: walk back keepRecentTokens, then the nearest user/assistant at or after.
        acc = 0
        entries = list(self.recent)
        i = len(entries) - 1
        while i > 0 and acc < KEEP_RECENT_TOKENS:
            acc += entries[i][2]
            i -= 1
        while i < len(entries) - 1 and entries[i][1] == "toolResult":
            i += 1
        first_kept, kept_role, _ = entries[i]
        kept_tokens = sum(e[2] for e in entries[i:])
        tokens_before = self.ctx_tokens
        self.n_compactions += 1
        n = self.n_compactions
        done = list(self.done_log)
        read_only = sorted(self.read_files - self.modified_files)
        modified = sorted(self.modified_files)
        s = [
            "## Goal",
            f"- {_sentence(rng)}",
            f"- {_sentence(rng, 5, 12)}",
            "",
            "## Constraints & Preferences",
        ] + [f"- {_sentence(rng, 5, 14)}" for _ in range(rng.randint(1, 4))]
        s += ["", "## Progress", "### Done"] + [f"- [x] {d}" for d in done[: rng.randint(3, len(done) or 3)]]
        s += ["", "### In Progress"] + [f"- [ ] {_sentence(rng, 4, 10)}" for _ in range(rng.randint(1, 3))]
        s += ["", "### Blocked", "- (none)" if rng.random() < 0.7 else f"- {_sentence(rng, 5, 12)}"]
        s += ["", "## Key Decisions"] + [
            f"- **{rng.choice(_WORDS).capitalize()} {rng.choice(_WORDS)}**: {_sentence(rng)}"
            for _ in range(rng.randint(2, 6))
        ]
        s += ["", "## Next Steps"] + [f"{k + 1}. {_sentence(rng, 5, 14)}" for k in range(rng.randint(2, 5))]
        s += ["", "## Critical Context"] + [f"- {_sentence(rng)}" for _ in range(rng.randint(2, 6))]
        if self.prev_summary_n:
            s.append(f"- Builds on the previous summary (#{self.prev_summary_n}).")
        summary = "\n".join(s)
        if kept_role == "assistant":  # the cut landed inside a turn: pi adds the turn-prefix summary
            summary += (
                "\n\n---\n\n**Turn Context (split turn):**\n\n## Original Request\n- "
                + _sentence(rng)
                + "\n\n## Early Progress\n"
                + "\n".join(f"- {_sentence(rng, 5, 12)}" for _ in range(rng.randint(1, 4)))
                + "\n\n## Context for Suffix\n- "
                + _sentence(rng)
            )
        summary += (
            "\n\n<read-files>\n"
            + "\n".join(read_only)
            + "\n</read-files>\n\n<modified-files>\n"
            + "\n".join(modified)
            + "\n</modified-files>"
        )
        self._tick(15_000, 90_000)
        eid = self._entry(
            "compaction",
            summary=summary,
            firstKeptEntryId=first_kept,
            tokensBefore=tokens_before,
            details={"readFiles": read_only, "modifiedFiles": modified},
            fromHook=False,
        )
        self.prev_summary_n = n
        # Next request: summary + kept messages; later path entries start after the compaction.
        self.ctx_tokens = len(summary) // 4 + kept_tokens
        self.pending_tokens = self.ctx_tokens
        self.recent = deque(entries[i:], maxlen=self.recent.maxlen)
        self.recent.append((eid, "compaction", 0))
        self.since_compaction = 0
        self.next_compaction = rng.randint(*COMPACTION_EVERY)

    def run(self) -> None:
        rng = self.rng
        ms = self.now_ms
        sid = f"{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}-7{rng.getrandbits(12):03x}-{0x8000 | rng.getrandbits(14):04x}-{rng.getrandbits(48):012x}"
        self._emit(
            {"type": "session", "version": 3, "id": sid, "timestamp": self._iso(ms), "cwd": CWD}, "session"
        )
        if self.left() > 0:
            self._entry("model_change", provider=PROVIDER, modelId=self.model)
        if self.left() > 0:
            self._entry("thinking_level_change", thinkingLevel=self.thinking)
        while self.left() > 0:
            if self.since_compaction >= self.next_compaction and self.left() >= 3 and len(self.recent) > 10:
                self.compaction()
                continue
            r = rng.random()
            if r < 0.0008 and self.left() >= 3:
                self.model = MODELS[1] if self.model == MODELS[0] else MODELS[0]
                self._entry("model_change", provider=PROVIDER, modelId=self.model)
            elif r < 0.0016 and self.left() >= 3:
                self.thinking = rng.choice(
                    [t for t in ("off", "low", "medium", "high") if t != self.thinking]
                )
                self._entry("thinking_level_change", thinkingLevel=self.thinking)
            self.turn()


def generate(
    out_path: str, records: int = DEFAULT_RECORDS, seed: int = DEFAULT_SEED, quiet: bool = False
) -> dict[str, Any]:
    """Write the ledger to `out_path` (atomically). Returns {path, records, bytes, seconds, counts}."""
    t0 = time.perf_counter()
    d = os.path.dirname(os.path.abspath(out_path))
    os.makedirs(d, exist_ok=True)
    tmp = f"{out_path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb", buffering=1 << 20) as f:
            g = Generator(f, records, seed)
            g.run()
        os.replace(tmp, out_path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    info = {
        "path": out_path,
        "records": g.written,
        "bytes": g.bytes,
        "seconds": round(time.perf_counter() - t0, 2),
        "compactions": g.n_compactions,
        "counts": dict(sorted(g.counts.items())),
    }
    if not quiet:
        print(
            f"wrote {out_path}: {g.written:,} records, {g.bytes:,} bytes ({g.bytes / 1e6:.1f} MB, "
            f"{g.bytes / max(1, g.written):.0f} B/record), {g.n_compactions} compactions, {info['seconds']} s",
            file=sys.stderr,
        )
    return info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--records",
        type=int,
        default=DEFAULT_RECORDS,
        help="lines to write, header included (default 100000)",
    )
    ap.add_argument(
        "--out", default=None, help="output path (default benchmarks/out/pi_ledger_<records>_s<seed>.jsonl)"
    )
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ns = ap.parse_args(argv)
    if ns.records < 1:
        ap.error("--records must be at least 1")
    out = ns.out or default_path(ns.records, ns.seed)
    info = generate(out, ns.records, ns.seed)
    print(orjson.dumps(info, option=orjson.OPT_INDENT_2).decode())
    return 0


def default_path(records: int, seed: int) -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "out", f"pi_ledger_{records}_s{seed}_v{GENERATOR_VERSION}.jsonl")


if __name__ == "__main__":
    sys.exit(main())
