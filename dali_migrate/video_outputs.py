"""How many outputs a call of one of DALI's video readers gives, from its arguments as written.

The generic count (pipeline_analysis._call_outputs, from the catalog's probes of each argument
alone) cannot tell these readers' counts: whether ``labels=`` adds an output depends on which of
``filenames`` / ``file_root`` / ``file_list`` is given, and each of those is usually a variable.
What follows mirrors DALI 2.4's own output functions (tests/rules/test_video_outputs.py checks it
against them, through DALI's graph construction, on every combination of argument states):

* the legacy readers (``readers.video`` / ``video_reader``, ``readers.video_resize`` /
  ``video_reader_resize``): ``detail::VideoReaderOutputFn``
  (include/dali/operators/video/legacy/reader/video_reader_op.h): one output, one more for the
  label where ``filenames`` is not empty and ``labels`` is given, or where ``file_root`` or
  ``file_list`` is not empty; then, where ``file_list`` or ``filenames`` is not empty, one more
  each for ``enable_frame_num`` (other than "none"/False) and ``enable_timestamps``.
* ``experimental.readers.video``: its schema's OutputFn
  (dali/operators/video/reader/video_reader_decoder_op.cc): ``1 + has_labels + has_frame_num +
  enable_timestamps``, ``has_labels`` where ``labels``, ``file_list`` or ``file_root`` is given
  at all.

Both readers refuse, when built, anything but exactly one source among ``filenames``,
``file_root`` and ``file_list`` (the legacy one: exactly one not empty; the experimental one:
exactly one given). So a source written as a variable is the reader's source whenever it is the
only one written: if it held None or an empty value the pipeline would fail to build, and so
would the converted reader, with DALI's same error. Where two sources are written, or an
argument that changes the count is not a literal, the count is unknown (None).
"""

from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from dali_migrate.cst_util import code, kwarg

LEGACY = frozenset({"readers__Video", "readers__VideoResize", "VideoReader", "VideoReaderResize"})
EXPERIMENTAL = frozenset({"experimental__readers__Video"})
SCHEMAS = LEGACY | EXPERIMENTAL

_SOURCES = ("filenames", "file_root", "file_list")

# How an argument is written: not given (or None, which DALI's Python side drops), a literal
# empty value, a literal value that is not empty, or an expression whose value cannot be seen.
ABSENT, EMPTY, FULL, UNKNOWN = "absent", "empty", "full", "unknown"
_MISSING = object()


def _literal(call: cst.Call, name: str):
    """The literal value of ``name=``; _MISSING where not given; raises ValueError where it is
    not a literal."""
    arg = kwarg(call, name)
    if arg is None:
        return _MISSING
    try:
        return ast.literal_eval(code(arg.value).strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ValueError(name) from None


def _state(call: cst.Call, name: str) -> str:
    try:
        value = _literal(call, name)
    except ValueError:
        return UNKNOWN
    if value is _MISSING or value is None:
        return ABSENT
    if isinstance(value, (str, list, tuple)) and len(value) == 0:
        return EMPTY
    return FULL


def _flag(call: cst.Call, name: str, off: tuple, on: tuple) -> Optional[int]:
    """1 where the argument is written as one of ``on``, 0 where absent or one of ``off``, None
    otherwise (a variable, or a value DALI refuses). Compared with their types: ``1 == True``."""
    try:
        value = _literal(call, name)
    except ValueError:
        return None
    if value is _MISSING or value is None:
        return 0
    if any(type(value) is type(v) and value == v for v in off):
        return 0
    if any(type(value) is type(v) and value == v for v in on):
        return 1
    return None


def count(call: cst.Call, schema: str) -> Optional[int]:
    """The number of outputs ``call`` (of the video reader with DALI schema ``schema``) gives, or
    None where its arguments as written do not tell."""
    if schema not in SCHEMAS or any(arg.star for arg in call.args):
        return None
    # enable_frame_num is a string policy; DALI reads a Python bool as str(bool), "True"/"False".
    frame_num = _flag(call, "enable_frame_num", off=("none", "False", False), on=("scalar", "sequence", "True", True))
    timestamps = _flag(call, "enable_timestamps", off=(False,), on=(True,))
    states = {name: _state(call, name) for name in _SOURCES}
    if schema in LEGACY:
        # exactly one source not empty, or the reader refuses to build
        written = [name for name, s in states.items() if s in (FULL, UNKNOWN)]
        if len(written) != 1:
            return None
        source = written[0]
        if source == "file_root":
            return 2
        if frame_num is None or timestamps is None:
            return None
        extra = frame_num + timestamps
        if source == "file_list":
            return 2 + extra
        labels = _state(call, "labels")
        if labels == UNKNOWN:
            return None
        return 1 + (labels != ABSENT) + extra
    # experimental: exactly one source given, or the reader refuses to build
    written = [name for name, s in states.items() if s != ABSENT]
    if len(written) != 1 or frame_num is None or timestamps is None:
        return None
    if written[0] == "filenames":
        labels = _state(call, "labels")
        if labels == UNKNOWN:
            return None
        has_labels = labels != ABSENT
    else:
        has_labels = True
    return 1 + has_labels + frame_num + timestamps
