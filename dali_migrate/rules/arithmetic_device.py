"""Arithmetic on DALI data of both devices: the CPU operands get ``.gpu()``, as the pipeline did.

In a pipeline, an arithmetic expression with one GPU operand runs on the GPU and moves every
other operand there (``nvidia.dali.ops._operators.math``: ``edge.gpu()`` for each input), so
``condition * images`` works with a CPU ``coin_flip`` and GPU images. Dynamic mode raises
"Cannot mix GPU and CPU inputs" instead. So in a pipeline that uses the GPU, the device of each
operand is worked out as DALI places operators (``device=`` where written, else the GPU when an
input is on the GPU, ``ops._choose_device``; ``.gpu()``/``.cpu()``; a reader's outputs on its
device) and the CPU operands of an expression that has a GPU one are moved with ``.gpu()``: the
values are the same, moved where the pipeline moved them.

A name bound to data of both devices (``if gpu: audio = audio.gpu()``) has, inside one expression,
one device all the same: operands that are that name, or made from it by operators that follow
their inputs' device (``audio + fn.random.normal(audio) * c``), are on one device whichever it is,
and need nothing; such an operand beside a GPU one gets ``.gpu()``, which dynamic mode makes a
no-op for data already there (``Batch.to_device`` returns the batch). Where an operand's device
cannot be told otherwise (two such names, one beside a CPU operand, ``device=`` not a literal),
the pipeline is left as it was, with a marker.
"""

from __future__ import annotations

import libcst as cst

from dali_migrate import cst_walk
from dali_migrate.cst_util import kwarg
from dali_migrate.rules.base import Rule

GPU, CPU, UNKNOWN, PY = "gpu", "cpu", "unknown", "py"  # PY: not DALI data (Python values, literals)
# ("as", name): on whichever device `name`, bound to data of both devices, has where the expression
# reads it. Only expressions give it: a binding made from it is UNKNOWN, since the name may be bound
# again before the binding is read.
AS = "as"
NOT_YET = "not yet"  # a name whose bindings are still being worked out
_ARITHMETIC = (cst.BinaryOperation, cst.Comparison)
_NOT_INTO = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


class _Devices:
    def __init__(self, info, names, catalog):
        from dali_migrate.rules.data_subscript import _assignments, _target_names, data_names

        self.names, self.catalog = names, catalog
        self.data, self.mixed = data_names(info, names)
        self.of: dict = {}  # name -> device of every value it is bound to (UNKNOWN where they differ)
        self.settled = False
        assigns = list(_assignments(info))
        # A fixpoint from "not yet" for every name: `images = fn.resize(images)` keeps the device
        # `images` had, which only a later round knows.
        for _ in range(len(assigns) + 2):
            before = dict(self.of)
            found: dict = {}
            for targets, value in assigns:
                dev = self.device(value) if value is not None else UNKNOWN
                dev = UNKNOWN if type(dev) is tuple else dev
                for t in targets:
                    for n in _target_names(t):
                        old = found.get(n, NOT_YET)
                        found[n] = dev if old in (NOT_YET, dev) else old if dev == NOT_YET else UNKNOWN
            self.of = found
            if self.of == before:
                break
        self.settled = True

    def device(self, node) -> str:
        tp = type(node)
        if tp is cst.Name:
            if node.value in self.mixed:
                return UNKNOWN
            if node.value in self.data:
                dev = self.of.get(node.value, NOT_YET)
                if self.settled and dev == UNKNOWN:
                    return (AS, node.value)
                return UNKNOWN if dev == NOT_YET and self.settled else dev
            return PY
        if tp is cst.Call:
            return self._call(node)
        if tp is cst.BinaryOperation:
            return _combine([self.device(node.left), self.device(node.right)])
        if tp is cst.UnaryOperation:
            return self.device(node.expression)
        if tp is cst.Comparison:
            return _combine([self.device(node.left), *(self.device(c.comparator) for c in node.comparisons)])
        if tp is cst.Subscript:
            return self.device(node.value)
        if tp in (cst.Tuple, cst.List):
            return _combine([self.device(el.value) for el in node.elements])
        if tp is cst.IfExp:
            found = {self.device(node.body), self.device(node.orelse)}
            return next(iter(found)) if len(found) == 1 else UNKNOWN
        return PY  # literals, attributes (types.FLOAT), other expressions of Python values

    def _call(self, call: cst.Call) -> str:
        func = call.func
        if type(func) is cst.Attribute and func.attr.value in ("gpu", "cpu") and not call.args:
            inner = self.device(func.value)
            return PY if inner == PY else func.attr.value.lower()
        op_path = self.names.fn_op(func)
        q = self.names.qualify(func) or ""
        if op_path is None:
            if q.startswith("nvidia.dali.math."):
                return _combine([self.device(a.value) for a in call.args])
            return PY  # types.Constant (rules/constant.py places it), Python calls
        device = kwarg(call, "device")
        if device is not None:
            if isinstance(device.value, cst.SimpleString):
                return GPU if device.value.evaluated_value in ("gpu", "mixed") else CPU
            return UNKNOWN
        op = self.catalog.fn(op_path)
        if op is not None and "cpu" not in op.devices:
            return GPU
        # no device=: the GPU when an input is there (ops._choose_device), else the CPU
        inputs = [self.device(a.value) for a in call.args if a.keyword is None and not a.star]
        dev = _combine(inputs)
        return CPU if dev == PY else dev


