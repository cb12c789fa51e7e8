"""Paddle ``DALIGenericIterator`` / ``DALIClassificationIterator`` over converted pipelines ->
``DaliPaddleIterator(pipe, output_map, ...)`` (one pipeline) or ``DaliPaddleMultiIterator(pipes,
...)`` (several, one per GPU), classes written into the converted file.

    loader = DALIClassificationIterator(       loader = DaliPaddleIterator(
        pipe, reader_name="Reader",                pipe, ["data", "label"], batch_size=64,
        last_batch_policy=LastBatchPolicy.PARTIAL) reader_meta=ndd.readers.File(...).get_metadata(),
                                                   last_batch_policy="PARTIAL")

Paddle's iterator is DALI's ``_DaliBaseIterator``, like PyTorch's, so the classes are the torch ones
(``dali_migrate/emitted_torch_iterator.py``, see ``torch_iterator``) with what DALI 2.4's Paddle
iterator (``nvidia/dali/plugin/paddle.py``) does differently:

* an output is a ``paddle.base.libpaddle.DenseTensor`` (Paddle's core tensor, the "LoDTensor" of
  the docs: ``.shape()`` is a method), not a ``paddle.Tensor``: the original makes it with
  ``paddle.framework.core.from_dlpack(out.as_tensor().__dlpack__(stream=...))`` (pipelines run with
  ``exec_dynamic``, DALI 2.4's default), the class the same way from ``ndd.as_tensor(batch)``:
  same values, dtype, shape and device, a GPU output ordered before Paddle's current stream of its
  GPU as in the original;
* a cut (PARTIAL) last batch is what the original's ``lod_tensor_clip`` makes: a new DenseTensor
  holding the first samples, in host memory (``CPUPlace``) even for a GPU output, and over several
  pipelines every pipeline's batch of that step is copied so, the whole ones too;
* ``output_map`` may hold ``(name, lod_level)`` pairs: level 0 is a plain name.

Left to a person (the pipeline and the iterator stay, with a marker), besides what
``torch_iterator`` leaves: an ``output_map`` written with a LoD level other than 0 (a LoDTensor with
sequence lengths, made from a ragged batch: dynamic mode has no counterpart); where the map is not
written out, the class raises when it gets such a level. Not reproduced: the original fails on an
output type Paddle's ``dtype_map`` lacks (uint16, uint32...) and, with a CUDA-less Paddle, on every
batch (it makes a ``CUDAPlace`` and asks for a CUDA stream); the class converts those. Checked
against DALI's iterator on the CPU (tests/test_paddle_iterator.py); the GPU path (the stream, a
pinned CPU output's place) follows the original's code but was not run (no CUDA build of Paddle).
"""

from __future__ import annotations

import dataclasses

import libcst as cst

from dali_migrate.rules.torch_iterator import POLICY_CLASSES, TORCH, Framework, _args, _short, blocker, make_rule

CLASS_NAME = "DaliPaddleIterator"
MULTI_CLASS_NAME = "DaliPaddleMultiIterator"

_TORCH_DOC = '''    """DALIGenericIterator over one converted pipeline (added by dali-migrate).

    Yields ``[{name: torch.Tensor}]`` per batch, with the epochs DALIGenericIterator gives: the last
    batch FILL (full, wrapping or padded), DROP (left out) or PARTIAL (cut to the epoch's samples).
    """
'''
_PADDLE_DOC = '''    """Paddle DALIGenericIterator over one converted pipeline (added by dali-migrate).

    Yields ``[{name: DenseTensor}]`` per batch (Paddle's core tensor, as DALI's iterator gives), with
    the epochs DALIGenericIterator gives: the last batch FILL (full, wrapping or padded), DROP (left
    out) or PARTIAL (cut to the epoch's samples, copied to the CPU as DALI's iterator does).
    """
'''
_TORCH_MULTI_DOC = '''    """DALIGenericIterator over several converted pipelines, one per GPU (added by dali-migrate).

    Yields a list with one ``{name: torch.Tensor}`` per pipeline, with the epochs
'''
_PADDLE_MULTI_DOC = '''    """Paddle DALIGenericIterator over several converted pipelines, one per GPU (added by dali-migrate).

    Yields a list with one ``{name: DenseTensor}`` per pipeline (a cut step copied to the CPU), with the epochs
'''
_TORCH_OUTPUT_MAP = '        assert len(set(output_map)) == len(output_map), "output_map names should be distinct"\n'
_PADDLE_OUTPUT_MAP = (
    "        # (name, LoD level) pairs, as DALI's Paddle iterator takes them; dynamic mode has no LoDTensor.\n"
    "        if any(not isinstance(v, str) and v[1] for v in output_map):\n"
    '            raise NotImplementedError("output_map with a LoD level above 0: a LoDTensor has no dynamic-mode counterpart")\n'
    "        output_map = [v if isinstance(v, str) else v[0] for v in output_map]\n"
    + _TORCH_OUTPUT_MAP
)
_NEXT = "        return self.__next__()\n"
_METHODS = _NEXT + '''
    @staticmethod
    def _paddle(out):
        # As DALI's iterator makes an output: Paddle's core DenseTensor over the dense batch's memory,
        # through DLPack; a GPU batch's work is ordered before Paddle's current stream.
        import paddle  # here: the converted file need not import paddle itself
        tensor = {ndd}.as_tensor(out)
        device_type, device_id = tensor.__dlpack_device__()
        if int(device_type) == 2:  # kDLCUDA
            capsule = tensor.__dlpack__(stream=paddle.device.cuda.current_stream(device_id).cuda_stream)
        else:
            capsule = tensor.__dlpack__()
        return paddle.framework.core.from_dlpack(capsule)

    @staticmethod
    def _cut(tensor, keep):
        # As DALI's iterator cuts a batch (lod_tensor_clip): a copy of the first samples, in host memory.
        import numpy
        import paddle
        result = paddle.framework.core.LoDTensor()
        result.set(numpy.array(tensor)[0:keep], paddle.CPUPlace())
        return result
'''


