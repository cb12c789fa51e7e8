"""``fn.constant(...)`` and ``types.Constant(...)`` -> the same values in dynamic mode.

In a pipeline a constant node is a batch: one sample repeated for every sample of the batch
(``fn.constant``, and ``types.Constant`` of a list or an array, or with ``shape``/``layout``/
``device``). ``types.Constant`` of a plain scalar is a ``ScalarConstant`` instead: a typed scalar
in arithmetic, a plain value as an operator's argument, a 0-d constant node as an operator's
input or as a pipeline output (``nvidia/dali/types.py``, ``ops/__init__.py``, DALI 2.4). What the
converted code writes therefore depends on where the value goes:

    pipeline                                            dynamic mode
    images * types.Constant(2.0)                        images * 2.0
    labels * types.Constant(2, dtype=types.INT64)       labels * ndd.tensor(2, dtype=ndd.int64)
    types.Constant(15).float32() - labels               15.0 - labels
    images * types.Constant(np.float32([1.25, 0.75]))   images * [1.25, 0.75]
    fn.rotate(images, angle=types.Constant(30))         ndd.rotate(images, angle=30)
    fn.cat(x, fn.constant(idata=[1, 2], layout="X"))    ndd.cat(x, ndd.Batch.broadcast(
                                                            ndd.tensor([1, 2], dtype=ndd.int32, layout="X"), batch_size))

Why these are exact (each checked against a pipeline by golden-run cases):

- ndd types a Python ``float``/``int``/``bool`` operand of arithmetic as ``float32``/``int32``/
  ``bool``, the types a ScalarConstant of such a literal has; a Python list operand becomes a
  ``float32``/``int32``/``bool`` tensor, the type ``types.Constant`` gives that list. Both are
  placed on the other operand's device, as the pipeline does.
- A typed 0-d tensor operand promotes exactly as a typed scalar constant does (DALI's arithmetic
  gives ``&0 * $0:uint8`` and ``&0 * &1`` with a uint8 ``&1`` the same type), so other dtypes
  become ``ndd.tensor(value, dtype=...)``. ndd does not move a CPU tensor to the GPU for
  arithmetic ("Cannot mix GPU and CPU inputs"), so in a pipeline that uses the GPU those stay
  marked.
- Everywhere else a constant node becomes ``ndd.Batch.broadcast(<sample>, batch_size)``: a batch
  of ``batch_size`` equal samples, which an operator moves to its own device like the pipeline.

Values are computed here, not left to a conversion at run time: ``fn.constant`` stores ``fdata``
as float32 and converts to ``dtype`` with rounding and saturation, ndd/numpy convert differently,
so only values that the target type holds exactly are converted (others stay marked).

A numpy array held in a variable (``types.Constant(arr)``, ``types.Constant(arr + 100)``, as in
DALI's tensor_join example) is read the same way where ``arr = np.array(<literal values>)`` is the
file's only binding of the name, at its top, and ``types.Constant(...)`` values are its only uses:
then nothing changes the array, and the values written into the converted code are those the
pipeline copied when ``types.Constant`` was called. Arithmetic with a number is computed as numpy
computes it, for int64 and float64 arrays only (the default types of an array of literals, which
numpy 1 and 2 promote alike). Any other use of the name (``arr[0] = 7``, ``print(arr)``,
``f(arr)``) leaves the constant marked.
"""

from __future__ import annotations

import dataclasses
import math
import struct
from typing import Optional

import libcst as cst

from dali_migrate import cst_walk, templates
from dali_migrate import parents as parents_mod
from dali_migrate.cst_util import kwarg, one_line
from dali_migrate.dali_imports import MATH, TYPES
from dali_migrate.rules.base import OpCallRule

#: DALI type name -> (ndd dtype name, kind, bits); kind: b bool, i signed, u unsigned, f float
DALI_TYPES = {
    "BOOL": ("bool", "b", 8),
    "INT8": ("int8", "i", 8), "INT16": ("int16", "i", 16), "INT32": ("int32", "i", 32), "INT64": ("int64", "i", 64),
    "UINT8": ("uint8", "u", 8), "UINT16": ("uint16", "u", 16), "UINT32": ("uint32", "u", 32), "UINT64": ("uint64", "u", 64),
    "FLOAT16": ("float16", "f", 16), "FLOAT": ("float32", "f", 32), "FLOAT64": ("float64", "f", 64),
}
_NUMPY_TYPES = {
    "bool_": "BOOL", "int8": "INT8", "int16": "INT16", "int32": "INT32", "int64": "INT64",
    "uint8": "UINT8", "uint16": "UINT16", "uint32": "UINT32", "uint64": "UINT64",
    "float16": "FLOAT16", "float32": "FLOAT", "float64": "FLOAT64",
}
# The type ndd gives a Python literal of each kind, which is also the type types.Constant gives it.
_LITERAL_TYPE = {bool: "BOOL", int: "INT32", float: "FLOAT"}
# Dropped: they change nothing in dynamic mode (batch_size: added by the batch-size rule).
_IGNORED = {"preserve", "bytes_per_sample_hint", "batch_size"}
# In arithmetic, a value broadcast to more elements than this is no Python list (see _form).
_MAX_LITERAL = 64


