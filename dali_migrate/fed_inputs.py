"""Pipelines whose ``fn.external_source`` has no ``source=``: the data comes from outside, one
batch per ``pipe.run()``, through ``pipe.run(name=data)`` or ``pipe.feed_input("name", data)``.

Such a pipeline is not a stream of batches but a function of the batches fed to each run, so it
becomes a function that returns one (a closure, not a generator)::

    @pipeline_def(batch_size=1, ...)            def decode(source_name, *, batch_size=1, ...):
    def decode(source_name):                        ctx = ndd.EvalContext(...)
        x = fn.external_source(                 
            name=source_name, dtype=UINT8)          def run(**pipeline_inputs):
        return fn.decoders.image(x)                     with ctx:
                                                            x = ndd.batch(pipeline_inputs[source_name], dtype=types.UINT8)
                                                            return (ndd.decoders.image(x),)

                                                    return run

    pipe = decode("img", prefetch_queue_depth=1)  pipe = decode("img")
    pipe.build()
    out = pipe.run(img=data)                      out = pipe(img=data)
    pipe.feed_input("img", data)
    out = pipe.run()                              out = pipe(img=data)

Why a function: a failed run raises and the next call gives the next result, as ``pipe.run()``
does with DALI's dynamic executor (a generator that raised is finished); the RNG and the
EvalContext are made once, in the enclosing function, so random operators keep their streams
across calls. ``no_copy=False`` (DALI's default) copies the fed data (``ndd.batch``), so changing
an array after the call does not change outputs; ``no_copy=True`` views it (``ndd.as_batch``).
Operators that take the batch size get the fed batch's (a pipeline runs at the fed size).

Converted only where every run feeds every source exactly once, right before it (in a row, on the
lines before the ``run()``, or as its arguments), with ``prefetch_queue_depth=1`` and the dynamic
executor: deeper queues make ``pipe.run()`` run ahead of the data (DALI raises), and the legacy
executor leaves the pipeline unusable after a failed run.
"""

from __future__ import annotations

from typing import Optional, Union

import libcst as cst
from dali_migrate import match as m

from dali_migrate.cst_util import assignment, code, fresh_name, kwarg

#: call-site rules a fed pipeline's uses may go through; any other use of it is left to a person
USES = ("pipe-build", "pipe-run", "pipe-feed-input")


def sources(info) -> list:
    """The pipeline's external sources fed from outside (``external_source._Fed``), in order."""
    from dali_migrate.rules import external_source

    cache = info.__dict__.setdefault("_fed_sources", {})
    if "found" not in cache:
        found = []
        for call, op in info.op_calls:
            if op.fn_name == "external_source":
                planned = external_source.plan_fed_only(call, info)
                if planned is not None:
                    found.append(planned)
        cache["found"] = found
    return cache["found"]


def is_fed(info) -> bool:
    return bool(sources(info))


# -- the converted function ---------------------------------------------------------------------

def run_function(head: list, loop_body: list, value: cst.BaseExpression, ctx_name: str, inputs: str, keep: dict) -> list:
    """``def run(**inputs): with ctx: ...; return value`` and ``return run``."""
    from dali_migrate import cst_walk

    # Local to the converted function: it need only avoid the names that function uses.
    used = {ctx_name, inputs} | cst_walk.names(cst.Module([*head, *loop_body])) | cst_walk.names(value)
    name = fresh_name("run", used)
    outputs, output = fresh_name("outputs", used), fresh_name("output", used)
    # Operators run asynchronously: evaluated here, a failed run raises at this call (and the next
    # call goes on), as pipe.run() raised and returned finished outputs.
    body = [
        *loop_body,
        assignment(outputs, value, **keep),
        cst.parse_statement(
            f"for {output} in {outputs}:\n    {output}.evaluate()  # raises here if the run failed, as pipe.run() did\n"
        ),
        cst.SimpleStatementLine([cst.Return(cst.Name(outputs))]),
    ]
    func = cst.FunctionDef(
        name=cst.Name(name),
        params=cst.Parameters(star_kwarg=cst.Param(cst.Name(inputs))),
        body=cst.IndentedBlock([cst.With(items=[cst.WithItem(cst.Name(ctx_name))], body=cst.IndentedBlock(body))]),
        leading_lines=[cst.EmptyLine(indent=False)],
    )
    ret = cst.SimpleStatementLine([cst.Return(cst.Name(name))], leading_lines=[cst.EmptyLine(indent=False)])
    return [func, ret]


