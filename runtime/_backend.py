"""The ONE module that touches DALI's private APIs.

Everything the runtime needs from DALI internals goes through here:
- the schema registry (`GetSchema`, the list of registered operators),
- building an `OpSpec` for a schema + arguments (using the ops API's own argument conversion, so
  values are typed exactly as in pipeline mode),
- running one operator: backend `_Operator`, `_Workspace` + thread pool, `AddInput` /
  `AddArgumentInput`, `SetupAndRun`, `GetOutputs` (what native ndd does, minus its Python layers),
- a public-API fallback when those private classes are missing or broken: a one-operator
  `Pipeline` fed by external_source (set DALI_MIGRATE_RUNTIME_BACKEND=pipeline to force it).

If a DALI release renames something, this is the file to fix.
"""

import os

import nvidia.dali.backend_impl as _b
import nvidia.dali.ops as _ops_api
import nvidia.dali.types as _types

from . import _alloc_thread

TensorCPU = _b.TensorCPU
TensorListCPU = _b.TensorListCPU
TensorGPU = getattr(_b, "TensorGPU", None)
TensorListGPU = getattr(_b, "TensorListGPU", None)
CPU_ONLY_DEVICE_ID = _types.CPU_ONLY_DEVICE_ID


class PyRandomEngine:
    """The RNG engine of DALI 1.5x's native ndd (`random.RNG` there is Python's `random.Random`,
    one `randint(0, 2**32 - 1)` per word), with the interface of the backend's Philox class.
    Used where the backend has no `_Philox4x32_10` (before 2.x), so seeded streams still equal
    that release's native ndd."""

    def __init__(self, *args):
        import random

        self._r = random.Random()
        if len(args) == 1:
            self.set_state(args[0])
        else:
            self._r.seed(args[0])

    def next(self):
        return self._r.randint(0, 0xFFFFFFFF)

    def skipahead(self, n):
        for _ in range(n):
            self._r.randint(0, 0xFFFFFFFF)

    def get_state(self):
        return ("PyRandom", self._r.getstate())

    def set_state(self, state):
        if not (isinstance(state, tuple) and len(state) == 2 and state[0] == "PyRandom"):
            raise ValueError(f"not a state of this DALI release's RNG: {state!r}")
        self._r.setstate(state[1])


# ndd's RNG engine: the backend's Philox4x32-10 (2.x), else DALI 1.5x ndd's Python generator.
Philox = getattr(_b, "_Philox4x32_10", None) or PyRandomEngine

HAS_DIRECT = hasattr(_b, "_Operator") and hasattr(_b, "_Workspace")
# True: run every operator through the one-op Pipeline fallback. None: not decided yet - the
# first operator probes whether the direct path runs at all (DALI 1.53's `_Operator.SetupAndRun`
# needs a CUDA driver even for CPU operators, so on a machine without one the fallback is used).
USE_PIPELINE = True if (os.environ.get("DALI_MIGRATE_RUNTIME_BACKEND") == "pipeline"
                        or not HAS_DIRECT) else None
DIRECT_PROBLEM = None  # why the direct path was found unusable (the probe's error), if it was


def use_pipeline():
    global USE_PIPELINE
    if USE_PIPELINE is None:
        USE_PIPELINE = not _direct_path_runs()
    return USE_PIPELINE


def _direct_path_runs():
    """Run a CPU Copy through `_Operator` once; False (and DIRECT_PROBLEM set) if it fails."""
    global DIRECT_PROBLEM
    try:
        import numpy as np

        spec, _ = build_spec("Copy", "cpu", {}, [("cpu", 1, _types.DALIDataType.UINT8, "")], {})
        spec.AddArg("num_threads", 1)
        spec.AddArg("device_id", CPU_ONLY_DEVICE_ID)
        spec.AddArg("max_batch_size", 1)
        op = _b._Operator(spec)
        _, facade = _new_thread_pool(1, None)
        ws = _b._Workspace(facade, None)
        ws.AddInput(TensorListCPU(np.arange(3, dtype=np.uint8)[None], ""))
        op.SetupAndRun(ws, 1)
        (out,) = ws.GetOutputs()
        ok = np.array_equal(np.asarray(out[0]), np.arange(3, dtype=np.uint8))
        if not ok:
            DIRECT_PROBLEM = "the direct path returned wrong data"
        return ok
    except Exception as e:  # noqa: BLE001 - any failure means: use the public fallback
        DIRECT_PROBLEM = f"{type(e).__name__}: {e}".strip()
        return False


