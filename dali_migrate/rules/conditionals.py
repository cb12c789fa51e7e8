"""Pipelines with ``enable_conditionals=True``: their ``if`` statements, kept exactly.

In such a pipeline an ``if`` whose condition is DALI data is per sample: DALI splits every batch
the branches read by the condition (``fn._conditional.split``), traces both branches once, runs
each branch's operators on its own samples only, and merges what the branches assign back into
sample order (``fn._conditional.merge``). The conversion keeps that shape::

    if labels[0] == 0:                      def if_true(images):
        images = fn.flip(images)                images = ndd.flip(images)
                                                return images

                                            def if_false(images):
                                                return images

                                            images = per_sample_if(labels[0] == 0, if_true, if_false, images)

``per_sample_if`` is written into the converted file (it uses only ``Batch.select``, iteration and
``as_batch``, so the code runs on native ndd and on ``dali_migrate.runtime`` alike): it checks
the condition as DALI does (a scalar per sample, on the CPU), runs each branch on its samples
(not at all without any) and checks and merges the results. ``if not c`` swaps the branches
(``not`` reads a sample the way the split does); ``elif`` is an ``if`` in the else branch.

Converted only where the meaning is certainly the same; the pipeline gets a marker otherwise:

- inside a branch only operators whose per-sample result depends on that sample alone and on no
  random numbers, each with a data input (DALI runs an operator without one on the whole batch
  and splits its result); assignments and nested ``if`` s only; no Python calls (DALI runs a
  branch's Python code once, when it traces it; the converted branch runs every iteration);
- every name the code reads after the ``if`` is a batch in both branches (DALI makes a Python
  value assigned in a branch a constant batch; a name assigned in one branch only is an error);
- no ``if`` on data inside a loop; ``and`` / ``or`` on data, ``not`` on data outside an ``if``
  condition, conditional expressions and ``while`` on data are not converted (the last two raise
  in pipeline mode).

A condition on Python values runs once, when the pipeline is built; the converted loop evaluates
it every iteration. That is the same only if its value cannot change: a condition made of literals,
the pipeline's parameters, values computed once before the loop, module-level constants and pure
builtins (``len``, ``range``...) stays as written. Another condition of a statement of the loop's
top level (``if args.flip:``, ``if random.random() < p:``) is evaluated once, before the loop,
into a flag the ``if`` then tests; one nested deeper is marked.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import libcst as cst

from dali_migrate import cst_walk
from dali_migrate.cst_util import code, fresh_name
from dali_migrate.dali_imports import MATH
from dali_migrate.rules.base import PipelineRule

RULE = PipelineRule(
    id="conditionals",
    summary="enable_conditionals=True: an `if` on DALI data becomes per_sample_if(condition, if_true, if_false, batches...) "
            "(each branch on its own samples, results merged in sample order); Python conditions stay or are evaluated once before the loop",
    order=5,
)

HELPER = "per_sample_if"

# Operators whose result for one sample depends on other samples of the batch (or that are not
# plain operators at all): inside a branch they would see only the branch's samples.
_CROSS_SAMPLE = {
    "batch_permutation": "its permutation covers the batch it is given",
    "permute_batch": "it picks samples by their index in the batch",
    "pad": "it pads every sample to the largest one of the batch",
    "multi_paste": "it pastes from other samples of the batch",
    "python_function": "it is not converted",
    "torch_python_function": "it is not converted",
    "dl_tensor_python_function": "it is not converted",
    "external_source": "it feeds the batch",
}
# Builtins whose result depends only on their arguments: a call with values that never change gives
# the same result every iteration.
PURE_BUILTINS = frozenset({
    "len", "range", "int", "float", "bool", "str", "abs", "min", "max", "round", "tuple", "enumerate",
    "zip", "reversed", "sorted", "isinstance", "any", "all", "sum",
})
_LITERALS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)
_BATCH, _DATA, _PY = "batch", "data", "py"  # a DataNode / DALI data of another shape / plain Python


@dataclasses.dataclass
class _DataIf:
    """One ``if`` on data: what the branch functions take and give back."""

    node: cst.If
    test: cst.BaseExpression  # the predicate as written, ``not`` removed
    swapped: bool  # ``if not c``: the else branch runs where c is true
    inputs: list
    outputs: list


@dataclasses.dataclass
class _Hoist:
    """A top-level ``if``/``elif`` chain whose Python conditions are evaluated once, before the loop."""

    node: cst.If
    tests: list  # the chain's conditions, in order


@dataclasses.dataclass
class Plan:
    data_ifs: dict = dataclasses.field(default_factory=dict)  # id(If) -> _DataIf
    hoists: dict = dataclasses.field(default_factory=dict)  # id(top-level If) -> _Hoist

    @property
    def rewrites(self) -> bool:
        return bool(self.data_ifs or self.hoists)


# -- reading names ----------------------------------------------------------------------------


def _target_names(target: cst.BaseExpression) -> Optional[list]:
    """The names of an assignment target made of names only (``a`` or ``a, b``), else None."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        found = []
        for el in target.elements:
            if isinstance(el, cst.StarredElement):
                return None
            inner = _target_names(el.value)
            if inner is None:
                return None
            found.extend(inner)
        return found
    return None


def _bound(stmt: cst.CSTNode) -> set:
    from dali_migrate.pipeline_analysis import _assigned_names

    return _assigned_names(stmt)


