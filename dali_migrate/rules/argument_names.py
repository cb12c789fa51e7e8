"""An operator argument DALI's schema does not have stops the conversion.

DALI refuses such a pipeline when it is defined (``KeyError: Argument "num_seg" is not defined for
operator "readers__Video"``), and dynamic mode refuses the argument too, though elsewhere and with
another error (a ``TypeError`` where the reader or operator is first called). Real code has them
where it was written for a custom DALI build (PaddleVideo's ``ops.VideoReader(num_seg=...,
seg_length=...)``) or an argument's old name (``fn.peek_image_shape(type=...)``, ``fn.normalize(std=...)``):
the converted code would not run either, so the pipeline is left as it was, naming the arguments.

The names known are the catalog's (DALI's own schema registry) plus the few every operator takes
from DALI's base schema and its Python layer without the schema listing them. ``fn.external_source``
is Python (its ``source=``, ``cycle=``, ``parallel=``... are no schema's): rules/external_source.py
reads its arguments.
"""

from __future__ import annotations

from typing import Optional

from dali_migrate.cst_util import dotted
from dali_migrate.legacy import SYNTHETIC_FN
from dali_migrate.rules.base import OpCallRule

#: taken by every operator: the backend (`device`), the node's name, the seed of its base schema,
#: and `preserve` (most schemas list it; the base schema has it for all)
EVERY_OPERATOR = frozenset({"device", "name", "seed", "preserve"})


#: ``types.Constant(value, dtype=None, shape=None, layout=None, device=None, **kwargs)``: Python,
#: which hands fn.constant its value as ``fdata``/``idata`` (its other keywords go on to fn.constant)
CONSTANT_OWN = frozenset({"value"})


def unknown(call, op, own=frozenset()) -> list:
    """The keywords of ``call`` that ``op``'s schema does not have (nor ``own``, the Python
    function's own parameters), in the call's order."""
    return [a.keyword.value for a in call.args
            if a.keyword is not None and a.keyword.value not in EVERY_OPERATOR and a.keyword.value not in op.args
            and a.keyword.value not in own]


def _blocker(call, op, ctx) -> Optional[str]:
    from dali_migrate.pipeline_analysis import TYPES_CONSTANT

    names = unknown(call, op, CONSTANT_OWN if ctx.names.qualify(call.func) == TYPES_CONSTANT else frozenset())
    if not names:
        return None

    # a legacy pipeline's calls are made from its ops.X(...) members: named as written there
    written = f"ops.{op.ops_name}" if (dotted(call.func) or "").startswith(SYNTHETIC_FN + ".") else f"fn.{op.fn_name}"
    spelled = ", ".join(f"`{n}`" for n in names)
    one = len(names) == 1
    return (
        f"{written} has no argument{'' if one else 's'} {spelled} in DALI {ctx.catalog.dali_version}, whose "
        f"operator schemas dali-migrate reads: DALI refuses {'it' if one else 'them'} where the pipeline is "
        f"defined (KeyError), and dynamic mode refuses {'it' if one else 'them'} too. {'Is it' if one else 'Are they'} "
        f"a custom DALI build's or an older DALI's? Give the operator arguments this DALI knows, or convert by hand"
    )


RULE = OpCallRule(
    id="argument-names",
    summary="an operator argument DALI's schema does not have stops the conversion, named",
    order=1,
    applies=lambda op: op.fn_name != "external_source",
    blocker=_blocker,
)
