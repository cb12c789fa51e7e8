"""Definitions that other files of the project import stay as they were (outside_users.py finds them).

The codemod converts a pipeline's uses only in the file that defines it (but for the imports
imported_pipelines.py converts in one run with the pipeline). A definition another
file imports (``from src.coco_pipeline import COCOPipeline``) is used there in pipeline mode, so
converting it here would break that file. Given ``{name: where it is imported}``
(``engine.convert_source(..., used_elsewhere=...)``), the engine leaves alone every pipeline
whose conversion would change such a definition, or a module-level definition it uses (``x =
make()`` where ``make`` returns a pipeline): the pipeline itself, a function that gets the pipeline
or its outputs and would be converted with it, a ``with pipe:`` graph inside an imported function,
a Pipeline subclass another one would be folded into. Helpers whose operators are written into a
converted pipeline stay defined (helper_inlining ``keep``), and so do imports other files take
from here. Each such definition gets a marker naming the importer.

Not kept: an imported function that only uses pipelines (``get_dali_train_loader()`` returning
the iterator over the pipeline it builds, a ``main()`` that runs one). Converted, it is called as
before and gives its caller what it gave (the iterator becomes the emitted class, with the same
surface), so it converts with what it uses (:func:`free_functions`).
"""

from __future__ import annotations

import bisect
from typing import Optional

import libcst as cst

from dali_migrate import call_sites, cst_walk, outside_users
from dali_migrate.cst_util import chain_root, code, names_bound, names_in
from dali_migrate.dali_imports import PIPELINE_CLASS
from dali_migrate.pipeline_analysis import helpers_with_ops
from dali_migrate.rules import jax_iterator, paddle_iterator, pipe_epoch_size, torch_iterator
from dali_migrate.rules import pipeline_def as pipeline_rule

RULE_ID = "imported-elsewhere"
_WHY = outside_users.WHY  # how an earlier run's markers of this kind are recognised


def pipeline_reason(name: str, via: str, where: str) -> str:
    """Why pipeline ``name`` is left as it is: ``via``, which its conversion would change, is imported."""
    one_run = getattr(where, "one_run", "")  # (imported_pipelines.Where: it converts with the importers' uses)
    if via == name and one_run:
        from dali_migrate.imported_pipelines import held_reason

        return held_reason(where, one_run)
    if via == name:
        return (
            f"imported by {where}, {_WHY}: converted here, it would break that code. Keep it as it is, or "
            f"convert it and its uses there together by hand"
        )
    return (
        f"`{via}`, which converting it would change, is imported by {where}, {_WHY}: converted here, it "
        f"could break that code. Keep it as it is, or convert both and the uses there together by hand"
    )


def kept_reason(where: str) -> str:
    return (
        f"kept as it is: imported by {where}, {_WHY}: changing it here could break that code. Keep it while "
        f"that code is in pipeline mode, or convert it there and here together by hand"
    )


def _is_main_guard(stmt) -> bool:
    if not isinstance(stmt, cst.If) or not isinstance(stmt.test, cst.Comparison):
        return False
    test = stmt.test
    return (
        isinstance(test.left, cst.Name) and test.left.value == "__name__" and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Equal)
        and isinstance(test.comparisons[0].comparator, cst.SimpleString)
        and test.comparisons[0].comparator.evaluated_value == "__main__"
    )


def bindings(stmt, imports: bool = True) -> set:
    """Names a module-level statement binds: as outside_users.bindings reads them."""
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return {stmt.name.value}
    found: set = set()
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                for t in small.targets:
                    found |= names_bound(t.target)
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                found |= names_bound(small.target)
            elif imports and isinstance(small, cst.Import):
                for a in small.names:
                    found.add(a.asname.name.value if a.asname else code(a.name).split(".")[0])
            elif imports and isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                for a in small.names:
                    found.add(a.asname.name.value if a.asname else code(a.name))
        return found
    if isinstance(stmt, (cst.If, cst.Try, cst.With, cst.For, cst.While)) and not _is_main_guard(stmt):
        if isinstance(stmt, cst.For):
            found |= names_bound(stmt.target)
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                if item.asname is not None:
                    found |= names_bound(item.asname.name)
        blocks = [stmt.body]
        orelse = getattr(stmt, "orelse", None)
        while orelse is not None:  # elif chains: If nodes in orelse
            blocks.append(orelse.body)
            orelse = getattr(orelse, "orelse", None) if isinstance(orelse, cst.If) else None
        blocks += [h.body for h in getattr(stmt, "handlers", ())]
        if getattr(stmt, "finalbody", None) is not None:
            blocks.append(stmt.finalbody.body)
        for block in blocks:
            for inner in getattr(block, "body", ()):
                found |= bindings(inner, imports)
    return found


