"""`fields.check_fields` is compiled per spec (issue 15: it was the loaders' hottest function); it must
say and remove exactly what the plain walk over the spec does (issue 11's guarantee: every
wrong-typed field gets its diagnostic), on every spec, for objects of every JSON type in every field."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.formats import fields
from inspector.formats.fields import Field, WrongType, _expected, _fits, json_type


def reference(obj: dict[str, Any], spec: dict[str, Field], prefix: str = "") -> list[WrongType]:
    """The walk check_fields did before it was compiled, kept here as the definition."""
    out: list[WrongType] = []
    for key, f in spec.items():
        if key not in obj:
            continue
        v = obj[key]
        if v is None:
            continue
        path = f"{prefix}{key}"
        if not any(_fits(v, t) for t in f.types):
            out.append(WrongType(path, json_type(v), _expected(f.types)))
            del obj[key]
            continue
        if f.fields is not None and type(v) is dict:
            out += reference(v, f.fields, path + ".")
        elif f.items is not None and type(v) is list:
            for i, x in enumerate(v):
                if type(x) is dict:
                    out += reference(x, f.items, f"{path}[{i}].")
    return out


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(1 << 70), max_value=1 << 70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([-(1 << 63), (1 << 63) - 1, 1 << 63, 1e19, -1e19, 0.5]),
    st.text(max_size=3),
)


def shaped(spec: dict[str, Field], depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    """Objects with some of the spec's fields (and a field it does not name), each holding a value of
    any JSON type, objects and lists shaped by the nested specs."""
    def value(f: Field) -> st.SearchStrategy[Any]:
        options = [SCALARS, st.lists(SCALARS, max_size=2), st.dictionaries(st.text(max_size=2), SCALARS, max_size=2)]
        if depth < 3 and f.fields:
            options.append(shaped(f.fields, depth + 1))
        if depth < 3 and f.items:
            options.append(st.lists(st.one_of(shaped(f.items, depth + 1), SCALARS), max_size=3))
        return st.one_of(options)

    keys = [*spec, "unnamed"]
    return st.fixed_dictionaries({}, optional={k: value(spec[k]) if k in spec else SCALARS for k in keys})


def _same(spec: dict[str, Field], obj: dict[str, Any]) -> None:
    a, b, c = copy.deepcopy(obj), copy.deepcopy(obj), copy.deepcopy(obj)
    assert fields.check_fields(a, spec) == reference(b, spec)
    assert a == b
    walked: list[WrongType] = []  # the uncompiled check a loader of few objects takes (adk.check_events)
    fields.check_interpreted(spec, c, "", walked)
    assert walked == reference(copy.deepcopy(obj), spec)
    assert c == b


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_compiled_check_is_the_walk_on_every_spec(data: st.DataObject) -> None:
    for name, spec in fields.SPECS.items():
        obj = data.draw(shaped(spec), label=name)
        _same(spec, obj)


def test_a_prefix_and_a_new_spec_are_honoured() -> None:
    spec = {"a": fields.OBJ(b=fields.INT()), "c": fields.LIST(d=fields.STR())}
    obj = {"a": {"b": True}, "c": [{"d": 1}, 3, {"d": "ok"}]}
    got = fields.check_fields(copy.deepcopy(obj), spec, "top.")
    assert got == reference(copy.deepcopy(obj), spec, "top.")
    assert [w.path for w in got] == ["top.a.b", "top.c[0].d"]
    walked: list[WrongType] = []
    fields.check_interpreted(spec, copy.deepcopy(obj), "top.", walked)
    assert walked == got


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_few_first_walks_then_compiles_saying_the_same(data: st.DataObject) -> None:
    """`FewFirst` (the ADK loaders' guard): the objects it walks and those it checks compiled, past
    its first few, each get exactly what the reference walk says and removes."""
    for name, spec in fields.SPECS.items():
        guard = fields.FewFirst(spec, few=2)
        for k, obj in enumerate(data.draw(st.lists(shaped(spec), min_size=3, max_size=5), label=name)):
            mine, ref = copy.deepcopy(obj), copy.deepcopy(obj)
            out: list[WrongType] = []
            guard(mine, "", out)
            assert out == reference(ref, spec)
            assert mine == ref
            assert (guard.compiled is None) == (k < 2)
