"""Repairs inspector wrote into adk-go stores, resumed by the real adk-go: what it sent against what
inspector predicts for the repaired store.

    python -m tests.peers.adk_go.repaired [--dir DIR] [NAME ...]

`tests/peers/adk_go/repaired/CASE/` (`README.md` beside it says how it was made): `case.json` (the corpus
scenario, the `inspector repair` arguments, the inserted event's id and time), `repaired.db` (a copy
of the scenario's `before.db` after `inspector repair --write`), `resume_spec.json` (the scenario
with compaction configured so that adk-go honours records, contents_processor.go:52-69, and never
compacts during the resume), `after_nil.db` / `after_probe.db` (the repaired store after one turn
with no message / the probe message) and `requests.jsonl` (every request adk-go sent, as the
corpus's). Each probe's first `agent` request is compared with `inspector context`'s for
`repaired.db` as `compare.py` compares a resume (same normalizations).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tests.peers.adk_go import compare

REPAIRED = Path(__file__).resolve().parent / "repaired"


def cases(root: Path = REPAIRED, names: list[str] | None = None) -> list[Path]:
    return sorted(d for d in root.iterdir() if (d / "repaired.db").exists() and (not names or d.name in names))


def case_info(d: Path) -> dict[str, Any]:
    return dict(json.loads((d / "case.json").read_text()))


def probes(d: Path, store: Path | None = None) -> list[compare.Probe]:
    """Each recorded probe's first agent request against inspector's prediction for `store`
    (default: the recorded `repaired.db`)."""
    pred, _doc, _diags = compare.predicted(store or d / "repaired.db")
    reqs = [json.loads(line) for line in (d / "requests.jsonl").read_text().splitlines() if line.strip()]
    out: list[compare.Probe] = []
    for phase in ("probe_nil", "probe"):
        mine = [r for r in reqs if r["phase"] == phase]
        first = next((i for i, r in enumerate(mine) if r["kind"] == "agent"), None)
        if first is None:
            continue
        sent = [compare.as_content(c) for c in mine[first]["contents"] or []]
        want = list(pred)
        if phase == "probe":
            sent = sent[:-1]
            if want and want[-1] == ("user", (("text", compare.CONTINUE),)):
                want = want[:-1]
        p = compare.Probe(phase, sent, want, any(r["kind"] == "summarizer" for r in mine[:first]))
        p.exact = compare._first_difference(sent, want) is None
        p.first_difference = compare._first_difference(compare.merged_responses(sent), compare.merged_responses(want))
        p.agree = p.first_difference is None
        out.append(p)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, default=REPAIRED)
    ap.add_argument("names", nargs="*")
    args = ap.parse_args(argv)
    n = ok = 0
    for d in cases(args.dir, args.names):
        for p in probes(d):
            n += 1
            ok += p.agree
            tag = ("agree" if p.exact else "merged") if p.agree else "DIFFER"
            print(f"{tag:6} {d.name:32} {p.phase:10} sent={len(p.sent):2} predicted={len(p.predicted):2}" + (" (compacted)" if p.compacted_at_probe else ""))
            if not p.agree:
                i = p.first_difference or 0
                print(f"       at {i}: sent      {compare._show(p.sent[i] if i < len(p.sent) else None)}")
                print(f"              predicted {compare._show(p.predicted[i] if i < len(p.predicted) else None)}")
    print(f"{ok}/{n} resumes agree")
    return 0 if ok == n else 1


if __name__ == "__main__":
    sys.exit(main())
