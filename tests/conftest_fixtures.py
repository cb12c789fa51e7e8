"""pytest plugin: the ``fixture_data`` session fixture (small data sets for DALI readers).

Enable it from ``tests/conftest.py`` with either::

    pytest_plugins = ["conftest_fixtures"]          # tests/ must be on sys.path

or::

    from conftest_fixtures import fixture_data  # noqa: F401

``fixture_data`` is a :class:`pathlib.Path` to the data root.  It is the repository's
``fixtures/data`` when that is up to date with ``fixtures/make_fixtures.py``; otherwise
the data is generated once per session into a pytest temporary folder (``fixtures/data``
is never written by tests).  ``MANIFEST.json`` in the root describes every data set;
``fixture_manifest`` returns it parsed.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
GENERATOR_PATH = REPO_ROOT / "fixtures" / "make_fixtures.py"

_MODULE_NAME = "dali_migrate_make_fixtures"


def load_generator():
    """Import ``fixtures/make_fixtures.py`` by path (``fixtures/`` is not a package)."""
    mod = sys.modules.get(_MODULE_NAME)
    if mod is None:
        spec = importlib.util.spec_from_file_location(_MODULE_NAME, GENERATOR_PATH)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[_MODULE_NAME] = mod
        spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def fixture_data(tmp_path_factory) -> Path:
    """Root folder of the generated fixture data sets (see fixtures/README.md)."""
    gen = load_generator()
    if os.environ.get("DALI_MIGRATE_FRESH_FIXTURES") != "1" and gen.is_up_to_date(gen.DEFAULT_OUT):
        return Path(gen.DEFAULT_OUT)
    out = tmp_path_factory.mktemp("fixture_data")
    gen.generate(out, force=True)
    return out


@pytest.fixture(scope="session")
def fixture_manifest(fixture_data) -> dict:
    """``MANIFEST.json`` of ``fixture_data``, parsed."""
    return load_generator().read_manifest(fixture_data)
