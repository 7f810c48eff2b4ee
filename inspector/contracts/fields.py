"""The pieces every `--json` contract model is made of.

A contract's key is either always there (`Field(description=...)`, no default: required in the
schema, nullable where the type says `| None`) or there only when it says something
(`omitted(...)`: not required, never null). `Closed` is a model whose keys are all listed
(`additionalProperties: false`); what a producer records as it likes (a finding's `data`, the
runtime's own records) is a plain `dict[str, Any]`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

Severity = Literal["error", "warning", "info"]
# The type of a key that is left out rather than null (`int | Absent`): the schema says `integer`.
Absent = SkipJsonSchema[None]


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def omitted(description: str = "") -> Any:
    """A key the document leaves out when it has nothing to say (never written as null)."""
    return Field(None, description=description or None, json_schema_extra=_no_default)


class Closed(BaseModel):
    """An object whose keys are all listed: an unknown key is an error."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def schema_key(name: str) -> Any:
    """The `schema` key: this contract's name and version."""
    return Field(alias="schema", description=f"this contract's name and version ({name})")


__all__ = ["Absent", "Closed", "Field", "Severity", "omitted", "schema_key"]
