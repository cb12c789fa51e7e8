"""Issue 8, part 1: a corpus of bad and unusual input, run through the real codemod and the CLI.

The corpus is generated here into tmp dirs (nothing binary is committed). For every file: the
report says what happened, with the path (and the line where there is one); a file that was not
converted is byte-identical afterwards (sha256 before/after); the run goes on to the other files;
the exit code says what happened.
"""

from __future__ import annotations

import codecs
import dataclasses
import json
import os
import re
import stat
from pathlib import Path
from typing import Callable, Optional

import libcst
import pytest
from click.testing import CliRunner

from _rel_helpers import broken_convert, pipeline, sha
from dali_migrate import engine, runner
from dali_migrate.cli import main

PIPE = pipeline()
PIPE_NO_DALI_WORD_LINES = 11  # lines of PIPE after its import line


@dataclasses.dataclass
class Case:
    name: str  # file name inside the corpus dir
    make: Callable[[Path], None]  # writes the file (or link) at dir / name
    status: str  # expected report status
    message: Optional[str] = None  # regex the error message must match
    line: Optional[int] = None  # expected error line
    check: Optional[Callable[[bytes, bytes], None]] = None  # (before, after) for converted files


def _bytes(data: bytes):
    return lambda p: p.write_bytes(data)


def _text(text: str):
    return _bytes(text.encode())


def _converted_parses(before: bytes, after: bytes, encoding="utf-8"):
    assert after != before
    text = after.decode(encoding)
    if text.startswith("\ufeff"):
        text = text[1:]
    libcst.parse_module(text.replace("\r\n", "\n"))
    assert "ndd." in text and "fn.readers" not in text


def _check_bom(before, after):
    assert after.startswith(codecs.BOM_UTF8) and not after[3:].startswith(codecs.BOM_UTF8)
    _converted_parses(before, after)


def _check_latin1(before, after):
    assert after.startswith(b"# -*- coding: latin-1 -*-\n# caf\xe9\n")
    _converted_parses(before, after, "latin-1")


def _check_crlf(before, after):
    assert after.count(b"\r\n") == after.count(b"\n")  # every newline still CRLF
    _converted_parses(before, after)


def _check_tabs(before, after):
    body = [ln for ln in after.decode().splitlines() if ln[:1] in (" ", "\t")]
    assert body and all(ln.startswith("\t") for ln in body), after.decode()
    _converted_parses(before, after)


def _long_file(p: Path):
    filler = "".join(f"value_{i} = {i}  # filler line {i}\n" for i in range(5000))
    p.write_text(filler + PIPE + filler)


def _check_long(before, after):
    b, a = before.decode().splitlines(), after.decode().splitlines()
    assert len(b) > 10_000
    if a[0].startswith("import nvidia.dali.experimental.dynamic as ndd"):
        a = a[1:]  # the ndd import may go to the top of the module
    assert a[:5000] == b[:5000]  # everything outside the pipeline untouched
    assert a[-5000:] == b[-5000:]
    _converted_parses(before, after)


def _read_only(text: str):
    def make(p: Path):
        p.write_text(text)
        p.chmod(0o444)
    return make


def _link_to_real(p: Path):
    (p.parent / "target_dir").mkdir(exist_ok=True)
    (p.parent / "target_dir" / "real.txt").write_text(pipeline(7))  # .txt: found only through the link
    p.symlink_to("target_dir/real.txt")


def _shadow_package(p: Path):
    # The repository has its own `nvidia` package; a file uses it without DALI.
    (p.parent / "nvidia").mkdir(exist_ok=True)
    (p.parent / "nvidia" / "__init__.py").write_text("dali = None  # our own nvidia package\n")
    p.write_text("import nvidia\n\nfn = nvidia.dali\nx = fn.resize(3)\n")


