"""Move DALI code onto the CPU, for equivalence checks on machines without a GPU.

:func:`to_cpu` rewrites pipeline-mode code and converted dynamic-mode code alike:

* ``device="mixed"`` and ``device="gpu"`` (keyword arguments of any call) become ``device="cpu"``;
* so do the arms of a conditional expression there (``device="mixed" if gpu else "cpu"``), and the
  ``"mixed"``/``"gpu"`` a variable, parameter default or ``self.<name>`` holds (so given, or in
  such arms) where a call takes that name as its ``device=`` (``dali_device = "gpu"``,
  ``decoder_device = "cpu" if dali_cpu else "mixed"``, ``def pipe(device="gpu")``);
* ``x.gpu()`` becomes ``x`` (a DataNode's or a Batch's copy to the GPU);
* ``device_id=<expr>`` becomes ``device_id=None`` where it names the device: in ``@pipeline_def(...)``,
  in calls (``Pipeline(...)``, ``ndd.EvalContext(...)``, ``@pipeline_def`` functions) and as the
  default of a keyword-only ``device_id`` parameter (the converted functions' settings). A call of
  a class or an undecorated function the module defines keeps its ``device_id=``: their code hands
  it to DALI where it is moved (``super().__init__(..., device_id)``, ``ndd.EvalContext(...)``),
  and may need the integer for other things (a loader's ``self.files[device_id::num_gpus]``);
* the third positional argument of ``Pipeline(...)``, and of ``super().__init__(...)`` /
  ``Pipeline.__init__(self, ...)`` in a class derived from ``Pipeline`` itself, is Pipeline's
  ``device_id``: it becomes None too (DALI's examples write ``super().__init__(batch_size,
  num_threads, device_id, seed=12 + device_id)``, where the class still needs the integer).

Everything else stays byte-identical. Only libcst is needed (no DALI import).
"""

from __future__ import annotations

import libcst as cst

from dali_migrate.cst_util import comment_tail

__all__ = ["to_cpu"]

_GPU_DEVICES = ("gpu", "mixed")


def _none() -> cst.Name:
    return cst.Name("None")


def _is_none(expr) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _ends_with_pipeline(expr) -> bool:
    return (isinstance(expr, cst.Name) and expr.value == "Pipeline") or (
        isinstance(expr, cst.Attribute) and expr.attr.value == "Pipeline")


def _positional_device_id(call: cst.Call, classes: list) -> bool:
    """Is ``call``'s third positional argument Pipeline's device_id?"""
    func = call.func
    if _ends_with_pipeline(func):
        return True
    if not (isinstance(func, cst.Attribute) and func.attr.value == "__init__"):
        return False
    # super().__init__(...) of a class derived from Pipeline itself (not from another subclass,
    # whose own __init__ may take other parameters), or Pipeline.__init__(self, ...)
    if _ends_with_pipeline(func.value):
        return True
    direct = bool(classes) and any(_ends_with_pipeline(b.value) for b in classes[-1].bases)
    return direct and isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Name) and func.value.func.value == "super"


def _held(target) -> str:
    """``x`` for a name, ``.x`` for ``self.x`` (any ``<name>.x``), else "": how a device is held."""
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
        return "." + target.attr.value
    return ""


def _device_names(module: cst.Module) -> set:
    """The names (``x``, or ``.x`` for ``self.x``) that calls take as their ``device=``."""
    found = set()

    class _Find(cst.CSTVisitor):
        def visit_Arg(self, node: cst.Arg) -> None:
            if node.keyword is not None and node.keyword.value == "device" and _held(node.value):
                found.add(_held(node.value))

    module.visit(_Find())
    return found


