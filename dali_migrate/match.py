"""Structural patterns over libcst nodes: the part of ``libcst.matchers`` the codemod uses.

``import libcst.matchers`` costs about a third of a second in every process that does it (measured
2026-12-06: 323 ms of a 650 ms start-up of the command line, on a warm bytecode cache): the module
defines one dataclass per node type and field combination, thousands of them. The codemod uses
about twenty node patterns, ``|`` between them, and ``matches``: a pre-commit hook or a ``--check``
run on a few files paid that import for every run. This module gives the same spelling
(``m.matches(node, m.Call(func=m.Name("len") | m.Name("iter")))``) with the same answers for
what the codemod writes, checked against ``libcst.matchers`` itself in tests/test_match.py:

* ``m.X(...)`` for any libcst node class ``X``: positional arguments are the node's fields in
  their order (as libcst's matcher classes take them), keywords name fields; a field not given
  matches anything.
* A field's pattern is another pattern, ``|`` of patterns, a list or tuple of patterns (the node's
  sequence must have as many items, each matching; no wildcards), or a plain value compared with
  ``==`` (``m.Name("x")``).
* A node matches ``m.X`` only if its type is exactly ``X``, as with libcst's matchers.
"""

from __future__ import annotations

import dataclasses

import libcst as cst


class _Pattern:
    __slots__ = ("type", "fields")

    def __init__(self, tp: type, fields: tuple) -> None:
        self.type = tp
        self.fields = fields  # ((name, pattern), ...)

    def __or__(self, other) -> "_OneOf":
        return _OneOf((self, other))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.fields)
        return f"m.{self.type.__name__}({inner})"


class _OneOf:
    __slots__ = ("options",)

    def __init__(self, options: tuple) -> None:
        flat: list = []
        for o in options:
            flat.extend(o.options if isinstance(o, _OneOf) else (o,))
        self.options = tuple(flat)

    def __or__(self, other) -> "_OneOf":
        return _OneOf((self, other))

    def __repr__(self) -> str:
        return " | ".join(map(repr, self.options))


class _Maker:
    """``m.X``: makes patterns for the node class X."""

    __slots__ = ("type", "names")

    def __init__(self, tp: type) -> None:
        self.type = tp
        self.names = tuple(f.name for f in dataclasses.fields(tp))

    def __call__(self, *args, **kwargs) -> _Pattern:
        if len(args) > len(self.names):
            raise TypeError(f"m.{self.type.__name__} takes at most {len(self.names)} positional patterns")
        given = dict(zip(self.names, args))
        for name, value in kwargs.items():
            if name not in self.names:
                raise TypeError(f"m.{self.type.__name__} has no field {name!r}")
            if name in given:
                raise TypeError(f"m.{self.type.__name__} got {name!r} twice")
            given[name] = value
        return _Pattern(self.type, tuple(given.items()))


_makers: dict = {}


def __getattr__(name: str) -> _Maker:
    maker = _makers.get(name)
    if maker is None:
        tp = getattr(cst, name, None)
        if not (isinstance(tp, type) and issubclass(tp, cst.CSTNode) and dataclasses.is_dataclass(tp)):
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        maker = _makers[name] = _Maker(tp)
    return maker


def matches(node, pattern) -> bool:
    """Whether ``node`` (a libcst node, or None: no match) has the shape ``pattern`` describes."""
    if node is None:
        return False
    return _match(node, pattern)


def _match(value, pattern) -> bool:
    tp = type(pattern)
    if tp is _Pattern:
        if type(value) is not pattern.type:
            return False
        for name, sub in pattern.fields:
            if not _match(getattr(value, name), sub):
                return False
        return True
    if tp is _OneOf:
        return any(_match(value, option) for option in pattern.options)
    if tp is list or tp is tuple:
        if not isinstance(value, (list, tuple)) or len(value) != len(pattern):
            return False
        return all(_match(v, p) for v, p in zip(value, pattern))
    return value == pattern
