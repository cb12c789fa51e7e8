"""The kinds of rule. Each rule module defines ``RULE = <one of these>(...)``."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable, ClassVar, Optional

import libcst as cst

if TYPE_CHECKING:  # pragma: no cover
    from dali_migrate.catalog import OpInfo
    from dali_migrate.pipeline_context import PipelineContext


@dataclasses.dataclass(frozen=True)
class Rule:
    id: str
    summary: str
    #: rules of one kind run in this order (lower first)
    order: int = 100
    kind: ClassVar[str] = "rule"


@dataclasses.dataclass(frozen=True)
class OpCallRule(Rule):
    """Rewrites one DALI operator call inside a pipeline being converted.

    ``blocker`` says why the call cannot be converted with certainty (the pipeline is then left
    as it was, with a marker); ``rewrite`` returns the new call. Both see the call as written
    (before any rule ran), ``rewrite`` gets the current version too.
    """

    applies: Callable[["OpInfo"], bool] = lambda op: True
    blocker: Callable[[cst.Call, "OpInfo", "PipelineContext"], Optional[str]] = lambda call, op, ctx: None
    rewrite: Callable[[cst.Call, "OpInfo", "PipelineContext"], cst.Call] = lambda call, op, ctx: call
    kind: ClassVar[str] = "operator call"


@dataclasses.dataclass(frozen=True)
class CallSiteRule(Rule):
    """Rewrites ``receiver.method(...)`` where the receiver is a converted pipeline or one of its outputs.

    ``receiver`` is ``"pipeline"`` (the object a converted pipeline function returned) or
    ``"batch"`` (a TensorList that came out of ``pipe.run()``). ``rewrite`` returns the new
    expression, or None to delete the statement (only valid for expression statements).
    """

    receiver: str = "pipeline"
    methods: tuple = ()
    rewrite: Callable = None  # (call: cst.Call, receiver: cst.BaseExpression, site) -> expr | None
    #: (call as written, site) -> why this use cannot be converted, or None
    blocker: Callable = lambda call, site: None
    #: (call as written, site) -> {key: module-level source} the rewrite calls (written once per file)
    needs: Callable = lambda call, site: {}
    kind: ClassVar[str] = "call site"


@dataclasses.dataclass(frozen=True)
class PipelineRule(Rule):
    """Restructures a whole pipeline definition (the core conversion)."""

    kind: ClassVar[str] = "pipeline"


@dataclasses.dataclass(frozen=True)
class DetectorRule(Rule):
    """Finds pipeline-mode code no rule converts yet and marks it for a person.

    ``find(module, names)`` returns (statement, reason) pairs; the statement gets the marker.
    """

    find: Callable = None
    kind: ClassVar[str] = "detector"


#: A call-site rule's module-level helper whose key is another's plus this serves all the other's
#: uses too, under the same name: where a file needs both, the engine adds it alone.
SUPERSET_SUFFIX = "+superset"
