"""A stand-in for engine.convert_source, so CLI tests do not depend on the real codemod.

Module-level (hence picklable by reference), so it also works in --jobs worker processes."""

from __future__ import annotations

from dali_migrate.model import ConversionError, ConversionResult, Marker

CALLS: list = []  # (path, config) per call; only meaningful in-process (--jobs 1)


def fake_convert(source, *, path="<string>", config=None):
    CALLS.append((path, config))
    if "RAISE_CONVERSION_ERROR" in source:
        raise ConversionError("cannot convert this", 3)
    if "RAISE_INTERRUPT" in source:
        raise KeyboardInterrupt
    if "RAISE_BUG" in source:
        raise ValueError("boom")
    output = source.replace("fn.", "ndd.")
    if "BREAK_OUTPUT" in source:
        output += "def (:\n"
    markers = [
        Marker(i, "fake-rule", "fix me")
        for i, line in enumerate(output.splitlines(), 1)
        if "TODO_MARK" in line
    ]
    return ConversionResult(source, output, markers, rewrites=source.count("fn."))
