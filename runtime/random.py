"""`ndd.random`: RNG objects and the random operators (attached at import by _generate).

Outside pipeline-compat mode this matches native ndd exactly: every random call draws 7 uint32
words from an RNG (DALI's Philox4x32-10) and passes them as the operator's `_random_state`
argument, so `random.set_seed(s)` gives the same numbers as native `ndd.random.set_seed(s)`.
"""

import operator as _operator
import random as _pyrandom
import threading as _threading

from . import _backend as _be


class RNG:
    """Random number generator for random operators (`rng=`), same stream as native ndd."""

    def __init__(self, seed=None, state=None):
        if state is not None:
            if seed is not None:
                raise ValueError("Cannot specify both `seed` and `state`")
            self.set_state(state)
        else:
            self.seed = _pyrandom.randint(0, 0xFFFFFFFFFFFFFFFF) if seed is None else seed

    def __call__(self):
        """Next uint32 from the generator."""
        return self._rng.next()

    @property
    def seed(self):
        raise AttributeError("seed is write-only")

    @seed.setter
    def seed(self, value):
        self._rng = _be.Philox(value & 0xFFFFFFFFFFFFFFFF, 0, 0)

    def advance(self, n):
        n = _operator.index(n)
        if n < 0:
            raise ValueError("Cannot advance by a negative number")
        if n:
            self._rng.skipahead(n)

    def clone(self):
        return RNG(state=self.state)

    def get_state(self, *, cuda_stream=None):
        return self._rng.get_state()

    def set_state(self, value):
        self._rng = _be.Philox(value)

    state = property(get_state, set_state)

    def __repr__(self):
        return f"RNG(state='{self.state}')"


_tls = _threading.local()


def get_default_rng():
    rng = getattr(_tls, "default_rng", None)
    if rng is None:
        rng = _tls.default_rng = RNG()
    return rng


def set_seed(seed):
    """Seed the default (thread-local) RNG used by random ops without `rng=`."""
    get_default_rng().seed = seed


_STATE_WORDS = 7  # uint32 words for the backend's 25-byte random state (as ndd)


def _draw_state(rng):
    nxt = rng._rng.next
    return [nxt() for _ in range(_STATE_WORDS)]


def _resolve_rng(rng):
    if rng is None:
        return get_default_rng()
    if not isinstance(rng, RNG):
        raise ValueError(f"rng must be an instance of {RNG.__module__}.RNG, but got "
                         f"{type(rng).__module__}.{type(rng).__qualname__}")
    return rng
