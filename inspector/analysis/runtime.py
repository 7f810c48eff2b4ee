"""Each producer's own rules for what it sends next (DESIGN §3), as data.

The analysis is format-independent; where runtimes differ (tree or linear history, which stop
reasons are dropped at send time, whether missing tool results are synthesized, how a summary is
wrapped), it asks the ledger's Runtime.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.formats import openclaw_sqlite
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
    # "boundary": the latest checkpoint's cut (pi, native); "timestamp_ranges": ADK's surviving
    # compaction ranges (inspector/analysis/adk.py).
    context_rule: str = "boundary"
    # A checkpoint replaces all earlier history with its own replacement history, sent in that
    # order ahead of what came after it (Codex `compacted`); tool calls and results pair across
    # the whole request (one item per line), and a result whose call is gone is dropped.
    replaces_history: bool = False
    # One message can carry several tool results (Claude Code's user lines follow the Messages
    # API); elsewhere a tool message answers one call, read from the index without its content.
    many_results_per_message: bool = False


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

# Codex CLI: `compacted` replaces all earlier history with its replacement history (server-side
# compaction: an encrypted `compaction` item stands for the summary); at send time a call without
# an output gets a synthetic "aborted" output right after it and an output without its call is
# removed (codex-rs context_manager normalize); base instructions go first.
CODEX = Runtime(
    name="codex",
    tree=False,
    drop_stop_reasons=frozenset(),
    synthesize_missing_results=True,
    synthetic_result_text="aborted",
    summary_prefix="",
    summary_suffix="",
    replaces_history=True,
)

RUNTIMES: dict[str, Runtime] = {"pi": PI, "native": NATIVE, "codex": CODEX}

# Claude Code: the parentUuid chain from the newest line (with the lines of every reply on it and
# the results answering them); a compact_boundary's summary line, then the messages it kept
# verbatim, then what followed. isMeta lines are sent (hidden from the user, not the model); a
# synthetic API-error reply is not. Summary text is sent as written (the line holds the wrapper).
CLAUDE_CODE = Runtime(
    name="claude_code",
    tree=True,
    drop_stop_reasons=frozenset({"error"}),
    synthesize_missing_results=True,
    # What Claude Code writes for a call whose result never came (seen on resume; the peer
    # README quotes only its beginning).
    synthetic_result_text="[Tool call interrupted: the session ended before this call's result was recorded]",
    summary_prefix="",
    summary_suffix="",
    many_results_per_message=True,
)
RUNTIMES["claude_code"] = CLAUDE_CODE

# Google ADK: every surviving compaction range removes the events its timestamps span; each
# summary is sent at its end_timestamp as the agent's own turn (inspector/analysis/adk.py).
ADK = Runtime(
    name="adk",
    tree=False,
    drop_stop_reasons=frozenset(),
    synthesize_missing_results=False,
    synthetic_result_text="",
    summary_prefix="",
    summary_suffix="",
    context_rule="timestamp_ranges",
)
RUNTIMES["adk"] = ADK

# OpenClaw's SQLite store: pi's agent core with OpenClaw's own synthetic result text; its rules
# live with the adapter (inspector/formats/openclaw_sqlite.py RUNTIME_RULES).
RUNTIMES[openclaw_sqlite.FORMAT] = Runtime(**openclaw_sqlite.RUNTIME_RULES)


def runtime_for(fmt: str) -> Runtime:
    return RUNTIMES.get(fmt, NATIVE)
