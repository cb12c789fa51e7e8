"""What the operator-call rules need to know about the pipeline they work in."""

from __future__ import annotations

import dataclasses

import libcst as cst

from dali_migrate.catalog import Catalog
from dali_migrate import cst_walk, own_seed
from dali_migrate.cst_util import attr_chain, fresh_name
from dali_migrate.dali_imports import DaliNames


@dataclasses.dataclass
class PipelineContext:
    names: DaliNames
    catalog: Catalog
    ndd: str  # the local name the converted code uses for the ndd module
    taken: set  # identifiers already used in the module; new ones must avoid them
    batch_size: str = "batch_size"
    seed: str = "seed"
    #: names bound by statements that run once, before the loop (parameters, setup code)
    setup_names: set = dataclasses.field(default_factory=set)
    #: statements to run once before the loop, made by rules (e.g. an RNG for an explicit seed)
    hoisted: list = dataclasses.field(default_factory=list)
    rng_name: str = ""  # set on first use, see :meth:`rng`
    seed_name: str = ""  # set on first use, see :meth:`drawn_seed`
    #: the whole module (rules that look at definitions a pipeline uses, e.g. an external source's class)
    module: object = None
    #: (iterable expression, name): the loop draws one batch per iteration from it instead of
    #: ``while True`` (an external source drives the pipeline)
    source_loop: object = None
    #: modules the converted code needs imported (``import X``)
    imports: list = dataclasses.field(default_factory=list)
    #: statements to run once after the pipeline's own setup code, right before the loop (an
    #: external source's iterator: its expression may use the setup's names)
    loop_setup: list = dataclasses.field(default_factory=list)
    #: statements at the start of every iteration, before the operators: they fetch the
    #: iteration's external data, and ``return`` where the pipeline raised StopIteration
    draws: list = dataclasses.field(default_factory=list)
    #: the external sources' ``source=`` expressions: DALI evaluates them, and calls iter() on
    #: an iterable, when it defines the graph (rules/pipeline_def.py's made_with)
    sources_made: list = dataclasses.field(default_factory=list)
    #: the external-source rule's form of the loop for an iterator that resets the pipeline (a
    #: ``rules.external_source.Restart``), or why it has none (a str); None: no external source
    restart: object = None
    #: statement index -> statements to run before the loop at that statement's place (Python
    #: calls the pipeline evaluated once, when it was built: rules/build_time_calls.py)
    before_statement: dict = dataclasses.field(default_factory=dict)
    #: id(node as written) -> the name that holds its value in the loop (same rule)
    build_time_replace: dict = dataclasses.field(default_factory=dict)
    #: per-pipeline state of rules that rewrite several calls together, by rule id
    rule_state: dict = dataclasses.field(default_factory=dict)
    #: the analysed pipeline (a ``PipelineInfo``): rules that look at where a call's value goes
    pipeline: object = None
    #: how converted code names numpy: the file's own name, else one the engine imports if used
    numpy: str = "np"
    #: while the operator rules rewrite a call: that call as written (``rewrite`` gets a rebuilt
    #: node, whose place in the pipeline cannot be looked up)
    call_as_written: object = None
    #: id(call as written) -> the expression that replaces that call once the calls inside it are
    #: rewritten: a rule gave the value of the whole while rewriting the call it holds
    #: (rules/constant.py: ``types.Constant(15).float32()``)
    outer_replace: dict = dataclasses.field(default_factory=dict)

    def need_import(self, module: str) -> str:
        if module not in self.imports:
            self.imports.append(module)
        return module

    def types_module(self) -> str:
        """How converted code names ``nvidia.dali.types``: the file's own name, else imported on use."""
        local = self.names.local_names_for("nvidia.dali.types")
        return local[0] if local else self.need_import("nvidia.dali.types")

    def ndd_attr(self, path: str) -> cst.BaseExpression:
        return attr_chain(f"{self.ndd}.{path}")

    def rng(self) -> cst.Name:
        """The pipeline-wide RNG, seeded with the pipeline seed (created before the loop, from
        :meth:`drawn_seed`)."""
        if not self.rng_name:
            self.rng_name = fresh_name("rng", self.taken)
            self.drawn_seed()
        return cst.Name(self.rng_name)

    def drawn_seed(self) -> cst.Name:
        """The seed the pipeline-wide RNG and the shuffling readers take: the pipeline seed, or
        where there is none (None, or negative as DALI 2.4 still takes it) one drawn from the OS
        when the pipeline is made (rules/pipeline_def.build writes the line). A pipeline without a
        seed draws one of its own in C++ every time it is made; ndd does not: a reader given
        seed=None shuffles in one fixed order in every run and every process, and
        ``ndd.random.RNG(seed=None)`` takes its seed from Python's global ``random`` (moving the
        program's own draws, and giving every process that seeds ``random`` alike the same
        augmentations)."""
        if not self.seed_name:
            self.seed_name = fresh_name(f"{self.seed}_or_random", self.taken)
        return cst.Name(self.seed_name)

    def hoist_rng(self, base: str, seed: cst.BaseExpression) -> cst.Name:
        """A separate RNG for an operator that had its own ``seed=``, created once before the loop;
        where that seed may be None, the pipeline-wide RNG then (``own_seed``)."""
        name = fresh_name(base, self.taken)
        # A call in the seed was evaluated where the pipeline made the operator
        # (rules/build_time_calls.py: `seed_2 = pick_seed()` at that statement's place, in the
        # order the pipeline ran such calls): the RNG is made right after it.
        place = self.hoisted
        read = cst_walk.variables(seed)
        for stmts in self.before_statement.values():
            # (an `if` there holds reads made once under their branch: rules/build_time_calls.py)
            if any(type(s) is cst.SimpleStatementLine and read & cst_walk.variables(s.body[0].targets[0].target)
                   for s in stmts):
                place = stmts
        lines = []
        if not (own_seed.never_none(seed) or own_seed.is_none(seed) or own_seed.reevaluable(seed)):
            # (`a or b`: read once into a name, to be tested for None and passed)
            value, seed = seed, cst.Name(fresh_name(f"{name}_seed", self.taken))
            lines.append(cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(seed)], value=value)]))
        call = cst.Call(func=self.ndd_attr("random.RNG"), args=[cst.Arg(keyword=cst.Name("seed"), value=seed, equal=_EQ)])
        if not own_seed.never_none(seed):
            call = own_seed.or_else(seed, self.rng(), body=call)
        lines.append(cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=call)]))
        place.extend(lines)
        return cst.Name(name)


_EQ = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
