"""Wrong JSON types in every field an adapter reads (issue 11, point 1): each case is a diagnostic
naming the line, the field and the type found, and nothing downstream (analyze and its JSON, the
next request's tokens, every record's first line, plan for each strategy, simulate) raises."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.formats import LoadError, load, load_bytes
from tests.bad_input_seeds import (
    JSON_VALUES,
    SEEDS,
    _get,
    encode,
    exercise,
    field_paths,
    substituted,
    type_cases,
)


def _cases(fmt: str, kind: str) -> list[tuple[str, object]]:
    return [(label, s) for label, s in type_cases(fmt) if label.endswith("=" + kind)]


@pytest.mark.parametrize("kind", list(JSON_VALUES))
@pytest.mark.parametrize("fmt", list(SEEDS))
def test_every_field_with_every_other_json_type(fmt: str, kind: str, tmp_path: Path) -> None:
    path = tmp_path / ("s.json" if fmt == "adk" else "s.jsonl")
    failures: list[str] = []
    for label, session in _cases(fmt, kind):
        data = encode(fmt, session)
        path.write_bytes(data)
        for how in ("file", "bytes"):
            try:
                led = load(str(path)) if how == "file" else load_bytes(data, str(path))
                exercise(led)
            except LoadError:
                continue
            except Exception as e:
                failures.append(f"{how} {label}: {type(e).__name__}: {e}")
    assert not failures, "\n".join(failures[:20])


def test_the_seeds_are_clean() -> None:
    for fmt, seed in SEEDS.items():
        led = load_bytes(encode(fmt, seed), "s")
        assert led.format == fmt
        assert not [d for d in led.diagnostics if d.problem == "wrong_type"], fmt
        exercise(led)


@pytest.mark.parametrize(
    ("fmt", "path", "value", "line", "field", "found"),
    [
        ("pi", (2, "message", "content", 0, "text"), ["a"], 3, "message.content[0].text", "a list"),
        ("pi", (2, "message", "role"), {"r": 1}, 3, "message.role", "an object"),
        ("pi", (1, "type"), {"t": 1}, 2, "type", "an object"),
        ("pi", (3, "message", "usage", "input"), 10**30, 4, "message.usage.input", "too large for 64 bits"),
        ("claude_code", (1, "type"), {"t": 1}, 2, "type", "an object"),
        ("codex", (6, "payload", "info", "model_context_window"), ["x"], 7, "payload.info.model_context_window", "a list"),
        ("codex", (1, "type"), ["x"], 2, "type", "a list"),
        ("adk", ("events", 0, "content", "parts"), 3, 1, "content.parts", "an integer"),
    ],
)
def test_the_diagnostic_names_line_field_and_type(
    fmt: str, path: tuple, value: object, line: int, field: str, found: str, tmp_path: Path
) -> None:
    data = encode(fmt, substituted(SEEDS[fmt], path, value))
    f = tmp_path / ("s.json" if fmt == "adk" else "s.jsonl")
    f.write_bytes(data)
    for led in (load(str(f)), load_bytes(data, str(f))):
        (d,) = [d for d in led.diagnostics if d.problem == "wrong_type"]
        assert d.line == line and repr(field) in d.message and found in d.message, d.message
        assert (f"line {line}:" if fmt != "adk" else f"event {line} (line ") in d.message
        # the record is kept (shown), as an unknown record when its type could not be read
        assert len(led.records) == len(load_bytes(encode(fmt, SEEDS[fmt]), "s").records)
        exercise(led)


@pytest.mark.parametrize(
    ("path", "value", "line", "why"),
    [
        ((2, "payload", "type"), ["message"], 3, "its payload has a type of a list"),
        ((2, "payload", "content", 0, "text"), 5, 3, "its payload's content[0]'s text is an integer, not a string"),
        ((4, "payload", "arguments"), {"cmd": "ls"}, 5, "its payload's arguments is an object, not a string"),
        ((8, "payload", "replacement_history", 1, "role"), None, 9, "its replacement history's item 1's role is null, not a string"),
        ((3, "timestamp"), None, 4, "it has no timestamp"),
    ],
)
def test_a_line_codex_skips_is_named_and_kept_out_of_the_request(path: tuple, value: object, line: int, why: str, tmp_path: Path) -> None:
    """Codex reads a line whole into its own types and skips one that does not fit (the real
    Codex, `tests/test_codex_line_rule.py`): the line is named with why, kept as a record, and
    nothing of it is sent."""
    data = encode("codex", substituted(SEEDS["codex"], path, value))
    f = tmp_path / "s.jsonl"
    f.write_bytes(data)
    clean = load_bytes(encode("codex", SEEDS["codex"]), "s")
    for led in (load(str(f)), load_bytes(data, str(f))):
        (d,) = [d for d in led.diagnostics if d.problem == "skipped_by_runtime"]
        assert d.message == f"line {line}: Codex skips this line ({why}): kept here, never sent"
        assert not [d for d in led.diagnostics if d.problem == "wrong_type"]
        assert len(led.records) == len(clean.records)
        (rec,) = [r for r in led.records if r.line == line]
        assert rec.kind == "unknown" and d.seqs == [rec.seq]
        exercise(led)


def test_pi_fast_path_reports_what_the_general_path_reports(tmp_path: Path) -> None:
    """The streaming reader's message heads decode the same fields with the same types: a line
    with a wrong type takes the general path, so both readers give the same diagnostics."""
    f = tmp_path / "s.jsonl"
    for label, session in type_cases("pi"):
        data = encode("pi", session)
        f.write_bytes(data)
        a = [d.message for d in load(str(f)).diagnostics]
        b = [d.message for d in load_bytes(data, str(f)).diagnostics]
        assert a == b, label


def test_an_adk_dump_read_up_to_an_event_orders_unchecked_events_without_crashing(tmp_path: Path) -> None:
    """`--at N` type-checks only the first N events, but the append order is worked out over all of
    them: a list where a later event's call id should be (found by the seed-6 campaign) was
    unhashable there. A wrong-typed id counts as none, as the guard would make it."""
    import json

    from tests.bad_input_seeds import ADK

    doc = json.loads(encode("adk", ADK))
    late = doc["events"][-1]
    late.setdefault("content", {"role": "user", "parts": []})
    late["content"]["parts"] = [{"function_response": {"id": ["x", 1], "name": "read", "response": {}}}]
    late["invocation_id"] = ["inv", 2]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    led = load(str(path), upto_line=2)
    exercise(led)
    assert len(load(str(path)).diagnostics) > 0  # read whole, the guard names the wrong types


def _fields(fmt: str) -> list[tuple[object, ...]]:
    seed = SEEDS[fmt]
    roots = [("events", i) for i in range(len(seed["events"]))] if fmt == "adk" else [(i,) for i in range(len(seed))]
    return [(*root, *sub) for root in roots for sub in field_paths(_get(seed, root))]


@pytest.mark.parametrize("how", ["value", "text"])
@pytest.mark.parametrize("depth", [300, 1000])
@pytest.mark.parametrize("fmt", list(SEEDS))
def test_every_field_nested_as_deep_as_a_reader_takes(fmt: str, depth: int, how: str, tmp_path: Path) -> None:
    """Every field holds a value nested `depth` deep (or, `text`, a string of such JSON, as a
    call's arguments are): within what the readers take (1024 levels) but past what orjson writes
    (254) and what Python's json, str and repr reach from a deep stack. It loads, and nothing
    downstream (the exported reports included) raises."""
    deep = "[" * depth + "]" * depth
    mark = "@@deep@@"
    spliced = (json.dumps(deep) if how == "text" else deep).encode()
    path = tmp_path / ("s.json" if fmt == "adk" else "s.jsonl")
    failures: list[str] = []
    for field in _fields(fmt):
        data = encode(fmt, substituted(SEEDS[fmt], field, mark)).replace(json.dumps(mark).encode(), spliced)
        path.write_bytes(data)
        try:
            exercise(load(str(path)))
        except LoadError:
            continue
        except Exception as e:
            failures.append(f"{'.'.join(map(str, field))}: {type(e).__name__}: {str(e)[:200]}")
    assert not failures, "\n".join(failures[:20])


def test_a_compaction_line_without_its_message_is_named_as_such(tmp_path: Path) -> None:
    """A compacted line whose payload lacks `message` (the field Codex requires) is skipped and
    said to have none, not to hold a null."""
    session = json.loads(json.dumps(SEEDS["codex"]))
    del session[8]["payload"]["message"]
    f = tmp_path / "s.jsonl"
    f.write_bytes(encode("codex", session))
    for led in (load(str(f)), load_bytes(f.read_bytes(), str(f))):
        (d,) = [d for d in led.diagnostics if d.problem == "skipped_by_runtime"]
        assert d.message == "line 9: Codex skips this line (its payload has no message): kept here, never sent"
