"""Equivalence checking: the original pipeline and the converted code, on the same data."""

from dali_migrate.verify.run import Options, Verdict, VerifyError, verify

__all__ = ["Options", "Verdict", "VerifyError", "verify"]