def _probe_spec_input_meta():
    """Whether OpSpec.AddInput/AddArgumentInput take (ndim, dtype, layout) (2.x; not 1.53)."""
    try:
        _b.OpSpec("Copy").AddInput("in0", "cpu", 1, _types.DALIDataType.UINT8, "")
        return True
    except TypeError:
        return False


SPEC_INPUT_META = _probe_spec_input_meta()

# Internal schemas got a leading underscore in 2.x (`_ArithmeticGenericOp`, `_TensorSubscript`,
# `_SubscriptDimCheck`); 1.x registers them without it. The runtime uses the 2.x names and this
# maps them to what the installed DALI registers.
_names = {}


def real_name(name):
    r = _names.get(name)
    if r is None:
        registered = _ops_api._registry._all_registered_ops()
        r = name
        if name not in registered and name.startswith("_") and name[1:] in registered:
            r = name[1:]
        _names[name] = r
    return r


def get_schema(name):
    return _b.GetSchema(real_name(name))


def alias_for(schema):
    """Name of the schema `schema` is an alias of, or "" (OpSchema.AliasFor is 2.x only)."""
    f = getattr(schema, "AliasFor", None)
    return f() if f is not None else ""


def is_abstract(schema):
    """OpSchema.IsAbstract (2.x); before it there were no abstract schemas in the registry."""
    f = getattr(schema, "IsAbstract", None)
    return bool(f()) if f is not None else False


def deprecated_in_version(schema):
    """The release a deprecated schema was deprecated in ("" when unknown, e.g. on 1.x)."""
    f = getattr(schema, "DeprecatedInVersion", None)
    return f() if f is not None else ""


def schema_and_target(name):
    """(schema as registered, schema actually run) - they differ for aliases."""
    if hasattr(_b, "GetSchemaAndTarget"):
        return _b.GetSchemaAndTarget(name)
    s = _b.GetSchema(name)
    alias = alias_for(s)
    return s, (_b.GetSchema(alias) if alias else s)


def all_schema_names():
    return list(_ops_api._registry._all_registered_ops())


def cuda_device_count():
    try:
        return _b.GetCUDADeviceCount()
    except Exception:  # no driver
        return 0


def _new_thread_pool(num_threads, device_id):
    """(pool object to keep alive, what `_Workspace` takes)."""
    if hasattr(_b, "_NewThreadPool"):  # 2.1+: a pool and a per-call facade
        pool = _b._NewThreadPool(num_threads, device_id=device_id)
        return pool, pool._create_facade()
    # 1.52 - 2.0: the _ThreadPool itself goes into the workspace
    dev = CPU_ONLY_DEVICE_ID if device_id is None else device_id
    pool = _b._ThreadPool(num_threads, dev)
    return pool, pool


class ThreadPool:
    """Worker threads for CPU operators; DALI 2.1 split the pool from the per-call facade."""

    def __init__(self, num_threads, device_id=None):
        self.num_threads = num_threads
        self.device_id = device_id
        self._pool = None
        if use_pipeline():
            self.facade = None
        else:
            self._pool, self.facade = _new_thread_pool(num_threads, device_id)


def build_spec(schema_name, backend, static_args, inputs_meta, arg_inputs_meta):
    """OpSpec for `schema_name` with scalar `static_args` and placeholder inputs.

    inputs_meta: [(device, ndim, type_id, layout)], arg_inputs_meta: {name: (ndim, type_id,
    layout)}. Returns (spec, num_outputs). Raises like the ops API does for bad arguments.
    """
    schema_name = real_name(schema_name)
    schema = _b.GetSchema(schema_name)
    spec = _b.OpSpec(schema_name)
    spec.AddArg("device", backend)
    op_name = schema.OperatorName()
    args = _ops_api._handle_arg_deprecations(schema, dict(static_args), op_name)
    _ops_api._add_spec_args(schema, spec, args)
    n_in = len(inputs_meta)
    if n_in < schema.MinNumInput() or n_in > schema.MaxNumInput():
        raise ValueError(f"Operator {op_name} expects from {schema.MinNumInput()} to "
                         f"{schema.MaxNumInput()} inputs, but received {n_in}.")
    for i, (dev, ndim, tid, layout) in enumerate(inputs_meta):
        if SPEC_INPUT_META:
            spec.AddInput(f"in{i}", dev, ndim, tid, layout)
        else:
            spec.AddInput(f"in{i}", dev)
    for name in sorted(arg_inputs_meta):
        if not schema.IsTensorArgument(name):
            raise TypeError(f"The argument `{name}` of operator {op_name} is not a tensor "
                            f"argument and cannot be a Tensor/Batch; pass a Python value.")
        if SPEC_INPUT_META:
            ndim, tid, layout = arg_inputs_meta[name]
            spec.AddArgumentInput(name, f"arg_{name}", ndim, tid, layout)
        else:
            spec.AddArgumentInput(name, f"arg_{name}")
    n_out = schema.CalculateOutputs(spec) + schema.CalculateAdditionalOutputs(spec)
    out_dev = "cpu" if backend == "cpu" else "gpu"
    for i in range(n_out):
        spec.AddOutput(f"out{i}", out_dev)
    return spec, n_out


