"""``@pipeline_def`` function -> a generator that yields what ``pipe.run()`` would return.

    @pipeline_def(batch_size=8, seed=3)          def train(root, *, batch_size=8, num_threads=None,
    def train(root):                                       device_id=None, seed=3):
        jpegs, labels = fn.readers.file(...)          ...settings...
        images = fn.decoders.image(jpegs)             reader = ndd.readers.File(...)
        return images, labels                         while True:
                                                          for jpegs, labels in reader.next_epoch(batch_size=batch_size):
                                                              images = ndd.decoders.image(jpegs)
                                                              yield images, labels

The generator never ends, like a pipeline: epochs follow each other, and ``next()`` on it gives
the same sequence of batches that repeated ``pipe.run()`` calls give. Where the pipeline takes data
from Python (external sources, a converted class's ``iter_setup``), each iteration starts by
drawing it, and the generator ends where ``pipe.run()`` raised StopIteration (given to a framework
iterator, it yields None there and goes on as after ``pipe.reset()``: ``build(restart=True)``,
see rules/external_source.py). Each item is a tuple with
one entry per pipeline output, as ``pipe.run()`` returns.

Where the pipeline's own code (its set-up statements, the reader's arguments) may act when run
(call a function, raise), the converted function runs it and then returns a generator of the
batches (``def batches(): ...; return batches()``): a pipeline runs that code when it is made,
a generator function would run it at the first ``next()`` (see ``_made_eagerly``).

An ``EvalContext`` for ``num_threads`` and ``device_id`` is entered around each iteration's
operator calls and left before the ``yield``: a context held across a ``yield`` would stay active in the caller's code
and break when two converted pipelines are iterated in turn.

Where the file calls a pipeline's ``run()`` inside a ``try`` that catches errors, the generator is
emitted resumable (``resume_after_errors``): pipe.run() after a failed run gives the next batch,
but a generator that raised is finished.
"""

from __future__ import annotations

import libcst as cst
from dali_migrate import match as m

from dali_migrate import cst_walk, legacy, templates
from dali_migrate.cst_util import assignment, code, fresh_name, map_branches
from dali_migrate.pipeline_analysis import SETTINGS, PipelineInfo, _binding_of, _param_names, reader_statement_call, reader_target
from dali_migrate.rules.base import PipelineRule

RULE = PipelineRule(
    id="pipeline-def",
    summary="@pipeline_def functions become generators: settings as keyword arguments, readers created once, a loop over next_epoch",
    order=0,
)


def _stmt(src: str) -> cst.BaseStatement:
    return templates.statement(src)  # (the same lines come for every pipeline)


def _is_literal_none(expr) -> bool:
    return expr is None or (isinstance(expr, cst.Name) and expr.value == "None")


def _seed_default(expr):
    # -1 is how a pipeline spells "no seed"; an RNG wants None for that.
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and m.matches(expr.expression, m.Integer("1")):
        return cst.Name("None")
    return expr


def unseeded_default(seed: str, ctx) -> str:
    """The seed the converted code's RNG and shuffling readers take, from the setting ``seed`` (a
    name): the setting, or where it is None or negative (no seed, to DALI 2.4) one drawn from the
    OS, as a pipeline draws its own (PipelineContext.drawn_seed says why not ndd's). 63 bits: a
    reader's seed= is a signed 64-bit integer."""
    if "secrets" in ctx.taken:  # the file's own `secrets` (or its `import secrets`): leave it be
        module = '__import__("secrets")'
    else:
        module = ctx.need_import("secrets")
    return f"{seed} if {seed} is not None and {seed} >= 0 else {module}.randbits(63)"


def _settings_params(info: PipelineInfo) -> list:
    params = []
    for name in SETTINGS:
        if name in info.bound_settings or name in info.computed_settings:
            continue
        default = info.settings.get(name)
        if name == "seed" and default is not None:
            default = _seed_default(default)
        if default is None and name != "batch_size":
            default = cst.Name("None")
        params.append(
            cst.Param(
                name=cst.Name(info.setting(name)),
                default=default,
                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")) if default is not None else cst.MaybeSentinel.DEFAULT,
            )
        )
    return params


