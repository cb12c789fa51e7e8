"""Pipeline functions passed to a function of the file that makes the pipelines itself, as DALI's
benchmark notebooks do (``conv_perf.ipynb``):

    def benchmark(pipeline, batch_size, window_size=3):
        pipe = pipeline(source, batch_size=batch_size, device_id=0, window_size=window_size)
        pipe.build()
        return run_pipeline(pipe, epoch_size, batch_size)

    box.append(benchmark(pipeline_box, 128, window_size=3))
    gb.append(benchmark(pipeline_gb, 128, window_size=3))

The parameter (``pipeline``) holds, call by call, each pipeline function passed to it, so its
calls are planned as calls of every one of them (call_sites.plan follows a ParamAlias as it
follows a pipeline's name). This is exact only where the parameter is used for nothing but
making pipelines, and every call of the function passes a pipeline function that dali-migrate
converts here: then the converted generator function takes the pipeline function's place and
every ``pipeline(...)`` makes a generator. The function's body is written once for all of them:
they convert together or not at all, and each rewrite there must come out the same for each
(:func:`check_param_aliases`).
"""

from __future__ import annotations

import dataclasses

import libcst as cst

from dali_migrate import call_sites
from dali_migrate.cst_util import one_line_statement


@dataclasses.dataclass(frozen=True)
class ParamAlias:
    """A parameter of a function of the file that its callers give pipeline functions."""

    key: tuple  # (id(the function), the parameter)
    name: str  # the parameter (``pipeline``)
    func: cst.FunctionDef = dataclasses.field(compare=False)
    refs: tuple = dataclasses.field(compare=False, default=())  # the parameter's reads in the body

    @property
    def label(self) -> str:
        return f"`{self.name}` of {self.func.name.value}() (the pipeline function its callers pass)"


def _statement_text(node) -> str:
    return one_line_statement(node) if node is not None else ""


def param_alias(ref: cst.Name, parents):
    """``ref`` (a pipeline's name) passed to a function of the file: the parameter that gets it
    (a ParamAlias); (statement, reason) when that function uses the parameter other than to make
    pipelines; None when ``ref`` is not an argument of a call of a function of the file."""
    target = call_sites._handoff_target(ref, parents)
    if target is None:
        return None
    call, func, param = target
    name, fname = param.name.value, func.name.value
    stmt = parents.statement(ref)
    if func.asynchronous is not None or func.decorators:
        return stmt, f"the pipeline function is passed to {fname}(), which is decorated or async: convert by hand"
    own = call_sites._scope_nodes(func, parents)
    if call_sites._rebinds(own, name, parents):
        return func, (f"{fname}() assigns its parameter `{name}`, which gets a pipeline function: dali-migrate "
                      f"cannot follow what it holds, convert by hand")
    for nested in call_sites._free_in_nested(own, {name}, parents):
        return nested, (f"a nested function uses `{name}`, which gets a pipeline function from the callers of "
                        f"{fname}(): convert by hand")
    reads = []
    for n in own.nodes:
        if not (isinstance(n, cst.Name) and n.value == name and call_sites._is_variable(n, parents)):
            continue
        up = parents.of(n)
        if not (isinstance(up, cst.Call) and up.func is n):
            from dali_migrate import pipe_lists

            if not pipe_lists.alias_name_read(n, parents):
                # `pipelines.append(pipeline)`, `partial(pipeline, ...)`: what it is then used for is not followed
                return parents.statement(n), (
                    f"{fname}() gets a pipeline function in `{name}` and uses it here other than by calling it to make "
                    f"a pipeline (`{_statement_text(parents.statement(n))}`): dali-migrate cannot follow it, convert by hand")
        reads.append(n)
    return ParamAlias(key=(id(func), name), name=name, func=func, refs=tuple(reads))


def check_param_aliases(plans: dict, parents) -> None:
    """The body of a function that gets pipeline functions is planned once per pipeline passed to
    it, and written once: each call of the function must pass one of those pipelines (by its
    name), each rewrite there must be the same for all of them, and they convert together or not
    at all."""
    groups: dict = {}  # key -> (ParamAlias, [pipeline names])
    for name, p in plans.items():
        for alias in p.param_aliases:
            names = groups.setdefault(alias.key, (alias, []))[1]
            if name not in names:
                names.append(name)
    for alias, names in groups.values():
        func, fname = alias.func, alias.func.name.value
        reasons = []
        for ref in call_sites._references(fname, parents):
            call = parents.of(ref)
            if ref is func.name or not (isinstance(call, cst.Call) and call.func is ref):
                continue
            resolved = call_sites._function_at(call, parents)
            if resolved is not None and resolved is not func:
                continue  # a call of another definition of the name
            arg = call_sites._argument_for(call, func, alias.name)
            if arg is None or not (isinstance(arg.value, cst.Name) and arg.value.value in names):
                reasons.append((parents.statement(call), (
                    f"{fname}() gets pipeline functions in `{alias.name}` ({', '.join(names)}), but here something "
                    f"dali-migrate does not convert with them: convert {fname}() and its calls by hand")))
        shared: dict = {}  # id(node) -> [(rule, site)]
        for n in names:
            for node_id, (rule, site) in plans[n].rewrites.items():
                node = call_sites._node_by_id(node_id, parents)
                if parents.contains(func.body, node):
                    shared.setdefault(node_id, []).append((n, rule, site))
        for node_id, entries in shared.items():
            node = call_sites._node_by_id(node_id, parents)
            forms = {_render(rule, node, site) for _, rule, site in entries}
            if len(forms) > 1 or len(entries) != len(names):
                reasons.append((parents.statement(node), (
                    f"{fname}() would need different code here for the pipeline functions it gets in "
                    f"`{alias.name}` ({', '.join(names)}): convert by hand")))
        for field in ("drop_kwargs", "none_kwargs"):
            calls: dict = {}
            for n in names:
                for call_id, kws in getattr(plans[n], field).items():
                    calls.setdefault(call_id, []).append(tuple(sorted(kws)))
            for call_id, kinds in calls.items():
                node = call_sites._node_by_id(call_id, parents)
                if parents.contains(func.body, node) and (len(set(kinds)) > 1 or len(kinds) != len(names)):
                    reasons.append((parents.statement(node), (
                        f"the pipeline functions {fname}() gets in `{alias.name}` need different arguments dropped "
                        f"here (a setting of one is a parameter of another): convert by hand")))
        for n in names:
            plans[n].blockers.extend(reasons)
            plans[n].share_with |= set(names) - {n}


def _render(rule, node, site):
    new = rule.rewrite(node, call_sites._receiver(node), site)
    return None if new is None else call_sites.code(new)