def kept(module: cst.Module, used, opaque=frozenset()) -> dict:
    """{id(statement): (statement, imported name it serves)}: the module-level statements that bind
    an imported name, and those that bind a name they use, and so on. The statements of the names
    in ``opaque`` are kept, but what they use is not followed from them."""
    bound: dict = {}
    for stmt in module.body:
        for name in bindings(stmt):
            bound.setdefault(name, []).append(stmt)
    out: dict = {}
    queue = [(name, name) for name in sorted(used) if name in bound]
    seen = {name for name, _ in queue}
    while queue:
        name, via = queue.pop(0)
        for stmt in bound[name]:
            if id(stmt) in out:
                continue
            out[id(stmt)] = (stmt, via)
            if name in opaque:
                continue
            for read in sorted(names_in(stmt) & bound.keys()):
                if read not in seen:
                    seen.add(read)
                    queue.append((read, via))
    return out


def kept_names(module: cst.Module, used) -> frozenset:
    """Names bound by the statements :func:`kept` keeps (helpers among them stay defined).

    Asked before the pipelines are planned, so before :func:`free_functions` can tell which
    imported functions convert: an imported function that may be one stays defined, but what it
    uses is not kept for it. Where it then turns out not to be one, :func:`hold` keeps the
    pipelines it uses, and a helper of those is not written into them (nor dropped) at all."""
    if not used:
        return frozenset()
    opaque = {name for name in used if _may_be_free(module, name)}
    return frozenset(n for stmt, _ in kept(module, used, opaque).values() for n in bindings(stmt))


# ------------------------------------------------------------------------------------------------
# imported functions that only use pipelines
# ------------------------------------------------------------------------------------------------
#
# NVIDIA's image classification example: `dataloaders.py` defines the Pipeline subclass and
# `get_dali_train_loader(...)`, which builds it, wraps it in DALIClassificationIterator and returns
# the loader (and a step count); `main.py` imports the function and only iterates what it gets.
# Converting the file changes the function's body, not how it is called, and what it returns keeps
# its use: the iterator becomes the emitted class (DALIGenericIterator's surface: iteration,
# reset(), len(), size), the step count the same int. Such a function keeps nothing as it was for
# its importer: what it uses converts, and so does it. Whatever could reach the importer changed
# (the function's signature, a pipeline, its outputs or a value made from them returned, stored
# where the caller sees it, or a generator's items) keeps the function, and what it uses, as today.
# A class derived from DALI's iterator whose base becomes the emitted class (ColossalAI's loaders
# make their pipeline in __init__ and hand it to super().__init__) gives its instances the
# iterator's surface too: it counts as changed only where a method gives more away.

#: rules whose rewrite gives a value its user keeps using as it did: a framework iterator becomes
#: the emitted class of its framework, with the iterator's surface, and ``pipe.epoch_size(...)``
#: the reader's ``get_metadata()["epoch_size_padded"]``: the same int (a dict of them when no reader
#: is named), as the pipeline reports
_SAME_USE_RULES = frozenset({
    torch_iterator.RULE.id, paddle_iterator.RULE.id, jax_iterator.RULE.id, pipe_epoch_size.RULE.id,
})
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


def free_functions(conv, pipelines: dict, plans: dict) -> dict:
    """{name: FunctionDef} of the imported module-level functions whose conversion changes only
    their body and gives their callers what it gave them (see above)."""
    judge = _Judge(conv, pipelines, plans)
    return {name: _lone_function(conv.module, name) for name in sorted(conv.used_elsewhere) if judge.free(name)}


