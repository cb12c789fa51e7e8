"""scripts/corpus_rate.py on a tiny synthetic corpus: the page's counts and table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "corpus_rate.py"

CONVERTIBLE = '''\
from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def files_pipe():
    jpegs, labels = fn.readers.file(file_root="images")
    return fn.decoders.image(jpegs), labels


pipe = files_pipe()
pipe.build()
images, labels = pipe.run()
'''

FED = '''\
from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def fed_pipe():
    x = fn.external_source(name="x")
    return x * 2


pipe = fed_pipe()
pipe.build()
pipe.feed_input("x", [1, 2])
out = pipe.run()
'''

NO_DALI = "import os\nprint(os.getcwd())\n"


def _notebook(cells: list) -> str:
    nb = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
             "source": src.splitlines(keepends=True)}
            for src in cells
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(nb, indent=1) + "\n"


def _corpus(root: Path) -> None:
    (root / "sub").mkdir(parents=True)
    (root / "convertible.py").write_text(CONVERTIBLE)
    (root / "sub" / "fed.py").write_text(FED)
    (root / "plain.py").write_text(NO_DALI)
    (root / "nb.ipynb").write_text(_notebook([
        "%matplotlib inline\nfrom nvidia.dali import pipeline_def, fn",
        "@pipeline_def(batch_size=2, num_threads=1, device_id=None)\n"
        "def nb_pipe():\n    jpegs, labels = fn.readers.file(file_root='images')\n"
        "    return fn.decoders.image(jpegs), labels",
        "pipe = nb_pipe()\npipe.build()\nout = pipe.run()",
        # (a cell may import from __future__: IPython compiles each cell on its own)
        "from __future__ import annotations\nprint(out)",
    ]))


def _run(corpus: Path, out: Path, *extra: str, jobs: str = "1") -> str:
    subprocess.run(
        [sys.executable, str(SCRIPT), str(corpus), "--out", str(out), "--commit", "abc123",
         "--date", "2024-01-02", "--jobs", jobs, *extra],
        check=True, cwd=ROOT, capture_output=True, text=True,
    )
    return out.read_text()


def _row(page: str, path: str) -> list:
    for line in page.splitlines():
        if line.startswith(f"| `{path}` |"):
            return [c.strip() for c in line.strip("|").split("|")]
    raise AssertionError(f"no row for {path}")


def test_counts_and_rows(tmp_path):
    corpus = tmp_path / "examples"
    _corpus(corpus)
    before = {p: p.read_text() for p in corpus.rglob("*") if p.is_file()}
    page = _run(corpus, tmp_path / "rate.md", "--no-run")

    # the corpus itself is never touched
    assert {p: p.read_text() for p in corpus.rglob("*") if p.is_file()} == before

    assert "- Date: 2024-01-02" in page
    assert "- DALI commit: abc123" in page
    assert "measured): 3; other `.py`/`.ipynb` files skipped: 1" in page
    assert "| full | 2 | 66.7% |" in page
    assert "| partial | 0 | 0.0% |" in page
    assert "| marked | 1 | 33.3% |" in page
    assert "| unchanged | 0 | 0.0% |" in page
    assert "| error | 0 | 0.0% |" in page
    assert "| **total** | 3 | 100.0% |" in page
    assert "Pipelines converted: 2; left with a marker: 1" in page
    assert "Converted outputs that byte-compile: 3 of 3." in page
    assert "Fully converted files still using a pipeline-mode import: 0." in page

    # the external_source + feed_input pipeline's reasons are counted
    reasons = page.split("## Most frequent marker reasons")[1].split("## Errors")[0]
    assert "| 1 | " in reasons and "feed_input" in reasons

    assert _row(page, "convertible.py")[:5] == ["`convertible.py`", "full", "1", "0", "ok"]
    assert _row(page, "nb.ipynb")[:5] == ["`nb.ipynb`", "full", "1", "0", "ok"]
    fed = _row(page, "sub/fed.py")
    assert fed[:4] == ["`sub/fed.py`", "marked", "0", "1"]
    assert "fed from outside" in fed[-1]
    assert "plain.py" not in page

    # rows sorted by path; the page is the same when generated again
    table = page.split("## Per file")[1]
    assert table.index("convertible.py") < table.index("nb.ipynb") < table.index("sub/fed.py")
    assert _run(corpus, tmp_path / "again.md", "--no-run") == page
    assert "Nothing is run (`--no-run`)" in page and "run on the CPU:" not in page


def test_unparsable_file_is_an_input_error(tmp_path):
    corpus = tmp_path / "examples"
    corpus.mkdir()
    (corpus / "broken.py").write_text("import nvidia.dali.fn as fn\ndef f(:\n")
    page = _run(corpus, tmp_path / "rate.md")
    assert "| error | 1 | 100.0% |" in page
    assert _row(page, "broken.py")[1] == "error"
    assert "- `broken.py` (input):" in page


# Reads DALI_extra's JPEG folder (the stand-in has one) with GPU placements that the run moves onto
# the CPU; converted and original both run.
RUNS = '''\
import os
from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn

images_dir = os.path.join(os.environ["DALI_EXTRA_PATH"], "db", "single", "jpeg")


@pipeline_def(batch_size=4, num_threads=1, device_id=0)
def files_pipe():
    jpegs, labels = fn.readers.file(file_root=images_dir)
    return fn.decoders.image(jpegs, device="mixed"), labels


pipe = files_pipe()
pipe.build()
images, labels = pipe.run()
print(images.as_cpu().at(0).shape)
'''

# Converts fully, but then fails where the original runs (as a conversion bug would): it checks
# its own text for the decorator that the conversion removes. The column must single it out.
FAILS = '''\
import os
from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn

root = os.environ["DALI_EXTRA_PATH"] + "/db/single/jpeg"


@pipeline_def(batch_size=2, num_threads=1, device_id=0)
def files_pipe():
    jpegs, labels = fn.readers.file(file_root=root)
    return fn.decoders.image(jpegs), labels


pipe = files_pipe()
pipe.build()
images, labels = pipe.run()
with open(__file__) as f:
    if "@pipeline" + "_def" not in f.read():
        raise LookupError("no decorator left")
'''

NO_STANDIN = '''\
import os
from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn

data = os.path.join(os.environ["DALI_EXTRA_PATH"], "db", "nothing_like_it")


@pipeline_def(batch_size=2, num_threads=1, device_id=0)
def files_pipe():
    jpegs, labels = fn.readers.file(file_root=data)
    return jpegs, labels


pipe = files_pipe()
pipe.build()
out = pipe.run()
'''

NEEDS_MODULE = "import dali_migrate_no_such_module\n" + CONVERTIBLE


def test_full_conversions_run_on_the_cpu(tmp_path):
    corpus = tmp_path / "examples"
    corpus.mkdir()
    (corpus / "runs.py").write_text(RUNS)
    (corpus / "fails.py").write_text(FAILS)
    (corpus / "no_standin.py").write_text(NO_STANDIN)
    (corpus / "needs.py").write_text(NEEDS_MODULE)
    (corpus / "fed.py").write_text(FED)  # marked: never run
    page = _run(corpus, tmp_path / "rate.md")

    assert "| full | 4 | 80.0% |" in page
    assert _row(page, "runs.py")[1::4] == ["full", "ok"]
    assert _row(page, "fails.py")[5] == "run failed: LookupError: no decorator left; original runs"
    assert _row(page, "no_standin.py")[5] == "not run: no stand-in for db/nothing_like_it"
    assert _row(page, "needs.py")[5] == "both fail: needs dali_migrate_no_such_module"
    assert _row(page, "fed.py")[5] == "-"
    assert "Converted files that run on the CPU: 1 of 4; originals that run: 2; not run: 1." in page
    assert "Converted files that fail while their original runs: 1 (`fails.py`)." in page
    # no temporary folder leaks into the page, and runs in parallel give the same page
    assert str(tmp_path) not in page and "/tmp" not in page
    assert _run(corpus, tmp_path / "again.md", jobs="2") == page


def test_error_line_of_a_dali_failure():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import corpus_rate
    finally:
        sys.path.remove(str(SCRIPT.parent))
    stderr = (
        "Traceback (most recent call last):\n"
        '  File "x.py", line 3, in <module>\n'
        "RuntimeError: Critical error when building pipeline:\n"
        "Error in CPU operator `nvidia.dali.fn.jitter`,\n"
        "encountered:\n"
        "\n"
        'Assert on "it != registry_.end()" failed: Operator "Jitter" not registered for cpu.\n'
        "C++ context: [operator_factory.h:73]\n"
        "terminate called without an active exception\n"
    )
    line = corpus_rate.last_error_line(stderr)
    assert line == 'RuntimeError: Operator "Jitter" not registered for cpu.'
    assert corpus_rate.need_of(line) == "a GPU"
    assert corpus_rate.verdict((False, "RuntimeError: CUDA runtime API error"), (False, line)) == (
        f"both fail: needs a GPU (original: {line})"
    )
    assert corpus_rate.verdict((True, ""), (False, "KeyError: 'x'")) == "ok (original fails: KeyError: 'x')"


def test_a_python_error_is_the_failure_even_when_the_exit_aborts(tmp_path):
    # on some machines DALI's threads abort the interpreter's exit after an uncaught error
    # (SIGABRT, "terminate called without an active exception"): the error is what failed
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import corpus_rate
    finally:
        sys.path.remove(str(SCRIPT.parent))
    raises = tmp_path / "raises.py"
    raises.write_text("import atexit, os\natexit.register(os.abort)\nraise LookupError('no decorator left')\n")
    aborts = tmp_path / "aborts.py"
    aborts.write_text("import os\nos.abort()\n")
    env = {"PATH": "/usr/bin:/bin"}
    assert corpus_rate.run_script(raises, env, 30, {}) == (False, "LookupError: no decorator left")
    ok, what = corpus_rate.run_script(aborts, env, 30, {})
    assert not ok and what.startswith("killed by signal 6")


# DALI's examples read their own data folder (`../../data/images/file_list.txt`), beside them
READS_EXAMPLES_DATA = '''\
import os
import numpy as np
from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn

images_dir = "../../data/images/"
with open(images_dir + "file_list.txt") as f:
    first = f.readline().split()[0]
assert os.path.exists(images_dir + first), first


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def files_pipe():
    jpegs, labels = fn.readers.file(file_root=images_dir, file_list=images_dir + "file_list.txt")
    return fn.decoders.image(jpegs), labels


pipe = files_pipe()
pipe.build()
images, labels = pipe.run()
# (read: dynamic mode may still be computing a batch nobody reads when the program ends, and DALI
# 2.4 then aborts the process; docs/troubleshooting.md)
print(np.array(images.at(1)).shape, np.array(labels.as_tensor()).ravel().tolist())
'''


def test_examples_read_a_stand_in_for_their_data_folder(tmp_path):
    corpus = tmp_path / "examples"
    (corpus / "frameworks" / "pytorch").mkdir(parents=True)
    (corpus / "frameworks" / "pytorch" / "external.py").write_text(READS_EXAMPLES_DATA)
    page = _run(corpus, tmp_path / "rate.md")
    assert _row(page, "frameworks/pytorch/external.py")[1::4] == ["full", "ok"]
    assert "The examples' own `data/` folder" in page
    # another corpus (its own --title/--about) gets no such folder unless asked
    other = _run(corpus, tmp_path / "other.md", "--title", "T", "--about", "A")
    assert _row(other, "frameworks/pytorch/external.py")[5] == "both fail: needs data at ../../data/images/file_list.txt"
    assert "The examples' own `data/` folder" not in other


def _standin():
    """scripts/dali_extra_standin.py (scripts/ is no package)."""
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import dali_extra_standin
    finally:
        sys.path.remove(str(SCRIPT.parent))
    return dali_extra_standin


def test_examples_data_stand_in_lists_what_it_holds(tmp_path):
    dali_extra_standin = _standin()
    assert dali_extra_standin.build_examples_data(tmp_path) == {}
    data = tmp_path / "data"
    for folder in ("images", "audio"):
        lines = (data / folder / "file_list.txt").read_text().splitlines()
        assert lines and all(len(line.split()) == 2 and (data / folder / line.split()[0]).is_file() for line in lines)
    labels = {line.split()[0].split("/")[0]: int(line.split()[1]) for line in (data / "images" / "file_list.txt").read_text().splitlines()}
    assert sorted(labels.values()) == [0, 1]  # two class folders, one label each, as DALI's
    assert not (tmp_path / ".examples-data-fixtures").exists()
    assert dali_extra_standin.build_examples_data(tmp_path) == {}  # a data folder that exists is left as it is


def test_the_stand_ins_tfrecord_numbers_classes_from_1_as_dali_extras_does(tmp_path):
    # DALI's various-readers examples assert labels in (1, 1000) for db/tfrecord/train
    import numpy as np

    pytest = __import__("pytest")
    pytest.importorskip("nvidia.dali")
    dali_extra_standin = _standin()
    extra = tmp_path / "extra"
    assert "db/tfrecord/train" not in dali_extra_standin.build(extra)
    import nvidia.dali.fn as fn
    import nvidia.dali.tfrecord as tfrec
    from nvidia.dali import pipeline_def

    @pipeline_def(batch_size=10, num_threads=1, device_id=None)
    def read():
        rec = fn.readers.tfrecord(path=str(extra / "db/tfrecord/train"), index_path=str(extra / "db/tfrecord/train.idx"),
                                  features={"image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
                                            "image/class/text": tfrec.FixedLenFeature([], tfrec.string, ""),
                                            "image/encoded": tfrec.FixedLenFeature([], tfrec.string, "")})
        return rec["image/class/label"], rec["image/class/text"], fn.peek_image_shape(rec["image/encoded"])

    pipe = read()
    pipe.build()
    labels, text, shapes = pipe.run()
    assert sorted({int(x) for x in labels.as_array().ravel()}) == [1, 2, 3]
    assert bytes(np.asarray(text[0])).decode() in ("circle", "square", "triangle")
    # (DALI's ImageNet examples crop 224 x 224 out of DALI_extra's images)
    assert all(tuple(np.asarray(shapes[i]))[:2] == (256, 256) for i in range(len(shapes)))


def test_the_stand_ins_mnist_holds_28x28_images_labelled_0_to_9(tmp_path):
    # DALI's JAX and Flax notebooks reshape each decoded MNIST image to 784 values
    pytest = __import__("pytest")
    pytest.importorskip("nvidia.dali")
    pytest.importorskip("lmdb")
    dali_extra_standin = _standin()
    extra = tmp_path / "extra"
    assert "db/MNIST/training" not in dali_extra_standin.build(extra)
    import nvidia.dali.fn as fn
    import nvidia.dali.types as types
    from nvidia.dali import pipeline_def

    @pipeline_def(batch_size=20, num_threads=1, device_id=None)
    def read():
        jpegs, labels = fn.readers.caffe2(path=str(extra / "db/MNIST/training"))
        return fn.reshape(fn.decoders.image(jpegs, output_type=types.GRAY), shape=[28 * 28]), labels

    pipe = read()
    pipe.build()
    images, labels = pipe.run()
    assert images.as_array().shape == (20, 784)
    assert sorted({int(x) for x in labels.as_array().ravel()}) == list(range(10))
