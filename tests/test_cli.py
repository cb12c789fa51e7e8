import codecs
import json
import stat
import subprocess
import sys

import pytest
from click.testing import CliRunner

import _cli_fakes
from dali_migrate import engine
from dali_migrate.cli import main

DALI = "from nvidia.dali import fn\n"


@pytest.fixture
def cli(monkeypatch):
    """Invoke the CLI in-process (--jobs 1) with the fake codemod in place of the real one."""
    monkeypatch.setattr(engine, "convert_source", _cli_fakes.fake_convert)
    _cli_fakes.CALLS.clear()

    def invoke(*args, jobs="1", **kw):
        return CliRunner().invoke(main, ["convert", "--jobs", jobs, *map(str, args)], **kw)

    return invoke


def _write(path, text):
    path.write_text(text)
    return path


def test_version():
    r = CliRunner().invoke(main, ["--version"])
    assert r.exit_code == 0 and "dali-migrate" in r.output


def test_python_dash_m():
    r = subprocess.run([sys.executable, "-m", "dali_migrate", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "convert" in r.stdout


def test_rewrites_in_place(cli, tmp_path):
    f = _write(tmp_path / "m.py", DALI + "x = fn.decoders.image(y)\n")
    r = cli(f)
    assert r.exit_code == 1, r.output
    assert f.read_text() == "from nvidia.dali import fn\nx = ndd.decoders.image(y)\n"
    assert "converted" in r.stderr and r.stdout == ""
    # second run: nothing left to do
    assert cli(f).exit_code == 0


def test_diff_writes_nothing(cli, tmp_path):
    f = _write(tmp_path / "m.py", DALI + "x = fn.a()\n")
    r = cli("--diff", f)
    assert f.read_text() == DALI + "x = fn.a()\n"
    assert f"--- {f}" in r.stdout and "-x = fn.a()" in r.stdout and "+x = ndd.a()" in r.stdout
    assert r.exit_code == 1


@pytest.mark.parametrize(
    "text, code",
    [
        ("x = 1  # dali, but nothing to convert\n", 0),
        (DALI + "x = fn.a()\n", 1),
        ("import nvidia.dali  # TODO_MARK\n", 1),  # markers only: no change, but a person is needed
    ],
)
def test_check_exit_codes(cli, tmp_path, text, code):
    f = _write(tmp_path / "m.py", text)
    r = cli("--check", f)
    assert r.exit_code == code, r.output
    assert f.read_text() == text
    assert r.stdout == ""


def test_report_json(cli, tmp_path):
    _write(tmp_path / "a.py", DALI + "x = fn.a()\n")
    _write(tmp_path / "b.py", DALI + "y = fn.b()  # TODO_MARK\n")
    _write(tmp_path / "c.py", "import os\n")
    _write(tmp_path / "d.py", "import nvidia.dali  # TODO_MARK\n")
    _write(tmp_path / "e.py", "import nvidia.dali\nRAISE_CONVERSION_ERROR\n")
    out = tmp_path / "report.json"
    r = cli("--report", out, tmp_path)
    assert r.exit_code == 2
    rep = json.loads(out.read_text())
    by_name = {e["path"].rsplit("/", 1)[-1][:-3]: e for e in rep["files"]}
    assert [by_name[n]["status"] for n in "abcde"] == [
        "converted", "partial", "unchanged", "needs-review", "error"]
    assert by_name["b"]["markers"] == [{"line": 2, "rule": "fake-rule", "reason": "fix me"}]
    assert by_name["b"]["counts"]["markers"] == 1 and by_name["a"]["counts"]["rewrites"] == 1
    assert by_name["e"]["error"] == {"message": "cannot convert this", "line": 3}
    t = rep["totals"]
    assert (t["files"], t["converted"], t["partial"], t["unchanged"], t["needs-review"], t["error"],
            t["markers"]) == (5, 1, 1, 1, 1, 1, 2)
    assert rep["exit_code"] == 2
    assert f"{tmp_path / 'b.py'}:2: [fake-rule] fix me" in r.stderr
    assert f"{tmp_path / 'e.py'}:3: error: cannot convert this" in r.stderr


def test_errors_exit_2_and_others_still_converted(cli, tmp_path):
    bad = _write(tmp_path / "bad.py", "import nvidia.dali\nRAISE_BUG\n")
    good = _write(tmp_path / "good.py", DALI + "fn.a()\n")
    r = cli(bad, good)
    assert r.exit_code == 2
    assert f"{bad}: error: internal error: ValueError: boom" in r.stderr
    assert good.read_text() == DALI + "ndd.a()\n"
    assert bad.read_text() == "import nvidia.dali\nRAISE_BUG\n"


def test_missing_path_is_usage_error(cli, tmp_path):
    assert cli(tmp_path / "nope.py").exit_code == 2


def test_bad_ndd_module_is_usage_error(cli, tmp_path):
    f = _write(tmp_path / "m.py", DALI)
    assert cli("--ndd-module", "not a module", f).exit_code == 2


def test_ndd_module_reaches_converter(cli, tmp_path):
    f = _write(tmp_path / "m.py", DALI)
    cli("--ndd-module", "my.shim", f)
    [(_, config)] = _cli_fakes.CALLS
    assert config.ndd_module == "my.shim"


def test_gitignore_respected(cli, tmp_path):
    _write(tmp_path / ".gitignore", "ignored.py\n")
    ign = _write(tmp_path / "ignored.py", DALI + "fn.a()\n")
    f = _write(tmp_path / "m.py", DALI + "fn.a()\n")
    cli(tmp_path)
    assert ign.read_text() == DALI + "fn.a()\n"
    assert f.read_text() == DALI + "ndd.a()\n"
    cli(ign)  # named explicitly: processed anyway
    assert ign.read_text() == DALI + "ndd.a()\n"


def test_exclude(cli, tmp_path):
    (tmp_path / "gen").mkdir()
    g = _write(tmp_path / "gen" / "x.py", DALI + "fn.a()\n")
    f = _write(tmp_path / "m.py", DALI + "fn.a()\n")
    cli("--exclude", "gen/", "--exclude", "other", tmp_path)
    assert g.read_text() == DALI + "fn.a()\n"
    assert f.read_text() == DALI + "ndd.a()\n"


def test_non_dali_files_not_parsed(cli, tmp_path):
    f = _write(tmp_path / "m.py", "import os\nfn.a()\n")
    r = cli(f)
    assert r.exit_code == 0
    assert _cli_fakes.CALLS == []
    assert f.read_text() == "import os\nfn.a()\n"


def test_notebooks_converted(cli, tmp_path):
    # More in test_notebooks.py. A notebook's code cells go through the codemod as one module.
    nb = tmp_path / "n.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                                          "outputs": [], "source": "from nvidia.dali import fn\nfn.a()"}],
                              "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n")
    r = cli("--report", tmp_path / "r.json", nb)
    assert r.exit_code == 1 and len(_cli_fakes.CALLS) == 1
    assert json.loads((tmp_path / "r.json").read_text())["files"][0]["status"] == "converted"
    assert json.loads(nb.read_text())["cells"][0]["source"] == "from nvidia.dali import fn\nndd.a()"


def test_invalid_notebook_is_an_error(cli, tmp_path):
    nb = tmp_path / "n.ipynb"
    nb.write_text('{"cells": [{"source": "from nvidia.dali import fn"}]}')
    r = cli(nb)
    assert r.exit_code == 2 and _cli_fakes.CALLS == []
    assert f'{nb}: error: not a valid notebook: no "nbformat" version' in r.stderr


def test_crlf_preserved(cli, tmp_path):
    f = tmp_path / "m.py"
    f.write_bytes(b"from nvidia.dali import fn\r\nfn.a()\r\n")
    cli(f)
    assert f.read_bytes() == b"from nvidia.dali import fn\r\nndd.a()\r\n"


def test_bom_preserved(cli, tmp_path):
    f = tmp_path / "m.py"
    f.write_bytes(codecs.BOM_UTF8 + b"from nvidia.dali import fn\nfn.a()\n")
    cli(f)
    assert f.read_bytes() == codecs.BOM_UTF8 + b"from nvidia.dali import fn\nndd.a()\n"
    assert _cli_fakes.CALLS  # and the converter never saw the BOM:
    assert not _cli_fakes.CALLS[0][0].startswith("\ufeff")


def test_latin1_cookie(cli, tmp_path):
    f = tmp_path / "m.py"
    f.write_bytes(b"# coding: latin-1\nfrom nvidia.dali import fn\nfn.a()  # caf\xe9\n")
    assert cli(f).exit_code == 1
    assert f.read_bytes() == b"# coding: latin-1\nfrom nvidia.dali import fn\nndd.a()  # caf\xe9\n"


@pytest.mark.parametrize(
    "raw, reason",
    [
        (b"import nvidia.dali\nx = '\xff'\n", "not valid UTF-8: byte 0xff at offset 24"),
        (b"import nvidia.dali\x00\n", "binary file"),
    ],
)
def test_unreadable_files_are_errors(cli, tmp_path, raw, reason):
    f = tmp_path / "m.py"
    f.write_bytes(raw)
    r = cli(f)
    assert r.exit_code == 2
    assert f"{f}: error: {reason}" in r.stderr
    assert f.read_bytes() == raw and _cli_fakes.CALLS == []


def test_read_only_file_untouched(cli, tmp_path):
    f = _write(tmp_path / "m.py", DALI + "fn.a()\n")
    f.chmod(0o444)
    r = cli(f)
    assert r.exit_code == 2 and "permission denied" in r.stderr
    assert f.read_text() == DALI + "fn.a()\n"
    # --check does not write, so a read-only file is no problem there
    assert cli("--check", f).exit_code == 1


def test_permission_bits_kept(cli, tmp_path):
    f = _write(tmp_path / "m.py", DALI + "fn.a()\n")
    f.chmod(0o755)
    cli(f)
    assert stat.S_IMODE(f.stat().st_mode) == 0o755 and "ndd.a()" in f.read_text()


def test_unparsable_output_refused(cli, tmp_path):
    text = DALI + "fn.a()  # BREAK_OUTPUT\n"
    f = _write(tmp_path / "m.py", text)
    r = cli(f)
    assert r.exit_code == 2
    assert "internal error: converted code does not parse" in r.stderr
    assert f.read_text() == text
    r = cli("--diff", f)
    assert r.exit_code == 2 and r.stdout == ""


def test_jobs_2_uses_pool_and_keeps_order(tmp_path):
    paths = []
    for i in range(6):
        text = DALI + f"x{i} = fn.a()\n" + ("# TODO_MARK\n" if i == 3 else "")
        paths.append(_write(tmp_path / f"m{i}.py", text))
    paths.append(_write(tmp_path / "bad.py", "import nvidia.dali\nRAISE_CONVERSION_ERROR\n"))
    rep = tmp_path / "r.json"
    # The fake must reach worker processes, where a monkeypatch of the parent does not.
    r = CliRunner().invoke(
        main, ["convert", "--jobs", "2", "--report", str(rep), *map(str, paths)],
        obj={"convert": _cli_fakes.fake_convert},
    )
    assert r.exit_code == 2, r.output
    for i in range(6):
        assert f"x{i} = ndd.a()" in paths[i].read_text()
    files = json.loads(rep.read_text())["files"]
    assert [e["path"] for e in files] == [str(p) for p in paths]
    assert files[3]["status"] == "partial" and files[6]["status"] == "error"


def test_quiet(cli, tmp_path):
    f = _write(tmp_path / "m.py", DALI + "fn.a()\n")
    r = cli("--quiet", f)
    assert r.exit_code == 1 and r.output == ""


def test_no_files_found(cli, tmp_path):
    r = cli(tmp_path)
    assert r.exit_code == 0


def test_interrupt_exits_130_and_leaves_files_whole(cli, tmp_path):
    done = _write(tmp_path / "a.py", DALI + "fn.a()\n")
    stop = _write(tmp_path / "b.py", DALI + "RAISE_INTERRUPT\nfn.b()\n")
    later = _write(tmp_path / "c.py", DALI + "fn.c()\n")
    r = cli(tmp_path)
    assert r.exit_code == 130 and "interrupted" in r.stderr
    assert done.read_text() == DALI + "ndd.a()\n"
    assert stop.read_text() == DALI + "RAISE_INTERRUPT\nfn.b()\n"
    assert later.read_text() == DALI + "fn.c()\n"
