"""CPU ``fn.python_function`` -> the same calls of the function, on NumPy arrays, in the loop.

A pipeline calls a CPU python_function (``nvidia/dali/ops/_operators/python_function.py``, DALI
2.4) once per sample with one NumPy array per input (``batch_processing=False``, the default),
or once per batch with one list of arrays per input (``batch_processing=True``); the function
returns an array (a tuple of them for ``num_outputs > 1``; per batch: a list per output), which
becomes the output sample with the layout from ``output_layouts`` (one string for every output,
or one per output). The converted code does the same, in the same order:

    images = fn.python_function(images, function=invert)
 -> images = ndd.as_batch([np.asarray(invert(np.asarray(sample)), order="C") for sample in images])

    a, b = fn.python_function(x, y, function=split, num_outputs=2, output_layouts="HWC")
 -> a, b = [ndd.as_batch([np.asarray(o, order="C") for o in out], layout="HWC")
            for out in zip(*[split(np.asarray(x_sample), np.asarray(y_sample)) for x_sample, y_sample in zip(x, y)])]

    out = fn.python_function(x, function=per_batch, batch_processing=True)
 -> out = ndd.as_batch([np.asarray(o, order="C") for o in per_batch([np.asarray(sample) for sample in x])])

Iterating a Batch gives its samples as Tensors and ``np.asarray`` views one as the array DALI
passes. ``np.asarray(..., order="C")`` makes a returned view contiguous (``image[:, ::-1]``,
``transpose``): the pipeline copies such a result, ``ndd.as_batch`` rejects strided data.

Left to a person: ``device="gpu"`` (the function gets CuPy arrays on DALI's stream),
``num_outputs=0`` (a function run for its side effects), a python_function without inputs, and a
``function=`` that is not a name or a lambda (it would be evaluated once per sample here).
"""

from __future__ import annotations

import libcst as cst

from dali_migrate.cst_util import code, fresh_name, kwarg, positional
from dali_migrate.rules.base import OpCallRule

_KNOWN = {"function", "num_outputs", "batch_processing", "output_layouts", "device", "preserve", "bytes_per_sample_hint"}


class _Block(Exception):
    pass


def _settings(call: cst.Call) -> dict:
    if any(a.star for a in call.args):
        raise _Block("*args/**kwargs")
    inputs = positional(call)
    if not inputs:
        raise _Block("a python_function without inputs (called once per sample of the pipeline's batch)")
    unknown = {a.keyword.value for a in call.args if a.keyword is not None} - _KNOWN
    if unknown:
        raise _Block(f"{', '.join(sorted(unknown))}= is not converted")
    function = kwarg(call, "function")
    if function is None:
        raise _Block("no function=")
    if not isinstance(function.value, (cst.Name, cst.Attribute, cst.Lambda)):
        raise _Block("function= is an expression: bind it to a name first (it runs once in a pipeline)")
    device = kwarg(call, "device")
    if device is not None and not (isinstance(device.value, cst.SimpleString) and device.value.evaluated_value == "cpu"):
        raise _Block("a GPU python_function gets CuPy arrays on DALI's stream: call the function on the batch's samples by hand")
    num = kwarg(call, "num_outputs")
    n = 1
    if num is not None:
        if not isinstance(num.value, cst.Integer):
            raise _Block("num_outputs= is not an integer literal")
        n = num.value.evaluated_value
        if n < 1:
            raise _Block("num_outputs=0: a function run for its side effects; call it in the loop by hand")
    per_batch = False
    bp = kwarg(call, "batch_processing")
    if bp is not None:
        if not (isinstance(bp.value, cst.Name) and bp.value.value in ("True", "False")):
            raise _Block("batch_processing= is not True or False")
        per_batch = bp.value.value == "True"
    layouts = None
    ol = kwarg(call, "output_layouts")
    if ol is not None and not (isinstance(ol.value, cst.Name) and ol.value.value == "None"):
        if isinstance(ol.value, cst.SimpleString):
            layouts = [ol.value] * n
        elif isinstance(ol.value, (cst.List, cst.Tuple)) and all(isinstance(e.value, cst.SimpleString) for e in ol.value.elements):
            layouts = [e.value for e in ol.value.elements]
            if len(layouts) != n:
                raise _Block(f"{len(layouts)} output_layouts for {n} outputs (the pipeline fails)")
        else:
            raise _Block("output_layouts= is not a string or a list of strings")
    return {"inputs": [a.value for a in inputs], "function": function.value, "n": n, "per_batch": per_batch, "layouts": layouts}