def _with_settings(params: cst.Parameters, info: PipelineInfo) -> cst.Parameters:
    new = _settings_params(info)
    if not new and not params.kwonly_params:
        return params  # every setting is already a parameter (a Pipeline subclass's __init__)
    if params.star_arg is cst.MaybeSentinel.DEFAULT or params.star_arg is None:
        plain = params.params
        if new and plain and not params.kwonly_params and params.star_kwarg is None \
                and isinstance(plain[-1].whitespace_after_param, cst.ParenthesizedWhitespace):
            # `def p(\n    a, b\n):`: the line break before `)` follows the settings, not `b,`
            last = plain[-1]
            plain = [*plain[:-1], last.with_changes(whitespace_after_param=cst.SimpleWhitespace(""))]
            new = [*new[:-1], new[-1].with_changes(whitespace_after_param=last.whitespace_after_param)]
            params = params.with_changes(params=plain)
        return params.with_changes(star_arg=cst.ParamStar(), kwonly_params=[*params.kwonly_params, *new])
    return params.with_changes(kwonly_params=[*params.kwonly_params, *new])


def _yield_value(info: PipelineInfo, returned: cst.BaseExpression) -> cst.BaseExpression:
    if not info.returns_tuple:
        return cst.Tuple(elements=[cst.Element(returned, comma=cst.Comma())])
    if isinstance(returned, cst.List):
        return cst.Tuple(elements=returned.elements)
    if isinstance(returned, cst.Tuple):
        return returned
    if isinstance(info.returned, cst.Name) and isinstance(_binding_of(info, info.returned.value), cst.List):
        return cst.Call(func=cst.Name("tuple"), args=[cst.Arg(returned)])
    return returned


