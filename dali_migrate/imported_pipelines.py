"""A pipeline one file of the project defines and another imports by name, converted with its uses there.

DALI's SSD example and most real projects split a loader in two: ``src/coco_pipeline.py`` defines
``COCOPipeline``, ``src/data.py`` does ``from src.coco_pipeline import COCOPipeline``, makes one and
gives it to ``DALIGenericIterator``. Converting a file at a time, the definition must stay
(outside_users.py, imported_elsewhere.py). Here both files convert together, where that is certain:

- the pipeline ``P`` is a module-level ``@pipeline_def`` function of file A (or a ``Pipeline``
  subclass the legacy path turns into one) that A's own analysis converts (every other definition
  of A that another file imports is held as before);
- every file of the project that imports ``P`` does so as ``from pkg.a import P`` or
  ``from .a import P`` at its top (no ``as``, no star, no notebook, no ``import pkg.a``), defines no
  other ``P``, is no definer of such a pipeline itself, and each of its uses of ``P`` is one the
  call-site rules convert: ``pipe = P(...)``, then only ``pipe.build()``, ``pipe.epoch_size(...)``
  and a PyTorch ``DALIGenericIterator`` / ``DALIClassificationIterator`` over ``pipe``, planned by
  the engine exactly as in-file uses are (``call_sites.plan`` with A's analysis of ``P``: its batch
  size, reader and settings) and converting in that file's analysis;
- whatever of A that rewrite writes into the importer B (the reader expression of ``reader_meta=``,
  a parameter's default, a decorator's batch size, ndd's name) means the same there: a name A
  imports is imported by B the same way, a name A defines is imported by B from A as ``P`` is (and
  A's conversion leaves it as it is), a builtin is not bound by B, ndd has one name in both; a
  reader argument computed inside the pipeline (a shard id) holds it;
- every file involved is converted by the same run (``Scope.files``).

The files involved are the connected group of definers and importers (a file that imports such a
pipeline from one file and is imported from by another holds the group). Each file's conversion
works the group out and analyses every file of it, with what the others would get, so every file
reaches the same decision on its own, also in worker processes; the decision is cached per
process. The texts are those read when the project was first read (``outside_users.Project``, read
by the runner before any file is written), so that a file converted earlier in the run is seen as
it was.

Where everything but the last holds, the run does not convert every file involved (pre-commit
passes only the changed files): converting one of them alone would break the other, so nothing
converts, A's pipeline keeps its marker, now saying to convert the files in one run, and B's import
of it gets one saying the same. Otherwise every file keeps today's behaviour.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import os
from typing import Optional

import libcst as cst

from dali_migrate import outside_users
from dali_migrate.cst_util import comment_tail
from dali_migrate.pipeline_analysis import SETTINGS
from dali_migrate.rules import external_source as external_source_rule, pipeline_current

RULE_ID = "imported-pipeline"
#: what the markers of pipelines held until one run converts both files say (each run writes them
#: again from what it finds: outside_users drops the ones an earlier run left)
ONE_RUN = "only where one run converts"
#: the call-site rules an importer's uses may need
ALLOWED_RULES = frozenset({
    "pipe-build", "pipe-epoch-size", "torch-iterator", "torch-iterator-batch-size", "torch-iterator-batch-size-arg",
    "torch-iterator-asked",
})
_ITERATORS = ("DALIGenericIterator", "DALIClassificationIterator")
#: the uses an importer's pipeline variable may have, by the rule that converts each
_USE_RULES = {"build": "pipe-build", "epoch_size": "pipe-epoch-size", "iterator": "torch-iterator"}


@dataclasses.dataclass(frozen=True, eq=False)
class Imported:
    """A pipeline of another file, for the engine's conversion of a file that imports it."""

    name: str
    source: str  # the defining file, relative to the project root
    info: object = None  # its PipelineInfo from that file's analysis (with ``imported_from``)
    reader_call: object = None  # its converted reader call there
    new_func: object = None
    #: why it is left as it is: then nothing is injected, and the import gets this marker
    held: Optional[str] = None