_streams: dict = {}


def default_stream(device_id):
    """One CUDA stream per device for operators run without one of the caller's: work on a
    device stays ordered, as it is on native ndd's per-device default stream."""
    s = _streams.get(device_id)
    if s is None:
        with device_guard(device_id):
            s = _streams[device_id] = _b.Stream(device_id)
    return s


def stream_for_device(device_id):
    """The stream a GPU operator runs on when the context's stream is for another device (or
    there is none). `_stream` replaces this with its resolution (current / default / lazy)."""
    return default_stream(device_id)


class Operator:
    """One backend operator instance. Stateful ops (readers, seeded random ops) keep their state
    in here between calls, so one instance must serve one call site."""

    def __init__(self, schema_name, backend, static_args, inputs_meta, arg_names_meta,
                 max_batch_size, num_threads, device_id=None):
        self.schema_name = schema_name
        self.backend = backend
        self.max_batch_size = max_batch_size
        self._ahead_future = None  # a call worked ahead on this instance (runtime/_ahead.py)
        self._placement = _alloc_thread.Placement()  # which thread allocates its outputs
        spec, self.num_outputs = build_spec(schema_name, backend, static_args, inputs_meta,
                                            arg_names_meta)
        self.arg_names = sorted(arg_names_meta)
        if backend != "cpu" and device_id is None:
            device_id = _b.GetCUDACurrentDevice()
        self._gpu_id = device_id if backend != "cpu" else None
        spec.AddArg("num_threads", num_threads)
        spec.AddArg("device_id", device_id if backend != "cpu" else CPU_ONLY_DEVICE_ID)
        spec.AddArg("max_batch_size", max_batch_size)
        if use_pipeline():
            self._impl = _PipelineOperator(schema_name, backend, static_args, len(inputs_meta),
                                           self.arg_names, max_batch_size, num_threads,
                                           device_id)
        else:
            self._impl = None
            with device_guard(self._gpu_id):
                self._op = _b._Operator(spec)

    def stream_for(self, stream):
        """The backend stream a run given `stream` (a runtime `Stream`, DALI's own, or None)
        runs on: DALI's own stream object where there is one; a GPU operator never runs on
        another device's stream, and always on one (it is what gives its workspace a device)."""
        if stream is not None:
            stream_dev = getattr(stream, "device_id", None)
            if self._gpu_id is not None and stream_dev is not None and stream_dev != self._gpu_id:
                stream = None
            else:
                stream = getattr(stream, "_backend_obj", stream)
        if self._gpu_id is not None and stream is None:
            stream = stream_for_device(self._gpu_id)
        return stream

    def run(self, pool, inputs, arg_inputs, batch_size, stream=None):
        """inputs: list of TensorList; arg_inputs: {name: TensorList}. Returns a tuple of
        TensorLists (one per output)."""
        if self._impl is not None:
            return self._impl.run(inputs, arg_inputs, batch_size)
        stream = self.stream_for(stream)
        if self._gpu_id is not None:
            with device_guard(self._gpu_id):
                return self._run(pool, inputs, arg_inputs, batch_size, stream)
        return self._placement.run(self._run, pool, inputs, arg_inputs, batch_size, stream)

    def _run(self, pool, inputs, arg_inputs, batch_size, stream):
        ws = _b._Workspace(pool.facade, stream)
        for x in inputs:
            ws.AddInput(x)
        for name, x in arg_inputs.items():
            ws.AddArgumentInput(name, x)
        self._op.SetupAndRun(ws, batch_size)
        return ws.GetOutputs()

    def reader_meta(self):
        if self._impl is not None:
            return self._impl.reader_meta()
        return self._op.GetReaderMeta()

    def save_checkpoint(self, stream=None):
        """The operator's checkpoint (bytes), for a reader built with `checkpointing=True`."""
        if self._impl is not None or not hasattr(self._op, "SaveCheckpoint"):
            raise NotImplementedError("reader checkpointing needs the backend's direct operator "
                                      "path (`_Operator.SaveCheckpoint`), not available here")
        return self._op.SaveCheckpoint(getattr(stream, "_backend_obj", stream))

    def restore_checkpoint(self, data):
        """Restore a checkpoint from `save_checkpoint` (before the operator first runs)."""
        if self._impl is not None or not hasattr(self._op, "RestoreCheckpoint"):
            raise NotImplementedError("reader checkpointing needs the backend's direct operator "
                                      "path (`_Operator.RestoreCheckpoint`), not available here")
        self._op.RestoreCheckpoint(data)


