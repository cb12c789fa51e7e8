"""``tl.layout()`` -> ``(batch.layout or "")``: a TensorList's layout is a method giving "" where
there is none; an ndd.Batch's is a property giving None there."""

import libcst as cst

from dali_migrate.rules.base import CallSiteRule


def _rewrite(call, receiver, site):
    prop = cst.Attribute(value=receiver, attr=cst.Name("layout"))
    either = cst.BooleanOperation(left=prop, operator=cst.Or(), right=cst.SimpleString('""'))
    return either.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _blocker(call, site):
    if call.args:
        return "TensorList.layout() with arguments: convert by hand"
    return None


RULE = CallSiteRule(
    id="batch-layout",
    summary='TensorList.layout() becomes (batch.layout or "")',
    receiver="batch",
    methods=("layout",),
    rewrite=_rewrite,
    blocker=_blocker,
)
