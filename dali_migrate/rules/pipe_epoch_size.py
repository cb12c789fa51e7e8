"""``pipe.epoch_size(...)`` -> the reader's ``get_metadata()["epoch_size_padded"]`` (what a pipeline reports).

The generator holds its reader inside, so the epoch size comes from a second reader made with
the same arguments: cheap (it lists the data set, reads nothing). A reader asked for metadata
before its first epoch fixes its batch size to 1, which is why it is not the one the loop uses.
The reader's arguments refer to the pipeline's parameters; they are replaced by what the call
site passed. Arguments that are not plain names, attributes, subscripts or literals would be
evaluated twice, so such a call site is left to a person. Where a function of the file makes the
pipeline and returns it (``pipe = create_dali_pipeline(...)``), the arguments are those of its own
call of the pipeline, followed out through its parameters to its caller (``call_sites.in_caller``).
"""

from __future__ import annotations

import libcst as cst

from dali_migrate.cst_util import kwarg, names_in, without_kwargs
from dali_migrate.rules.base import CallSiteRule

_SIMPLE = (cst.Name, cst.Attribute, cst.Subscript, cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)


# Calls whose result depends on their arguments alone (and the working directory, which does not
# change between the two evaluations): a path built with os.path.join is the usual data_dir.
_PURE_CALLS = frozenset({
    "os.path.join", "os.path.expanduser", "os.path.expandvars", "os.path.abspath", "os.path.normpath",
    "os.path.dirname", "os.path.basename", "str", "int", "float", "len", "round", "min", "max", "abs",
    # JAX fixes its devices when it starts: the shard count of DALI's JAX examples
    "jax.device_count", "jax.local_device_count", "jax.process_index", "jax.process_count",
})


def repeatable(expr) -> bool:
    """Gives the same value when evaluated a second time: names, attributes, literals, and
    operators, subscripts, containers, f-strings and pure calls made of them."""
    if isinstance(expr, _SIMPLE[:2]):  # Name, Attribute (an attribute chain of a name)
        return isinstance(expr, cst.Name) or repeatable(expr.value)
    if isinstance(expr, _SIMPLE[3:]):
        return True
    if isinstance(expr, cst.Subscript):
        return repeatable(expr.value) and all(
            isinstance(el.slice, cst.Index) and repeatable(el.slice.value) for el in expr.slice)
    if isinstance(expr, (cst.BinaryOperation, cst.BooleanOperation)):
        return repeatable(expr.left) and repeatable(expr.right)
    if isinstance(expr, cst.Comparison):  # `mode == Mode.TRAIN` for is_training
        return repeatable(expr.left) and all(repeatable(c.comparator) for c in expr.comparisons)
    if isinstance(expr, cst.UnaryOperation):
        return repeatable(expr.expression)
    if isinstance(expr, cst.IfExp):  # evaluates some of its parts, as `a or b` does
        return repeatable(expr.test) and repeatable(expr.body) and repeatable(expr.orelse)
    if isinstance(expr, (cst.Tuple, cst.List)):
        return all(isinstance(el, cst.Element) and repeatable(el.value) for el in expr.elements)
    if isinstance(expr, cst.FormattedString):
        return all(not isinstance(part, cst.FormattedStringExpression) or repeatable(part.expression)
                   for part in expr.parts)
    if isinstance(expr, cst.Call):
        from dali_migrate.cst_util import dotted

        return dotted(expr.func) in _PURE_CALLS and all(
            not a.star and repeatable(a.value) for a in expr.args)
    return False


class CannotConvert(Exception):
    pass


def _param_values(info, construction: cst.Call) -> dict:
    return {name: value for name, (value, _) in _param_sources(info, construction).items()}


def _param_sources(info, construction: cst.Call) -> dict:
    """{parameter or setting: (expression, whether it is the parameter's default)} of ``construction``."""
    params = info.func.params
    positional = [*params.posonly_params, *params.params]
    values = {p.name.value: (p.default, True) for p in [*positional, *params.kwonly_params] if p.default is not None}
    pos_args = [a for a in construction.args if a.keyword is None]
    for param, arg in zip(positional, pos_args):
        values[param.name.value] = (arg.value, False)
    for arg in construction.args:
        if arg.keyword is not None:
            values[arg.keyword.value] = (arg.value, False)
    return values


def made(site) -> tuple:
    """(the pipeline's own call, None) where the pipeline is made where it is used, or (that call,
    the call_sites.Made of the functions that made and returned it); raises CannotConvert where it
    cannot be told (a function's parameter, a factory with several returns)."""
    if site.construction is not None:
        return site.construction, None
    found = getattr(site, "factory", None)
    if found is None:
        raise CannotConvert("the pipeline was made by another function, whose arguments cannot be matched")
    if isinstance(found, str):
        raise CannotConvert(f"the pipeline was made by another function, whose arguments cannot be matched: {found}")
    return found.construction, found


def _at_module(site, found) -> bool:
    """Whether the pipeline function's decorator and defaults are evaluated at module level (else
    in the function that makes the pipeline: a `with pipe:` graph of a factory)."""
    scope = site.parents.scope(site.pipeline.func)
    if scope is None:
        return True
    if scope is found.levels[0][0]:
        return False
    raise CannotConvert("the pipeline function is defined inside a function other than the one that makes it")


def _in_caller(site, found, expr, at_module: bool):
    from dali_migrate.call_sites import in_caller

    value = in_caller(found, expr, site.parents, at_module=at_module)
    if isinstance(value, str):
        raise CannotConvert(f"the pipeline is made by {found.levels[-1][0].name.value}(), and {value}")
    return value