class _Judge:
    """Whether a module-level function is free, decided once per function: a function that a free
    one calls gives it what it gave, where that one is free too."""

    def __init__(self, conv, pipelines: dict, plans: dict):
        self.plans, self.pipelines = plans, pipelines
        self.changes = _Changes(conv.parents, pipelines, plans)
        self.reads = _Reads(conv, pipelines, self.changes, self)
        self.module, self.original = conv.module, conv.original
        self._verdicts: dict = {}

    def free(self, name: str) -> bool:
        if name not in self._verdicts:
            self._verdicts[name] = False  # (while it is judged: a recursive call is no proof)
            self._verdicts[name] = self._judge(name)
        return self._verdicts[name]

    def _judge(self, name: str) -> bool:
        func, original = _lone_function(self.module, name), _lone_function(self.original, name)
        if func is None or original is None or name in self.pipelines:
            return False
        return (
            _same_signature(original, func, self.changes)
            and not _handed_pipelines(func, self.plans)
            and _same_returns(original, func, self.changes)
            and _gives_nothing_of_pipelines(func, self.reads)
        )


def _lone_class(module: cst.Module, name: str):
    """The module-level ``class name`` when it is the module's only binding of ``name``, else None."""
    found = [stmt for stmt in module.body if name in bindings(stmt)]
    return found[0] if len(found) == 1 and isinstance(found[0], cst.ClassDef) else None


def _iterator_class(cls: cst.ClassDef, changes: "_Changes") -> bool:
    """A class derived from a DALI iterator whose base becomes the emitted class."""
    return len(cls.bases) == 1 and id(cls.bases[0]) in changes.iterator_bases


def _members_dirty(cls: cst.ClassDef, dirty, reads: "_Reads", outer) -> bool:
    """Whether a class derived from a DALI iterator that converts (:func:`_iterator_class`) gives
    more than the iterator's surface: a method that returns, or stores where it is seen (an
    attribute of ``self``), a pipeline, its outputs or a value made from them, or a class-level
    statement or keyword that reads one. Its ``super().__init__(pipe, ...)`` is the iterator call
    converted (a rewrite whose value is used as before): the pipeline it gets stays inside."""
    if any(dirty(k) for k in cls.keywords):
        return True
    for stmt in cls.body.body:
        if isinstance(stmt, cst.FunctionDef):
            if any(dirty(d.decorator) for d in stmt.decorators):
                return True
            inner = _Flow(stmt, reads, outer=outer)
            if inner.escapes() or any(inner.dirty(v) for v in _given(stmt)):
                return True
        elif dirty(stmt):
            return True
    return False


def _lone_function(module: cst.Module, name: str):
    """The module-level ``def name`` when it is the module's only binding of ``name``, else None."""
    found = [stmt for stmt in module.body if name in bindings(stmt)]
    return found[0] if len(found) == 1 and isinstance(found[0], cst.FunctionDef) else None


def _may_be_free(module: cst.Module, name: str) -> bool:
    """What :func:`free_functions` can tell before the pipelines are planned: a lone module-level
    function that does not yield."""
    func = _lone_function(module, name)
    return func is not None and not _yields(func)


def _yields(func: cst.FunctionDef) -> bool:
    """A generator: its caller gets what it yields, and its items are rarely what they were."""
    return any(isinstance(n, cst.Yield) for n in _own_nodes(func))


def _own_nodes(func: cst.FunctionDef):
    """The nodes of ``func``'s body, not those of the functions, lambdas and classes in it."""
    return cst_walk.walk(func.body, not_into=_SCOPES)


