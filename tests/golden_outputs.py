"""The golden outputs of `inspector analyze --json` and `inspector context --json` (issue 15: speed must
not change a byte of the analysis). Written once from main before the loaders were made faster:

    python -m tests.golden_outputs --write      # (re)writes tests/golden/outputs/

Inputs: every sample session, every real session (`../shared/real_sessions/`), every session file of the
Claude Code and Codex peer corpora, and, for Claude Code and Codex, every wrong-typed-field case of the
bad-input seeds plus each seed with one line cut in half or dropped (the diagnostics must not change
either). Whole files are kept as text, so a failure shows the diff; the many small cases by hash.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.bad_input_seeds import SEEDS, encode, type_cases

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("INSPECTOR_SHARED", REPO.parent / "shared"))
GOLDEN = REPO / "tests" / "golden" / "outputs"
COMMANDS = ("analyze", "context")
CASE_FORMATS = ("claude_code", "codex")


def session_files() -> list[str]:
    """Every whole-file input, as a path relative to the repository (the outputs name it)."""
    found: list[Path] = sorted((REPO / "sample_sessions").glob("*/*.jsonl"))
    for fmt in ("claude_code", "codex", "pi"):
        found += sorted((SHARED / "real_sessions" / fmt).glob("*.jsonl"))
    for fmt in CASE_FORMATS:
        corpus = SHARED / "peers" / fmt / "corpus"
        found += sorted(
            p for p in corpus.rglob("*.jsonl") if not p.name.endswith((".requests.jsonl", ".stream.jsonl"))
        )
    return [os.path.relpath(p, REPO) for p in found]


def golden_name(rel: str) -> str:
    return rel.replace("../", "").replace("/", "__") + ".json"


def run_cli(argv: list[str]) -> dict[str, object]:
    """One CLI run in this process: exit code, stdout and stderr, exactly as a user sees them."""
    from inspector.cli.main import main

    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 2
        out.flush()
    return {"rc": rc, "stdout": raw.getvalue().decode("utf-8"), "stderr": err.getvalue()}


def file_outputs(rel: str) -> dict[str, object]:
    return {cmd: run_cli([cmd, rel, "--json"]) for cmd in COMMANDS}


def damaged_lines(data: bytes) -> Iterator[tuple[str, bytes]]:
    lines = data.splitlines(keepends=True)
    for i, line in enumerate(lines):
        yield f"line {i + 1} cut", b"".join([*lines[:i], line[: len(line) // 2] + b"\n", *lines[i + 1 :]])
        yield f"line {i + 1} dropped", b"".join([*lines[:i], *lines[i + 1 :]])


def cases(fmt: str) -> Iterator[tuple[str, bytes]]:
    yield from damaged_lines(encode(fmt, SEEDS[fmt]))
    for label, session in type_cases(fmt):
        yield label, encode(fmt, session)


def case_digests(fmt: str, tmp: Path) -> dict[str, str]:
    """label -> sha256 of both commands' outputs on that case."""
    path = tmp / f"{fmt}-case.jsonl"
    out: dict[str, str] = {}
    for label, data in cases(fmt):
        path.write_bytes(data)
        res = [run_cli([cmd, str(path), "--json"]) for cmd in COMMANDS]
        blob = json.dumps(res, sort_keys=True).replace(str(path), "CASE")
        out[label] = hashlib.sha256(blob.encode()).hexdigest()
    return out


def write(tmp: Path) -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for old in GOLDEN.glob("*.json"):
        old.unlink()
    for rel in session_files():
        (GOLDEN / golden_name(rel)).write_text(json.dumps(file_outputs(rel), indent=1, sort_keys=True) + "\n")
    for fmt in CASE_FORMATS:
        (GOLDEN / f"cases__{fmt}.json").write_text(json.dumps(case_digests(fmt, tmp), indent=1, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="write the golden outputs from this checkout's code")
    ns = ap.parse_args(argv)
    if not ns.write:
        ap.print_help()
        return 2
    os.chdir(REPO)
    os.environ["INSPECTOR_FORCE_OFFLINE_TOKENIZER"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        write(Path(tmp))
    print(f"wrote {len(list(GOLDEN.glob('*.json')))} golden files to {os.path.relpath(GOLDEN, REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