def _reads_and_defs(stmt: cst.BaseStatement):
    """(names the statement may read, names it certainly binds), for liveness."""
    if isinstance(stmt, cst.SimpleStatementLine):
        reads, defs = set(), set()
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                reads |= cst_walk.variables(small.value) - defs
                for t in small.targets:
                    names = _target_names(t.target)
                    if names is None:
                        reads |= cst_walk.variables(t.target)
                    else:
                        defs |= set(names)
            elif isinstance(small, cst.AnnAssign) and small.value is not None and isinstance(small.target, cst.Name):
                reads |= cst_walk.variables(small.value) - defs
                defs.add(small.target.value)
            else:
                reads |= cst_walk.variables(small) - defs
        return reads, defs
    return cst_walk.variables(stmt), set()


def _live_before(stmts: list, live_out: set) -> set:
    """Names read by ``stmts`` (or live after them) before being certainly rebound."""
    live = set(live_out)
    for stmt in reversed(stmts):
        reads, defs = _reads_and_defs(stmt)
        live = (live - defs) | reads
    return live


# -- what is DALI data --------------------------------------------------------------------------


class _Kinds:
    """Decides whether an expression is DALI data, given what the names hold."""

    def __init__(self, names, catalog):
        self.names, self.catalog = names, catalog

    def op(self, call: cst.Call):
        path = self.names.fn_op(call.func)
        return (path, self.catalog.fn(path)) if path is not None else (None, None)

    def is_math(self, call: cst.Call) -> bool:
        q = self.names.qualify(call.func)
        return bool(q and q.startswith(MATH + "."))

    def of(self, expr: cst.BaseExpression, env: dict) -> str:
        tp = type(expr)
        if tp is cst.Name:
            return env.get(expr.value, _PY)
        if tp is cst.Call:
            path, op = self.op(expr)
            if path is not None:
                if op is None or op.is_reader:
                    return _DATA
                from dali_migrate.pipeline_analysis import _call_outputs

                return _BATCH if _call_outputs(expr, op) == 1 else _DATA
            if self.is_math(expr):
                return _BATCH
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("gpu", "cpu") and not expr.args:
                inner = self.of(expr.func.value, env)
                if inner != _PY:
                    return inner
            return self._any(expr, env)
        if tp in (cst.BinaryOperation, cst.Comparison) or (tp is cst.UnaryOperation and not isinstance(expr.operator, cst.Not)):
            parts = [self.of(p, env) for p in _operands(expr)]
            if _BATCH in parts:
                return _BATCH
            return _DATA if _DATA in parts else _PY
        if tp is cst.Subscript:
            value = self.of(expr.value, env)
            if value == _BATCH:
                return _BATCH
            return _DATA if value == _DATA or self._any(expr, env) != _PY else _PY
        return self._any(expr, env)

    def _any(self, node: cst.CSTNode, env: dict) -> str:
        """DALI data if anything in ``node`` is (a name holding data or an operator call)."""
        for sub in cst_walk.walk(node):
            if type(sub) is cst.Name and env.get(sub.value, _PY) != _PY:
                return _DATA
            if type(sub) is cst.Call and (self.op(sub)[0] is not None or self.is_math(sub)):
                return _DATA
        return _PY


def _operands(expr) -> list:
    if isinstance(expr, cst.BinaryOperation):
        return [expr.left, expr.right]
    if isinstance(expr, cst.Comparison):
        return [expr.left, *[c.comparator for c in expr.comparisons]]
    return [expr.expression]


# -- the analysis -------------------------------------------------------------------------------


