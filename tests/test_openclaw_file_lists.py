"""OpenClaw's file lists after a summary are OpenClaw's own: each list bounded at 900 characters,
the paths past it named as "...and N more" (`formatFileOperations`, openclaw@2026.9.6
dist/compaction-CAzwgOuQ.mjs:145-171). The real function is run in OpenClaw's node and compared
with what a repair of an OpenClaw store appends (`Runtime.file_lists`).
"""

from __future__ import annotations

import json
import random
import subprocess

import pytest

from inspector.formats import pi
from inspector.formats.openclaw_sqlite import FORMAT
from tests.peers.openclaw.generate import NODE, RUNTIME

MODULE = RUNTIME / "openclaw" / "dist" / "compaction-CAzwgOuQ.mjs"
# `formatFileOperations` is exported from the bundle as `S`.
SCRIPT = """
const m = await import(process.argv[1]);
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(cases.map(([r, w]) => m.S(r, w))));
"""


def _paths(rng: random.Random) -> list[str]:
    alphabet = "abcdefghij/._- é漢😀"
    n = rng.choice([0, 1, 3, 20, 60, 200])
    return [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 80))) + rng.choice(["", " ", "\t"])
        for _ in range(n)
    ]


def _cases() -> list[tuple[list[str], list[str]]]:
    rng = random.Random(17)
    cases: list[tuple[list[str], list[str]]] = [([], []), (["a.py"], []), ([], ["b.py"]), (["x" * 895], ["y" * 2000])]
    cases += [(_paths(rng), _paths(rng)) for _ in range(60)]
    # Every path length against the bound: some land exactly on it, with or without the overflow line.
    cases += [(["p" * n] * k, []) for n in range(1, 100) for k in (3, 40)]
    return cases


def _openclaw(cases: list[tuple[list[str], list[str]]]) -> list[str]:
    if not NODE.exists() or not MODULE.exists():
        pytest.fail(f"OpenClaw 2026.9.6 is not installed ({MODULE}): run tests/peers/openclaw/install.sh")
    script = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" + SCRIPT
    out = subprocess.run(
        [str(NODE), "--input-type=module", "-e", script, str(MODULE)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout)


def test_file_lists_are_openclaws_own() -> None:
    cases = _cases()
    theirs = _openclaw(cases)
    ours = [FORMAT.runtime.file_lists(r, w) for r, w in cases]
    for (r, w), mine, real in zip(cases, ours, theirs, strict=True):
        assert ("\n\n" + mine if mine else "") == real, (len(r), len(w))
    # The bound is OpenClaw's, not pi's: pi lists every path.
    long = cases[3]
    assert pi.RUNTIME.file_lists(*long) != FORMAT.runtime.file_lists(*long)
