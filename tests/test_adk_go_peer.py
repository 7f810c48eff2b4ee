"""inspector against the real adk-go: the recorded corpora (`tests/peers/adk_go/compare.py`).

The corpora are recorded in the repository (`tests/peers/adk_go/corpus`, written by the real adk-go at
2918701f, and `corpus_main`, by adk-go main 0a51e153; `tests/peers/adk_go/README.md` says how, the
build recipe is not committed).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.peers.adk_go import compare

# Requests inspector does not predict, each with the rule it misses (none known).
KNOWN: dict[tuple[str, str], str] = {}


@pytest.fixture(scope="module", params=[compare.CORPUS, compare.CORPUS_MAIN], ids=["2918701f", "main"])
def results(request: pytest.FixtureRequest) -> list[compare.Result]:
    corpus: Path = request.param
    assert compare.scenarios(corpus), f"{corpus} holds no scenario"
    return [compare.compare_scenario(d) for d in compare.scenarios(corpus)]


def _differ(probes: list[compare.Probe]) -> list[str]:
    return [p.phase for p in probes if not p.agree]


def test_the_corpus_is_the_one_described(results: list[compare.Result]) -> None:
    names = {r.name for r in results}
    assert {"plain", "parallel_calls", "unanswered_last", "long_running_answered", "multi_agent", "confirmation"} <= names
    assert all(len(r.probes) == 2 for r in results)
    assert all("before.export.json" in r.diagnostics for r in results)


def test_resumed_sessions_get_the_predicted_request(results: list[compare.Result]) -> None:
    """Each session resumed for one more turn (no new message; a new user message) is sent what
    inspector predicts from the store before it, unless adk-go compacted before that call (tail
    retention: its replay is checked)."""
    wrong = {r.name: _differ([p for p in r.probes if not p.compacted_at_probe]) for r in results}
    assert {k: v for k, v in wrong.items() if v} == {}


def test_every_request_is_the_one_predicted_for_the_store_at_its_call(results: list[compare.Result]) -> None:
    """Every request adk-go sent (mid-turn calls, calls after a tail-retention compaction, the
    sub-agent's) is what inspector predicts from the store as it stood at that call."""
    wrong = {(r.name, ph) for r in results for ph in _differ(r.replays)}
    assert wrong == set(KNOWN), sorted(wrong ^ set(KNOWN))


def test_the_export_gives_the_stores_request(results: list[compare.Result]) -> None:
    assert {r.name: r.export_differs for r in results if r.export_differs is not None} == {}


def test_the_real_stores_load_without_error_diagnostics(results: list[compare.Result]) -> None:
    assert compare.error_diagnostics(results) == []
