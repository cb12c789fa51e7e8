"""Reads a ``@pipeline_def`` function and decides whether it can be converted with certainty.

The result says which statements run once (setup: plain Python, the reader) and which run every
iteration (anything touching DALI data), what the pipeline returns, and every reason the
conversion would not be exact (``blockers``). A pipeline with any blocker is left untouched.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Optional

import libcst as cst
from dali_migrate import match as m

from dali_migrate import cst_walk, video_outputs
from dali_migrate.rules import pipeline_current
from dali_migrate.catalog import Catalog, OpInfo
from dali_migrate.cst_util import code, dotted, kwarg, names_in
from dali_migrate.dali_imports import FN, MATH, DaliNames

SETTINGS = ("batch_size", "num_threads", "device_id", "seed")
TYPES_CONSTANT = "nvidia.dali.types.Constant"
CPU_ONLY_DEVICE_ID = 99999  # (negated) nvidia.dali.types.CPU_ONLY_DEVICE_ID


# Older DALI read this id as "no GPU"; from 1.53 on (2.4 too) a Pipeline takes it for a GPU's and
# does not build (without CUDA it asks for `device_id = None`; with CUDA the id is out of range),
# and ndd.EvalContext rejects it. Written as None, the pipeline would run where it failed: that is
# the person's call, not the codemod's.
CPU_ONLY_DEVICE_REASON = (
    "device_id is DALI's CPU-only id (types.CPU_ONLY_DEVICE_ID, -99999), which DALI 1.53 and later take for a "
    "GPU's (the pipeline does not build: without CUDA it asks for `device_id = None`, with CUDA the id is "
    "invalid) and ndd.EvalContext rejects: for a CPU-only pipeline pass device_id=None, then convert again"
)


def cpu_only_device(expr) -> bool:
    """Whether ``expr`` spells DALI's CPU-only device id (``types.CPU_ONLY_DEVICE_ID``, -99999)."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return isinstance(expr.expression, cst.Integer) and expr.expression.evaluated_value == CPU_ONLY_DEVICE_ID
    last = expr.attr if isinstance(expr, cst.Attribute) else expr
    return isinstance(last, cst.Name) and last.value == "CPU_ONLY_DEVICE_ID"


# Pipeline arguments that only tune how a pipeline executes; dynamic mode has no use for them and
# dropping them changes no output.
PERF_ONLY = {
    "exec_pipelined", "prefetch_queue_depth", "exec_async", "bytes_per_sample", "set_affinity",
    "max_streams", "default_cuda_stream_priority", "enable_memory_stats", "py_num_workers",
    "py_start_method", "py_callback_pickler", "exec_dynamic", "experimental_exec_dynamic",
    "stream_policy", "concurrency", "debug",
}
# Pipeline arguments whose meaning a plain loop does not keep; each gets a reason.
NOT_CONVERTED = {
    # Only a literal True is converted (rules/conditionals.py); a computed value could be either.
    "enable_conditionals": "enable_conditionals= is not a literal True or False: cannot tell whether `if` on data is per sample; convert by hand",
    "enable_checkpointing": "checkpointing: use ndd.checkpoint.Checkpoint with readers made with enable_checkpointing=True (not automated yet)",
    "checkpoint": "restoring a checkpoint: use ndd.checkpoint.Checkpoint (not automated yet)",
    "output_layout": "output_layout= changes the outputs' layouts; set them with ndd.reshape(..., layout=...) by hand",
    # A check, not a tuning: the pipeline raises where an output has another type or rank.
    "output_dtype": "output_dtype= makes the pipeline check its outputs' types every iteration (a mismatch raises); "
                    "a converted loop has no such check: check the outputs' dtype by hand (or drop the argument), then convert",
    "output_ndim": "output_ndim= makes the pipeline check its outputs' numbers of dimensions every iteration (a mismatch "
                   "raises); a converted loop has no such check: check the outputs' ndim by hand (or drop the argument), then convert",
}


@dataclasses.dataclass
class Reader:
    """A reader of the pipeline: made once, it gives one batch every iteration."""

    index: int  # its statement in ``PipelineInfo.statements``: ``target = fn.readers.x(...)``
    call: cst.Call  # the reader call as written
    op: OpInfo
    outputs: Optional[int]  # how many outputs the reader call gives (None: cannot tell)
    #: ``fn.readers.x(...).gpu()``: its (one) output is moved to the GPU every iteration
    to_gpu: bool = False
    #: the reader call as the conversion rewrote it (engine.py), for the uses that make it again
    #: for its metadata (rules/pipe_epoch_size.reader_expression)
    converted: Optional[cst.Call] = None
    #: a reader chosen by ``if``/``elif``/``else`` (each branch one line ``target = fn.readers.x(...)``):
    #: (test, call) per branch as written, the test None for ``else``; ``call`` is the first branch's
    branches: Optional[list] = None
    #: the same after the conversion rewrote the calls (engine.py)
    converted_branches: Optional[list] = None

    @property
    def calls(self) -> list:
        """Every reader call of this reader: one, or one per branch."""
        return [call for _, call in self.branches] if self.branches else [self.call]


