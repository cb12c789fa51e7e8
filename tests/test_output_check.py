"""The check every converted text passes before it is written or shown."""

from dali_migrate.engine import output_syntax_error


def test_valid_output_passes():
    assert output_syntax_error("x = 1\n", "y = 2\n") is None


def test_broken_output_names_its_line():
    assert output_syntax_error("x = 1\n", "x = 1\ny = (\n") == 2


def test_syntax_newer_than_this_python_is_judged_by_libcst():
    # PEP 695 aliases: Python 3.11's parser rejects input and output alike, libcst reads both.
    src = "type Alias = int\n"
    assert output_syntax_error(src, src + "y = 2\n") is None
    assert output_syntax_error(src, src + "y = (\n") is not None
