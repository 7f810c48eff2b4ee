"""ADK's per-event steps written inline (issue 15: a Python call per row cost as much as the step)
against the functions they stand for, on every ADK fixture store and the peer corpus, with records
mutated at random: which rows of the next request are another agent's, with their calls and
responses (`_rows_for_agent` against the way it read each row through `other`, `_calls` and
`response_ids`)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import adk as a
from inspector.formats import adk, load
from inspector.ledger.model import Block, Record
from tests.conftest import SHARED

FIXTURES = Path(__file__).parent / "differential" / "fixtures"
CORPUS = SHARED / "peers" / "adk" / "corpus"


def _stores() -> list[Path]:
    return sorted(FIXTURES.glob("adk-*/session.db")) + sorted(CORPUS.glob("*.db"))


def _plain_rows(seq_list: list[tuple[Record, bool]], agent: str | None, heads: dict[int, dict[str, Any]], resp: dict[int, Any]) -> list[Any]:
    """`_rows_for_agent` as it read each row: through `other`, `_calls` and `response_ids`."""
    call_author: dict[str, str] = {}
    for r, summ in seq_list:
        if not summ and r.call_ids:
            for c in r.call_ids:
                call_author[c] = str(heads[r.seq].get("author") or "")

    def other(r: Record, summ: bool) -> bool:
        if summ or not agent:
            return False
        if str(heads[r.seq].get("author") or "") not in (agent, "user"):
            return True
        return any(call_author.get(rid) not in (None, agent, "user") for rid in resp.get(r.seq, ()))

    rows: list[Any] = []
    seen: set[str] = set()
    for r, summ in seq_list:
        conv = other(r, summ)
        calls, resps = ([], []) if (summ or conv) else (list(r.call_ids), adk.response_ids(r))
        if resps:
            kept = [x for x in resps if x in seen]
            if not kept and r.message is not None and all(b.type == "tool_result" for b in r.message.blocks):
                continue
            resps = kept
        seen.update(calls)
        rows.append((r, summ, conv, calls, resps))
    return rows


@pytest.mark.parametrize("mutate", [False, True])
def test_rows_for_agent_read_inline_are_the_plain_rows(mutate: bool) -> None:
    """For the session's next agent, every author in it, the user, no agent and an unknown one."""
    rng = random.Random(7)
    checked = converted = 0
    for store in _stores():
        led = load(str(store))
        if mutate:
            for r in rng.sample(led.records, len(led.records) // 4):
                r.call_ids = tuple(rng.sample(["c1", "c2", "c3", *r.call_ids], rng.randrange(3)))
            for r in rng.sample(led.records, len(led.records) // 4):  # (responses to them, whoever called)
                if (m := r.message) is not None:  # (read: the record's ids are its message's)
                    m.blocks = [*m.blocks, *(Block("tool_result", "", c, "f") for c in rng.sample(["c1", "c2", "c3"], 2))]
        heads = adk.event_heads(led.records)
        filt = a._memory_order(led, heads)
        seq_list = a._compacted_timeline(filt, a.send_times(filt, led))
        resp = adk.message_response_ids_by_seq([r for r, s in seq_list if not s])
        seq_list, _, resp = a._recover_compacted_function_calls(filt, seq_list, resp)
        authors = sorted({str(h.get("author") or "") for h in heads.values()})
        for agent in [(led.header or {}).get("next_agent"), *authors, "user", None, "", "nobody"]:
            got = a._rows_for_agent(seq_list, agent, heads, resp)
            want = _plain_rows(seq_list, agent, heads, resp)
            assert [(r.seq, *rest) for r, *rest in got] == [(r.seq, *rest) for r, *rest in want], (store, agent)
            checked += 1
            converted += sum(row[2] for row in got)
    assert checked > 100 and converted > 50