def _blocker(call, op, ctx):
    try:
        s = _settings(call)
    except _Block as why:
        return f"fn.python_function not converted: {why}"
    info = ctx.pipeline
    if s["n"] > 1 and info is not None and _is_returned(call, info):
        return "fn.python_function with several outputs returned as they are: unpack them (`a, b = fn.python_function(...)`) first"
    return None


def _is_returned(call, info) -> bool:
    value = info.returned
    if value is call:
        return True
    return isinstance(value, (cst.Tuple, cst.List)) and any(e.value is call for e in value.elements)


def _paren(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _rewrite(call, op, ctx):
    try:
        s = _settings(call)
    except _Block:
        return call  # the blocker kept this pipeline as it was
    ctx.taken.add(ctx.numpy)
    np_, nd = ctx.numpy, ctx.ndd
    inputs = [code(_paren(x)) for x in s["inputs"]]
    function = code(_paren(s["function"]))
    # Comprehension variables do not leak: they need only avoid the names the pipeline can see.
    taken = set(ctx.taken)

    def fresh(base):
        return fresh_name(base, taken)

    if len(inputs) == 1:
        names = [fresh("sample")]
        source = inputs[0]
    else:
        names = [fresh(f"{x}_sample" if isinstance(e, cst.Name) else "sample") for x, e in zip(inputs, s["inputs"])]
        source = f"zip({', '.join(inputs)})"
    target = ", ".join(names)
    if s["per_batch"]:
        lists = ", ".join(f"[{np_}.asarray({name}) for {name} in {x}]" for name, x in zip(names, inputs))
        results = f"{function}({lists})"  # one list per output (a tuple of them for several)
    else:
        args = ", ".join(f"{np_}.asarray({name})" for name in names)
        results = f"[{function}({args}) for {target} in {source}]"  # one result per sample

    o = fresh("out")
    layouts = s["layouts"]

    def batch(samples: str, layout: str) -> str:
        layout_arg = f", layout={layout}" if layout else ""
        return f"{nd}.as_batch([{np_}.asarray({o}, order=\"C\") for {o} in {samples}]{layout_arg})"

    if s["n"] == 1 and not s["per_batch"]:
        layout_arg = f", layout={code(layouts[0])}" if layouts else ""
        args = ", ".join(f"{np_}.asarray({name})" for name in names)
        text = f"{nd}.as_batch([{np_}.asarray({function}({args}), order=\"C\") for {target} in {source}]{layout_arg})"
    elif s["n"] == 1:
        text = batch(results, code(layouts[0]) if layouts else "")
    else:
        outputs = results if s["per_batch"] else f"zip(*{results})"
        per_output = fresh("output")
        if layouts and len({lay.evaluated_value for lay in layouts}) > 1:
            layout = fresh("layout")
            text = f"[{batch(per_output, layout)} for {per_output}, {layout} in zip({outputs}, [{', '.join(code(x) for x in layouts)}])]"
        else:
            text = f"[{batch(per_output, code(layouts[0]) if layouts else '')} for {per_output} in {outputs}]"
    new = cst.parse_expression(text)
    return new.with_changes(lpar=[*call.lpar, *new.lpar], rpar=[*new.rpar, *call.rpar])


RULE = OpCallRule(
    id="python-function",
    summary="CPU fn.python_function becomes the same calls of the function on NumPy arrays of the samples "
    "(per sample, or per batch with batch_processing=True), wrapped with ndd.as_batch",
    order=95,
    applies=lambda op: op.fn_name == "python_function",
    blocker=_blocker,
    rewrite=_rewrite,
)