class Where(str):
    """An importer's description (outside_users.describe) for a pipeline held only because the run
    does not convert every file involved: ``one_run`` is the command that converts them together
    (imported_elsewhere.pipeline_reason says so)."""

    one_run: str = ""


def held_reason(where: str, one_run: str) -> str:
    """Why a pipeline is held in its own file although it could convert with its importers."""
    return (
        f"imported by {where}: it converts with its uses there {ONE_RUN} this file and the files that import it "
        f"(`{one_run}`); converted alone, one file would break the other"
    )


@dataclasses.dataclass(frozen=True)
class Cross:
    """What one file's conversion gets from the decision on its group."""

    imported: dict = dataclasses.field(default_factory=dict)  # name -> Imported, for the engine
    released: frozenset = frozenset()  # names of the file that convert with their importers' uses
    one_run: dict = dataclasses.field(default_factory=dict)  # name -> command, held until one run converts all

    def used(self, used: dict) -> dict:
        """outside_users.users's answer, less the released names (their importers convert with
        them); a name held only for the run gets its command (:class:`Where`)."""
        out = {}
        for name, where in used.items():
            if name in self.released:
                continue
            if name in self.one_run:
                where = Where(where)
                where.one_run = self.one_run[name]
            out[name] = where
        return out


NONE = Cross()


def inject(conv, pipelines: dict) -> None:
    """Engine hook (``_Converter.run_analysis``): the imported pipelines this file's uses convert
    with join its own, to be planned as they are; a held one marks its import."""
    for name, imp in conv.imported.items():
        if imp.held is not None:
            conv._mark(_import_statement(conv.module, name), RULE_ID, imp.held)
            # The import's marker says what to do, and goes when one run converts both files; the
            # iterator's "not converted" marker would stay there, stale, after that run converts it.
            conv.converted_statements |= _iterator_statements(conv.parents, name)
        elif name not in pipelines:
            pipelines[name] = (imp.info, imp.reader_call, imp.new_func)


def _iterator_statements(parents, name: str) -> set:
    """ids of the statements that give a PyTorch iterator the pipeline of a ``var = name(...)``."""
    found = set()
    for ref in parents.names(name):
        call = parents.of(ref)
        assign = parents.of(call)
        if not (isinstance(call, cst.Call) and call.func is ref and isinstance(assign, cst.Assign)
                and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)):
            continue
        var, scope = assign.targets[0].target.value, parents.scope(assign)
        for use in parents.names(var):
            if parents.scope(use) is not scope:
                continue
            holder = parents.of(use)
            if isinstance(holder, cst.Element):
                holder = parents.of(parents.of(holder))  # `[pipe]`
            it = parents.of(holder) if isinstance(holder, cst.Arg) else None
            if isinstance(it, cst.Call) and it.args and it.args[0] is holder and _iterator_name(_ast_func(it.func)):
                found.add(id(parents.statement(it)))
    return found


def _ast_func(func):
    """A cst callee as the ast-based :func:`_iterator_name` reads it."""
    if isinstance(func, cst.Attribute):
        return ast.Attribute(value=ast.Name("x"), attr=func.attr.value)
    return ast.Name(func.value) if isinstance(func, cst.Name) else None


def _import_statement(module: cst.Module, name: str):
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                    if any(a.asname is None and isinstance(a.name, cst.Name) and a.name.value == name for a in small.names):
                        return stmt
    return None


# ------------------------------------------------------------------------------------------------
# the steps of one file's conversion (outside_users.convert runs them; the decision mirrors them)
# ------------------------------------------------------------------------------------------------


def steps(run, text: str, path, scope, cross: Cross):
    """``run(used_elsewhere, imported) -> (output, x)`` as outside_users.convert calls it: once, then
    again with what other files import from this one held (but what ``cross`` releases). Returns
    the last (output, x)."""
    output, x = run({}, cross.imported)
    if output != text:
        changed = outside_users.changed_names(text, output)
        used = cross.used(outside_users.users(path, text, changed, scope) if changed else {})
        if used:
            output, x = run(used, cross.imported)
    return output, x