class _Changes:
    """Where the plans that may convert change the module the engine converts (conv.module):
    taken from every plan without blockers, so a superset of what converts in the end."""

    def __init__(self, parents, pipelines: dict, plans: dict):
        rule_of: dict = {}  # id(node) -> the rule that rewrites it, None for other changes
        for name, plan in plans.items():
            if plan.blockers:
                continue
            rule_of[id(pipelines[name][0].func)] = None
            rule_of.update(dict.fromkeys([*plan.drop_kwargs, *plan.none_kwargs]))
            rule_of.update({key: rule.id for key, (rule, _) in plan.rewrites.items()})
            rule_of.update({key: rule.id for key, (_, rule, _) in plan.shared_rewrites.items()})
        self.span = parents.span
        self.at = sorted(self.span[key][0] for key in rule_of if key in self.span)
        #: id(node) of the rewritten nodes whose new value is used as the old one was
        self.same_use = {key for key, rule in rule_of.items() if rule in _SAME_USE_RULES and key in self.span}
        #: id(base) of classes derived from a DALI iterator that get the emitted class as their base
        #: (iterator_subclasses.py): the class keeps the iterator's surface
        self.iterator_bases = {key for key, rule in rule_of.items() if rule is not None and rule.endswith("-base")}
        self._same_use_spans = sorted(self.span[key] for key in self.same_use)

    def within(self, node) -> list:
        """The positions (pre-order) of the changes in ``node``'s subtree."""
        lo, hi = self.span[id(node)]
        return self.at[bisect.bisect_left(self.at, lo):bisect.bisect_left(self.at, hi)]

    def only_same_use(self, node) -> bool:
        """Whether every change in ``node`` is a rewrite whose value is used as before, or inside one."""
        return all(any(lo <= pos < hi for lo, hi in self._same_use_spans) for pos in self.within(node))


def _same_signature(original: cst.FunctionDef, func: cst.FunctionDef, changes: _Changes) -> bool:
    """The importer calls it as before: decorators, parameters (defaults), annotations and
    ``async`` read the same before and after the conversion."""
    def header(f):
        return ([code(d) for d in f.decorators], code(f.params), code(f.returns) if f.returns else None,
                f.asynchronous is not None)

    parts = [*func.decorators, func.params, *([func.returns] if func.returns else [])]
    return header(original) == header(func) and not any(changes.within(part) for part in parts)


def _handed_pipelines(func: cst.FunctionDef, plans: dict) -> bool:
    """Whether a call in the file gives one of its parameters a pipeline, its outputs or a pipeline
    function: converted, it takes what the conversion makes of those, not what its importer passes."""
    return any(
        key[0] == id(func)
        for plan in plans.values()
        for key in [*plan.handoffs, *(alias.key for alias in plan.param_aliases)]
    )


def _returns(func: cst.FunctionDef) -> list:
    return [n for n in _own_nodes(func) if isinstance(n, cst.Return)]


def _same_returns(original: cst.FunctionDef, func: cst.FunctionDef, changes: _Changes) -> bool:
    """Its ``return`` statements read as written, but for rewrites whose value is used as before
    (an iterator, an epoch size): what the function gives its importer keeps its use."""
    before, after = _returns(original), _returns(func)
    return [code(r) for r in before] == [code(r) for r in after] and all(changes.only_same_use(r) for r in after)


def _gives_nothing_of_pipelines(func: cst.FunctionDef, reads: _Reads) -> bool:
    """It does not yield, and neither returns a pipeline, its outputs or a value made from them, nor
    stores one where its caller can see it."""
    if _yields(func):
        return False
    flow = _Flow(func, reads)
    return not flow.escapes() and not any(r.value is not None and flow.dirty(r.value) for r in _returns(func))


def _given(func: cst.FunctionDef) -> list:
    """What ``func`` gives its caller: the values of its ``return`` and ``yield`` expressions."""
    out = []
    for n in _own_nodes(func):
        if isinstance(n, cst.Return) and n.value is not None:
            out.append(n.value)
        elif isinstance(n, cst.Yield) and n.value is not None:
            out.append(n.value.item if isinstance(n.value, cst.From) else n.value)
    return out


def _root(node):
    """The name an attribute, subscript or call chain starts from (``a`` of ``a.b[0].c()``), or None."""
    node = chain_root(node)
    return node.value if isinstance(node, cst.Name) else None


