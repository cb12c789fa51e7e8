"""Other files of the project that import what a converted file defines.

dali-migrate converts a pipeline's uses (``build()``, ``run()``, framework iterators) only in the
file that defines it. When ``src/data.py`` does ``from src.coco_pipeline import COCOPipeline`` and
gives ``COCOPipeline(...)`` to a ``DALIGenericIterator``, converting ``coco_pipeline.py`` alone
turns the class into a generator function under code that still builds an iterator over a
pipeline: the repository no longer works. This module finds such importers, and the file is
converted again with what they import left as it was (``engine.convert_source(...,
used_elsewhere=...)``, see imported_elsewhere.py).

What is looked for, in every ``.py`` file and notebook code cell of the project (the nearest
ancestor directory holding ``.git``, ``pyproject.toml``, ``setup.py`` or ``setup.cfg``, else the
directory given on the command line, else, for a file given by itself, the files beside it but
not those of the folders under it: a script in an unmarked home or temp directory does not make
every file below that directory part of its project): ``from pkg.mod import Name``, ``from .mod import Name``,
``from pkg import mod`` / ``from . import mod`` / ``import pkg.mod as m`` then ``mod.Name``,
``import pkg.mod`` then ``pkg.mod.Name``, and ``from pkg.mod import *`` followed by a use of
``Name``. Absolute imports match a module whose path ends as they do (the project root need not be
where ``sys.path`` starts), relative ones the module they name exactly. Dynamic imports
(``importlib``, ``__import__``) are not seen.

Cost: nothing at all for a file whose conversion changes no top-level definition (most files: no
DALI, nothing to convert), beyond comparing its top-level statements before and after (``ast``).
The project's files are read once per process, on the first file that needs them; each question
then looks only at the files that spell the module's name, and parses those (``ast``) once.

The markers this leaves name a line of another file, which may move: a run drops the ones an
earlier run left (they say :data:`WHY`) and writes them again from what it finds.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import warnings
from pathlib import Path
from typing import Callable, Optional

from dali_migrate.model import MARKER_PREFIX

#: what makes a directory a project's root
ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
#: other places named in a marker besides the first
_MORE_LISTED = 3


@dataclasses.dataclass(frozen=True)
class Scope:
    """Where the files of a run come from (crosses process boundaries: it must pickle)."""

    #: the paths given on the command line: a file's project root when no ancestor is marked
    tops: tuple = ()
    #: a project root for every file instead of the search (scripts/corpus_rate.py: the corpus)
    root: Optional[str] = None
    #: absolute paths of the files the run converts (None: unknown, no file but the one converted):
    #: a pipeline converts with its uses in another file only where the run converts both
    #: (imported_pipelines.py)
    files: Optional[frozenset] = None


def project_root(path, scope: Scope = Scope()) -> str:
    """The directory whose files may import ``path``'s module."""
    if scope.root is not None:
        return os.path.abspath(scope.root)
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    cur = directory
    while True:
        if any(os.path.exists(os.path.join(cur, m)) for m in ROOT_MARKERS):
            return cur
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    # the outermost directory given that holds the file: where the walk found it
    given = [os.path.abspath(t) for t in scope.tops]
    holding = [t for t in given if os.path.isdir(t) and _within(path, t)]
    if holding:
        return min(holding, key=len)
    # (a trailing separator: the files beside it only, see Project._load; a root of its own)
    return os.path.join(directory, "")


def _within(path: str, directory: str) -> bool:
    return path.startswith(directory.rstrip(os.sep) + os.sep)


# ------------------------------------------------------------------------------------------------
# what a conversion changed
# ------------------------------------------------------------------------------------------------


