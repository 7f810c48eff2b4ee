"""Each producer's own rules for what it sends next (DESIGN §3), as data.

The analysis is format-independent; where runtimes differ (tree or linear history, which stop
reasons are dropped at send time, whether missing tool results are synthesized, how a summary is
wrapped), it asks the ledger's Runtime.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.formats import pi as pi_format


@dataclass(frozen=True, slots=True)
class Runtime:
    name: str
    tree: bool  # history is a tree (parent ids) and only the active path is sent
    drop_stop_reasons: frozenset[str]  # assistant messages dropped at send time
    synthesize_missing_results: bool  # a call with no result gets a synthetic error result
    synthetic_result_text: str
    summary_prefix: str
    summary_suffix: str


PI = Runtime(
    name="pi",
    tree=True,
    drop_stop_reasons=frozenset({"error", "aborted"}),
    synthesize_missing_results=True,
    synthetic_result_text="No result provided",
    summary_prefix=pi_format.COMPACTION_SUMMARY_PREFIX,
    summary_suffix=pi_format.COMPACTION_SUMMARY_SUFFIX,
)

NATIVE = Runtime(
    name="native",
    tree=False,
    drop_stop_reasons=frozenset({"error", "aborted", "deferred"}),
    synthesize_missing_results=False,
    synthetic_result_text="",
    summary_prefix="",
    summary_suffix="",
)

RUNTIMES: dict[str, Runtime] = {"pi": PI, "native": NATIVE}


def runtime_for(fmt: str) -> Runtime:
    return RUNTIMES.get(fmt, NATIVE)