PIPE_FN_LOCAL = '''\
import nvidia.dali.fn as dfn
from nvidia.dali import pipeline_def


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def pipe(root):
    fn = dfn.readers.file  # `fn` is just a local name here
    jpegs, labels = fn(file_root=root)
    return dfn.decoders.image(jpegs), labels


def helper(files):
    for fn in files:
        print(fn.upper())
'''

NOTEBOOK_WITH_DALI_BUT_INVALID = '{"cells": [{"cell_type": "code", "source": ["import nvidia.dali"'

CORPUS = [
    Case("good.py", _text(PIPE), "converted", check=_converted_parses),
    Case("syntax_error.py", _text("import nvidia.dali.fn as fn\n\nx = fn.resize(\n"),
         "error", r"does not parse: '\(' was never closed", 3),
    Case("syntax_error_mid.py", _text("import nvidia.dali.fn as fn\ndef f(:\n    pass\nx = 1\n"),
         "error", r"does not parse: invalid syntax", 2),  # libcst alone said line 3
    Case("python2.py", _text('import nvidia.dali.fn as fn\nprint "x"\n'), "error",
         r"does not parse: Missing parentheses in call to 'print'", 2),
    Case("not_utf8.py", _bytes(b"import nvidia.dali.fn as fn\nx = '\xff\xfe'\n"),
         "error", r"not valid UTF-8: byte 0xff at offset 33"),
    Case("bad_cookie.py", _bytes(b"# coding: no-such-codec\nimport nvidia.dali\n"),
         "error", r"unknown encoding: no-such-codec"),
    Case("bom.py", _bytes(codecs.BOM_UTF8 + PIPE.encode()), "converted", check=_check_bom),
    Case("latin1.py", _bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + PIPE.encode()),
         "converted", check=_check_latin1),
    Case("crlf.py", _bytes(PIPE.replace("\n", "\r\n").encode()), "converted", check=_check_crlf),
    Case("tabs.py", _text(re.sub(r"(?m)^    ", "\t", PIPE)), "converted", check=_check_tabs),
    Case("empty.py", _bytes(b""), "unchanged"),
    Case("only_comment_dali.py", _text("# nvidia.dali is great\n"), "unchanged"),
    Case("binary.py", _bytes(bytes(range(256)) * 4), "error", r"^binary file$"),
    Case("binary_no_nul.py", _bytes(b"\x89PNG\r\n\x1a\n\xff\xd8\xff nvidia.dali"), "error", r"not valid UTF-8"),
    Case("link_to_good.py", _link_to_real, "converted"),
    Case("dangling.py", lambda p: p.symlink_to("no_such_file.py"), "error",
         r"broken symbolic link \(-> no_such_file.py\)"),
    Case("loop_a.py", lambda p: p.symlink_to("loop_b.py") or (p.parent / "loop_b.py").symlink_to("loop_a.py"),
         "error", r"symbolic link loop"),
    Case("read_only.py", _read_only(PIPE), "error", r"permission denied"),
    Case("read_only_no_dali.py", _read_only("x = 1\n"), "unchanged"),
    Case("invalid.ipynb", _text(NOTEBOOK_WITH_DALI_BUT_INVALID), "error", r"."),
    Case("not_a_notebook.ipynb", _text("import nvidia.dali\n"), "error", r"."),
    Case("local_fn_module.py", _text("import my_module as fn\n\nx = fn.resize(y)\nz = fn.readers.file()\n"),
         "unchanged"),
    Case("local_fn_assign.py", _text("import my_module\n\nfn = my_module\nx = fn.decoders.image(y)  # dali-ish\n"),
         "unchanged"),
    Case("uses_local_nvidia.py", _shadow_package, "unchanged"),
    Case("fn_local_in_pipeline.py", _text(PIPE_FN_LOCAL), None),  # status checked separately
]
# loop_b.py is also found by the walk: a loop too.
EXTRA = {"loop_b.py": ("error", r"symbolic link loop")}


