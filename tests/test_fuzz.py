"""The fuzzer in CI (issue 11): a fixed seed, a few hundred cases and 20 app runs (tests/fuzz/),
over every seed kind: the files found on disk and the stores built from adk-go's, maka's and
NextClaw's own types (tests/fuzz/seeds.py).

One campaign runs once for the module; each `test_no_violations[CLASS]` then fails listing the
distinct violations of its class that remain (location, count, formats, the command that
reproduces it on the minimized input), so a report shows at a glance which classes are left:
crashes, hangs, memory, diagnostics, writes, exit codes / JSON. The reproducers are in the
campaign's output folder, named in the failure. The last tests check the fuzzer itself.
"""

from __future__ import annotations

import json
import random
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import SAMPLES, SHARED, need_shared
from tests.fuzz import mutations
from tests.fuzz.campaign import Summary, commands, make_cases, run_campaign
from tests.fuzz.corpus import BUILT_KINDS, KINDS, Seed, kind_of, side_files
from tests.fuzz.runner import run_cli
from tests.fuzz.seeds import build_seeds

SEED = 11
CASES = 380  # 300 before adk-go, maka and NextClaw joined (their cases are cheap)
APP_RUNS = 20

CLASSES: dict[str, tuple[str, ...]] = {
    "crash": ("crash", "died"),
    "hang": ("hang", "app_stuck"),
    "memory": ("rss",),
    "diagnostic": ("diagnostic",),
    "write": ("input_changed", "out_on_failure", "out_replaced", "stray_file"),
    "exit_or_json": ("exit_code", "bad_json"),
    "fuzzer": ("harness",),
}


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Summary:
    need_shared(SHARED / "real_sessions")
    need_shared(SHARED / "peers")
    out = tmp_path_factory.mktemp("fuzz")
    return run_campaign(
        cases=CASES, seed=SEED, out=out, app_cases=APP_RUNS, timeout=20, allow_huge=False, minimize_budget=20,
        log=lambda _: None,
    )  # fmt: skip


@pytest.mark.parametrize("cls", list(CLASSES))
def test_no_violations(campaign: Summary, cls: str) -> None:
    left = [f for f in campaign.findings if f.kind in CLASSES[cls]]
    lines = [f"{len(left)} distinct {cls} violation(s) in {campaign.cases} fuzz cases (seed {SEED}; {campaign.out}):"]
    for f in left:
        lines.append(f"  [{f.kind}] {f.key}  x{f.count} ({', '.join(sorted(f.formats))}): {f.detail[:200]}")
        lines.append(f"      reproduce: {f.repro}")
    assert not left, "\n".join(lines)


def test_every_format_and_command_is_fuzzed(campaign: Summary) -> None:
    assert set(KINDS) <= set(campaign.per_format), campaign.per_format
    assert {label for label, _ in commands()} | {"app"} <= set(campaign.per_command), campaign.per_command
    assert campaign.per_command["app"] == APP_RUNS


# ---------------------------------------------------------------------------------------- the fuzzer itself


def _corpus() -> dict[str, list[Seed]]:
    pi = SAMPLES / "pi" / "healthy_chained.jsonl"
    return {k: [Seed(k, str(pi), pi.name)] for k in KINDS}


def test_cases_are_a_function_of_the_seed() -> None:
    a = make_cases(3, 50, 5, _corpus(), allow_huge=False, app_wait=5)
    b = make_cases(3, 50, 5, _corpus(), allow_huge=False, app_wait=5)
    c = make_cases(4, 50, 5, _corpus(), allow_huge=False, app_wait=5)
    assert a == b
    assert a != c


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(n for n, m in mutations.REGISTRY.items() if "pi" in m.kinds and n != "huge_line")),
       seed=st.integers(0, 1 << 30))  # fmt: skip
def test_a_mutation_is_deterministic(tmp_path_factory: pytest.TempPathFactory, name: str, seed: int) -> None:
    folder = tmp_path_factory.mktemp("mut")
    outs = []
    for i in range(2):
        p = folder / f"{i}.jsonl"
        shutil.copyfile(SAMPLES / "pi" / "healthy_chained.jsonl", p)
        mutations.apply(p, [(name, seed)], mutations.Context())
        outs.append(p.read_bytes())
    assert outs[0] == outs[1]


