"""Calling one DALI operator: argument handling, instance cache, random state, output wrapping.

One synchronous path per call, no Invocation objects: convert inputs to backend TensorLists,
find (or build) the backend operator, run it, wrap the outputs. Semantics follow native ndd:
Tensors in -> Tensors out, any Batch (or batch_size=) -> Batches out, several outputs -> tuple.
"""

import collections
import math
import os
import sys
import threading
import time

import numpy as np

from . import _backend as _be
from . import _ahead, _eval, _seeds, _types
from ._batch import Batch
from ._batch import _from_tl as _batch_from_tl
from ._device import Device
from ._tensor import Tensor
from ._tensor import _from_tl as _tensor_from_tl


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
        self._tensor_arg = {}
        self._small_ok = None
        self._ahead_ok = None

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
    r = d._tensor_arg.get(name)
    if r is None:
        try:
            r = bool(d.schema.IsTensorArgument(name))
        except RuntimeError:  # not an argument of this schema: let the spec report it
            r = False
        d._tensor_arg[name] = r
    return r


def _is_tensor_like(v):
    return isinstance(v, (Tensor, Batch, np.ndarray)) or type(v).__module__.startswith("torch")


# Stateless operator instances, LRU-bounded: scalar argument values are part of the key, so a
# loop passing a fresh Python float each call would otherwise grow the cache without bound.
_CACHE_SIZE = 512


class _Caches(threading.local):
    """Per thread: a backend operator instance keeps per-run state and is not safe to run from
    two threads at once (two threads running the same loop shared a decoder: wrong images,
    decoder failures, crashes)."""

    def __init__(self):
        self.ops = collections.OrderedDict()


_caches = _Caches()


def _get_instance(key, factory):
    _cache = _caches.ops
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


# Argument values that go into the OpSpec as they are (no _decay, not tensor-like). The type is
# part of the cache key (True == 1 == 1.0 as dict keys, but they are different spec values).
_PLAIN = frozenset({int, float, str, bool})
_SEQ = frozenset({list, tuple})

_affinity = None


def _num_threads(ctx):
    """ctx.num_threads without a sched_getaffinity system call per operator call."""
    global _affinity
    n = ctx._num_threads or _eval._global_num_threads
    if n:
        return n
    env = os.environ.get("DALI_NUM_THREADS")
    if env:
        return int(env)
    if _affinity is None:
        _affinity = _eval._default_num_threads()
    return _affinity


def _context():
    """(context, num_threads, thread pool) for this call."""
    ctx = _eval.EvalContext.current()
    try:
        nt = _num_threads(ctx)
        pool = ctx._pool
        if pool is None or ctx._pool_threads != nt:
            pool = ctx.thread_pool
    except AttributeError:  # an EvalContext without these private fields: the public way
        nt = ctx.num_threads
        pool = ctx.thread_pool
    return ctx, nt, pool


_random = None


def _random_module():
    global _random
    if _random is None:
        from . import random as mod

        _random = mod
    return _random


# Small CPU calls may run on a one-thread pool. DALI's CPU operators hand every sample to the
# thread pool; for a few microseconds of work per sample, waking the workers and waiting for
# them can cost more than the work (flip of 32 8x8x3 samples on one 2-core VM: ~40 us on a
# one-thread pool, ~100-150 us on the two-thread default pool). On another 2-core VM the same
# call was the other way round (one thread ~110 us, the default pool ~60-90 us: there the
# per-sample work dominates and two threads share it), so neither pool is chosen up front:
# the first 2 * _SMALL_PROBE calls with a cache key alternate between the one-thread pool and
# the context's pool, and the key keeps the one whose fastest run was faster (a loaded machine
# delays some runs, never all). Results do not change: only deterministic, stateless operators
# (no random state, no seed, not stateful) take this path, and they compute each sample
# independently of the thread that runs it. A call whose fastest run on the one thread takes
# longer than _SMALL_MAX_S is real work and goes to the context's pool either way.
_SMALL_ELEMENTS = 16384  # total input elements (all samples) for a call to count as small
_SMALL_MAX_BATCH = 64
_SMALL_MAX_S = 250e-6
_SMALL_EXCLUDED = ("Normalize",)  # batch-wide statistics: keep the thread partitioning as is
_demoted = set()
# key (of the one-thread instance) -> its _Probe while probing; True once small (keys that go
# back to the context's pool are in _demoted)
_small_state = {}
_SMALL_PROBE = 8
_small_tls = threading.local()
_ONE_THREAD, _CONTEXT_POOL = 0, 1  # the two sides of a probe


class _Probe:
    """A key's probe runs so far, per side: how many, and the fastest."""

    __slots__ = ("key", "runs", "fastest")

    def __init__(self, key):
        self.key, self.runs, self.fastest = key, [0, 0], [math.inf, math.inf]