class _Analysis:
    def __init__(self, info, names, catalog, module):
        from dali_migrate.pipeline_analysis import _param_names

        self.info, self.kinds = info, _Kinds(names, catalog)
        self.found: list = []  # (node, reason)
        self.plan = Plan()
        self.params = _param_names(info.func.params)
        self.constants, module_bound = _module_facts(module) if module is not None else (set(), set())
        self.shadowed = module_bound | _bound(info.func.body) | self.params
        self.bindings: dict = {}  # name -> indices of the top-level statements that bind it
        for i, stmt in enumerate(info.statements):
            for name in _bound(stmt):
                self.bindings.setdefault(name, []).append(i)

    def block(self, node, reason: str) -> None:
        self.found.append((node, reason))

    def blockers(self) -> list:
        """The reasons, each saying where: the line counted from the function's ``def`` (a line
        number of the file would change with the markers and imports above the function)."""
        if not self.found:
            return []
        from libcst.metadata import MetadataWrapper, PositionProvider

        func = self.info.func
        positions = MetadataWrapper(cst.Module(body=[func]), unsafe_skip_copy=True).resolve(PositionProvider)
        first = positions[func.name].start.line
        out = []
        for node, reason in self.found:
            pos = positions.get(node)
            where = f"line {pos.start.line - first + 1} of {func.name.value}()" if pos is not None else func.name.value + "()"
            text = f"{reason} ({where})"
            if text not in out:
                out.append(text)
        return out

    # names whose value is the same every iteration, seen from top-level statement ``index``
    def stable_at(self, index: int) -> set:
        info = self.info
        stable = set()
        for name in self.params | info.setup_names:
            where = self.bindings.get(name, [])
            if all(i in info.setup and i < index for i in where):
                stable.add(name)
        stable |= {c for c in self.constants if c not in self.bindings and c not in self.params}
        return stable

    def invariant(self, expr, stable: set) -> bool:
        """Made of literals, stable names, operators and pure builtins only."""
        tp = type(expr)
        if tp is cst.Name:
            return expr.value in ("True", "False", "None") or expr.value in stable
        if isinstance(expr, _LITERALS):
            return True
        if tp in (cst.UnaryOperation, cst.BinaryOperation, cst.Comparison):
            return all(self.invariant(p, stable) for p in _operands(expr))
        if tp is cst.BooleanOperation:
            return self.invariant(expr.left, stable) and self.invariant(expr.right, stable)
        if tp is cst.IfExp:
            return all(self.invariant(p, stable) for p in (expr.test, expr.body, expr.orelse))
        if tp in (cst.Tuple, cst.List, cst.Set):
            return all(not isinstance(e, cst.StarredElement) and self.invariant(e.value, stable) for e in expr.elements)
        if tp is cst.Call:
            return (
                isinstance(expr.func, cst.Name)
                and expr.func.value in PURE_BUILTINS
                and expr.func.value not in self.shadowed
                and all(not a.star and self.invariant(a.value, stable) for a in expr.args)
            )
        return False

    def hoistable(self, expr, index: int) -> bool:
        """Can be evaluated before the loop: reads no name the loop binds, binds none itself."""
        info = self.info
        for sub in cst_walk.walk(expr):
            if isinstance(sub, (cst.NamedExpr, cst.Yield, cst.Await)):
                return False
        for name in cst_walk.variables(expr):
            where = self.bindings.get(name, [])
            if not all(i in info.setup and i < index for i in where):
                return False
        return self.kinds._any(expr, self.env_top) == _PY

    # -- walking the body -------------------------------------------------------------------
    # Each statement is checked with: ``env`` (name -> what it holds now), ``stable`` (names whose
    # value is the same every iteration), ``live`` (names read after it), ``top`` (the index of the
    # top-level statement it is in), ``where``: "top" (a statement of the loop's top level),
    # "nested" (inside a Python if), "block" (inside a with/try), "loop" (inside a loop) or
    # "branch" (inside a branch of an if on data).
    def run(self) -> None:
        info = self.info
        env = {name: _PY for name in info.setup_names}
        self.env_top = env
        stmts = info.statements
        live_end = cst_walk.variables(info.returned) if info.returned is not None else set()
        from dali_migrate.pipeline_analysis import reader_target

        one_batch = {r.index: r.outputs == 1 or not isinstance(reader_target(stmts[r.index]), cst.Name)
                     for r in info.readers}
        for i, stmt in enumerate(stmts):
            if i in one_batch:
                # a name bound to all of a reader's outputs holds them all (next_epoch's tuple)
                for name in _bound(stmt):
                    env[name] = _BATCH if one_batch[i] else _DATA
            elif i in info.setup:
                for name in _bound(stmt):
                    env[name] = _PY
            else:
                live = _live_before(stmts[i + 1 :], live_end)
                self.statement(stmt, env, stable=self.stable_at(i), live=live, top=i, where="top")
        if info.returned is not None:
            self.expression(info.returned, env, self.stable_at(len(stmts)))

    def block_of(self, stmts: list, env: dict, *, stable, live, top, where) -> None:
        for k, stmt in enumerate(stmts):
            self.statement(stmt, env, stable=stable, live=_live_before(stmts[k + 1 :], live), top=top, where=where)

    def statement(self, stmt, env: dict, *, stable, live, top, where) -> None:
        """Check one statement of the loop and record how it changes what names hold."""
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small(small, env, stable, where == "branch")
            return
        if isinstance(stmt, cst.If):
            if self.kinds._any(stmt.test, env) != _PY:
                self.data_if(stmt, env, stable=stable, live=live, top=top, where=where)
            else:
                self.python_if(stmt, env, stable=stable, live=live, top=top, where=where)
            return
        if where == "branch":
            self.block(stmt, f"a `{type(stmt).__name__.lower()}` statement inside a branch of an `if` on DALI data: not converted automatically; convert by hand")
            return
        if isinstance(stmt, (cst.For, cst.While)):
            self.loop(stmt, env, stable=stable, live=live, top=top)
            return
        blocks = []
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                self.expression(item.item, env, stable)
            blocks = [stmt.body]
        elif isinstance(stmt, cst.Try):
            blocks = [stmt.body, *[h.body for h in stmt.handlers], *[b.body for b in (stmt.orelse, stmt.finalbody) if b is not None]]
        has_data = self.kinds._any(stmt, env) != _PY
        for body in blocks:
            self.block_of(list(body.body), dict(env), stable=stable, live=live | cst_walk.variables(stmt), top=top, where="block")
        for name in _bound(stmt):
            env[name] = _DATA if has_data else _PY

    def loop(self, stmt, env: dict, *, stable, live, top) -> None:
        head = stmt.test if isinstance(stmt, cst.While) else stmt.iter
        what = "`while` condition" if isinstance(stmt, cst.While) else "`for` iterable"
        inner = set(stable) - _bound(stmt)
        if self.kinds._any(head, env) != _PY:
            if isinstance(stmt, cst.While):
                self.block(stmt, "`while` on DALI data raises in pipeline mode (a DataNode has no truth value): fix the pipeline first")
            else:
                self.block(stmt, "a `for` loop over DALI data: not converted automatically; convert by hand")
        elif not self.invariant(head, stable):
            self.block(stmt, f"the {what} `{code(head)}` was evaluated when the pipeline was built; the converted loop would evaluate it every iteration: convert by hand")
        elif isinstance(stmt, cst.For):
            # the loop variables take the same values, in the same order, every iteration
            targets = set(_target_names(stmt.target) or [])
            if not targets & _bound(stmt.body):
                inner |= targets
        self.expression(head, env, stable)
        has_data = self.kinds._any(stmt, env) != _PY
        again = live | cst_walk.variables(stmt)  # a loop reads its own names again
        self.block_of(list(stmt.body.body), dict(env), stable=inner, live=again, top=top, where="loop")
        if stmt.orelse is not None:
            self.block_of(list(stmt.orelse.body.body), dict(env), stable=inner, live=live, top=top, where="loop")
        for name in _bound(stmt):
            env[name] = _DATA if has_data else _PY

    def small(self, small, env: dict, stable: set, in_branch: bool) -> None:
        if in_branch and not isinstance(small, (cst.Assign, cst.AugAssign, cst.Pass)):
            self.block(small, f"`{code(small)}` inside a branch of an `if` on DALI data: DALI runs it once, when it traces the branch; the converted branch would run it every iteration: convert by hand")
            return
        self.expression(small, env, stable)
        if in_branch:
            self.branch_calls(small, env)
        if isinstance(small, cst.Assign):
            kind = self.kinds.of(small.value, env)
            for t in small.targets:
                self.bind(t.target, small.value, kind, env)
        elif isinstance(small, cst.AugAssign):
            kind = self.kinds.of(cst.BinaryOperation(left=small.target, operator=cst.Add(), right=small.value), env)
            for name in _target_names(small.target) or []:
                env[name] = kind
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            self.bind(small.target, small.value, self.kinds.of(small.value, env), env)
        else:
            for name in _bound(small):
                env[name] = _DATA if self.kinds._any(small, env) != _PY else _PY

    def bind(self, target, value, kind: str, env: dict) -> None:
        names = _target_names(target)
        if names is None:
            return
        if isinstance(target, cst.Name):
            env[target.value] = kind
            return
        if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(names) and not any(
            isinstance(e, cst.StarredElement) for e in value.elements
        ):
            for name, el in zip(names, value.elements):
                env[name] = self.kinds.of(el.value, env)
            return
        if kind == _PY:
            for name in names:
                env[name] = _PY
            return
        one_each = False
        if isinstance(value, cst.Call):
            op = self.kinds.op(value)[1]
            if op is not None:
                from dali_migrate.pipeline_analysis import _call_outputs

                one_each = op.is_reader or _call_outputs(value, op) == len(names)
        for name in names:
            env[name] = _BATCH if one_each else _DATA

    def expression(self, node, env: dict, stable: set) -> None:
        """Conditional expressions and ``and``/``or``/``not`` in ``node`` (an ``if`` statement's own
        condition is checked by :meth:`python_if` / :meth:`data_if`)."""
        skip = (cst.Lambda, cst.FunctionDef, cst.ClassDef, cst.BaseCompoundStatement)
        for sub in cst_walk.walk(node, not_into=skip):
            if isinstance(sub, cst.IfExp):
                if self.kinds._any(sub.test, env) != _PY:
                    self.block(sub, f"`{code(sub)}`: a conditional expression on DALI data raises in pipeline mode (a DataNode has no truth value); use an `if` statement")
                elif not self.invariant(sub.test, stable):
                    self.block(sub, f"the condition `{code(sub.test)}` was evaluated when the pipeline was built; the converted loop would evaluate it every iteration: evaluate it once before the loop by hand")
            elif type(sub) is cst.Comparison and len(sub.comparisons) > 1 and self.kinds._any(sub, env) != _PY:
                # `1 <= lab < 2` is `(1 <= lab) and (lab < 2)`, sample by sample, in a pipeline; in
                # Python the first Batch is true, and the chain gives the last comparison alone
                self.block(sub, f"`{code(sub)}`: a chained comparison on DALI data is an `and` of its parts, sample by sample; write them out with `&`, or convert by hand")
            elif isinstance(sub, cst.CompIf) and self.kinds._any(sub.test, env) != _PY:
                self.block(sub, f"`{code(sub)}`: a comprehension's condition on DALI data raises in pipeline mode (a DataNode has no truth value)")
            elif isinstance(sub, cst.BooleanOperation) or (isinstance(sub, cst.UnaryOperation) and isinstance(sub.operator, cst.Not)):
                if self.kinds._any(sub, env) != _PY:
                    self.block(sub, f"`{code(sub)}`: `and`/`or`/`not` on DALI data work sample by sample with enable_conditionals=True; not converted automatically yet, convert by hand")
                elif not self.invariant(sub, stable):
                    self.block(sub, f"`{code(sub)}` was evaluated when the pipeline was built; the converted loop would evaluate it every iteration: evaluate it once before the loop by hand")

    def branch_calls(self, node, env: dict) -> None:
        """Calls inside a branch of an ``if`` on data: operators on the branch's samples only."""
        for sub in cst_walk.walk(node):
            if type(sub) is not cst.Call:
                continue
            path, op = self.kinds.op(sub)
            if path is None:
                if self.kinds.is_math(sub):
                    continue
                if isinstance(sub.func, cst.Attribute) and sub.func.attr.value in ("gpu", "cpu") and not sub.args:
                    continue
                self.block(sub, f"`{code(sub.func)}(...)` inside a branch of an `if` on DALI data: DALI runs a branch's Python code once, when it traces the branch; the converted branch would run it every iteration: convert by hand")
                continue
            if op is None:
                continue  # the pipeline is already blocked: an unknown operator
            name = op.fn_name
            if op.is_random:
                self.block(sub, f"fn.{name} inside a branch of an `if` on DALI data draws random numbers for that branch's samples only: not converted automatically yet, convert by hand")
            elif op.is_reader or name in _CROSS_SAMPLE or name.startswith(("_conditional.", "experimental.inputs.")):
                why = _CROSS_SAMPLE.get(name, "it is not a per-sample operator")
                self.block(sub, f"fn.{name} inside a branch of an `if` on DALI data would see only that branch's samples ({why}): convert by hand")
            elif name == "normalize" and not _literal_false(sub, "batch"):
                self.block(sub, "fn.normalize(batch=...) inside a branch of an `if` on DALI data: its statistics would cover that branch's samples only; convert by hand")
            elif not any(a.keyword is None and not a.star and self.kinds.of(a.value, env) == _BATCH for a in sub.args):
                self.block(sub, f"fn.{name} inside a branch of an `if` on DALI data has no data input: DALI runs it on the whole batch and splits its result; convert by hand")

    def python_if(self, stmt: cst.If, env: dict, *, stable, live, top, where) -> None:
        # The chain of Python conditions: `elif`s up to the first one on data (that one and what
        # follows are the last else branch).
        chain = [stmt]
        while isinstance(chain[-1].orelse, cst.If) and self.kinds._any(chain[-1].orelse.test, env) == _PY:
            chain.append(chain[-1].orelse)
        tests = [node.test for node in chain]
        for t in tests:
            self.expression(t, env, stable)
        bad = [t for t in tests if not self.invariant(t, stable)]
        if bad:
            if where != "top":
                self.block(bad[0], f"the condition `{code(bad[0])}` was evaluated when the pipeline was built; the converted loop would evaluate it every iteration: evaluate it once before the loop by hand")
            elif not all(self.hoistable(t, top) for t in tests):
                bad = [t for t in tests if not self.hoistable(t, top)]
                self.block(bad[0], f"the condition `{code(bad[0])}` reads values computed per iteration, but was evaluated once, when the pipeline was built: convert by hand")
            else:
                self.plan.hoists[id(stmt)] = _Hoist(node=stmt, tests=tests)
        inner_where = "branch" if where == "branch" else "nested"
        bodies = [list(node.body.body) for node in chain]
        last = chain[-1].orelse
        if isinstance(last, cst.If):
            bodies.append([last])
        else:
            bodies.append(list(last.body.body) if last is not None else [])
        results = []
        for body in bodies:
            inner = dict(env)
            self.block_of(body, inner, stable=stable, live=live, top=top, where=inner_where)
            results.append(inner)
        for name in set().union(*results):
            kinds = {r.get(name) for r in results}
            if len(kinds) == 1:
                env[name] = kinds.pop()
            else:
                env[name] = _DATA if kinds - {None, _PY} else _PY

    def data_if(self, stmt: cst.If, env: dict, *, stable, live, top, where) -> None:
        test, swapped = stmt.test, False
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, swapped = test.expression, not swapped
        header = f"`if {code(stmt.test)}:`"
        if where == "loop":
            self.block(stmt, f"{header} on DALI data inside a loop: not converted automatically; convert by hand")
        elif where == "block":
            self.block(stmt, f"{header} on DALI data inside a `with`/`try` block: not converted automatically; convert by hand")
        if isinstance(test, cst.BooleanOperation):
            self.block(stmt, f"{header}: `and`/`or` on DALI data work sample by sample; not converted automatically yet, convert by hand")
            for part in (test.left, test.right):
                self.expression(part, env, stable)
        else:
            if self.kinds.of(test, env) != _BATCH:
                self.block(stmt, f"{header}: cannot tell that the condition is one batch; convert by hand")
            self.expression(test, env, stable)
        if where == "branch":
            self.branch_calls(test, env)
        true_body, false_body = _branches(stmt, swapped)
        assigned = set()
        for s in (*true_body, *false_body):
            assigned |= _bound(s)
        outputs = sorted(assigned & live, key=lambda n: _first_use(stmt, n))
        ends = []
        for body in (true_body, false_body):
            inner = dict(env)
            self.block_of(body, inner, stable=stable, live=set(outputs), top=top, where="branch")
            ends.append((inner, set().union(*[_bound(s) for s in body])))
        not_batch = f"{header} gives `{{}}` a value that is not one DALI batch in a branch (DALI would make a Python value a constant batch): convert by hand"
        passthrough = set()
        for name in outputs:
            for inner, bound in ends:
                if name in bound:
                    if inner.get(name) != _BATCH:
                        self.block(stmt, not_batch.format(name))
                elif env.get(name) == _BATCH:
                    passthrough.add(name)
                elif name in env:
                    self.block(stmt, not_batch.format(name))
                else:
                    self.block(stmt, f"{header} sets `{name}` in one branch only and it is read after the `if` (DALI raises): give it a value in both branches")
        # A branch becomes a function: a name it binds is that function's own, so a value from
        # outside that it rebinds (not a batch handed in) would be unbound there until assigned.
        for name in sorted(assigned - set(outputs)):
            if (name in env or name in self.params or name in self.constants) and env.get(name) != _BATCH:
                self.block(stmt, f"a branch of {header} rebinds `{name}`, a value from outside the `if` that is not one DALI batch: convert by hand")
        reads = set()
        for s in (*true_body, *false_body):
            reads |= cst_walk.variables(s)
        inputs = []
        for name in sorted(reads | passthrough, key=lambda n: _first_use(stmt, n)):
            kind = env.get(name, _PY)
            if kind == _BATCH:
                inputs.append(name)
            elif kind == _DATA:
                self.block(stmt, f"a branch of {header} reads `{name}`, which is DALI data but not one batch: convert by hand")
        self.plan.data_ifs[id(stmt)] = _DataIf(node=stmt, test=test, swapped=swapped, inputs=inputs, outputs=outputs)
        for name in outputs:
            env[name] = _BATCH