class _Block(Exception):
    """The constant cannot be converted exactly; the message says why."""


@dataclasses.dataclass
class _Node:
    """A constant node: every sample is ``values`` (flat, already of the target kind) in ``shape``."""

    values: list
    shape: tuple
    dtype: str
    layout: Optional[str] = None
    device: Optional[str] = None
    broadcast: bool = False  # one value repeated to fill the shape
    literal_typed: bool = False  # ndd gives a Python list of these values this very dtype


@dataclasses.dataclass
class _Scalar:
    """A ScalarConstant: ``value`` is its ``.value`` (a Python bool/int/float)."""

    value: object
    dtype: str
    literal_typed: bool


# -- reading the call ------------------------------------------------------------------------


def _literal(expr: cst.BaseExpression):
    """A Python number/bool or a (nested) list of them, from literal source; else _Block."""
    if isinstance(expr, cst.Integer):
        return expr.evaluated_value
    if isinstance(expr, cst.Float):
        return expr.evaluated_value
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        inner = _literal(expr.expression)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner if isinstance(expr.operator, cst.Minus) else inner
    if isinstance(expr, (cst.List, cst.Tuple)):
        if any(isinstance(e, cst.StarredElement) for e in expr.elements):
            raise _Block("a starred value")
        return [_literal(e.value) for e in expr.elements]
    raise _Block("its value is not a literal")


def _flat(value) -> tuple:
    """(flat values, shape) of a rectangular nested list."""
    if not isinstance(value, list):
        return [value], ()
    if not value:
        return [], (0,)
    parts = [_flat(v) for v in value]
    shapes = {p[1] for p in parts}
    if len(shapes) != 1:
        raise _Block("a ragged nested list")
    return [x for p in parts for x in p[0]], (len(value), *shapes.pop())


def _dali_type(expr, names) -> str:
    q = names.qualify(expr) or ""
    for prefix in (TYPES + ".DALIDataType.", TYPES + "."):
        if q.startswith(prefix) and q[len(prefix):] in DALI_TYPES:
            return q[len(prefix):]
    raise _Block("its dtype is not a literal types.<TYPE>")


def _shape(expr) -> tuple:
    value = _literal(expr)
    if isinstance(value, list):
        if not all(type(v) is int and v >= 0 for v in value):
            raise _Block("shape= is not a list of sizes")
        return tuple(value)
    if type(value) is int and value >= 0:
        return (value,)
    raise _Block("shape= is not a list of sizes")


def _string(expr, what: str) -> str:
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value
    raise _Block(f"{what}= is not a string literal")


def _numpy_names(module) -> set:
    found = set()
    for stmt in getattr(module, "body", ()):
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if isinstance(alias.name, cst.Name) and alias.name.value == "numpy":
                            found.add(alias.asname.name.value if alias.asname else "numpy")
    return found


def _numpy_value(expr, ctx):
    """``np.float32([...])`` / ``np.array([...], dtype=np.X)``: (value, numpy type name, is_array)."""
    if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and isinstance(expr.func.value, cst.Name)):
        return None
    if expr.func.value.value not in _numpy_names(ctx.module):
        return None
    attr = expr.func.attr.value
    pos = [a for a in expr.args if a.keyword is None]
    if len(pos) != 1 or any(a.star for a in expr.args):
        raise _Block("a numpy call this rule does not read")
    value = _literal(pos[0].value)
    if attr in _NUMPY_TYPES and len(expr.args) == 1:
        return value, _NUMPY_TYPES[attr], isinstance(value, list)
    if attr in ("array", "asarray"):
        dtype = kwarg(expr, "dtype")
        if len(expr.args) != (2 if dtype is not None else 1):
            raise _Block("a numpy call this rule does not read")
        if dtype is None:
            flat = _flat(value)[0]
            kind = "BOOL" if all(type(v) is bool for v in flat) else "FLOAT64" if any(type(v) is float for v in flat) else "INT64"
        elif (
            isinstance(dtype.value, cst.Attribute)
            and isinstance(dtype.value.value, cst.Name)
            and dtype.value.value.value == expr.func.value.value
            and dtype.value.attr.value in _NUMPY_TYPES
        ):
            kind = _NUMPY_TYPES[dtype.value.attr.value]
        else:
            raise _Block("the numpy array's dtype is not a literal np.<type>")
        if not isinstance(value, list):
            raise _Block("a 0-d numpy array")
        return value, kind, True
    raise _Block("a numpy call this rule does not read")


# numpy's result for ``array <op> number`` where the array is int64 or float64: the two types
# numpy gives an array of literal values by default, and the two for which numpy 1 and 2 type the
# result alike (a narrower array's result type depends on the number and on numpy's version).
_FOLDS = {cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b, cst.Multiply: lambda a, b: a * b}
_INT64 = (-(2**63), 2**63 - 1)
# The converted code holds a named array's values written out, once per types.Constant(...).
_MAX_NAMED = 1024
_BY_HAND = (
    "convert by hand: types.Constant(<array>) copies the array when it is called (float64 as float32, "
    "int64 as int32) and is a batch of that sample: ndd.Batch.broadcast(ndd.tensor(<copy>), batch_size)"
)