def build(info: PipelineInfo, ctx, statements: list, returned: cst.BaseExpression, reader_calls: list, restart: bool = False) -> cst.FunctionDef:
    """The converted function. ``statements``/``returned``/``reader_calls`` (one per reader of
    ``info.readers``) have their operator calls rewritten.

    ``restart``: the form an iterator that resets the pipeline drives (``ctx.restart``, see
    rules/external_source.py): where the pipeline raised StopIteration the generator yields None,
    and goes on with the source's next epoch."""
    nd = ctx.ndd
    taken = ctx.taken
    from dali_migrate.cst_util import fresh_name

    head: list = []
    if info.docstring is not None:
        head.append(info.docstring)
    # the pipeline's own code that runs once, with the reader's arguments: see _made_eagerly
    made_with: list = [*ctx.hoisted, *(a.value for call in reader_calls if call is not None for a in call.args)]
    for reader in info.readers:
        for test, call in reader.converted_branches or ():
            made_with.extend(a.value for a in call.args)
            if test is not None:
                made_with.append(test)
    for name, value in info.computed_settings.items():
        if name == "seed":
            value = _seed_default(value)
        head.append(assignment(name, value))
        made_with.append(value)
    threads, device_id, seed = info.setting("num_threads"), info.setting("device_id"), info.setting("seed")
    # The pipeline's thread count and device belong to this generator alone: an EvalContext of its
    # own, not ndd.set_num_threads(), which is global (DALI 2.4 can hang when it changes between
    # two pipelines' calls, e.g. train with 4 threads and val with 2).
    ctx_name = fresh_name("ctx", taken)
    head.append(_stmt(f"{ctx_name} = {nd}.EvalContext(num_threads={threads}, device_id={device_id})\n"))
    if ctx.seed_name:
        head.append(_stmt(f"{ctx.seed_name} = {unseeded_default(seed, ctx)}\n"))
    if ctx.rng_name:
        head.append(_stmt(f"{ctx.rng_name} = {nd}.random.RNG(seed={ctx.seed_name})\n"))
    head.extend(ctx.hoisted)

    loop_body: list = []
    reader_names: list = []  # (the reader's variable, the loop's target for its outputs), in order
    to_gpu: list = []  # per iteration, first: `data = data.gpu()` of a reader made with .gpu()
    readers = {r.index: (r, call) for r, call in zip(info.readers, reader_calls)}
    iter_setup: list = []
    before = getattr(ctx, "before_statement", {})
    carried: list = []  # the comments of a statement that goes, for the next one
    for i, stmt in enumerate(statements):
        head.extend(before.get(i, []))
        made_with.extend(before.get(i, []))
        if i in info.self_reads:  # `device_id = Pipeline.current().device_id`: the parameter holds it
            carried += [ln for ln in stmt.leading_lines if ln.comment is not None]
            if stmt.trailing_whitespace.comment is not None:
                carried.append(cst.EmptyLine(comment=stmt.trailing_whitespace.comment))
            continue
        if carried:
            stmt = stmt.with_changes(leading_lines=[*carried, *stmt.leading_lines])
            carried = []
        draws = legacy.iter_setup_draws(stmt)
        if draws is not None and all(m.matches(s, m.SimpleStatementLine([m.Pass()])) for s in draws):
            # an iter_setup that only fed its inputs: nothing of it is left to run (or to raise)
            carried += [ln for s in draws for ln in s.leading_lines if ln.comment is not None]
            continue
        if draws is not None:
            # a converted Pipeline subclass's iter_setup(): where it raised StopIteration, pipe.run() did
            ended = [cst.SimpleStatementLine([cst.Return()])]
            if restart:
                from dali_migrate.rules.external_source import end_block

                ended = list(templates.module_body(end_block(ctx.restart.again)))
            iter_setup = [cst.Try(
                body=cst.IndentedBlock(draws),
                handlers=[cst.ExceptHandler(body=cst.IndentedBlock(ended), type=cst.Name("StopIteration"))],
            )]
        elif i in readers:
            reader, reader_call = readers[i]
            reader_name = fresh_name("reader", taken)
            target = reader_target(stmt)
            if isinstance(target, cst.Name) and reader.outputs == 1:
                # next_epoch() yields a tuple of outputs even for a reader with one output.
                if reader.to_gpu:
                    to_gpu.append(assignment(target, cst.Call(cst.Attribute(target, cst.Name("gpu")))))
                target = cst.Tuple([cst.Element(target, comma=cst.Comma())])
            reader_names.append((reader_name, target))

            def made(line, call):
                made = line.with_changes(body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(reader_name))], value=call)])
                if needs_context(reader.call):
                    # A GPU reader takes the current device when it is made: the pipeline's, inside its context.
                    made = cst.With(
                        items=[cst.WithItem(cst.Name(ctx_name))],
                        body=cst.IndentedBlock(body=[made.with_changes(leading_lines=[])]),
                        leading_lines=made.leading_lines,
                    )
                return made

            if reader.branches:
                # the `if` that chose the reader runs once, as it ran when the pipeline was made
                def each(branch):
                    line = branch.body.body[0]
                    return branch.with_changes(body=branch.body.with_changes(body=[made(line, reader_statement_call(line)[0])]))

                head.append(map_branches(stmt, each))
            else:
                head.append(made(stmt, reader_call))
        elif i in info.setup:
            head.append(stmt)
            made_with.append(stmt)
        else:
            loop_body.append(stmt)
    head.extend(before.get(len(statements), []))  # from the returned expression
    head.extend(ctx.restart.setup if restart else getattr(ctx, "loop_setup", []))
    made_with.extend(getattr(ctx, "sources_made", []))  # source=Reader(...): made when the graph was
    # External data first, as a pipeline runs its sources' callbacks, then iter_setup(), then the graph.
    draws = [*(ctx.restart.draws if restart else getattr(ctx, "draws", [])), *iter_setup]

    value = _yield_value(info, returned)
    # The comments of the `return` line (above it and after it) go with the line that replaces it.
    ret = info.func.body.body[-1]
    keep = {"leading_lines": ret.leading_lines, "trailing_whitespace": ret.trailing_whitespace}
    if ctx_name is not None:  # always, today; kept as a branch for a context-free form
        out_name = fresh_name("outputs", taken)
        inner = [*to_gpu, *loop_body, assignment(out_name, value, **keep)]
        per_iteration = [
            *draws,
            cst.With(items=[cst.WithItem(cst.Name(ctx_name))], body=cst.IndentedBlock(body=_no_blank_start(inner))),
            cst.SimpleStatementLine([cst.Expr(cst.Yield(cst.Name(out_name)))]),
        ]
    else:
        per_iteration = [*draws, *_no_blank_start([*loop_body, cst.SimpleStatementLine([cst.Expr(cst.Yield(value))], **keep)])]

    if len(reader_names) > 1:
        forever = _several_readers_loop(info, reader_names, per_iteration, taken)
        head.append(forever[0])
        forever = forever[1]
    elif reader_names:
        reader_name, target = reader_names[0]
        loop = cst.For(
            target=target,
            iter=templates.expression(
                f"{reader_name}.next_epoch(batch_size={info.setting('batch_size')}"
                + (f", ctx={ctx_name})" if reader_needs_context(info) else ")")
            ),
            body=cst.IndentedBlock(body=per_iteration),
        )
        forever = cst.While(test=cst.Name("True"), body=cst.IndentedBlock(body=[loop]))
    elif getattr(ctx, "source_loop", None) is not None and not restart:
        # An external source drives the pipeline: one batch per item; when it ends, so does the generator.
        expr, data = ctx.source_loop
        forever = cst.For(target=cst.Name(data), iter=expr, body=cst.IndentedBlock(body=per_iteration))
    else:
        forever = cst.While(test=cst.Name("True"), body=cst.IndentedBlock(body=per_iteration))
    tail = [forever]
    if getattr(ctx, "fed_inputs", None) is not None:
        # Fed from outside (pipe.run(name=data)): a function of each run's data, not a stream (fed_inputs.py).
        from dali_migrate import fed_inputs

        tail = fed_inputs.run_function(head, _no_blank_start(loop_body), value, ctx_name, ctx.fed_inputs, keep)
    else:
        # module variables the pipeline read only when it was made (a reader's arguments, set-up
        # code), which the module binds again (a notebook's later cell, `global`): read there by
        # the converted function too, not at the generator's first next() (call_sites._read_late
        # leaves them be)
        own = _param_names(_with_settings(info.func.params, info)) | set().union(*(legacy._bindings(stmt) for stmt in head))
        read_when_made = set().union(*(cst_walk.variables(node) for node in made_with)) - own - cst_walk.variables(tail[0])
        if read_when_made & _bound_again(ctx.module) or any(_may_act(node, nd, _param_names(info.func.params)) for node in made_with):
            tail = _made_eagerly(info.func, head, tail, taken)
            info.__dict__["_read_when_made"] = frozenset(read_when_made)

    func = info.func
    return func.with_changes(
        decorators=[],
        params=_with_settings(func.params, info),
        body=func.body.with_changes(body=[*head, *tail]),
        leading_lines=[*func.leading_lines, *info.decorator.leading_lines, *_comment_of(info.decorator), *func.lines_after_decorators],
        lines_after_decorators=[],
    )