@dataclasses.dataclass
class PipelineInfo:
    func: cst.FunctionDef
    decorator: cst.Decorator
    settings: dict  # setting name -> default expression from the decorator (absent if not given)
    #: setting -> the parameter that carries it, where the decorator passes a parameter straight
    #: through (a converted Pipeline subclass: super().__init__(batch_size, ...))
    bound_settings: dict = dataclasses.field(default_factory=dict)
    #: setting -> expression reading the function's parameters (a converted Pipeline subclass:
    #: super().__init__(batch_size=args.batch_size)): computed in the body, as the class did,
    #: since a parameter's default cannot read the other parameters
    computed_settings: dict = dataclasses.field(default_factory=dict)
    # a setting whose name the graph reads from outside, in a pipeline only generated code calls
    # (a Pipeline subclass or `with pipe:` graph): its parameter takes another name
    renamed_settings: dict = dataclasses.field(default_factory=dict)
    blockers: list = dataclasses.field(default_factory=list)
    docstring: Optional[cst.BaseStatement] = None
    statements: list = dataclasses.field(default_factory=list)  # body without docstring and return
    setup: set = dataclasses.field(default_factory=set)  # indices into statements that run once
    #: the pipeline's readers, in the order of their statements (each read once per iteration)
    readers: list = dataclasses.field(default_factory=list)
    returned: Optional[cst.BaseExpression] = None
    returns_tuple: bool = True  # False: one output, to be wrapped in a 1-tuple
    uses_gpu: bool = False
    has_random: bool = False
    setup_names: set = dataclasses.field(default_factory=set)
    op_calls: list = dataclasses.field(default_factory=list)  # (call, OpInfo) as written
    conditionals: bool = False  # enable_conditionals=True (rules/conditionals.py converts the ifs)
    conditional_plan: object = None  # what rules/conditionals.py rewrites
    helpers: dict = dataclasses.field(default_factory=dict)  # name -> module-level source the converted code needs
    #: [(Attribute, setting)]: Pipeline.current().<setting> reads (rules/pipeline_current.py)
    current_reads: list = dataclasses.field(default_factory=list)
    #: indices of the statements ``device_id = Pipeline.current().device_id``: the converted
    #: function's setting of that name holds the value already, and they go
    self_reads: set = dataclasses.field(default_factory=set)
    #: why the loop would read a value of the iteration before (``size = fn.x() * size``); the
    #: engine adds it after the other reasons, which say more where there are any
    rebound_in_loop: Optional[str] = None
    #: ids of the arithmetic operands (as written) moved with .gpu() (rules/arithmetic_device.py)
    to_gpu: set = dataclasses.field(default_factory=set)

    @property
    def name(self) -> str:
        return self.func.name.value

    # The first reader's, for code written when a pipeline had one reader at most.
    @property
    def reader_index(self) -> Optional[int]:
        return self.readers[0].index if self.readers else None

    @property
    def reader_call(self) -> Optional[cst.Call]:
        return self.readers[0].call if self.readers else None

    @property
    def reader_op(self) -> Optional[OpInfo]:
        return self.readers[0].op if self.readers else None

    @property
    def reader_outputs(self) -> Optional[int]:
        return self.readers[0].outputs if self.readers else None

    @property
    def reader_indices(self) -> frozenset:
        """The indices of the statements that make readers."""
        return frozenset(r.index for r in self.readers)

    def setting(self, key: str) -> str:
        """The local name that holds a pipeline setting in the converted function."""
        return self.bound_settings.get(key) or self.renamed_settings.get(key, key)


def pipeline_decorator(func: cst.FunctionDef, names: DaliNames) -> Optional[cst.Decorator]:
    from dali_migrate.legacy import SYNTHETIC_DECORATOR

    for dec in func.decorators:
        target = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
        if names.is_pipeline_def(target) or type(target) is cst.Name and target.value == SYNTHETIC_DECORATOR:
            return dec
    return None


def _truthy_literal(expr: cst.BaseExpression) -> Optional[bool]:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return expr.value == "True"
    if isinstance(expr, cst.Integer):
        return expr.evaluated_value != 0
    return None


def _decorator_settings(dec: cst.Decorator, info: PipelineInfo) -> None:
    if not isinstance(dec.decorator, cst.Call):
        return
    for arg in dec.decorator.args:
        if arg.keyword is None:
            info.blockers.append(f"@pipeline_def with positional arguments ({code(arg)}): convert by hand")
            continue
        key = arg.keyword.value
        if key in SETTINGS:
            info.settings[key] = arg.value
            if key == "device_id" and cpu_only_device(arg.value):
                info.blockers.append(CPU_ONLY_DEVICE_REASON)
        elif key in PERF_ONLY:
            continue
        elif key in NOT_CONVERTED:
            if key == "enable_conditionals" and _truthy_literal(arg.value) is not None:
                info.conditionals = _truthy_literal(arg.value)
                continue
            info.blockers.append(NOT_CONVERTED[key])
        else:
            info.blockers.append(f"unknown pipeline argument {key}=: convert by hand")


def _assigned_names(stmt: cst.CSTNode) -> set:
    """Names a statement binds (assignment targets, for/with targets), at any depth."""
    hit = _assigned_cache.get(id(stmt))
    if hit is not None and hit[0] is stmt:
        return set(hit[1])
    found: set = set()
    for node in cst_walk.walk(stmt):
        kind = type(node)
        if kind in _TARGET_OF:
            target = getattr(node, _TARGET_OF[kind])
            if target is not None and not isinstance(target, (cst.Attribute, cst.Subscript)):
                found |= names_in(target)
    if len(_assigned_cache) > 4096:
        _assigned_cache.clear()
    # the node is kept with its answer: its id cannot be reused while the entry lives
    _assigned_cache[id(stmt)] = (stmt, frozenset(found))
    return found


# Where each binding construct keeps what it binds (statements and expressions, not comprehensions).
_TARGET_OF = {cst.AssignTarget: "target", cst.AnnAssign: "target", cst.AugAssign: "target",
              cst.For: "target", cst.AsName: "name", cst.NamedExpr: "target"}
_assigned_cache: dict = {}


_LEAVE_SCOPE = object()