def _branches(stmt: cst.If, swapped: bool):
    """The statements of the true and the false branch (an ``elif`` is an ``if`` in the else branch)."""
    true_body = list(stmt.body.body)
    if isinstance(stmt.orelse, cst.If):
        false_body = [stmt.orelse]
    elif isinstance(stmt.orelse, cst.Else):
        false_body = list(stmt.orelse.body.body)
    else:
        false_body = []
    return (false_body, true_body) if swapped else (true_body, false_body)


def _first_use(stmt, name) -> tuple:
    """Sort key: names in the order the ``if`` first spells them."""
    for i, sub in enumerate(cst_walk.walk(stmt)):
        if type(sub) is cst.Name and sub.value == name:
            return (i, name)
    return (1 << 30, name)


def _literal_false(call: cst.Call, name: str) -> bool:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return isinstance(a.value, cst.Name) and a.value.value == "False"
    return True


def _chain(stmt: cst.If) -> list:
    chain = [stmt]
    while isinstance(chain[-1].orelse, cst.If):
        chain.append(chain[-1].orelse)
    return chain


def _module_bound(module: cst.Module) -> set:
    """Names the module binds at its top level (a builtin of the same name is not the builtin)."""
    found = set()
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            found.add(stmt.name.value)
        else:
            found |= _bound(stmt)
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                    for alias in small.names:
                        found.add(alias.asname.name.value if alias.asname else code(alias.name).split(".")[0])
    return found