def _number(expr):
    """An int or float literal (not a bool), or None."""
    try:
        value = _literal(expr)
    except _Block:
        return None
    return value if type(value) in (int, float) else None


def _named_array(expr, ctx):
    """``arr``, ``arr + 100``, ``2.0 * arr``...: (value, numpy type, True) as numpy computes it, where
    ``arr`` is a numpy array of literal values that the file binds once at its top and uses only in
    ``types.Constant(...)`` (the value the pipeline took, whenever it took it); None where ``expr``
    is not such an expression of a name; _Block where it is but cannot be read exactly."""
    if isinstance(expr, cst.Name) and expr.value not in ("True", "False", "None"):
        return _module_array(expr.value, ctx)
    if not (isinstance(expr, cst.BinaryOperation) and type(expr.operator) in _FOLDS):
        return None
    array, number, left = _named_array(expr.left, ctx), _number(expr.right), True
    if array is None:
        array, number, left = _named_array(expr.right, ctx), _number(expr.left), False
    if array is None:
        return None
    if number is None:
        raise _Block(f"`{one_line(expr)}`: only arithmetic of an array with a number literal is read; {_BY_HAND}")
    values, np_type, _ = array
    if np_type not in ("INT64", "FLOAT64"):
        raise _Block(f"arithmetic on an array of {np_type}, whose result type differs between numpy versions")
    result = "FLOAT64" if np_type == "FLOAT64" or isinstance(number, float) else "INT64"
    if result == "FLOAT64" and isinstance(number, int) and abs(number) > 2**53:
        raise _Block(f"{number} has no exact float64")
    fold = _FOLDS[type(expr.operator)]

    def apply(v):
        if isinstance(v, list):
            return [apply(x) for x in v]
        a, b = (float(v), float(number)) if result == "FLOAT64" else (v, number)
        out = fold(a, b) if left else fold(b, a)
        if result == "INT64" and not _INT64[0] <= out <= _INT64[1]:
            raise _Block(f"`{one_line(expr)}` overflows int64")
        return out

    return apply(values), result, True


def _constant_values(module, names) -> set:
    """ids of the Name nodes in the values of ``types.Constant(...)`` calls that _named_array reads
    (a name, or arithmetic of names and number literals): uses that cannot change an array."""
    found = set()

    def pure(expr, seen: list) -> bool:
        if isinstance(expr, cst.Name):
            seen.append(id(expr))
            return True
        if isinstance(expr, cst.BinaryOperation) and type(expr.operator) in _FOLDS:
            return all(_number(side) is not None or pure(side, seen) for side in (expr.left, expr.right))
        return False

    for node in cst_walk.walk(module):
        if isinstance(node, cst.Call) and names.qualify(node.func) == TYPES + ".Constant":
            try:
                value = _args(node, ("value",)).get("value")
            except _Block:
                continue
            seen: list = []
            if value is not None and pure(value, seen):
                found.update(seen)
    return found


_BINDS = (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.Param, cst.For, cst.AsName, cst.NamedExpr,
          cst.CompFor, cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.NameItem)


def _module_array(name: str, ctx):
    module = ctx.module
    if module is None:
        return None
    why = f"its value `{name}` is not"
    bindings, strays = _module_uses(module, ctx.names).get(name, ((), ()))
    if any(binds for binds, _ in strays) or len(bindings) > 1 or not bindings:
        where = next((shown for binds, shown in strays if binds), None)
        at = f" (`{one_line(where)}`)" if where is not None else ""
        raise _Block(f"{why} bound once, at the top of the file, to a numpy array of literal values{at}; {_BY_HAND}")
    if strays:
        raise _Block(
            f"`{name}` is used elsewhere in the file (`{one_line(strays[0][1])}`), which may change the array "
            f"before the pipeline takes its value; {_BY_HAND}"
        )
    binding = bindings[0]
    try:
        numpy = _numpy_value(binding.value, ctx)
    except _Block:
        numpy = None
    if numpy is None or not numpy[2]:
        raise _Block(f"{why} a numpy array of literal values (`{name} = {one_line(binding.value)}`); {_BY_HAND}")
    if len(_flat(numpy[0])[0]) > _MAX_NAMED:
        raise _Block(f"`{name}` holds more than {_MAX_NAMED} values, too many to write into the converted code; {_BY_HAND}")
    return numpy


