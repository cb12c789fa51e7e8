"""Convert one source text. Pure: no file I/O here (see files.py and runner.py for that).

Order of work: find DALI names; analyse every ``@pipeline_def`` function; plan the rewrite of its
uses in the file; anything that stops a pipeline's conversion leaves that pipeline and its uses as
they were, with markers; then apply everything in one transformer pass and fix the imports.
"""

from __future__ import annotations

import ast
import builtins
import copy
import gc
import re
from typing import NamedTuple, Optional

import libcst as cst
from dali_migrate import match as m

from dali_migrate import call_sites, cst_walk, fed_inputs, helper_inlining, hidden_globals, imported_elsewhere, imported_pipelines, legacy, markers, parents as parents_mod, rules as rules_mod, templates, tf_consumers
from dali_migrate.catalog import load as load_catalog
from dali_migrate.config import Config
from dali_migrate.cst_util import code, comment_tail, fresh_name, names_in, with_kwarg, without_kwargs
from dali_migrate.dali_imports import FN, MATH, collect
from dali_migrate.model import ConversionError, ConversionResult
from dali_migrate.pipeline_analysis import (
    SETTINGS, TYPES_CONSTANT, analyze, helper_blocker, helpers_with_ops, pipeline_decorator, reader_branches, reader_statement_call)
from dali_migrate.pipeline_context import PipelineContext
from dali_migrate.rules import build_time_calls
from dali_migrate.rules import conditionals as conditionals_rule
from dali_migrate.rules import arithmetic_device, data_subscript, pipeline_current
from dali_migrate.rules import external_source as external_source_rule
from dali_migrate.rules import pipe_run as pipe_run_rule
from dali_migrate.rules import pipeline_def as pipeline_rule
from dali_migrate.rules.base import SUPERSET_SUFFIX, CallSiteRule, DetectorRule, OpCallRule

#: names a variable the conversion makes must not take (see _build_time_calls)
_BUILTIN_NAMES = frozenset(n for n in dir(builtins) if not n.startswith("_"))

# Cheap text test run before any parsing: a file that never says "dali" cannot import it.
_DALI_WORD = re.compile(r"dali", re.IGNORECASE)


def mentions_dali(text: str) -> bool:
    return _DALI_WORD.search(text) is not None


