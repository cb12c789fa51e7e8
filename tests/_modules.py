"""Loading a test's own source text as a module (an original and its conversion, side by side)."""

from __future__ import annotations

import contextlib
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


def cpu_project(src_root: Path, dest: Path, files, package: str = "src") -> Path:
    """A copy of a golden project's ``files`` under ``dest`` with every operator moved to the CPU
    (verify's rewrite, both sides alike), ``package`` made a package."""
    from dali_migrate.device_cpu import to_cpu

    for f in files:
        (dest / f).parent.mkdir(parents=True, exist_ok=True)
        (dest / f).write_text(to_cpu((src_root / f).read_text()))
    (dest / package / "__init__.py").write_text("")
    return dest


@contextlib.contextmanager
def project_on_path(project: Path, package: str = "src"):
    """``project`` importable while the block runs (``importlib.import_module("src.data")``); its
    ``package`` forgotten before and after, so that the next project's is imported afresh."""
    def forget():
        for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
            del sys.modules[name]

    forget()
    sys.path.insert(0, str(project))
    try:
        yield
    finally:
        sys.path.remove(str(project))
        forget()