# -- call sites ---------------------------------------------------------------------------------

_EXECUTOR = {
    "exec_dynamic": False, "experimental_exec_dynamic": False, "exec_pipelined": False, "exec_async": False,
    "exec_separated": True,
}


def _pipeline_kwargs(info, construction) -> dict:
    found = {}
    dec = info.decorator.decorator
    if isinstance(dec, cst.Call):
        found.update({a.keyword.value: a.value for a in dec.args if a.keyword is not None})
    found.update({a.keyword.value: a.value for a in construction.args if a.keyword is not None})
    return found


def executor_reason(info, construction) -> Optional[str]:
    """Why the pipeline's runs with fed data cannot become calls (its executor), or None."""
    if construction is None:
        return (f"{info.name} is fed from outside, and made here through a function: dali-migrate cannot see its "
                "prefetch_queue_depth and executor settings, convert by hand")
    given = _pipeline_kwargs(info, construction)
    for key, bad in _EXECUTOR.items():
        value = given.get(key)
        if value is None:
            continue
        if not m.matches(value, m.Name("True") | m.Name("False")):
            return f"{info.name}({key}=...) not written as True/False: cannot tell which executor runs the fed data, convert by hand"
        if (value.value == "True") == bad:
            return (f"{info.name}({key}={value.value}) runs DALI's legacy executor, which a failed run leaves unusable "
                    "(every later run raises); the converted function goes on: convert by hand")
    depth = given.get("prefetch_queue_depth")
    if not m.matches(depth, m.Integer("1")):
        return (f"{info.name} is fed from outside but made without prefetch_queue_depth=1: DALI runs ahead of the "
                "fed data there (pipe.run(name=...) raises, feed_input + run() fails at the second run); set "
                "prefetch_queue_depth=1, or convert by hand")
    return None


def names(info, construction) -> Union[list, str]:
    """The names of the fed sources in the pipeline made by ``construction``, or why they cannot be told."""
    func = info.func
    params = [*func.params.posonly_params, *func.params.params]
    found = []
    for fed in sources(info):
        if fed.literal is not None:
            found.append(fed.literal)
            continue
        value = None
        if construction is not None and not any(a.star for a in construction.args):
            positional = [a for a in construction.args if a.keyword is None]
            for i, p in enumerate(params):
                if p.name.value == fed.param and i < len(positional):
                    value = positional[i].value
            arg = kwarg(construction, fed.param)
            if arg is not None:
                value = arg.value
        if value is None:
            every = [*params, *func.params.kwonly_params]
            default = [p.default for p in every if p.name.value == fed.param]
            value = default[0] if default else None
        if not isinstance(value, cst.SimpleString):
            return (f"fn.external_source(name={fed.param}): the name {info.name} gets in `{fed.param}` is not a string "
                    "literal here, so dali-migrate cannot match it with the data fed to run(): convert by hand")
        found.append(value.evaluated_value)
    if len(set(found)) != len(found):
        return f"two external sources of {info.name} get one name here: convert by hand"
    return found


def _feed_args(call: cst.Call) -> Union[tuple, str]:
    """(name, data expression) of ``pipe.feed_input("name", data)``, or why it is not followed."""
    node = data = None
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args) or len(positional) > 2:
        return "feed_input with *args or more than a name and data: convert by hand"
    if positional:
        node = positional[0].value
    if len(positional) > 1:
        data = positional[1].value
    for a in call.args:
        if a.keyword is None:
            continue
        if a.keyword.value == "data_node" and node is None:
            node = a.value
        elif a.keyword.value == "data" and data is None:
            data = a.value
        else:
            return f"feed_input({a.keyword.value}=...) is not converted: convert by hand"
    if not isinstance(node, cst.SimpleString) or data is None:
        return "feed_input(...) whose first argument is not the source's name as a string literal: convert by hand"
    return node.evaluated_value, data


