"""Arithmetic on DALI data of both devices: the CPU operands get ``.gpu()``, as the pipeline did.

In a pipeline, an arithmetic expression with one GPU operand runs on the GPU and moves every
other operand there (``nvidia.dali.ops._operators.math``: ``edge.gpu()`` for each input), so
``condition * images`` works with a CPU ``coin_flip`` and GPU images. Dynamic mode raises
"Cannot mix GPU and CPU inputs" instead. So in a pipeline that uses the GPU, the device of each
operand is worked out as DALI places operators (``device=`` where written, else the GPU when an
input is on the GPU, ``ops._choose_device``; ``.gpu()``/``.cpu()``; a reader's outputs on its
device) and the CPU operands of an expression that has a GPU one are moved with ``.gpu()``: the
values are the same, moved where the pipeline moved them.

The devices are followed through the statements in order: a name holds, where an expression reads
it, what the lines before bound it to. A name bound to data of both devices by the branches of an
``if`` (``if gpu: audio = audio.gpu()``) has, inside one expression, one device all the same: operands that are that name, or made from it by operators that follow
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
EITHER = "either"  # a name's binding here: DALI data, on one device or the other by the path taken
# ("as", name): in one expression, on whichever device `name` (EITHER here) has: every read of it
# there is of the same binding
AS = "as"
_ARITHMETIC = (cst.BinaryOperation, cst.Comparison)
_NOT_INTO = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
_DATA = (GPU, CPU, EITHER)


class _Devices:
    """The device of each name as the pipeline's statements run, in their order (``audio`` may be
    CPU data where one expression reads it and something else after a later line binds it again);
    the branches of an ``if`` are joined after it."""

    def __init__(self, info, names, catalog):
        from dali_migrate.rules.data_subscript import data_names

        self.names, self.catalog = names, catalog
        data, mixed = data_names(info, names)
        self.maybe_data = data | mixed  # names some binding of which is DALI data

    # -- expressions ----------------------------------------------------------------------------
    def device(self, node, env):
        tp = type(node)
        if tp is cst.Name:
            dev = env.get(node.value)
            if dev is None:  # not bound by the pipeline before this point (a parameter, a module's name)
                return UNKNOWN if node.value in self.maybe_data else PY
            return (AS, node.value) if dev == EITHER else dev
        if tp is cst.Call:
            return self._call(node, env)
        if tp is cst.BinaryOperation:
            return _combine([self.device(node.left, env), self.device(node.right, env)])
        if tp is cst.UnaryOperation:
            return self.device(node.expression, env)
        if tp is cst.Comparison:
            return _combine([self.device(node.left, env), *(self.device(c.comparator, env) for c in node.comparisons)])
        if tp is cst.Subscript:
            return self.device(node.value, env)
        if tp in (cst.Tuple, cst.List):
            return _combine([self.device(el.value, env) for el in node.elements])
        if tp is cst.IfExp:
            found = {self.device(node.body, env), self.device(node.orelse, env)}
            return next(iter(found)) if len(found) == 1 else UNKNOWN
        return PY  # literals, attributes (types.FLOAT), other expressions of Python values

    def _call(self, call: cst.Call, env):
        func = call.func
        if type(func) is cst.Attribute and func.attr.value in ("gpu", "cpu") and not call.args:
            inner = self.device(func.value, env)
            return PY if inner == PY else func.attr.value.lower()
        op_path = self.names.fn_op(func)
        q = self.names.qualify(func) or ""
        if op_path is None:
            if q.startswith("nvidia.dali.math."):
                return _combine([self.device(a.value, env) for a in call.args])
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
        inputs = [self.device(a.value, env) for a in call.args if a.keyword is None and not a.star]
        dev = _combine(inputs)
        return CPU if dev == PY else dev

    # -- bindings -------------------------------------------------------------------------------
    def _bound(self, name: str, value, env):
        """What ``name`` holds after ``name = value``."""
        if value is None:
            return UNKNOWN if name in self.maybe_data else PY
        dev = self.device(value, env)
        if type(dev) is tuple:
            return EITHER  # data on the device of the name it was made from, whichever that is
        if dev == PY and name in self.maybe_data and any(type(n) is cst.Call or (type(n) is cst.Name and n.value in self.maybe_data)
                             for n in cst_walk.walk(value, not_into=_NOT_INTO)):
            return UNKNOWN  # a Python call (a helper's result) may give data, of either device
        return dev

    def bind(self, target, value, env) -> None:
        if type(target) is cst.Name:
            env[target.value] = self._bound(target.value, value, env)
        elif type(target) in (cst.Tuple, cst.List):
            elements = [e.value for e in target.elements]
            if type(value) in (cst.Tuple, cst.List) and len(value.elements) == len(elements) and not any(
                    type(e) is cst.StarredElement for e in value.elements):
                for t, v in zip(elements, [e.value for e in value.elements]):
                    self.bind(t, v, env)
                return
            # `jpegs, labels = fn.readers.file(...)`: each output on the operator's device
            dev = self.device(value, env) if type(value) is cst.Call and self.names.fn_op(value.func) else None
            for t in elements:
                for n in _target_names(t):
                    env[n] = (EITHER if type(dev) is tuple else dev if dev in _DATA
                              else UNKNOWN if n in self.maybe_data else PY)


def _target_names(target) -> list:
    if type(target) is cst.Name:
        return [target.value]
    if type(target) in (cst.Tuple, cst.List):
        return [n for el in target.elements for n in _target_names(el.value)]
    if type(target) is cst.StarredElement:
        return _target_names(target.value)
    return []


def _join(a: dict, b: dict) -> dict:
    out = dict(a)
    for name, dev in b.items():
        old = out.get(name)
        if old is None or old == dev:
            out[name] = dev
        elif old in _DATA and dev in _DATA:
            out[name] = EITHER
        else:
            out[name] = UNKNOWN
    return out


def _combine(devs):
    """The device of an expression of operands on ``devs``: the GPU if one is there (DALI moves the
    others), PY without DALI operands. With the CPU, an ("as", name) operand decides (the GPU if
    it is there, else the CPU); two names cannot be told."""
    found = set(devs) - {PY}
    if not found:
        return PY
    if GPU in found:
        return GPU
    if UNKNOWN in found:
        return UNKNOWN
    alike = [d for d in found if type(d) is tuple]
    if len(alike) > 1:
        return UNKNOWN
    return alike[0] if alike else CPU


def _operands(node) -> list:
    if type(node) is cst.BinaryOperation:
        return [node.left, node.right]
    return [node.left, *(c.comparator for c in node.comparisons)]


class _Plan:
    """Walks the pipeline's statements in order, checking each arithmetic expression with the
    devices its names have there, then binding what the statement binds."""

    def __init__(self, devices: _Devices, names):
        self.devices, self.names = devices, names
        self.to_gpu: set = set()
        self.reason = None

    def check(self, root, env) -> None:
        if root is None or self.reason is not None:
            return
        for node in cst_walk.walk(root, not_into=_NOT_INTO):
            tp = type(node)
            if tp in _ARITHMETIC:
                operands = _operands(node)
            elif tp is cst.Call and (self.names.qualify(node.func) or "").startswith("nvidia.dali.math."):
                operands = [a.value for a in node.args]
            else:
                continue
            devs = [self.devices.device(o, env) for o in operands]
            if tp is cst.BinaryOperation and any(type(o) in (cst.Tuple, cst.List) and d != PY for o, d in zip(operands, devs)):
                # `pout + (izen, tzen)` (makani): a tuple or list holding DALI data is no operand of
                # DALI's arithmetic, so this joins sequences, which Python does on either device
                continue
            data = [d for d in devs if d != PY]
            kinds = set(data)
            if len(data) < 2 or len(kinds) == 1 and UNKNOWN not in kinds:
                continue  # one DALI operand (the rest are Python values), or all on one device
            if UNKNOWN in kinds or GPU not in kinds:  # (with GPU not there: a name's device beside another)
                self.reason = (
                    f"`{cst.Module([]).code_for_node(node)}`: arithmetic on DALI data whose devices dali-migrate "
                    "cannot tell; dynamic mode does not move a CPU operand to the GPU as the pipeline does "
                    "(\"Cannot mix GPU and CPU inputs\"): convert by hand")
                return
            self.to_gpu |= {id(o) for o, d in zip(operands, devs) if d != GPU and d != PY}

    def block(self, statements, env) -> dict:
        for stmt in statements:
            env = self.statement(stmt, env)
        return env

    def statement(self, stmt, env) -> dict:
        tp = type(stmt)
        if tp is cst.SimpleStatementLine:
            for small in stmt.body:
                self.check(small, env)
                kind = type(small)
                if kind is cst.Assign:
                    for t in small.targets:
                        self.devices.bind(t.target, small.value, env)
                elif kind is cst.AnnAssign and small.value is not None:
                    self.devices.bind(small.target, small.value, env)
                elif kind is cst.AugAssign:
                    self.devices.bind(small.target, cst.BinaryOperation(small.target, cst.Add(), small.value), env)
            return env
        if tp is cst.If:
            self.check(stmt.test, env)
            taken = self.block(stmt.body.body, dict(env))
            other = self.statement(stmt.orelse, dict(env)) if stmt.orelse is not None else env
            return _join(taken, other)
        if tp is cst.Else:
            return self.block(stmt.body.body, env)
        if tp in (cst.For, cst.While):
            self.check(stmt.iter if tp is cst.For else stmt.test, env)
            after = dict(env)
            for _ in range(2):  # a name the body binds holds, in its next round, what the last gave
                inner = dict(after)
                if tp is cst.For:
                    self.devices.bind(stmt.target, None, inner)
                after = _join(after, self.block(stmt.body.body, inner))
            return self.statement(stmt.orelse, after) if stmt.orelse is not None else after
        if tp is cst.With:
            for item in stmt.items:
                self.check(item.item, env)
            return self.block(stmt.body.body, env)
        if tp is cst.Try:
            out = self.block(stmt.body.body, dict(env))
            for handler in stmt.handlers:
                out = _join(out, self.block(handler.body.body, dict(env)))
            return _join(env, out)
        if tp in (cst.FunctionDef, cst.ClassDef):
            env[stmt.name.value] = PY
            return env
        for child in cst_walk.children(stmt):  # other statements: their expressions, as they stand
            self.check(child, env)
        return env


def plan(info, names, catalog) -> tuple:
    """(ids of the operands, as written, that get ``.gpu()``, why the pipeline cannot be converted
    or None). Only for pipelines that use the GPU: elsewhere every operand is on the CPU."""
    if not info.uses_gpu:
        return set(), None
    roots = [*info.statements, *([info.returned] if info.returned is not None else [])]
    if not any(type(n) in _ARITHMETIC or (type(n) is cst.Call and (names.qualify(n.func) or "").startswith("nvidia.dali.math."))
               for root in roots for n in cst_walk.walk(root, not_into=_NOT_INTO)):
        return set(), None
    walk = _Plan(_Devices(info, names, catalog), names)
    env = walk.block(info.statements, {})
    walk.check(info.returned, env)
    return (set(), walk.reason) if walk.reason is not None else (walk.to_gpu, None)


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