def _module_uses(module, names) -> dict:
    """name -> (its bindings ``name = ...`` alone on a top-level line, [(whether it binds the name,
    what a marker shows)] for its other uses), each in the order of one walk of the module.

    Worked out for every name at once and kept for the module (the node and ``names`` are kept with
    the answer, so their ids stay theirs): the blocker and the rewrite ask for each
    ``types.Constant(<name>)``, and each question would otherwise walk the whole file twice."""
    hit = _uses_cache.get(id(module))
    if hit is not None and hit[0] is module and hit[1] is names:
        return hit[2]
    targets = {
        id(stmt.body[0].targets[0]): stmt.body[0]
        for stmt in module.body
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)
        and len(stmt.body[0].targets) == 1
    }
    allowed = _constant_values(module, names)
    found: dict = {}
    stack = [(module, None, None)]
    while stack:
        node, parent, grand = stack.pop()
        if type(node) is cst.Name:  # (a Name has no children the walk enters)
            if (isinstance(parent, cst.Attribute) and parent.attr is node) or (isinstance(parent, cst.Arg) and parent.keyword is node):
                continue
            if id(node) in allowed:
                continue
            bindings, strays = found.setdefault(node.value, ([], []))
            if id(parent) in targets and parent.target is node:
                bindings.append(targets[id(parent)])
            else:
                # what to show: the call an argument belongs to, the binding construct, else the parent
                shown = grand if isinstance(parent, cst.Arg) and grand is not None else parent
                strays.append((isinstance(parent, _BINDS), shown if shown is not None else node))
            continue
        stack.extend((child, node, parent) for child in cst_walk.children(node))
    if len(_uses_cache) >= 4:
        _uses_cache.clear()  # a file's questions come together: older files are not asked about again
    _uses_cache[id(module)] = (module, names, found)
    return found


_uses_cache: dict = {}  # id(module) -> (module, names, _module_uses's answer)




def _f32(v: float) -> float:
    return struct.unpack("f", struct.pack("f", v))[0]


def _numpy_scalar(value, np_type: str):
    """``np.<type>(value).item()``."""
    _, kind, bits = DALI_TYPES[np_type]
    if kind == "f":
        if bits == 64:
            return float(value)
        fmt = "e" if bits == 16 else "f"
        try:
            return struct.unpack(fmt, struct.pack(fmt, float(value)))[0]
        except OverflowError:
            raise _Block(f"{value!r} does not fit {np_type}") from None
    if isinstance(value, float) and kind != "b":
        raise _Block("a numpy integer made from a float")
    return _exact(value, np_type) if kind != "b" else bool(value)


def _exact(v, dtype: str):
    """``v`` as a value of ``dtype``, when the type holds it exactly; else _Block."""
    _, kind, bits = DALI_TYPES[dtype]
    if kind == "b":
        if v in (0, 1):
            return bool(v)
        raise _Block(f"{v!r} is not 0 or 1, which {dtype} would hold as True/False")
    if kind in "iu":
        if isinstance(v, float) and not v.is_integer():
            raise _Block(f"{v!r} is not a whole number, which {dtype} would round")
        v = int(v)
        lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if kind == "i" else (0, 2**bits - 1)
        if not lo <= v <= hi:
            raise _Block(f"{v} does not fit {dtype}")
        return v
    v = float(v)
    if not math.isfinite(v):
        raise _Block(f"{v!r} has no literal")
    fmt = {16: "e", 32: "f", 64: "d"}[bits]
    try:
        held = struct.unpack(fmt, struct.pack(fmt, v))[0]
    except OverflowError:
        raise _Block(f"{v!r} does not fit {dtype}") from None
    if held != v:
        raise _Block(f"{v!r} is not exactly a {dtype}, so DALI and numpy may round it differently")
    return v


def _node(values: list, shape: Optional[tuple], dtype: Optional[str], float_data: bool, layout, device) -> _Node:
    """What ``fn.constant(fdata=values | idata=values, shape=, dtype=, layout=, device=)`` gives."""
    if dtype is None:
        dtype = "FLOAT" if float_data else "INT32"
    if dtype == "FLOAT64":
        raise _Block("fn.constant does not support FLOAT64 (the pipeline fails)")
    if float_data:
        values = [_f32(float(v)) for v in values]  # fdata is a float32 argument
    else:
        values = [int(v) for v in values]
    if not values:
        raise _Block("an empty constant")
    if shape is None:
        shape = (len(values),)
    volume = math.prod(shape)
    broadcast = len(values) == 1 and volume != 1
    if not broadcast and len(values) != volume:
        raise _Block(f"{len(values)} values do not fill the shape {list(shape)} (the pipeline fails)")
    if volume == 0:
        raise _Block("an empty shape")
    if layout is not None and layout != "" and len(layout) != len(shape):
        raise _Block(f'layout "{layout}" does not match the {len(shape)}-d shape (the pipeline fails)')
    return _Node(values=[_exact(v, dtype) for v in values], shape=shape, dtype=dtype, layout=layout or None,
                 device=device, broadcast=broadcast)


def _args(call: cst.Call, order: tuple) -> dict:
    found = {}
    pos = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args):
        raise _Block("*args/**kwargs")
    if len(pos) > len(order):
        raise _Block("too many positional arguments")
    for name, arg in zip(order, pos):
        found[name] = arg.value
    for arg in call.args:
        if arg.keyword is not None:
            key = arg.keyword.value
            if key in found:
                raise _Block(f"{key}= given twice")
            found[key] = arg.value
    return found