def _analyser(text: str, config):
    """A ``run`` for :func:`steps` that keeps the engine's converter (None where the file has no
    DALI code or does not parse)."""
    from dali_migrate import cst_walk, engine
    from dali_migrate.dali_imports import collect

    cut = comment_tail(text)
    try:
        module = cst.parse_module(text[:cut])
    except cst.ParserSyntaxError:
        module = None

    def run(used, imported):
        if module is None:
            return text, None
        with cst_walk.caching():
            names = collect(module)
            if not names.any_dali:
                return text, None
            with external_source_rule.imported_elsewhere(used):
                conv = engine._convert_with_legacy(module, names, config, used, imported)
                return conv.run() + text[cut:], conv

    return run


# ------------------------------------------------------------------------------------------------
# the group of files
# ------------------------------------------------------------------------------------------------


def _candidates(text: str) -> set:
    """Module-level names that may be pipelines (the analysis says which are)."""
    if "dali" not in text.lower():
        return set()
    tree = outside_users._parse(text)
    if tree is None:
        return set()
    found = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and any("pipeline_def" in ast.unparse(d) for d in stmt.decorator_list):
            found.add(stmt.name)
        elif isinstance(stmt, ast.ClassDef) and stmt.bases:
            found.add(stmt.name)
    return found


class _Index:
    """The project's files as first read, and which of them import which one's pipelines."""

    def __init__(self, project: outside_users.Project):
        self.project = project
        files = project._load()
        self.text = {path: text for path, _, text in files}
        self.rel = {path: rel for path, rel, _ in files}
        self.by_rel = {rel: path for path, rel, _ in files}
        self.defs = {path: c for path, _, text in files if path.endswith(".py") for c in [_candidates(text)] if c}
        self._links: dict = {}
        self._imports: Optional[dict] = None
        self.decisions: dict = {}  # (path, the run's files, config) -> Cross
        self.why: dict = {}  # path -> why its group stays as it is

    def links(self, path: str) -> dict:
        """{name: [Use]}: the files that import the file's candidate pipelines."""
        if path not in self._links:
            names = self.defs.get(path, set())
            self._links[path] = self.project.uses(path, names, names) if names else {}
        return self._links[path]

    def imported_from(self, path: str) -> set:
        """The definers whose candidates the file imports."""
        if self._imports is None:
            self._imports = {}
            for definer in self.defs:
                for uses in self.links(definer).values():
                    for use in uses:
                        self._imports.setdefault(self.by_rel.get(use.file), set()).add(definer)
        return self._imports.get(path, set())


_indexes: dict = {}  # project root -> _Index


def index(root: str) -> _Index:
    if root not in _indexes:
        _indexes[root] = _Index(outside_users.project(root))
    return _indexes[root]


def preload(paths, scope) -> None:
    """Read the projects of ``paths`` afresh before a run writes any file: every file's decision is
    then taken on the texts as they were (worker processes inherit them)."""
    for root in sorted({outside_users.project_root(p, scope) for p in paths}):
        outside_users._projects.pop(root, None)
        _indexes.pop(root, None)
        index(root)


def _group(idx: _Index, start: str):
    """(definers, importers) of the group holding ``start``."""
    definers, importers, seen, queue = set(), set(), {start}, [start]
    while queue:
        path = queue.pop()
        more = []
        if idx.links(path):
            definers.add(path)
            more += [idx.by_rel.get(u.file) for uses in idx.links(path).values() for u in uses]
        sources = idx.imported_from(path)
        if sources:
            importers.add(path)
            more += sorted(sources)
        for other in more:
            if other is not None and other not in seen:
                seen.add(other)
                queue.append(other)
    return definers, importers


# ------------------------------------------------------------------------------------------------
# the decision
# ------------------------------------------------------------------------------------------------


