"""Marks code of the file that takes pipeline objects from elsewhere and that nothing here calls,
where the file's own pipelines are converted.

Loader modules define their pipelines beside the code that consumes them, and the training script
that puts the two together is another file::

    class DALIDataloader(DALIGenericIterator):          # nothing in this file makes one
        def __init__(self, pipeline, size, batch_size, output_map=("data", "label")):
            super().__init__(pipeline, list(output_map), size=size)

    class HybridTrainPipe(Pipeline): ...               # converted: a function returning a generator

    class DALICOCOIterator(object):                    # DeepLearningExamples' SSD
        def __init__(self, pipelines, size):
            self.batch_size = pipelines[0].max_batch_size
            ...p.share_outputs() ... p.schedule_run()

Converting the pipelines leaves such a consumer in pipeline mode and unable to take them: the
script's ``DALIDataloader(HybridTrainPipe(...), ...)`` fails at once (a generator has no
``build()``/``max_batch_size``), while the report would say the file converted fully. Uses in this
file are followed by the call-site planning (a pipeline given to something it cannot convert stays
as it is); this rule speaks only for the uses it cannot see.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from dali_migrate import cst_walk
from dali_migrate.cst_util import chain_root, dotted
from dali_migrate.dali_imports import PIPELINE_CLASS
from dali_migrate.rules.base import DetectorRule
from dali_migrate.rules.not_yet_converted import _pipeline_class

#: members only DALI's Pipeline has (a name as common as ``run`` or ``build`` says nothing alone)
PIPELINE_ONLY = frozenset({
    "share_outputs", "release_outputs", "schedule_run", "max_batch_size", "epoch_size", "reader_meta",
    "executor_statistics",
})


def _iterator_base(cls: cst.ClassDef, names, classes: dict, seen: frozenset = frozenset()) -> Optional[str]:
    """The DALI framework iterator ``cls`` derives from (directly or through classes of the file)."""
    for base in cls.bases:
        q = names.qualify(base.value) or ""
        last = q.rsplit(".", 1)[-1]
        if q.startswith("nvidia.dali.plugin.") and last.endswith("Iterator"):
            return last
        name = dotted(base.value)
        if name in classes and name not in seen:
            found = _iterator_base(classes[name], names, classes, seen | {cls.name.value})
            if found is not None:
                return found
    return None


def _used_here(node, parents) -> bool:
    """Whether the file names the definition anywhere but where it defines it."""
    return any(n is not node.name for n in parents.names(node.name.value))


def _makes_a_pipeline(node, names, pipelines: set) -> bool:
    """``Pipeline(...)``, or a call of one of the file's pipeline definitions, inside ``node``: the
    consumer makes its pipeline itself, and the conversion follows it (or marks it)."""
    for n in cst_walk.walk(node):
        if type(n) is cst.Call and (names.qualify(n.func) in PIPELINE_CLASS or dotted(n.func) in pipelines):
            return True
    return False


def _pipeline_members(node) -> list:
    """The pipeline-only members ``node`` reaches on objects it is given: a parameter (also an
    element of one, or a loop variable over one), or what ``self`` holds (``self.pipe.epoch_size()``,
    ``for p in self._pipes: p.share_outputs()``). Not on its own locals: where one holds a pipeline
    of this file, the call-site planning follows its uses."""
    given, selves = set(), set()
    for f in cst_walk.walk(node):
        if type(f) is cst.FunctionDef:
            params = [*f.params.posonly_params, *f.params.params, *f.params.kwonly_params]
            if params and params[0].name.value in ("self", "cls"):
                selves.add(params[0].name.value)
                params = params[1:]
            given |= {p.name.value for p in params}

    def reaches(expr) -> bool:  # (on self: a member it holds, `self.pipe`, not self itself)
        root = chain_root(expr)
        name = root.value if isinstance(root, cst.Name) else None
        return name in given or (name in selves and root is not expr)

    for f in cst_walk.walk(node):  # loop variables over what it was given
        if type(f) in (cst.For, cst.CompFor) and isinstance(f.target, cst.Name) and reaches(f.iter):
            given.add(f.target.value)
    found = []
    for n in cst_walk.walk(node):
        if type(n) is cst.Attribute and n.attr.value in PIPELINE_ONLY and n.attr.value not in found and reaches(n.value):
            found.append(n.attr.value)
    return found


def _find(module: cst.Module, names, parents, converted: set) -> list:
    if not converted:
        return []  # the file's pipelines stay pipelines: what takes them still can
    classes = {s.name.value: s for s in module.body if isinstance(s, cst.ClassDef)}
    pipelines = set(converted) | {name for name, cls in classes.items() if _pipeline_class(cls, module, names)}
    from dali_migrate.pipeline_analysis import pipeline_decorator

    pipelines |= {s.name.value for s in module.body if isinstance(s, cst.FunctionDef) and pipeline_decorator(s, names) is not None}
    spelled = ", ".join(sorted(converted))
    found = []
    for stmt in module.body:
        if not isinstance(stmt, (cst.ClassDef, cst.FunctionDef)) or stmt.name.value in pipelines:
            continue
        if _used_here(stmt, parents) or _makes_a_pipeline(stmt, names, pipelines):
            continue
        base = _iterator_base(stmt, names, classes) if isinstance(stmt, cst.ClassDef) else None
        if base is not None:
            what = f"class {stmt.name.value} (derived from DALI's {base})"
        else:
            members = _pipeline_members(stmt)
            if not members:
                continue
            kind = "class" if isinstance(stmt, cst.ClassDef) else "function"
            what = f"{kind} {stmt.name.value} (it reaches pipeline members: {', '.join(f'.{m}' for m in members)})"
        found.append((stmt, (
            f"{what} takes DALI pipeline objects and nothing in this file makes or calls it; this file's pipelines "
            f"({spelled}) are converted to dynamic mode and are no longer pipeline objects: code elsewhere that gives "
            f"it one of them must be converted by hand (iterate the converted generator), or keep that pipeline as it is"
        )))
    return found


RULE = DetectorRule(
    id="pipeline-consumer",
    summary="marks code that takes pipeline objects from other files (an iterator subclass, a hand-written "
            "iterator) where this file's pipelines are converted",
    order=210,
    find=_find,
)