def _cpu_value(expr):
    """``expr`` with the device it gives moved to the CPU: a ``"gpu"``/``"mixed"`` literal, or one
    an arm of a conditional expression gives (``"mixed" if device == "gpu" else "cpu"``; its test
    is left as written). Anything else (a call, a subscript) is left as it is."""
    if isinstance(expr, cst.SimpleString) and expr.evaluated_value in _GPU_DEVICES:
        return expr.with_changes(value=f"{expr.quote}cpu{expr.quote}")
    if isinstance(expr, cst.IfExp):
        return expr.with_changes(body=_cpu_value(expr.body), orelse=_cpu_value(expr.orelse))
    return expr


class _ToCpu(cst.CSTTransformer):
    def __init__(self, positional: bool = True, device_names: frozenset = frozenset(), own: frozenset = frozenset()):
        self.classes: list = []
        self.positional = positional
        self.device_names = device_names
        self.own = own  # classes and undecorated functions the module defines at its top level

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        if self.device_names and any(_held(t.target) in self.device_names for t in updated.targets):
            return updated.with_changes(value=_cpu_value(updated.value))
        return updated

    def leave_AnnAssign(self, original: cst.AnnAssign, updated: cst.AnnAssign) -> cst.AnnAssign:
        if updated.value is not None and _held(updated.target) in self.device_names:
            return updated.with_changes(value=_cpu_value(updated.value))
        return updated

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self.classes.pop()
        return updated

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        if updated.keyword is None:
            return updated
        key = updated.keyword.value
        value = updated.value
        if key == "device":
            return updated.with_changes(value=_cpu_value(value))
        return updated

    def leave_Param(self, original: cst.Param, updated: cst.Param) -> cst.Param:
        if updated.default is not None and updated.name.value in self.device_names:
            updated = updated.with_changes(default=_cpu_value(updated.default))
        return updated

    def leave_Parameters(self, original: cst.Parameters, updated: cst.Parameters) -> cst.Parameters:
        kwonly = [
            p.with_changes(default=_none()) if p.name.value == "device_id" and p.default is not None
            and not _is_none(p.default) else p
            for p in updated.kwonly_params
        ]
        return updated.with_changes(kwonly_params=kwonly)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = updated.func
        if isinstance(func, cst.Attribute) and func.attr.value == "gpu" and not updated.args:
            # x.gpu() -> x; keep the parentheses around the receiver, if any, and the call's own.
            receiver = func.value
            if updated.lpar or updated.rpar:
                receiver = receiver.with_changes(lpar=[*updated.lpar, *receiver.lpar], rpar=[*receiver.rpar, *updated.rpar])
            return receiver
        if not (isinstance(func, cst.Name) and func.value in self.own):
            args = [
                a.with_changes(value=_none()) if a.keyword is not None and a.keyword.value == "device_id"
                and not _is_none(a.value) else a
                for a in updated.args
            ]
            if any(a is not b for a, b in zip(args, updated.args)):
                updated = updated.with_changes(args=args)
        positional = [i for i, a in enumerate(updated.args) if a.keyword is None and not a.star]
        skip = 1 if isinstance(func, cst.Attribute) and _ends_with_pipeline(func.value) else 0  # (self)
        if self.positional and len(positional) > 2 + skip and _positional_device_id(original, self.classes):
            i = positional[2 + skip]
            if all(a.keyword is None and not a.star for a in updated.args[: i + 1]):  # (no *args before it)
                args = list(updated.args)
                args[i] = args[i].with_changes(value=_none())
                return updated.with_changes(args=args)
        return updated


def to_cpu(source: str, positional_device_id: bool = True) -> str:
    """``source`` with every GPU placement replaced by the CPU (see the module docstring).

    ``positional_device_id=False`` leaves Pipeline's positional device_id as written: for code that
    is converted afterwards, where the argument tells that the class passes its parameter on."""
    cut = comment_tail(source)  # (kept as text: libcst loses indented comment lines that end a file)
    module = cst.parse_module(source[:cut])
    own = frozenset(
        s.name.value for s in module.body
        if isinstance(s, cst.ClassDef) or (isinstance(s, cst.FunctionDef) and not s.decorators)
    )
    return module.visit(_ToCpu(positional_device_id, frozenset(_device_names(module)), own)).code + source[cut:]
