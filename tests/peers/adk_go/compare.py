"""inspector's next request against what the real adk-go sent, over the recorded adk-go corpus.

    python -m tests.peers.adk_go.compare [--corpus DIR] [--json] [-v] [NAME ...]

The corpus (`tests/peers/adk_go/corpus`, `README.md` beside it says how it was made) was written by the
real adk-go (the `2918701f` compaction stack, built with Go 1.27.3; `corpus_main`: the scenarios
without compaction, by adk-go main `0a51e153`, camelCase `actions` and export) driving `llmagent`s through a
`runner.Runner` over the GORM database session service on SQLite, against a scripted `model.LLM`
that recorded every `LLMRequest` it was given. Per scenario: `before.db` is the store after the
scenario's turns; `after_nil.db` the store after the session was resumed from a copy of it with
no new message (`Runner.Run(..., nil, ...)`), `after.db` after it was resumed from another copy
with one new user message; `requests.jsonl` every request, in order, with `phase` (`main`,
`probe_nil`, `probe`), `kind` (`agent` or `summarizer`), `contents` (the genai contents sent) and
`stored_events` (how many events the session held at the call).

Two comparisons:

- resume: the first `agent` request of each probe against inspector's next request for `before.db`
  (what `inspector context before.db --json` lists; the items' full texts from the same report).
  The `probe` request is compared without its last content (the probe's own message), and the
  prediction without its trailing continuation turn (adk-go adds it only when the contents end on
  a model turn, `internal/llminternal/contents_processor.go:77-83`). A probe before whose call
  adk-go compacted (tail retention: a `summarizer` request in that phase first) sends a summary no
  row of `before.db` holds: counted apart, its replay is the check.
- replay: every `agent` request against inspector's next request for the store it was sent from
  (`before.db` for `main`, else the probe's store), as it stood then (`--at` the events it held).

Both sides as contents: (role, parts), a part ("text", text) | ("call", name, args) | ("response",
name, response); adjacent text parts joined by a newline (an item's text is one string, where
adk-go sends a foreign event a part per line). Ids are left out: adk-go sends a call's id only when
it is not one of its own `adk-` ids (`internal/utils/utils.go:52-66`) and inspector's items name
events. A match is `exact`, or `agree` once adjacent response-only user contents are merged
(adk-go sends the response events of one call event as one content, `mergeFunctionResponseEvents`,
`contents_processor.go:377-456`, `:478-534`; inspector lists an item per event). In a replay, a foreign
response sent as `result: {}` is taken as the `result: null` the store gives: adk-go's running
process holds the empty map a tool returned (`transfer_to_agent`'s), which the row does not keep
(genai `FunctionResponse.Response` is `omitempty`), so a resumed process sends `null`
(`stringify`, `contents_processor.go:619-622`); inspector reads the row.

Also: `inspector analyze --json` on `before.db` and `after.db` gives no error diagnostic.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.analysis import analyze
from inspector.analysis.export import analyze_json, context_json
from inspector.formats import load

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
CORPUS_MAIN = HERE / "corpus_main"  # the same scenarios but compaction, by adk-go main (0a51e153)
Part = tuple[Any, ...]
Content = tuple[str, tuple[Part, ...]]


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def parts_of(content: dict[str, Any] | None) -> tuple[Part, ...]:
    out: list[Part] = []
    for p in (content or {}).get("parts") or []:
        if p.get("functionCall") is not None:
            fc = p["functionCall"]
            out.append(("call", fc.get("name", ""), _canon(fc.get("args") or {})))
        elif p.get("functionResponse") is not None:
            fr = p["functionResponse"]
            out.append(("response", fr.get("name", ""), _canon(fr.get("response") or {})))
        elif "text" in p:
            out.append(("text", p["text"]))
        else:
            out.append(("other", _canon(p)))
    return _joined(out)


def _joined(parts: list[Part]) -> tuple[Part, ...]:
    """Adjacent text parts as one, joined by newlines: inspector holds an item's text as one
    string, where adk-go sends a foreign event as a part per line ("For context:", then one per
    part of the event, contents_processor.go:575-602)."""
    out: list[Part] = []
    for p in parts:
        if p[0] == "text" and out and out[-1][0] == "text":
            out[-1] = ("text", out[-1][1] + "\n" + p[1])
        else:
            out.append(p)
    return tuple(out)


def as_content(c: dict[str, Any]) -> Content:
    return (c.get("role") or "", parts_of(c))


def _role(inspector_role: str) -> str:
    return "model" if inspector_role == "assistant" else "user"


def stored_contents(db: Path) -> dict[str, dict[str, Any] | None]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {i: (json.loads(c) if c else None) for i, c in con.execute("SELECT id, content FROM events")}
    finally:
        con.close()


def predicted(db: Path, at: int | None = None, store: Path | None = None) -> tuple[list[Content], dict[str, Any], list[dict[str, Any]]]:
    """inspector's next request for the store or export `db` (as it stood at event `at`: `--at`)
    as contents (each event's as `store` holds it, default `db`), its `context --json` document, and
    the diagnostics of `analyze --json`."""
    report = analyze(load(str(db), upto_line=at, fingerprint=False))
    doc = context_json(report)
    diags = _diagnostics(report)
    events = stored_contents(store or db)
    out: list[Content] = []
    last_record: str | None = None
    for it in report.context:
        if it.kind == "message" and not it.text and it.record_id is not None and it.record_id in events:
            if it.record_id == last_record:  # (one event's parts, split into items: one content)
                continue
            last_record = it.record_id
            c = events[it.record_id]
            if c and it.removed_results:  # (sent less those responses)
                gone = set(it.removed_results)
                c = {**c, "parts": [p for p in c.get("parts") or [] if (p.get("functionResponse") or {}).get("id") not in gone]}
            out.append((_role(it.role), parts_of(c)))  # (the role inspector says the model sees)
            continue
        last_record = None
        out.append((_role(it.role), (("text", it.text),)))
    return out, doc, diags


def merged_responses(contents: list[Content]) -> list[Content]:
    """Adjacent user contents holding function responses only, as one: adk-go sends the response
    events of one call event as one content (mergeFunctionResponseEvents,
    contents_processor.go:377-456, :478-534), where inspector lists an item per event (its items name
    records; the request's parts, their order and roles are the same)."""
    out: list[Content] = []
    for role, parts in contents:
        only = bool(parts) and all(p[0] == "response" for p in parts)
        if only and role == "user" and out and out[-1][0] == "user" and out[-1][1] and all(p[0] == "response" for p in out[-1][1]):
            out[-1] = ("user", out[-1][1] + parts)
        else:
            out.append((role, parts))
    return out


def _diagnostics(report: Any) -> list[dict[str, Any]]:
    """`analyze --json`'s diagnostics, each with its severity (the ledger's)."""
    severity = {(d.line, d.problem, d.message): d.severity for d in report.ledger.diagnostics}
    return [{**d, "severity": severity.get((d["line"], d["problem"], d["message"]), "warning")} for d in analyze_json(report)["diagnostics"]]


@dataclass
class Probe:
    phase: str
    sent: list[Content]
    predicted: list[Content]
    compacted_at_probe: bool
    agree: bool = False  # the same contents once adjacent response contents are merged (`merged_responses`)
    exact: bool = False  # the same contents as listed
    first_difference: int | None = None


@dataclass
class Result:
    name: str
    probes: list[Probe] = field(default_factory=list)
    replays: list[Probe] = field(default_factory=list)
    export_differs: int | None = None  # where the export's request first differs from the store's
    diagnostics: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    context_doc: dict[str, Any] = field(default_factory=dict)


def _first_difference(a: list[Content], b: list[Content]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def compare_scenario(d: Path) -> Result:
    res = Result(d.name)
    pred, doc, diags = predicted(d / "before.db")
    res.context_doc = doc
    res.diagnostics["before.db"] = diags
    if (d / "before.export.json").exists():
        # adk-go's JSON export of the same session (json.Marshal of its events): the same request.
        got, _, res.diagnostics["before.export.json"] = predicted(d / "before.export.json", store=d / "before.db")
        res.export_differs = _first_difference(got, pred)
    if (d / "after.db").exists():
        res.diagnostics["after.db"] = _diagnostics(analyze(load(str(d / "after.db"), fingerprint=False)))
    reqs = [json.loads(line) for line in (d / "requests.jsonl").read_text().splitlines() if line.strip()]
    for phase in ("probe_nil", "probe"):
        mine = [r for r in reqs if r["phase"] == phase]
        first = next((i for i, r in enumerate(mine) if r["kind"] == "agent"), None)
        if first is None:
            continue
        compacted = any(r["kind"] == "summarizer" for r in mine[:first])
        sent = [as_content(c) for c in mine[first]["contents"] or []]
        want = list(pred)
        if phase == "probe":
            sent = sent[:-1]
            if want and want[-1][0] == "user" and want[-1][1] == (("text", CONTINUE),):
                want = want[:-1]
        p = Probe(phase, sent, want, compacted)
        p.exact = _first_difference(sent, want) is None
        p.first_difference = _first_difference(merged_responses(sent), merged_responses(want))
        p.agree = p.first_difference is None
        res.probes.append(p)
    # Replay: every request adk-go sent, against inspector on the store as it stood at that call
    # (`--at` the number of events stored then; the store only grows).
    stores = {"main": d / "before.db", "probe_nil": d / "after_nil.db", "probe": d / "after.db"}
    for k, r in enumerate(reqs):
        db = stores.get(r["phase"])
        if r["kind"] != "agent" or db is None or not db.exists() or r.get("stored_events", -1) < 0:
            continue
        sent = [_stored_form(as_content(c)) for c in r["contents"] or []]
        p = Probe(f"{r['phase']}#{k}", sent, predicted(db, r["stored_events"])[0], False)
        p.exact = _first_difference(sent, p.predicted) is None
        p.first_difference = _first_difference(merged_responses(sent), merged_responses(p.predicted))
        p.agree = p.first_difference is None
        res.replays.append(p)
    return res


CONTINUE = "Continue processing previous requests as instructed. Exit or provide a summary if no more outputs are needed."


_LIVE_EMPTY = re.compile(r"(\] `[^`]*` tool returned result: )\{\}$", re.M)


def _stored_form(c: Content) -> Content:
    """A content of a running process as a resumed one sends it: a foreign response's empty map
    (held in memory) as the `null` its row gives."""
    role, parts = c
    return role, tuple(("text", _LIVE_EMPTY.sub(r"\1null", p[1])) if p[0] == "text" else p for p in parts)


def scenarios(corpus: Path = CORPUS, names: list[str] | None = None) -> list[Path]:
    return sorted(d for d in corpus.iterdir() if (d / "before.db").exists() and (not names or d.name in names))


def _show(c: Content | None) -> str:
    if c is None:
        return "(none)"
    role, parts = c
    return f"{role}: " + " | ".join(" ".join(str(x)[:70] for x in p) for p in parts)


@dataclass
class Tally:
    n: int = 0
    agree: int = 0
    exact: int = 0

    def add(self, p: Probe) -> None:
        self.n += 1
        self.agree += p.agree
        self.exact += p.exact

    def __str__(self) -> str:
        merged = self.agree - self.exact
        return f"{self.agree}/{self.n} agree" + (f" ({merged} once adjacent response contents are merged)" if merged else "")


def summary(results: list[Result]) -> dict[str, Tally]:
    """Agreement per kind of comparison: `resume` (a probe against the store before it), `resume,
    compacted at the probe` (adk-go compacted before the probe's call: not comparable with the store
    before it; its replay is), `replay` (every request against the store at its call)."""
    out = {"resume": Tally(), "resume, compacted at the probe": Tally(), "replay": Tally()}
    for r in results:
        for p in r.probes:
            out["resume, compacted at the probe" if p.compacted_at_probe else "resume"].add(p)
        for p in r.replays:
            out["replay"].add(p)
    return out


def error_diagnostics(results: list[Result]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(r.name, where, x) for r in results for where, ds in r.diagnostics.items() for x in ds if x["severity"] == "error"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true", help="list the agreements too")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args(argv)
    results = [compare_scenario(d) for d in scenarios(args.corpus, args.names)]
    tally = summary(results)
    errors = error_diagnostics(results)
    if args.json:
        print(json.dumps({
            "scenarios": [{"name": r.name, "diagnostics": r.diagnostics, "probes": [vars(p) for p in r.probes],
                           "replays": [vars(p) for p in r.replays]} for r in results],
            "exports_differ": {r.name: r.export_differs for r in results if r.export_differs is not None},
            "summary": {k: vars(v) for k, v in tally.items()},
        }, indent=1, default=list))  # fmt: skip
    else:
        for r in results:
            for p in r.probes + r.replays:
                tag = ("agree" if p.exact else "merged") if p.agree else "DIFFER"
                if p.agree and not args.verbose:
                    continue
                extra = " (compacted at the probe)" if p.compacted_at_probe else ""
                print(f"{tag:6} {r.name:24} {p.phase:12} sent={len(p.sent):2} predicted={len(p.predicted):2}{extra}")
                if not p.agree:
                    i = p.first_difference or 0
                    print(f"       at content {i}: sent      {_show(p.sent[i] if i < len(p.sent) else None)}")
                    print(f"       {' ' * len(str(i))}            predicted {_show(p.predicted[i] if i < len(p.predicted) else None)}")
            if r.export_differs is not None:
                print(f"DIFFER {r.name:24} {'export':12} its request differs from the store's at content {r.export_differs}")
            for where, ds in r.diagnostics.items():
                for x in ds:
                    tag = "ERROR" if x["severity"] == "error" else "note"
                    print(f"{tag:6} {r.name:24} {where:12} {x['problem']} ({x['severity']}): {x['message'].split(': ', 1)[-1][:150]}")
        print()
        for k, v in tally.items():
            print(f"{k:32} {v}")
        exports = [r for r in results if "before.export.json" in r.diagnostics]
        same = sum(r.export_differs is None for r in exports)
        print(f"export (JSON) vs store          {same}/{len(exports)} give the same request")
        print(f"{len(results)} scenarios; {len(errors)} error diagnostics over {sum(len(r.diagnostics) for r in results)} stores and exports")
    ok = tally["resume"].agree == tally["resume"].n and tally["replay"].agree == tally["replay"].n and not errors
    ok = ok and all(r.export_differs is None for r in results)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