def _is_none(expr) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def read_fn_constant(call: cst.Call, ctx) -> _Node:
    args = {k: v for k, v in _args(call, ()).items() if k not in _IGNORED}
    unknown = set(args) - {"fdata", "idata", "shape", "dtype", "layout", "device"}
    if unknown:
        raise _Block(f"{', '.join(sorted(unknown))}= not converted")
    if ("fdata" in args) == ("idata" in args):
        raise _Block("give exactly one of fdata= and idata=")
    float_data = "fdata" in args
    value = _literal(args["fdata" if float_data else "idata"])
    values = value if isinstance(value, list) else [value]
    if any(isinstance(v, list) for v in values):
        raise _Block("a nested list (fn.constant takes a flat one)")
    if not float_data and any(isinstance(v, float) for v in values):
        raise _Block("idata= holds floats")
    shape = _shape(args["shape"]) if "shape" in args else None
    dtype = _dali_type(args["dtype"], ctx.names) if "dtype" in args else None
    layout = _string(args["layout"], "layout") if "layout" in args else None
    device = _string(args["device"], "device") if "device" in args else None
    if device not in (None, "cpu", "gpu"):
        raise _Block(f'device="{device}"')
    node = _node(values, shape, dtype, float_data, layout, device)
    node.literal_typed = dtype in (None, "FLOAT" if float_data else "INT32")
    return node


def read_types_constant(call: cst.Call, ctx):
    """What ``types.Constant(...)`` makes: a _Scalar or a _Node (DALI 2.4's types.Constant)."""
    args = _args(call, ("value", "dtype", "shape", "layout", "device"))
    args = {k: v for k, v in args.items() if not _is_none(v) or k == "value"}
    unknown = set(args) - {"value", "dtype", "shape", "layout", "device"}
    if unknown:
        raise _Block(f"{', '.join(sorted(unknown))}= not converted")
    if "value" not in args:
        raise _Block("no value")
    dtype = _dali_type(args["dtype"], ctx.names) if "dtype" in args else None
    shape = _shape(args["shape"]) if "shape" in args else None
    layout = _string(args["layout"], "layout") if "layout" in args else None
    device = _string(args["device"], "device") if "device" in args else None
    if device not in (None, "cpu", "gpu"):
        raise _Block(f'device="{device}"')
    numpy = _numpy_value(args["value"], ctx)
    if numpy is None:
        numpy = _named_array(args["value"], ctx)
    if numpy is not None:
        value, np_type, is_array = numpy
    else:
        value, np_type, is_array = _literal(args["value"]), None, False
    scalar_shape = shape in (None, (), (1,))  # DALI's _is_scalar_shape: legacy pseudo-scalars
    if device is None and not is_array and not isinstance(value, list) and scalar_shape and layout is None:
        if np_type is not None:  # a numpy scalar: its own type, its value read through .item()
            value = _numpy_scalar(value, np_type)
        if dtype is None:
            dtype = np_type or _LITERAL_TYPE[type(value)]
        kind = DALI_TYPES[dtype][1]
        coerced = bool(value) if kind == "b" else int(value) if kind in "iu" else float(value)
        return _Scalar(value=coerced, dtype=dtype, literal_typed=dtype == _LITERAL_TYPE[type(coerced)])
    if is_array:
        flat, natural = _flat(value)
        actual = {"FLOAT64": "FLOAT", "INT64": "INT32", "UINT64": "UINT32"}.get(np_type, np_type)
        if actual != np_type and dtype is None and np_type != "FLOAT64":
            for v in flat:  # DALI narrows 64-bit integer arrays, raising OverflowError where a value does not fit
                _exact(v, actual)
        if shape is not None and math.prod(shape) != len(flat):
            raise _Block("the array does not fit shape= (the pipeline fails)")
        shape = natural if shape is None else shape
        float_data = DALI_TYPES[actual][1] == "f"
        values = [float(v) for v in flat] if float_data else [int(v) for v in flat]
        node = _node(values, shape, dtype or actual, float_data, layout, device)
        node.literal_typed = dtype in (None, actual) and actual in ("FLOAT", "INT32", "BOOL")
        return node
    values = value if isinstance(value, list) else [value]
    if any(isinstance(v, list) for v in values):
        raise _Block("a nested list (types.Constant takes a flat one; use a numpy array)")
    if shape is None:
        shape = (len(values),) if isinstance(value, list) else ()
    actual = "FLOAT" if any(type(v) is float for v in values) or not values else "INT32" if any(type(v) is int for v in values) else "BOOL"
    node = _node(values, shape, dtype or actual, actual == "FLOAT", layout, device)
    node.literal_typed = dtype in (None, actual)
    return node


def _read(call: cst.Call, ctx):
    q = ctx.names.qualify(call.func)
    if q == TYPES + ".Constant":
        return read_types_constant(call, ctx)
    return read_fn_constant(call, ctx)


#: ScalarConstant's methods that give it another type: ``types.Constant(15).float32()`` is
#: ``ScalarConstant(15.0, FLOAT)`` (DALI 2.4's types.py)
_TYPE_METHODS = {
    "bool": "BOOL", "int8": "INT8", "int16": "INT16", "int32": "INT32", "int64": "INT64",
    "uint8": "UINT8", "uint16": "UINT16", "uint32": "UINT32", "uint64": "UINT64",
    "float16": "FLOAT16", "float32": "FLOAT", "float64": "FLOAT64",
}


