"""A repair of a damaged Codex rollout is one the real Codex resumes as predicted.

`tests/peers/codex_resume/repair_probe.py` makes each probe of the type probe a rollout of its own
(the peer corpus's `auto_compact.jsonl`, a damaged line, a clean numbered one), repairs it and has
the pinned Codex (0.169.0) resume the repaired file: its first request must be exactly what
`inspector context --json` predicts (`resumed_as_predicted` of tests/test_codex_accepts.py: every
item in order and to the character, then only the new turn). Here: every probe repaired with
`compact`, and with `recover` the ones that once failed. `python -m
tests.peers.codex_resume.repair_probe --as-written` runs both strategies on every probe, and the
damaged rollouts themselves (where the line rule's NOT_MIRRORED names the ones that part).

Before: a message holding a value nested 125 deep in a field Codex does not name (its line 127
levels deep: Codex reads it) was copied verbatim into the `compacted` line's replacement history,
three levels further down: 129 levels, past serde_json's 128, so Codex skipped the whole checkpoint
and resumed from its own older one, while the read-back (which does not walk a line's depth) said
our summary was sent. Now a kept item that would nest too deep there is written as Codex holds it
(without the fields its type does not name), or the repair is refused, naming why.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inspector.formats.codex_lines import SERDE_DEPTH, nesting
from tests.conftest import need_shared
from tests.peers import repair_campaign
from tests.peers.codex_resume import repair_probe, type_probe
from tests.peers.codex_resume import resume as harness
from tests.scope import probe_cases

# Where the repaired rollout is not sent as predicted, by design.
NOT_MIRRORED = {
    # Codex decodes each image as it builds a request and sends, in place of one it cannot decode
    # (the probe's is two bytes of no PNG), the text "image content omitted because it could not be
    # processed" (a string of the codex binary): inspector does not decode images.
    "an input_image part": "Codex's placeholder for an image it cannot decode",
}
DEEP = ("a value nested 125 deep (line 127)", "a value nested 126 deep (line 128)")


def _index(name: str) -> int:
    return repair_probe.NAMES.index(name)


def _repair(f: Path, strategy: str, dest: Path) -> tuple[int, str]:
    shutil.copyfile(f, dest)
    code, _, err = repair_campaign.inspector(["repair", str(dest), "--strategy", strategy, *repair_probe.STRATEGIES[strategy], "--write"])
    return code, err


def test_a_kept_item_is_written_no_deeper_than_codex_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No runtime needed: the compacted line a repair writes nests no deeper than Codex's parser
    reads (before: 129 levels, and Codex skipped the checkpoint); the kept message is there, as
    Codex holds it."""
    need_shared(type_probe.BASE)
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    files = repair_probe.write_probes(tmp_path / "probes")
    for name in DEEP:
        for strategy in ("compact", "recover"):
            f = tmp_path / f"{_index(name)}.{strategy}.jsonl"
            code, err = _repair(files[_index(name)], strategy, f)
            assert code == 0, err
            line = json.loads(f.read_bytes().splitlines()[-3])
            assert line["type"] == "compacted" and nesting(line) < SERDE_DEPTH, (name, strategy, nesting(line))
            kept = [it for it in line["payload"]["replacement_history"] if "PROBE-000" in json.dumps(it)]
            assert kept == [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "PROBE-000"}]}], (name, strategy)


def test_an_item_that_cannot_be_written_shallow_enough_is_refused_naming_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept reasoning item with a deep field of its own: without it, it is another item to the
    re-read (its content is its identity), so the repair is refused, naming why, nothing written."""
    need_shared(type_probe.BASE)
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    f = tmp_path / "deep-reasoning.jsonl"
    probe = type_probe.Probe("deep reasoning", type_probe._item(lambda m: {**type_probe._reasoning(m), "x": json.loads(type_probe._nested(125))}))
    type_probe.probe_rollout(type_probe.BASE, f, [probe])
    before = f.read_bytes()
    code, _, err = repair_campaign.inspector(["repair", str(f), "--strategy", "compact", *repair_probe.STRATEGIES["compact"], "--write"])
    assert code == 2 and "deeper than Codex's JSON parser reads (128 levels)" in err, err
    assert f.read_bytes() == before


# Half 1 in the full probe campaign only (tests/scope.py): half 0 holds a DEEP and a NOT_MIRRORED probe too.
@pytest.mark.parametrize("half", probe_cases([0, 1], [0]))
def test_every_repaired_damaged_rollout_is_what_codex_resumes(half: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every probe repaired with compact (the recover copies of the once-failing ones too), in two
    halves (a Codex resume is about a second: each half stays under a minute)."""
    need_shared(type_probe.BASE)
    have = harness.installed_version()
    if have != harness.CODEX_VERSION:
        pytest.fail(f"Codex {harness.CODEX_VERSION} is not installed at {harness.CODEX} (found {have}): run tests/install_codex.sh", pytrace=False)
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    files = repair_probe.write_probes(tmp_path / "probes")
    picked = {i: ["compact"] for i in range(half, len(files), 2)}
    for name in (*DEEP, *NOT_MIRRORED):
        if _index(name) % 2 == half:
            picked[_index(name)] = ["compact", "recover"]
    written, skipped = repair_campaign.repair_all(files, repair_probe.NAMES, tmp_path / "repaired", repair_probe.STRATEGIES, picked)
    assert skipped == [] and len(written) == sum(map(len, picked.values())), skipped
    rows = repair_probe.check(written, tmp_path / "resume")
    named, unexpected = repair_campaign.not_mirrored(rows, list(NOT_MIRRORED))
    assert not unexpected, unexpected
    assert set(named) == {n for n in NOT_MIRRORED if _index(n) % 2 == half}, rows