def _bound_again(module) -> frozenset:
    """Names the module may bind more than once: assigned (or imported) by two statements outside
    functions and classes, bound by a module-level loop, or declared global in a function."""
    if module is None:
        return frozenset()
    return cst_walk.remembered(_find_bound_again, module)


def _find_bound_again(module) -> frozenset:
    from dali_migrate.cst_util import names_bound

    counts: dict = {}
    again: set = set()
    stack = [(stmt, False) for stmt in module.body]
    while stack:
        node, in_loop = stack.pop()
        kind = type(node)
        if kind in (cst.FunctionDef, cst.ClassDef):
            for n in cst_walk.walk(node):
                if type(n) is cst.Global:
                    again.update(g.name.value for g in n.names)
            counts[node.name.value] = counts.get(node.name.value, 0) + (2 if in_loop else 1)
            continue
        bound = set()
        if kind in (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr):
            bound = names_bound(node.target)
        elif kind is cst.AsName:
            bound = names_bound(node.name)
        for name in bound:
            counts[name] = counts.get(name, 0) + (2 if in_loop else 1)
        loop = in_loop or kind in (cst.For, cst.While)
        stack.extend((child, loop) for child in cst_walk.children(node) if type(child) is not cst.Lambda)
    return frozenset(again | {n for n, c in counts.items() if c > 1})


#: builtins that only compute a value from their arguments (a call of anything else may act)
_PURE_BUILTINS = frozenset({
    "abs", "all", "any", "bool", "dict", "divmod", "enumerate", "float", "frozenset", "int", "isinstance",
    "len", "list", "max", "min", "range", "reversed", "round", "set", "sorted", "str", "sum", "tuple", "zip",
})
_ACTS = (cst.Raise, cst.Assert, cst.Del, cst.Global, cst.Nonlocal, cst.Await, cst.Yield)