def _immutable_literal(expr) -> bool:
    if isinstance(expr, _LITERALS):
        return True
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False", "None")
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return isinstance(expr.expression, (cst.Integer, cst.Float))
    if isinstance(expr, cst.Tuple):
        return all(not isinstance(e, cst.StarredElement) and _immutable_literal(e.value) for e in expr.elements)
    return False


def _module_facts(module: cst.Module) -> tuple:
    """(_module_constants, _module_bound) of the module, worked out once per module: every pipeline
    with conditionals asks (the node is kept with the answer, so its id stays its own; neither set
    is changed by those who ask)."""
    hit = _facts_cache.get(id(module))
    if hit is not None and hit[0] is module:
        return hit[1]
    facts = (_module_constants(module), _module_bound(module))
    if len(_facts_cache) >= 4:
        _facts_cache.clear()  # a file's pipelines come together: older files are not asked about again
    _facts_cache[id(module)] = (module, facts)
    return facts


_facts_cache: dict = {}  # id(module) -> (module, _module_facts's answer)


def _module_constants(module: cst.Module) -> set:
    """Module-level names bound only by ``NAME = <immutable literal>`` and never declared ``global``."""
    literal, other = set(), set()
    for stmt in module.body:
        simple = (
            isinstance(stmt, cst.SimpleStatementLine)
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Assign)
            and len(stmt.body[0].targets) == 1
            and isinstance(stmt.body[0].targets[0].target, cst.Name)
        )
        if simple and _immutable_literal(stmt.body[0].value):
            literal.add(stmt.body[0].targets[0].target.value)
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            other.add(stmt.name.value)
        else:
            other |= _bound(stmt)
    for node in cst_walk.walk(module, not_into=(cst.BaseExpression,)):
        if isinstance(node, cst.Global):
            other |= {n.name.value for n in node.names}
    return literal - other


