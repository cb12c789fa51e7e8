"""Calling one DALI operator: argument handling, instance cache, random state, output wrapping.

One synchronous path per call, no Invocation objects: convert inputs to backend TensorLists,
find (or build) the backend operator, run it, wrap the outputs. Semantics follow native ndd:
Tensors in -> Tensors out, any Batch (or batch_size=) -> Batches out, several outputs -> tuple.
"""

import collections
import sys

import numpy as np

from . import _backend as _be
from . import _eval, _seeds, _types
from ._batch import Batch
from ._device import Device
from ._tensor import Tensor

# Argument names that ndd does not expose (pipeline-only concepts).
UNSUPPORTED_ARGS = frozenset({"bytes_per_sample_hint", "preserve"})

_VEC_TO_SCALAR = {}
for _v, _s in (("_INT32_VEC", "INT32"), ("_INT64_VEC", "INT64"), ("_FLOAT_VEC", "FLOAT"),
               ("_BOOL_VEC", "BOOL"), ("_STRING_VEC", "STRING")):
    if hasattr(_types._dt.DALIDataType, _v):
        _VEC_TO_SCALAR[getattr(_types._dt.DALIDataType, _v)] = getattr(_types._dt, _s)


class OpDef:
    """Static facts about one schema, computed once at import."""

    def __init__(self, schema_name):
        s = _be.get_schema(schema_name)
        self.schema = s
        self.schema_name = schema_name
        self.backends = frozenset(s.GetSupportedBackends())
        self.random_state = s.HasRandomStateArg() if hasattr(s, "HasRandomStateArg") else False
        self.random_seed = s.HasRandomSeedArg() if hasattr(s, "HasRandomSeedArg") else (
            s.HasArgument("seed"))
        self.stateful = s.IsStateful()
        self._arg_dtypes = {}

    def arg_dtype(self, name):
        """DType a tensor argument is converted to (as ndd does), or None if unknown."""
        if name not in self._arg_dtypes:
            try:
                tid = self.schema.GetArgumentType(name)
                tid = _VEC_TO_SCALAR.get(tid, tid)
                self._arg_dtypes[name] = _types.DType.from_type_id(tid)
            except (KeyError, RuntimeError):
                self._arg_dtypes[name] = None
        return self._arg_dtypes[name]

    def backend_for(self, device):
        dt = device.device_type
        if dt in self.backends:
            return dt
        if dt == "gpu" and "mixed" in self.backends:
            return "mixed"
        raise ValueError(f'Invalid device "{device}" for operator `{self.schema.OperatorName()}`')


_defs = {}


def opdef(schema_name):
    d = _defs.get(schema_name)
    if d is None:
        d = _defs[schema_name] = OpDef(schema_name)
    return d


def _freeze(v):
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    return v


def _decay(v):
    """Python value for the OpSpec: ndd dtypes -> DALIDataType, Device -> its type name."""
    if isinstance(v, _types.DType):
        return v.type_id
    if isinstance(v, Device):
        return v.device_type
    if v is str:
        return _types._dt.STRING
    if v is bool:
        return _types._dt.BOOL
    if v is int or v is float:
        raise ValueError(f"Do not use Python built-in type {v} as an argument. "
                         f"Use one of the DALI types instead.")
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


def _is_tensor_arg(d, name):
    try:
        return d.schema.IsTensorArgument(name)
    except RuntimeError:  # not an argument of this schema: let the spec report it
        return False


def _is_tensor_like(v):
    return isinstance(v, (Tensor, Batch, np.ndarray)) or type(v).__module__.startswith("torch")


# Stateless operator instances, LRU-bounded: scalar argument values are part of the key, so a
# loop passing a fresh Python float each call would otherwise grow the cache without bound.
_CACHE_SIZE = 512
_cache = collections.OrderedDict()


def _get_instance(key, factory):
    inst = _cache.get(key)
    if inst is None:
        inst = _cache[key] = factory()
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    else:
        _cache.move_to_end(key)
    return inst


def _meta(tl):
    return (tl.ndim(), tl.dtype, tl.layout())