class _BodyScan(cst.CSTVisitor):
    """Finds DALI calls, references and constructs that stop the conversion."""

    def __init__(self, names: DaliNames, catalog: Catalog, helpers: dict):
        self.names, self.catalog, self.helpers = names, catalog, helpers
        self.calls: list = []  # (call, OpInfo)
        self.blockers: list = []
        self.uses_gpu = False
        self.depth = 0  # nesting inside def/lambda/class
        self._call_funcs: set = set()
        self.current_reads: list = []  # [(Attribute, setting)] (rules/pipeline_current.py)
        self._current_calls: set = set()  # ids of the Pipeline.current() calls those read

    def _block(self, reason):
        if reason not in self.blockers:
            self.blockers.append(reason)

    def scan(self, root: cst.CSTNode) -> None:
        """What ``root.visit(self)`` does, over cst_walk's walk: a libcst visit rebuilds every node
        it passes, and every pipeline of a file is scanned on every pass of the engine."""
        stack = [root]
        while stack:
            node = stack.pop()
            if node is _LEAVE_SCOPE:
                self.depth -= 1
                continue
            tp = type(node)
            if tp is cst.Call:
                self.visit_Call(node)
            elif tp is cst.Attribute:
                self.visit_Attribute(node)
            elif tp is cst.Yield:
                self.visit_Yield(node)
            elif tp is cst.Await:
                self.visit_Await(node)
            elif tp is cst.FunctionDef or tp is cst.Lambda or tp is cst.ClassDef:
                self.depth += 1
                stack.append(_LEAVE_SCOPE)  # popped once everything under the node is scanned
            kids = cst_walk.children(node)
            kids.reverse()
            stack.extend(kids)

    def visit_FunctionDef(self, node):
        self.depth += 1

    def leave_FunctionDef(self, node):
        self.depth -= 1

    def visit_Lambda(self, node):
        self.depth += 1

    def leave_Lambda(self, node):
        self.depth -= 1

    def visit_ClassDef(self, node):
        self.depth += 1

    def leave_ClassDef(self, node):
        self.depth -= 1

    def visit_Yield(self, node):
        self._block("the pipeline function contains `yield`: convert by hand")

    def visit_Await(self, node):
        self._block("the pipeline function contains `await`: convert by hand")

    def visit_Call(self, node: cst.Call):
        if id(node) in self._current_calls:
            return  # Pipeline.current().<setting>: the setting, read where visit_Attribute saw it
        self._call_funcs.add(id(node.func))
        op_path = self.names.fn_op(node.func)
        if type(node.func) is cst.Attribute and node.func.attr.value == "gpu":  # (a matcher costs ~20x more)
            self.uses_gpu = True
        if op_path is None:
            q = self.names.qualify(node.func)
            if q == TYPES_CONSTANT:
                # A DALI value like fn.constant's (rules/constant.py decides what it becomes where it is used).
                if self.depth:
                    self._block("types.Constant is called inside a nested function or lambda: convert by hand")
                self.calls.append((node, self.catalog.fn("constant")))
                return
            if q == "nvidia.dali.types.ScalarConstant":
                # ndd operators reject a ScalarConstant (TypeError at run time): not a plain value there.
                self._block(
                    "types.ScalarConstant(...) has no dynamic-mode counterpart (ndd rejects it): write the value as "
                    "a Python/numpy scalar or ndd.tensor(value, dtype=...) by hand, checking the result's dtype"
                )
                return
            # types.* and tfrecord.* (reader feature descriptions) are plain values ndd takes as they are.
            if pipeline_current.current_call(node, self.names):
                self._block("Pipeline.current() is kept, or read for other than its device_id, batch_size or "
                            "max_batch_size (which become the converted function's settings): convert by hand")
            elif q is not None and q.startswith("nvidia.dali.ops."):
                # (legacy.py turns the operator objects of a class into fn calls where it can follow
                # them: made on a line of their own, stored in self, called in define_graph)
                self._block(
                    f"{dotted(node.func)}(...) is made where dali-migrate cannot follow the operator object (inside an "
                    f"expression such as `flag and ops.X(...)`, a container or a call): convert this pipeline by hand"
                )
            elif q is not None and q.startswith("nvidia.") and not q.startswith((MATH + ".", "nvidia.dali.types.", "nvidia.dali.tfrecord.")):
                self._block(f"{dotted(node.func)}(...) is not converted automatically: convert this pipeline by hand")
            callee = dotted(node.func)
            if callee in self.helpers:
                self._block(helper_blocker([callee]))
            return
        if self.depth:
            self._block(f"fn.{op_path} is called inside a nested function or lambda: convert by hand")
        info = self.catalog.fn(op_path)
        if info is None:
            self._block(
                f"fn.{op_path} is not a DALI {self.catalog.dali_version} operator known to dali-migrate (a plugin's, "
                f"loaded with plugin_manager.load_library, or another DALI version's): its outputs and devices cannot be "
                f"told; dynamic mode has a plugin's operators (ndd.{op_path}) only where the plugin is loaded before "
                f"dynamic mode is first imported (it makes its operators once, at import): convert by hand"
            )
            return
        if any(a.star for a in node.args):
            self._block(f"fn.{op_path} is called with *args/**kwargs: cannot see its arguments, convert by hand")
        device = kwarg(node, "device")
        if device is not None:
            if not isinstance(device.value, cst.SimpleString) or device.value.evaluated_value != "cpu":
                self.uses_gpu = True
        self.calls.append((node, info))

    def visit_Attribute(self, node: cst.Attribute):
        if id(node) in self._call_funcs:
            return
        setting = pipeline_current.setting_read(node, self.names)
        if setting is not None and not self.depth:
            # (visited before the call it holds: the scan goes down the tree)
            self.current_reads.append((node, setting))
            self._current_calls.add(id(node.value))
            return
        q = self.names.qualify(node)
        if q is not None and q.startswith(FN + ".") and q.count(".") >= 3:
            # fn.<op> used as a value (not called); partial chains like fn.readers are inner nodes
            op = q[len(FN) + 1 :]
            if self.catalog.fn(op) is not None:
                self._block(f"fn.{op} is used as a value, not called: convert by hand")


def helper_blocker(callees: list, why: Optional[str] = None) -> str:
    """Why a pipeline that calls module-level functions building operators is not converted:
    ``why`` they could not be written into it (helper_inlining.py), where that is known."""
    spelled = ", ".join(f"{c}()" for c in callees)
    builds = "builds DALI operators itself" if len(callees) == 1 else "build DALI operators themselves"
    if why is not None:
        return f"calls {spelled}, which {builds} and cannot be written into the pipeline: {why}"
    return (
        f"calls {spelled}, which {builds}: such a function is written into the pipeline only when it is "
        f"straight-line code and the pipeline then converts; convert by hand"
    )


def _helpers_with_ops(module: cst.Module, names: DaliNames) -> dict:
    """Module-level functions that call DALI operators themselves (not pipelines)."""
    found = {}
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and pipeline_decorator(stmt, names) is None:
            if _builds_ops(stmt, names):
                found[stmt.name.value] = stmt
    return found


def _builds_ops(func: cst.FunctionDef, names: DaliNames) -> bool:
    """:func:`_calls_ops_outside_pipelines`, kept per function for the conversion: it is asked of
    every module-level function on every pass of the engine, and the passes keep most functions as
    they are. (The answer is kept with the names it was worked out for; other names work it out again.)"""
    hit = cst_walk.remembered(lambda f: (names, _calls_ops_outside_pipelines(f, names)), func, key=_calls_ops_outside_pipelines)
    return hit[1] if hit[0] is names else _calls_ops_outside_pipelines(func, names)


