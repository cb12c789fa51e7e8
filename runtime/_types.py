"""Data types: ndd-compatible `DType` objects (`float32`, `uint8`, ...) mapped onto DALIDataType.

Kept separate from DALI's native ndd `_type` module on purpose: importing native ndd builds its
whole operator table (slow) and fails on DALI 1.53 without a GPU, so the runtime carries its own.
"""

from enum import Enum

import numpy as np
import nvidia.dali.types as _dt

_by_id = {}
_by_name = {}


class DType:
    """A DALI data type, printed and compared like native ndd's DType."""

    class Kind(Enum):
        signed = "signed"
        unsigned = "unsigned"
        float = "float"
        bool = "bool"
        enum = "enum"

    def __init__(self, kind, bits, type_id=None, name=None, exponent_bits=None,
                 significand_bits=None):
        self.kind = kind
        self.bits = bits
        self.bytes = (bits + 7) // 8
        self.type_id = type_id
        if kind is DType.Kind.float and exponent_bits is None:
            exponent_bits = {16: 5, 32: 8, 64: 11}[bits]
        self.exponent_bits = exponent_bits
        if kind is DType.Kind.float and significand_bits is None:
            significand_bits = bits - exponent_bits - 1
        self.significand_bits = significand_bits
        prefix = {"signed": "i", "unsigned": "u", "float": "f"}.get(kind.value)
        self.name = name or (f"{prefix}{bits}" if prefix else kind.value)
        if type_id is not None:
            _by_id[type_id] = self
        _by_name[self.name] = self

    def __str__(self):
        return self.name

    def __repr__(self):
        r = f"DType(kind={self.kind}, bits={self.bits}"
        if self.exponent_bits is not None:
            r += f", exponent_bits={self.exponent_bits}, significand_bits={self.significand_bits}"
        return r + ")"

    def __eq__(self, other):
        if not isinstance(other, DType):
            try:
                other = dtype(other)
            except (KeyError, TypeError, ValueError):
                return NotImplemented
        return self.type_id == other.type_id and self.name == other.name

    def __hash__(self):
        return hash((self.type_id, self.name))

    def __call__(self, *args, **kwargs):
        from ._tensor import tensor

        return tensor(*args, dtype=self, **kwargs)

    @staticmethod
    def from_type_id(type_id):
        return _by_id[type_id]


K = DType.Kind
int8 = DType(K.signed, 8, _dt.INT8)
int16 = DType(K.signed, 16, _dt.INT16)
int32 = DType(K.signed, 32, _dt.INT32)
int64 = DType(K.signed, 64, _dt.INT64)
uint8 = DType(K.unsigned, 8, _dt.UINT8)
uint16 = DType(K.unsigned, 16, _dt.UINT16)
uint32 = DType(K.unsigned, 32, _dt.UINT32)
uint64 = DType(K.unsigned, 64, _dt.UINT64)
float16 = DType(K.float, 16, _dt.FLOAT16)
float32 = DType(K.float, 32, _dt.FLOAT)
float64 = DType(K.float, 64, _dt.FLOAT64)
bool = DType(K.bool, 8, _dt.BOOL, name="bool")  # noqa: A001 - ndd exports `bool` too
bfloat16 = DType(K.float, 16, None, name="bfloat16", exponent_bits=8, significand_bits=7)
DataType = DType(K.enum, 32, _dt.DATA_TYPE, name="DataType")
ImageType = DType(K.enum, 32, _dt.IMAGE_TYPE, name="ImageType")
InterpType = DType(K.enum, 32, _dt.INTERP_TYPE, name="InterpType")
# STRING is needed for string tensors coming out of readers/metadata; ndd has no public name.
_string = DType(K.enum, 8, _dt.STRING, name="string") if hasattr(_dt, "STRING") else None
del K


def dtype(x):
    """DType for a DType, DALIDataType, type name, numpy dtype or torch dtype."""
    if isinstance(x, DType):
        return x
    if isinstance(x, _dt.DALIDataType):
        return _by_id[x]
    if isinstance(x, str) and x in _by_name:
        return _by_name[x]
    if type(x).__module__ == "torch":  # torch.float32 etc.: go through its numpy name
        x = str(x).replace("torch.", "")
    return _by_id[_dt.to_dali_type(np.dtype(x))]


def type_id(x):
    """DALIDataType for anything `dtype` accepts."""
    if isinstance(x, _dt.DALIDataType):
        return x
    return dtype(x).type_id


def to_numpy(x):
    """numpy dtype of a DType/DALIDataType (for casts done on the host)."""
    return np.dtype(_dt.to_numpy_type(type_id(x)))


__all__ = ["DType", "dtype", "type_id", "int8", "int16", "int32", "int64", "uint8", "uint16",
           "uint32", "uint64", "float16", "float32", "float64", "bfloat16", "bool", "DataType",
           "ImageType", "InterpType"]