def _may_act(node, nd: str, params: frozenset = frozenset()) -> bool:
    """Whether running ``node`` may do something besides computing values: call a function (other
    than :data:`_PURE_BUILTINS` and what dali-migrate wrote, ``nd``'s), raise, or change a name
    outside the function; or read what the caller may change after making the pipeline before
    using it: an attribute or item of one of ``params`` (``if cfg.small:``)."""
    for n in cst_walk.walk(node, not_into=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        kind = type(n)
        if kind is cst.Attribute or kind is cst.Subscript:
            if type(n.value) is cst.Name and n.value.value in params:
                return True
        elif kind is cst.Call:
            func = n.func
            while type(func) is cst.Attribute:
                func = func.value
            if not (type(n.func) is cst.Name and n.func.value in _PURE_BUILTINS) and not (
                    type(func) is cst.Name and func.value == nd and n.func is not func):
                return True
        elif kind in _ACTS:
            return True
    return False


def _made_eagerly(func: cst.FunctionDef, head: list, tail: list, taken: set) -> list:
    """``tail`` (the loop) as a generator of its own that the converted function makes and returns,
    after running ``head``.

    A pipeline runs its own code when it is made: ``@pipeline_def``'s function on the call,
    a Pipeline subclass's ``__init__`` on construction. A generator function would run it at the
    first ``next()``: where that code acts (shuffles with ``random``, reads files, raises on a bad
    argument), two pipelines first used in another order than they were made in would swap what
    they got, and errors would come from another line. So such code runs before the generator is
    made, as it ran. The loop rebinds some names of the set-up (an external source started again):
    it declares them nonlocal, or global where the function does."""
    from dali_migrate.legacy import _bindings

    outer: set = _param_names(func.params)
    declared_global: set = set()
    for stmt in head:
        outer |= _bindings(stmt)
        for n in cst_walk.walk(stmt, not_into=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            if type(n) is cst.Global:
                declared_global |= {g.name.value for g in n.names}
    inner: set = set().union(*(_bindings(stmt) for stmt in tail))
    declare = []
    for kind, names in ((cst.Global, inner & declared_global), (cst.Nonlocal, (inner & outer) - declared_global)):
        if names:
            declare.append(cst.SimpleStatementLine([kind(names=[cst.NameItem(cst.Name(n)) for n in sorted(names)])]))
    name = fresh_name("batches", taken)
    taken.add(name)
    batches = cst.FunctionDef(
        name=cst.Name(name),
        params=cst.Parameters(),
        body=cst.IndentedBlock([*declare, *tail]),
        leading_lines=[
            cst.EmptyLine(indent=False),
            cst.EmptyLine(comment=cst.Comment("# the code above runs when the pipeline is made, as in pipeline mode")),
        ],
    )
    made = cst.SimpleStatementLine([cst.Return(cst.Call(cst.Name(name)))], leading_lines=[cst.EmptyLine(indent=False)])
    return [batches, made]


def _several_readers_loop(info: PipelineInfo, readers: list, per_iteration: list, taken: set) -> tuple:
    """(the nested generator function, the loop) for a pipeline of several readers ``readers``
    ((variable, loop target) each): every iteration takes the next batch of each reader, and each
    reader goes on into its next epoch on its own, as a pipeline's readers do. ``next_epoch``
    yields an epoch's batches, the last one wrapping into the next epoch, so one reader's epochs
    back to back are the batches its pipeline gave, whatever the other readers' epoch sizes."""
    endless = fresh_name("endless", taken)
    stream = templates.statement(
        "# one batch of each reader per iteration, each going on into its next epoch on its own, as in a pipeline\n"
        f"def {endless}(reader):\n"
        "    while True:\n"
        f"        yield from reader.next_epoch(batch_size={info.setting('batch_size')})\n"
    )
    # a reader's outputs as one element of the zip's target: its tuple in parentheses
    targets = [
        t.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if isinstance(t, cst.Tuple) and not t.lpar else t
        for _, t in readers
    ]
    loop = cst.For(
        target=cst.Tuple([cst.Element(t) for t in targets], lpar=[], rpar=[]),
        iter=templates.expression(f"zip({', '.join(f'{endless}({name})' for name, _ in readers)})"),
        body=cst.IndentedBlock(body=per_iteration),
        leading_lines=[cst.EmptyLine(indent=False)],
    )
    return stream.with_changes(leading_lines=[cst.EmptyLine(indent=False), *stream.leading_lines]), loop


def needs_context(call) -> bool:
    """Whether a reader made with ``call`` runs on another device than the CPU (see reader_needs_context)."""
    if call is None:
        return False
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "device":
            return not (isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value == "cpu")
    return False


def reader_needs_context(info: PipelineInfo) -> bool:
    """Whether ``next_epoch`` gets the pipeline's EvalContext: only for a reader on the GPU.

    DALI 2.4's native ``next_epoch`` keeps the context it runs in entered (and locked) for the
    whole epoch, across its yields, and contexts must be left in the order they were entered.
    Two converted generators used in turn (train and validation, one per GPU) would each leave one
    of their own contexts entered, and the first epoch end raises AssertionError. A CPU reader
    does not need the pipeline's context (its output does not depend on the thread count) and runs
    in the default one, which every generator enters alike. A GPU reader needs the pipeline's
    device, so it keeps the context, and with it that limit of native ndd (this runtime enters the
    context only while the reader runs).
    """
    return any(needs_context(r.call) for r in info.readers)


def _no_blank_start(body: list) -> list:
    """A block should not open with a blank line (one that separated statements of the old body)."""
    if not body or not hasattr(body[0], "leading_lines"):
        return body
    lines = list(body[0].leading_lines)
    while lines and lines[0].comment is None:
        lines.pop(0)
    return [body[0].with_changes(leading_lines=lines), *body[1:]]


def _comment_of(decorator: cst.Decorator) -> list:
    """``@pipeline_def(...)  # note``: the note stays, on a line of its own above the function."""
    comment = decorator.trailing_whitespace.comment
    return [cst.EmptyLine(comment=comment)] if comment is not None else []


def describe(info: PipelineInfo) -> str:
    return f"{info.name}: {code(info.decorator.decorator)}"


#: Module-level code a resumable converted pipeline needs (added once per file).
RESUME_HELPER_KEY = "resume-after-errors"
RESUME_HELPER = '''
class {name}:
    """Added by dali-migrate: the converted pipeline's next() raises a failing iteration's error and
    the next call gives the next batch, as pipe.run() did. A generator that raised is finished, so
    the converted pipeline yields the error and this iterator raises it.
    """

    def __init__(self, generator):
        self._generator = generator

    def __iter__(self):
        return self

    def __next__(self):
        outputs = next(self._generator)
        if isinstance(outputs, Exception):
            raise outputs
        return outputs

    @classmethod
    def wrap(cls, pipeline):
        @functools.wraps(pipeline)
        def start(*args, **kwargs):
            return cls(pipeline(*args, **kwargs))

        return start
'''


def resume_after_errors(func: cst.FunctionDef, helper: str, taken: set) -> cst.FunctionDef:
    """The converted generator ``func`` made to go on after an iteration fails.

    The file catches errors of ``pipe.run()`` and calls it again; in pipeline mode the next run()
    gives the next batch. Each iteration's operator calls (the ``with ctx:`` block before the
    ``yield``) are caught and the error yielded in place of the outputs; the decorator's iterator
    raises it at that ``next()``. Reader and external-source errors still end the generator (they
    happen outside the block), as they end a pipeline's epoch.
    """

    class _Wrap(cst.CSTTransformer):
        def leave_IndentedBlock(self, original, updated):
            body = list(updated.body)
            for i in range(len(body) - 1):
                block, after = body[i], body[i + 1]
                yielded = _yielded_name(after)
                if isinstance(block, cst.With) and yielded is not None:
                    error = cst.Name(error_name)
                    # native ndd evaluates lazily: an operator's error would surface where the
                    # outputs are used, outside this try; evaluating them here raises it here
                    evaluate = cst.parse_statement(
                        f"for {output_name} in {yielded}:\n    {output_name}.evaluate()\n")
                    body[i] = cst.Try(
                        body=cst.IndentedBlock([block, evaluate]),
                        handlers=[cst.ExceptHandler(
                            type=cst.Name("Exception"),
                            name=cst.AsName(name=error),
                            body=cst.IndentedBlock([assignment(
                                yielded, error,
                                trailing_whitespace=cst.TrailingWhitespace(
                                    whitespace=cst.SimpleWhitespace("  "),
                                    comment=cst.Comment("# raised by next(), as pipe.run() raised it"),
                                ),
                            )]),
                        )],
                    )
            return updated.with_changes(body=body)

    from dali_migrate.cst_util import fresh_name

    # `except ... as x` unbinds x when the handler ends: it must not be a name the pipeline uses.
    error_name = fresh_name("error", taken)
    output_name = fresh_name("output", taken)
    wrapped = func.visit(_Wrap())
    return wrapped.with_changes(
        decorators=[cst.Decorator(cst.parse_expression(f"{helper}.wrap")), *wrapped.decorators]
    )


def _yielded_name(stmt):
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr):
        value = stmt.body[0].value
        if isinstance(value, cst.Yield) and isinstance(value.value, cst.Name):
            return value.value.value
    return None