def _combine(devs):
    """The device of an expression of operands on ``devs``: the GPU if one is there (DALI moves the
    others), "not yet" while one is not known yet, PY without DALI operands. With the CPU, an
    ("as", name) operand decides (the GPU if it is there, else the CPU); two names cannot be told."""
    found = set(devs) - {PY}
    if not found:
        return PY
    if GPU in found:
        return GPU
    if UNKNOWN in found:
        return UNKNOWN
    if NOT_YET in found:
        return NOT_YET
    alike = [d for d in found if type(d) is tuple]
    if len(alike) > 1:
        return UNKNOWN
    return alike[0] if alike else CPU


def _operands(node) -> list:
    if type(node) is cst.BinaryOperation:
        return [node.left, node.right]
    return [node.left, *(c.comparator for c in node.comparisons)]


def plan(info, names, catalog) -> tuple:
    """(ids of the operands, as written, that get ``.gpu()``, why the pipeline cannot be converted
    or None). Only for pipelines that use the GPU: elsewhere every operand is on the CPU."""
    if not info.uses_gpu:
        return set(), None
    roots = [*info.statements, *([info.returned] if info.returned is not None else [])]
    nodes = [n for root in roots for n in cst_walk.walk(root, not_into=_NOT_INTO)
             if type(n) in _ARITHMETIC or (type(n) is cst.Call and (names.qualify(n.func) or "").startswith("nvidia.dali.math."))]
    if not nodes:
        return set(), None
    devices = _Devices(info, names, catalog)
    to_gpu: set = set()
    for node in nodes:
        operands = [a.value for a in node.args] if type(node) is cst.Call else _operands(node)
        devs = [devices.device(o) for o in operands]
        data = [d for d in devs if d != PY]
        kinds = set(data)
        if len(data) < 2 or len(kinds) == 1 and UNKNOWN not in kinds:
            continue  # one DALI operand (the rest are Python values), or all on one device
        if UNKNOWN in kinds or GPU not in kinds:  # (with GPU not there: a name's device beside another)
            return set(), (f"`{cst.Module([]).code_for_node(node)}`: arithmetic on DALI data whose devices dali-migrate "
                           "cannot tell; dynamic mode does not move a CPU operand to the GPU as the pipeline does "
                           "(\"Cannot mix GPU and CPU inputs\"): convert by hand")
        to_gpu |= {id(o) for o, d in zip(operands, devs) if d != GPU and d != PY}
    return to_gpu, None


def moved(updated: cst.BaseExpression) -> cst.Call:
    """``updated.gpu()``, parenthesized where the operand needs it."""
    if not isinstance(updated, (cst.Name, cst.Call, cst.Attribute, cst.Subscript)) and not updated.lpar:
        updated = updated.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Call(func=cst.Attribute(value=updated, attr=cst.Name("gpu")))


RULE = Rule(
    id="arithmetic-device",
    summary="arithmetic on DALI data of both devices in a pipeline: the CPU operands get .gpu(), as the pipeline moved them",
    order=97,
)