def _small_pool():
    """This thread's one-thread pool (see _backend.single_thread_pool), or None."""
    pool = getattr(_small_tls, "pool", False)
    if pool is False:
        facade, pin = _be.single_thread_pool()
        pool = _small_tls.pool = _SmallPool(facade, pin) if facade is not None else None
    if pool is not None and pool.pin is not None:
        pool.pin.follow()  # (runtime/_pin.py: the worker waits on this thread's core)
    return pool


class _SmallPool:
    __slots__ = ("facade", "num_threads", "pin")

    def __init__(self, facade, pin=None):
        self.facade = facade
        self.num_threads = 1
        self.pin = pin


def _small_ok(d):
    r = d._small_ok
    if r is None:
        r = d._small_ok = ("cpu" in d.backends and not d.random_state and not d.random_seed
                           and not d.stateful and not d.schema_name.startswith(_SMALL_EXCLUDED))
    return r


def _elements_at_most(tls, limit):
    # (called only for batches of at most _SMALL_MAX_BATCH samples: summing in C beats stopping early)
    total = 0
    for tl in tls:
        total += sum(map(_prod, tl.shape()))
    return total <= limit


def invoke(d, inputs, kwargs, batch_size=None, device=None, rng=None, site=None,
           _persistent=None):
    """Run operator `d` (an OpDef) once. `site` is the caller frame (for seeded random ops)."""
    # 1. batch mode: any Batch among inputs/arguments, or an explicit batch_size
    bs = batch_size
    gpu_input = None
    for x in inputs:
        if isinstance(x, Batch):
            xbs = len(x._tl)
            if bs is not None and xbs != bs:
                raise ValueError(f"Inconsistent batch size: {xbs} != {bs}")
            bs = xbs
            if gpu_input is None and type(x._tl) is not _be.TensorListCPU:
                gpu_input = x
        elif gpu_input is None and isinstance(x, Tensor) and type(
                x._tl if x._storage is None else x._storage) not in _CPU_STORAGE:
            gpu_input = x
    static = {}
    skey = []  # hashable image of `static`, for the instance cache
    tensor_args = None
    for k, v in kwargs.items():
        if v is None:
            continue
        t = type(v)
        if t in _PLAIN:
            static[k] = v
            skey.append((k, t, v))
        elif t in _SEQ:
            static[k] = v
            skey.append((k, t, _freeze(v)))
        elif _is_tensor_like(v) and _is_tensor_arg(d, k):
            if tensor_args is None:
                tensor_args = {}
            tensor_args[k] = v
            if isinstance(v, Batch):
                vbs = len(v._tl)
                if bs is not None and vbs != bs:
                    raise ValueError(f"Inconsistent batch size: {vbs} != {bs}")
                bs = vbs
        else:
            v = _decay(v)
            static[k] = v
            skey.append((k, type(v), _freeze(v)))
    is_batch = bs is not None
    n = bs if is_batch else 1

    # 2. device / backend
    if device is None:
        if gpu_input is not None:
            device = gpu_input.device
            if device.device_type != "gpu":  # not a GPU tensor after all (unknown storage type)
                device = Device.CPU
        else:
            device = Device.CPU
        if device.device_type == "cpu" and "cpu" not in d.backends:
            device = Device("gpu")
    elif not isinstance(device, Device):
        device = Device(device)
    backend = d.backend_for(device)
    to_gpu = backend != "cpu" and backend != "mixed"

    # 3. inputs and argument inputs as TensorLists
    in_tls = []
    in_meta = []
    for x in inputs:
        if x is None:
            continue
        if isinstance(x, Batch):
            tl = x._tl
        else:
            if not isinstance(x, Tensor):
                x = Tensor(x)
            tl = x._broadcast_tl(n)
        is_cpu = type(tl) is _be.TensorListCPU
        if to_gpu and is_cpu:
            tl = _be.to_gpu(tl, device.device_id)
            is_cpu = False
        in_tls.append(tl)
        in_meta.append(("cpu" if is_cpu else "gpu", tl.ndim(), tl.dtype, tl.layout()))
    arg_tls = {}
    if tensor_args:
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
    ctx, nt, pool = _context()
    persistent_key = None
    if d.random_state or d.random_seed:
        seed = static.pop("seed", None)
        if seed is not None:
            skey = [e for e in skey if e[0] != "seed"]
        persistent_key, seed = _seeds.resolve(d, site, seed, rng)
        if persistent_key is None and d.random_state:
            rnd = _random_module()
            words = rnd._draw_state(rnd._resolve_rng(rng))
            st = _be.TensorCPU(np.array(words, dtype=np.uint32), "")
            arg_tls["_random_state"] = (_be.TensorListCPU([st]) if n == 1
                                        else _be.TensorListCPU.broadcast(st, n))
        elif persistent_key is not None:
            static["seed"] = seed

    arg_meta = {k: _meta(t) for k, t in arg_tls.items()} if arg_tls else {}
    dev_id = device.device_id

    if persistent_key is not None:
        op = _seeds.persistent_instance(
            persistent_key, lambda: _be.Operator(d.schema_name, backend, static, in_meta,
                                                 arg_meta, n, nt, dev_id))
        if n > op.max_batch_size:
            raise RuntimeError(f"The batch size {n} is larger than the batch size {op.max_batch_size}"
                               f" this seeded operator was first called with.")
    else:
        max_bs = 1 << (n - 1).bit_length()
        rest = (tuple(skey), tuple(in_meta),
                tuple(sorted(arg_meta.items())) if arg_meta else ())
        small = None
        probe = None  # (the key's _Probe, the side this run is on)
        if backend == "cpu" and nt > 1 and n <= _SMALL_MAX_BATCH and _small_ok(d):
            key = (d.schema_name, backend, dev_id, 1, max_bs) + rest
            # (a key that went back to the context's pool is settled before the samples are
            # counted: that count is most of what deciding costs at batch 32)
            if key not in _demoted and _elements_at_most(in_tls, _SMALL_ELEMENTS):
                small = _small_pool()
            if small is not None:
                state = _small_state.get(key)
                if state is True:
                    nt, pool = 1, small
                else:
                    if state is None:
                        if len(_small_state) > 4096:
                            _small_state.clear()
                        state = _small_state[key] = _Probe(key)
                    if state.runs[_ONE_THREAD] <= state.runs[_CONTEXT_POOL]:
                        nt, pool, probe = 1, small, (state, _ONE_THREAD)
                    else:
                        small, probe = None, (state, _CONTEXT_POOL)
        if small is None:
            key = (d.schema_name, backend, dev_id, nt, max_bs) + rest
        _cache = _caches.ops
        op = _cache.get(key)
        if op is None:
            op = _cache[key] = _be.Operator(d.schema_name, backend, static, in_meta, arg_meta,
                                            max_bs, nt, dev_id)
            if len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
        else:
            _cache.move_to_end(key)
        # the result of this call worked ahead, if it was (runtime/_ahead.py)
        ticket = None
        if _ahead._tracked and not arg_tls and _ahead.eligible(d):
            outs, ticket = _ahead.take(key, in_tls, ctx.cuda_stream, backend, op)
            if outs is not None:
                _ahead.start(ticket, op, ctx.cuda_stream, backend, nt, n)
                return wrap_outputs(outs, is_batch)
        if op._ahead_future is not None:
            _ahead.settle(op)
        if probe is not None:
            t0 = _perf_counter()
            outs = op.run(pool, in_tls, arg_tls, n, ctx.cuda_stream)
            _probe_small(probe, _perf_counter() - t0)
        else:
            outs = op.run(pool, in_tls, arg_tls, n, ctx.cuda_stream)
        if ticket is not None:
            _ahead.start(ticket, op, ctx.cuda_stream, backend, nt, n)
        return wrap_outputs(outs, is_batch)

    # 5. run and wrap
    outs = op.run(pool, in_tls, arg_tls, n, ctx.cuda_stream)
    return wrap_outputs(outs, is_batch)