def invoke(d, inputs, kwargs, batch_size=None, device=None, rng=None, site=None,
           _persistent=None):
    """Run operator `d` (an OpDef) once. `site` is the caller frame (for seeded random ops)."""
    # 1. batch mode: any Batch among inputs/arguments, or an explicit batch_size
    bs = batch_size
    for x in inputs:
        if isinstance(x, Batch):
            if bs is not None and x.batch_size != bs:
                raise ValueError(f"Inconsistent batch size: {x.batch_size} != {bs}")
            bs = x.batch_size
    static = {}
    tensor_args = {}
    for k, v in kwargs.items():
        if v is None:
            continue
        if _is_tensor_like(v) and _is_tensor_arg(d, k):
            tensor_args[k] = v
            if isinstance(v, Batch):
                if bs is not None and v.batch_size != bs:
                    raise ValueError(f"Inconsistent batch size: {v.batch_size} != {bs}")
                bs = v.batch_size
        else:
            static[k] = _decay(v)
    is_batch = bs is not None
    n = bs if is_batch else 1

    # 2. device / backend
    if device is None:
        device = Device.CPU
        for x in inputs:
            if isinstance(x, (Tensor, Batch)) and x.device.device_type == "gpu":
                device = x.device
                break
        if "cpu" not in d.backends and device.device_type == "cpu":
            device = Device("gpu")
    elif not isinstance(device, Device):
        device = Device(device)
    backend = d.backend_for(device)

    # 3. inputs and argument inputs as TensorLists
    in_tls = []
    for x in inputs:
        if x is None:
            continue
        if isinstance(x, Batch):
            tl = x._tl
        else:
            if not isinstance(x, Tensor):
                x = Tensor(x)
            tl = x._broadcast_tl(n)
        if backend != "cpu" and backend != "mixed" and isinstance(tl, _be.TensorListCPU):
            tl = _be.to_gpu(tl, device.device_id)
        in_tls.append(tl)
    arg_tls = {}
    for k, v in tensor_args.items():
        dt = d.arg_dtype(k)
        if isinstance(v, Batch):
            if dt is not None and v.dtype != dt:
                v = Batch(v, dtype=dt)
            arg_tls[k] = v._tl
        else:
            if not isinstance(v, Tensor) or (dt is not None and v.dtype != dt):
                v = Tensor(v, dtype=dt)
            arg_tls[k] = v._broadcast_tl(n)

    # 4. random operators: per-call state (ndd) or a persistent seeded instance (pipeline compat)
    ctx = _eval.EvalContext.current()
    persistent_key = None
    if d.random_state or d.random_seed:
        seed = static.pop("seed", None)
        persistent_key, seed = _seeds.resolve(d, site, seed, rng)
        if persistent_key is None and d.random_state:
            from . import random as _random

            words = _random._draw_state(_random._resolve_rng(rng))
            st = Tensor(np.array(words, dtype=np.uint32))
            arg_tls["_random_state"] = st._broadcast_tl(n)
        elif persistent_key is not None:
            static["seed"] = seed

    in_meta = tuple(("cpu" if isinstance(t, _be.TensorListCPU) else "gpu",) + _meta(t)
                    for t in in_tls)
    arg_meta = {k: _meta(t) for k, t in arg_tls.items()}
    nt = ctx.num_threads
    dev_id = device.device_id

    def factory(max_bs):
        return lambda: _be.Operator(d.schema_name, backend, static, list(in_meta), arg_meta,
                                    max_bs, nt, dev_id)

    if persistent_key is not None:
        op = _seeds.persistent_instance(persistent_key, factory(n))
        if n > op.max_batch_size:
            raise RuntimeError(f"The batch size {n} is larger than the batch size {op.max_batch_size}"
                               f" this seeded operator was first called with.")
    else:
        max_bs = 1 << (n - 1).bit_length()
        key = (d.schema_name, backend, dev_id, nt, max_bs, _freeze(static), in_meta,
               tuple(sorted(arg_meta.items())))
        op = _get_instance(key, factory(max_bs))

    # 5. run and wrap
    outs = op.run(ctx.thread_pool, in_tls, arg_tls, n, ctx.cuda_stream)
    return wrap_outputs(outs, is_batch)


def wrap_outputs(outs, is_batch):
    if is_batch:
        res = tuple(Batch(_tl=o) for o in outs)
    else:
        res = tuple(Tensor(_tl=o) for o in outs)
    if len(res) == 1:
        return res[0]
    return res if res else None


def call_schema(schema_name, *inputs, **kwargs):
    """Internal helper: run an operator by schema name (Cast, Pad, TensorSubscript...)."""
    return invoke(opdef(schema_name), inputs, kwargs)


def _const_desc(v):
    if type(v) is bool:
        return "bool"
    if type(v) is int:
        if not -(2**31) <= v < 2**31:
            raise OverflowError(f"Integer {v} is out of range for int32.")
        return "int32"
    return "float32"


def arithmetic(name, *args):
    """Elementwise expression `name(args)` via ArithmeticGenericOp (pipeline-mode semantics)."""
    desc, inputs, ints, reals = [], [], [], []
    gpu = any(isinstance(a, (Tensor, Batch)) and a.device.device_type == "gpu" for a in args)
    for a in args:
        if type(a) in (bool, int) or isinstance(a, (np.integer, np.bool_)):
            a = a.item() if isinstance(a, np.generic) else a
            desc.append(f"${len(ints)}:{_const_desc(a)}")
            ints.append(int(a))
        elif type(a) is float or isinstance(a, np.floating):
            desc.append(f"${len(reals)}:float32")
            reals.append(float(a))
        else:
            if not isinstance(a, (Tensor, Batch)):
                a = Tensor(a)
            if (a.device.device_type == "gpu") != gpu:
                raise ValueError("Cannot mix GPU and CPU inputs.")
            desc.append(f"&{len(inputs)}")
            inputs.append(a)
    kw = {"expression_desc": f"{name}({' '.join(desc)})"}
    if ints:
        kw["integer_constants"] = ints
    if reals:
        kw["real_constants"] = reals
    return invoke(opdef("_ArithmeticGenericOp"), inputs, kw,
                  device=Device("gpu") if gpu else Device.CPU)


def caller_frame(depth):
    return sys._getframe(depth + 1)
