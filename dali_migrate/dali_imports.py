"""Which local names a module binds to DALI, so rules can recognise ``fn.x`` however it was imported.

A full scope analysis (libcst's QualifiedNameProvider) costs several times a parse; imports are
what decide whether ``dfn.flip`` is DALI's, so reading the import statements is enough here.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import libcst as cst

from dali_migrate import cst_walk
from dali_migrate.cst_util import dotted

FN = "nvidia.dali.fn"
OPS = "nvidia.dali.ops"
TYPES = "nvidia.dali.types"
MATH = "nvidia.dali.math"
NDD = "nvidia.dali.experimental.dynamic"
# The experimental decorator is pipeline_def plus `debug=` (step-by-step execution for
# inspection): the same graph, and debug= is dropped like the other execution-only settings.
PIPELINE_DEF = {"nvidia.dali.pipeline_def", "nvidia.dali.pipeline.pipeline_def",
                "nvidia.dali.pipeline.experimental.pipeline_def"}
PIPELINE_CLASS = {"nvidia.dali.Pipeline", "nvidia.dali.pipeline.Pipeline"}


def _module_path(node: cst.BaseExpression) -> str:
    return dotted(node) or ""


@dataclasses.dataclass
class DaliNames:
    #: local name -> the fully qualified thing it stands for ("fn" -> "nvidia.dali.fn")
    aliases: dict = dataclasses.field(default_factory=dict)
    #: import statements that bind DALI names, with the local names each binds
    statements: list = dataclasses.field(default_factory=list)

    def qualify(self, node: cst.BaseExpression) -> Optional[str]:
        """Fully qualified dotted name of ``node`` if it starts with a DALI-bound name."""
        path = dotted(node)
        if path is None:
            return None
        head, _, rest = path.partition(".")
        target = self.aliases.get(head)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target

    def fn_op(self, node: cst.BaseExpression) -> Optional[str]:
        """``readers.file`` for ``fn.readers.file`` (however fn was imported), else None."""
        q = self.qualify(node)
        if q and q.startswith(FN + "."):
            return q[len(FN) + 1 :]
        return None

    def ops_op(self, node: cst.BaseExpression) -> Optional[str]:
        q = self.qualify(node)
        if q and q.startswith(OPS + "."):
            return q[len(OPS) + 1 :]
        return None

    def is_pipeline_def(self, node: cst.BaseExpression) -> bool:
        return self.qualify(node) in PIPELINE_DEF

    def local_names_for(self, qualified: str) -> list:
        return [name for name, q in self.aliases.items() if q == qualified]

    @property
    def any_dali(self) -> bool:
        return any(q == "nvidia.dali" or q.startswith("nvidia.dali.") or q == "nvidia" for q in self.aliases.values())


def collect(module: cst.Module) -> DaliNames:
    names = DaliNames()

    class _V:
        def visit_Import(self, node: cst.Import) -> None:
            bound = []
            for alias in node.names:
                mod = _module_path(alias.name)
                if not (mod == "nvidia" or mod.startswith("nvidia.")):
                    continue
                if alias.asname is not None:
                    local = alias.asname.name.value
                    names.aliases[local] = mod
                else:
                    # "import nvidia.dali.fn" binds "nvidia"; the dotted use then qualifies as is.
                    local = mod.split(".")[0]
                    names.aliases[local] = local
                bound.append(local)
            if bound:
                names.statements.append((node, bound))

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            if node.relative or node.module is None:
                return
            mod = _module_path(node.module)
            if not (mod == "nvidia" or mod.startswith("nvidia.")):
                return
            if isinstance(node.names, cst.ImportStar):
                names.statements.append((node, ["*"]))
                return
            bound = []
            for alias in node.names:
                name = _module_path(alias.name)
                local = alias.asname.name.value if alias.asname is not None else name
                names.aliases[local] = f"{mod}.{name}"
                bound.append(local)
            names.statements.append((node, bound))

    v = _V()
    # Imports are statements: nothing inside an expression can hold one.
    for node in cst_walk.walk(module, not_into=(cst.BaseExpression,)):
        if type(node) is cst.Import:
            v.visit_Import(node)
        elif type(node) is cst.ImportFrom:
            v.visit_ImportFrom(node)
    return names