def cross(path, text: str, config, scope) -> Cross:
    """What the conversion of ``path`` (its text ``text``, own markers dropped) gets."""
    path = os.path.abspath(str(path))
    if scope is None or not (_candidates(text) or _may_import(text)):
        return NONE  # (the project is not read for it)
    try:
        idx = index(outside_users.project_root(path, scope))
    except OSError:
        return NONE
    if path not in idx.text:
        return NONE
    prefix = getattr(config, "marker_prefix", outside_users.MARKER_PREFIX)
    if outside_users._without_own_markers(idx.text[path], prefix) != text:
        return NONE  # changed since the project was read: the others decided on the old text
    key = (path, scope.files, config)
    if key not in idx.decisions:
        definers, importers = _group(idx, path)
        if not definers:
            idx.decisions[key] = NONE
        else:
            decided = _decide(idx, definers, importers, config, scope)
            for member in definers | importers:
                idx.decisions[(member, scope.files, config)] = decided.get(member, NONE)
    return idx.decisions[key]


class _No(Exception):
    """The group stays as it is (today's behaviour)."""


def _decide(idx: _Index, definers: set, importers: set, config, scope) -> dict:
    try:
        return _decide_or_raise(idx, definers, importers, config, scope)
    except _No as e:
        for path in definers | importers:
            idx.why[path] = str(e)  # (for tests and debugging: no marker says it, today's ones stay)
        return {}


def _decide_or_raise(idx: _Index, definers: set, importers: set, config, scope) -> dict:
    from dali_migrate.engine import mentions_dali

    prefix = getattr(config, "marker_prefix", outside_users.MARKER_PREFIX)
    texts = {p: outside_users._without_own_markers(idx.text[p], prefix) for p in definers | importers}
    if definers & importers:
        raise _No("a file imports such a pipeline and is imported from")
    links = {}  # importer -> {name: (definer, Use)}
    for definer in sorted(definers):
        for name, uses in idx.links(definer).items():
            for use in uses:
                importer = idx.by_rel.get(use.file)
                text = texts.get(importer, "")
                if importer is None or not (_supported(use, name, text) and mentions_dali(text) and _may_import(text)):
                    raise _No(f"{use.describe()}: not an import this module converts with")
                if name in links.setdefault(importer, {}):
                    raise _No("one import names pipelines of two files")
                links[importer][name] = (definer, use)
    released = {d: {name for name in idx.links(d)} for d in definers}
    for definer in definers:
        _no_unparsed_importer(idx, definer, released[definer])
    found: dict = {}  # name of definer's pipeline -> Imported (per definer)
    a_side: dict = {}  # definer -> (its converter, its output)
    for definer in sorted(definers):
        mine = Cross(released=frozenset(released[definer]))
        output, conv = steps(_analyser(texts[definer], config), texts[definer], definer, scope, mine)
        if conv is None:
            raise _No("the pipeline's file does not convert")
        a_side[definer] = (conv, output)
        for name in released[definer]:
            found[(definer, name)] = _imported(conv, name, idx.rel[definer])
    for importer in sorted(importers):
        imported = {name: found[(definer, name)] for name, (definer, _) in links[importer].items()}
        uses = _uses(texts[importer], set(imported))
        mine = Cross(imported=imported)
        output, conv = steps(_analyser(texts[importer], config), texts[importer], importer, scope, mine)
        if conv is None:
            raise _No("the importer does not convert")
        for name, imp in imported.items():
            definer = links[importer][name][0]
            rules = _check_uses(conv, imp, uses[name])
            _check_names(imp, a_side[definer], definer, texts[definer], conv, texts[importer], idx, importer,
                         links[importer][name][1], asked="torch-iterator-asked" in rules)
    files = definers | importers
    if scope.files is not None and files <= scope.files:
        out = {d: Cross(released=frozenset(released[d])) for d in definers}
        out.update({i: Cross(imported={n: found[(d, n)] for n, (d, _) in links[i].items()}) for i in importers})
        return out
    command = "dali-migrate convert " + " ".join(sorted(idx.rel[f] for f in files))
    out = {d: Cross(one_run={n: command for n in released[d]}) for d in definers}
    for i in importers:
        held = {}
        for name, (definer, _) in links[i].items():
            held[name] = Imported(name, idx.rel[definer], held=(
                f"{name}, defined in {idx.rel[definer]}, and its uses here convert {ONE_RUN} both files "
                f"(`{command}`); converted alone, one file would break the other"))
        out[i] = Cross(imported=held)
    return out


