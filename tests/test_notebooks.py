"""Jupyter notebooks: golden cases with the real codemod, masking of IPython syntax, JSON style,
error handling, and the CLI (with the fake codemod of _cli_fakes, like test_cli.py).

Golden cases are ``tests/golden_notebooks/NAME.ipynb`` (written by Jupyter/nbformat) and
``NAME.expected.ipynb``. After a deliberate change of the codemod's output, regenerate the expected
files with ``DALI_MIGRATE_UPDATE_GOLDEN=1 pytest tests/test_notebooks.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import _cli_fakes
from dali_migrate import engine, notebooks, runner
from dali_migrate.cli import main
from dali_migrate.model import ConversionResult, Status

GOLDEN = Path(__file__).parent / "golden_notebooks"
CASES = sorted(p.name[: -len(".ipynb")] for p in GOLDEN.glob("*.ipynb") if not p.name.endswith(".expected.ipynb"))


def _nb(*cells, indent=1, ensure_ascii=False, meta=None, trailing="\n", nbformat=4) -> str:
    """A notebook text as Jupyter writes it. A cell is (type, source) or a full dict."""
    full = []
    for c in cells:
        if isinstance(c, dict):
            full.append(c)
            continue
        kind, source = c
        cell = {"cell_type": kind, "metadata": {}, "source": source}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        full.append(cell)
    data = {
        "cells": full,
        "metadata": meta if meta is not None else {"language_info": {"name": "python"}},
        "nbformat": nbformat,
        "nbformat_minor": 5,
    }
    return json.dumps(data, indent=indent, ensure_ascii=ensure_ascii) + trailing


def _sources(text: str) -> list:
    return [notebooks.source_text(c) for c in json.loads(text)["cells"]]


def _convert(text, convert=_cli_fakes.fake_convert):
    return notebooks.convert_notebook(text, path="nb.ipynb", config=None, convert=convert,
                                      mentions_dali=engine.mentions_dali)


# --------------------------------------------------------------------------------------------
# Golden cases, real codemod
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_golden(case, tmp_path):
    src = GOLDEN / f"{case}.ipynb"
    expected = (GOLDEN / f"{case}.expected.ipynb").read_bytes()
    f = tmp_path / src.name
    shutil.copy(src, f)
    r = runner.process_file(f)
    assert r.status is not Status.ERROR, r.error
    if os.environ.get("DALI_MIGRATE_UPDATE_GOLDEN") == "1":
        (GOLDEN / f"{case}.expected.ipynb").write_bytes(f.read_bytes())
        expected = f.read_bytes()
    assert f.read_bytes() == expected
    assert r.changed == (expected != src.read_bytes())
    # A second run has nothing left to do.
    again = runner.process_file(f)
    assert not again.changed and not again.written
    assert again.status in (Status.UNCHANGED, Status.NEEDS_REVIEW)
    assert f.read_bytes() == expected


@pytest.mark.parametrize("case", CASES)
def test_golden_outputs_are_valid_notebooks(case):
    nbformat = pytest.importorskip("nbformat")
    for name in (f"{case}.ipynb", f"{case}.expected.ipynb"):
        nbformat.validate(nbformat.reads((GOLDEN / name).read_text(encoding="utf-8"), as_version=4))


def test_golden_everything_but_code_cells_untouched():
    before = json.loads((GOLDEN / "pipeline_across_cells.ipynb").read_text(encoding="utf-8"))
    after = json.loads((GOLDEN / "pipeline_across_cells.expected.ipynb").read_text(encoding="utf-8"))
    assert before["metadata"] == after["metadata"]
    assert len(before["cells"]) == len(after["cells"])
    for b, a in zip(before["cells"], after["cells"]):
        assert {k: v for k, v in b.items() if k != "source"} == {k: v for k, v in a.items() if k != "source"}
        assert type(b["source"]) is type(a["source"])  # list stays list, string stays string
        if b["cell_type"] != "code" or notebooks.source_text(b).startswith("%%bash"):
            assert b["source"] == a["source"]
    # the import the codemod adds lands in the cell holding the DALI imports
    assert "import nvidia.dali.experimental.dynamic as ndd" in notebooks.source_text(after["cells"][2])


def test_golden_markers_name_cell_and_line(tmp_path):
    f = tmp_path / "nb.ipynb"
    shutil.copy(GOLDEN / "unconvertible_pipeline.ipynb", f)
    r = runner.process_file(f, runner.Options(write=False))
    assert r.status in (Status.PARTIAL, Status.NEEDS_REVIEW)  # as the engine rates it
    assert r.markers and {(m.cell, m.rule) for m in r.markers} == {(3, "pipeline-def")}
    assert [m.line for m in r.markers] == list(range(1, len(r.markers) + 1))  # above the decorator
    cell3 = _sources((GOLDEN / "unconvertible_pipeline.expected.ipynb").read_text(encoding="utf-8"))[2]
    for m in r.markers:
        assert cell3.splitlines()[m.line - 1].startswith("# dali-migrate: [pipeline-def]")
    assert cell3.splitlines()[len(r.markers)].startswith("@pipeline_def")


# --------------------------------------------------------------------------------------------
# IPython syntax
# --------------------------------------------------------------------------------------------

MAGIC_CELL = """\
%matplotlib inline
!pip install nvidia-dali \\
    --upgrade
