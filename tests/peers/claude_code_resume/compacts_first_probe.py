"""When the real Claude Code compacts a transcript before the prompt it resumes with, against
inspector's `compacts_first` finding: many probes, each a copy of the peer corpus's
`manual_compact.jsonl` (a /compact, then turns by `claude-opus-5-5`) edited one way.

An edit puts the last reply's usage at Claude Code's threshold, one under or one over it (the
window less the 20,000-token output reserve less the 13,000 buffer: 967,000 for a 1,000,000-token
model), spreads it over the four counts or puts it in one, adds what is counted after the reply
(another line of it, a synthetic reply, the server's cleared tokens), leaves the session after a
compaction or inside a turn, or resumes it with another model. Where a probe's edit adds text after
the reply, the usage is set from inspector's count of that text (`delta`: the usage is the threshold
less that count, plus `delta`): a count off by one token parts the "at" and "one under" probes.

The file's working directory and OS are rewritten to those of the scratch folder the CLI resumes
in, so it adds no environment reminder; the prompt is one character ("x"), which Claude Code counts
as 0 tokens, except in the probes of a longer prompt. Claude Code 2.1.328 resumes every copy
(`harness.resume`, `--model` the probe's, against the scripted Messages API on 127.0.0.1); its
verdict is whether its first request was a compaction's. inspector's is whether `analyze` (given
the probe's window, if any) reports `compacts_first`, or, for a longer prompt, whether its count
plus the prompt's estimate reaches the threshold.

    python -m tests.peers.claude_code_resume.compacts_first_probe     # both verdicts, side by side
"""

from __future__ import annotations

import copy
import json
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import SHARED

BASE = SHARED / "peers" / "claude_code" / "corpus" / "manual_compact.jsonl"
WORKDIR = "/home/user/claude_code-peer/manual_compact/work"  # the base's working directory and OS
OS_VERSION = "Linux 6.18.44-fc-v595"
LAST, BOUNDARY, SUMMARY, PRESERVED = 84, 52, 53, 43  # (1-based lines of the base)
MODEL = "claude-opus-5-5"
_Lines = list[dict[str, Any]]
_Edit = Callable[[_Lines, int], _Lines]  # (the base's lines, the usage's input tokens) -> the probe's


# The catalog's name and knowledge cutoff of the models the probes resume with (the base's model
# reminder and commit attribution are rewritten to them: Claude Code adds both anew on a change).
NAMES = {MODEL: ("Opus 5.5", "June 2026"), "claude-sonnet-5-5": ("Sonnet 5.5", "June 2026"),
         "claude-sonnet-4-6": ("Sonnet 4.6", "August 2025"), "claude-opus-4-5": ("Opus 4.5", "May 2025"),
         "claude-opus-4-6": ("Opus 4.6", "May 2025")}  # fmt: skip
# The reminder Claude Code adds to each prompt for a model with the catalog's `total_tokens_reminder`
# capability (`TWs`, offset 321009906; observed: 15,000,000 left in a new `-p` process). It is not
# in the file: the probe adds its estimate to inspector's count, as it does a longer prompt's.
TOTAL_TOKENS = "<system-reminder>\n<total_tokens>15000000 tokens left</total_tokens>\n</system-reminder>"
COUNTDOWN_MODELS = frozenset({"claude-sonnet-4-6", "claude-opus-4-5", "claude-opus-4-6"})


@dataclass(frozen=True)
class Probe:
    name: str
    edit: _Edit
    delta: int | None = None  # None: the edit's usage as it is; else the threshold less the count after the reply, plus this
    model: str = MODEL  # the CLI's --model ("[1m]": the million-token choice)
    prompt: str = "x"
    window: int | None = None  # given to the analysis

    @property
    def file_model(self) -> str:
        """The model the replies name."""
        return self.model.replace("[1m]", "")

    def added(self) -> int:
        """Claude Code's estimate of what it adds with the prompt, before its check (not in the file)."""
        from inspector.formats import claude_code_resume as ccr

        bpt = ccr.bytes_per_token(self.file_model)
        return ccr.estimate(self.prompt, bpt) + (ccr.estimate(TOTAL_TOKENS, bpt) if self.file_model in COUNTDOWN_MODELS else 0)