def output_syntax_error(source: str, output: str) -> Optional[int]:
    """None if ``output`` parses; else the line where it does not (0: no line known).

    Python's own parser (C, a tenth of libcst's time) decides, unless it rejects the input too:
    code newer than this interpreter, which libcst then judges as it judged the input."""
    try:
        compile(output, "<output>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        return None
    except SyntaxError as e:
        line = e.lineno or 0
    except (ValueError, RecursionError, MemoryError):
        line = 0
    try:
        compile(source, "<input>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        return line  # the input was valid Python here, the output is not
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    try:
        cst.parse_module(output)
    except cst.ParserSyntaxError as e:
        return e.raw_line or 0
    return None


def _enabled(config: Config) -> Optional[frozenset]:
    return config.enabled_rules


def _on(rule, enabled) -> bool:
    return enabled is None or rule.id in enabled


def convert_source(source: str, *, path: str = "<string>", config: Optional[Config] = None,
                   used_elsewhere: Optional[dict] = None, imported: Optional[dict] = None) -> ConversionResult:
    """Return the converted text and the markers left. Raises ConversionError if it does not parse.

    ``used_elsewhere``: {module-level name: where another file imports it}; what those names
    define is left as it was (imported_elsewhere.py). ``imported``: {name: imported_pipelines.Imported},
    pipelines another file of the project defines whose uses here convert with them."""
    # Python's cycle collector is paused for the conversion (issue 6): a conversion keeps every
    # tree it makes alive until it ends, so each collection only walks, and moves to an older
    # generation, nodes that are all still in use; that was about a third of a conversion's time.
    # The few cycles a conversion leaves are collected once the collector runs again.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _convert_source(source, path=path, config=config, used_elsewhere=used_elsewhere, imported=imported)
    finally:
        if enabled:  # (left off if the caller had turned it off, or a nested call is still running)
            gc.enable()


def _convert_source(source: str, *, path: str, config: Optional[Config], used_elsewhere: Optional[dict],
                    imported: Optional[dict] = None) -> ConversionResult:
    config = config or Config()
    cut = comment_tail(source)
    try:
        module = cst.parse_module(source[:cut])
    except cst.ParserSyntaxError as e:
        raise ConversionError(f"does not parse: {e.message}", line=e.raw_line) from None
    with cst_walk.caching():  # what is learnt about the file's nodes lives as long as this conversion
        names = collect(module)  # (its walk's children are kept for the conversion's next walks)
        if not names.any_dali:
            return ConversionResult(source=source, output=source, markers=markers.scan(source, config.marker_prefix))
        with external_source_rule.imported_elsewhere(used_elsewhere):
            converter = _convert_with_legacy(module, names, config, used_elsewhere or {}, imported)
            output = converter.run() + source[cut:]
    return ConversionResult(
        source=source,
        output=output,
        markers=markers.scan(output, config.marker_prefix),
        rewrites=converter.rewrites,
        pipelines_converted=len(converter.converted.keys() - converter.imported.keys()),
        pipelines_left=converter.left,
    )


def _convert_with_legacy(module: cst.Module, names, config: Config, used_elsewhere: Optional[dict] = None,
                         imported: Optional[dict] = None) -> "_Converter":
    """Legacy pipelines (``with pipe:``, Pipeline subclasses) are tried as synthesized @pipeline_def
    functions; each one that does not then convert completely is put back as it was, with the
    reasons, and the file is converted again without it."""
    names.aliases.setdefault(legacy.SYNTHETIC_FN, FN)
    catalog = load_catalog()
    skip: set = set()
    not_inlined: set = set()  # pipelines that keep their helper calls (they did not convert with them inlined)
    kept_hidden: set = set()  # pipelines that read a module variable as written (they did not convert through globals())
    tried: dict = {}  # such a pipeline -> (helpers, why it did not convert with them inlined)
    reasons: dict = {}  # name -> (anchor, [reasons])
    spelled = names_in(module)  # the file's names, read once; each pass gets a copy to add to
    keep = imported_elsewhere.kept_names(module, used_elsewhere)  # other files import these
    while True:
        normalized, found = legacy.normalize(module, names, catalog, set(spelled), skip)
        renamed: dict = {}
        normalized, inlined, cannot_inline = helper_inlining.inline(normalized, names, not_inlined, keep, renamed)
        normalized, unhidden = hidden_globals.rewrite(normalized, names, kept_hidden)
        converter = _Converter(normalized, names, config, original=module)
        converter.cannot_inline = cannot_inline
        converter.used_elsewhere = used_elsewhere or {}
        converter.imported = imported or {}
        converter.run_analysis()
        failed = [
            item for item in found
            if item.name not in skip and (item.reason or item.name not in converter.converted)
        ]
        undo = {name for name in inlined if name not in converter.converted}
        for name in undo:
            tried[name] = (inlined[name], [_as_written(r, renamed.get(name, {})) for r in converter.reasons.get(name, [])])
        not_inlined |= undo
        undo_hidden = {name for name in unhidden if name not in converter.converted}
        kept_hidden |= undo_hidden
        if not failed:
            if undo or undo_hidden:
                continue
            break
        for item in failed:
            skip.add(item.name)
            why = [item.reason] if item.reason else converter.reasons.get(item.name, [])
            reasons[item.name] = (item, why or ["its uses in this file could not be followed"])
        if not undo and not undo_hidden and all(item.reason for item in failed):
            # each was refused by legacy.normalize, which already left it as written: skipping it
            # normalizes the file to the same module, so another pass would only repeat this one
            break
    converter.left += len(reasons)  # legacy pipelines left as they were count as left too
    fed = tf_consumers.fed_to_tf(module, names, parents_mod.build(module)) if reasons and tf_consumers.may_feed_tf(names) else {}
    given: set = set()  # anchors found for earlier pipelines (the same lines may make two)
    for item, why in reasons.values():
        anchor = item.find_anchor(converter.module, frozenset(given))
        if anchor is not None:
            given.add(id(anchor))
        use = fed.get(item.name) if item.kind == "class" else fed.get(id(_pipeline_call(item.find_anchor(module))))
        if use is not None:
            why = [use.reason()]  # TensorFlow runs it: why else it would not convert does not matter
        for reason in why:
            converter._mark(anchor, "legacy-pipeline", f"not converted: {reason}")
    for name, (helpers, why) in tried.items():
        anchor = next((s for s in converter.module.body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)
        spelled = ", ".join(f"{h}()" for h in sorted(helpers))
        for reason in why:
            if reason not in converter.reasons.get(name, []):  # a reason it has either way is marked once
                converter._mark(anchor, pipeline_rule.RULE.id, f"not converted with {spelled} written into it: {reason}")
    imported_elsewhere.mark(converter)
    return converter


def _as_written(reason: str, renamed: dict) -> str:
    """A reason found in a pipeline with helpers written into it, naming their variables as the
    helpers spell them (`images`, not the `images_2` the writing-in gave it to avoid a clash, which
    depends on the names around and would change from one run to the next)."""
    for new, old in sorted(renamed.items(), key=lambda kv: -len(kv[0])):
        reason = re.sub(rf"\b{re.escape(new)}\b", old, reason)
    return reason


def _pipeline_call(stmt) -> Optional[cst.Call]:
    """The ``Pipeline(...)`` call of a ``pipe = Pipeline(...)`` statement (a "with" pipeline's anchor)."""
    if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Assign):
        return stmt.body[0].value if isinstance(stmt.body[0].value, cst.Call) else None
    return None


class _Converter:
    def __init__(self, module: cst.Module, names, config: Config, original: Optional[cst.Module] = None):
        self.module, self.names, self.config = module, names, config
        self.original = original if original is not None else module
        self.reasons: dict = {}  # pipeline name -> why it was not converted
        self.cannot_inline: dict = {}  # pipeline name -> (helpers it calls, why they were not written into it)
        self.used_elsewhere: dict = {}  # module-level name -> where another file imports it
        self.imported: dict = {}  # pipelines of other files converted with their uses here (imported_pipelines.py)
        self.pipelines: dict = {}  # name -> (info, reader call, converted function), once analysed
        self._analysed = None
        self._new_numpy: Optional[str] = None
        self._pending_rewrites: dict = {}
        self.catalog = load_catalog()
        self.enabled = _enabled(config)
        self.all_rules = rules_mod.all_rules()
        self.op_rules = [r for r in self.all_rules if isinstance(r, OpCallRule)]
        self.site_rules = [r for r in self.all_rules if isinstance(r, CallSiteRule) and _on(r, self.enabled)]
        self.detectors = [r for r in self.all_rules if isinstance(r, DetectorRule) and _on(r, self.enabled)]
        self.parents = parents_mod.build(module)
        self.taken = self.parents.all_names()
        self.ndd = self._ndd_alias()
        self.marks: dict = {}  # id(statement) -> [(rule, reason)]
        self.replace: dict = {}  # id(original FunctionDef) -> converted FunctionDef
        self.converted: dict = {}
        self.left = 0
        self.rewrites = 0
        self.imports: dict = {}  # modules converted pipelines need imported (ordered)
        self.helpers: dict = {}  # key -> module-level source the converted code needs (call-site rules)
        self.converted_statements: set = set()  # ids of statements whose DALI use was converted
        self._variables = None  # names the module reads or binds as variables (computed on first use)
        self._resume_class = None  # name of the ResumeAfterErrors class written into the file, once needed
        self._in_catching_try = None  # ids of the nodes inside `try` bodies whose handlers catch errors
        self._numpy_found = None  # (_numpy_alias's answer,) once known

    # -- names -------------------------------------------------------------------------------
    def _ndd_alias(self) -> str:
        existing = self.names.local_names_for(self.config.ndd_module)
        for stmt, bound in self.names.statements:
            if isinstance(stmt, cst.Import):
                for alias in stmt.names:
                    if code(alias.name) == self.config.ndd_module and alias.asname is not None:
                        return alias.asname.name.value
        if existing:
            return existing[0]
        return fresh_name("ndd", self.taken)

    def _numpy_alias(self) -> Optional[str]:
        """The file's own name for numpy, if it imports it."""
        if self._numpy_found is None:  # asked for every pipeline: the imports are read once
            self._numpy_found = (self._find_numpy_alias(),)
        return self._numpy_found[0]

    def _find_numpy_alias(self) -> Optional[str]:
        for stmt in self.parents.find(cst.Import):
            for alias in stmt.names:
                if code(alias.name) == "numpy":
                    return alias.asname.name.value if alias.asname else "numpy"
        return None

    def _numpy_for_rewrites(self) -> str:
        """numpy's name for rewritten call sites: the file's own, or a new ``np`` imported on use."""
        existing = self._numpy_alias()
        if existing is not None:
            return existing
        if self._new_numpy is None:  # one name for the call sites and the operator rules alike
            self._new_numpy = "np" if "np" not in self.taken else fresh_name("numpy_", self.taken)
        return self._new_numpy

    def _mark(self, stmt, rule: str, reason: str) -> None:
        if stmt is None:
            return
        entry = self.marks.setdefault(id(stmt), [])
        if (rule, reason) not in entry:
            entry.append((rule, reason))

    # -- the work ----------------------------------------------------------------------------
    def run_analysis(self) -> None:
        """Decide what converts (fills ``converted``, ``reasons``, the plans); idempotent."""
        if self._analysed is not None:
            return
        pipelines = self._analyse_pipelines()
        imported_pipelines.inject(self, pipelines)  # another file's pipelines whose uses here convert with them
        self.pipelines = pipelines
        readers = {name: conv[1] for name, conv in pipelines.items()}
        infos = {name: conv[0] for name, conv in pipelines.items()}
        plans = call_sites.plan(
            self.module, self.parents, infos, self.site_rules, self.ndd, self._numpy_for_rewrites(), readers,
            names=self.names, taken=self.taken,
        )
        imported_elsewhere.hold(self, pipelines, plans)  # what other files import stays as it is
        site_rewrites: dict = {}
        drops: dict = {}
        for name, plan in plans.items():
            info, _, new_func = pipelines[name]
            restart = external_source_rule.iterator_restart(info, plan)
            if isinstance(restart, str):
                plan.blockers.append((None, restart))
            elif restart:
                new_func = info.__dict__["_es_restart"]
            if plan.blockers:
                self.left += 1
                self.reasons[name] = [reason for _, reason in plan.blockers]
                for stmt, reason in plan.blockers:
                    self._mark(stmt if stmt is not None else info.func, "call-site", reason)
                self._mark(info.func, pipeline_rule.RULE.id, "not converted: some uses of this pipeline in this file need a person (see the markers there)")
                continue
            self.converted[name] = info
            self.rewrites += self._pending_rewrites.get(name, 0)
            if self._runs_caught(plan) and not fed_inputs.is_fed(info):
                # (a fed pipeline becomes a function: a call that raised does not end it)
                new_func = self._resumable(new_func)
            if name not in self.imported:  # (another file's pipeline: that file converts its definition)
                self.replace[id(info.func)] = new_func
            site_rewrites.update(plan.rewrites)
            self.helpers.update(plan.helpers)
            if name not in self.imported:
                self.helpers.update(info.helpers)
            self.converted_statements |= plan.converted_statements
            drops.update(plan.drop_kwargs)
            for key, kws in plan.none_kwargs.items():
                drops.setdefault(key, [])
                drops[key] = [*drops[key], *[("none", k) for k in kws]]
        self._analysed = (site_rewrites, drops)

    def _runs_caught(self, plan) -> bool:
        """Whether the file calls this pipeline's ``run()`` inside a ``try`` that catches errors."""
        runs = {key for key, (rule, _) in plan.rewrites.items() if rule.id == pipe_run_rule.RULE.id}
        if not runs:
            return False
        if self._in_catching_try is None:  # the same for every pipeline of the file
            self._in_catching_try = {
                id(n)
                for node in self.parents.find(cst.Try) if any(_catches_errors(h) for h in node.handlers)
                for stmt in node.body.body for n in cst_walk.walk(stmt)
            }
        return not runs.isdisjoint(self._in_catching_try)

    def _resumable(self, new_func):
        if self._resume_class is None:  # one class written into the file serves every pipeline
            self._resume_class = fresh_name("ResumeAfterErrors", self.taken)
            self.helpers[pipeline_rule.RESUME_HELPER_KEY] = pipeline_rule.RESUME_HELPER.format(name=self._resume_class)
            self.imports.setdefault("functools", None)
        return pipeline_rule.resume_after_errors(new_func, self._resume_class, self.taken | cst_walk.names(new_func))

    def run(self) -> str:
        self.run_analysis()
        site_rewrites, drops = self._analysed
        for det in self.detectors:
            for stmt, reason in det.find(self.module, self.names, self.parents, set(self.converted)):
                if id(stmt) in self.converted_statements:
                    continue  # e.g. a framework iterator a call-site rule converted
                if any(rule == "legacy-pipeline" for rule, _ in self.marks.get(id(stmt), [])):
                    continue  # already says precisely why it was not converted
                self._mark(stmt, det.id, reason)
        new_module = self.module.visit(_Apply(self, site_rewrites, drops))
        if self.converted:
            index = self.parents if self.original is self.module else None
            new_module = _fix_imports(self.original, new_module, self.names, self.ndd, self.config.ndd_module, index,
                                      keep=self.used_elsewhere.keys())
            for module_name in self.imports:
                if not _imports_module(new_module, module_name):
                    new_module = _add_import(new_module, f"import {module_name}", before_dali=not module_name.startswith("nvidia"))
            texts = [text for key, text in self.helpers.items() if key + SUPERSET_SUFFIX not in self.helpers]
            # (a key with SUPERSET_SUFFIX: that text is this one and more, under the same name)
            # id(stand-in statement) -> the definition's text; None: the definitions go in as
            # nodes (one that imports at its top level: a later definition may go below that
            # import, inside what a stand-in would hold as one line)
            placed: Optional[dict] = None if any(_definition_facts(t).imports for t in texts) else {}
            for text in texts:
                new_module = _add_definition(new_module, text, placed)
            used = _names_outside_imports(new_module).union(*(_definition_facts(t).used for t in texts))
            if self._new_numpy and self._new_numpy in used:
                new_module = _add_import(new_module, f"import numpy as {self._new_numpy}", before_dali=True)
            return _with_definitions(new_module, placed) if placed else new_module.code
        return new_module.code

    def _analyse_pipelines(self) -> dict:
        helpers = helpers_with_ops(self.module, self.names)
        found = {}
        seen_names: dict = {}
        for func in self.parents.find(cst.FunctionDef):
            dec = pipeline_decorator(func, self.names)
            if dec is None:
                continue
            seen_names.setdefault(func.name.value, []).append(func)
            info = analyze(func, dec, self.names, self.catalog, helpers, module=self.module)
            scope = self.parents.scope(func)
            inline_key = func.name.value if scope is None else ("nested", func.name.value)
            if inline_key in self.cannot_inline:
                # the generic reason gives way to why these helpers could not be written in
                called, why = self.cannot_inline[inline_key]
                generic = {helper_blocker([h]) for h in helpers}
                info.blockers[:] = [helper_blocker(called, why), *(b for b in info.blockers if b not in generic)]
            if isinstance(self.parents.scope(func), cst.ClassDef):
                info.blockers.append("pipeline defined as a method: convert by hand")
            # New names (reader, rng, ctx) need only avoid the module's names, not other pipelines' new ones.
            ctx = PipelineContext(
                names=self.names, catalog=self.catalog, ndd=self.ndd, taken=set(self.taken), setup_names=info.setup_names,
                module=self.module, pipeline=info, numpy=self._numpy_for_rewrites(),
            )
            ctx.batch_size, ctx.seed = info.setting("batch_size"), info.setting("seed")
            self._op_rule_blockers(info, ctx)
            if _on(data_subscript.RULE, self.enabled):
                reason = data_subscript.blocker(info, self.names)
            elif data_subscript.subscripts_to_rewrite(info, self.names):
                reason = f"indexing DALI data needs rule {data_subscript.RULE.id}, which is disabled"
            else:
                reason = None
            if reason is not None and reason not in info.blockers:
                info.blockers.append(reason)
            info.to_gpu, reason = arithmetic_device.plan(info, self.names, self.catalog)
            if info.to_gpu and not _on(arithmetic_device.RULE, self.enabled):
                reason = f"arithmetic on DALI data of both devices needs rule {arithmetic_device.RULE.id}, which is disabled"
            if reason is not None and reason not in info.blockers:
                info.blockers.append(reason)
            if info.current_reads:
                reason = (pipeline_current.blocker(info, info.current_reads) if _on(pipeline_current.RULE, self.enabled)
                          else f"Pipeline.current() needs rule {pipeline_current.RULE.id}, which is disabled")
                if reason is not None and reason not in info.blockers:
                    info.blockers.append(reason)
            conditionals_rule.check(info, ctx, enabled=_on(conditionals_rule.RULE, self.enabled))
            if not info.blockers:
                self._build_time_calls(info, ctx, helpers)
            if info.rebound_in_loop is not None and not info.blockers:
                info.blockers.append(info.rebound_in_loop)
            if info.blockers:
                self.reasons[func.name.value] = list(info.blockers)
                self.left += 1
                for reason in info.blockers:
                    self._mark(func, pipeline_rule.RULE.id, f"pipeline not converted: {reason}")
                continue
            found[func.name.value] = self._convert_pipeline(info, ctx)
        for name, funcs in seen_names.items():
            if len(funcs) > 1 and name in found:
                # Calls by name cannot tell the definitions apart.
                del found[name]
                self.left += 1
                for func in funcs:
                    self._mark(func, pipeline_rule.RULE.id, f"several pipelines are named {name}: convert by hand")
        return found

    def _build_time_calls(self, info, ctx, helpers) -> None:
        alias = self._numpy_alias()
        if self._variables is None:
            # per top-level statement, kept for the conversion: each pass's module shares most
            # of its statements with the last pass's (a module's names are its statements')
            self._variables = set().union(*(cst_walk.remembered(cst_walk.variables, s) for s in self.module.body))
        # the module's variables, this pipeline's new names, the settings' parameters (the
        # converted function takes them by these names) and the builtins (a value named `range`
        # or `type` would hide the builtin from the rest of the function)
        avoid = self._variables | (ctx.taken - self.taken) | {info.setting(k) for k in SETTINGS} | _BUILTIN_NAMES
        found = build_time_calls.plan(info, self.names, ctx.taken, {alias} if alias else set(), set(helpers), avoid, module=self.module)
        if found.blocker is None and found.replace and not _on(build_time_calls.RULE, self.enabled):
            found.blocker = f"Python calls evaluated once when the pipeline was built need rule {build_time_calls.RULE.id}, which is disabled"
        if found.blocker is not None:
            info.blockers.append(found.blocker)
            return
        ctx.before_statement, ctx.build_time_replace = found.before, found.replace

    def _op_rule_blockers(self, info, ctx) -> None:
        for call, op in info.op_calls:
            for rule in self.op_rules:
                if not rule.applies(op):
                    continue
                reason = rule.blocker(call, op, ctx)
                if reason is None and not _on(rule, self.enabled):
                    probe = copy.copy(ctx)
                    probe.hoisted, probe.taken = [], set(ctx.taken)
                    if not rule.rewrite(call, op, probe).deep_equals(call):
                        reason = f"fn.{op.fn_name} needs rule {rule.id}, which is disabled"
                if reason and reason not in info.blockers:
                    info.blockers.append(reason)

    def _convert_pipeline(self, info, ctx) -> tuple:
        conditionals_rule.expand(info, ctx)  # before the operator rules: they rewrite the branches' calls too
        if info.current_reads:  # Pipeline.current().device_id -> the function's device_id
            ctx.build_time_replace = {**ctx.build_time_replace, **pipeline_current.replacements(info, info.current_reads)}
        # the replacing subclass only where there is something to replace: its on_leave runs for every node
        kind = _ReplacingOpRewriter if ctx.build_time_replace or info.to_gpu else _OpRewriter
        rewriter = kind(self.names, self.catalog, ctx, self.op_rules)
        rewriter.replacements = ctx.build_time_replace
        rewriter.to_gpu = info.to_gpu
        if _on(data_subscript.RULE, self.enabled):
            rewriter.subscripts = data_subscript.subscripts_to_rewrite(info, self.names)
        rewriter.find_paths([*info.statements, info.returned])
        statements = [stmt.visit(rewriter) for stmt in info.statements]
        returned = info.returned.visit(rewriter)
        reader_calls = []
        for reader in info.readers:
            stmt = statements[reader.index]
            if reader.branches:
                reader.converted_branches = [(b[0], b[1]) for b in reader_branches(stmt)]
                reader_calls.append(reader.converted_branches[0][1])
            else:
                reader_calls.append(reader_statement_call(stmt)[0])
            reader.converted = reader_calls[-1]
        # (the call sites take the one reader; of several, a use names one: rules/pipe_epoch_size.named_reader)
        reader_call = reader_calls[0] if len(reader_calls) == 1 else None
        # counted only if the pipeline is converted in the end (its uses may still stop it)
        self._pending_rewrites[info.name] = rewriter.count + 1
        taken = set(ctx.taken)
        new_func = pipeline_rule.build(info, ctx, statements, returned, reader_calls)
        if isinstance(ctx.restart, str):
            info.__dict__["_es_restart"] = ctx.restart
        elif ctx.restart is not None:
            # the form framework iterators drive (rules/external_source.py), with the same new names
            again = copy.copy(ctx)
            again.taken = taken
            info.__dict__["_es_restart"] = pipeline_rule.build(info, again, statements, returned, reader_calls, restart=True)
        for module_name in ctx.imports:
            self.imports.setdefault(module_name, None)
        return info, reader_call, new_func


# Exceptions that end a loop rather than report a failed run: `except StopIteration:` around
# pipe.run() does not mean the code goes on after an operator's error.
_NOT_RUN_ERRORS = frozenset({"StopIteration", "StopAsyncIteration", "KeyboardInterrupt", "SystemExit", "GeneratorExit"})


def _catches_errors(handler: cst.ExceptHandler) -> bool:
    kinds = _handler_kinds(handler)
    return kinds is None or any(not (isinstance(k, cst.Name) and k.value in _NOT_RUN_ERRORS) for k in kinds)


def _handler_kinds(handler: cst.ExceptHandler) -> Optional[list]:
    """The exception types ``handler`` names (``except (A, B):`` both); None for a bare ``except:``."""
    kind = handler.type
    if kind is None:
        return None
    return [e.value for e in kind.elements] if isinstance(kind, cst.Tuple) else [kind]


class _OpRewriter(cst.CSTTransformer):
    def __init__(self, names, catalog, ctx, rules):
        self.names, self.catalog, self.ctx, self.rules = names, catalog, ctx, rules
        self.count = 0
        self.subscripts: set = set()  # ids of subscripts of DALI data (rules/data_subscript.py)
        self.replacements: dict = {}  # id(node as written) -> its replacement (rules/build_time_calls.py)
        self.to_gpu: set = set()  # ids of operands (as written) moved with .gpu() (rules/arithmetic_device.py)
        self.enter: set = set()  # ids of the nodes with something to rewrite below them (find_paths)

    def find_paths(self, roots) -> None:
        """Note the nodes under ``roots`` that hold a node this rewriter may change: only those are
        entered (a full transformer pass rebuilds every node of the pipeline, several times the cost
        of finding the few calls it rewrites)."""
        qualify, subscripts, replacements, to_gpu = self.names.qualify, self.subscripts, self.replacements, self.to_gpu

        def changes(node) -> bool:
            tp = type(node)
            # a call that names nothing DALI's is left as it is by leave_Call
            return id(node) in replacements or id(node) in to_gpu or (
                (tp is cst.Call and qualify(node.func) is not None) or (tp is cst.Subscript and id(node) in subscripts)
            )

        self.enter |= cst_walk.holding(roots, changes)

    def on_visit(self, node) -> bool:
        return id(node) in self.enter

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        if id(original) in self.subscripts:
            self.count += 1
            return data_subscript.rewrite(updated)
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        outer = self.ctx.outer_replace.pop(id(original), None)
        if outer is not None:
            return outer
        op_path = self.names.fn_op(original.func)
        if op_path is None:
            q = self.names.qualify(original.func)
            if q and q.startswith(MATH + "."):
                self.count += 1
                return updated.with_changes(func=self.ctx.ndd_attr("math." + q[len(MATH) + 1 :]))
            if q != TYPES_CONSTANT:
                return updated
            op_path = "constant"  # types.Constant(...): rules/constant.py, like fn.constant
        op = self.catalog.fn(op_path)
        self.ctx.call_as_written = original
        for rule in self.rules:
            if rule.applies(op):
                updated = rule.rewrite(updated, op, self.ctx)
        self.ctx.call_as_written = None
        self.count += 1
        return updated


class _ReplacingOpRewriter(_OpRewriter):
    """Also puts the names of values computed once before the loop in place of their calls."""

    def on_leave(self, original, updated):
        new = self.replacements.get(id(original))
        if new is not None:
            self.count += 1
            return new
        updated = super().on_leave(original, updated)
        if id(original) in self.to_gpu:
            self.count += 1
            return arithmetic_device.moved(updated)
        return updated


class _Apply(cst.CSTTransformer):
    """One pass that swaps converted functions in, rewrites call sites and adds markers."""

    def __init__(self, conv: _Converter, site_rewrites: dict, drops: dict):
        self.conv, self.site_rewrites, self.drops = conv, site_rewrites, drops
        self.removed: set = set()
        # Only the paths from the root to the nodes that change are rebuilt: a full transformer
        # pass over a file costs about as much as parsing it (issue 6).
        touched = {*conv.replace, *site_rewrites, *drops, *conv.marks}
        self.enter: set = set()
        for node_id in touched:
            node = conv.parents.parent.get(node_id)
            while node is not None and id(node) not in self.enter:
                self.enter.add(id(node))
                node = conv.parents.parent.get(id(node))

    def on_visit(self, node) -> bool:
        return id(node) in self.enter

    def _with_marks(self, original, updated):
        marks = self.conv.marks.get(id(original))
        if not marks:
            return updated
        for rule, reason in marks:
            updated = markers.add(updated, rule, [reason], self.conv.config.marker_prefix)
        return updated

    def leave_FunctionDef(self, original, updated):
        new = self.conv.replace.get(id(original))
        if new is not None:
            return new
        return self._with_marks(original, updated)

    def leave_Call(self, original, updated):
        if id(original) in self.drops:
            entries = self.drops[id(original)]
            updated = without_kwargs(updated, [e for e in entries if isinstance(e, str)])
            for _, name in [e for e in entries if isinstance(e, tuple)]:
                updated = with_kwarg(updated, name, cst.Name("None"))
        entry = self.site_rewrites.get(id(original))
        if entry is None:
            return updated
        rule, site = entry
        self.conv.rewrites += 1
        receiver = call_sites._receiver(updated)
        new = rule.rewrite(updated, receiver, site)
        if new is None:
            self.removed.add(id(original))
            return updated
        return new

    def leave_Subscript(self, original, updated):
        entry = self.site_rewrites.get(id(original))
        if entry is None:
            return updated
        rule, site = entry
        self.conv.rewrites += 1
        return rule.rewrite(updated, updated.value, site)

    def leave_Attribute(self, original, updated):
        # attributes of a pipeline object (rules/pipe_device_id.py)
        entry = self.site_rewrites.get(id(original))
        if entry is None:
            return updated
        rule, site = entry
        self.conv.rewrites += 1
        return rule.rewrite(updated, updated.value, site)

    def leave_Arg(self, original, updated):
        # the base of a class derived from a DALI iterator (rules/torch_iterator.py)
        entry = self.site_rewrites.get(id(original))
        if entry is None:
            return updated
        rule, site = entry
        self.conv.rewrites += 1
        return rule.rewrite(updated, updated.value, site)

    def leave_Comparison(self, original, updated):
        # call-site rules that rewrite a whole comparison (rules/batch_device_check.py)
        entry = self.site_rewrites.get(id(original))
        if entry is None:
            return updated
        rule, site = entry
        self.conv.rewrites += 1
        return rule.rewrite(updated, call_sites._receiver(updated), site)

    def leave_IfExp(self, original, updated):
        # `out.as_cpu() if hasattr(out, "as_cpu") else out` over pipeline outputs (call_sites._host_copies)
        entry = self.site_rewrites.get(id(original))
        if entry is None:
            return updated
        rule, site = entry
        self.conv.rewrites += 1
        return rule.rewrite(updated, updated.body, site)

    def leave_SimpleStatementLine(self, original, updated):
        body = [
            new
            for old, new in zip(original.body, updated.body)
            if not (isinstance(old, cst.Expr) and id(old.value) in self.removed)
        ]
        if not body:
            return cst.RemovalSentinel.REMOVE
        if len(body) != len(updated.body):
            body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            updated = updated.with_changes(body=body)
        entry = self.site_rewrites.get(id(original))
        if entry is not None:
            # a statement a call-site rule puts right before this one (a batch size bound once,
            # rules/torch_iterator.py): it takes the comments above; the markers stay on this one
            rule, site = entry
            self.conv.rewrites += 1
            put = rule.rewrite(updated, None, site)
            put = list(put) if isinstance(put, (list, tuple)) else [put]  # (several: shared_setup.asked_again)
            put[0] = put[0].with_changes(leading_lines=[*updated.leading_lines, *put[0].leading_lines])
            return cst.FlattenSentinel([*put, self._with_marks(original, updated.with_changes(leading_lines=()))])
        return self._with_marks(original, updated)

    def leave_IndentedBlock(self, original, updated):
        if not updated.body:
            return updated.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        return updated

    def leave_ClassDef(self, original, updated):
        return self._with_marks(original, updated)

    def _compound(self, original, updated):
        entry = self.site_rewrites.get(id(original))
        if entry is not None and entry[0].rewrite(updated, None, entry[1]) is None:
            # a loop whose every statement a call-site rule removes (pipe_lists.plan_object_list)
            self.conv.rewrites += 1
            return cst.RemovalSentinel.REMOVE
        return self._with_marks(original, updated)

    leave_If = leave_For = leave_While = leave_With = leave_Try = _compound


def _fix_imports(old: cst.Module, new: cst.Module, names, ndd: str, ndd_module: str, index=None, keep=()) -> cst.Module:
    """Add the ndd import; drop DALI imports that the conversion left unused (but ``keep``: names
    other files import from this one).

    ``index``: the parents index of ``old``, if there is one (saves a walk of the tree)."""
    used_before = _names_outside_imports_indexed(index) if index is not None else _names_outside_imports(old)
    used_after = _names_outside_imports(new)
    gone = {n for n in used_before - used_after} - set(keep)
    dali_import_ids = {id(stmt) for stmt, _ in collect(new).statements}
    # (a file whose only conversion is the uses of another file's pipeline may not need ndd)
    need_ndd = ndd not in names.aliases and ndd in used_after
    guard = _import_guard(new, dali_import_ids) if need_ndd else None
    if guard is not None:
        # `try: import nvidia.dali ... except ImportError: HAS_DALI = False`: the file runs without
        # DALI, so ndd is imported where DALI was, under the same guard
        i, j = guard
        body = list(new.body)
        inner = list(body[i].body.body)
        line = templates.statement(f"import {ndd_module} as {ndd}\n").with_changes(leading_lines=inner[j].leading_lines)
        inner[j] = inner[j].with_changes(leading_lines=[])
        inner.insert(j, line)
        body[i] = body[i].with_changes(body=body[i].body.with_changes(body=inner))
        new = new.with_changes(body=body)
        need_ndd = False
    # Only the paths to what may change are entered (a full pass rebuilds every statement of the
    # file): the DALI imports, and lines with no statement left, which are dropped. Both are
    # statements: no need to walk into expressions, or into the parts of a line or a definition
    # that hold no statement.
    enter = cst_walk.holding(
        [new],
        lambda n: id(n) in dali_import_ids or (type(n) is cst.SimpleStatementLine and not n.body),
        not_into=(cst.BaseExpression, cst.BaseSmallStatement, cst.Parameters, cst.Decorator),
    )

    class _Fix(cst.CSTTransformer):
        def __init__(self):
            self.last_dali_import = None

        def on_visit(self, node) -> bool:
            return id(node) in enter

        def leave_Import(self, original, updated):
            if id(original) not in dali_import_ids:
                return updated
            keep = [a for a in updated.names if _bound(a) not in gone]
            return _rebuild(updated, keep)

        def leave_ImportFrom(self, original, updated):
            if id(original) not in dali_import_ids or isinstance(updated.names, cst.ImportStar):
                return updated
            keep = [a for a in updated.names if _bound(a) not in gone]
            return _rebuild(updated, keep)

        def leave_SimpleStatementLine(self, original, updated):
            if not updated.body:
                return cst.RemovalSentinel.REMOVE
            return updated

    fixed = new.visit(_Fix())
    if need_ndd:
        first = next((i for i, stmt in enumerate(new.body) if type(stmt) is cst.SimpleStatementLine
                      and any(id(small) in dali_import_ids for small in stmt.body)), None)
        if first is not None and not any(_is_dali_import_line(stmt) for stmt in fixed.body):
            # Every DALI import went: ndd takes the place of the first. After the file's last
            # import instead, it could land below code that needs it (a notebook's later cell that
            # imports matplotlib, while a function of an earlier cell calls ndd: running the cells
            # that define and call it, not the plotting one, raised NameError). The statements
            # above that first import hold no DALI import, so none of them was dropped.
            body = list(fixed.body)
            body.insert(first, templates.statement(f"import {ndd_module} as {ndd}\n"))
            return fixed.with_changes(body=body)
        fixed = _add_import(fixed, f"import {ndd_module} as {ndd}")
    return fixed


_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _import_guard(module: cst.Module, dali_import_ids: set) -> Optional[tuple]:
    """(index of a top-level ``try``, index in its body) of the file's first DALI import, where that
    import is guarded by a ``try`` whose handlers catch ImportError; None where the first is not."""
    for i, stmt in enumerate(module.body):
        if isinstance(stmt, cst.SimpleStatementLine) and any(id(small) in dali_import_ids for small in stmt.body):
            return None
        if isinstance(stmt, cst.Try) and isinstance(stmt.body, cst.IndentedBlock):
            for j, inner in enumerate(stmt.body.body):
                if isinstance(inner, cst.SimpleStatementLine) and any(id(small) in dali_import_ids for small in inner.body):
                    return (i, j) if any(_catches_import_error(h) for h in stmt.handlers) else None
    return None


def _catches_import_error(handler: cst.ExceptHandler) -> bool:
    kinds = _handler_kinds(handler)
    return kinds is None or any(isinstance(k, cst.Name) and k.value in _IMPORT_ERRORS for k in kinds)


def _imports_module(module: cst.Module, name: str) -> bool:
    """Does a top-level ``import name`` exist (imports inside functions do not serve the module)?"""
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import) and any(code(a.name) == name and a.asname is None for a in small.names):
                    return True
    return False


# The definitions the converted code needs (the emitted iterator classes and the like, several
# thousand characters each) go into the tree as one stand-in line each, and their text replaces
# that line in the printed file: printing them from nodes, file after file, cost about as much
# as printing a converted file itself (issue 6). The text printed is what libcst prints for the
# definition's own nodes with the file's indentation and line ends (_definition_code), so the
# output is the same as if they had been printed as part of the tree.
_STAND_IN = "__dali_migrate_definition_{}__"


def _add_definition(module: cst.Module, text: str, placed: Optional[dict] = None) -> cst.Module:
    """A module-level class or function after the last top-level import above its first use (two
    blank lines around it). Not simply after the last import: a notebook (one module made of its
    cells) or a script may import again below the cell that uses the definition, which would then
    run before the definition exists.

    ``placed``: where given, a stand-in line goes in for the definition, and {id(line): text} is
    recorded there for :func:`_with_definitions`."""
    defined = _definition_facts(text).defines
    blank = [cst.EmptyLine(), cst.EmptyLine()]
    if placed is not None:
        new = [cst.SimpleStatementLine(body=[cst.Expr(cst.Name(_STAND_IN.format(len(placed))))], leading_lines=blank)]
    else:
        new = _definition_nodes(text, blank)
    body = list(module.body)
    anchor = -1
    for i, stmt in enumerate(body):
        earlier = placed.get(id(stmt)) if placed else None  # a definition added before this one
        spelled = _definition_facts(earlier).spelled if earlier is not None else cst_walk.remembered(names_in, stmt)
        if defined & spelled:  # (asked again for each definition added)
            break
        if _is_import_line(stmt) or _imports_guarded(stmt):
            anchor = i
    rest = body[anchor + 1 :]
    if rest and hasattr(rest[0], "leading_lines"):
        lines = list(rest[0].leading_lines)
        while lines and lines[0].comment is None:
            lines.pop(0)
        rest[0] = rest[0].with_changes(leading_lines=[*blank, *lines])
    if placed is not None:
        placed[id(new[0])] = text
    return module.with_changes(body=[*body[: anchor + 1], *new, *rest])


def _with_definitions(module: cst.Module, placed: dict) -> str:
    """The module's code, each stand-in line replaced by its definition's code."""
    out = module.code
    texts = list(placed.values())
    lines = [_STAND_IN.format(i) + module.default_newline for i in range(len(texts))]
    if any(out.count(line) != 1 for line in lines) or any(_STAND_IN.split("{")[0] in t for t in texts):
        # the file (or a definition) spells a stand-in's name itself (it would have to try):
        # the definitions are put in as nodes instead
        body = []
        for stmt in module.body:
            text = placed.get(id(stmt))
            if text is None:
                body.append(stmt)
                continue
            body += _definition_nodes(text, stmt.leading_lines)
        return module.with_changes(body=body).code
    for line, text in zip(lines, texts):
        out = out.replace(line, _definition_code(module, text))
    return out


_printed: dict = {}  # (text, indent, newline) -> the definition's code


def _definition_code(module: cst.Module, text: str) -> str:
    """What libcst prints for the definition's statements (the first without the lines above it)
    in ``module``, whose indentation and line ends the statements that have none of their own take."""
    key = (text, module.default_indent, module.default_newline)
    hit = _printed.get(key)
    if hit is None:
        hit = "".join(module.code_for_node(s) for s in _definition_nodes(text, []))
        if len(_printed) >= 256:
            _printed.clear()
        _printed[key] = hit
    return hit


def _definition_nodes(text: str, leading_lines: list) -> list:
    """The definition's statements (parsed once per text: templates.py), the first with
    ``leading_lines`` above it."""
    body = templates.module_body(text)  # (the same helpers come for many files)
    return [body[0].with_changes(leading_lines=leading_lines), *body[1:]]


class _Facts(NamedTuple):
    used: frozenset  # the names it spells outside imports (as _names_outside_imports)
    spelled: frozenset  # every name it spells (as names_in of its statements)
    defines: frozenset  # the classes and functions it defines
    imports: bool  # whether it imports at its top level


_facts: dict = {}  # text -> _Facts


def _definition_facts(text: str) -> _Facts:
    hit = _facts.get(text)
    if hit is None:
        body = templates.module_body(text)
        hit = _Facts(
            used=frozenset().union(*(_names_outside_imports_in(stmt) for stmt in body)),
            spelled=frozenset().union(*(names_in(stmt) for stmt in body)),
            defines=frozenset(s.name.value for s in body if isinstance(s, (cst.ClassDef, cst.FunctionDef))),
            imports=any(_is_import_line(s) or _imports_guarded(s) for s in body),
        )
        if len(_facts) >= 256:
            _facts.clear()
        _facts[text] = hit
    return hit


def _bound(alias) -> str:
    if alias.asname is not None:
        return alias.asname.name.value
    return code(alias.name).split(".")[0]


def _rebuild(node, keep):
    if not keep:
        return cst.RemovalSentinel.REMOVE
    if len(keep) != len(node.names):
        keep = list(keep)
        keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return node.with_changes(names=keep)
    return node


def _names_outside_imports_indexed(index) -> set:
    """As :func:`_names_outside_imports`, from the index instead of a walk."""

    def refers(n) -> bool:  # `x` in `x.y` refers to a binding, `y` does not
        parent = index.of(n)
        return not isinstance(parent, cst.Attribute) or parent.value is n

    in_imports = {id(n) for imp in index.find((cst.Import, cst.ImportFrom)) for n in index.find(cst.Name, within=imp)}
    return {
        name for name in index.all_names()
        if any(refers(n) and id(n) not in in_imports for n in index.names(name))
    }


def _names_outside_imports(module: cst.Module) -> set:
    # per top-level statement, kept for the conversion: the file before and after, and after each
    # definition added, share most of their statements
    found: set = set()
    for stmt in module.body:
        found |= cst_walk.remembered(_names_outside_imports_in, stmt)
    return found


def _names_outside_imports_in(node: cst.CSTNode) -> set:
    found: set = set()
    stack = [node]
    while stack:
        node = stack.pop()
        tp = type(node)
        if tp is cst.Name:
            found.add(node.value)
        elif tp is cst.Attribute:
            # In `ndd.math.sqrt` only `ndd` refers to a binding; `math` is an attribute name.
            stack.append(node.value)
        elif tp is not cst.Import and tp is not cst.ImportFrom:
            stack.extend(cst_walk.children(node))
    return found


def _imports_guarded(stmt) -> bool:
    """A top-level ``try:`` that imports (``try: import ... except ImportError: ...``): what is added
    goes after it, with the imports, not above them."""
    return isinstance(stmt, cst.Try) and any(_is_import_line(s) for s in stmt.body.body)


def _is_import_line(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)


def _is_dali_import_line(stmt) -> bool:
    if not _is_import_line(stmt):
        return False
    text = code(stmt)
    return "nvidia" in text


def _add_import(module: cst.Module, line: str, before_dali: bool = False) -> cst.Module:
    """Put the import after the last DALI import of the file's first run of import lines that holds
    one (or before the first DALI import, for numpy), else after the last import, else at the top.
    (Not after the file's last DALI import: a notebook imports DALI again in a later cell, and code
    of the cells before it would run without the new import.)"""
    new_stmt = templates.statement(line + "\n")
    body = list(module.body)
    anchor = None
    for i, stmt in enumerate(body):
        if _is_dali_import_line(stmt):
            anchor = i
            if before_dali:
                anchor = i - 1
                break
        elif anchor is not None and not _is_import_line(stmt):
            break
    if anchor is None:
        for i, stmt in enumerate(body):
            if _is_import_line(stmt):
                anchor = i
    if anchor is None:
        # After a module docstring and __future__ imports, if any.
        anchor = -1
        if body and isinstance(body[0], cst.SimpleStatementLine) and m.matches(body[0].body[0], m.Expr(m.SimpleString())):
            anchor = 0
    body.insert(anchor + 1, new_stmt)
    return module.with_changes(body=body)