def _calls_ops_outside_pipelines(func: cst.FunctionDef, names: DaliNames) -> bool:
    """Operator calls in ``func`` other than those inside pipeline functions nested in it."""
    return any(type(n) is cst.Call and names.fn_op(n.func) is not None for n in outside_pipelines(func, names))


def outside_pipelines(func: cst.FunctionDef, names: DaliNames):
    """The nodes of ``func`` (itself first) but those of the pipeline functions nested in it."""
    # cst_walk, not a visitor: asked of every module-level function on every pass of the engine
    stack = [func]
    while stack:
        node = stack.pop()
        if type(node) is cst.FunctionDef and node is not func and pipeline_decorator(node, names) is not None:
            continue
        yield node
        stack.extend(cst_walk.children(node))


def helpers_with_ops(module: cst.Module, names: DaliNames) -> dict:
    return _helpers_with_ops(module, names)


def _has_return(stmt: cst.CSTNode) -> bool:
    # a return inside a nested function is that function's
    return any(type(n) is cst.Return for n in cst_walk.walk(stmt, not_into=(cst.BaseExpression, cst.FunctionDef)))


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _param_names(params: cst.Parameters) -> set:
    found = set()
    for p in [*params.posonly_params, *params.params, *params.kwonly_params]:
        found.add(p.name.value)
    for p in (params.star_arg, params.star_kwarg):
        if isinstance(p, cst.Param):
            found.add(p.name.value)
    return found


def _same_outside(key: str, info: PipelineInfo, func: cst.FunctionDef, module) -> bool:
    """Does the module-level ``key`` a pipeline at module level reads always hold what the converted
    function's ``key=`` parameter gets? The module binds it once, to the decorator's literal, and
    every mention of the pipeline is a call that passes no other value."""
    default = info.settings.get(key)
    if module is None or func not in module.body or not _plain_literal(default):
        return False
    binds = [
        s for s in module.body
        if key in _assigned_names(s) or isinstance(s, (cst.FunctionDef, cst.ClassDef)) and s.name.value == key
        or isinstance(s, cst.SimpleStatementLine) and any(isinstance(b, (cst.Import, cst.ImportFrom)) for b in s.body)
        and key in names_in(s)
    ]
    if len(binds) != 1 or not isinstance(binds[0], cst.SimpleStatementLine) or len(binds[0].body) != 1:
        return False
    assign = binds[0].body[0]
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)
            and assign.value.deep_equals(default)):
        return False
    name = func.name.value
    stack = [(module, None)]
    while stack:
        node, parent = stack.pop()
        if type(node) in (cst.Global, cst.Nonlocal) and any(g.name.value == key for g in node.names):
            return False
        if type(node) is cst.Name and node.value == name and node is not func.name:
            if not (isinstance(parent, cst.Call) and parent.func is node):
                return False  # passed on: called elsewhere with anything
            if any(a.star or a.keyword is not None and a.keyword.value == key for a in parent.args):
                return False
        stack.extend((child, node) for child in cst_walk.children(node))
    return True


def bind_settings(info: PipelineInfo, params: set) -> None:
    """Fill ``bound_settings`` / ``computed_settings`` from the decorator's settings."""
    for key in SETTINGS:
        value = info.settings.get(key)
        if isinstance(value, cst.Name) and value.value in params:
            info.bound_settings[key] = value.value
    for key in SETTINGS:
        value = info.settings.get(key)
        if value is not None and key not in info.bound_settings and cst_walk.variables(value) & params:
            info.computed_settings[key] = value


def hidden_outside(info: PipelineInfo, params: set, module) -> list:
    """The settings whose names the pipeline's body reads from outside it, sorted.

    The converted function takes the settings as parameters: where the body reads one of their
    names from outside (a module's `batch_size = 1` beside @pipeline_def(batch_size=4)), it would
    read the parameter. (A default that is that very name, batch_size=batch_size, reads the same.)
    hidden_globals.py reads a module's variable through globals() instead, where it can."""
    func = info.func
    return sorted(
        k for k in (cst_walk.variables(func.body) - _assigned_names(func.body)) & set(SETTINGS) - params
        if k not in info.bound_settings and k not in info.computed_settings
        and not (isinstance(info.settings.get(k), cst.Name) and info.settings[k].value == k)
        and not _same_outside(k, info, func, module)
    )


def _plain_literal(expr) -> bool:
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)) or (
        isinstance(expr, cst.Name) and expr.value in ("True", "False", "None")
    )