def _cast(call: cst.Call, index) -> Optional[tuple]:
    """(the call of the method, its DALI type) where ``call`` is the receiver of one of
    ``_TYPE_METHODS`` called without arguments (``types.Constant(15).float32()``); else None."""
    attr = index.of(call)
    if not (isinstance(attr, cst.Attribute) and attr.value is call and attr.attr.value in _TYPE_METHODS):
        return None
    outer = index.of(attr)
    if isinstance(outer, cst.Call) and outer.func is attr and not outer.args:
        return outer, _TYPE_METHODS[attr.attr.value]
    return None


def _retyped(const, dtype: str, method: str) -> _Scalar:
    """What ``ScalarConstant.<method>()`` gives: the value converted to the type's kind."""
    if not isinstance(const, _Scalar):
        raise _Block(f"`.{method}()` of a constant node (only a scalar types.Constant has it)")
    kind = DALI_TYPES[dtype][1]
    value = const.value
    coerced = bool(value) if kind == "b" else int(value) if kind in "iu" else float(value)
    return _Scalar(value=coerced, dtype=dtype, literal_typed=dtype == _LITERAL_TYPE[type(coerced)])


# -- where the value goes --------------------------------------------------------------------


class _Where:
    """Where an expression's value goes in the pipeline function."""

    def __init__(self, kind: str, partners: tuple = (), name: Optional[str] = None):
        self.kind = kind  # arith, unary, input, kwarg, output, bind, other
        self.partners = partners
        self.name = name


def _where(node, index, info, names) -> _Where:
    parent = index.of(node)
    if isinstance(parent, cst.BinaryOperation):
        return _Where("arith", (parent.right if parent.left is node else parent.left,))
    if isinstance(parent, cst.Comparison) and len(parent.comparisons) == 1:
        return _Where("arith", (parent.comparisons[0].comparator,))
    if isinstance(parent, cst.ComparisonTarget):
        comparison = index.of(parent)
        if len(comparison.comparisons) == 1:
            return _Where("arith", (comparison.left,))
        return _Where("other")
    if isinstance(parent, cst.UnaryOperation):
        return _Where("unary")
    if isinstance(parent, cst.Arg) and parent.value is node and not parent.star:
        call = index.of(parent)
        op = names.fn_op(call.func)
        if op is not None and not op.startswith("readers.") and op not in ("constant", "external_source"):
            return _Where("input" if parent.keyword is None else "kwarg")
        q = names.qualify(call.func) or ""
        if q.startswith(MATH + ".") and parent.keyword is None:
            return _Where("arith", tuple(a.value for a in call.args if a is not parent))
        return _Where("other")
    if isinstance(parent, cst.Element) and isinstance(index.of(parent), (cst.Tuple, cst.List)):
        if isinstance(index.of(index.of(parent)), cst.Return):
            return _Where("output")
        return _Where("other")
    if isinstance(parent, cst.Return):
        return _Where("output")
    if (
        isinstance(parent, cst.Assign)
        and len(parent.targets) == 1
        and isinstance(parent.targets[0].target, cst.Name)
        and any(s.body and s.body[0] is parent for s in info.statements if isinstance(s, cst.SimpleStatementLine))
    ):
        return _Where("bind", name=parent.targets[0].target.value)
    return _Where("other")


def _graph_names(info, names) -> set:
    """Names that hold DataNodes: bound by per-iteration statements, constants excepted (a name
    holding a ScalarConstant or a converted Python list is no Batch).

    Kept on the pipeline (asked for each constant, by the blocker and again by the rewrite) for
    as long as its statements are these very nodes: the conditionals rule may replace them in
    between. The set is only read."""
    key = (info.reader_indices, frozenset(info.setup))
    kept = info.__dict__.get("_constant_graph_names")
    if kept is not None and kept[1] == key and kept[2] is names and len(kept[0]) == len(info.statements) and all(
        a is b for a, b in zip(kept[0], info.statements)
    ):
        return kept[3]
    found = _find_graph_names(info, names)
    info.__dict__["_constant_graph_names"] = (list(info.statements), key, names, found)
    return found


def _find_graph_names(info, names) -> set:
    from dali_migrate.pipeline_analysis import _assigned_names

    found: set = set()
    for i, stmt in enumerate(info.statements):
        if i not in info.setup or i in info.reader_indices:
            if not (
                isinstance(stmt, cst.SimpleStatementLine)
                and isinstance(stmt.body[0], cst.Assign)
                and isinstance(stmt.body[0].value, cst.Call)
                and _is_constant_call(stmt.body[0].value, names)
            ):
                found |= _assigned_names(stmt)
    return found


def _is_constant_call(expr, names) -> bool:
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _TYPE_METHODS and not expr.args:
        expr = expr.func.value  # types.Constant(15).float32()
    return isinstance(expr, cst.Call) and (
        names.fn_op(expr.func) == "constant" or names.qualify(expr.func) == TYPES + ".Constant"
    )