class _PipelineOperator:
    """Public-API fallback: one operator in a Pipeline, inputs fed through external_source."""

    def __init__(self, schema_name, backend, static_args, n_inputs, arg_names, max_batch_size,
                 num_threads, device_id):
        from nvidia.dali import fn
        from nvidia.dali.pipeline import Pipeline

        schema = get_schema(schema_name)
        mod = fn
        for part in schema.ModulePath():
            mod = getattr(mod, part)
        from nvidia.dali.fn import _to_snake_case

        op_fn = getattr(mod, _to_snake_case(schema.OperatorName()))
        self._names = [f"in{i}" for i in range(n_inputs)] + [f"arg_{a}" for a in arg_names]
        self._arg_names = arg_names
        self._bs = max_batch_size
        # DALI breaks a pipeline for good once a run has failed. An operator without state (not
        # a reader, not a random one) gives the same results from a new pipeline, so one is
        # built for its next call, as the direct path goes on; a stateful one keeps raising
        # rather than silently starting its stream again.
        is_stateful = getattr(schema, "IsStateful", None)
        self._stateless = is_stateful is not None and not is_stateful()

        def build():
            pipe = Pipeline(batch_size=max_batch_size, num_threads=num_threads,
                            device_id=device_id,
                            prefetch_queue_depth=1, exec_async=False, exec_pipelined=False)
            with pipe:
                ins = [fn.external_source(name=n, device="cpu") for n in self._names[:n_inputs]]
                args = {a: fn.external_source(name=f"arg_{a}", device="cpu") for a in arg_names}
                out = op_fn(*ins, device=backend, name="dali_migrate_op", **static_args, **args)
                out = list(out) if isinstance(out, (list, tuple)) else [out]
                pipe.set_outputs(*out)
            pipe.build()
            return pipe

        self._build = build
        self._pipe = build()

    def run(self, inputs, arg_inputs, batch_size):
        if self._pipe is None:
            self._pipe = self._build()
        if not self._names and batch_size not in (None, self._bs):
            raise NotImplementedError("the pipeline fallback runs input-less operators only at "
                                      "their first batch size")
        try:
            for name, x in zip(self._names,
                               list(inputs) + [arg_inputs[a] for a in self._arg_names]):
                self._pipe.feed_input(name, x)
            outs = self._pipe.run()
        except Exception:
            if self._stateless:
                self._pipe = None
            raise
        # the pipeline reuses its output buffers on the next run: hand out copies
        return tuple(copy_tl(o) for o in outs)

    def reader_meta(self):
        return self._pipe.reader_meta("dali_migrate_op")


def broadcast(sample, n):
    """A TensorList with `n` copies of one backend tensor."""
    if isinstance(sample, TensorCPU):
        return TensorListCPU.broadcast(sample, n)
    return TensorListGPU.broadcast(sample, n)


def to_cpu(tl):
    return tl.as_cpu()