def _last_reply(objs: _Lines) -> int:
    return max(i for i, o in enumerate(objs, 1) if o.get("type") == "assistant" and isinstance(o.get("message"), dict))


def _usage(input_: int, cw: int = 0, cr: int = 0, out: int = 0, at: int | None = LAST, **more: Any) -> _Edit:
    """The reply at line `at` (None: the last reply) given these counts."""

    def edit(objs: _Lines, _n: int) -> _Lines:
        out_objs = copy.deepcopy(objs)
        u = out_objs[(at or _last_reply(objs)) - 1]["message"]["usage"]
        u.update(input_tokens=input_, cache_creation_input_tokens=cw, cache_read_input_tokens=cr, output_tokens=out, **more)
        return out_objs

    return edit


def _input(at: int | None = LAST, then: Callable[[_Lines], _Lines] | None = None) -> _Edit:
    """The reply at line `at` (None: the last reply) given the probe's input tokens (its other counts 0), then `then`."""

    def edit(objs: _Lines, n: int) -> _Lines:
        got = _usage(n, at=at)(objs, n)
        return then(got) if then else got

    return edit


def _after_last(line: dict[str, Any]) -> Callable[[_Lines], _Lines]:
    """A line appended after the last reply, its child."""

    def then(objs: _Lines) -> _Lines:
        last = objs[LAST - 1]
        new = {**copy.deepcopy(line), "parentUuid": last["uuid"], "sessionId": last["sessionId"], "timestamp": last["timestamp"]}
        return [*objs[:LAST], new, *objs[LAST:]]

    return then


