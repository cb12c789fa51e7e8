"""``[tool.dali-migrate]`` in ``pyproject.toml``: finding it, reading it, checking it.

Which file: the nearest ``pyproject.toml`` that has a ``[tool.dali-migrate]`` table, searching
upward from the common parent directory of the paths given on the command line, and not above
the repository root (the first directory holding ``.git``). ``--config FILE`` names one instead.

Globs in ``include`` / ``exclude`` use gitignore syntax and are matched against paths relative to
the directory of that ``pyproject.toml`` (command-line ``--exclude`` globs keep their own meaning:
relative to the directory walked, or as written).

Standard library only (plus ``tomli`` on Python < 3.11, needed only when a pyproject has the
table), and nothing heavy at import: this runs in every pre-commit hook call.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

PYPROJECT = "pyproject.toml"
TABLE = "tool.dali-migrate"

#: Python module names: what ``ndd-module`` / ``--ndd-module`` accept.
DOTTED_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
#: ``target-dali``: MAJOR.MINOR or MAJOR.MINOR.PATCH.
VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")
# A table header that is ours, in any spelling TOML allows: [tool.dali-migrate], [ tool."dali-migrate" ],
# or one of its sub-tables. Used only to decide whether a missing TOML parser is an error.
_HEADER = re.compile(r"""^\s*\[\s*tool\s*\.\s*(["']?)dali-migrate\1\s*[\].]""", re.MULTILINE)


class SettingsError(Exception):
    """A configuration problem; the message names the file (and the key, where there is one)."""


@dataclasses.dataclass(frozen=True)
class FileSettings:
    """The checked contents of one ``[tool.dali-migrate]`` table (or of none: all defaults)."""

    path: Optional[Path] = None  # the pyproject.toml read; None when there is none
    include: tuple = ()
    exclude: tuple = ()
    rules: Optional[tuple] = None  # None: every rule
    disable_rules: tuple = ()
    ndd_module: Optional[str] = None
    target_dali: Optional[str] = None
    marker_style: Optional[str] = None

    @property
    def base(self) -> Optional[Path]:
        """The directory ``include`` / ``exclude`` globs are relative to."""
        return self.path.parent if self.path is not None else None

    def selector(self) -> Callable[[Path], bool]:
        """A test "does this file take part?" applying ``include`` then ``exclude``."""
        if not (self.include or self.exclude):
            return lambda path: True
        import pathspec  # only now: most runs have no globs in the file

        inc = pathspec.GitIgnoreSpec.from_lines(self.include) if self.include else None
        exc = pathspec.GitIgnoreSpec.from_lines(self.exclude) if self.exclude else None
        base = os.path.abspath(self.base) if self.base is not None else os.getcwd()

        def selects(path: Path) -> bool:
            rel = os.path.relpath(os.path.abspath(path), base)
            if rel == os.pardir or rel.startswith(os.pardir + os.sep):
                rel = os.path.normpath(path)  # outside the project: match it as written
            rel = rel.replace(os.sep, "/")
            if inc is not None and not inc.match_file(rel):
                return False
            return not (exc is not None and exc.match_file(rel))

        return selects


# -- the keys ----------------------------------------------------------------------------------


def _str_list(value: Any, where: str) -> tuple:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"{where} must be a list of strings, not {value!r}")
    return tuple(value)


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise SettingsError(f"{where} must be a string, not {value!r}")
    return value


def check_ndd_module(value: str, where: str) -> str:
    if not DOTTED_NAME.match(value):
        raise SettingsError(f"{where}: {value!r} is not a dotted module name "
                            "(e.g. nvidia.dali.experimental.dynamic or dali_migrate.runtime)")
    return value


def check_rule_ids(ids: Sequence[str], where: str) -> tuple:
    from dali_migrate.rules import all_rules  # imports the rules (libcst); only when asked for

    known = [r.id for r in all_rules()]
    for rule_id in ids:
        if rule_id not in known:
            close = difflib.get_close_matches(rule_id, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise SettingsError(f"{where}: unknown rule {rule_id!r}{hint}; rules: {', '.join(known)}")
    return tuple(ids)


def check_target_dali(value: str, where: str) -> str:
    if not VERSION.match(value):
        raise SettingsError(f"{where}: {value!r} is not a DALI version (MAJOR.MINOR or MAJOR.MINOR.PATCH, e.g. \"2.4.0\")")
    return value


def check_marker_style(value: str, where: str) -> str:
    # A comment of one line that a later run can find again: "#", some text, nothing that the
    # marker's own "[rule-id]" could be confused with.
    if (
        not value.startswith("#")
        or len(value[1:].strip()) < 2
        or value != value.strip()
        or any(c in value for c in "[]\r\n\t")
    ):
        raise SettingsError(
            f"{where}: {value!r} is not a usable marker prefix: it must be a one-line comment "
            "starting with '#', with some text after it, no '[' or ']' and no surrounding spaces "
            "(e.g. \"# TODO(dali-migrate):\")"
        )
    return value


_KEYS = {
    # key -> (field, check(value, where) -> python value)
    "include": ("include", _str_list),
    "exclude": ("exclude", _str_list),
    "rules": ("rules", lambda v, w: check_rule_ids(_str_list(v, w), w)),
    "disable-rules": ("disable_rules", lambda v, w: check_rule_ids(_str_list(v, w), w)),
    "ndd-module": ("ndd_module", lambda v, w: check_ndd_module(_string(v, w), w)),
    "target-dali": ("target_dali", lambda v, w: check_target_dali(_string(v, w), w)),
    "marker-style": ("marker_style", lambda v, w: check_marker_style(_string(v, w), w)),
}
KEYS = tuple(_KEYS)


# -- finding and reading -----------------------------------------------------------------------


def _toml_loads() -> Optional[Callable[[str], dict]]:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib.loads
    try:
        import tomli  # type: ignore[import-not-found]
    except ImportError:
        return None
    return tomli.loads


def _table(path: Path, *, required: bool) -> Optional[dict]:
    """The ``[tool.dali-migrate]`` table of ``path``; None when it has none (unless required)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SettingsError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    # Most pyproject.toml files never mention us: do not parse (or fail on) those.
    if "dali-migrate" not in text and not required:
        return None
    loads = _toml_loads()
    if loads is None:
        if _HEADER.search(text) or required:
            raise SettingsError(
                f"{path}: reading [{TABLE}] on Python {sys.version_info[0]}.{sys.version_info[1]} "
                "needs the 'tomli' package (pip install tomli), or Python 3.11+"
            )
        return None
    try:
        data = loads(text)
    except Exception as e:  # tomllib.TOMLDecodeError, tomli.TOMLDecodeError
        if required or _HEADER.search(text):
            raise SettingsError(f"{path}: not valid TOML: {e}") from None
        return None  # someone else's broken file that merely mentions us: not our business
    table = data.get("tool", {}).get("dali-migrate") if isinstance(data.get("tool"), dict) else None
    if table is None:
        if required:
            raise SettingsError(f"{path}: has no [{TABLE}] table")
        return None
    if not isinstance(table, dict):
        raise SettingsError(f"{path}: {TABLE} must be a table, not {table!r}")
    return table


def parse(table: dict, path: Optional[Path] = None) -> FileSettings:
    """Check one ``[tool.dali-migrate]`` table; unknown keys and bad values raise SettingsError."""
    fields: dict = {}
    for key, value in table.items():
        where = f"{path or '<config>'}: [{TABLE}] {key}"
        if key not in _KEYS:
            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise SettingsError(f"{path or '<config>'}: unknown key {key!r} in [{TABLE}]{hint}; "
                                f"known keys: {', '.join(KEYS)}")
        field, check = _KEYS[key]
        fields[field] = check(value, where)
    return FileSettings(path=path, **fields)


def load(path: Path) -> FileSettings:
    """Read ``path`` (``--config``): it must exist and have a ``[tool.dali-migrate]`` table."""
    if not path.is_file():
        raise SettingsError(f"{path}: no such file")
    return parse(_table(path, required=True), path)  # type: ignore[arg-type]


def common_parent(paths: Sequence[Path]) -> Path:
    dirs = [os.path.abspath(p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)))
            for p in paths]
    if not dirs:
        return Path(os.getcwd())
    return Path(os.path.commonpath(dirs))


def find(start: Path) -> Optional[Path]:
    """The nearest pyproject.toml with our table, from ``start`` upward to the repository root."""
    for directory in (start, *start.parents):
        candidate = directory / PYPROJECT
        if candidate.is_file() and _table(candidate, required=False) is not None:
            return candidate
        if (directory / ".git").exists():  # the top of this repository: look no further
            return None
    return None


def discover(paths: Sequence[Path], config: Optional[Path] = None) -> FileSettings:
    """The settings for a run over ``paths``: from ``config`` if given, else found; else defaults."""
    if config is not None:
        return load(config)
    found = find(common_parent(paths))
    if found is None:
        return FileSettings()
    return parse(_table(found, required=True), found)  # type: ignore[arg-type]


def version_tuple(version: str) -> tuple:
    m = VERSION.match(version)
    if m is None:
        raise ValueError(version)
    return tuple(int(g or 0) for g in m.groups())


def target_dali_warning(target: str, catalog_version: str) -> Optional[str]:
    """What to tell the user when ``target-dali`` is not the catalog's DALI; None when it is."""
    t, c = version_tuple(target), version_tuple(catalog_version)
    if t < c:
        return (f"target-dali is {target}, but this dali-migrate's operator catalog is from DALI "
                f"{catalog_version}: the conversion assumes DALI {catalog_version}'s dynamic-mode API, "
                f"which DALI {target} may lack or spell differently")
    if t > c:
        return (f"target-dali is {target}, but this dali-migrate's operator catalog is from DALI "
                f"{catalog_version}: operators and arguments added after {catalog_version} are unknown to it")
    return None