# -- the rule's entry points (called by the engine) ------------------------------------------------


def check(info, ctx, enabled: bool = True) -> None:
    """Add to ``info.blockers`` what stops an exact conversion; remember the plan for :func:`expand`."""
    if not info.conditionals or info.returned is None:
        return
    analysis = _Analysis(info, ctx.names, ctx.catalog, ctx.module)
    analysis.run()
    for reason in analysis.blockers():
        if reason not in info.blockers:
            info.blockers.append(reason)
    if analysis.plan.rewrites and not enabled:
        info.blockers.append(f"its conditionals need rule {RULE.id}, which is disabled")
    info.conditional_plan = analysis.plan


def expand(info, ctx) -> None:
    """Rewrite ``info.statements`` as planned by :func:`check` (before the operator rules run)."""
    plan = getattr(info, "conditional_plan", None)
    if plan is None or not plan.rewrites:
        return
    # Every pipeline of the file gets the same name: its ctx.taken holds the module's names only.
    helper = fresh_name(HELPER, ctx.taken)
    writer = _Writer(plan, ctx, helper)
    old = info.statements
    new: list = []
    setup: set = set()
    moved: dict = {}  # a reader's statement: old index -> new
    for i, stmt in enumerate(old):
        if i in info.reader_indices:
            moved[i] = len(new)
        if i in info.setup:
            setup.add(len(new))
            new.append(stmt)
            continue
        hoist = plan.hoists.get(id(stmt))
        if hoist is not None:
            flags, stmt = writer.hoist(hoist)
            for flag in flags:
                setup.add(len(new))
                info.setup_names.update(_bound(flag))
                new.append(flag)
        new.extend(writer.statement(stmt))
    info.statements = new
    info.setup = setup
    for reader in info.readers:
        reader.index = moved[reader.index]
    if plan.data_ifs:
        info.helpers[helper] = helper_source(helper, ctx.ndd)