def edits(site) -> tuple:
    return (
        (_TORCH_DOC, _PADDLE_DOC),
        (_TORCH_OUTPUT_MAP, _PADDLE_OUTPUT_MAP),
        ("{name: out.torch() for name, out in zip(self.output_map, outputs)}",
         "{name: self._paddle(out) for name, out in zip(self.output_map, outputs)}"),
        ("{name: t[0:keep] for name, t in batch.items()}", "{name: self._cut(t, keep) for name, t in batch.items()}"),
        (_NEXT, _METHODS.format(ndd=site.ndd)),
    )


def multi_edits(site) -> tuple:
    return (
        (_TORCH_MULTI_DOC, _PADDLE_MULTI_DOC),
        (_TORCH_OUTPUT_MAP, _PADDLE_OUTPUT_MAP),
        ("{name: out.torch() for name, out in zip(self.output_map, outs)}",
         "{name: self._paddle(out) for name, out in zip(self.output_map, outs)}"),
        ("{name: t[0:k] for name, t in b.items()}", "{name: self._cut(t, k) for name, t in b.items()}"),
        ("{name: t[0:keep] for name, t in batches[-1].items()}", "{name: self._cut(t, keep) for name, t in batches[-1].items()}"),
        (_NEXT, _METHODS.format(ndd=site.ndd)),
    )


PADDLE = Framework(
    class_name=CLASS_NAME,
    helper="paddle-iterator",
    iterators={
        "nvidia.dali.plugin.paddle.DALIGenericIterator": "generic",
        "nvidia.dali.plugin.paddle.DALIClassificationIterator": "classification",
    },
    params=TORCH.params,
    policy_classes=POLICY_CLASSES,
    prefix="Paddle ",
    edits=edits,
    multi_class=MULTI_CLASS_NAME,
    multi_helper="paddle-multi-iterator",
    multi_edits=multi_edits,
)


def _lod_reason(call: cst.Call, site):
    """Why the output_map cannot be converted (a LoD level other than 0 written in it), or None."""
    kind = PADDLE.iterators.get(site.names.qualify(call.func))
    bound = _args(call, kind, PADDLE) if kind == "generic" else None
    output_map = bound.get("output_map") if isinstance(bound, dict) else None
    if not isinstance(output_map, (cst.List, cst.Tuple)):
        return None
    for element in output_map.elements:
        value = element.value
        if isinstance(value, cst.SimpleString) or isinstance(element, cst.StarredElement):
            continue
        level = value.elements[1].value if isinstance(value, cst.Tuple) and len(value.elements) == 2 else None
        if not (isinstance(level, cst.Integer) and level.evaluated_value == 0):
            return (f"{_short(kind, PADDLE)}: output_map asks for a LoD level (name, level): a LoDTensor with "
                    "sequence lengths has no dynamic-mode counterpart; convert by hand (iterate the converted "
                    "generator, build the LoDTensor from each batch's samples and their shapes)")
    return None


RULE = dataclasses.replace(
    make_rule(
        PADDLE,
        id="paddle-iterator",
        summary="Paddle DALIGenericIterator / DALIClassificationIterator over converted pipelines becomes DaliPaddleIterator (DaliPaddleMultiIterator over several), a class with the same epoch semantics and Paddle tensors written into the file",
    ),
    blocker=lambda call, site: _lod_reason(call, site) or blocker(call, site, PADDLE),
)
