"""Loading a test's own source text as a module (an original and its conversion, side by side)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def load_source(tmp_path: Path, name: str, source: str, prefix: str = "_test_module_"):
    """``source`` written to ``tmp_path/<name>.py`` and imported under a name of its own; it is in
    ``sys.modules`` only while it runs (pickling by reference of its classes is not needed here)."""
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"{prefix}{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(spec.name, None)
    return module
