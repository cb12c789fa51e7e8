"""``tl.dtype`` -> ``batch.dtype.type_id``: a TensorList's ``dtype`` property is a
``types.DALIDataType`` (``DALIDataType.UINT8``); an ndd.Batch's is an ``ndd.DType``
(``DType(kind=Kind.unsigned, bits=8)``), whose ``type_id`` is that DALIDataType, so comparisons
with ``types.UINT8``, ``str()`` and printing keep their results."""

import libcst as cst

from dali_migrate.rules.base import CallSiteRule


def _rewrite(node, receiver, site):
    return cst.Attribute(value=cst.Attribute(value=receiver, attr=cst.Name("dtype")), attr=cst.Name("type_id"))


RULE = CallSiteRule(
    id="batch-dtype",
    summary="TensorList.dtype (a DALIDataType) becomes batch.dtype.type_id",
    receiver="batch-attribute",
    methods=("dtype",),
    rewrite=_rewrite,
)
