"""`heads.valid_utf8` decodes a long line a part at a time, and only its parts that are not ASCII
(issue 15): it must say what decoding the whole line says, wherever a character, a broken
sequence or a run of continuation bytes falls against the parts' boundaries."""

from __future__ import annotations

import random

from inspector.formats import heads

PART = heads._UTF8_PART
CHARACTERS = ["é", "—", "€", "😀", "\U0010ffff", "\u0800", "\x7f", "a"]
BROKEN = [
    b"\xc3",  # a lead with no continuation
    b"\xe2\x80",  # cut short
    b"\x80",  # a continuation with no lead
    b"\x80\x80\x80\x80",  # four continuations in a row
    b"\xf0\x9f\x98\x80\x80",  # a character and one continuation too many
    b"\xc0\xaf",  # overlong
    b"\xed\xa0\x80",  # a surrogate
    b"\xf4\x90\x80\x80",  # past U+10FFFF
    b"\xff",
    b"\xc3a",  # a lead then ASCII
]


def _truth(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_every_sequence_at_every_place_around_a_part_boundary() -> None:
    pieces = [c.encode() for c in CHARACTERS] + BROKEN
    for boundary in (PART, 2 * PART):
        for piece in pieces:
            for at in range(boundary - 5, boundary + 2):
                for tail in (b"", b"x" * 10, b"\xc3\xa9" * 3, piece):
                    raw = b"x" * at + piece + tail + b"y" * 20
                    assert heads.valid_utf8(raw) == _truth(raw), (boundary, piece, at, tail)


def test_short_lines_and_whole_lengths() -> None:
    for raw in (b"", b"a", "é".encode(), b"\xc3", b"x" * PART, b"x" * (PART - 1) + b"\xc3", "é".encode() * PART):
        assert heads.valid_utf8(raw) == _truth(raw), raw[-8:]


def test_random_lines_of_characters_and_broken_sequences() -> None:
    rng = random.Random(20261202)
    tokens = [c.encode() for c in CHARACTERS] + [b"x" * 700, b"\n", b'"'] + BROKEN
    for _ in range(400):
        raw = b"".join(rng.choice(tokens[:-len(BROKEN)] if rng.random() < 0.5 else tokens) for _ in range(rng.randrange(1, 60)))
        assert heads.valid_utf8(raw) == _truth(raw), raw[:80]
