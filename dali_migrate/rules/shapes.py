"""``fn.shapes(x, dtype=...)`` -> ``ndd.as_batch(x.shape, dtype=...)``.

In a pipeline ``fn.shapes`` gives, per sample, the sample's shape as a 1-D tensor (``int64``
unless ``dtype=`` says otherwise; a 0-d sample gives an empty one) with no layout, on the input's
device (a GPU input runs the GPU operator: its output is on the GPU, seen on an H100 with DALI
2.4). A Batch's ``.shape`` is the list of its samples' shapes as tuples, read from the batch's
metadata; ``ndd.as_batch`` makes the same 1-D samples of it, converted to the requested type. In
a pipeline that uses the GPU the input may be there, so the result goes to the input's device
(``device=x.device``); that needs the input as a name, not an expression evaluated twice.

With ``device=`` written (``ops.Shapes(device="gpu")``, ``device=self.device``), the operator
runs there, and its input must be there too (a GPU operator given CPU data, or a CPU one given
GPU data, fails the pipeline): the output is on the device ``device=`` names, and ``as_batch``
puts it there (``device=`` kept as written).

Left to a person: a ``dtype`` that ``fn.shapes`` rejects (the pipeline fails; dynamic mode would
not), a literal device other than "cpu" and "gpu", more than one input, and in a pipeline that
uses the GPU, without ``device=``, an input that is not a name.
"""

from __future__ import annotations

import libcst as cst

from dali_migrate.cst_util import code, positional
from dali_migrate.dali_imports import TYPES
from dali_migrate.rules.base import OpCallRule

# What fn.shapes accepts as dtype (DALI 2.4, operators/generic/shapes.h).
_ACCEPTED = {"INT32", "UINT32", "INT64", "UINT64", "FLOAT", "FLOAT64"}
_DROPPED = {"preserve", "bytes_per_sample_hint"}


def _dtype_arg(call: cst.Call):
    found = [a for a in call.args if a.keyword is not None and a.keyword.value in ("dtype", "type")]
    return found[0] if len(found) == 1 else None


def _device_arg(call: cst.Call):
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "device"), None)


def _blocker(call, op, ctx):
    if any(a.star for a in call.args) or len(positional(call)) != 1:
        return "fn.shapes not converted: it takes exactly one input, written out"
    keys = [a.keyword.value for a in call.args if a.keyword is not None]
    if len([k for k in keys if k in ("dtype", "type")]) > 1:
        return "fn.shapes not converted: both dtype= and type="
    other = set(keys) - {"dtype", "type", "device"} - _DROPPED
    if other:
        return f"fn.shapes not converted: {', '.join(sorted(other))}= is not converted"
    device = _device_arg(call)
    if isinstance(device, cst.SimpleString) and device.evaluated_value not in ("cpu", "gpu"):
        return f"fn.shapes not converted: device={code(device)}"
    if device is None and ctx.pipeline is not None and ctx.pipeline.uses_gpu and not isinstance(positional(call)[0].value, cst.Name):
        return ("fn.shapes not converted: its output is on its input's device, which may be the GPU here: "
                "assign the input to a name first")
    dtype = _dtype_arg(call)
    if dtype is not None:
        q = ctx.names.qualify(dtype.value) or ""
        name = q.rsplit(".", 1)[-1]
        if q.startswith(TYPES + ".") and name not in _ACCEPTED:
            return f"fn.shapes not converted: it does not accept dtype={code(dtype.value)} (the pipeline fails)"
    return None


def _rewrite(call, op, ctx):
    data = positional(call)[0].value
    if not isinstance(data, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not data.lpar:
        data = data.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    dtype = _dtype_arg(call)
    dtype_value = dtype.value if dtype is not None else ctx.ndd_attr("int64")
    eq = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
    args = [
        cst.Arg(cst.Attribute(value=data, attr=cst.Name("shape"))),
        cst.Arg(keyword=cst.Name("dtype"), value=dtype_value, equal=eq),
    ]
    device = _device_arg(call)
    if device is not None:
        args.append(cst.Arg(keyword=cst.Name("device"), value=device, equal=eq))
    elif ctx.pipeline is not None and ctx.pipeline.uses_gpu:
        args.append(cst.Arg(keyword=cst.Name("device"), value=cst.Attribute(value=data, attr=cst.Name("device")), equal=eq))
    return cst.Call(
        func=ctx.ndd_attr("as_batch"),
        args=args,
        lpar=call.lpar,
        rpar=call.rpar,
    )


RULE = OpCallRule(
    id="shapes",
    summary="fn.shapes(x) becomes ndd.as_batch(x.shape, dtype=ndd.int64) (dtype= and device= kept; device=x.device in a pipeline that uses the GPU)",
    order=95,
    applies=lambda op: op.fn_name == "shapes",
    blocker=_blocker,
    rewrite=_rewrite,
)
