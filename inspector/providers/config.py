"""Where a provider's key, endpoint and model come from: arguments, then the environment, then
`~/.config/inspector/config.toml`:

    [providers.openai]
    api_key = "..."
    base_url = "https://api.openai.com/v1"
    model = "..."
    connection = "openai"          # optional: the route's connection id

    [providers.anthropic]
    api_key = "..."
    model = "..."

Keys are wrapped in `Secret` as soon as they are read, so no repr, str, exception or log line
built from a setting can show one.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from inspector.formats.jsonl import open_regular
from inspector.providers.base import ProviderConfigError

DEFAULT_BASE_URL = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
# The first variable set wins; the app-specific one first, so it can override a shared one.
KEY_ENV = {
    "openai": ("INSPECTOR_OPENAI_API_KEY", "OPENAI_API_KEY"),
    "anthropic": ("INSPECTOR_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"),
}
BASE_URL_ENV = {"openai": ("OPENAI_BASE_URL",), "anthropic": ("ANTHROPIC_BASE_URL",)}
_KNOWN_KEYS = frozenset({"api_key", "base_url", "model", "connection", "max_tokens_param"})


class Secret:
    """A string that never shows itself: repr and str are redacted, `reveal()` is explicit."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('[redacted]')"

    __str__ = __repr__

    def __reduce__(self) -> Any:  # never pickled with its value
        raise TypeError("a Secret cannot be pickled")


@dataclass(frozen=True)
class ProviderSettings:
    provider: str
    api_key: Secret
    base_url: str
    model: str
    connection: str  # the route's connection id
    max_tokens_param: str | None = None  # OpenAI only: None = chosen from the endpoint
    source: str = ""  # where the key came from (an env variable name or the config path), for messages


def default_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "inspector" / "config.toml"


def load_config(config_path: str | None) -> dict[str, Any]:
    """The parsed config file; {} when the default file does not exist. An explicit path that does
    not exist, or a file that is not TOML, is a configuration error."""
    path = Path(config_path) if config_path else default_config_path()
    try:
        with open_regular(str(path)) as f:  # (a named pipe: refused, never waited on)
            return tomllib.load(f)
    except FileNotFoundError:
        if config_path:
            raise ProviderConfigError(f"config file not found: {path}") from None
        return {}
    except tomllib.TOMLDecodeError as e:
        # The decoder's message names a line and column, never the content.
        raise ProviderConfigError(f"config file {path} is not valid TOML: {e}") from None
    except RecursionError:
        raise ProviderConfigError(f"config file {path} is not a config: its values are nested too deep to read") from None
    except OSError as e:
        raise ProviderConfigError(f"config file {path} cannot be read: {e.strerror}") from None


def _section(cfg: dict[str, Any], provider: str, path: str) -> dict[str, Any]:
    providers = cfg.get("providers", {})
    if not isinstance(providers, dict):
        raise ProviderConfigError(f"{path}: [providers] must be a table")
    section = providers.get(provider, {})
    if not isinstance(section, dict):
        raise ProviderConfigError(f"{path}: [providers.{provider}] must be a table")
    for k, v in section.items():
        if k in _KNOWN_KEYS and not isinstance(v, str):
            raise ProviderConfigError(f"{path}: providers.{provider}.{k} must be a string")
    return section


def _check_base_url(provider: str, url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ProviderConfigError(f"{provider}: base URL must be http(s)://host[:port][/path], not {url!r}")
    return url.rstrip("/")


def resolve_settings(
    provider: str, *, model: str | None, base_url: str | None, config_path: str | None
) -> ProviderSettings:
    path_label = str(Path(config_path) if config_path else default_config_path())
    section = _section(load_config(config_path), provider, path_label)

    key, source = None, ""
    for var in KEY_ENV[provider]:
        if os.environ.get(var):
            key, source = os.environ[var], var
            break
    if key is None and section.get("api_key"):
        key, source = section["api_key"], path_label
    if key is None:
        names = " or ".join(KEY_ENV[provider])
        raise ProviderConfigError(
            f"{provider}: no API key: set {names}, or api_key under [providers.{provider}] in {path_label}"
        )
    key = key.strip()
    if not key.isascii() or not key.isprintable():
        # httpx would refuse the header with an error that quotes it.
        raise ProviderConfigError(
            f"{provider}: the API key from {source} has characters an HTTP header cannot carry"
        )

    url = base_url
    if not url:
        url = next((os.environ[v] for v in BASE_URL_ENV[provider] if os.environ.get(v)), None)
    url = _check_base_url(provider, url or section.get("base_url") or DEFAULT_BASE_URL[provider])

    model_id = model or section.get("model")
    if not model_id:
        raise ProviderConfigError(
            f"{provider}: no model: pass --model, or set model under [providers.{provider}] in {path_label}"
        )

    # A span one endpoint accepted proves nothing about another (seed 002): an endpoint other than
    # the provider's own is its own connection unless the config names one.
    connection = section.get("connection")
    if not connection:
        connection = provider if url == DEFAULT_BASE_URL[provider] else (urlsplit(url).netloc or provider)
    return ProviderSettings(
        provider=provider,
        api_key=Secret(key),
        base_url=url,
        model=model_id,
        connection=connection,
        max_tokens_param=section.get("max_tokens_param"),
        source=source,
    )
