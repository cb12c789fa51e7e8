"""`ndd.checkpoint`: save and resume readers' positions and RNGs' states (native ndd 2.4 API).

    reader = ndd.readers.File(file_root=..., enable_checkpointing=True)
    rng = ndd.random.RNG(seed=42)
    ckpt = ndd.checkpoint.Checkpoint()
    ckpt.register(reader, "reader"); ckpt.register(rng, "rng")
    ... ; ckpt.collect(); ckpt.save("ckpt_{seq:04d}.json")
    # later, in a new process: build the same objects, then
    ckpt = ndd.checkpoint.Checkpoint(); ckpt.load("ckpt_{seq:04d}.json")
    ckpt.register(reader, "reader"); ckpt.register(rng, "rng")   # applies the states

Readers need `enable_checkpointing=True` (or registration before their first iteration, which
enables it) and restore only before their first iteration; the backend operator's
`SaveCheckpoint`/`RestoreCheckpoint` does the work. The JSON format (version 2) and the state
strings are native ndd's, so a checkpoint moves between the runtime and native ndd.
"""

from __future__ import annotations

import glob
import json
import os
import re
import string
from typing import Any, NamedTuple, Optional

__all__ = ["Checkpoint", "current"]

_CHECKPOINT_FORMAT_VERSION = 2


class _StateEntry(NamedTuple):
    state: Any
    type_name: Optional[str] = None


def _check_pattern(pattern):
    seen = False
    for _literal, field, _spec, _conv in string.Formatter().parse(pattern):
        if field is None:
            continue
        if field != "seq":
            raise ValueError(f"Unsupported field {{{field}}} in checkpoint pattern. "
                             "Only `{seq}` (with an optional format spec) is allowed.")
        if seen:
            raise ValueError("`{seq}` may appear at most once in a checkpoint pattern.")
        seen = True
    if not seen:
        raise ValueError("Checkpoint pattern must include `{seq}`.")


def _matching_files(pattern):
    """(seq, path) for the files matching a `{seq}` pattern."""
    _check_pattern(pattern)
    glob_parts, regex = [], ["^"]
    for literal, field, _spec, _conv in string.Formatter().parse(pattern):
        glob_parts.append(glob.escape(literal))
        regex.append(re.escape(literal))
        if field is not None:
            glob_parts.append("*")
            regex.append(r"(?P<seq>\d+)")
    regex.append("$")
    rx = re.compile("".join(regex))
    for path in glob.iglob("".join(glob_parts)):
        m = rx.match(path)
        if m is not None:
            yield int(m.group("seq")), path


def _is_reader(op):
    from ._readers import Reader

    return isinstance(op, Reader)