def analyze(func: cst.FunctionDef, dec: cst.Decorator, names: DaliNames, catalog: Catalog, helpers: dict, module=None) -> PipelineInfo:
    info = PipelineInfo(func=func, decorator=dec, settings={})
    _decorator_settings(dec, info)
    if len(func.decorators) > 1:
        info.blockers.append("the pipeline function has other decorators too: convert by hand")
    if func.asynchronous is not None:
        info.blockers.append("async pipeline function: convert by hand")

    params = _param_names(func.params)
    bind_settings(info, params)
    clash = sorted(
        p for p in params & set(SETTINGS) if info.bound_settings.get(p) != p
    ) + sorted(p for p in set(info.bound_settings.values()) & set(SETTINGS) if info.bound_settings.get(p) != p)
    if clash and _synthetic(info.decorator):
        # A Pipeline subclass whose __init__ has a parameter named like a setting it does not pass
        # on as that setting (`seed` for its readers, the pipeline's seed the base class's): its
        # callers only ever pass the class's own parameters, so the setting's parameter of the
        # converted function takes another name. (Not where the body computes the setting, nor
        # where another parameter carries it: those stay with a person.)
        from dali_migrate.cst_util import fresh_name

        taken = cst_walk.names(func) | params
        free = [k for k in clash if k not in info.bound_settings and k not in info.computed_settings]
        for key in free:
            info.renamed_settings[key] = fresh_name(f"pipeline_{key}", taken)
            taken.add(info.renamed_settings[key])
        clash = [k for k in clash if k not in free]
    if clash:
        shadowed = "" if _synthetic(info.decorator) else (
            " (in pipeline mode a call's value for it goes to the function alone, not to the Pipeline, whose "
            "setting comes from the decorator: DALI warns that it shadows the constructor argument)")
        info.blockers.append(f"parameter(s) {', '.join(clash)} clash with the pipeline settings the converted "
                             f"function takes{shadowed}: convert by hand")
    hidden = hidden_outside(info, params, module)
    if hidden and _synthetic(info.decorator):
        # Nothing but the converted code calls this function (callers of the class or factory
        # never named the setting), so its parameter can take a name the graph does not read.
        from dali_migrate.cst_util import fresh_name

        taken = cst_walk.names(func) | params
        for key in hidden:
            info.renamed_settings[key] = fresh_name(f"pipeline_{key}", taken)
        hidden = []
    if hidden:
        info.blockers.append(
            f"the pipeline reads `{hidden[0]}` from outside it, which the converted function's {hidden[0]}= parameter "
            "would hide: rename that variable, or convert by hand"
        )

    if not isinstance(func.body, cst.IndentedBlock):
        info.blockers.append("one-line pipeline function: convert by hand")
        return info
    body = list(func.body.body)
    if body and _is_docstring(body[0]):
        info.docstring = body.pop(0)

    # The outputs: a single `return` as the last statement.
    last = body[-1] if body else None
    if (
        isinstance(last, cst.SimpleStatementLine)
        and len(last.body) == 1
        and isinstance(last.body[0], cst.Return)
        and last.body[0].value is not None
    ):
        info.returned = last.body[0].value
        body.pop()
    else:
        info.blockers.append("the pipeline does not end with `return <outputs>`: convert by hand")
    if any(_has_return(stmt) for stmt in body):
        info.blockers.append("the pipeline returns from more than one place: convert by hand")
    info.statements = body

    # `locals()` of the pipeline's own code lists its scope's names; converted, that scope also
    # holds the settings' parameters and ctx, rng, reader (and a Pipeline subclass's `self` is
    # gone): an `_dali_init_log(locals())` would print another list
    for n in cst_walk.walk(func.body, not_into=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if type(n) is cst.Call and type(n.func) is cst.Name and n.func.value in ("locals", "vars", "dir") and not n.args:
            info.blockers.append(f"{n.func.value}() would list the converted function's own names too (its settings, "
                                 "ctx, the reader...) where the pipeline's code listed its own: convert by hand")
            break
    scan = _BodyScan(names, catalog, helpers)
    scan.scan(func.body)
    info.blockers.extend(b for b in scan.blockers if b not in info.blockers)
    info.op_calls = scan.calls
    info.current_reads = scan.current_reads
    info.uses_gpu = scan.uses_gpu
    info.has_random = any(op.is_random for _, op in scan.calls)

    readers = [(call, op) for call, op in scan.calls if op.is_reader]
    ops = {id(call): op for call, op in scan.calls}
    # External sources beside a reader or each other: rules/external_source.py decides.
    for call, op in readers:
        _find_reader(info, body, call, op, ops)
    if len(info.readers) > 1:
        _several_readers(info)

    _classify(info, params)
    _classify_return(info, catalog, names)
    return info


def reader_statement_call(stmt) -> Optional[tuple]:
    """(the call, whether ``.gpu()`` is chained on it) of a ``target = <call>`` or
    ``target = <call>.gpu()`` line; None for other statements."""
    if not (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Assign)
        and len(stmt.body[0].targets) == 1
    ):
        return None
    value = stmt.body[0].value
    if (
        isinstance(value, cst.Call)
        and not value.args
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value == "gpu"
        and isinstance(value.func.value, cst.Call)
    ):
        return value.func.value, True
    return (value, False) if isinstance(value, cst.Call) else None


def reader_branches(stmt) -> Optional[list]:
    """[(test, call, whether ``.gpu()`` is chained on it, the branch's line), ...] of an
    ``if``/``elif``/``else`` whose every branch is one ``target = <call>`` line (the test None for
    ``else``); None otherwise."""
    if not isinstance(stmt, cst.If):
        return None
    out: list = []
    node = stmt
    while node is not None:
        body = node.body.body
        if len(body) != 1:
            return None
        found = reader_statement_call(body[0])
        if found is None:
            return None
        out.append((node.test if isinstance(node, cst.If) else None, found[0], found[1], body[0]))
        node = node.orelse if isinstance(node, cst.If) else None
    return out


def reader_target(stmt) -> cst.BaseAssignTargetExpression:
    """The target a reader's statement binds (of its first branch, where an ``if`` chooses it)."""
    if isinstance(stmt, cst.If):
        stmt = stmt.body.body[0]
    return stmt.body[0].targets[0].target


def _find_reader(info: PipelineInfo, body: list, call: cst.Call, op: OpInfo, ops: dict) -> None:
    """Note the reader ``call`` in ``info.readers``, or a blocker saying why it cannot be.
    ``ops``: id of each operator call of the pipeline -> its OpInfo."""
    outputs = reader_outputs(call, op)
    branches = None
    for i, stmt in enumerate(body):
        found = reader_statement_call(stmt)
        if found is not None and found[0] is call:
            branches = None  # (not an earlier statement's)
            break
        branches = reader_branches(stmt)
        if branches is not None and any(b[1] is call for b in branches):
            if branches[0][1] is not call:
                return  # noted with the first branch's call
            found = branches[0][1:3]
            why = _branch_blocker(info, body, i, branches, ops)
            if why:
                info.blockers.append(why)
                return
            break
    else:
        info.blockers.append(
            f"fn.{op.fn_name} must be assigned on a line of its own at the top level of the pipeline to be converted"
        )
        return
    to_gpu = found[1]
    target = reader_target(body[i])
    if to_gpu and not (outputs == 1 and isinstance(target, cst.Name)):
        # `.gpu()` of a reader's list of outputs fails in the pipeline; of its one output, it is the
        # batch's .gpu() every iteration
        info.blockers.append(
            f"fn.{op.fn_name}(...).gpu(): the reader does not give one output here: unpack its outputs "
            f"(`a, b = fn.{op.fn_name}(...)`) and move them with `a.gpu()`, or convert by hand"
        )
        return
    info.readers.append(Reader(index=i, call=call, op=op, outputs=outputs, to_gpu=to_gpu,
                               branches=[(b[0], b[1]) for b in branches] if branches else None))
    if isinstance(target, cst.Name) and outputs is None and op.reader_class != "TFRecord":
        # A pipeline gives one DataNode or a list, depending on the arguments; next_epoch always
        # yields a tuple (TFRecord: a dict), so a single name cannot be translated blindly.
        info.blockers.append(
            f"cannot tell whether fn.{op.fn_name} gives one output or several here: unpack its outputs "
            f"(`a, b = fn.{op.fn_name}(...)`) or convert by hand"
        )
    if kwarg(call, "device") is not None:
        literal = _device(call)
        # A video reader on the GPU (the legacy ones have no other device) runs as the pipeline ran
        # it: next_epoch gets the pipeline's EvalContext (rules/pipeline_def.reader_needs_context).
        # Other GPU readers stay with a person until a GPU case checks them. (numpy's and FITS'
        # read through cuFile: on the GPU machine these cases run on, the original pipeline itself
        # fails with "CUFile import failed ... file descriptor is not registered", so no case
        # could check their conversion there; tried 2026-12-07.)
        gpu_video = literal == "gpu" and op.schema in video_outputs.SCHEMAS and "gpu" in op.devices
        if literal != "cpu" and not gpu_video:
            info.blockers.append(f"fn.{op.fn_name} with device= other than \"cpu\": convert by hand")


