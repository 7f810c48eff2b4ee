"""Numbers out of range (issue 11, point 3): every numeric flag of every command has a range and a
clear usage error (exit 2), and no `--json` document can hold a number orjson cannot encode."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from inspector.cli import args as argtypes
from inspector.cli.main import app_parser, build_parser, main
from inspector.cli.output import json_bytes
from tests.conftest import SAMPLES

ADR = SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"
S = str(ADR)
RANGED = {
    argtypes.tokens, argtypes.tokens_or_zero, argtypes.line_number, argtypes.count, argtypes.positive_count,
    argtypes.seconds, argtypes.ratio,
}
BAD = ("99999999999999999999", "-1", "nan", "inf", "-inf", "1e400", "twelve", "9" * 5000)

# (the command line before the flag, the flag, its largest accepted value)
FLAGS = [
    *[([c, S], "--window", "100000000") for c in ("analyze", "context")],
    *[([c, S], "--reserve", "100000000") for c in ("analyze", "context")],
    *[([c, S], "--at", "1000000000") for c in ("analyze", "context")],
    *[([c, S, "--strategy", "recover"], f, "100000000") for c in ("plan", "repair")
      for f in ("--window", "--reserve", "--keep-recent", "--request-tokens")],
    (["repair", S, "--strategy", "recover"], "--timeout", "86400"),
    (["watch", S], "--interval", "86400"),
    *[(["simulate", S, "--policy", "pi"], f, "100000000")
      for f in ("--context-window", "--reserve-tokens", "--keep-recent-tokens", "--token-threshold", "--summary-tokens")],
    *[(["simulate", S, "--policy", "adk-both"], f, "1000000")
      for f in ("--compaction-interval", "--overlap-size", "--event-retention-size")],
    (["simulate", S, "--policy", "pi"], "--summary-ratio", "1"),
    *[([c, S], "--workers", "1000000") for c in ("scan", "usage")],
    (["search", "q", S], "--workers", "1000000"),
    (["search", "q", S], "--limit", "1000000"),
    ([S], "--at", "1000000000"),
    ([S], "--window", "100000000"),
    ([S], "--reserve", "100000000"),
]


def _parse(argv: list[str]) -> argparse.Namespace:
    if argv[0] in ("analyze", "context", "plan", "repair", "simulate", "watch", "scan", "search", "usage"):
        return build_parser().parse_args(argv)
    return app_parser().parse_args(argv)


def _actions(p: argparse.ArgumentParser) -> list[argparse.Action]:
    out: list[argparse.Action] = []
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for sub in a.choices.values():
                out += _actions(sub)
        else:
            out.append(a)
    return out


def test_every_typed_flag_of_every_command_takes_a_ranged_type() -> None:
    typed = [a for p in (build_parser(), app_parser()) for a in _actions(p) if a.type is not None]
    assert typed, "the parsers have numeric flags"
    loose = [a.option_strings for a in typed if a.type not in RANGED]
    assert loose == [], f"flags without a range: {loose}"
    # ... and the table below exercises each of them.
    flags = {f for _, f, _ in FLAGS}
    assert {o for a in typed for o in a.option_strings if o.startswith("--")} <= flags


@pytest.mark.parametrize(("before", "flag", "largest"), FLAGS, ids=[f"{b[0]}{f}" for b, f, _ in FLAGS])
def test_a_number_out_of_range_is_a_usage_error_naming_flag_range_and_value(
    before: list[str], flag: str, largest: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _parse([*before, flag, largest])  # the top of the range is accepted
    too_big = str(int(float(largest)) + 1) if flag != "--summary-ratio" else "1.5"
    for bad in (too_big, *BAD):
        with pytest.raises(SystemExit) as e:
            _parse([*before, f"{flag}={bad}"])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert f"argument {flag}: expected " in err, err
        assert "Traceback" not in err
        if flag not in ("--timeout", "--interval", "--summary-ratio"):
            assert re.search(r"between [\d,]+ and [\d,]+", err), err
        assert len(err) < 2000, "a pasted megabyte is not echoed back"


def test_the_window_message_reads_as_the_issue_asks(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["context", S, "--window", "99999999999999999999", "--json"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--window: expected a whole number between 1 and 100,000,000, got '99999999999999999999'" in err


@pytest.mark.parametrize("value", ["0", "-0.5", "nan", "inf", "86401"])
def test_timeout_is_finite_and_positive(value: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="seconds more than 0 and at most 86,400"):
        argtypes.seconds(value)
    assert argtypes.seconds("0.5") == 0.5


def _with_huge_usage(tmp_path: Path) -> Path:
    f = tmp_path / "huge.jsonl"
    f.write_text(re.sub(r'"input":\d+', '"input":99999999999999999999', ADR.read_text()))
    return f


@pytest.mark.parametrize(
    "argv",
    [["analyze", "--json"], ["context", "--json"], ["simulate", "--policy", "pi", "--json"],
     ["plan", "--strategy", "recover", "--json"]],
)
def test_an_integer_past_64_bits_in_a_session_still_gives_valid_json(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = _with_huge_usage(tmp_path)
    assert main([argv[0], str(f), *argv[1:]]) in (0, 1)
    doc = json.loads(capsys.readouterr().out)
    if argv[0] == "analyze":
        # The adapters' field guard reads such a number as a wrong type (a diagnostic on its line);
        # whatever reaches the report must still encode.
        assert any(f["code"] == "malformed_line" and "64 bits" in f["message"] for f in doc["findings"])


def test_the_encoder_keeps_what_fits_and_brings_the_rest_into_range() -> None:
    doc = {"fits": [2**64 - 1, -(2**63), True, 1.5], "big": 2**70, "small": -(2**70), "beyond": 10**400,
           "nested": [{"n": (10**30,)}]}
    back = json.loads(json_bytes(doc))
    assert back["fits"] == [2**64 - 1, -(2**63), True, 1.5]
    assert back["big"] == float(2**70) and back["small"] == -float(2**70)
    assert back["beyond"] is None
    assert back["nested"] == [{"n": [1e30]}]