def _is_main_guard(stmt) -> bool:
    """``if __name__ == "__main__":``: what it binds is never imported."""
    test = stmt.test if isinstance(stmt, ast.If) else None
    return (
        isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
        and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _targets(node, found: set) -> None:
    if isinstance(node, ast.Name):
        found.add(node.id)
    elif isinstance(node, (ast.Tuple, ast.List)):
        for elt in node.elts:
            _targets(elt, found)
    elif isinstance(node, ast.Starred):
        _targets(node.value, found)


def bindings(stmt) -> dict:
    """{name: what binds it} for a module-level statement: a definition, an assignment, an import
    (each alias on its own: dropping one name of an import does not change the others), and what
    blocks other than ``if __name__ == "__main__":`` bind (imported_elsewhere.py reads the same)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name: stmt}
    if isinstance(stmt, ast.Import):
        return {(a.asname or a.name.split(".")[0]): ("import", a.name, a.asname) for a in stmt.names}
    if isinstance(stmt, ast.ImportFrom):
        return {
            (a.asname or a.name): ("from", stmt.level, stmt.module, a.name)
            for a in stmt.names if a.name != "*"
        }
    found: set = set()
    if isinstance(stmt, ast.Assign):
        for t in stmt.targets:
            _targets(t, found)
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        _targets(stmt.target, found)
    elif isinstance(stmt, (ast.If, ast.Try, ast.With, ast.For, ast.While)) and not _is_main_guard(stmt):
        if isinstance(stmt, ast.For):
            _targets(stmt.target, found)
        if isinstance(stmt, ast.With):
            for item in stmt.items:
                if item.optional_vars is not None:
                    _targets(item.optional_vars, found)
        blocks = [getattr(stmt, f, []) for f in ("body", "orelse", "finalbody")]
        blocks += [h.body for h in getattr(stmt, "handlers", [])]
        for block in blocks:
            for inner in block:
                found |= set(bindings(inner))
    return {name: stmt for name in found}


def _top_level(tree: ast.Module) -> dict:
    """{name: [what binds it, in order]} over the module's statements."""
    out: dict = {}
    for stmt in tree.body:
        for name, what in bindings(stmt).items():
            out.setdefault(name, []).append(what)
    return out


def changed_names(before: str, after: str) -> set:
    """Module-level names whose definition ``after`` changes (or drops), and the names whose
    definitions use those (``pipe = train_pipe(...)`` reads as it did, but makes something else
    now). Comments, markers among them, do not count."""
    old, new = _parse(before), _parse(after)
    if old is None or new is None:
        return set()
    old_b, new_b = _top_level(old), _top_level(new)
    dumps: dict = {}

    def key(what):
        if isinstance(what, tuple):
            return what
        if id(what) not in dumps:
            dumps[id(what)] = ast.dump(what)
        return dumps[id(what)]

    changed = {
        name for name, whats in old_b.items()
        if [key(w) for w in whats] != [key(w) for w in new_b.get(name, [])]
    }
    if not changed:
        return changed
    reads: dict = {}  # name -> the module's names its definitions read
    for name, whats in old_b.items():
        spelled: set = set()
        for w in whats:
            if not isinstance(w, tuple):
                spelled |= {n.id for n in ast.walk(w) if isinstance(n, ast.Name)}
        reads[name] = spelled & old_b.keys()
    grew = True
    while grew:
        grew = False
        for name, read in reads.items():
            if name not in changed and not read.isdisjoint(changed):
                changed.add(name)
                grew = True
    return changed


# ------------------------------------------------------------------------------------------------
# the project's importers
# ------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Use:
    file: str  # relative to the project root, "/"-separated
    line: int  # of the import
    text: str  # the import, as far as it concerns the name
    cell: Optional[int] = None  # notebooks: 1-based cell (all cells counted), ``line`` within it
    then: Optional[str] = None  # ``mod.Name``: how the name is reached from a module import

    def where(self) -> str:
        return f"{self.file}, cell {self.cell}, line {self.line}" if self.cell is not None else f"{self.file}:{self.line}"

    def describe(self) -> str:
        how = f"`{self.text}`" + (f", then `{self.then}`" if self.then else "")
        return f"{self.where()} ({how})"


def describe(uses: list) -> str:
    """One line for a marker: the first use in full, the others by place."""
    uses = sorted(uses, key=lambda u: (u.file, u.cell or 0, u.line))
    text = uses[0].describe()
    rest = list(dict.fromkeys(u.where() for u in uses[1:]))
    if rest:
        listed = ", ".join(rest[:_MORE_LISTED]) + (", ..." if len(rest) > _MORE_LISTED else "")
        text += f" and {len(rest)} more ({listed})"
    return text


def _module_parts(rel: str) -> list:
    parts = rel[: -len(".py")].split("/") if rel.endswith(".py") else rel.split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return parts


def _same_module(named: list, target: list, exact: bool) -> bool:
    if not named or not target:
        return False
    if exact:
        return named == target
    # `pkg.mod` names `src/pkg/mod.py` when sys.path starts at src/ (and the other way round)
    n = min(len(named), len(target))
    return named[-n:] == target[-n:] and (len(named) == n or len(target) == n)


def _render_from(node: ast.ImportFrom, alias: ast.alias) -> str:
    what = alias.name + (f" as {alias.asname}" if alias.asname else "")
    return f"from {'.' * node.level}{node.module or ''} import {what}"


def _dotted(node) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class _Unit:
    """One parsed piece of an importer: a file, or a notebook's code cell."""

    def __init__(self, tree: ast.AST, cell: Optional[int]):
        self.cell = cell
        self.imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
        self._tree = tree
        self._chains: Optional[set] = None
        self._loaded: Optional[set] = None

    def reads_chain(self, dotted: str) -> bool:
        """Whether the code reads ``dotted`` (``mod.Name``)."""
        if self._chains is None:
            self._chains = {_dotted(n) for n in ast.walk(self._tree) if isinstance(n, ast.Attribute)}
        return dotted in self._chains

    def reads(self, name: str) -> bool:
        if self._loaded is None:
            self._loaded = {n.id for n in ast.walk(self._tree) if isinstance(n, ast.Name)}
        return name in self._loaded


class Project:
    """The project's source files, read once (lazily), and their imports, parsed on demand."""

    def __init__(self, root: str):
        self.root = root
        self._files: Optional[list] = None  # [(absolute path, relative path, text)]
        self._units: dict = {}  # index -> [_Unit]

    def _load(self) -> list:
        if self._files is None:
            from dali_migrate import walk

            files = []
            # what a run over the root would walk: .gitignore, virtualenvs and the like skipped
            if self.root.endswith(os.sep):  # a file's own unmarked directory: project_root
                found = sorted(p for p in Path(self.root).iterdir() if p.suffix in walk.SOURCE_SUFFIXES and p.is_file())
            else:
                found = walk.find_files([Path(self.root)])
            for p in found:
                try:
                    text = Path(p).read_bytes().decode("utf-8", "replace")
                except OSError:
                    continue
                rel = os.path.relpath(os.path.abspath(p), self.root).replace(os.sep, "/")
                files.append((os.path.abspath(p), rel, text))
            self._files = files
        return self._files

    def _parsed(self, i: int) -> list:
        if i not in self._units:
            path, _, text = self._files[i]
            self._units[i] = _notebook_units(text) if path.endswith(".ipynb") else _python_units(text)
        return self._units[i]

    def uses(self, path, names: set, public: set) -> dict:
        """{name: [Use]} for the ``names`` that other files import from ``path``'s module.
        ``public``: those of them a star import brings in."""
        path = os.path.abspath(path)
        rel = os.path.relpath(path, self.root).replace(os.sep, "/")
        if rel.startswith("../"):
            return {}
        target = _module_parts(rel)
        if not target:
            return {}
        found: dict = {}
        for i, (other, other_rel, text) in enumerate(self._load()):
            # an import of the module spells its last name, whichever form it takes
            if other == path or target[-1] not in text:
                continue
            here = other_rel.split("/")[:-1]
            for unit in self._parsed(i):
                for use_name, use in _uses_in(unit, here, target, names, public):
                    found.setdefault(use_name, []).append(dataclasses.replace(use, file=other_rel))
        return found


def _parse(text: str) -> Optional[ast.Module]:
    """The module's tree, or None where Python does not parse it; quietly (another file's
    ``x is 'literal'`` is not this run's business)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None


def _python_units(text: str) -> list:
    tree = _parse(text)
    return [] if tree is None else [_Unit(tree, None)]


def _notebook_units(text: str) -> list:
    from dali_migrate import notebooks  # (libcst: only for a notebook that names the module)

    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError, RecursionError):
        return []
    units = []
    ph = notebooks._Placeholders("outside")
    for i, cell in enumerate(cells if isinstance(cells, list) else []):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        try:
            masked = notebooks.mask_cell(i, notebooks.source_text(cell), ph)  # magics out, lines kept
        except (KeyError, TypeError):
            continue
        if masked is None:
            continue
        for unit in _python_units(masked.masked):
            unit.cell = i + 1
            units.append(unit)
    return units


def _uses_in(unit: _Unit, here: list, target: list, names: set, public: set):
    """(name, Use) for each import in ``unit`` of one of ``names`` from the module ``target``;
    ``here``: the importer's directory (relative imports start there)."""
    for node in unit.imports:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level - 1 > len(here):
                    continue
                base = here[: len(here) - (node.level - 1)]
                named, exact = base + (node.module.split(".") if node.module else []), True
            else:
                named, exact = node.module.split(".") if node.module else [], False
            from_target = _same_module(named, target, exact)
            for alias in node.names:
                if from_target and alias.name == "*":
                    for name in sorted(public):
                        if unit.reads(name):
                            yield name, Use("", node.lineno, _render_from(node, alias), unit.cell)
                elif from_target and alias.name in names:
                    yield alias.name, Use("", node.lineno, _render_from(node, alias), unit.cell)
                elif alias.name != "*" and _same_module(named + [alias.name], target, exact):
                    bound = alias.asname or alias.name  # the module itself: `mod.Name` reads it
                    yield from _through(unit, node.lineno, _render_from(node, alias), bound, names)
        else:
            for alias in node.names:
                if not _same_module(alias.name.split("."), target, False):
                    continue
                text = f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
                yield from _through(unit, node.lineno, text, alias.asname or alias.name, names)


def _through(unit: _Unit, line: int, text: str, bound: str, names: set):
    for name in sorted(names):
        if unit.reads_chain(f"{bound}.{name}"):
            yield name, Use("", line, text, unit.cell, then=f"{bound}.{name}")


_projects: dict = {}  # root -> Project: the files are read once per process


def project(root: str) -> Project:
    if root not in _projects:
        _projects[root] = Project(root)
    return _projects[root]


def _public(source_tree: ast.Module, names: set) -> set:
    """Those of ``names`` that ``from module import *`` binds (``__all__`` where it is a literal)."""
    for stmt in source_tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
            try:
                listed = ast.literal_eval(stmt.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                break
            if isinstance(listed, (list, tuple)):
                return names & {n for n in listed if isinstance(n, str)}
            break
    return {n for n in names if not n.startswith("_")}


def users(path, source: str, names: set, scope: Scope = Scope()) -> dict:
    """{name: description} for those of ``names`` (module-level names of ``path``, whose text is
    ``source``) that another file of the project imports."""
    if not names:
        return {}
    tree = _parse(source)
    public = _public(tree, names) if tree is not None else set()
    found = project(project_root(path, scope)).uses(path, names, public)
    return {name: describe(uses) for name, uses in sorted(found.items())}


#: what every reason for a definition kept for its importers says (imported_elsewhere.py): the
#: markers that say it are this module's own, written again on each run
WHY = (
    "where dali-migrate cannot convert its uses with it (a pipeline converts with another file's uses "
    "only where they are making it, build(), epoch_size() and a PyTorch iterator over it)"
)
#: what WHY said before pipelines converted with their importers' uses: such markers are still the
#: tool's own, dropped and written again
_EARLIER_WHY = (
    "where dali-migrate does not convert its uses (it converts a pipeline's uses only in the file that "
    "defines it)",
)


def _without_own_markers(source: str, prefix: str) -> str:
    """``source`` without the markers an earlier run left for importers: they name a line of
    another file, which may have moved since (a second marker would stay beside the stale one), or
    an import that is gone; and those of pipelines held until one run converts their files
    (imported_pipelines.ONE_RUN), which another run may convert."""
    from dali_migrate.imported_pipelines import ONE_RUN

    said = (WHY, ONE_RUN, *_EARLIER_WHY)
    if not any(text in source for text in said):
        return source
    starts = tuple({prefix, MARKER_PREFIX})
    return "".join(
        line for line in source.splitlines(keepends=True)
        if not (any(text in line for text in said) and line.lstrip().startswith(starts))
    )


def convert(convert_source: Callable, source: str, *, path, config, scope: Scope = Scope()):
    """``convert_source(source, path=, config=)``, except that what other files of the project
    import from ``path`` is left as it was (``used_elsewhere=``), but for the pipelines that convert
    with their uses in the importers (imported_pipelines.py); the project is only read when the
    conversion changes a module-level definition, or the file may define or use such a pipeline."""
    from dali_migrate import imported_pipelines

    prefix = getattr(config, "marker_prefix", MARKER_PREFIX)
    text = _without_own_markers(source, prefix)
    # a pipeline of this file that converts with its uses in the files importing it, or one of
    # another file whose uses here convert with it (imported_pipelines.py)
    cross = imported_pipelines.cross(path, text, config, scope)

    def run(used, imported):
        more = {"used_elsewhere": used} if used else {}
        if imported:
            more["imported"] = imported
        result = convert_source(text, path=str(path), config=config, **more)
        return result.output, result

    _, result = imported_pipelines.steps(run, text, path, scope, cross)
    # the file as read is what the result is a conversion of (a stale marker dropped is a change)
    return result if text is source else dataclasses.replace(result, source=source)