files = !ls /data
t =%timeit -o -q fn.a()
fn.a?
??fn
for i in range(2):
    !echo {i}
    %time fn.b()
if a != b:
    x = (a
    % b)
y = (1
!= 2)
s = '''
%not a magic: in a string
!neither
'''
fn.c()"""


def test_magics_masked_and_restored_exactly():
    text = _nb(("code", "from nvidia.dali import fn"), ("code", MAGIC_CELL))
    mc = notebooks.mask_cell(1, MAGIC_CELL, notebooks._Placeholders("t"))
    masked = mc.masked.split("\n")
    assert len(masked) == len(MAGIC_CELL.split("\n"))  # line numbers kept
    magic = [i + 1 for i, line in enumerate(masked) if "__dali_migrate_t_" in line]
    assert magic == [1, 2, 3, 4, 5, 6, 7, 9, 10]
    assert masked[2].startswith("# ")  # the backslash-continued line: a comment
    assert masked[8] == "    __dali_migrate_t_8__"  # indentation kept: the loop body still parses
    assert notebooks.unmask(mc.masked, mc.restore) == MAGIC_CELL
    r = _convert(text)
    assert _sources(r.output)[1] == MAGIC_CELL.replace("fn.c()", "ndd.c()")


def test_python_cell_magic_converted_other_cell_magics_skipped():
    time_cell = "\n%%time\nfn.a()\n"
    bash_cell = "%%bash\nfn.a()"
    js_cell = "%%javascript\nfn.a()"
    r = _convert(_nb(("code", "from nvidia.dali import fn"), ("code", time_cell), ("code", bash_cell), ("code", js_cell)))
    assert _sources(r.output)[1:] == ["\n%%time\nndd.a()\n", bash_cell, js_cell]
    assert [c.index for c in r.changes] == [1]


def test_cell_with_a_leading_indent_is_read_as_ipython_reads_it():
    # IPython removes the first line's indentation from every line starting with it (DALI's
    # tensorflow-dataset-multigpu notebook has such a cell); Python alone would not parse it
    indented = " def f(x):\n        return fn.a(x)\n"
    unchanged = "  y = 1\n  z = 2"
    r = _convert(_nb(("code", "from nvidia.dali import fn"), ("code", indented), ("code", unchanged)))
    # converted: written as IPython ran it; untouched: its bytes kept
    assert _sources(r.output)[1:] == ["def f(x):\n       return ndd.a(x)\n", unchanged]


def test_cell_with_syntax_error_names_the_cell():
    with pytest.raises(notebooks.NotebookError) as e:
        _convert(_nb(("markdown", "x"), ("code", "from nvidia.dali import fn"), ("code", "x = 1\ndef (:\n")))
    assert (e.value.cell, e.value.line) == (3, 2) and "does not parse" in e.value.message


# --------------------------------------------------------------------------------------------
# One module: cells joined and split back
# --------------------------------------------------------------------------------------------


def test_cells_split_back_with_their_own_endings():
    cells = [("code", ["from nvidia.dali import fn\n", "\n"]), ("code", "fn.a()"), ("code", []),
             ("code", ["# only a comment"]), ("code", ["fn.b()\n", "\n", "\n"]), ("code", "fn.c()\n# tail")]
    r = _convert(_nb(*cells))
    out = json.loads(r.output)["cells"]
    assert [c["source"] for c in out] == [
        ["from nvidia.dali import fn\n", "\n"], "ndd.a()", [], ["# only a comment"],
        ["ndd.b()\n", "\n", "\n"], "ndd.c()\n# tail"]


def test_marker_lines_are_per_cell():
    r = _convert(_nb(("code", "from nvidia.dali import fn\n"), ("markdown", "m"),
                     ("code", "a = 1\nb = fn.a()  # TODO_MARK")))
    assert [(m.cell, m.line) for m in r.markers] == [(3, 2)]
    assert r.status is Status.PARTIAL


def _drops_separators(source, *, path, config):
    out = "\n".join(line for line in source.split("\n") if "_cell_" not in line)
    return ConversionResult(source, out.replace("fn.", "ndd."))


def _drops_magic(source, *, path, config):
    out = "\n".join(line for line in source.split("\n") if "__dali_migrate_" not in line or "_cell_" in line)
    return ConversionResult(source, out.replace("fn.", "ndd."))


@pytest.mark.parametrize("convert", [_drops_separators, _drops_magic])
def test_failure_to_split_back_is_an_error_and_nothing_written(tmp_path, convert):
    text = _nb(("code", "%matplotlib inline\nfrom nvidia.dali import fn"), ("code", "fn.a()"))
    f = tmp_path / "nb.ipynb"
    f.write_text(text, encoding="utf-8")
    r = runner.process_file(f, runner.Options(convert=convert))
    assert r.status is Status.ERROR and "internal error" in r.error
    assert f.read_text(encoding="utf-8") == text


def test_placeholder_names_do_not_clash_with_the_notebook():
    src = "from nvidia.dali import fn\n__dali_migrate_nb0_1__ = 1\n%time fn.a()\nfn.b()"
    r = _convert(_nb(("code", src)))
    assert _sources(r.output) == [src.replace("fn.b()", "ndd.b()")]


# --------------------------------------------------------------------------------------------
# JSON: style kept, everything but sources untouched
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "style",
    [dict(), dict(indent=2), dict(indent=4, ensure_ascii=True), dict(trailing=""), dict(indent=None)],
)
def test_json_style_kept(style):
    cells = [("markdown", "Ünïcödé ✓"), ("code", ["from nvidia.dali import fn\n", "fn.a()"]),
             ("code", "x = 'é'")]
    text = _nb(*cells, **style)
    r = _convert(text)
    assert r.output == _nb(cells[0], ("code", ["from nvidia.dali import fn\n", "ndd.a()"]), cells[2], **style)


def test_key_order_and_unknown_fields_kept():
    cell = {"source": "fn.a()", "outputs": [], "cell_type": "code", "zzz": {"b": 1, "a": 2},
            "metadata": {"scrolled": True}, "execution_count": 7}
    text = _nb(("code", "from nvidia.dali import fn"), cell)
    out = _convert(text).output
    assert out == text.replace('"source": "fn.a()"', '"source": "ndd.a()"')


def test_non_python_notebook_left_alone():
    text = _nb(("code", "from nvidia.dali import fn\nfn.a()"), meta={"language_info": {"name": "julia"}})
    r = _convert(text)
    assert not r.changed and r.status is Status.UNCHANGED


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"nbformat": 4, "cells": [\n  {"source": "dali"\n]}', "invalid JSON: Expecting ',' delimiter (line 3, column 1)"),
        ('["dali"]', "top level is not a JSON object"),
        ('{"cells": [], "metadata": {"x": "dali"}}', 'no "nbformat" version'),
        ('{"nbformat": 3, "worksheets": [], "metadata": {"x": "dali"}}', "only nbformat 4 is supported"),
        ('{"nbformat": 4, "metadata": {"x": "dali"}}', 'no "cells" list'),
        ('{"nbformat": 4, "cells": [{"cell_type": "code", "source": 3}], "x": "dali"}', 'cell 1 has no "source"'),
    ],
)
def test_invalid_notebooks(text, message):
    with pytest.raises(notebooks.NotebookError) as e:
        _convert(text)
    assert message in e.value.message


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------


@pytest.fixture
def cli(monkeypatch):
    monkeypatch.setattr(engine, "convert_source", _cli_fakes.fake_convert)
    _cli_fakes.CALLS.clear()

    def invoke(*args):
        return CliRunner().invoke(main, ["convert", "--jobs", "1", *map(str, args)])

    return invoke


NB = _nb(
    ("markdown", ["# Title\n", "uses fn.a()"]),
    ("code", ["%matplotlib inline\n", "from nvidia.dali import fn"]),
    {"cell_type": "code", "execution_count": 3, "metadata": {}, "source": ["x = fn.a()\n", "!ls"],
     "outputs": [{"output_type": "display_data", "metadata": {},
                  "data": {"image/png": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==\n"}}]},
)


def _write_nb(tmp_path, text=NB, name="nb.ipynb"):
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    return f


def test_cli_rewrites_in_place(cli, tmp_path):
    f = _write_nb(tmp_path)
    r = cli(f)
    assert r.exit_code == 1, r.output
    assert f.read_text(encoding="utf-8") == NB.replace('"x = fn.a()\\n"', '"x = ndd.a()\\n"')
    assert len(_cli_fakes.CALLS) == 1  # one module for the whole notebook
    r = cli(f)  # idempotent
    assert r.exit_code == 0 and f.read_text(encoding="utf-8") == NB.replace("x = fn.a()", "x = ndd.a()")


def test_cli_diff_per_cell(cli, tmp_path):
    f = _write_nb(tmp_path)
    r = cli("--diff", f)
    assert r.exit_code == 1
    assert f.read_text(encoding="utf-8") == NB
    assert r.stdout == (
        f"--- {f} [cell 3]\n+++ {f} [cell 3]\n@@ -1,2 +1,2 @@\n-x = fn.a()\n+x = ndd.a()\n !ls\n"
    )


def test_cli_check(cli, tmp_path):
    f = _write_nb(tmp_path)
    r = cli("--check", f)
    assert r.exit_code == 1 and r.stdout == "" and f.read_text(encoding="utf-8") == NB
    clean = _write_nb(tmp_path, NB.replace("x = fn.a()", "x = ndd.a()"), "clean.ipynb")
    assert cli("--check", clean).exit_code == 0


def test_cli_markers_reported_with_cell(cli, tmp_path):
    f = _write_nb(tmp_path, NB.replace("!ls", "y = 1  # TODO_MARK"))
    rep = tmp_path / "r.json"
    r = cli("--check", "--report", rep, f)
    assert r.exit_code == 1
    assert f"{f}: cell 3, line 2: [fake-rule] fix me" in r.stderr
    entry = json.loads(rep.read_text())["files"][0]
    assert entry["markers"] == [{"line": 2, "rule": "fake-rule", "reason": "fix me", "cell": 3}]


def test_cli_invalid_notebook_is_an_error(cli, tmp_path):
    bad = _write_nb(tmp_path, '{\n "nbformat": 4,\n "cells": [dali]\n}\n', "bad.ipynb")
    old = _write_nb(tmp_path, '{"nbformat": 3, "worksheets": [{"cells": ["dali"]}]}', "old.ipynb")
    good = _write_nb(tmp_path)
    rep = tmp_path / "r.json"
    r = cli("--report", rep, bad, old, good)
    assert r.exit_code == 2
    assert f"{bad}:3: error: not a valid notebook: invalid JSON: Expecting value (line 3, column 12)" in r.stderr
    assert f"{old}: error: unsupported notebook format: nbformat 3" in r.stderr
    assert bad.read_text() == '{\n "nbformat": 4,\n "cells": [dali]\n}\n'
    assert "ndd.a()" in good.read_text(encoding="utf-8")  # the others are still converted
    files = json.loads(rep.read_text())["files"]
    assert files[0]["error"]["line"] == 3 and files[1]["status"] == "error"


def test_cli_cell_error_reported_with_cell(cli, tmp_path):
    f = _write_nb(tmp_path, _nb(("code", "from nvidia.dali import fn"), ("code", "x = (\n")))
    r = cli(f)
    assert r.exit_code == 2
    assert f"{f}: cell 2, line " in r.stderr and "does not parse" in r.stderr


def test_cli_notebook_without_dali_not_parsed(cli, tmp_path):
    f = _write_nb(tmp_path, "{ not even json, and no mention of the library }", "x.ipynb")
    r = cli(f)
    assert r.exit_code == 0 and _cli_fakes.CALLS == []


def test_cli_dali_only_in_markdown_not_converted(cli, tmp_path):
    f = _write_nb(tmp_path, _nb(("markdown", "about nvidia.dali"), ("code", "fn.a()")))
    r = cli(f)
    assert r.exit_code == 0 and _cli_fakes.CALLS == []


def test_cli_crlf_and_bom_kept(cli, tmp_path):
    f = tmp_path / "nb.ipynb"
    f.write_bytes(b"\xef\xbb\xbf" + NB.replace("\n", "\r\n").encode("utf-8"))
    cli(f)
    assert f.read_bytes() == b"\xef\xbb\xbf" + NB.replace("x = fn.a()", "x = ndd.a()").replace("\n", "\r\n").encode("utf-8")


AUTOMAGIC_CELL = """\
pip install pai-easycv
conda install -y -c conda-forge pycocotools
cd /data/imagenet
pip -q install x
time = 3
cd = os.path.join(a, b)
ls
run(fn.a())
env = {
    "a": 1}