def _is_feed(stmt, receiver: str):
    """The feed_input call when ``stmt`` is ``<receiver>.feed_input(...)`` alone on its line."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr):
        call = stmt.body[0].value
        if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "feed_input"
                and code(call.func.value) == receiver):
            return call
    return None


def _runs_first(call, stmt) -> bool:
    """Is ``call`` the first thing its statement evaluates (data fed on the lines above may move into it)?"""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return False
    small = stmt.body[0]
    value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
    while isinstance(value, cst.Subscript) and len(value.slice) == 1 and m.matches(value.slice[0].slice, m.Index(m.Integer())):
        value = value.value
    if isinstance(small, cst.Assign) and any(not m.matches(t.target, m.Name() | m.Tuple() | m.List()) for t in small.targets):
        return False
    return value is call


def run_feeds(run_call: cst.Call, site) -> Union[list, str]:
    """[(name, data expression)] that ``pipe.run(...)`` runs on: the feed_input lines right above it,
    then its own keyword arguments (the order DALI feeds them in); or why it is not converted."""
    info = site.pipeline
    receiver = code(run_call.func.value)
    expected = names(info, site.construction)
    if isinstance(expected, str):
        return expected
    reason = executor_reason(info, site.construction)
    if reason:
        return reason
    fed = []
    parents = site.parents
    stmt = parents.statement(run_call)
    block = parents.of(stmt)
    body = list(getattr(block, "body", ()))
    i = next((k for k, s in enumerate(body) if s is stmt), None)
    above = []
    while i is not None and i > 0 and _is_feed(body[i - 1], receiver) is not None:
        i -= 1
        above.insert(0, _is_feed(body[i], receiver))
    if above and run_call.args:
        return f"{receiver}.feed_input(...) and {receiver}.run(name=...) for one run: convert by hand"
    if above and not _runs_first(run_call, stmt):
        return (f"{receiver}.run() after feed_input: the fed data moves into the call, which must come first on "
                f"its line (`out = {receiver}.run()`): convert by hand")
    for call in above:
        got = _feed_args(call)
        if isinstance(got, str):
            return got
        fed.append(got)
    for a in run_call.args:
        if a.keyword is None:
            return f"{receiver}.run(<cuda stream>): dynamic mode has no output stream argument here, convert by hand"
        fed.append((a.keyword.value, a.value))
    got = [n for n, _ in fed]
    if sorted(got) != sorted(expected):
        missing = sorted(set(expected) - set(got))
        extra = sorted(set(got) - set(expected))
        what = []
        if missing:
            what.append("no data for " + ", ".join(f'"{n}"' for n in missing) + " (fed elsewhere, or not at all)")
        if extra:
            what.append("data for " + ", ".join(f'"{n}"' for n in extra) + ", which no external source of the pipeline is named")
        if len(got) != len(set(got)):
            what.append("one name fed twice (DALI queues it for two runs)")
        return f"{receiver}.run() here gets " + "; ".join(what) + ": only runs that feed every source once, right before, are converted"
    return fed


def run_of_feed(feed_call: cst.Call, site):
    """The ``pipe.run()`` call whose lines above hold ``feed_call``, or None."""
    parents = site.parents
    stmt = parents.statement(feed_call)
    block = parents.of(stmt)
    body = list(getattr(block, "body", ()))
    receiver = code(feed_call.func.value)
    i = next((k for k, s in enumerate(body) if s is stmt), None)
    if i is None or _is_feed(stmt, receiver) is not feed_call:
        return None
    while i < len(body) and _is_feed(body[i], receiver) is not None:
        i += 1
    if i == len(body):
        return None
    for node in parents.find(cst.Call, within=body[i]):
        if m.matches(node.func, m.Attribute(attr=m.Name("run"))) and code(node.func.value) == receiver:
            return node
    return None


def call_with(run_call: cst.Call, fed: list) -> cst.Call:
    """``pipe(name=data, ...)``: the converted pipeline called with what the run was fed."""
    if len(fed) == len(run_call.args):
        return run_call.with_changes(func=run_call.func.value)  # pipe.run(name=data): the arguments as written
    args = []
    for name, data in fed:
        if name.isidentifier() and name not in ("True", "False", "None"):
            args.append(cst.Arg(keyword=cst.Name(name), value=data, equal=_EQ))
        else:
            args.append(cst.Arg(cst.Dict([cst.DictElement(cst.SimpleString(repr(name)), data)]), star="**"))
    args = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for a in args[:-1]] + args[-1:]
    return cst.Call(func=run_call.func.value, args=args)


_EQ = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