def _branch_blocker(info: PipelineInfo, body: list, index: int, branches: list, ops: dict) -> Optional[str]:
    """Why a reader chosen by the ``if`` at ``body[index]`` cannot be made once before the loop,
    or None. Its tests run once, where the pipeline ran them (when it was made), so they must not
    read what the graph computes; its branches must give the same outputs the same way."""
    first_test, first, first_gpu, first_line = branches[0]
    op = ops[id(first)]
    what = f"fn.{op.fn_name} chosen by `if {code(first_test)}:`"
    if branches[-1][0] is not None:
        return f"{what} has no `else`: without one the reader's outputs may be unbound; convert by hand"
    target = reader_target(first_line)
    for test, call, to_gpu, stmt in branches:
        other = ops.get(id(call))
        if other is None or not other.is_reader or other.schema != op.schema:
            return f"{what}: every branch must make the same reader (fn.{op.fn_name}); convert by hand"
        if not reader_target(stmt).deep_equals(target) or to_gpu != first_gpu:
            return f"{what}: every branch must assign the reader's outputs to the same names the same way; convert by hand"
        for key in ("device", "name"):
            a, b = kwarg(call, key), kwarg(first, key)
            if (a is None) != (b is None) or (a is not None and not a.value.deep_equals(b.value)):
                return f"{what}: the branches give the reader different {key}= values; convert by hand"
    graph: set = set()
    call_ids = set(ops)
    for stmt in body[:index]:
        if _contains_call(stmt, call_ids):
            graph |= _assigned_names(stmt)
    for test, *_ in branches:
        if test is not None and (names_in(test) & graph or _contains_call(test, call_ids)):
            return f"{what}: the test reads what the pipeline's operators computed; convert by hand"
    return None


def _device(call: cst.Call) -> Optional[str]:
    """The reader's device= where it is written as a string."""
    arg = kwarg(call, "device")
    return arg.value.evaluated_value if arg is not None and isinstance(arg.value, cst.SimpleString) else None


def _several_readers(info: PipelineInfo) -> None:
    """Several readers convert as a pipeline runs them: each gives one batch every iteration and
    goes on into its next epoch on its own (rules/pipeline_def.py reads them in turn, each from an
    endless stream of its epochs). What stops that is noted here."""
    from dali_migrate.rules.pipeline_def import needs_context

    # (a reader whose device= is not written "cpu" or "gpu" has a blocker of its own)
    on_gpu = [r for r in info.readers if needs_context(r.call) and _device(r.call) == "gpu"]
    if on_gpu:
        # native next_epoch keeps the context it ran in entered between its batches, and contexts
        # must be left in the order they were entered: two readers read in turn cannot both keep one
        info.blockers.append(
            f"fn.{on_gpu[0].op.fn_name} on the GPU beside another reader: DALI 2.4's next_epoch keeps the pipeline's "
            "EvalContext entered between batches, so two readers read in turn would leave their contexts out of order; "
            "convert by hand"
        )


def _classify(info: PipelineInfo, params: set) -> None:
    """Split the body into setup (runs once) and per-iteration statements.

    A statement is per-iteration when it calls a DALI operator or reads a name bound by such a
    statement. The reader runs once. A plain-Python statement that rebinds a name an earlier
    per-iteration statement read must stay in place, so it stays in the loop.
    """
    graph_names: set = set()
    read_by_graph: set = set()
    setup_names = set(params)
    call_ids = {id(c) for c, _ in info.op_calls}
    readers = info.reader_indices
    current = {id(node) for node, _ in info.current_reads}
    changed_after_read = False  # (reported once)
    loop_reads: set = set()  # names the loop reads before it binds them: the value they had before it
    loop_binds: set = set()
    for i, stmt in enumerate(info.statements):
        assigned = _assigned_names(stmt)
        if pipeline_current.reads_itself(stmt, current):
            info.self_reads.add(i)
        if i in readers:
            info.setup.add(i)
            graph_names |= assigned
            continue
        has_call = _contains_call(stmt, call_ids)
        used = names_in(stmt)
        is_graph = has_call or bool(used & graph_names) or bool(assigned & read_by_graph)
        # (a plain statement, per iteration only because it binds a name an operator read again)
        again = sorted(assigned & read_by_graph & setup_names) if not (has_call or used & graph_names) else []
        changed = sorted(_changed_in_place(stmt) & read_by_graph) if not is_graph else []
        if (again or changed) and not changed_after_read:
            changed_after_read = True
            # `size = 16; small = fn.resize(x, size=size); size *= 2`: the operator took the value
            # it had then; converted, the first binding runs once before the loop and the second
            # every iteration (16, 32, 64...), or a change in place runs before any operator
            info.blockers.append(
                f"`{(again or changed)[0]}` is changed after an operator read it, when the pipeline was built "
                "(the converted loop would not see the values it had then): give each value a name of its own, then convert")
        if is_graph:
            loop_reads |= _reads_before_binding(stmt) - loop_binds
            looped = sorted(assigned & setup_names & loop_reads)
            if looped and info.rebound_in_loop is None:
                # `size = fn.random.uniform(...) * size` (size a parameter): the pipeline computed it
                # once, from the parameter; the converted loop would compute it again each
                # iteration from the batch of the one before
                info.rebound_in_loop = (
                    f"`{looped[0]}` is read and then bound again by statements that run every iteration: the "
                    "converted loop would read the value of the iteration before from the second on; give the "
                    "new value a name of its own, then convert")
            loop_binds |= assigned
            graph_names |= assigned
            read_by_graph |= used
        else:
            info.setup.add(i)
            setup_names |= assigned
    info.setup_names = setup_names