def test_wrong_type_lands_on_the_keys_the_adapters_read() -> None:
    lines = (SAMPLES / "pi" / "healthy_chained.jsonl").read_text().splitlines()
    record = next(o for o in map(json.loads, lines) if o.get("type") == "message")
    rng = random.Random(1)
    picks = [mutations.pick_path(rng, record) for _ in range(200)]
    on_read_keys = sum(1 for p in picks if p and isinstance(p[-1], str) and p[-1] in mutations.ADAPTER_KEYS)
    assert on_read_keys > 120, picks


def test_the_runner_reports_a_crash_at_its_project_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    import inspector.cli.main as cli_main

    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("boom")

    monkeypatch.setattr(cli_main, "analyze", broken)
    res = run_cli(["analyze", str(SAMPLES / "pi" / "healthy_chained.jsonl")])
    assert [v.kind for v in res.violations] == ["crash"]
    assert res.violations[0].key.startswith("ValueError at inspector/cli/main.py:")
    assert "boom" in res.violations[0].trace


def test_built_seeds_are_read_as_their_runtime(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every built kind has seeds its adapter reads, every seed is read as its kind, and a
    journal's metadata sidecar is one of the files the runner keeps unchanged."""
    built = build_seeds(tmp_path_factory.mktemp("seeds"))
    assert {k for k, _ in built} == set(BUILT_KINDS)
    read = {k for k, p in built if kind_of(p) == k}
    assert read == set(BUILT_KINDS), built
    assert [p for k, p in built if kind_of(p) != k] == []
    journal = next(p for k, p in built if k == "nextclaw" and p.parent.name == "nextclaw-seed004")
    assert journal.with_name("agent_main_s1.metadata.json") in [p for p in side_files(journal) if p.exists()]
    assert build_seeds(tmp_path_factory.mktemp("again"))[0][1].read_bytes() == built[0][1].read_bytes()


def test_a_campaign_can_be_restricted_to_some_formats() -> None:
    corpus = {k: v for k, v in _corpus().items() if k in ("maka_db", "nextclaw")}
    cases = make_cases(1, 60, 2, corpus, allow_huge=False, app_wait=5, specials=False)
    assert {c["kind"] for c in cases} == {"maka_db", "nextclaw"}


def test_wrong_id_reaches_a_member_of_a_list_of_ids() -> None:
    """`wrong_id` puts a container, number, boolean, null or huge string at an id-like position
    or among an array's members: the shape of an ADK event whose `long_running_tool_ids` held a
    list (`[["c1"]]`), which wrong_type's whole-value draws almost never made."""
    event = {
        "id": "e1", "author": "model", "invocation_id": "i1", "long_running_tool_ids": ["c1"],
        "content": {"role": "model", "parts": [{"function_call": {"id": "c1", "name": "ls", "args": {}}}]},
    }  # fmt: skip
    member, call_id, name = set(), set(), set()
    for seed in range(400):
        v = json.loads(json.dumps(event))
        assert mutations.wrong_id(random.Random(seed), v)
        ids = v.get("long_running_tool_ids")
        if isinstance(ids, list):
            member |= {type(x).__name__ for x in ids if not isinstance(x, str)}
        part = v["content"]["parts"][0] if isinstance(v["content"]["parts"], list) and v["content"]["parts"] else {}
        fc = part.get("function_call") if isinstance(part, dict) else None
        fc = fc if isinstance(fc, dict) else {}
        call_id |= {type(fc.get("id")).__name__} - {"str"}
        name |= {type(fc.get("name")).__name__} - {"str"}
    for got in (member, call_id, name):
        assert {"list", "dict", "int", "NoneType"} <= got, (member, call_id, name)
    # A list of ids the runtime wrote as null (most of ADK's events) becomes a list with a wrong member.
    event["long_running_tool_ids"] = None
    became = 0
    for seed in range(400):
        v = json.loads(json.dumps(event))
        mutations.wrong_id(random.Random(seed), v)
        ids = v.get("long_running_tool_ids")
        became += isinstance(ids, list) and any(isinstance(x, (list, dict)) for x in ids)
    assert became >= 20, became
