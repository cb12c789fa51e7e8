"""Finding the files to convert: directory walks that honour .gitignore and --exclude."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Iterator, Optional, Sequence

import pathspec

SOURCE_SUFFIXES = (".py", ".ipynb")
GITIGNORE = ".gitignore"
# Never user code, and often huge: walking them would only cost time.
ALWAYS_SKIPPED = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".tox", ".nox"})


def _spec(lines: Iterable[str]) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _verdict(spec: pathspec.PathSpec, rel: str) -> Optional[bool]:
    """True: ignored, False: re-included by a "!" pattern, None: no pattern says anything."""
    if hasattr(spec, "check_file"):  # pathspec >= 0.12
        return spec.check_file(rel).include
    return True if spec.match_file(rel) else None


class _Ignores:
    """The .gitignore files in force at one point of the walk, innermost last."""

    def __init__(self, stack: tuple = ()):
        self._stack = stack

    def entering(self, directory: Path) -> "_Ignores":
        gi = directory / GITIGNORE
        if not gi.is_file():
            return self
        try:
            lines = gi.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return self
        return _Ignores(self._stack + ((directory, _spec(lines)),))

    def ignored(self, path: Path, is_dir: bool) -> bool:
        # As in git, the innermost .gitignore with a matching pattern decides.
        for base, spec in reversed(self._stack):
            rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
            verdict = _verdict(spec, rel)
            if verdict is not None:
                return verdict
        return False


class Excludes:
    """--exclude globs, with gitignore syntax. A path is tested both relative to the directory
    being walked and as written on the command line, so either way of spelling it works."""

    def __init__(self, globs: Sequence[str] = ()):
        self._spec = _spec(globs) if globs else None

    def __call__(self, *candidates: str, is_dir: bool = False) -> bool:
        if self._spec is None:
            return False
        suffix = "/" if is_dir else ""
        return any(_verdict(self._spec, c + suffix) for c in candidates)


def is_virtualenv(directory: Path) -> bool:
    return (directory / "pyvenv.cfg").is_file()


def find_files(paths: Sequence[Path], exclude: Sequence[str] = ()) -> list[Path]:
    """Files to process, in command-line order, each once (symlinks count as their target).

    Files named explicitly are taken whatever their suffix and even if a .gitignore lists them
    (the user asked for them), but --exclude still applies to them."""
    excluded = Excludes(exclude)
    seen: set[str] = set()
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            candidates: Iterable[Path] = _walk(path, excluded)
        elif excluded(_as_given(path)):
            continue
        else:
            candidates = (path,)
        for f in candidates:
            key = os.path.realpath(f)
            if key not in seen:
                seen.add(key)
                found.append(f)
    return found


def _as_given(path: Path) -> str:
    return os.path.normpath(path).replace(os.sep, "/")


def _walk(root: Path, excluded: Excludes) -> Iterator[Path]:
    stack = [(root, _Ignores().entering(root))]
    while stack:
        directory, ignores = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue  # unreadable directory: nothing we could convert there anyway
        subdirs = []
        for entry in entries:
            path = directory / entry.name
            rel = path.relative_to(root).as_posix()
            if entry.is_dir(follow_symlinks=False):
                if (
                    entry.name in ALWAYS_SKIPPED
                    or is_virtualenv(path)
                    or ignores.ignored(path, is_dir=True)
                    or excluded(rel, _as_given(path), is_dir=True)
                ):
                    continue
                subdirs.append(path)
            elif (
                entry.name.endswith(SOURCE_SUFFIXES)
                # Follows file symlinks. A link that cannot be followed (dangling, a loop) is
                # still yielded, so the run reports it by name instead of silently skipping it.
                and (_is_file(entry) or entry.is_symlink())
                and not ignores.ignored(path, is_dir=False)
                and not excluded(rel, _as_given(path))
            ):
                yield path
        # Reversed onto a LIFO stack, so directories come out in sorted, depth-first order.
        stack.extend((d, ignores.entering(d)) for d in reversed(subdirs))


def _is_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()
    except OSError:  # e.g. ELOOP: a symlink loop
        return False