class _Writer:
    def __init__(self, plan: Plan, ctx, helper: str):
        self.plan, self.ctx, self.helper = plan, ctx, helper

    def hoist(self, hoist: _Hoist):
        """``c1 = bool(t1)``, ``c2 = not c1 and bool(t2)``...: each test evaluated once, and only
        where the pipeline evaluated it (after the earlier ones were false)."""
        flags, names = [], []
        for test in hoist.tests:
            name = fresh_name(_flag_base(test), self.ctx.taken)
            value: cst.BaseExpression = cst.Call(func=cst.Name("bool"), args=[cst.Arg(test)])
            if _is_bool(test):
                value = test
            if names:
                earlier = cst.Name(names[0]) if len(names) == 1 else _paren(cst.parse_expression(" or ".join(names)))
                value = cst.BooleanOperation(
                    left=cst.UnaryOperation(operator=cst.Not(), expression=earlier),
                    operator=cst.And(),
                    right=_paren(value) if isinstance(value, cst.BooleanOperation) else value,
                )
            names.append(name)
            flags.append(cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=value)]))
        flags[0] = flags[0].with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(
            "# evaluated once, as when the pipeline was built"))])
        stmt = hoist.node
        nodes = _chain(stmt)[: len(hoist.tests)]

        def rebuild(k):
            node = nodes[k]
            orelse = rebuild(k + 1) if k + 1 < len(nodes) else node.orelse
            return node.with_changes(test=cst.Name(names[k]), orelse=orelse)

        return flags, rebuild(0)

    def block(self, stmts: list) -> list:
        out = []
        for stmt in stmts:
            out.extend(self.statement(stmt))
        return out

    def statement(self, stmt) -> list:
        if isinstance(stmt, cst.If):
            data_if = self.plan.data_ifs.get(id(stmt))
            if data_if is not None:
                return self.data_if(data_if)
            return [self.python_if(stmt)]
        return [stmt]  # an `if` to rewrite is never inside a loop, `with` or `try` (check() said so)

    def python_if(self, stmt: cst.If) -> cst.If:
        body = stmt.body.with_changes(body=_strip_leading_blank(self.block(list(stmt.body.body))))
        orelse = stmt.orelse
        if isinstance(orelse, cst.If):
            data_if = self.plan.data_ifs.get(id(orelse))
            if data_if is not None:
                orelse = cst.Else(body=cst.IndentedBlock(body=self.data_if(data_if)), leading_lines=orelse.leading_lines)
            else:
                orelse = self.python_if(orelse)
        elif isinstance(orelse, cst.Else):
            orelse = orelse.with_changes(body=orelse.body.with_changes(body=_strip_leading_blank(self.block(list(orelse.body.body)))))
        return stmt.with_changes(body=body, orelse=orelse)

    def data_if(self, d: _DataIf) -> list:
        stmt = d.node
        true_body, false_body = _branches(stmt, d.swapped)
        taken = self.ctx.taken
        names = [fresh_name("if_true", taken), fresh_name("if_false", taken)]
        defs = []
        for name, body in zip(names, (true_body, false_body)):
            inner = self.block(body)
            if d.outputs:
                value = cst.Name(d.outputs[0]) if len(d.outputs) == 1 else cst.Tuple(
                    [cst.Element(cst.Name(n)) for n in d.outputs], lpar=[], rpar=[])
                inner.append(cst.SimpleStatementLine(body=[cst.Return(value=value)]))
            elif not inner:
                inner.append(cst.SimpleStatementLine(body=[cst.Pass()]))
            inner = _strip_leading_blank(inner)
            defs.append(
                cst.FunctionDef(
                    name=cst.Name(name),
                    params=cst.Parameters(params=[cst.Param(cst.Name(n)) for n in d.inputs]),
                    body=cst.IndentedBlock(body=inner),
                    leading_lines=[_BLANK] if defs else [],
                )
            )
        lines = list(stmt.leading_lines)
        if not lines or lines[0].comment is not None:
            lines.insert(0, _BLANK)  # the branches stand apart from the code before them
        defs[0] = defs[0].with_changes(leading_lines=[*lines, *_header_comment(stmt)])
        call = cst.Call(
            func=cst.Name(self.helper),
            args=[cst.Arg(d.test), *[cst.Arg(cst.Name(n)) for n in names], *[cst.Arg(cst.Name(n)) for n in d.inputs]],
        )
        if d.outputs:
            target = cst.Name(d.outputs[0]) if len(d.outputs) == 1 else cst.Tuple(
                [cst.Element(cst.Name(n)) for n in d.outputs], lpar=[], rpar=[])
            line = cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(target)], value=call)])
        else:
            line = cst.SimpleStatementLine(body=[cst.Expr(call)])
        return [*defs, line.with_changes(leading_lines=[_BLANK])]


