"""Marks pipeline-mode code that no rule converts yet, so ``--check`` and the report show it.

Legacy ``Pipeline`` subclasses and ``with pipe:`` graphs, framework iterators, serialization and
helpers that build operators are left as they are; each gets one marker saying what to do.
"""

from __future__ import annotations

import libcst as cst

from dali_migrate.dali_imports import OPS, PIPELINE_CLASS
from dali_migrate.rules.base import DetectorRule

_ITERATOR_HINT = (
    "framework iterator over a pipeline: not converted yet; iterate the converted generator and use "
    "batch.torch() (PyTorch) or DLPack instead"
)
# What to do per framework plugin (the PyTorch iterators over one pipeline are converted by the
# torch-iterator rule; what is left here is what that rule could not convert).
_FRAMEWORK_HINTS = {
    "pytorch": "PyTorch iterator not converted (see the call-site marker): iterate the converted generator, "
               "outputs via batch.torch(), and keep the iterator's epoch length and last-batch policy by hand",
    "tf": "TensorFlow DALIDataset needs pipeline mode: keep this pipeline, or feed tf.data from the converted "
          "generator (tf.data.Dataset.from_generator over batch.cpu() / np.asarray(ndd.as_tensor(batch)) or DLPack)",
    "jax": "JAX iterator: iterate the converted generator and convert outputs with jax.dlpack.from_dlpack(ndd.as_tensor(batch)); "
           "keep the iterator's epoch length / last-batch policy and sharding by hand",
    "mxnet": "MXNet iterator: iterate the converted generator and convert outputs via DLPack "
             "(mx.nd.from_dlpack(ndd.as_tensor(batch))); keep the epoch length / last-batch policy by hand",
    "paddle": "Paddle iterator: iterate the converted generator and convert outputs via DLPack "
              "(paddle.utils.dlpack.from_dlpack(ndd.as_tensor(batch))); keep the epoch length / last-batch policy by hand",
}


def _framework_hint(q: str):
    """The hint for a plugin class or function that wraps pipelines, or None."""
    if not q.startswith("nvidia.dali.plugin."):
        return None
    parts = q.split(".")
    framework, last = parts[3] if len(parts) > 4 else "", parts[-1]
    if not (last.endswith("Iterator") or last.endswith("Dataset") or last in ("data_iterator", "peekable_data_iterator")):
        return None
    return _FRAMEWORK_HINTS.get(framework, _ITERATOR_HINT)


def _find(module: cst.Module, names, parents, converted: set) -> list:
    found = []
    seen_statements = set()

    def mark(node, reason):
        stmt = parents.statement(node) if not isinstance(node, (cst.ClassDef, cst.FunctionDef)) else node
        key = (id(stmt), reason)
        if stmt is not None and key not in seen_statements:
            seen_statements.add(key)
            found.append((stmt, reason))

    marked_classes = set()
    for cls in parents.find(cst.ClassDef):
        if any(names.qualify(b.value) in PIPELINE_CLASS for b in cls.bases):
            marked_classes.add(id(cls))
            mark(cls, "Pipeline subclass (ops + define_graph): not converted yet; rewrite define_graph as a loop over ndd calls by hand")

    def inside_marked(node) -> bool:
        cur = parents.of(node)
        while cur is not None:
            if id(cur) in marked_classes:
                return True
            cur = parents.of(cur)
        return False

    for call in parents.find(cst.Call):
        q = names.qualify(call.func)
        if q is None or inside_marked(call):
            continue
        if q in PIPELINE_CLASS:
            mark(call, "Pipeline(...) built by hand (with pipe: / set_outputs): not converted yet; rewrite as a loop over ndd calls by hand")
        elif q.startswith(OPS + "."):
            mark(call, f"legacy operator {q[len('nvidia.dali.'):]}: not converted yet; use the ndd function of the same operator")
        elif _framework_hint(q) is not None:
            mark(call, _framework_hint(q))
        elif q.endswith(".serialize") or q.endswith("autoserialize"):
            mark(call, "serialized pipelines (e.g. for Triton) need pipeline mode: keep this pipeline as it is")
    from dali_migrate.pipeline_analysis import helpers_with_ops

    for name, func in helpers_with_ops(module, names).items():
        mark(
            func,
            f"{name}() builds DALI operators with fn.*, which only works inside a pipeline: convert it with the pipelines that call it (ndd calls, batch_size= on random ops)",
        )
    for dec in parents.find(cst.Decorator):
        target = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
        q = names.qualify(target) or ""
        if q.endswith("autoserialize"):
            mark(parents.of(dec), "@autoserialize: serving (Triton) needs pipeline mode; keep this pipeline as it is")
    return found


RULE = DetectorRule(
    id="not-yet-converted",
    summary="marks pipeline-mode code no rule converts yet (Pipeline subclasses, ops, iterators, serialization)",
    order=200,
    find=_find,
)