def made_value(site, param: str, setting=None):
    """What the pipeline's parameter ``param`` gets where it is made (else the decorator's
    ``setting``), as the code that uses the pipeline can evaluate it; None where neither gives one.
    Raises CannotConvert."""
    info = site.pipeline
    construction, found = made(site)
    if found is None:
        return _param_values(info, construction).get(param, info.settings.get(setting) if setting else None)
    sources = _param_sources(info, construction)
    if param in sources:
        value, default = sources[param]
        return _in_caller(site, found, value, default and _at_module(site, found))
    if setting is not None and setting in info.settings:
        return _in_caller(site, found, info.settings[setting], _at_module(site, found))
    return None


class _Substitute(cst.CSTTransformer):
    def __init__(self, values: dict, params: set):
        self.values, self.params = values, params

    def leave_Name(self, original, updated):
        if original.value in self.params:
            if original.value not in self.values:
                raise CannotConvert(f"parameter `{original.value}` has no value at this call")
            value = self.values[original.value]
            if not repeatable(value):
                raise CannotConvert(f"`{original.value}` is passed an expression that would run twice")
            return value
        return updated

    def visit_Arg(self, node):
        return True


def reader_expression(site) -> cst.BaseExpression:
    info = site.pipeline
    if site.reader_call is None:
        raise CannotConvert("the pipeline has no reader")
    construction, found = made(site)
    params = info.func.params
    param_names = {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}
    used = names_in(cst.Module(body=[cst.SimpleStatementLine([cst.Expr(cst.Tuple([cst.Element(a.value) for a in site.reader_call.args]))])]))
    local = used & info.setup_names - param_names
    if local:
        # The code that makes the pipeline may compute them the same way (a rank and world size);
        # then its own names are the reader's arguments and stay as they are below. (Not through
        # factories, whose names are not the caller's, nor for names the call's settings replace.)
        from dali_migrate.shared_setup import NotShared, check

        reason = ""
        shared = found is None and not local & {"seed", "batch_size", "num_threads", "device_id"}
        if shared:
            try:
                check(info, construction, site.parents, local)
            except NotShared as e:
                shared, reason = False, f" {e}"
        if not shared:
            raise CannotConvert(f"the reader's arguments use {', '.join(sorted(local))}, computed inside the pipeline{reason}")
    settings = {"seed", "batch_size", "num_threads", "device_id"}
    reader = without_kwargs(site.reader_call, ["seed"])
    if found is None:
        values = _param_values(info, construction)
        new_args = [a.with_changes(value=a.value.visit(_Substitute(values, param_names | settings))) for a in reader.args]
        return reader.with_changes(args=new_args)
    # Made by functions of the file: each name the reader reads is followed out to the caller.
    from dali_migrate.call_sites import map_variables

    sources = _param_sources(info, construction)
    at_module = _at_module(site, found)

    def value_of(name: str):
        # A setting a `with pipe:` graph of a factory reads (`shard_id=device_id`) is the factory's
        # own name, as in pipeline mode; a @pipeline_def function's comes from its call.
        if name in param_names or (at_module and name in settings):
            if name not in sources:
                raise CannotConvert(f"parameter `{name}` has no value at this call")
            value, default = sources[name]
            value = _in_caller(site, found, value, default and at_module)
            if not repeatable(value):
                raise CannotConvert(f"`{name}` is passed an expression that would run twice")
            return value
        # read where the pipeline function is defined: the factory (a `with pipe:` graph), or globals
        return _in_caller(site, found, cst.Name(name), at_module)

    return reader.with_changes(args=[a.with_changes(value=map_variables(a.value, value_of)) for a in reader.args])


def _rewrite(call, receiver, site):
    reader = reader_expression(site)
    meta = cst.Subscript(
        value=cst.Call(func=cst.Attribute(value=reader, attr=cst.Name("get_metadata"))),
        slice=[cst.SubscriptElement(cst.Index(cst.SimpleString('"epoch_size_padded"')))],
    )
    name_arg = call.args[0].value if call.args else None
    reader_name = kwarg(site.pipeline.reader_call, "name") if site.pipeline.reader_call is not None else None
    if name_arg is None:
        return cst.Dict([cst.DictElement(reader_name.value, meta)])
    return meta


def blocker(call, site):
    try:
        reader_expression(site)
    except CannotConvert as e:
        return f"pipe.epoch_size(): {e}; use reader.get_metadata()[\"epoch_size_padded\"] by hand"
    name_arg = call.args[0].value if call.args else None
    reader_name = kwarg(site.pipeline.reader_call, "name")
    if name_arg is None and reader_name is None:
        return "pipe.epoch_size() of an unnamed reader: use reader.get_metadata() by hand"
    if name_arg is not None and not (
        isinstance(name_arg, cst.SimpleString)
        and reader_name is not None
        and isinstance(reader_name.value, cst.SimpleString)
        and reader_name.value.evaluated_value == name_arg.evaluated_value
    ):
        return "pipe.epoch_size(name): cannot match the name to the pipeline's reader; use reader.get_metadata() by hand"
    return None


RULE = CallSiteRule(
    id="pipe-epoch-size",
    summary='pipe.epoch_size("Reader") becomes ndd.readers.<Class>(<same arguments>).get_metadata()["epoch_size_padded"]',
    receiver="pipeline",
    methods=("epoch_size",),
    rewrite=_rewrite,
    blocker=blocker,
)