fn.c()"""


def test_automagic_lines_masked_python_statements_kept():
    # IPython runs `pip install x` as %pip (automagic): such a line is masked; a line that parses
    # as Python (an assignment to `time`, a call of `run`, a bare name, `cd /data/imagenet` as a
    # division) stays code, which the conversion leaves as it is
    mc = notebooks.mask_cell(0, AUTOMAGIC_CELL, notebooks._Placeholders("t"))
    masked = mc.masked.split("\n")
    assert [i + 1 for i, line in enumerate(masked) if "__dali_migrate_t_" in line] == [1, 2, 4]
    assert notebooks.unmask(mc.masked, mc.restore) == AUTOMAGIC_CELL
    r = _convert(_nb(("code", "from nvidia.dali import fn"), ("code", AUTOMAGIC_CELL)))
    assert _sources(r.output)[1] == AUTOMAGIC_CELL.replace("fn.", "ndd.")


def test_ndd_is_imported_in_the_cell_whose_dali_imports_it_replaces():
    # DALI's parallel_external_source_fork notebook: a later plotting cell imports matplotlib; the
    # imports the conversion needs went there, below the cell defining the pipeline, and running
    # the cells that define and use the pipeline, but not the plotting one, raised NameError
    text = _nb(
        ("code", "import numpy as np\nfrom nvidia.dali import pipeline_def\nimport nvidia.dali.fn as fn\n"),
        ("code", "@pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)\ndef pipe(root):\n"
                 "    jpegs, labels = fn.readers.file(file_root=root)\n    return fn.decoders.image(jpegs), labels\n"),
        ("code", "import matplotlib.pyplot as plt\n\ndef show(x):\n    plt.imshow(x)\n"),
        ("code", "p = pipe('data')\np.build()\nimages, labels = p.run()\n"),
    )
    result = _convert(text, convert=engine.convert_source)
    first, _, plotting, _ = _sources(result.output)
    assert "import nvidia.dali.experimental.dynamic as ndd" in first
    assert plotting == "import matplotlib.pyplot as plt\n\ndef show(x):\n    plt.imshow(x)\n"


def test_the_ndd_import_lands_in_the_first_cell_that_imports_dali():
    # DALI's LMDB notebook imports DALI again in a later cell: the import once landed there, after
    # the first cell's converted pipeline, which then raised NameError when the cells ran in order
    first = ("import nvidia.dali.types as types\nfrom nvidia.dali import fn, pipeline_def\n\n"
             "@pipeline_def(batch_size=2, num_threads=1, device_id=None)\ndef p():\n"
             "    return fn.cast(fn.random.uniform(), dtype=types.INT32)\n")
    later = "import nvidia.dali.types as types\nprint(types.INT32)"
    r = _convert(_nb(("code", first), ("code", "pipe = p()\npipe.build()\nout = pipe.run()"), ("code", later)),
                 convert=engine.convert_source)
    cells = _sources(r.output)
    assert "import nvidia.dali.experimental.dynamic as ndd" in cells[0]
    assert "experimental.dynamic" not in cells[2]