def _is_dali_value(expr, graph: set, names) -> bool:
    """Is ``expr`` a DataNode in the pipeline (a Batch in the converted code)?"""
    if isinstance(expr, cst.Name):
        return expr.value in graph
    if isinstance(expr, cst.Call):
        if names.fn_op(expr.func) not in (None, "constant"):
            return True
        q = names.qualify(expr.func) or ""
        if q.startswith(MATH + "."):
            return any(_is_dali_value(a.value, graph, names) for a in expr.args)
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("gpu", "cpu") and not expr.args:
            return _is_dali_value(expr.func.value, graph, names)
        return False
    if isinstance(expr, cst.BinaryOperation):
        return _is_dali_value(expr.left, graph, names) or _is_dali_value(expr.right, graph, names)
    if isinstance(expr, cst.UnaryOperation):
        return _is_dali_value(expr.expression, graph, names)
    if isinstance(expr, cst.Subscript):
        return _is_dali_value(expr.value, graph, names)
    return False


def _uses(name: str, binding, index, info) -> list:
    """The places that read ``name`` after ``binding`` (its only assignment); _Block otherwise."""
    from dali_migrate.pipeline_analysis import _assigned_names

    bound_by = [s for s in info.statements if name in _assigned_names(s)]
    if len(bound_by) != 1:
        raise _Block(f"`{name}` is assigned more than once")
    found = []
    start = index.span[id(binding)][0]
    for node in index.names(name):
        parent = index.of(node)
        if node is binding or (isinstance(parent, cst.Attribute) and parent.attr is node):
            continue
        if isinstance(parent, (cst.Arg, cst.Param)) and (getattr(parent, "keyword", None) is node or getattr(parent, "name", None) is node):
            continue
        if index.scope(node) is not info.func:
            raise _Block(f"`{name}` is used in a nested function")
        if index.span[id(node)][0] < start:
            raise _Block(f"`{name}` is read before it holds the constant")
        found.append(node)
    return found


# -- what to write ---------------------------------------------------------------------------

_GPU = (
    "dynamic mode does not move a CPU constant to the GPU for arithmetic (\"Cannot mix GPU and CPU inputs\") "
    "and this pipeline uses the GPU: write ndd.tensor(..., device=<the other operand's device>) by hand"
)


def _form(const, where: _Where, info, graph, names) -> str:
    """literal | list | tensor | batch | value, for one place the constant's value goes."""
    gpu = info.uses_gpu
    if where.kind == "arith":
        with_data = any(_is_dali_value(p, graph, names) for p in where.partners)
        if isinstance(const, _Scalar):
            if not with_data:
                raise _Block("a ScalarConstant in arithmetic needs a DALI operand beside it (the pipeline fails)")
            if const.literal_typed:
                return "literal"
            if gpu:
                raise _Block(_GPU)
            return "tensor"
        if not with_data:
            return "batch"
        # (a value the user broadcast to a large shape would make a long list: a tensor instead)
        if const.literal_typed and const.layout is None and not (const.broadcast and math.prod(const.shape) > _MAX_LITERAL):
            return "list"
        if gpu:
            raise _Block(_GPU)
        return "tensor"
    if where.kind == "unary":
        if isinstance(const, _Scalar):
            raise _Block("a ScalarConstant has no unary operators (the pipeline fails)")
        return "batch"
    if where.kind == "kwarg":
        return "value" if isinstance(const, _Scalar) else "batch"
    if where.kind in ("input", "output"):
        return "batch"
    raise _Block("it is used where this rule cannot follow its value; convert by hand")


def _plan(call: cst.Call, ctx):
    """(form, constant, is the base of **, the node the value replaces) for this call; _Block
    when it cannot be converted exactly."""
    info = ctx.pipeline
    const = _read(call, ctx)
    index = parents_mod.build(info.func)
    cast = _cast(call, index)
    node = call
    if cast is not None:
        node = cast[0]
        const = _retyped(const, cast[1], node.func.attr.value)
    graph = _graph_names(info, ctx.names)
    where = _where(node, index, info, ctx.names)
    parent = index.of(node)
    power_base = isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Power) and parent.left is node
    if where.kind != "bind":
        form = _form(const, where, info, graph, ctx.names)
    else:
        uses = []
        for use in _uses(where.name, index.of(node).targets[0].target, index, info):
            use_where = _where(use, index, info, ctx.names)
            uses.append((use_where.kind, _form(const, use_where, info, graph, ctx.names)))
        form = _bound_form(const, uses, where.name, info.uses_gpu)
    if form == "batch" and any(op.fn_name == "external_source" for _, op in info.op_calls):
        raise _Block("the batch size follows the external source's batches here; build the constant batch by hand")
    return form, const, power_base, node


def _bound_form(const, uses: list, name: str, gpu: bool) -> str:
    """One expression for a name whose uses are ``uses``: (kind, form) pairs, as ``_form`` gives."""
    kinds = {kind for kind, _ in uses}
    forms = {form for _, form in uses}
    if not uses:
        return "batch" if isinstance(const, _Node) else "literal" if const.literal_typed else "tensor"
    if isinstance(const, _Scalar):
        if "kwarg" in kinds and kinds != {"kwarg"} and not (const.literal_typed and kinds == {"kwarg", "arith"}):
            raise _Block(f"`{name}` is an operator argument (a plain value there) and also used as data")
        if kinds == {"kwarg"}:
            return "value"
        if kinds <= {"arith", "kwarg"}:
            # A Python scalar is both what an argument gets and the typed constant in arithmetic.
            return "literal" if const.literal_typed else "tensor"
        if "arith" in kinds and gpu:
            raise _Block(_GPU)
        return "batch"  # in arithmetic a 0-d batch promotes as the typed constant does
    if forms == {"list"}:
        return "list"
    if ("list" in forms or "tensor" in forms) and gpu:
        raise _Block(_GPU)  # one expression for both: a CPU batch, which GPU arithmetic rejects
    if forms <= {"list", "tensor"}:
        return "tensor"
    return "batch"  # a Batch operand promotes like the tensor (see the module docstring)