def _reads_before_binding(stmt) -> set:
    """Names ``stmt`` may read before it binds them (a superset): an assignment's value, an
    augmented assignment's target, an ``if``'s test and what its branches read before they bind
    it, likewise a loop's or ``with``'s; any name other statements spell."""
    return _reads_in([stmt], set())


def _reads_in(stmts, bound: set) -> set:
    """What ``stmts``, run in order, may read before binding it; ``bound`` grows by what they
    surely bind."""
    out: set = set()
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    reads = names_in(small.value)
                    for t in small.targets:
                        reads |= _target_reads(t.target)
                elif isinstance(small, cst.AnnAssign):
                    reads = (names_in(small.value) if small.value is not None else set()) | _target_reads(small.target)
                else:
                    reads = names_in(small)
                out |= reads - bound
                bound |= _assigned_names(small)
        elif isinstance(stmt, cst.If):
            out |= names_in(stmt.test) - bound
            branches, node, has_else = [], stmt, False
            while True:
                branches.append(node.body.body)
                node = node.orelse
                if isinstance(node, cst.If):
                    out |= names_in(node.test) - bound
                    continue
                if isinstance(node, cst.Else):
                    branches.append(node.body.body)
                    has_else = True
                break
            after = []
            for body in branches:
                mine = set(bound)
                out |= _reads_in(body, mine)
                after.append(mine)
            if has_else:  # one of the branches runs
                bound |= set.intersection(*after)
        else:  # loops, with, try...: every name spelled, in any order
            out |= names_in(stmt) - bound
            if isinstance(stmt, cst.With):  # (a loop's body may not run, a try's may stop early)
                bound |= _assigned_names(stmt)
    return out


def _target_reads(target) -> set:
    """Names an assignment target reads (``w[i] = ...`` reads w and i; ``a, b = ...`` reads none)."""
    if isinstance(target, cst.Name):
        return set()
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_target_reads(e.value) for e in target.elements))
    if isinstance(target, cst.StarredElement):
        return _target_reads(target.value)
    return names_in(target)


def _changed_in_place(stmt) -> set:
    """Names whose object ``stmt`` changes without binding the name: ``w[0] = 10``,
    ``cfg.size = 2``, ``w[0] += 1``, ``w.append(1)`` (a mutating method, as a statement)."""
    out: set = set()
    if not isinstance(stmt, cst.SimpleStatementLine):
        return out
    for small in stmt.body:
        targets = []
        if isinstance(small, cst.Assign):
            targets = [t.target for t in small.targets]
        elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
            targets = [small.target]
        elif (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
              and isinstance(small.value.func, cst.Attribute) and small.value.func.attr.value in _MUTATORS):
            targets = [small.value.func]  # (the object the method is called on is what changes)
        for t in targets:
            if isinstance(t, (cst.Subscript, cst.Attribute)):
                base = t
                while isinstance(base, (cst.Subscript, cst.Attribute)):
                    base = base.value
                if isinstance(base, cst.Name):
                    out.add(base.value)
    return out


_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault",
                       "sort", "reverse", "add", "discard", "fill", "resize", "popitem"})


def _contains_call(stmt: cst.CSTNode, call_ids: set) -> bool:
    return any(type(n) is cst.Call and id(n) in call_ids for n in cst_walk.walk(stmt))


def _builtin_tuple_call(value, info: PipelineInfo) -> bool:
    """``tuple(<one positional argument>)``, with ``tuple`` the builtin (not a name the pipeline
    function binds: a parameter, an assignment)."""
    return (
        type(value) is cst.Call and type(value.func) is cst.Name and value.func.value == "tuple"
        and len(value.args) == 1 and value.args[0].keyword is None and not value.args[0].star
        and "tuple" not in _param_names(info.func.params)
        and not any("tuple" in _assigned_names(stmt) for stmt in info.statements)
    )


def _classify_return(info: PipelineInfo, catalog: Catalog, names: DaliNames) -> None:
    value = info.returned
    if value is None:
        return
    if isinstance(value, cst.List) and not _synthetic(info.decorator):
        # a Pipeline's define_graph may return a list (legacy.py makes it a tuple); @pipeline_def
        # takes the list as one output and refuses it at build: the converted loop would run
        # where the original never did
        info.blockers.append(
            "the pipeline returns a list, which @pipeline_def refuses at build (\"Illegal pipeline output "
            "type ... nested `DataNode`\"): return a tuple (`return a, b`) and check it runs, then convert"
        )
        return
    if isinstance(value, (cst.Tuple, cst.List)):
        if any(isinstance(e, cst.StarredElement) for e in value.elements):
            info.blockers.append("the pipeline returns a starred expression: convert by hand")
        info.returns_tuple = True
        return
    if _builtin_tuple_call(value, info):
        # `return tuple([labels, images] + [aug(images) for aug in augs])` (DALI's augmentation
        # gallery): a tuple, so each item is an output, however many the list holds
        info.returns_tuple = True
        return
    # One expression: one output, unless it is a multi-output operator's or reader's result.
    if isinstance(value, cst.Call):
        op = names.fn_op(value.func)
        info_op = catalog.fn(op) if op else None
        if info_op is not None and (info_op.num_outputs or 1) == 1 and not info_op.is_reader:
            info.returns_tuple = False
            return
        if info_op is None and names.fn_op(value.func) is None and not m.matches(value.func, m.Attribute()):
            info.blockers.append(f"cannot tell whether {code(value)} is one output or several: convert by hand")
            return
        info.returns_tuple = False
        return
    if isinstance(value, cst.Name):
        binding = _binding_of(info, value.value)
        if binding is None:
            from dali_migrate.rules.conditionals import returned_kind

            # last bound in an `if` (on data, with conditionals; else on Python values, such as a
            # `with pipe:` graph's `set_outputs` in each branch): every branch must agree
            kind = returned_kind(info, value.value, catalog, names)
            if kind is not None:
                info.returns_tuple = kind == "tuple"
                return
        if binding is None and _unpacked_from_operator(info, value.value, names):
            info.returns_tuple = False  # `files, labels = fn.readers.file(...)`: each name is one output
            return
        if binding is None:
            info.blockers.append(f"cannot tell whether `{value.value}` is one output or several: convert by hand")
            return
        kind = _alias_kind(info, value.value, binding, catalog, names) if isinstance(binding, cst.Name) else \
            _value_kind(binding, catalog, names, info)
        if kind is None:
            unknown_op = isinstance(binding, cst.Call) and names.fn_op(binding.func) is not None and catalog.fn(names.fn_op(binding.func)) is None
            if not unknown_op:  # an operator the catalog lacks has its own blocker, which says why
                info.blockers.append(f"cannot tell whether `{value.value}` is one output or several: convert by hand")
            return
        if kind == "tuple" and any(binding is c for r in info.readers for c in r.calls) and not _synthetic(info.decorator):
            # A reader's outputs are a list; @pipeline_def takes a returned list as one output and
            # refuses it at build (nested DataNode), where a Pipeline's define_graph took its items.
            info.blockers.append(
                f"the pipeline returns `{value.value}`, the list of a reader's outputs, which @pipeline_def refuses "
                f"at build (a nested DataNode): unpack the reader's outputs (`a, b = fn.readers...(...)`, "
                f"`return a, b`), then convert"
            )
            return
        info.returns_tuple = kind == "tuple"
        return
    # Arithmetic, attribute calls (.gpu()), subscripts: one DataNode.
    info.returns_tuple = False