def _make_corpus(root: Path) -> dict:
    root.mkdir(parents=True, exist_ok=True)
    for case in CORPUS:
        case.make(root / case.name)
    return {p: _snapshot(p) for p in _all_entries(root)}


def _all_entries(root: Path):
    return sorted(p for p in root.rglob("*") if p.is_symlink() or p.is_file())


def _snapshot(p: Path):
    if p.is_symlink():
        return ("link", os.readlink(p), sha(p) if p.exists() and p.is_file() else None)
    return ("file", sha(p), stat.S_IMODE(p.stat().st_mode))


def _convert(*args, jobs="1", obj=None):
    return CliRunner().invoke(main, ["convert", "--jobs", jobs, *map(str, args)], obj=obj)


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "repo"
    before = _make_corpus(root)
    return root, before


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_corpus_whole_run(corpus, tmp_path, jobs):
    root, before = corpus
    report_path = tmp_path / "report.json"
    r = _convert("--report", report_path, root, jobs=jobs)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert r.exit_code == 2, r.output  # errors win
    rep = {Path(e["path"]).name: e for e in json.loads(report_path.read_text())["files"]}
    expected = {c.name: (c.status, c.message) for c in CORPUS if c.status}
    expected.update(EXTRA)
    for name, (status, message) in expected.items():
        assert name in rep, f"{name} not in the report: {sorted(rep)}"
        entry = rep[name]
        assert entry["status"] == status, (name, entry)
        if status == "error":
            assert re.search(message, entry["error"]["message"]), (name, entry)
            # the path, and the line where known, in the message the user sees
            where = f"{root / name}:{entry['error']['line']}:" if entry["error"]["line"] else f"{root / name}:"
            assert where in r.stderr, (where, r.stderr)
    for case in CORPUS:
        if case.status == "error" and case.line is not None:
            assert rep[case.name]["error"]["line"] == case.line, rep[case.name]
    # Byte-identical unless converted; converted files as each case expects.
    after = {p: _snapshot(p) for p in _all_entries(root)}
    assert set(after) == set(before), "files appeared or vanished (temp files left?)"
    converted = {n for n, e in rep.items() if e["written"]}
    for p, snap in before.items():
        if p.name in converted or p.name == "real.txt":
            continue
        assert after[p] == snap, f"{p.name} changed although it was not converted"
    for case in CORPUS:
        if case.check:
            p = root / case.name
            raw_before = _rebuild(case, tmp_path)
            case.check(raw_before, p.read_bytes())
    # the symlink is still a link, its target converted
    link = root / "link_to_good.py"
    assert link.is_symlink() and "ndd." in link.read_text()
    # read-only file kept its bits
    assert stat.S_IMODE((root / "read_only.py").stat().st_mode) == 0o444


def _rebuild(case: Case, tmp_path: Path) -> bytes:
    d = tmp_path / "rebuild" / case.name
    d.mkdir(parents=True)
    case.make(d / case.name)
    return (d / case.name).read_bytes()


@pytest.mark.parametrize(
    "case", [c for c in CORPUS if c.status], ids=lambda c: c.name
)
def test_each_file_alone_exit_code(tmp_path, case):
    root = tmp_path / "one"
    root.mkdir()
    case.make(root / case.name)
    before = _snapshot(root / case.name)
    r = _convert(root / case.name)
    want = {"error": 2, "unchanged": 0, "converted": 1}[case.status]
    assert r.exit_code == want, r.output
    if case.status != "converted":
        assert _snapshot(root / case.name) == before
    if case.status == "error":
        assert str(root / case.name) in r.stderr


def test_check_mode_exit_codes_and_writes_nothing(corpus):
    root, before = corpus
    r = _convert("--check", root)
    assert r.exit_code == 2
    assert {p: _snapshot(p) for p in _all_entries(root)} == before