def _py(v) -> str:
    return repr(v)


def _nested(values: list, shape: tuple) -> str:
    if not shape:
        return _py(values[0])
    step = len(values) // shape[0] if shape[0] else 0
    return "[" + ", ".join(_nested(values[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])) + "]"


def _sample(node: _Node, nd: str) -> str:
    dtype = f"{nd}.{DALI_TYPES[node.dtype][0]}"
    layout = f', layout="{node.layout}"' if node.layout else ""
    if node.broadcast:  # one value filling a shape, as written
        return f"{nd}.full({nd}.tensor({_py(node.values[0])}, dtype={dtype}), shape={list(node.shape)}{layout})"
    return f"{nd}.tensor({_nested(node.values, node.shape)}, dtype={dtype}{layout})"


def _as_node(const) -> _Node:
    if isinstance(const, _Node):
        return const
    # A ScalarConstant becomes a 0-d constant node of its type (ops._instantiate_constant_node).
    return _node([const.value], (), const.dtype, isinstance(const.value, float), None, None)


def _expression(form: str, const, ctx) -> str:
    nd = ctx.ndd
    if form in ("literal", "value"):
        if isinstance(const, _Scalar):
            return _py(const.value)
        return _nested(const.values, ())
    if form == "list":
        values = const.values * math.prod(const.shape) if const.broadcast else const.values
        return _nested(values, const.shape)
    if form == "tensor" and isinstance(const, _Scalar):
        return f"{nd}.tensor({_py(const.value)}, dtype={nd}.{DALI_TYPES[const.dtype][0]})"
    node = _as_node(const)
    if form == "tensor":
        return _sample(node, nd)
    device = ', device="gpu"' if node.device == "gpu" else ""
    return f"{nd}.Batch.broadcast({_sample(node, nd)}, {ctx.batch_size}{device})"


def _scalar_checks(const, form):
    if not isinstance(const, _Scalar) or form not in ("literal", "tensor"):
        return
    # In arithmetic a ScalarConstant's integer must fit its type, its float is sent as float32.
    _, kind, bits = DALI_TYPES[const.dtype]
    if kind == "f" and bits == 16:
        raise _Block("a FLOAT16 scalar in arithmetic (DALI's CPU arithmetic rejects float16)")
    if kind == "f" and _f32(const.value) != const.value and bits != 32:
        raise _Block(f"{const.value!r} goes to DALI's arithmetic as float32, not as {const.dtype}")
    if kind in "iu":
        _exact(const.value, const.dtype)


def _what(call, ctx) -> str:
    return "types.Constant" if ctx.names.qualify(call.func) == TYPES + ".Constant" else "fn.constant"


def _converted(call: cst.Call, ctx) -> tuple:
    """(the new expression, the node it replaces: ``call``, or the call of a type method on it)."""
    form, const, power_base, node = _plan(call, ctx)
    _scalar_checks(const, form)
    text = _expression(form, const, ctx)
    if power_base and text.startswith("-"):
        text = f"({text})"  # -2.0 ** x is -(2.0 ** x)
    new = templates.expression(text)  # the blocker and the rewrite make the same text
    return new.with_changes(lpar=[*node.lpar, *new.lpar], rpar=[*new.rpar, *node.rpar]), node


def _blocker(call, op, ctx):
    try:
        _converted(call, ctx)
    except _Block as why:
        return f"{_what(call, ctx)}(...) not converted: {why}"
    return None


def _rewrite(call, op, ctx):
    original = ctx.call_as_written if ctx.call_as_written is not None else call
    try:
        new, node = _converted(original, ctx)
        if node is not original:
            # `types.Constant(15).float32()`: the whole call gets the typed value
            ctx.outer_replace[id(node)] = new
            return call
        return new
    except _Block as why:
        # The blocker accepted this call; failing now means its place in the pipeline changed
        # between the analysis and the rewrite. Leaving fn.constant in converted code would break
        # it, so the file is not converted (an error, reported by the runner).
        raise RuntimeError(f"rules/constant.py: {_what(original, ctx)}(...) at an unexpected place: {why}") from None


RULE = OpCallRule(
    id="constant",
    summary="fn.constant / types.Constant become the same values: a Python literal or list in arithmetic, "
    "ndd.tensor(..., dtype=...) for other types, ndd.Batch.broadcast(<sample>, batch_size) elsewhere",
    order=95,
    applies=lambda op: op.fn_name == "constant",
    blocker=_blocker,
    rewrite=_rewrite,
)