def _reply_line(content: list[dict[str, Any]], **over: Any) -> dict[str, Any]:
    return {
        "isSidechain": False, "type": "assistant", "uuid": "7d0c8a52-0000-4000-8000-00000000c0de", "userType": "external",
        "message": {"id": "msg_synthetic_probe", "type": "message", "role": "assistant", "model": "<synthetic>", "content": content,
                    "stop_reason": "stop_sequence", "stop_sequence": "", "usage": {"input_tokens": 0, "output_tokens": 0,
                    "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}},
        **over,
    }  # fmt: skip


def _split_reply(objs: _Lines) -> _Lines:
    """The last reply's second line (its message.id): a text block of 300 characters."""
    last = objs[LAST - 1]
    second = copy.deepcopy(last)
    second["uuid"] = "7d0c8a52-0000-4000-8000-00000000beef"
    second["message"]["content"] = [{"type": "text", "text": "y" * 300}]
    return _after_last(second)(objs)


def _server_cleared(objs: _Lines) -> _Lines:
    m = objs[LAST - 1]["message"]
    m["context_management"] = {"applied_edits": [{"type": "clear_tool_uses_20250919", "cleared_tool_uses": 2, "cleared_input_tokens": 500}]}
    return objs


def _stock_text(objs: _Lines) -> _Lines:
    objs[LAST - 1]["message"]["content"] = [{"type": "text", "text": "[Request interrupted by user]"}]
    return objs


def _upto(n: int) -> Callable[[_Lines], _Lines]:
    return lambda objs: objs[:n]


def _without_last(objs: _Lines) -> _Lines:
    return [o for i, o in enumerate(objs, 1) if i != LAST]


_ERROR = _reply_line([{"type": "text", "text": "API Error: 500 Internal server error"}], isApiErrorMessage=True, error="server_error")
_LONG_PROMPT = "[R1] " + "z" * 295  # 300 characters: 100 tokens at 3 a token
_PRE = 80  # the reply before the last (a Read call), answered by line 81

PROBES: list[Probe] = [
    Probe("as written", lambda objs, _n: objs),
    Probe("input at the threshold", _input(), 0),
    Probe("input one under", _input(), -1),
    Probe("input one over", _input(), 1),
    Probe("four counts at the threshold", _usage(900_000, 50_000, 16_000, 1_000)),
    Probe("four counts one under (output)", _usage(900_000, 50_000, 16_000, 999)),
    Probe("cache reads alone at the threshold", _usage(0, 0, 967_000)),
    Probe("output alone over it (input counts 0)", _usage(0, 0, 0, 990_000)),
    Probe("iterations: the last one under", _usage(967_000, iterations=[{"type": "message", "input_tokens": 966_999, "output_tokens": 0,
          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}])),
    Probe("iterations: the last one at it", _usage(100, iterations=[{"type": "message", "input_tokens": 966_000, "output_tokens": 1_000,
          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}, {"type": "compaction", "input_tokens": 5}])),
    Probe("reply in two lines, at", _input(then=_split_reply), 0),
    Probe("reply in two lines, one under", _input(then=_split_reply), -1),
    Probe("synthetic API error after it, at", _input(then=_after_last(_ERROR)), 0),
    Probe("synthetic API error after it, one under", _input(then=_after_last(_ERROR)), -1),
    Probe("server cleared 500, at", _input(then=_server_cleared), 0),
    Probe("server cleared 500, one under", _input(then=_server_cleared), -1),
    Probe("stock text reply over it", _input(then=_stock_text), 10_000),
    Probe("ends inside a turn, at", _input(_PRE, _without_last), 0),
    Probe("ends inside a turn, one under", _input(_PRE, _without_last), -1),
    Probe("ends after a compaction, old usage over", _input(PRESERVED, _upto(SUMMARY)), 50_000),
    Probe("ends after a compaction, reply before it over", _input(_PRE, _upto(SUMMARY)), 50_000),
    Probe("a 300-character prompt, at", _input(), 0, prompt=_LONG_PROMPT),
    Probe("a 300-character prompt, one under", _input(), -1, prompt=_LONG_PROMPT),
    Probe("claude-sonnet-5-5, at", _input(None), 0, model="claude-sonnet-5-5"),
    Probe("claude-sonnet-5-5, one under", _input(None), -1, model="claude-sonnet-5-5"),
    Probe("claude-sonnet-4-6, window 200,000 given, at", _input(None), 0, model="claude-sonnet-4-6", window=200_000),
    Probe("claude-sonnet-4-6, window 200,000 given, one under", _input(None), -1, model="claude-sonnet-4-6",
          window=200_000),
    Probe("claude-opus-4-5 (no threshold), over 200,000", _input(None), None, model="claude-opus-4-5"),
    Probe("claude-opus-4-5, window 200,000 given, over", _input(None), None, model="claude-opus-4-5", window=200_000),
    Probe("claude-opus-4-6 (requests without 1m), at", _input(None), 0, model="claude-opus-4-6"),
    Probe("claude-opus-4-6 (requests without 1m), one under", _input(None), -1, model="claude-opus-4-6"),
    Probe("claude-opus-4-6[1m] (requests with 1m), over 200,000", _input(None), None, model="claude-opus-4-6[1m]"),
]


def _here(text: str, work: str, model: str) -> str:
    """The base with its working directory and OS those of the resume (no environment reminder),
    its model (replies, requested model, model reminder, attribution) the probe's."""
    u = os.uname()
    text = text.replace(WORKDIR, work).replace(OS_VERSION, f"{u.sysname} {u.release}")
    (name, cutoff), (own_name, own_cutoff) = NAMES[model.replace("[1m]", "")], NAMES[MODEL]
    return text.replace(MODEL, model.replace("[1m]", "")).replace(own_name, name).replace(f"cutoff is {own_cutoff}", f"cutoff is {cutoff}").replace(
        f'"knowledgeCutoff":"{own_cutoff}"', f'"knowledgeCutoff":"{cutoff}"'
    )


def _write(f: Path, objs: _Lines) -> None:
    f.write_bytes(b"".join(json.dumps(o).encode() + b"\n" for o in objs))


def warmed(model: str, scratch: Path) -> str:
    """The base resumed once by Claude Code with `model` (a small usage, a prompt "x"): the session
    then holds what Claude Code adds when the model changes (its reminder, its attribution, the
    tools it lists for that model), so a probe's resume adds only what every prompt does. Its
    working directory written back as the base's."""
    from tests.peers.claude_code_resume import harness

    work = str(scratch / "work")
    f = scratch.with_suffix(".jsonl")
    f.write_text(_here(BASE.read_text(), work, model))
    r = harness.resume(str(f), str(scratch), "x", ("--model", model))
    if r.rc != 0:
        raise harness.HarnessError(f"claude --model {model} did not resume the base (rc {r.rc}): {r.stderr[-400:]}")
    return Path(r.transcript).read_text().replace(work, WORKDIR)


def write_probe(f: Path, p: Probe, work: str, base: str | None = None) -> None:
    """The probe's file (from `base`'s text: the base's by default); with a `delta`, its usage set
    from inspector's count of what follows the reply."""
    from inspector.formats import claude_code_resume as ccr

    objs = [json.loads(x) for x in _here(base or BASE.read_text(), work, p.model).splitlines()]
    if p.delta is None:
        _write(f, p.edit(objs, 199_000 if p.model != MODEL else 0))
        return
    probe_n = 1_000
    _write(f, p.edit(objs, probe_n))
    led, path, items = _analysed(f, p.window)
    after = ccr.context_tokens(led, path, p.file_model, items)[0] - probe_n
    limit = ccr.threshold(p.file_model, p.window or ccr.model_window(led, p.file_model) or 1_000_000)
    _write(f, p.edit(objs, limit - after - p.added() + p.delta))


def _analysed(f: Path, window: int | None) -> tuple[Any, Any, Any]:
    from inspector.analysis import analyze
    from inspector.formats import load

    r = analyze(load(str(f)), window=window)
    return r.ledger, r.path, r.context


def ours(f: Path, p: Probe) -> bool:
    """inspector's verdict: `compacts_first`, or, where Claude Code adds something with the prompt
    (a longer prompt, a reminder), whether inspector's count plus its estimate reaches the threshold."""
    from inspector.analysis import analyze
    from inspector.formats import claude_code_resume as ccr
    from inspector.formats import load

    r = analyze(load(str(f)), window=p.window)
    found = any(x.code == "compacts_first" for x in r.findings)
    extra = p.added()
    if not extra or found:
        return found
    own = ccr.model_window(r.ledger, p.file_model)
    window = p.window if p.window is not None else own
    if own == 0 or window is None:
        return False
    return ccr.context_tokens(r.ledger, r.path, p.file_model, r.context)[0] + extra >= ccr.threshold(p.file_model, window)


def run(out: Path, probes: list[Probe] | None = None) -> list[tuple[Probe, bool | str, bool]]:
    """Every probe: (probe, whether Claude Code compacted first (or why it sent nothing), inspector's verdict)."""
    from concurrent.futures import ThreadPoolExecutor

    from tests.peers.claude_code_resume import harness

    probes = PROBES if probes is None else probes
    harness.cli.check_installed()
    bases = {m: warmed(m, out / f"warm-{m}") for m in sorted({p.model for p in probes} - {MODEL})}
    jobs = []
    for i, p in enumerate(probes):
        base = out / f"r{i:03d}"
        f = out / f"probe{i:03d}.jsonl"
        write_probe(f, p, str(base / "work"), bases.get(p.model))
        jobs.append((p, f, base))

    def resume(job: tuple[Probe, Path, Path]) -> Any:
        p, f, base = job
        return harness.resume(str(f), str(base), p.prompt, ("--model", p.model))

    with ThreadPoolExecutor(max_workers=3) as pool:
        runs = list(pool.map(resume, jobs))
    rows: list[tuple[Probe, bool | str, bool]] = []
    for (p, f, _base), r in zip(jobs, runs, strict=True):
        kinds = [q.get("kind") for q in r.requests if q.get("kind") in ("compact", "main")]
        got: bool | str = kinds[0] == "compact" if kinds else f"no request (rc {r.rc})"
        rows.append((p, got, ours(f, p)))
    return rows


def main() -> int:
    from tests.peers.claude_code_resume.type_probe import print_verdicts

    with tempfile.TemporaryDirectory() as tmp:
        print_verdicts(run(Path(tmp)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