def _no_unparsed_importer(idx: _Index, definer: str, names: set) -> None:
    """_No where a file of the project that may import one of ``names`` from ``definer`` does not
    parse: its imports cannot be read (outside_users finds none there)."""
    module = definer[: -len(".py")].split(os.sep)[-1]
    if module == "__init__":
        module = definer.split(os.sep)[-2]
    for path, text in idx.text.items():
        if path == definer or not path.endswith(".py") or module not in text:
            continue
        if any(name in text for name in names) and outside_users._parse(text) is None:
            raise _No(f"{idx.rel[path]} may import {sorted(names)} but does not parse")


def _may_import(text: str) -> bool:
    """Whether the file may be an importer whose uses convert: it has the uses' words (the
    decision holds a group with an importer that has not)."""
    return "from " in text and any(word in text for word in (*_ITERATORS, ".build()", ".epoch_size("))


def _supported(use, name: str, text: str) -> bool:
    """``from pkg.a import P`` / ``from .a import P`` at the importer's top, in a .py file that
    binds ``P`` nowhere else."""
    if use.cell is not None or use.then is not None or not use.file.endswith(".py"):
        return False
    if not (use.text.startswith("from ") and use.text.endswith(f" import {name}")):
        return False
    tree = outside_users._parse(text)
    if tree is None:
        return False
    return _import_of(tree, use, name) is not None and len(_binding_sites(tree, name)) == 1


def _import_of(tree, use, name: str):
    """The importer's module-level ``from ... import name`` that ``use`` found (by its text: the
    line numbers are those of the file with its markers)."""
    top = [
        s for s in tree.body if isinstance(s, ast.ImportFrom)
        for a in s.names if a.name == name and outside_users._render_from(s, a) == use.text
    ]
    return top[0] if len(top) == 1 else None


def _imported(conv, name: str, source: str) -> Imported:
    """The pipeline as the definer's analysis converts it, or _No."""
    from dali_migrate import fed_inputs

    if name not in conv.converted or name not in conv.pipelines:
        raise _No(f"{name} does not convert in its own file")
    info, reader_call, new_func = conv.pipelines[name]
    if not any(stmt is info.func for stmt in conv.module.body):
        raise _No(f"{name} is not a module-level function there")
    if fed_inputs.is_fed(info) or any(op.fn_name == "external_source" for _, op in info.op_calls):
        raise _No(f"{name} has external sources")
    mine = copy.copy(info)  # (call_sites.plan takes the import of it for what it is)
    mine.__dict__["imported_from"] = source
    return Imported(name, source, info=mine, reader_call=reader_call, new_func=new_func)


# -- the importer's uses ------------------------------------------------------------------------


def _uses(text: str, names: set) -> dict:
    """{name: {rule id: how many uses}}: every use of each imported pipeline is ``var = P(...)``,
    ``var`` then only ``var.build()``, ``var.epoch_size(...)`` and the first argument (or the one
    element of the list that is) of a PyTorch iterator; else _No."""
    tree = outside_users._parse(text)
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    out = {}
    for name in names:
        counts = dict.fromkeys(_USE_RULES.values(), 0)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
                continue
            call = parents.get(id(node))
            assign = parents.get(id(call))
            if not (isinstance(call, ast.Call) and call.func is node and isinstance(assign, ast.Assign)
                    and assign.value is call and len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Name)):
                raise _No(f"{name} is used other than as `pipe = {name}(...)`")
            scope = _scope(assign, parents) or tree
            var = assign.targets[0].id
            for kind in _var_uses(scope, var, parents):
                counts[_USE_RULES[kind]] += 1
        out[name] = counts
    return out


