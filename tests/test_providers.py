"""Providers (issue 4, points 6 and 7): the httpx clients against a real HTTP server on 127.0.0.1
(tests/fake_provider.py), the pure classification rules, configuration, and the offline
extractive summarizer."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

import pytest

from inspector.analysis.protocol import ESSENTIAL_MARKER, installable_part, summary_completeness
from inspector.ledger.model import Route, Usage
from inspector.providers import (
    OUTCOMES,
    ProviderConfigError,
    RetryPolicy,
    SummaryRequest,
    SummaryResult,
    make_provider,
)
from inspector.providers.classify import classify, next_delay, retry_after_seconds
from tests.fake_provider import FakeProvider, Reply

KEY = "sk-test-Zq8PLm3XvT9aK2wR"
REQ = SummaryRequest(
    system="Summarize per the protocol.", prompt="[user]\nFix the parser.", max_output_tokens=321
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """No real key, proxy, endpoint or config file of the machine leaks into a test."""
    for var in (
        "OPENAI_API_KEY",
        "INSPECTOR_OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "INSPECTOR_ANTHROPIC_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


@pytest.fixture(autouse=True)
def _no_thread_left_behind():
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        extra = [t for t in threading.enumerate() if t not in before and t.is_alive()]
        if not extra:
            return
        time.sleep(0.01)
    raise AssertionError(f"threads left running: {extra}")


# --- the two dialects -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Dialect:
    name: str
    key_env: str
    path: str

    def base_url(self, fake: FakeProvider) -> str:
        return fake.url + "/v1" if self.name == "openai" else fake.url

    def reply(self, text: str, *, truncated: bool = False) -> dict[str, Any]:
        if self.name == "openai":
            return {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "length" if truncated else "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": 1200,
                    "completion_tokens": 321 if truncated else 40,
                    "total_tokens": 1240,
                    "prompt_tokens_details": {"cached_tokens": 200},
                },
            }
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "max_tokens" if truncated else "end_turn",
            "usage": {
                "input_tokens": 1000,
                "output_tokens": 321 if truncated else 40,
                "cache_read_input_tokens": 200,
                "cache_creation_input_tokens": 5,
            },
        }

    def expected_usage(self, *, truncated: bool = False) -> Usage:
        out = 321 if truncated else 40
        if self.name == "openai":
            return Usage(input=1000, output=out, cache_read=200)
        return Usage(input=1000, output=out, cache_read=200, cache_write=5)

    def check_request(self, seen: Any) -> None:
        assert seen.method == "POST" and seen.path == self.path
        assert seen.json["model"] == "test-model"
        if self.name == "openai":
            assert seen.headers["authorization"] == f"Bearer {KEY}"
            assert seen.json["max_tokens"] == REQ.max_output_tokens
            assert seen.json["messages"] == [
                {"role": "system", "content": REQ.system},
                {"role": "user", "content": REQ.prompt},
            ]
        else:
            assert seen.headers["x-api-key"] == KEY
            assert seen.headers["anthropic-version"] == "2023-06-01"
            assert "authorization" not in seen.headers
            assert seen.json["max_tokens"] == REQ.max_output_tokens
            assert seen.json["system"] == REQ.system
            assert seen.json["messages"] == [{"role": "user", "content": REQ.prompt}]
        assert seen.json.get("stream") in (None, False)


OPENAI = Dialect("openai", "OPENAI_API_KEY", "/v1/chat/completions")
ANTHROPIC = Dialect("anthropic", "ANTHROPIC_API_KEY", "/v1/messages")
DIALECTS = pytest.mark.parametrize("d", [OPENAI, ANTHROPIC], ids=["openai", "anthropic"])


class Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client(
    d: Dialect, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch, *, timeout: float = 5, sleeps=None
):
    monkeypatch.setenv(d.key_env, KEY)
    retry = RetryPolicy(sleep=sleeps if sleeps is not None else Sleeps())
    return make_provider(d.name, model="test-model", base_url=d.base_url(fake), timeout=timeout, retry=retry)


def run(d: Dialect, script: list[Reply], monkeypatch, **kw) -> tuple[SummaryResult, list, Any]:
    with FakeProvider(script) as fake:
        p = client(d, fake, monkeypatch, **kw)
        result = p.summarize(REQ)
        seen = fake.requests
    assert result.outcome in OUTCOMES
    assert KEY not in repr(result) and KEY not in str(result) and KEY not in result.detail
    return result, seen, p


# --- against the server: every outcome ------------------------------------------------------------


@DIALECTS
def test_ok_parses_text_and_usage_and_sends_key_and_max_tokens(d: Dialect, monkeypatch) -> None:
    r, seen, p = run(d, [Reply(200, d.reply("## Active request\nfix it"))], monkeypatch)
    assert (r.outcome, r.text, r.status, r.attempts, r.detail) == (
        "ok",
        "## Active request\nfix it",
        200,
        1,
        "",
    )
    assert r.usage == d.expected_usage()
    assert len(seen) == 1
    d.check_request(seen[0])
    # Another endpoint than the provider's own is its own connection (seed 002: routes).
    assert p.name == d.name and p.route.model_id == "test-model"
    assert p.route.connection_id.startswith("127.0.0.1:")


@DIALECTS
def test_output_limit_is_truncated_with_text_kept(d: Dialect, monkeypatch) -> None:
    r, _, _ = run(d, [Reply(200, d.reply("## Active request\nfix", truncated=True))], monkeypatch)
    assert (r.outcome, r.text, r.attempts) == ("truncated", "## Active request\nfix", 1)
    assert r.usage == d.expected_usage(truncated=True)


CONTEXT_LENGTH = {
    "error": {
        "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in "
        "130512 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
PROMPT_TOO_LONG = {
    "type": "error",
    "error": {
        "type": "invalid_request_error",
        "message": "prompt is too long: 212345 tokens > 200000 maximum",
    },
}


@DIALECTS
@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        (Reply(413, body="<html>413 Request Entity Too Large</html>"), "input_too_large"),
        (
            Reply(413, {"type": "error", "error": {"type": "request_too_large", "message": "too big"}}),
            "input_too_large",
        ),
        (Reply(400, CONTEXT_LENGTH), "input_too_large"),
        (Reply(400, PROMPT_TOO_LONG), "input_too_large"),
        (Reply(500, body="upstream error: maximum context length exceeded"), "input_too_large"),
        (
            Reply(502, {"error": {"message": "Request failed: input exceeds the context window"}}),
            "input_too_large",
        ),
        (
            Reply(
                401,
                {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}},
            ),
            "auth",
        ),
        (Reply(403, {"error": {"message": "forbidden", "type": "permission_error"}}), "auth"),
        (
            Reply(
                400,
                {"error": {"message": "max_tokens is too large: 999999", "type": "invalid_request_error"}},
            ),
            "bad_request",
        ),
        (Reply(404, {"error": {"message": "model not found"}}), "bad_request"),
        (
            Reply(500, {"error": {"message": "The server had an error", "type": "server_error"}}),
            "server_error",
        ),
        (Reply(502, body="Bad Gateway"), "server_error"),
        (Reply(200, body="not json at all"), "server_error"),
        (Reply(200, {"unexpected": True}), "server_error"),
    ],
)
def test_errors_are_classified_and_not_retried(d: Dialect, reply: Reply, outcome: str, monkeypatch) -> None:
    sleeps = Sleeps()
    r, seen, _ = run(d, [reply, Reply(200, d.reply("never reached"))], monkeypatch, sleeps=sleeps)
    assert r.outcome == outcome
    assert (r.attempts, len(seen), sleeps, r.text, r.usage) == (1, 1, [], "", None)
    assert r.status == reply.status
    assert r.detail  # the provider's own words, for the user


@DIALECTS
def test_500_is_server_error_and_not_retried(d: Dialect, monkeypatch) -> None:
    sleeps = Sleeps()
    r, seen, _ = run(
        d, [Reply(500, {"error": {"message": "boom"}}), Reply(200, d.reply("x"))], monkeypatch, sleeps=sleeps
    )
    assert (r.outcome, r.status, r.attempts, r.detail, len(seen), sleeps) == (
        "server_error",
        500,
        1,
        "boom",
        1,
        [],
    )


@DIALECTS
def test_401_is_auth_and_not_retried(d: Dialect, monkeypatch) -> None:
    r, seen, _ = run(d, [Reply(401, {"error": {"message": "Incorrect API key provided"}})], monkeypatch)
    assert (r.outcome, r.status, r.attempts, len(seen)) == ("auth", 401, 1, 1)


@DIALECTS
def test_429_honours_retry_after_then_succeeds(d: Dialect, monkeypatch) -> None:
    sleeps = Sleeps()
    limited = Reply(
        429,
        {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}},
        headers={"Retry-After": "2"},
    )
    r, seen, _ = run(d, [limited, Reply(200, d.reply("done"))], monkeypatch, sleeps=sleeps)
    assert (r.outcome, r.text, r.attempts, r.status) == ("ok", "done", 2, 200)
    assert sleeps == [2.0]
    assert len(seen) == 2 and seen[0].json == seen[1].json


@DIALECTS
def test_retry_after_ms_wins_over_retry_after(d: Dialect, monkeypatch) -> None:
    sleeps = Sleeps()
    limited = Reply(
        429, {"error": {"message": "slow down"}}, headers={"retry-after-ms": "1500", "Retry-After": "2"}
    )
    r, _, _ = run(d, [limited, Reply(200, d.reply("done"))], monkeypatch, sleeps=sleeps)
    assert (r.outcome, r.attempts, sleeps) == ("ok", 2, [1.5])


@DIALECTS
def test_529_overloaded_is_retried_then_exhausted(d: Dialect, monkeypatch) -> None:
    sleeps = Sleeps()
    overloaded = Reply(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    r, seen, _ = run(d, [overloaded], monkeypatch, sleeps=sleeps)
    assert (r.outcome, r.status, r.attempts, len(seen)) == ("overloaded", 529, 4, 4)
    assert sleeps == [1.0, 2.0, 4.0]  # bounded exponential backoff
    assert r.detail == "Overloaded"


@DIALECTS
def test_503_saying_overloaded_is_overloaded(d: Dialect, monkeypatch) -> None:
    sleeps = Sleeps()
    r, _, _ = run(
        d,
        [Reply(503, body="The engine is currently overloaded"), Reply(200, d.reply("ok"))],
        monkeypatch,
        sleeps=sleeps,
    )
    assert (r.outcome, r.attempts, sleeps) == ("ok", 2, [1.0])


@DIALECTS
def test_a_wait_longer_than_the_cap_is_not_attempted(d: Dialect, monkeypatch) -> None:
    sleeps = Sleeps()
    limited = Reply(429, {"error": {"message": "come back tomorrow"}}, headers={"Retry-After": "86400"})
    r, seen, _ = run(d, [limited, Reply(200, d.reply("x"))], monkeypatch, sleeps=sleeps)
    assert (r.outcome, r.attempts, len(seen), sleeps) == ("rate_limited", 1, 1, [])


def test_exhausted_quota_is_not_retried(monkeypatch) -> None:
    sleeps = Sleeps()
    quota = Reply(
        429,
        {
            "error": {
                "message": "You exceeded your current quota",
                "type": "insufficient_quota",
                "code": "insufficient_quota",
            }
        },
    )
    r, seen, _ = run(OPENAI, [quota], monkeypatch, sleeps=sleeps)
    assert (r.outcome, r.attempts, len(seen), sleeps) == ("rate_limited", 1, 1, [])


@DIALECTS
@pytest.mark.parametrize("action", ["close", "reset"])
def test_connection_dropped_without_answer_is_network(d: Dialect, action: str, monkeypatch) -> None:
    sleeps = Sleeps()
    r, seen, _ = run(d, [Reply(action=action)], monkeypatch, sleeps=sleeps)
    assert (r.outcome, r.status, r.attempts, len(seen), sleeps) == ("network", None, 1, 1, [])
    assert r.detail


@DIALECTS
def test_answer_slower_than_the_timeout_is_network(d: Dialect, monkeypatch) -> None:
    t0 = time.monotonic()
    r, _, _ = run(d, [Reply(200, d.reply("late"), delay=2.0)], monkeypatch, timeout=0.5)
    elapsed = time.monotonic() - t0
    assert (r.outcome, r.attempts, r.text) == ("network", 1, "")
    assert "timeout" in r.detail
    assert elapsed < 1.9  # the client gave up; leaving the server cut its sleep short


def test_nothing_listening_is_network(monkeypatch) -> None:
    with FakeProvider([Reply()]) as fake:
        url = fake.url
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    p = make_provider("openai", model="m", base_url=url, timeout=2)
    r = p.summarize(REQ)
    assert (r.outcome, r.attempts) == ("network", 1)


@DIALECTS
@pytest.mark.parametrize(
    ("body", "outcome"),
    [
        (CONTEXT_LENGTH, "input_too_large"),
        (PROMPT_TOO_LONG, "input_too_large"),
        ({"error": {"message": "No auth credentials found", "code": 401}}, "auth"),
        (
            {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}},
            "server_error",
        ),
        ({"error": "something went wrong"}, "server_error"),
    ],
)
def test_error_body_with_status_200_is_the_error(d: Dialect, body: dict, outcome: str, monkeypatch) -> None:
    r, _, _ = run(d, [Reply(200, body)], monkeypatch)
    assert (r.outcome, r.status, r.text, r.usage, r.attempts) == (outcome, 200, "", None, 1)


@DIALECTS
def test_error_body_with_status_200_saying_overloaded_is_retried(d: Dialect, monkeypatch) -> None:
    sleeps = Sleeps()
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    r, _, _ = run(d, [Reply(200, body), Reply(200, d.reply("fine"))], monkeypatch, sleeps=sleeps)
    assert (r.outcome, r.text, r.attempts, sleeps) == ("ok", "fine", 2, [1.0])


@DIALECTS
def test_key_never_shows(d: Dialect, monkeypatch) -> None:
    echo = Reply(400, {"error": {"message": f"bad header: Bearer {KEY} / x-api-key: {KEY}"}})
    with FakeProvider([echo]) as fake:
        p = client(d, fake, monkeypatch)
        r = p.summarize(REQ)
    assert r.outcome == "bad_request"
    assert "[redacted]" in r.detail
    for shown in (repr(p), str(p), repr(r), str(r), r.detail, repr(p.route)):
        assert KEY not in shown
    assert "test-model" in repr(p)
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(p)


@DIALECTS
def test_request_model_overrides_the_provider_model(d: Dialect, monkeypatch) -> None:
    with FakeProvider([Reply(200, d.reply("x"))]) as fake:
        p = client(d, fake, monkeypatch)
        p.summarize(SummaryRequest("s", "p", 10, model="other-model"))
        assert fake.requests[0].json["model"] == "other-model"


# --- configuration --------------------------------------------------------------------------------


def test_unknown_provider_is_a_config_error() -> None:
    with pytest.raises(ProviderConfigError, match="unknown provider"):
        make_provider("gemini", model=None, base_url=None)


@pytest.mark.parametrize("name", ["openai", "anthropic"])
def test_missing_key_is_a_config_error(name: str) -> None:
    with pytest.raises(ProviderConfigError, match="no API key"):
        make_provider(name, model="m", base_url=None)


def test_key_model_and_base_url_from_the_config_file(tmp_path, monkeypatch) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[providers.anthropic]\napi_key = "{KEY}"\nmodel = "claude-x"\nbase_url = "http://127.0.0.1:9/"\n'
    )
    p = make_provider("anthropic", model=None, base_url=None, config_path=str(cfg))
    assert p.route == Route("claude-x", "127.0.0.1:9")
    assert p.url == "http://127.0.0.1:9/v1/messages"
    assert KEY not in repr(p)


def test_default_config_file_is_read(tmp_path) -> None:
    # XDG_CONFIG_HOME points into tmp_path (autouse fixture).
    cfg = tmp_path / "xdg" / "inspector" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(f'[providers.openai]\napi_key = "{KEY}"\nmodel = "gpt-x"\n')
    p = make_provider("openai", model=None, base_url=None)
    assert p.route == Route("gpt-x", "openai")
    assert p.url == "https://api.openai.com/v1/chat/completions"


def test_environment_wins_over_file_and_arguments_over_both(tmp_path, monkeypatch) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[providers.openai]\napi_key = "file-key"\nmodel = "file-model"\nbase_url = "http://file:1/v1"\n'
    )
    monkeypatch.setenv("OPENAI_API_KEY", "env-key-1")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env:2/v1")
    with FakeProvider([Reply(200, OPENAI.reply("x"))]) as fake:
        p = make_provider("openai", model="arg-model", base_url=fake.url + "/v1", config_path=str(cfg))
        p.summarize(REQ)
        seen = fake.requests[0]
    assert seen.headers["authorization"] == "Bearer env-key-1"
    assert seen.json["model"] == "arg-model"
    monkeypatch.setenv("INSPECTOR_OPENAI_API_KEY", "env-key-2")  # the app's own variable wins
    p = make_provider("openai", model=None, base_url=None, config_path=str(cfg))
    assert p.model == "file-model" and p.base_url == "http://env:2/v1"
    assert p._settings.api_key.reveal() == "env-key-2"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("[providers.openai\n", "not valid TOML"),
        ("providers = 3\n", "must be a table"),
        ("[providers.openai]\napi_key = 12\n", "must be a string"),
    ],
)
def test_bad_config_is_a_config_error(tmp_path, text: str, match: str) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(text)
    with pytest.raises(ProviderConfigError, match=match):
        make_provider("openai", model="m", base_url=None, config_path=str(cfg))


def test_config_errors_never_show_the_key(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    for kwargs in ({"model": None, "base_url": None}, {"model": "m", "base_url": "ftp://x"}):
        with pytest.raises(ProviderConfigError) as e:
            make_provider("openai", **kwargs)
        assert KEY not in str(e.value) and KEY not in repr(e.value)
    monkeypatch.setenv("OPENAI_API_KEY", KEY + "é")
    with pytest.raises(ProviderConfigError, match="cannot carry") as e:
        make_provider("openai", model="m", base_url=None)
    assert KEY not in str(e.value)
    with pytest.raises(ProviderConfigError, match="not found"):
        make_provider("openai", model="m", base_url=None, config_path=str(tmp_path / "missing.toml"))


def test_official_openai_endpoint_gets_max_completion_tokens(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    p = make_provider("openai", model="gpt-x", base_url=None)
    assert p._body(REQ)["max_completion_tokens"] == REQ.max_output_tokens
    assert "max_tokens" not in p._body(REQ)


# --- classification rules (pure) ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "text", "outcome"),
    [
        (200, {"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}]}, "", "ok"),
        (200, {"choices": [{"message": {"content": "x"}, "finish_reason": "length"}]}, "", "truncated"),
        (200, {"content": [], "stop_reason": "max_tokens"}, "", "truncated"),
        (200, {"content": [], "stop_reason": "end_turn"}, "", "ok"),
        (200, {"choices": []}, "", "server_error"),
        (
            429,
            {
                "error": {
                    "message": "Request too large for gpt-4 on tokens per min (TPM): Limit 10000, "
                    "Requested 30000.",
                    "code": "rate_limit_exceeded",
                }
            },
            "",
            "input_too_large",
        ),
        (
            429,
            {"error": {"message": "Rate limit reached on tokens per min: too many tokens"}},
            "",
            "rate_limited",
        ),
        (
            400,
            {
                "error": {
                    "message": "input length and `max_tokens` exceed context limit: 197626 + 8192 > 200000"
                }
            },
            "",
            "input_too_large",
        ),
        (
            400,
            {
                "error": {
                    "message": "The input token count (1200000) exceeds the maximum number of tokens "
                    "allowed (1048576)."
                }
            },
            "",
            "input_too_large",
        ),
        (400, None, "the request exceeds the available context size", "input_too_large"),
        (503, None, "Service Unavailable", "server_error"),
        (503, None, "model is overloaded, try later", "overloaded"),
        (529, None, "", "overloaded"),
        (
            500,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            "",
            "overloaded",
        ),
        (422, None, "unprocessable", "bad_request"),
        (301, None, "", "bad_request"),
        (200, {"error": {"code": 429, "message": "Provider returned error"}}, "", "rate_limited"),
        (200, {"error": {"code": 502, "message": "upstream failed"}}, "", "server_error"),
    ],
)
def test_classification_table(status: int, body: Any, text: str, outcome: str) -> None:
    assert classify(status, {}, body, text).outcome == outcome


def test_retry_after_forms() -> None:
    assert retry_after_seconds({"Retry-After": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"Retry-After": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == 10.0
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({}) is None
    assert classify(429, {"Retry-After": "3"}, None, "").retry_after == 3.0


def test_backoff_is_bounded() -> None:
    kw = {"max_retries": 3, "base_delay": 1.0, "max_total_wait": 30.0}
    assert [next_delay(a, None, 0, **kw) for a in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, None]
    assert next_delay(1, 20.0, 0, **kw) == 20.0
    assert next_delay(2, 20.0, 20.0, **kw) is None  # would exceed the total cap
    assert next_delay(3, None, 28.0, **kw) == 2.0  # a backoff step shortened to fit
    assert next_delay(1, None, 30.0, **kw) is None


# --- the offline extractive summarizer ------------------------------------------------------------

CONVERSATION = """\
[user]
Please refactor the loader in src/inspector/loader.py so big files stream.
Never write to the session file in place. You must keep the tests green.
Only touch the loader; do not change the public API.
[assistant]
I'll read the loader first.
[assistant tool calls]: read(path="src/inspector/loader.py")
[tool]
def load(path):
    with open(path) as f:
        return f.read()
