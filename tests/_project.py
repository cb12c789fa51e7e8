"""Helpers for tests that install the project the way users do (pre-commit, wheels).

Everything here is made at most once per test session (cached under pytest's base temp dir).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import urllib.request
import venv
from pathlib import Path
from typing import Optional, Sequence

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
# What a build of the package needs when the checkout is not a git work tree (an sdist, say).
_MINIMAL = ["pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "dali_migrate", "runtime"]
_cache: dict = {}


def clean_env(**extra: str) -> dict:
    """os.environ without git's per-repository variables (set when tests run inside a git hook)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(extra)
    return env


def git(cwd: Path, *args: str) -> str:
    cmd = ["git", "-c", "user.name=dali-migrate tests", "-c", "user.email=tests@invalid",
           "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args]
    return subprocess.run(cmd, cwd=cwd, env=clean_env(), check=True, capture_output=True, text=True).stdout


def _project_files() -> list:
    """Tracked and untracked-but-not-ignored files: what a commit of the work tree would hold."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO_ROOT, env=clean_env(), check=True, capture_output=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    return [name for name in out.decode("utf-8", "surrogateescape").split("\0") if name]


def snapshot(base: Path) -> Path:
    """A copy of the project as it stands (committed or not) in a one-commit git repository.

    pre-commit clones hook repositories, and ``try-repo`` adds only *tracked* uncommitted changes,
    so the work tree itself would miss new files; a fresh clone in CI has none, and this copy
    behaves the same in both. The real repository and its index are never touched."""
    if "snapshot" in _cache:
        return _cache["snapshot"]
    dest = base / "dali-migrate-snapshot"
    names = _project_files()
    if names:
        for name in names:
            src = REPO_ROOT / name
            if src.is_file() and "__pycache__" not in Path(name).parts:
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / name)
    else:
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
        for name in _MINIMAL:
            src = REPO_ROOT / name
            if src.is_dir():
                shutil.copytree(src, dest / name, ignore=ignore)
            elif src.is_file():
                dest.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / name)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "snapshot for tests")
    _cache["snapshot"] = dest
    return dest


def make_venv(path: Path) -> Path:
    """A fresh virtual environment with pip; returns its python."""
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    return path / ("Scripts" if os.name == "nt" else "bin") / ("python.exe" if os.name == "nt" else "python")


def _index_reachable() -> bool:
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple/")
    try:
        with urllib.request.urlopen(index.rstrip("/") + "/pip/", timeout=15):
            return True
    except Exception:
        return False


def pip_install(python: Path, args: Sequence[str], what: str) -> None:
    """pip install into ``python``'s environment; skip the test only if the index is unreachable."""
    r = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *args],
                       env=clean_env(), capture_output=True, text=True)
    if r.returncode != 0:
        if not _index_reachable():
            pytest.skip(f"the package index is unreachable, cannot install {what}: "
                        f"{(r.stderr or r.stdout).strip().splitlines()[-1:]}")
        pytest.fail(f"pip install {what} failed:\n{r.stdout}\n{r.stderr}")


def tools_python(base: Path, *packages: str) -> Path:
    """One session-wide venv holding build tools (pre-commit, build, setuptools...), grown on demand."""
    python: Optional[Path] = _cache.get("tools")
    if python is None:
        python = make_venv(base / "tools-venv")
        _cache["tools"] = python
        _cache["tools-installed"] = set()
    missing = [p for p in packages if p not in _cache["tools-installed"]]
    if missing:
        pip_install(python, missing, " ".join(missing))
        _cache["tools-installed"].update(missing)
    return python


def base_temp(tmp_path_factory) -> Path:
    path = tmp_path_factory.getbasetemp() / "dali-migrate-project"
    path.mkdir(exist_ok=True)
    return path


def run(cmd: Sequence, cwd: Optional[Path] = None, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=clean_env(**env), capture_output=True, text=True)