def test_fn_as_local_name_in_a_pipeline(tmp_path):
    """`fn` bound locally inside a pipeline: either converted to code that parses and no longer
    calls the local `fn` as a DALI module, or left alone with a marker; never a silent mix-up."""
    p = tmp_path / "m.py"
    p.write_text(PIPE_FN_LOCAL)
    result = engine.convert_source(PIPE_FN_LOCAL, path=str(p))
    libcst.parse_module(result.output)
    # helper(): a loop variable named fn is not DALI's fn
    assert "for fn in files:\n        print(fn.upper())" in result.output
    if result.markers:
        assert "@pipeline_def" in result.output
    else:
        assert "ndd.readers.File" in result.output or "ndd.readers.file" in result.output


def test_shadowing_fn_without_dali_is_never_touched():
    for text in [
        "import my_module as fn\nx = fn.resize(y)\n",
        "from mylib import fn\nimages = fn.decoders.image(x)\npipe.build()\n",
        "def f(fn):\n    return fn.readers.file(file_root='x')\n",
        "class fn:\n    pass\n# nvidia.dali\nfn.resize = 1\n",
    ]:
        assert engine.convert_source(text).output == text


def test_fn_shadowed_after_dali_import_in_a_helper():
    """A module importing DALI's fn, with a helper whose *parameter* is named fn."""
    text = (
        "import nvidia.dali.fn as fn\n\n"
        "def apply(fn, x):\n"
        "    return fn.resize(x)\n"
    )
    out = engine.convert_source(text).output
    libcst.parse_module(out)
    assert "def apply(fn, x):\n    return fn.resize(x)\n" in out


def test_very_long_file(tmp_path):
    """10k lines with a pipeline in the middle: converted, everything around it byte-identical.
    (Slow: the codemod walks the tree ~20 times; about 15 s for 10k lines on 2 cores.)"""
    p = tmp_path / "long.py"
    _long_file(p)
    before = p.read_bytes()
    r = _convert(p)
    assert r.exit_code == 1, r.output
    _check_long(before, p.read_bytes())


# -- output that would not parse is never written --------------------------------------------------


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("mode", [[], ["--diff"]])
def test_broken_converter_output_is_never_written(tmp_path, jobs, mode):
    good = tmp_path / "a.py"
    good.write_text(PIPE)
    nb = tmp_path / "b.ipynb"
    nb.write_text(json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                   "source": PIPE.splitlines(keepends=True)}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }, indent=1) + "\n")
    before = {p: sha(p) for p in (good, nb)}
    r = _convert(*mode, tmp_path, jobs=jobs, obj={"convert": broken_convert})
    assert r.exit_code == 2, r.output
    assert {p: sha(p) for p in (good, nb)} == before
    assert f"{good}" in r.stderr and "converted code does not parse" in r.stderr
    assert f"{nb}" in r.stderr
    assert r.stdout == ""  # not even as a diff
    assert sorted(x.name for x in tmp_path.iterdir()) == ["a.py", "b.ipynb"]


def test_broken_output_through_runner_directly(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(PIPE)
    res = runner.process_file(p, runner.Options(convert=broken_convert))
    assert res.status.value == "error" and not res.written
    assert "does not parse" in res.error
    assert p.read_text() == PIPE


def test_cr_only_latin1_file_with_a_coding_cookie(tmp_path):
    """Found by test_dali_free_files_byte_identical_through_the_runner: a CR-only (old Mac) file
    with a latin-1 cookie was rejected as 'not valid UTF-8' (tokenize.detect_encoding only splits
    at LF); Python itself runs it."""
    p = tmp_path / "m.py"
    raw = ("# -*- coding: latin-1 -*-\r# \xe9\r" + PIPE.replace("\n", "\r")).encode("latin-1")
    p.write_bytes(raw)
    r = _convert(p)
    assert r.exit_code == 1, r.output
    out = p.read_bytes()
    assert out.startswith(b"# -*- coding: latin-1 -*-\r# \xe9\r") and b"\n" not in out
    assert "ndd." in out.decode("latin-1")