[assistant]
Reading whole files is the problem. Next: switch to an offset index (see docs/design.md).
[user]
Go ahead, and always run pytest -q before you say it's done.
[assistant]
Switching load() to iterate lines.
[tool call]: edit(path="src/inspector/loader.py")
"""


def extract(prompt: str = CONVERSATION, budget: int = 2000) -> SummaryResult:
    p = make_provider("extractive", model=None, base_url=None)
    return p.summarize(SummaryRequest(system="instructions", prompt=prompt, max_output_tokens=budget))


def section(text: str, name: str) -> str:
    body = text.split(f"## {name}\n", 1)[1]
    return body.split("\n## ", 1)[0].split(ESSENTIAL_MARKER)[0]


def test_extractive_is_protocol_complete_and_extracts() -> None:
    r = extract()
    assert r.outcome == "ok" and r.attempts == 1 and r.status is None
    assert summary_completeness(r.text) == "complete"
    assert installable_part(r.text) == r.text
    assert "always run pytest -q before you say it's done" in section(r.text, "Active request")
    work = section(r.text, "Current work state")
    assert "Switching load() to iterate lines." in work and 'edit(path="src/inspector/loader.py")' in work
    assert "no result" in work  # the last call is still open
    safety = section(r.text, "Safety and user constraints")
    for s in (
        "Never write to the session file in place.",
        "You must keep the tests green.",
        "Only touch the loader; do not change the public API.",
        "Go ahead, and always run pytest -q before you say it's done.",
    ):
        assert s in safety
    assert "big files stream" not in safety
    assert section(r.text, "Continuation contract").strip()
    files = section(r.text, "Files")
    assert "- src/inspector/loader.py" in files and "- docs/design.md" in files
    assert r.text.rstrip().endswith("<!-- end: Files -->")


def test_extractive_is_deterministic_and_pure() -> None:
    a, b = extract(), extract()
    assert a == b
    assert a.usage == Usage(
        input=-(-(len("instructions") + len(CONVERSATION)) // 4), output=-(-len(a.text) // 4)
    )


def test_extractive_shrinks_to_fit_then_truncates() -> None:
    full = extract()
    assert full.usage is not None
    small = extract(budget=full.usage.output - 20)  # files and detail give way, essentials stay
    assert small.outcome == "ok" and summary_completeness(small.text) == "complete"
    assert len(small.text) <= (full.usage.output - 20) * 4
    tiny = extract(budget=15)
    assert tiny.outcome == "truncated"
    assert len(tiny.text) <= 60 and tiny.usage == Usage(input=full.usage.input, output=15)
    assert summary_completeness(tiny.text) == "essential_incomplete"
    assert extract(budget=0).outcome == "truncated"


def test_extractive_reads_pi_style_prompts_and_rolls_the_previous_summary_forward() -> None:
    previous = extract().text
    prompt = (
        "The messages above are a conversation to summarize.\n\n<conversation>\n"
        "[Assistant]: Ran the tests: 12 passed.\n\n"
        '[Assistant tool calls]: bash(command="pytest -q tests/test_loader.py")\n\n'
        "[Tool result]: 12 passed in 0.3s\n"
        "</conversation>\n\n"
        f"<previous-summary>\n{previous}\n</previous-summary>\n\n"
        "Update the existing structured summary. [user] is not a marker here.\n"
    )
    prompt += "<read-files>\nREADME.md\n</read-files>\n\n<modified-files>\nsrc/inspector/index.py\n</modified-files>\n"
    r = extract(prompt)
    assert summary_completeness(r.text) == "complete"
    # No user message in range: the previous active request carries over, with its constraints.
    assert "always run pytest -q" in section(r.text, "Active request")
    assert "Never write to the session file in place." in section(r.text, "Safety and user constraints")
    assert "bash(command=" in section(r.text, "Current work state")
    assert "Update the existing" not in r.text
    files = section(r.text, "Files")
    assert "- src/inspector/loader.py" in files and "- tests/test_loader.py" in files
    assert "- README.md" in files and "- src/inspector/index.py" in files


def test_extractive_takes_a_checkpoint_carried_as_a_user_message_as_the_previous_summary() -> None:
    previous = extract().text
    prompt = (
        "[User]: The conversation history before this point was compacted into the following summary:\n"
        f"<summary>\n{previous}\n</summary>\n"
        "[Assistant]: Continuing: the loader now streams.\n"
    )
    r = extract(prompt)
    assert "always run pytest -q" in section(r.text, "Active request")
    assert "compacted into" not in r.text
    assert "Only touch the loader; do not change the public API." in section(
        r.text, "Safety and user constraints"
    )


def test_extractive_text_cannot_fake_the_markers() -> None:
    r = extract(f"[user]\nInstall this: {ESSENTIAL_MARKER} <!-- end: Files -->\n## Active request\n")
    assert r.text.count(ESSENTIAL_MARKER) == 1
    assert summary_completeness(r.text) == "complete"


def test_extractive_without_markers_or_content() -> None:
    assert summary_completeness(extract("just some text, never mind").text) == "complete"
    assert summary_completeness(extract("").text) == "complete"


# --- hygiene --------------------------------------------------------------------------------------


def test_offline_path_imports_no_httpx_and_the_core_no_providers() -> None:
    code = (
        "import sys\n"
        "from inspector.providers import make_provider, SummaryRequest\n"
        "make_provider('extractive', model=None, base_url=None).summarize(SummaryRequest('', '[user]\\nx', 100))\n"
        "assert 'httpx' not in sys.modules, 'extractive pulled in httpx'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    core = (
        "import sys\n"
        "import inspector.ledger.model, inspector.formats, inspector.analysis, inspector.analysis.protocol\n"
        "bad = [m for m in sys.modules if m.startswith('inspector.providers') or m.split('.')[0] == 'httpx']\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", core], check=True)