class _Reads:
    """What a name that a function reads from the module stands for: a pipeline of the file, DALI's
    Pipeline class, or a module-level definition the conversion changes (or that uses one)."""

    def __init__(self, conv, pipelines: dict, changes: _Changes, judge: _Judge):
        self.module, self.names, self.changes, self.judge = conv.module, conv.names, changes, judge
        self.pipelines = set(pipelines)
        #: names the file's own module-level statements bind (not its imports): state an importer sees
        self.own = set().union(*(bindings(stmt, imports=False) for stmt in conv.module.body))
        self._changed: dict = {}

    def pipeline_class(self, node) -> bool:
        return self.names.qualify(node) in PIPELINE_CLASS

    def dirty(self, name: str) -> bool:
        """Whether the module-level ``name`` may be (or give) a pipeline, its outputs or a value made
        from them: a pipeline, or a definition the conversion changes, unless a free function."""
        if name in self.pipelines:
            return True
        if name not in self.own:
            return False  # an import or a builtin: the conversion leaves it as it is
        if name not in self._changed:
            changed = any(self.changes.within(stmt) for stmt, _ in kept(self.module, {name}).values())
            cls = _lone_class(self.module, name)
            if changed and cls is not None and _iterator_class(cls, self.changes):
                # its instances keep the iterator's surface, unless a method gives more away
                self._changed[name] = True  # (while it is judged)
                changed = _members_dirty(cls, self.expr_dirty, self, None)
            self._changed[name] = changed
        return self._changed[name] and not self.judge.free(name)

    def expr_dirty(self, expr) -> bool:
        """Whether a module-level (or class-level) expression reads a pipeline, DALI's Pipeline
        class or a name that is :func:`dirty`."""
        return any(
            isinstance(n, (cst.Name, cst.Attribute)) and self.pipeline_class(n)
            or isinstance(n, cst.Name) and self.dirty(n.value)
            for n in cst_walk.walk(expr)
        )


