"""Pipeline-compatible random streams.

A DALI Pipeline seeds its operators like this (C++ `Pipeline::Init` / `PrepareOpSpec`):
`std::seed_seq{pipeline_seed}.generate()` fills 1024 uint32 seeds, and at build every operator
whose schema has a random seed argument and no explicit `seed=` takes the next one, in the order
the Python side added operators (depth-first post-order from the outputs). Inside, the operator
keeps a Philox generator seeded once and advanced every run.

So one persistent backend operator per call site, built with the seed the pipeline would have
given it, reproduces the pipeline's draws bit for bit. `pipeline_compat(seed=S)` does that:
call sites take seeds from the sequence in first-call order (= pipeline order for straight-line
code), or from an explicit mapping `site_seeds`. The equivalence checker pushes a session of its
own (dali_migrate/verify/run.py) that hands out the built original pipeline's seeds per operator
kind, which is why sessions are told each call site's schema.
"""

import contextlib
import functools
import threading

_M32 = 0xFFFFFFFF
MAX_SEEDS = 1024


def seed_seq_generate(seed_values, n):
    """std::seed_seq(seed_values).generate(n words), C++11 [rand.util.seedseq] p8-p9."""
    v = [x & _M32 for x in seed_values]
    s = len(v)
    b = [0x8B8B8B8B] * n
    if n == 0:
        return b
    t = 11 if n >= 623 else 7 if n >= 68 else 5 if n >= 39 else 3 if n >= 7 else (n - 1) // 2
    p = (n - t) // 2
    q = p + t
    m = max(s + 1, n)

    def T(x):
        return x ^ (x >> 27)

    for k in range(m):
        r1 = (1664525 * T(b[k % n] ^ b[(k + p) % n] ^ b[(k - 1) % n])) & _M32
        if k == 0:
            r2 = r1 + s
        elif k <= s:
            r2 = r1 + k % n + v[k - 1]
        else:
            r2 = r1 + k % n
        r2 &= _M32
        b[(k + p) % n] = (b[(k + p) % n] + r1) & _M32
        b[(k + q) % n] = (b[(k + q) % n] + r2) & _M32
        b[k % n] = r2
    for k in range(m, m + n):
        r3 = (1566083941 * T((b[k % n] + b[(k + p) % n] + b[(k - 1) % n]) & _M32)) & _M32
        r4 = (r3 - k % n) & _M32
        b[(k + p) % n] ^= r3
        b[(k + q) % n] ^= r4
        b[k % n] = r4
    return b


@functools.lru_cache(maxsize=16)
def pipeline_seeds(pipeline_seed):
    """The 1024 operator seeds a Pipeline(seed=pipeline_seed) hands out, in order.

    The C++ side stores the seed as int64 and puts it into `std::seed_seq{seed}`, whose
    elements are uint_least32_t: only the low 32 bits matter.
    """
    return tuple(seed_seq_generate([pipeline_seed], MAX_SEEDS))


def site_key(frame):
    """Identity of a call site: code object + bytecode offset (as native ndd's _call_site)."""
    return (frame.f_code, frame.f_lasti)


def site_description(frame):
    """(filename, lineno, col) of a call site, for matching explicit seed mappings."""
    code = frame.f_code
    col = None
    if hasattr(code, "co_positions"):
        for i, pos in enumerate(code.co_positions()):
            if i == frame.f_lasti // 2:
                col = pos[2]
                break
    return (code.co_filename, frame.f_lineno, col)


class PipelineCompat:
    """State of one pipeline-compatible session (see module doc)."""

    def __init__(self, seed=None, site_seeds=None):
        self.seed = seed
        self._seeds = pipeline_seeds(seed) if seed is not None else None
        self._next = 0
        self._site_seeds = dict(site_seeds or {})
        self.assigned = {}  # site key -> seed, in first-call order
        self.instances = {}
        self.lock = threading.Lock()

    def _explicit(self, frame, ordinal):
        if not self._site_seeds:
            return None
        if ordinal in self._site_seeds:
            return self._site_seeds[ordinal]
        fn, line, col = site_description(frame)
        for k in ((fn, line, col), (fn, line)):
            if k in self._site_seeds:
                return self._site_seeds[k]
        return None

    def mapped(self, frame, schema=None):
        """The seed an explicit site mapping gives this call site (by location only), else None.

        schema (here and in seed_for): the operator's schema name, for sessions that hand out
        seeds per operator kind (the equivalence checker's)."""
        if not self._site_seeds:
            return None
        fn, line, col = site_description(frame)
        for k in ((fn, line, col), (fn, line)):
            if k in self._site_seeds:
                return self._site_seeds[k]
        return None

    def brought_seed(self, frame, schema):
        """A seeded call site that passed its own seed= (it keeps it); sessions that count the
        call sites of each operator kind (the equivalence checker's) take note."""

    def seed_for(self, frame, schema=None):
        key = site_key(frame)
        seed = self.assigned.get(key)
        if seed is None:
            with self.lock:
                ordinal = len(self.assigned)
                seed = self._explicit(frame, ordinal)
                if seed is None:
                    if self._seeds is None:
                        raise RuntimeError(
                            f"pipeline_compat: no seed for call site {site_description(frame)} "
                            "and no pipeline seed to derive one from")
                    seed = self._seeds[self._next % MAX_SEEDS]
                    self._next += 1
                self.assigned[key] = seed
        return seed


_state = threading.local()
_global_stack = []  # compat sessions are process-wide: loops may run ops from worker threads


def current():
    return _global_stack[-1] if _global_stack else None


@contextlib.contextmanager
def pipeline_compat(seed=None, site_seeds=None):
    """Run random ops and readers the way a `Pipeline(seed=seed)` would seed them.

    site_seeds: optional {call site: seed}; a call site is (filename, lineno), (filename,
    lineno, col) or the ordinal of the seeded call site in first-call order (0, 1, ...).
    """
    session = PipelineCompat(seed, site_seeds)
    _global_stack.append(session)
    try:
        yield session
    finally:
        _global_stack.remove(session)


def enable_pipeline_compat(seed=None, site_seeds=None):
    """Non-context-manager form of `pipeline_compat` (stays on until disable)."""
    session = PipelineCompat(seed, site_seeds)
    _global_stack.append(session)
    return session


def disable_pipeline_compat():
    _global_stack.clear()


_explicit_instances = {}


def resolve(d, frame, explicit_seed, rng):
    """-> (persistent key, seed) for a seeded instance, or (None, None) for ndd's per-call
    random state."""
    session = current()
    if explicit_seed is not None:
        if frame is None:
            return None, None
        if session is not None:
            session.brought_seed(frame, d.schema_name)
        return (None, site_key(frame), d.schema_name, explicit_seed), explicit_seed
    if session is None or frame is None:
        return None, None
    seed = session.seed_for(frame, d.schema_name)
    return (session, site_key(frame), d.schema_name), seed


def persistent_instance(key, factory):
    store = key[0].instances if key[0] is not None else _explicit_instances
    inst = store.get(key)
    if inst is None:
        inst = store[key] = factory()
    return inst
