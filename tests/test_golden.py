"""Golden cases: ``tests/golden/<name>.py`` converts to exactly ``tests/golden/<name>.expected.py``.

See ``tests/golden/README.md`` for how to add a case and regenerate an expected file.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from dali_migrate import markers
from dali_migrate.engine import convert_source
from dali_migrate.model import MARKER_PREFIX, Status

GOLDEN = Path(__file__).resolve().parent / "golden"
MIN_CASES = 35


def case_names() -> list:
    return sorted(p.name[: -len(".py")] for p in GOLDEN.glob("*.py") if not p.name.endswith(".expected.py"))


CASES = case_names()


def _read(name: str, expected: bool = False) -> str:
    return (GOLDEN / (f"{name}.expected.py" if expected else f"{name}.py")).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=None)
def _convert(name: str):
    return convert_source(_read(name), path=f"{name}.py")


def test_enough_cases():
    assert len(CASES) >= MIN_CASES, f"only {len(CASES)} golden cases"


def test_every_case_has_an_expected_file():
    expected = {p.name[: -len(".expected.py")] for p in GOLDEN.glob("*.expected.py")}
    assert expected == set(CASES)


@pytest.mark.parametrize("name", CASES)
def test_converts_to_expected(name):
    result = _convert(name)
    assert result.output == _read(name, expected=True)


@pytest.mark.parametrize("name", CASES)
def test_idempotent(name):
    expected = _read(name, expected=True)
    again = convert_source(expected, path=f"{name}.expected.py")
    assert again.output == expected
    assert not again.changed


@pytest.mark.parametrize("name", CASES)
def test_expected_parses(name):
    ast.parse(_read(name, expected=True))


@pytest.mark.parametrize("name", CASES)
def test_status_and_markers(name):
    source = _read(name)
    expected = _read(name, expected=True)
    result = _convert(name)
    # The markers reported are exactly the marker lines of the output.
    marker_lines = [i for i, line in enumerate(expected.splitlines(), 1) if line.lstrip().startswith(MARKER_PREFIX)]
    assert [mk.line for mk in result.markers] == marker_lines
    assert result.markers == markers.scan(expected)
    # No marker line is written twice at one place.
    lines = expected.splitlines()
    for i in marker_lines:
        assert i + 1 not in marker_lines or lines[i - 1] != lines[i], f"duplicated marker at line {i}"
    if source == expected:
        assert result.status is Status.UNCHANGED
        assert result.pipelines_converted == 0
    elif marker_lines and result.rewrites == 0:
        # markers are the only change: nothing converted, a person must act
        assert result.status is Status.NEEDS_REVIEW
        assert result.pipelines_converted == 0
    elif marker_lines:
        assert result.status is Status.PARTIAL
    else:
        assert result.status is Status.CONVERTED
        assert result.pipelines_converted >= 1
        assert result.pipelines_left == 0
    # A converted file imports ndd exactly once and has no @pipeline_def left on converted functions.
    if result.pipelines_converted:
        assert expected.count("import nvidia.dali.experimental.dynamic as ndd") == 1
    else:
        assert "experimental.dynamic" not in expected or "experimental.dynamic" in source


def test_pipelines_left_alone_keep_their_code():
    """Where nothing was converted, every input line survives: markers are the only change."""
    checked = 0
    for name in CASES:
        result = _convert(name)
        if result.pipelines_converted:
            continue
        checked += 1
        without_markers = [line for line in result.output.splitlines() if not line.lstrip().startswith(MARKER_PREFIX)]
        assert without_markers == _read(name).splitlines(), name
    assert checked >= 10


def test_cases_without_dali_are_unchanged():
    for name in ("no_dali", "mentions_dali_only", "already_converted"):
        result = convert_source(_read(name))
        assert result.status is Status.UNCHANGED, name
        assert result.output == _read(name)