class Checkpoint:
    """Map from a key to the state of a stateful object (readers, `random.RNG`): `register`,
    `collect`, `restore`, `serialize`/`deserialize`, `save`/`load`. Objects only need
    `get_state(cuda_stream=None)` and `set_state(state)`."""

    def __init__(self):
        self._ops: dict = {}
        self._reverse: dict = {}
        self._states: dict = {}
        self._dirty: set = set()
        self._complete = False
        self._loaded = False
        self._save_seq = None

    def clear(self):
        """Forget all registered objects and states."""
        self._ops.clear()
        self._states.clear()
        self._dirty.clear()
        self._reverse.clear()
        self._complete = False
        self._loaded = False
        self._save_seq = None

    @property
    def is_complete(self):
        """True if `collect` was the last operation to populate the states."""
        return self._complete

    @property
    def is_loaded(self):
        """True if `load`/`deserialize` was the last operation to populate the states."""
        return self._loaded

    @property
    def names(self):
        """Keys of all registered objects."""
        return tuple(self._ops)

    def __len__(self):
        return len(self._ops)

    def __contains__(self, name):
        return str(name) in self._ops

    def register(self, op, name=None):
        """Add a reader or RNG under `name` (or a sequential `__op_N` key). Returns the key.
        A pending state for the key (from `load`) is applied at once."""
        old_key = self._reverse.get(id(op))
        if _is_reader(op):
            op._enable_checkpointing()
        if name is None:
            if old_key:
                self._maybe_apply(old_key)
                return old_key
            if self._complete:
                raise RuntimeError("Cannot register a new operator into a checkpoint that has "
                                   "been completed via `collect`. Call `clear` first.")
            key = f"__op_{len(self._ops)}"
            if self._loaded and key not in self._states:
                raise KeyError(f"Loaded checkpoint has no state for the operator's key {key!r}. "
                               "If your registration order changed since the checkpoint was "
                               "saved, use the named form `register(op, name)` instead.")
            self._ops[key] = op
            self._reverse[id(op)] = key
            self._maybe_apply(key)
            return key
        if name.startswith("__op_"):
            raise ValueError("Manually assigned names must not start with '__op_'.")
        if not name:
            raise ValueError("The name must not be empty.")
        key = name
        if old_key is not None and old_key != key:
            raise RuntimeError(f"Cannot register the operator with a new key {key!r} when it's "
                               f"already been added with the key {old_key!r}.")
        old_op = self._ops.get(key)
        if old_op is not None:
            if old_op is not op:
                if type(old_op) is not type(op):
                    raise TypeError(f"Cannot replace operator {key!r} of type "
                                    f"{type(old_op).__qualname__!r} with an operator of type "
                                    f"{type(op).__qualname__!r}.")
                del self._reverse[id(old_op)]
                self._ops[key] = op
                self._reverse[id(op)] = key
            self._maybe_apply(key)
            return key
        if self._complete:
            raise RuntimeError(f"Cannot register a new op {key!r} into a completed checkpoint. "
                               "Call `clear` first.")
        if self._loaded and key not in self._states:
            raise KeyError(f"Checkpoint was loaded but does not contain a state for {key!r}.")
        self._ops[key] = op
        self._reverse[id(op)] = key
        self._maybe_apply(key)
        return key

    def _maybe_apply(self, key):
        if key in self._dirty:
            entry = self._states[key]
            op = self._ops[key]
            if entry.type_name is not None and type(op).__qualname__ != entry.type_name:
                raise TypeError(f"Type mismatch for operator {key!r}: checkpoint stores state "
                                f"for type {entry.type_name!r}, but the registered operator is "
                                f"of type {type(op).__qualname__!r}.")
            op.set_state(entry.state)
            self._dirty.discard(key)

    def get_state(self, name):
        """The stored state of the object registered under `name` (None if none yet)."""
        key = str(name)
        if key not in self._ops:
            raise KeyError(f"No op registered under {key!r}.")
        entry = self._states.get(key)
        return None if entry is None else entry.state

    def set_state(self, name, value, op_type=None):
        """Set the state for a key by hand; applied on the next `register`/`restore`."""
        key = str(name)
        if self._complete and key not in self._ops:
            raise KeyError(f"No operator registered under {key!r}.")
        if op_type is None:
            type_name = None
        elif isinstance(op_type, str):
            type_name = op_type
        elif isinstance(op_type, type):
            type_name = op_type.__qualname__
        else:
            raise TypeError(f"`op_type` must be a class or a string, got {op_type!r}.")
        self._states[key] = _StateEntry(state=value, type_name=type_name)
        self._dirty.add(key)

    def collect(self):
        """Take the state of every registered object (the checkpoint is then complete)."""
        extra = set(self._states) - set(self._ops)
        if extra:
            raise RuntimeError("Checkpoint state has entries with no corresponding registered "
                               f"ops: {sorted(extra)}.")
        from ._eval import EvalContext

        new_states = {}
        stream = None
        for key, op in self._ops.items():
            if stream is None and _is_reader(op) and op._device != "cpu":
                stream = EvalContext.current().cuda_stream
            new_states[key] = _StateEntry(state=op.get_state(cuda_stream=stream),
                                          type_name=type(op).__qualname__)
        self._states = new_states
        self._dirty.clear()
        self._complete = True
        self._loaded = False

    def restore(self):
        """Apply every pending state (register does it per object)."""
        if not self._states:
            return
        extra = set(self._states) - set(self._ops)
        if extra:
            raise RuntimeError("Checkpoint state has entries with no corresponding registered "
                               f"ops: {sorted(extra)}.")
        missing = set(self._ops) - set(self._states)
        if missing:
            raise RuntimeError(f"Checkpoint state is incomplete - missing entries for "
                               f"{sorted(missing)}.")
        for key in list(self._dirty):
            self._maybe_apply(key)

    def serialize(self):
        """JSON string of the states (native ndd's format, version 2)."""
        if not self._states:
            raise RuntimeError("Cannot serialize an empty checkpoint. Call `collect` (or "
                               "`set_state`) first.")
        return json.dumps({
            "version": _CHECKPOINT_FORMAT_VERSION,
            "states": {k: {"state": str(v.state), "type": v.type_name}
                       for k, v in self._states.items()},
        })

    def deserialize(self, data):
        """Replace the states with those of a `serialize` string (all pending)."""
        payload = json.loads(data)
        if not isinstance(payload, dict) or "states" not in payload:
            raise ValueError("Invalid checkpoint payload.")
        version = payload.get("version", 0)
        if version != _CHECKPOINT_FORMAT_VERSION:
            raise ValueError(f"Unsupported checkpoint format version {version}; expected "
                             f"{_CHECKPOINT_FORMAT_VERSION}.")
        states = payload["states"]
        if not isinstance(states, dict):
            raise ValueError("Invalid checkpoint payload: `states` must be a dict.")
        new_states = {}
        for k, v in states.items():
            if not isinstance(v, dict) or "state" not in v:
                raise ValueError(f"Invalid checkpoint entry for {k!r}.")
            type_name = v.get("type")
            if type_name is not None and not isinstance(type_name, str):
                raise ValueError(f"Invalid `type` for entry {k!r}: expected a string.")
            new_states[str(k)] = _StateEntry(state=str(v["state"]), type_name=type_name)
        self._states = new_states
        self._dirty = set(self._states)
        self._complete = False
        self._loaded = True

    def save(self, filename):
        """Write the checkpoint to `filename` (a pattern with `{seq}`, e.g.
        "ckpt_{seq:04d}.json": the next free number is used). Returns the path."""
        seq = self._next_save_seq(filename)
        path = filename.format(seq=seq)
        while os.path.exists(path):
            seq += 1
            path = filename.format(seq=seq)
        data = self.serialize()
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(data)
        os.replace(path + ".tmp", path)
        self._save_seq = seq + 1
        return path

    def load(self, filename):
        """Read the file matching the `{seq}` pattern with the highest number. Returns the
        path; the states apply on `register` (or `restore`)."""
        candidates = sorted(_matching_files(filename), key=lambda x: x[0])
        if not candidates:
            raise FileNotFoundError(f"No checkpoint file matches filename {filename!r}.")
        seq, path = candidates[-1]
        with open(path, "r", encoding="utf-8") as f:
            self.deserialize(f.read())
        self._save_seq = seq + 1
        return path

    def _next_save_seq(self, pattern):
        if self._save_seq is not None:
            return self._save_seq
        return max((seq for seq, _ in _matching_files(pattern)), default=-1) + 1


def current():
    """The `Checkpoint` bound to the current `EvalContext`."""
    from ._eval import EvalContext

    return EvalContext.current().checkpoint