_BLANK = cst.EmptyLine(indent=False)


def _header_comment(stmt: cst.If) -> list:
    comment = stmt.body.header.comment if isinstance(stmt.body, cst.IndentedBlock) else None
    return [cst.EmptyLine(comment=comment)] if comment is not None else []


def _strip_leading_blank(body: list) -> list:
    if body and hasattr(body[0], "leading_lines"):
        lines = list(body[0].leading_lines)
        while lines and lines[0].comment is None:
            lines.pop(0)
        body = [body[0].with_changes(leading_lines=lines), *body[1:]]
    return body


def _paren(expr):
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _is_bool(expr) -> bool:
    return isinstance(expr, cst.Comparison) or (isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not))


def _flag_base(test) -> str:
    """``cond_flip`` for ``args.flip`` / ``flip`` / ``cfg["flip"]``, else ``condition``."""
    word = None
    if isinstance(test, cst.Attribute):
        word = test.attr.value
    elif isinstance(test, cst.Name):
        word = test.value
    else:  # the key of cfg["flip"] / cfg.get("flip")
        key = None
        if isinstance(test, cst.Subscript) and len(test.slice) == 1 and isinstance(test.slice[0].slice, cst.Index):
            key = test.slice[0].slice.value
        elif isinstance(test, cst.Call) and test.args and test.args[0].keyword is None:
            key = test.args[0].value
        if isinstance(key, cst.SimpleString) and isinstance(key.evaluated_value, str) and key.evaluated_value.isidentifier():
            word = key.evaluated_value
    return f"cond_{word}" if word else "condition"


def returned_kind(info, name: str, catalog, names) -> Optional[str]:
    """"single" / "tuple" for a returned name whose last binding is an ``if`` (None: cannot tell)."""
    from dali_migrate.pipeline_analysis import _value_kind

    def in_block(stmts: list, before: Optional[str]) -> Optional[str]:
        kind = before
        for stmt in stmts:
            if name not in _bound(stmt):
                continue
            kind = of_statement(stmt, kind)
        return kind

    def of_statement(stmt, before):
        if (
            isinstance(stmt, cst.SimpleStatementLine)
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Assign)
            and len(stmt.body[0].targets) == 1
            and isinstance(stmt.body[0].targets[0].target, cst.Name)
        ):
            return _value_kind(stmt.body[0].value, catalog, names, info)
        if isinstance(stmt, cst.If):
            kinds = {in_block(list(node.body.body), before) for node in _chain(stmt)}
            last = _chain(stmt)[-1].orelse
            kinds.add(in_block(list(last.body.body), before) if last is not None else before)
            return kinds.pop() if len(kinds) == 1 else None
        return None

    return in_block(info.statements, None)


def helper_source(name: str, ndd: str) -> str:
    return _HELPER_SOURCE.replace("per_sample_if", name).replace("ndd.", f"{ndd}.")


_HELPER_SOURCE = '''\
def per_sample_if(predicate, if_true, if_false, *batches):
    """An `if` on DALI data of a pipeline with enable_conditionals=True, sample by sample.

    The samples of ``batches`` whose ``predicate`` sample (a scalar on the CPU) is true go through
    ``if_true``, the others through ``if_false``: each branch runs on its own samples only, and not
    at all when it has none, as in the pipeline. What the branches return (a batch or a tuple of
    batches) is put back in sample order.
    """
    if predicate.device.device_type != "cpu":
        raise ValueError(
            "Conditions inside `if` statements are restricted to scalar (0-d tensors) inputs, that are "
            "placed on CPU. Got a GPU input as a condition of the `if` statement."
        )
    flags = []
    for sample in predicate:
        if sample.ndim != 0:
            raise ValueError(
                "Conditions inside `if` statements are restricted to scalar (0-d tensors) inputs, that are "
                f"placed on CPU. Got a {sample.ndim}-d input as a condition of the `if` statement."
            )
        flags.append(bool(sample.item()))

    def run(branch, side):
        picked = [i for i, flag in enumerate(flags) if flag is side]
        if not picked:
            return None
        if len(picked) == len(flags):
            return branch(*batches)
        # sample by sample: DALI 2.4's Batch.select(list) gives back the whole batch
        return branch(*[ndd.as_batch([batch.select(i) for i in picked]) for batch in batches])

    def merge(on_true, on_false):
        for what, a, b in (
            ("types", on_true.dtype, on_false.dtype),
            ("sample dimensions", on_true.ndim, on_false.ndim),
            ("layouts", on_true.layout or "", on_false.layout or ""),
            ("devices", on_true.device, on_false.device),
        ):
            if a != b:
                raise ValueError(
                    "Divergent data found in different branches of `if/else` control flow statement: "
                    f"the results are merged into one batch. Found distinct {what}: {a} and {b}."
                )
        samples = {True: iter(on_true), False: iter(on_false)}
        return ndd.as_batch([next(samples[flag]) for flag in flags])

    on_true, on_false = run(if_true, True), run(if_false, False)
    if on_false is None:
        return on_true
    if on_true is None:
        return on_false
    if isinstance(on_true, tuple):
        return tuple(merge(a, b) for a, b in zip(on_true, on_false))
    return merge(on_true, on_false)
'''