def _probe_small(probe, dt):
    """Count one probe run (see _SMALL_PROBE); once both pools had theirs, the key keeps the
    one-thread pool if its fastest run was the faster (and not real work), else goes back."""
    state, side = probe
    state.runs[side] += 1
    if dt < state.fastest[side]:
        state.fastest[side] = dt
    if min(state.runs) < _SMALL_PROBE:
        return
    key = state.key
    if _small_state.get(key) is not state:  # (cleared meanwhile, or decided by another thread)
        return
    one, other = state.fastest
    if one <= other and one <= _SMALL_MAX_S:
        _small_state[key] = True
    else:
        if len(_demoted) > 4096:
            _demoted.clear()
        _demoted.add(key)
        _small_state.pop(key, None)


_perf_counter = time.perf_counter
_prod = math.prod


_CPU_STORAGE = frozenset({_be.TensorCPU, _be.TensorListCPU})


def wrap_outputs(outs, is_batch):
    if len(outs) == 1:
        return _new_batch(outs[0]) if is_batch else _new_tensor(outs[0])
    if is_batch:
        res = tuple(_new_batch(o) for o in outs)
    else:
        res = tuple(_new_tensor(o) for o in outs)
    return res if res else None


_new_batch = _batch_from_tl
_new_tensor = _tensor_from_tl


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
                # As native ndd: a Python list or tuple joins the expression on its device.
                a = Tensor(a, device="gpu" if gpu and isinstance(a, (list, tuple)) else None)
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
