"""JAX ``DALIGenericIterator`` over one converted pipeline -> ``DaliJaxIterator(pipe, output_map, ...)``,
a class written into the converted file.

    loader = DALIGenericIterator(              loader = DaliJaxIterator(
        [pipe], ["images", "labels"],              pipe, ["images", "labels"], batch_size=32,
        reader_name="Reader",                      reader_meta=ndd.readers.File(...).get_metadata(),
        last_batch_policy=LastBatchPolicy.DROP)    last_batch_policy="DROP")

JAX's iterator is DALI's ``_DaliBaseIterator``, like PyTorch's, so the class is the torch one
(``dali_migrate/emitted_torch_iterator.py``, see ``torch_iterator``) with the JAX iterator's two
differences: each batch is a ``{name: jax.Array}`` (not a list with one dict), and an output becomes
an array with ``jax.dlpack.from_dlpack(ndd.as_tensor(batch))``, the DLPack path the original takes
from ``TensorList.as_tensor()``: same values, dtype and shape, and the same device (a GPU output on
its GPU, a CPU output on the CPU). PARTIAL does not exist for JAX (the original fails when it is
made), so the class has no cutting.

Left to a person, besides what ``torch_iterator`` leaves: ``sharding=`` (it builds a global array
over the sharding's devices) and ``pmap_compatible=True`` (a leading device axis), unless written as
their defaults (``None`` / ``False``); ``last_batch_policy=PARTIAL``. The ``@data_iterator`` decorator
and the ``clu`` peekable iterator are marked by ``not_yet_converted``.
"""

from __future__ import annotations

from dali_migrate.rules.torch_iterator import Framework, make_rule

CLASS_NAME = "DaliJaxIterator"

_TORCH_DOC = '''    """DALIGenericIterator over one converted pipeline (added by dali-migrate).

    Yields ``[{name: torch.Tensor}]`` per batch, with the epochs DALIGenericIterator gives: the last
    batch FILL (full, wrapping or padded), DROP (left out) or PARTIAL (cut to the epoch's samples).
    """
'''
_JAX_DOC = '''    """JAX DALIGenericIterator over one converted pipeline (added by dali-migrate).

    Yields ``{name: jax.Array}`` per batch, with the epochs DALIGenericIterator gives: the last batch
    FILL (full, wrapping or padded) or DROP (left out).
    """
'''
_TORCH_CONVERT = "        batch = {name: out.torch() for name, out in zip(self.output_map, outputs)}\n"
_JAX_CONVERT = (
    "        import jax.dlpack  # here: the converted file need not import jax itself\n"
    "        batch = {{name: jax.dlpack.from_dlpack({ndd}.as_tensor(out)) for name, out in zip(self.output_map, outputs)}}\n"
)
_TORCH_PARTIAL_AND_RETURN = """        keep = self.batch_size
        if self._reader:
            if self._policy == "PARTIAL":
                keep = self.batch_size - (self._counter - self._shard_sizes_initial[self._shard_id])
        elif self._policy == "PARTIAL" and self._size > 0 and self._counter > self._size:
            keep = (self.batch_size - (self._counter - self._size)) % self.batch_size or self.batch_size
        if keep < self.batch_size:
            batch = {name: t[0:keep] for name, t in batch.items()}
        return [batch]
"""


def edits(site) -> tuple:
    return (
        (_TORCH_DOC, _JAX_DOC),
        (_TORCH_CONVERT, _JAX_CONVERT.format(ndd=site.ndd)),
        (_TORCH_PARTIAL_AND_RETURN, "        return batch\n"),
    )


JAX = Framework(
    class_name=CLASS_NAME,
    helper="jax-iterator",
    iterators={
        "nvidia.dali.plugin.jax.DALIGenericIterator": "generic",
        "nvidia.dali.plugin.jax.iterator.DALIGenericIterator": "generic",
    },
    params={
        "generic": ["pipelines", "output_map", "size", "reader_name", "auto_reset", "last_batch_padded",
                    "last_batch_policy", "prepare_first_batch", "sharding", "pmap_compatible"],
    },
    policies=("FILL", "DROP"),
    policy_classes=("nvidia.dali.plugin.base_iterator.LastBatchPolicy", "nvidia.dali.plugin.jax.iterator.LastBatchPolicy"),
    prefix="JAX ",
    defaults_only={"sharding": ("None",), "pmap_compatible": ("None", "False")},
    unconverted={
        "sharding": "not converted (the original builds a global array over the sharding's devices); iterate "
                    "the converted generator, convert each output with jax.dlpack.from_dlpack(ndd.as_tensor(batch)) "
                    "and build it with jax.make_array_from_single_device_arrays, keeping the epoch length / "
                    "last-batch policy by hand",
        "pmap_compatible": "not converted (the original adds a leading device axis); convert by hand, or drop "
                           "the argument and add the axis to each array",
    },
    refused_policy={"PARTIAL": "the JAX iterator does not support PARTIAL (the original fails when it is made); "
                               "choose FILL or DROP first"},
    edits=edits,
)

RULE = make_rule(
    JAX,
    id="jax-iterator",
    summary="JAX DALIGenericIterator over one converted pipeline becomes DaliJaxIterator, a class with the same epoch semantics written into the file",
)
