"""The package as users install it: sdist and wheel build, the wheel holds everything, and a plain
`pip install dali-migrate` brings the codemod without DALI, numpy or torch."""

import os
import re
import tarfile
import zipfile
from pathlib import Path

import pytest

import _project

ROOT = _project.REPO_ROOT
PIPELINE = '''\
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    return fn.decoders.image(jpegs), labels
'''
HEAVY = re.compile(r"^(nvidia-dali.*|torch|numpy)$", re.IGNORECASE)
BASE_DEPENDENCIES = {"libcst", "click", "pathspec"}


@pytest.fixture(scope="module")
def dists(tmp_path_factory):
    """sdist, then a wheel built from that sdist (as `python -m build` does), from a copy of the project."""
    base = _project.base_temp(tmp_path_factory)
    python = _project.tools_python(base, "build", "setuptools>=68", "wheel")
    out = base / "dist"
    r = _project.run([python, "-m", "build", "--no-isolation", "--outdir", out, _project.snapshot(base)])
    assert r.returncode == 0, r.stdout + r.stderr
    [sdist] = out.glob("dali_migrate-*.tar.gz")
    [wheel] = out.glob("dali_migrate-*.whl")
    return sdist, wheel


@pytest.fixture(scope="module")
def installed(dists, tmp_path_factory):
    """A fresh venv with the wheel and its base dependencies only; returns its bin directory."""
    env = _project.base_temp(tmp_path_factory) / "wheel-venv"
    python = _project.make_venv(env)
    _project.pip_install(python, [str(dists[1])], "the wheel's dependencies")
    return python.parent


def _expected_modules() -> set:
    """Every module of the source tree, named as it installs (runtime/ becomes dali_migrate/runtime/)."""
    found = set()
    for src, dest in [("dali_migrate", "dali_migrate"), ("runtime", "dali_migrate/runtime")]:
        for path in (ROOT / src).rglob("*.py"):
            rel = path.relative_to(ROOT / src)
            if "__pycache__" not in rel.parts:
                found.add(f"{dest}/{rel.as_posix()}")
    return found


def test_wheel_contents(dists):
    names = set(zipfile.ZipFile(dists[1]).namelist())
    assert "dali_migrate/data/catalog.json" in names
    assert "dali_migrate/runtime/__init__.py" in names
    # Packages are listed by hand in pyproject.toml; a new subpackage left off would be missing here.
    missing = _expected_modules() - names
    assert not missing, f"not in the wheel (add the package to [tool.setuptools] packages): {sorted(missing)}"
    assert not any(n.startswith(("runtime/", "tests/")) for n in names)


def test_wheel_metadata(dists):
    with zipfile.ZipFile(dists[1]) as whl:
        [meta] = [n for n in whl.namelist() if n.endswith(".dist-info/METADATA")]
        text = whl.read(meta).decode()
    requires = re.findall(r"^Requires-Dist: (.+)$", text, re.MULTILINE)
    unconditional = {re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower() for r in requires if "extra ==" not in r}
    assert unconditional == BASE_DEPENDENCIES
    extras = set(re.findall(r"^Provides-Extra: (.+)$", text, re.MULTILINE))
    assert {"runtime", "runtime-cu13", "docs", "test", "dev"} <= extras
    for extra, dali in [("runtime", "nvidia-dali-cuda120"), ("runtime-cu13", "nvidia-dali-cuda130")]:
        in_extra = [r for r in requires if re.search(rf"extra == ['\"]{extra}['\"]", r)]
        assert any(r.startswith(dali) for r in in_extra) and any(r.startswith("numpy") for r in in_extra)


def test_sdist_contents(dists):
    with tarfile.open(dists[0]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for needed in ["pyproject.toml", "README.md", "dali_migrate/data/catalog.json", "runtime/__init__.py",
                   "dali_migrate/cli.py"]:
        assert needed in names


def test_base_install_has_no_dali_numpy_torch(installed):
    r = _project.run([installed / "python", "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"])
    assert r.returncode == 0, r.stderr
    packages = {line.split("==")[0].lower().replace("_", "-") for line in r.stdout.split() if "==" in line}
    assert packages >= BASE_DEPENDENCIES | {"dali-migrate"}, packages
    assert not [p for p in packages if HEAVY.match(p)], packages


def test_installed_cli_converts(installed, tmp_path):
    exe = installed / ("dali-migrate.exe" if os.name == "nt" else "dali-migrate")
    r = _project.run([exe, "--version"])
    assert r.returncode == 0 and "dali-migrate, version 0.1.0" in r.stdout, r.stdout + r.stderr
    f = tmp_path / "pipe.py"
    f.write_text(PIPELINE)
    r = _project.run([exe, "convert", "--diff", f])
    assert r.returncode == 1, r.stderr
    assert "+import nvidia.dali.experimental.dynamic as ndd" in r.stdout
    assert "+    reader = ndd.readers.File(file_root=root)" in r.stdout
    assert f.read_text() == PIPELINE