class _Flow:
    """One function's own code, flow-insensitively: which of its names may hold a pipeline, its
    outputs or a value made from them (``dirty``), and whether such a value leaves it other than
    by what it returns (``escapes``): stored into an attribute or item of something it does not own
    (a parameter, a module variable), given to a method of one (``store.append(out)``), assigned
    to a ``global``. A value given to a plain call (``print(out)``) or a method of an import
    (``plt.imshow``) stays the called code's business, as it is in a file nobody imports."""

    def __init__(self, func: cst.FunctionDef, reads: _Reads, outer: Optional[_Flow] = None):
        self.func, self.reads, self.outer = func, reads, outer
        p = func.params
        every = [*p.posonly_params, *p.params, *p.kwonly_params]
        self.params = {q.name.value for q in every}
        self.params |= {q.name.value for q in (p.star_arg, p.star_kwarg) if isinstance(q, cst.Param)}
        self.declared: set = set()  # global / nonlocal
        self.nested: dict = {}  # name -> FunctionDef or ClassDef defined in the body
        # (name, value or None); a parameter holds its default where the caller gives none
        self.binds: list = [(q.name.value, q.default) for q in every if q.default is not None]
        self._stores: list = []  # (root name or None, value) of attribute / item assignments
        self._calls: list = []  # (root name, call) of method calls
        for node in _own_nodes(func):
            self._collect(node)
        self.local = ({name for name, _ in self.binds} | self.nested.keys()) - self.declared
        self.out = self._route()  # values that leave by another way than return
        self._dirty: set = set()
        self._nested_dirty: dict = {}  # verdicts on nested functions, once _dirty is complete
        self._judging: set = set()
        self._settled = False
        self._spread()
        self._settled = True

    def _route(self) -> list:
        """Values put into something the function made make that dirty (binds); those put into
        anything else leave the function: the list of them."""
        out = []
        for root, value in self._stores:
            if root in self.local:
                self.binds.append((root, value))  # the container it made holds it now
            else:
                out.append(value)
        for root, call in self._calls:
            if id(call) in self.reads.changes.same_use:
                continue  # (an iterator made over the pipeline: converted, it keeps it as DALI's does)
            if root in self.local:
                self.binds.append((root, call))
            elif root in self.params or root in self.declared or root in self.reads.own or self.outer is not None:
                # (in a nested function, a method of anything not its own: the enclosing
                # function's containers too)
                out.extend(arg.value for arg in call.args)
        out.extend(value for name, value in self.binds if name in self.declared and value is not None)
        return out

    def _spread(self) -> None:
        """The names bound to a dirty value, to a fixed point (``b = a`` after ``a = pipe.run()``)."""
        grew = True
        while grew:
            grew = False
            for name, value in self.binds:
                if name not in self._dirty and value is not None and self.dirty(value):
                    self._dirty.add(name)
                    grew = True

    def _collect(self, node) -> None:
        """What one node of the body binds, declares, defines, stores or calls a method with."""
        if isinstance(node, cst.Assign):
            for t in node.targets:
                self._target(t.target, node.value)
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.NamedExpr)):
            if node.value is not None:
                self._target(node.target, node.value)
        elif isinstance(node, (cst.For, cst.CompFor)):
            self._target(node.target, node.iter)
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            self._target(node.asname.name, node.item)
        elif isinstance(node, cst.ExceptHandler) and node.name is not None:
            self._target(node.name.name, None)
        elif isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                bound = alias.asname.name if alias.asname else alias.name
                self.binds.append((code(bound).split(".")[0], None))
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            self.declared |= {n.name.value for n in node.names}
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            self.nested[node.name.value] = node
        elif isinstance(node, cst.Lambda):
            # its calls run whenever it is called: counted as the function's own
            for inner in cst_walk.walk(node.body):
                self._call(inner)
        else:
            self._call(node)

    def _call(self, node) -> None:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            root = _root(node.func.value)
            if root is not None:
                self._calls.append((root, node))

    def _target(self, target, value) -> None:
        if isinstance(target, cst.Name):
            self.binds.append((target.value, value))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._target(el.value, value)
        elif isinstance(target, cst.StarredElement):
            self._target(target.value, value)
        elif isinstance(target, (cst.Attribute, cst.Subscript)):
            self._stores.append((_root(target), value))

    # -- questions -------------------------------------------------------------------------
    def dirty(self, expr) -> bool:
        """Whether ``expr`` may be a pipeline, its outputs or a value made from them: it reads such
        a name, outside the rewrites whose value is used as before (an iterator over the pipeline,
        its epoch size)."""
        same_use = self.reads.changes.same_use
        stack = [expr]
        while stack:
            node = stack.pop()
            if id(node) in same_use:
                continue
            if isinstance(node, cst.Name):
                if self.reads.pipeline_class(node) or self.name_dirty(node.value):
                    return True
            elif isinstance(node, cst.Attribute):
                if self.reads.pipeline_class(node):
                    return True
                stack.append(node.value)  # (not the attribute's name)
            elif isinstance(node, cst.Arg):
                stack.append(node.value)  # (not the keyword)
            else:
                stack.extend(cst_walk.children_tuple(node))
        return False

    def name_dirty(self, name: str) -> bool:
        if name in self.reads.pipelines:
            return True
        if name in self.nested and name not in self.declared:
            return self._nested(name)
        if name in self.local:
            return name in self._dirty
        if name in self.params:
            return False
        if self.outer is not None and name not in self.declared:
            return self.outer.name_dirty(name)  # a closure reads the enclosing function's names
        return self.reads.dirty(name)

    def _nested(self, name: str) -> bool:
        """A function or class defined in the body: dirty where what it gives (or, for a class,
        anything it reads) may be, or where a value leaves it. It reads this function's names as
        they are when asked: a verdict is kept only once they are all known."""
        if name in self._nested_dirty:
            return self._nested_dirty[name]
        if name in self._judging:
            return True  # (recursion: assumed the worst while it is looked at)
        self._judging.add(name)
        node = self.nested[name]
        # (decorators and a class's bases are evaluated here, in this function)
        found = any(self.dirty(d.decorator) for d in node.decorators)
        if isinstance(node, cst.ClassDef) and _iterator_class(node, self.reads.changes):
            found = found or _members_dirty(node, self.dirty, self.reads, self)
        elif isinstance(node, cst.ClassDef):
            found = found or any(self.dirty(part) for part in (*node.bases, *node.keywords, node.body))
        else:
            inner = _Flow(node, self.reads, outer=self)
            found = found or inner.escapes() or any(inner.dirty(v) for v in _given(node))
        self._judging.discard(name)
        if self._settled:
            self._nested_dirty[name] = found
        return found

    def escapes(self) -> bool:
        """Whether such a value leaves by another way than what the function gives (a function or
        class defined in it that gives one may be handed on, or called where it stores one)."""
        return any(self.dirty(v) for v in self.out) or any(self._nested(name) for name in self.nested)