def _scope(node, parents):
    cur = parents.get(id(node))
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        cur = parents.get(id(cur))
    return cur


def _var_uses(scope, var: str, parents) -> list:
    if len(_binding_sites(scope, var)) != 1:
        raise _No(f"`{var}` is bound more than once")
    kinds = []
    for node in ast.walk(scope):
        if not (isinstance(node, ast.Name) and node.id == var and isinstance(node.ctx, ast.Load)):
            continue
        up = parents.get(id(node))
        if isinstance(up, ast.Attribute) and up.attr in ("build", "epoch_size"):
            call = parents.get(id(up))
            if isinstance(call, ast.Call) and call.func is up:
                if up.attr == "epoch_size" or (not call.args and not call.keywords and isinstance(parents.get(id(call)), ast.Expr)):
                    kinds.append(up.attr)
                    continue
        holder = up
        if isinstance(up, (ast.List, ast.Tuple)) and len(up.elts) == 1:
            holder = parents.get(id(up))
            node = up
        if isinstance(holder, ast.Call) and holder.args and holder.args[0] is node and _iterator_name(holder.func):
            kinds.append("iterator")
            continue
        raise _No(f"`{var}` is used other than by build(), epoch_size() or a PyTorch iterator")
    return kinds


def _iterator_name(func) -> bool:
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return last in _ITERATORS