def _synthetic(dec: cst.Decorator) -> bool:
    """Is this the decorator legacy.py gives a converted Pipeline subclass or `with pipe:` graph?"""
    from dali_migrate.legacy import SYNTHETIC_DECORATOR

    target = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
    return m.matches(target, m.Name(SYNTHETIC_DECORATOR))


def _unpacked_from_operator(info: PipelineInfo, name: str, names: DaliNames) -> bool:
    """Whether ``name`` is last bound, at the top level, by unpacking an operator's outputs
    (``files, labels = fn.readers.file(...)``): it then holds one of them, one DataNode."""
    at = _last_binding(info, name)
    last = info.statements[at] if at is not None else None
    if not (isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 and isinstance(last.body[0], cst.Assign)
            and len(last.body[0].targets) == 1):
        return False
    target, value = last.body[0].targets[0].target, last.body[0].value
    return (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, cst.Call) and names.fn_op(value.func) is not None
            and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements)
            and any(e.value.value == name for e in target.elements))


def _last_binding(info: PipelineInfo, name: str) -> Optional[int]:
    """Index of the last top-level statement of the pipeline that binds ``name``."""
    last = None
    for i, stmt in enumerate(info.statements):
        if name in _assigned_names(stmt):
            last = i
    return last


def _alias_kind(info: PipelineInfo, alias: str, source: cst.Name, catalog: Catalog, names: DaliNames,
                depth: int = 0) -> Optional[str]:
    """The kind of ``alias``, last bound as ``alias = source`` (``output = blured``): that of what
    ``source`` holds there, where every binding of ``source`` comes before that statement (one
    bound again later would hold something else by the return); None where that cannot be told."""
    at, src_at = _last_binding(info, alias), _last_binding(info, source.value)
    if at is None or src_at is None or src_at >= at or depth > 8:
        return None
    binding = _binding_of(info, source.value)
    if binding is None:
        return "single" if _unpacked_from_operator(info, source.value, names) else None
    if isinstance(binding, cst.Name):
        return _alias_kind(info, source.value, binding, catalog, names, depth + 1)
    return _value_kind(binding, catalog, names, info)


def _binding_of(info: PipelineInfo, name: str) -> Optional[cst.BaseExpression]:
    """The value last assigned to ``name`` by a simple top-level ``name = value``, if that is the only binding."""
    value = None
    count = 0
    for stmt in info.statements:
        if name not in _assigned_names(stmt):
            continue
        count += 1
        if (
            isinstance(stmt, cst.SimpleStatementLine)
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Assign)
            and len(stmt.body[0].targets) == 1
            and m.matches(stmt.body[0].targets[0].target, m.Name(name))
        ):
            value = stmt.body[0].value
        else:
            value = None
    return value if count >= 1 else None


def _value_kind(value: cst.BaseExpression, catalog: Catalog, names: DaliNames, info: PipelineInfo) -> Optional[str]:
    if isinstance(value, (cst.Tuple, cst.List)):
        return "tuple"
    if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)):
        return "single"
    if isinstance(value, cst.Call):
        op = names.fn_op(value.func)
        if op:
            op_info = catalog.fn(op)
            if op_info is None:
                return None
            if op_info.is_reader:
                # a reader of one output is unpacked in the converted loop (`for (x,) in ...`)
                return "single" if reader_outputs(value, op_info) == 1 else "tuple"
            return "single" if _call_outputs(value, op_info) == 1 else None
        if m.matches(value.func, m.Attribute(attr=m.Name("gpu") | m.Name("cpu"))):
            return "single"
        q = names.qualify(value.func)
        if q and q.startswith(MATH + "."):
            return "single"
    return None


def reader_outputs(call: cst.Call, op: OpInfo) -> Optional[int]:
    """How many outputs this reader call gives: fixed by the reader, or, for the video readers,
    told by the arguments as written (video_outputs.py); else None."""
    if op.num_outputs is not None:
        return op.num_outputs
    return video_outputs.count(call, op.schema) if op.schema in video_outputs.SCHEMAS else None


def _call_outputs(call: cst.Call, op: OpInfo) -> Optional[int]:
    """How many outputs this call gives, or None when its arguments may change the count: an
    argument that changes it (resize's save_attrs) counts only when given as its default literal."""
    if op.num_outputs is not None:
        return op.num_outputs
    if op.schema in video_outputs.SCHEMAS:
        # labels= adds an output or not depending on the source given: the probes cannot tell
        return video_outputs.count(call, op.schema)
    if op.default_num_outputs is None or any(arg.star == "**" for arg in call.args):
        return None
    defaults = dict(op.num_outputs_args)
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value not in defaults:
            continue
        default = defaults[arg.keyword.value]
        try:
            value = ast.literal_eval(code(arg.value))
        except (ValueError, TypeError, SyntaxError):  # not a literal: a DataNode, a variable...
            return None
        if default is None or type(value) is not type(default) or value != default:
            return None
    return op.default_num_outputs
