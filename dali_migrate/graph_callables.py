"""Functions a pipeline gets from the function that builds it, and calls on its data.

DALI's expression notebooks build one pipeline per arithmetic operation:

    def arithmetic_pipeline(operation, left_type, right_type):
        pipe = Pipeline(...)
        with pipe:
            l, r = fn.external_source(...)
            pipe.set_outputs(l, r, operation(l, r))
        return pipe

    arithmetic_operations = [((lambda x, y: x + y), "+"), ((lambda x, y: x - y), "-")]
    for op, op_name in arithmetic_operations:
        pipe = arithmetic_pipeline(op, np.uint8, np.uint8)

The pipeline called ``operation`` once, when it was built, on DataNodes: what it built is the
arithmetic of the lambda's body. The converted loop calls it every iteration on batches, which
computes the same where the function is arithmetic of its arguments alone: a lambda, or a function
of the file returning one expression, built from its parameters, number literals and operators.
Such a function reads no other name: one it read (``lambda x: x + constant``) was read when the
pipeline was built, and may hold another value when the converted loop runs.

Every value the parameter can get must be seen: the builder is a module-level function that is
only called, never rebinds the parameter, and each call passes a lambda, a function of the file,
or the variable of a loop around the call over a list written out in the file (``for op, op_name
in arithmetic_operations``, the list bound once and only looped over), whose elements hold them.
"""

from __future__ import annotations

from typing import Optional, Union

import libcst as cst

from dali_migrate.cst_util import code, one_line

#: what :func:`reason` answers where the name is no parameter of the function that builds the pipeline
NOT_A_PARAMETER = "not a parameter"

_COMPARE = (cst.Equal, cst.NotEqual, cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)


def reason(name: str, pipeline: cst.FunctionDef, parents) -> Optional[str]:
    """None where every value ``name`` (called by ``pipeline``'s code) can hold is arithmetic of its
    arguments alone; :data:`NOT_A_PARAMETER` where ``name`` is no parameter of the function that
    builds ``pipeline``; else why it cannot be told (for a marker)."""
    cache = parents.__dict__.setdefault("_graph_callables", {})
    key = (id(pipeline), name)
    if key not in cache:
        cache[key] = _reason(name, pipeline, parents)
    return cache[key]


def _reason(name: str, pipeline: cst.FunctionDef, parents) -> Optional[str]:
    from dali_migrate import call_sites

    builder = parents.scope(pipeline)
    if not isinstance(builder, cst.FunctionDef) or call_sites._binds(pipeline, name, parents):
        return NOT_A_PARAMETER
    params = builder.params
    if not any(p.name.value == name for p in [*params.posonly_params, *params.params, *params.kwonly_params]):
        return NOT_A_PARAMETER
    fname = builder.name.value
    if parents.scope(builder) is not None or call_sites._module_function(fname, parents) is not builder:
        return f"{fname}() is defined more than once, decorated, nested or used other than called, so the values `{name}` gets cannot all be seen"
    if call_sites._rebinds(call_sites._scope_nodes(builder, parents), name, parents) or any(
        any(n.name.value == name for n in d.names) for d in parents.find(cst.Nonlocal, within=builder)
    ):
        return f"{fname}() assigns `{name}` itself"
    for ref in call_sites._references(fname, parents):
        call = parents.of(ref)
        if ref is builder.name or not isinstance(call, cst.Call):
            continue
        arg = call_sites._argument_for(call, builder, name)
        if arg is None:
            return f"`{code(call).strip()}` gives `{name}` no value dali-migrate can see"
        for value in _values(arg.value, call, parents):
            if isinstance(value, str):
                return value
            why = _not_arithmetic(value)
            if why is not None:
                return f"`{name}` gets `{one_line(value)}` here, which {why}"
    return None




