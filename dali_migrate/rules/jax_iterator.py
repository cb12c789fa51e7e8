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

Over a list of pipelines, one per device (``[P(..., device_id=i, shard_id=i) for i in ...]``, a list
a loop fills, or ``[pipe0, pipe1]``, see ``pipe_lists``), it becomes ``DaliJaxMultiIterator(pipes,
...)``, the torch multi-pipeline class with the JAX iterator's joining of the pipelines' arrays
(``sharding=None``): one pipeline's as it is, arrays on distinct devices as one array with a
leading device axis sharded over them (what ``jax.pmap`` takes), arrays on one device stacked.

Left to a person, besides what ``torch_iterator`` leaves: ``sharding=`` (it builds a global array
over the sharding's devices) and ``pmap_compatible=True`` (a leading device axis), unless written as
their defaults (``None`` / ``False``); ``last_batch_policy=PARTIAL``. The ``@data_iterator`` decorator
and the ``clu`` peekable iterator are marked by ``not_yet_converted``.
"""

from __future__ import annotations

from dali_migrate.rules.torch_iterator import POLICY_CLASSES, Framework, make_rule

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


_TORCH_MULTI_DOC = '''    """DALIGenericIterator over several converted pipelines, one per GPU (added by dali-migrate).

    Yields a list with one ``{name: torch.Tensor}`` per pipeline, with the epochs
    DALIGenericIterator gives: the last batch FILL (full, wrapping or padded), DROP (left out) or
    PARTIAL (cut to the epoch's samples). ``reader_meta`` holds each pipeline's reader metadata.
    """
'''
_JAX_MULTI_DOC = '''    """JAX DALIGenericIterator over several converted pipelines, one per device (added by dali-migrate).

    Yields ``{name: jax.Array}`` per step, each array the pipelines' batches joined as DALI's iterator
    joins them (on distinct devices: one array with a leading device axis, sharded over them; on one
    device: stacked), with the epochs DALIGenericIterator gives: the last batch FILL (full, wrapping
    or padded) or DROP (left out). ``reader_meta`` holds each pipeline's reader metadata.
    """
'''
_TORCH_MULTI_NEXT = """        batches = [{name: out.torch() for name, out in zip(self.output_map, outs)} for outs in outputs]
        self._advance()
        if self._reader:
            if self._policy == "PARTIAL":
                left = [self.batch_size - (self._counter - self._shard_sizes_initial[s]) for s in self._shard_ids]
                if any(k < self.batch_size for k in left):
                    batches = [{name: t[0:k] for name, t in b.items()} for b, k in zip(batches, left)]
        elif self._policy == "PARTIAL" and self._counter > self._size and self._size > 0:
            # Exactly `size` samples: the first pipelines' batches whole, the last one's cut.
            diff = self._num_gpus * self.batch_size - (self._counter - self._size)
            batches = batches[0:-(-diff // self.batch_size)]
            keep = diff % self.batch_size or self.batch_size
            batches[-1] = {name: t[0:keep] for name, t in batches[-1].items()}
        return batches
"""
_JAX_MULTI_NEXT = """        import jax.dlpack  # here: the converted file need not import jax itself
        batch = {{}}
        for i, name in enumerate(self.output_map):
            batch[name] = self._join([jax.dlpack.from_dlpack({ndd}.as_tensor(outs[i])) for outs in outputs])
        self._advance()
        return batch

    @staticmethod
    def _join(arrays):
        # As DALI's JAX iterator (sharding=None) joins one output of every pipeline: one pipeline's
        # array as it is; arrays on distinct devices as one array with a leading device axis,
        # sharded over those devices; arrays all on one device stacked.
        import jax
        import jax.numpy as jnp
        import numpy
        if len(arrays) == 1:
            return arrays[0]
        assert all(a.shape == arrays[0].shape for a in arrays), "Shards shapes have to be the same."
        devices = [next(iter(a.devices())) for a in arrays]
        if len(set(devices)) != len(devices):
            assert len(set(devices)) == 1, "JAX iterator requires shards to be placed on different devices or all on the same device."
            return jnp.stack(arrays)
        mesh = jax.sharding.Mesh(numpy.array(devices), axis_names=("device",))
        sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("device"))
        shape = (len(arrays), *arrays[0].shape)
        return jax.make_array_from_single_device_arrays(shape, sharding, [jnp.expand_dims(a, 0) for a in arrays])
"""


def multi_edits(site) -> tuple:
    return (
        (_TORCH_MULTI_DOC, _JAX_MULTI_DOC),
        (_TORCH_MULTI_NEXT, _JAX_MULTI_NEXT.format(ndd=site.ndd)),
    )


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
    policy_classes=POLICY_CLASSES,
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
    multi_class="DaliJaxMultiIterator",
    multi_helper="jax-multi-iterator",
    multi_edits=multi_edits,
)

RULE = make_rule(
    JAX,
    id="jax-iterator",
    summary="JAX DALIGenericIterator over one converted pipeline becomes DaliJaxIterator, a class with the same epoch semantics written into the file",
)