class device_guard:
    """Make `device_id` the current CUDA device inside the block (no-op for None or when it
    already is). `_as_gpu()` and GPU operators allocate on the current device, so a process
    driving GPU 1 (a second torchrun rank) must switch to it first."""

    __slots__ = ("device_id", "_prev")

    def __init__(self, device_id):
        self.device_id = device_id
        self._prev = None

    def __enter__(self):
        if self.device_id is not None:
            cur = _b.GetCUDACurrentDevice()
            if cur != self.device_id:
                self._prev = cur
                _b.SetCUDACurrentDevice(self.device_id)
        return self

    def __exit__(self, *exc):
        if self._prev is not None:
            _b.SetCUDACurrentDevice(self._prev)
            self._prev = None
        return False


def to_gpu(tl, device_id=None):
    if cuda_device_count() == 0:
        raise RuntimeError("No CUDA device is available: cannot move data to the GPU")
    if device_id is None:
        return tl._as_gpu()
    with device_guard(device_id):
        return tl._as_gpu()


def gpu_dlpack(storage, stream=None):
    return storage._expose_dlpack_capsule(stream) if hasattr(storage, "_expose_dlpack_capsule") \
        else storage.__dlpack__(stream)


def arithmetic_const_desc(value):
    """Type suffix of a scalar constant in an arithmetic expression (`int32`, `float32`...)."""
    from nvidia.dali.ops._operators import math as _m

    return _m._to_type_desc(value)


def copy_tl(tl):
    """Deep copy of a TensorList (same device)."""
    if isinstance(tl, TensorListCPU):
        import numpy as np

        arrs = [np.array(tl[i]) for i in range(len(tl))]
        return TensorListCPU([TensorCPU(a, tl.layout()) for a in arrs], tl.layout())
    return tl._make_copy() if hasattr(tl, "_make_copy") else tl


def with_layout(tl, layout):
    """The same data under another layout (a view for CPU; layout is metadata only)."""
    samples = [tl[i] for i in range(len(tl))]
    cls = TensorListCPU if isinstance(tl, TensorListCPU) else TensorListGPU
    return cls(samples, layout)


def split_outer(tensor, layout=None):
    """TensorList whose samples are the slices of `tensor` along its first dimension."""
    import numpy as np

    if isinstance(tensor, TensorCPU):
        arr = np.asarray(tensor)
        inner = layout if layout is not None else (tensor.layout()[1:] or "")
        return TensorListCPU(np.ascontiguousarray(arr), inner)
    raise NotImplementedError("splitting a GPU tensor into a batch")


def external_source_callback(source, cycle):
    """(callback with no arguments, takes_inputs) for an external source's `source`/`cycle`,
    with pipeline mode's own rules and messages (DALI's `get_callback_from_source`)."""
    from nvidia.dali._utils.external_source_impl import get_callback_from_source

    callback, desc = get_callback_from_source(source, cycle)
    return callback, bool(getattr(desc, "has_inputs", False))


_KDL_CUDA, _KDL_CUDA_MANAGED = 2, 13


def is_cuda_dlpack(obj) -> bool:
    """Does ``obj`` export its data through DLPack from CUDA memory (a CUDA torch/CuPy/JAX array)?"""
    get = getattr(obj, "__dlpack_device__", None)
    if get is None or not hasattr(obj, "__dlpack__"):
        return False
    try:
        kind, _ = get()
    except Exception:
        return False
    return int(kind) in (_KDL_CUDA, _KDL_CUDA_MANAGED)


def tensor_gpu_from_dlpack(obj, layout=None):
    """Wrap CUDA data in a backend TensorGPU without copying, as native ndd does: the producer
    is asked for a capsule ordered on our stream for its device (DLPack's stream protocol)."""
    _, device_id = obj.__dlpack_device__()
    stream = default_stream(int(device_id))
    try:
        capsule = obj.__dlpack__(stream=stream.handle)
    except TypeError:  # producers from before DLPack's stream keyword
        capsule = obj.__dlpack__()
    with device_guard(int(device_id)):
        return _b.TensorGPU(capsule, layout=layout, stream=stream)


def single_thread_pool():
    """(a one-thread pool of the 1.52-2.x `_ThreadPool` kind, which runs small jobs with the least
    hand-over cost, a runtime/_pin.Pin for its worker or None); (None, None) where the backend
    lacks it or operators run through the Pipeline fallback."""
    cls = getattr(_b, "_ThreadPool", None)
    if cls is None or use_pipeline():
        return None, None
    from . import _pin

    try:
        return _pin.make_pinned(lambda: cls(1, CPU_ONLY_DEVICE_ID))
    except Exception:  # noqa: BLE001 - no small-call path then
        return None, None