def _values(expr, at, parents) -> list:
    """The functions (Lambda or FunctionDef nodes) ``expr``, evaluated at ``at``, can be; a str
    where it cannot be told."""
    if isinstance(expr, cst.Lambda):
        return [expr]
    if not isinstance(expr, cst.Name):
        return [f"`{one_line(expr)}` is passed where the pipeline's function goes, which dali-migrate cannot follow"]
    loop = _loop_over(expr, at, parents)
    if isinstance(loop, str):
        return [loop]
    if loop is not None:
        found = []
        for element in loop:
            found += _values(element, element, parents)
        return found
    return [_module_value(expr.value, parents)]


def _loop_over(name: cst.Name, at, parents) -> Union[None, str, list]:
    """Where ``name`` is the variable of a ``for`` around ``at`` (alone or in a tuple of names):
    the values it takes, each an expression of the list written out in the file; None where no
    such loop binds it; a str where one does but its values cannot be read."""
    from dali_migrate import call_sites

    loop, cur = None, parents.of(at)
    while cur is not None and not isinstance(cur, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
        if isinstance(cur, cst.For) and parents.contains(cur.body, at) and name.value in _names(cur.target, parents):
            loop = cur
            break
        cur = parents.of(cur)
    if loop is None:
        scope = parents.scope(at)
        if scope is not None and call_sites._binds(scope, name.value, parents):
            return f"`{name.value}` is a variable of the function that calls it, which dali-migrate does not follow"
        return None
    if name.value in call_sites._bound_in(loop.body, parents):
        return f"`{name.value}` is assigned again in the loop over `{one_line(loop.iter)}`"
    target = loop.target
    if isinstance(target, cst.Name):
        index = None
    elif isinstance(target, (cst.Tuple, cst.List)) and all(
        isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements
    ):
        index = next(i for i, e in enumerate(target.elements) if e.value.value == name.value)
    else:
        return f"`{code(target).strip()}` unpacks the loop's values in a way dali-migrate does not follow"
    items = _written_list(loop.iter, loop, parents)
    if isinstance(items, str):
        return items
    found = []
    for item in items:
        if index is None:
            found.append(item)
            continue
        if not (isinstance(item, (cst.Tuple, cst.List)) and len(item.elements) == len(target.elements)
                and all(isinstance(e, cst.Element) for e in item.elements)):
            return f"`{one_line(item)}`, an element of `{one_line(loop.iter)}`, is not a tuple written out"
        found.append(item.elements[index].value)
    return found


def _names(node, parents) -> set:
    return {n.value for n in parents.find(cst.Name, within=node)}


def _written_list(expr, loop, parents) -> Union[list, str]:
    """The elements of ``expr`` (a loop's iterable): a list or tuple written out, or the name of one
    bound once at the top of the file and only looped over."""
    from dali_migrate import call_sites

    if isinstance(expr, (cst.List, cst.Tuple)):
        if any(not isinstance(e, cst.Element) for e in expr.elements):
            return f"`{one_line(expr)}` has a starred element"
        return [e.value for e in expr.elements]
    if not isinstance(expr, cst.Name):
        return f"the loop goes over `{one_line(expr)}`, which dali-migrate cannot read"
    scope = parents.scope(loop)
    if scope is not None and call_sites._binds(scope, expr.value, parents):
        return f"the loop goes over `{expr.value}`, a variable of a function, which dali-migrate does not follow"
    bindings, reads = [], []
    for ref in call_sites._references(expr.value, parents):
        parent = parents.of(ref)
        if isinstance(parent, cst.AssignTarget) and parent.target is ref:
            bindings.append(parents.of(parent))
        elif isinstance(parent, cst.For) and parent.iter is ref:
            reads.append(ref)
        else:
            return f"`{expr.value}` is used other than looped over (`{one_line(parents.statement(ref) or ref)}`), which may change it"
    if len(bindings) != 1 or not isinstance(parents.of(parents.of(bindings[0])), cst.Module) or len(bindings[0].targets) != 1:
        return f"`{expr.value}` is not bound once, at the top of the file"
    value = bindings[0].value
    if not isinstance(value, (cst.List, cst.Tuple)) or any(not isinstance(e, cst.Element) for e in value.elements):
        return f"`{expr.value}` is not a list written out"
    return [e.value for e in value.elements]


_OTHER_BINDINGS = (cst.Param, cst.AsName, cst.ImportAlias, cst.AugAssign, cst.AnnAssign, cst.NamedExpr,
                   cst.Global, cst.Nonlocal, cst.Del, cst.CompFor, cst.ClassDef)


def _module_value(name: str, parents):
    """The lambda or function the file binds ``name`` to, once, at its top; else a str."""
    from dali_migrate import call_sites

    found = []
    for ref in call_sites._references(name, parents):
        parent = parents.of(ref)
        if isinstance(parent, cst.FunctionDef) and parent.name is ref:
            found.append(parent)
        elif isinstance(parent, cst.AssignTarget) and parent.target is ref:
            found.append(parents.of(parent))
        elif call_sites._is_binding(ref, parents) or isinstance(parent, _OTHER_BINDINGS):
            return f"`{name}` is bound in a way dali-migrate does not follow"
    at_top = [b for b in found if isinstance(parents.statement(b) if isinstance(b, cst.Assign) else b, cst.BaseStatement)
              and isinstance(parents.of(parents.statement(b) if isinstance(b, cst.Assign) else b), cst.Module)]
    if len(found) != 1 or len(at_top) != 1:
        return f"`{name}` is not bound once, at the top of the file"
    bound = found[0]
    if isinstance(bound, cst.FunctionDef):
        return bound
    if len(bound.targets) == 1 and isinstance(bound.value, cst.Lambda):
        return bound.value
    return f"`{name}` is `{one_line(bound.value)}`, which dali-migrate cannot follow"


def _not_arithmetic(func) -> Optional[str]:
    """None where ``func`` (a Lambda or FunctionDef) returns arithmetic of its parameters alone."""
    params = func.params
    if params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.star_kwarg is not None or params.kwonly_params:
        return "takes *args, **kwargs or keyword-only parameters"
    every = [*params.posonly_params, *params.params]
    if any(p.default is not None for p in every):
        return "has parameters with defaults"
    if isinstance(func, cst.Lambda):
        body = func.body
    else:
        stmts = list(func.body.body) if isinstance(func.body, cst.IndentedBlock) else []
        if stmts and isinstance(stmts[0], cst.SimpleStatementLine) and isinstance(stmts[0].body[0], cst.Expr) and isinstance(
            stmts[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)
        ):
            stmts = stmts[1:]  # a docstring
        if func.decorators or func.asynchronous is not None or len(stmts) != 1 or not (
            isinstance(stmts[0], cst.SimpleStatementLine) and len(stmts[0].body) == 1
            and isinstance(stmts[0].body[0], cst.Return) and stmts[0].body[0].value is not None
        ):
            return "is not one `return` of an expression"
        body = stmts[0].body[0].value
    return _expression_problem(body, {p.name.value for p in every})


def _expression_problem(expr, params: set) -> Optional[str]:
    if isinstance(expr, cst.Name):
        return None if expr.value in params else f"reads `{expr.value}`, whose value the pipeline took when it was built"
    if isinstance(expr, (cst.Integer, cst.Float)):
        return None
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.MatrixMultiply):
            return "uses @"
        return _expression_problem(expr.left, params) or _expression_problem(expr.right, params)
    if isinstance(expr, cst.UnaryOperation):
        if isinstance(expr.operator, cst.Not):
            return "uses `not`"
        return _expression_problem(expr.expression, params)
    if isinstance(expr, cst.Comparison):
        if any(not isinstance(c.operator, _COMPARE) for c in expr.comparisons) or len(expr.comparisons) != 1:
            return "compares in a way DALI's arithmetic does not"
        return _expression_problem(expr.left, params) or _expression_problem(expr.comparisons[0].comparator, params)
    return f"computes `{one_line(expr)}`, which is not arithmetic of its arguments"