def _binding_sites(tree, name: str) -> list:
    """Every node of ``tree`` that binds ``name`` (an assignment, a parameter, a definition, an
    import, ``except ... as``, ``global``, a match capture...)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.append(node)
        elif isinstance(node, ast.arg) and node.arg == name:
            found.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            found.append(node)
        elif isinstance(node, ast.Import):
            found += [a for a in node.names if (a.asname or a.name.split(".")[0]) == name]
        elif isinstance(node, ast.ImportFrom):
            found += [a for a in node.names if (a.asname or a.name) == name or a.name == "*"]
        elif isinstance(node, ast.ExceptHandler) and node.name == name:
            found.append(node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            found.append(node)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name == name:
            found.append(node)
        elif isinstance(node, ast.MatchMapping) and node.rest == name:
            found.append(node)
    return found


def _check_uses(conv, imp: Imported, counts: dict) -> None:
    """The importer's analysis converts the pipeline's uses, each with the rule its form needs."""
    if imp.name not in conv.converted or conv._analysed is None:
        raise _No(f"{imp.name}'s uses do not convert in the importer")
    rules: dict = {}
    for rule, site in conv._analysed[0].values():
        if getattr(site, "pipeline", None) is imp.info:
            if rule.id not in ALLOWED_RULES:
                raise _No(f"{imp.name}'s uses need rule {rule.id}")
            rules[rule.id] = rules.get(rule.id, 0) + 1
    for rule_id, n in counts.items():
        if rules.get(rule_id, 0) != n:
            raise _No(f"{imp.name}: not every use is converted")
    return rules


# -- what the importer's rewrite takes from the definer -----------------------------------------


def _free(node) -> set:
    from dali_migrate import cst_walk

    return cst_walk.variables(node) if node is not None else set()


def _check_names(imp: Imported, a_side, definer: str, a_text: str, conv, b_text: str, idx: _Index,
                 importer: str, use, asked: bool = False) -> None:
    """Each name the rewrite of the importer's uses may take from the definer (the reader's
    arguments, the parameters' defaults, the decorator's settings; with ``asked``, what the
    pipeline's questions about the process read, asked again in the importer:
    shared_setup.asked_again) means the same there."""
    a_conv, a_output = a_side
    info = imp.info
    params = info.func.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    param_names = {p.name.value for p in every}
    from_call = set()  # names the call's arguments replace
    for reader_call in [imp.reader_call] if len(info.readers) < 2 else [r.converted for r in info.readers]:
        if reader_call is not None:
            from_call |= _free(reader_call)
    for value in info.computed_settings.values():
        from_call |= _free(value)
    local = (from_call - param_names) & (set(info.setup_names) - pipeline_current.self_read_names(info))
    if local and asked:
        # the importer asks them again with the pipeline's own statements: what those read
        from dali_migrate.shared_setup import NotShared, asked_reads

        try:
            from_call = (from_call - local) | asked_reads(info, local)
        except NotShared as e:
            raise _No(f"the reader reads {sorted(local)}, computed inside {imp.name} {e}") from None
    elif local:
        raise _No(f"the reader reads {sorted(local)}, computed inside {imp.name}")
    names = from_call - param_names - set(SETTINGS)
    for p in every:
        names |= _free(p.default)
    dec = info.decorator.decorator if info.decorator is not None else None
    if isinstance(dec, cst.Call):
        for arg in dec.args:
            # (a converted Pipeline subclass's settings read its parameters: the call's arguments)
            names |= _free(arg.value) - param_names
    a_tree, b_tree = outside_users._parse(a_text), outside_users._parse(b_text)
    a_top = outside_users._top_level(a_tree)
    changed = outside_users.changed_names(a_text, a_output)
    import_line = _import_of(b_tree, use, imp.name)
    for name in sorted(names):
        sites = _binding_sites(b_tree, name)
        if name == a_conv.ndd:
            if conv.ndd != name:
                raise _No(f"ndd is named {conv.ndd} in the importer, {name} in {imp.source}")
            continue
        whats = a_top.get(name, [])
        if not whats:  # a builtin
            if sites:
                raise _No(f"the importer binds `{name}`")
            continue
        if _rebound_later(a_tree, b_tree, name):
            # the definer's name then holds another value than the importer's copy of it took at
            # its import (`pipes.ROOT = ...`, `global ROOT` in a setter): the pipeline reads the one,
            # the rewrite written into the importer the other
            raise _No(f"`{name}` of {imp.source} may be assigned again after the importer imports it")
        top = [s for s in b_tree.body if isinstance(s, (ast.Import, ast.ImportFrom)) and name in outside_users.bindings(s)]
        if len(whats) != 1 or len(sites) != 1 or len(top) != 1:
            raise _No(f"`{name}` of {imp.source} is not seen in the importer")
        b_what = outside_users.bindings(top[0])[name]
        a_what = whats[0]
        if isinstance(a_what, tuple):
            same = _resolved(a_what, idx.rel[definer]) == _resolved(b_what, idx.rel[importer])
        else:
            same = (isinstance(top[0], ast.ImportFrom) and (top[0].level, top[0].module) == (import_line.level, import_line.module)
                    and b_what[-1] == name and name not in changed)
        if not same:
            raise _No(f"`{name}` of {imp.source} is not what the importer calls `{name}`")


def _rebound_later(a_tree, b_tree, name: str) -> bool:
    """May the definer's module-level ``name`` change after it is first bound: declared ``global``
    in one of its functions, or stored as an attribute of that name in either file (the module's
    ``pipes.ROOT = ...``; any object's counts, since which module the object is is not followed)."""
    for tree in (a_tree, b_tree):
        for node in ast.walk(tree):
            if tree is a_tree and isinstance(node, ast.Global) and name in node.names:
                return True
            if isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.ctx, (ast.Store, ast.Del)):
                return True
    return False


def _resolved(what: tuple, rel: str) -> tuple:
    """An import binding (outside_users.bindings) with a relative module made a path of the project."""
    if what[0] == "from" and what[1]:
        here = rel.split("/")[:-1]
        base = here[: len(here) - (what[1] - 1)] if what[1] - 1 <= len(here) else None
        if base is None:
            return ("unresolved", rel, what)
        return ("relative", tuple(base + (what[2].split(".") if what[2] else [])), what[3])
    return what