def hold(conv, pipelines: dict, plans: dict) -> None:
    """Take out of ``plans`` the pipelines whose conversion would change a kept statement; each is
    left with the reason (``conv.reasons``, and a marker on a ``@pipeline_def`` function). An
    imported function that only uses pipelines (:func:`free_functions`) keeps nothing: it converts
    with what it uses."""
    used = conv.used_elsewhere
    if not used or not plans:
        return
    free = free_functions(conv, pipelines, plans)
    held = _held(conv, pipelines, plans, used.keys() - free.keys())
    if held:
        reasons = {name: pipeline_reason(name, via, used[via]) for name, via in held.items()}
        for name, reason in reasons.items():
            plans[name].blockers.append((None, reason))
        call_sites._share_blockers(plans)  # pipelines converted only together with a held one stay too
        for name, reason in reasons.items():
            del plans[name]
            conv.left += 1
            conv.reasons[name] = [reason]
            conv._mark(pipelines[name][0].func, pipeline_rule.RULE.id, f"pipeline not converted: {reason}")
    # For mark(), which runs after the analysis: {name: whether what converts changes it}. (An
    # attribute of its own: the engine's converter is another module's, and knows nothing of it.)
    changes = _Changes(conv.parents, pipelines, plans)
    conv.imported_free = {name: bool(changes.within(func)) for name, func in free.items()}


def _held(conv, pipelines: dict, plans: dict, roots) -> dict:
    """{pipeline: the imported name it is held for}: the pipelines whose conversion would change a
    statement kept for ``roots``."""
    statements = kept(conv.module, roots)
    span = conv.parents.span
    ranges = [(span[key][0], span[key][1], via) for key, (_, via) in statements.items() if key in span]

    def via_of(node_id):
        where = span.get(node_id)
        if where is None:
            return None
        return next((via for lo, hi, via in ranges if lo <= where[0] < hi), None)

    originals = {s.name.value: s for s in conv.original.body if isinstance(s, cst.ClassDef)}
    # what the file as written keeps: a base class that converting a subclass folds away is gone
    # from conv.module
    original_via = {
        n: via for stmt, via in kept(conv.original, roots).values() for n in bindings(stmt)
    } if originals else {}
    held: dict = {}
    for name, plan in plans.items():
        if plan.blockers:
            continue  # not converted anyway: its own reasons say why
        info = pipelines[name][0]
        touched = [id(info.func), *plan.rewrites, *plan.drop_kwargs, *plan.none_kwargs, *plan.shared_rewrites]
        via = next((v for v in map(via_of, touched) if v is not None), None)
        if via is None and name in originals:
            via = _kept_base(originals[name], originals, original_via)
        if via is not None:
            held[name] = via
    return held


def _kept_base(cls: cst.ClassDef, classes: dict, original_via: dict):
    """The imported name that a kept base class of ``cls`` in this file serves: converting ``cls``
    folds its bases into it, and a base nothing else extends then goes."""
    seen: set = set()
    stack = [cls]
    while stack:
        for b in stack.pop().bases:
            base = code(b.value)
            if base in seen or base not in classes:
                continue
            seen.add(base)
            if base in original_via:
                return original_via[base]
            stack.append(classes[base])
    return None


def mark(conv) -> None:
    """A marker on each imported definition of the module (unless its pipeline marker names the
    importer already). Imports are not marked: they are kept, and need no one; nor are the free
    functions, but a helper left in pipeline mode for its importer."""
    used = conv.used_elsewhere
    if not used:
        return
    free = getattr(conv, "imported_free", {})  # (hold() found them; none where it had no plans)
    for stmt in conv.module.body:
        for name in sorted(bindings(stmt, imports=False) & used.keys()):
            if name in free and not _left_in_pipeline_mode(conv, stmt, free[name]):
                continue  # it converts, and its importer keeps working
            where = used[name]
            if any(where in reason for _, reason in conv.marks.get(id(stmt), [])):
                continue
            conv._mark(stmt, RULE_ID, kept_reason(where))


def _left_in_pipeline_mode(conv, func: cst.FunctionDef, changed: bool) -> bool:
    """Whether a free function is left as pipeline-mode DALI code for its importer: a helper whose
    operators are written into a converted pipeline stays defined, unchanged, for it. One that
    converts, or that calls no operator (a ``main()`` whose pipeline stays for another reason),
    needs no one: its importer gets what it got."""
    return not changed and func.name.value in helpers_with_ops(conv.module, conv.names)
