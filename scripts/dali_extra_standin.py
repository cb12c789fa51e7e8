"""A stand-in for DALI_extra (DALI's test-data repository) made of the project's fixtures.

DALI's examples read their data from ``os.environ["DALI_EXTRA_PATH"]`` + a path such as
``db/lmdb`` or ``db/recordio/train.rec``. DALI_extra is several GiB and cannot be fetched here,
so :func:`build` lays out a small tree with those paths holding fixture data of the same format
(``fixtures/make_fixtures.py``): a Caffe LMDB where DALI_extra has a Caffe LMDB, a RecordIO file
where it has one, and so on. The data is of the same format, not the same content: an example that
relies on DALI_extra's shapes (MNIST's 28x28 grey digits, say) may fail on the stand-in where it
would not on the real data, and then fails the same way before and after conversion.

:func:`wanted_paths` finds the DALI_extra paths a piece of code names, statically:
``os.path.join(os.environ["DALI_EXTRA_PATH"], "db", "lmdb")``, ``root + "/db/single/jpeg/x.jpg"``,
names assigned such values, ``pathlib`` ``/``, f-strings. :func:`missing` tells which of them the
tree does not hold, so that a file can be reported "no stand-in for <path>" instead of being run.
"""

from __future__ import annotations

import ast
import glob
import importlib.util
import posixpath
import shutil
import sys
from pathlib import Path
from typing import Iterable, Optional

ROOT = Path(__file__).resolve().parents[1]
GENERATOR_PATH = ROOT / "fixtures" / "make_fixtures.py"
ENV = "DALI_EXTRA_PATH"

#: DALI_extra path -> fixture path (relative to the fixture root) holding data of the same format.
#: Folders are copied whole; a file the code names inside a mapped folder that the fixture lacks
#: (``db/single/jpeg/100/swan-3584559_640.jpg``) is a copy of the fixture's first file with the
#: same suffix there (see :func:`build`).
LAYOUT = {
    "db/single/jpeg": "images",  # class folders of JPEGs (readers.file)
    "db/single/png": "images_png",
    "db/lmdb": "caffe_lmdb",  # Caffe LMDB of Datum records
    "db/c2lmdb": "caffe2_lmdb",  # Caffe2 LMDB of TensorProtos
    # DALI_extra's MNIST is a Caffe2 LMDB too (28x28 grey JPEGs; the stand-in's are colour)
    "db/MNIST/training": "caffe2_lmdb",
    "db/MNIST/testing": "caffe2_lmdb",
    "db/recordio/train.rec": "recordio/train.rec",
    "db/recordio/train.idx": "recordio/train.idx",
    "db/tfrecord/train": "tfrecord/train.tfrecord",
    "db/tfrecord/train.idx": "tfrecord/train.idx",
    "db/coco/images": "coco/images",
    "db/coco/instances.json": "coco/annotations.json",
    "db/webdataset/MNIST/devel-0.tar": "webdataset/shard-000000.tar",
    "db/webdataset/MNIST/devel-1.tar": "webdataset/shard-000000.tar",
    "db/webdataset/MNIST/devel-2.tar": "webdataset/shard-000000.tar",
    "db/webdataset/devel-0.tar": "webdataset/shard-000000.tar",
    "db/webdataset/devel-1.tar": "webdataset/shard-000000.tar",
    "db/webdataset/devel-2.tar": "webdataset/shard-000000.tar",
    "db/audio/wav": "audio",  # class folders of 16-bit PCM WAVs
    "db/video/sintel/labelled_videos": "video",  # class folders of clips (MJPEG AVI, not H.264)
}

_MODULE_NAME = "dali_migrate_make_fixtures"
_EXTRA = "\0DALI_EXTRA"  # stands for the value of $DALI_EXTRA_PATH while evaluating code


def load_generator():
    """Import ``fixtures/make_fixtures.py`` by path (``fixtures/`` is not a package)."""
    mod = sys.modules.get(_MODULE_NAME)
    if mod is None:
        spec = importlib.util.spec_from_file_location(_MODULE_NAME, GENERATOR_PATH)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[_MODULE_NAME] = mod
        spec.loader.exec_module(mod)
    return mod


# ------------------------------------------------------------------------------------------------
# which DALI_extra paths code names
# ------------------------------------------------------------------------------------------------


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


class _Strings:
    """Static string values of expressions; ``_EXTRA`` stands for the DALI_extra root."""

    def __init__(self, tree: ast.AST):
        self.assigned: dict = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        self.assigned.setdefault(t.id, []).append(node.value)
        self._busy: set = set()

    def _is_env(self, node: ast.AST) -> bool:
        key = None
        if isinstance(node, ast.Subscript) and _dotted(node.value) in ("os.environ", "environ"):
            key = node.slice
        elif isinstance(node, ast.Call) and node.args and _dotted(node.func) in (
            "os.environ.get", "environ.get", "os.getenv", "getenv"
        ):
            key = node.args[0]
        return isinstance(key, ast.Constant) and key.value == ENV

    def value(self, node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else None
        if self._is_env(node):
            return _EXTRA
        if isinstance(node, ast.Name):
            # a name assigned once (or always the same value) stands for that value
            if node.id in self._busy or node.id not in self.assigned:
                return None
            self._busy.add(node.id)
            try:
                values = {self.value(v) for v in self.assigned[node.id]}
            finally:
                self._busy.discard(node.id)
            return values.pop() if len(values) == 1 else None
        if isinstance(node, ast.BinOp):
            left, right = self.value(node.left), self.value(node.right)
            if left is None or right is None:
                return None
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Div):  # pathlib
                return posixpath.join(left, right)
            return None
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                s = self.value(v.value if isinstance(v, ast.FormattedValue) else v)
                if s is None:
                    return None
                parts.append(s)
            return "".join(parts)
        if isinstance(node, ast.Call) and not node.keywords:
            name = _dotted(node.func)
            args = [self.value(a) for a in node.args]
            if not args or any(a is None for a in args):
                return None
            if name in ("os.path.join", "path.join", "join", "posixpath.join"):
                return posixpath.join(*args)
            if name in ("Path", "pathlib.Path", "os.path.abspath", "os.path.normpath", "str") and len(args) == 1:
                return args[0]
        return None


def wanted_paths(code: str) -> list:
    """DALI_extra paths (relative, "/"-separated, sorted) that ``code`` names; [] if it does not parse."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    strings = _Strings(tree)
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr) or isinstance(node, ast.Constant):
            continue
        s = strings.value(node)
        if s is None or not s.startswith(_EXTRA):
            continue
        rel = posixpath.normpath("/" + s[len(_EXTRA):]).lstrip("/")
        if rel and rel != ".":
            found.add(rel)
    return sorted(found)


# ------------------------------------------------------------------------------------------------
# the tree
# ------------------------------------------------------------------------------------------------


def _has_glob(path: str) -> bool:
    return any(c in path for c in "*?[")


def _under(path: str, folder: str) -> Optional[str]:
    """``path`` relative to ``folder`` if it lies inside it, else None."""
    return path[len(folder) + 1:] if path.startswith(folder + "/") else None


def build(dest: Path, wanted: Iterable[str] = ()) -> dict:
    """Lay out the stand-in tree in ``dest``; {DALI_extra path: why it is absent} for what the
    fixtures could not provide (a format the generator skipped, e.g. the LMDBs without ``lmdb``).

    ``wanted`` paths inside a mapped folder that the fixture lacks are made as copies of the
    fixture's first file (sorted) with the same suffix in that folder.
    """
    dest = Path(dest)
    fixtures = dest.parent / (dest.name + "-fixtures")
    manifest = load_generator().generate(fixtures, force=True)
    skipped = manifest.get("skipped", {})
    absent = {}
    remade = _remade(load_generator())
    made_again = {extra for fmt, _, extras in remade if fmt not in skipped for extra in extras}
    for extra, fixture in sorted(LAYOUT.items()):
        fmt = fixture.split("/")[0]
        if fmt in skipped:
            absent[extra] = f"fixture {fmt} not generated: {skipped[fmt]}"
            continue
        if extra in made_again:
            continue
        src, dst = fixtures / fixture, dest / extra
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            shutil.copy2(src, dst)
    for fmt, make, extras in remade:
        if fmt in skipped:
            continue
        made = fixtures / f"{fmt}-{extras[0].replace('/', '_')}"
        make(made)
        for extra in extras:
            src, dst = made / LAYOUT[extra], dest / extra
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                shutil.copytree(src, dst)
            else:
                shutil.copy2(src, dst)
    for path in sorted(set(wanted)):
        if _has_glob(path) or (dest / path).exists():
            continue
        for folder in sorted(LAYOUT, key=len, reverse=True):
            inner = _under(path, folder)
            suffix = posixpath.splitext(path)[1].lower()
            if inner is None or not suffix or not (dest / folder).is_dir():
                continue
            like = sorted(p for p in (dest / folder).rglob("*") if p.is_file() and p.suffix.lower() == suffix)
            if like:
                (dest / path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(like[0], dest / path)
            break
    return absent


def _remade(gen) -> list:
    """[(fixture format, writer of a folder, the DALI_extra paths it holds as LAYOUT maps them)]:
    the sets made in DALI_extra's shape instead of copied from the fixtures.

    DALI_extra's ImageNet-like sets (the Caffe and Caffe2 LMDBs, RecordIO and TFRecord files) hold
    images of a few hundred pixels, which DALI's examples crop to 224 x 224; its TFRecord numbers
    classes from 1 (TensorFlow's ImageNet labels, 1..1000: the various-readers examples assert that
    range) and names them in image/class/text. Its MNIST holds 28x28 digits labelled 0-9, which the
    JAX and Flax notebooks reshape to 784 values."""
    return [
        ("caffe_lmdb", lambda out: gen.make_caffe_lmdb(out, size=256), ("db/lmdb",)),
        ("caffe2_lmdb", lambda out: gen.make_caffe2_lmdb(out, size=256), ("db/c2lmdb",)),
        ("caffe2_lmdb", lambda out: _write_mnist(out / "caffe2_lmdb"), ("db/MNIST/training", "db/MNIST/testing")),
        ("recordio", lambda out: gen.make_recordio(out, size=256), ("db/recordio/train.rec", "db/recordio/train.idx")),
        ("tfrecord", lambda out: gen.make_tfrecord(out, label_base=1, size=256, class_text=True),
         ("db/tfrecord/train", "db/tfrecord/train.idx")),
    ]


def _write_mnist(path: Path, n: int = 20) -> None:
    """A Caffe2 LMDB shaped like DALI_extra's MNIST: ``n`` 28x28 JPEGs (the fixtures' shapes, in
    colour: the examples decode them as GRAY), labels 0-9."""
    gen = load_generator()
    items = []
    for k in range(n):
        data, _ = gen._class_image(k % 3, k // 3, w=28, h=28)
        items.append((f"{k:08d}".encode(), gen.caffe2_tensor_protos(data, k % 10)))
    gen._lmdb_write(path, items)


#: DALI's docs/examples/data (beside the examples, read as ``../../data/images`` and the like):
#: folder -> (fixture folder of the same format, the list file DALI keeps there, its lines' pattern)
EXAMPLES_DATA = {
    "images": ("images", "file_list.txt"),  # class folders of JPEGs, "<class>/<file> <label>" lines
    "audio/wav": ("audio", None),  # WAVs; DALI's audio/file_list.txt lists "wav/<file> <label>"
}


def build_examples_data(root: Path) -> dict:
    """Lay out a stand-in for DALI's ``docs/examples/data`` in ``root/data`` (the examples sit two
    folders below it and read ``../../data/images/file_list.txt``, ``../../data/audio``): two of
    the fixtures' JPEG class folders with a ``file_list.txt`` of ``<class>/<file> <label>`` lines, as
    DALI's has, and their WAVs in ``audio/wav`` with ``audio/file_list.txt``. Same formats, not the
    same content. Returns {folder: why it is absent}; nothing is made where ``root/data`` exists."""
    data = Path(root) / "data"
    if data.exists():
        return {}
    fixtures = data.parent / ".examples-data-fixtures"
    manifest = load_generator().generate(fixtures, force=True)
    absent = {}
    for folder, (fixture, _) in EXAMPLES_DATA.items():
        if fixture in manifest.get("skipped", {}):
            absent[folder] = f"fixture {fixture} not generated: {manifest['skipped'][fixture]}"
            continue
        src = fixtures / fixture
        dst = data / folder
        if folder == "audio/wav":  # one folder of WAVs, as DALI's
            dst.mkdir(parents=True)
            for wav in sorted(src.rglob("*.wav")):
                shutil.copy2(wav, dst / wav.name)
            names = sorted(p.name for p in dst.iterdir())
            (data / "audio" / "file_list.txt").write_text("".join(f"wav/{n} {i}\n" for i, n in enumerate(names)))
            continue
        # two class folders, as DALI's (dog, kitten: the examples check that labels are 0 or 1)
        classes = sorted(d.name for d in src.iterdir() if d.is_dir())[:2]
        for c in classes:
            shutil.copytree(src / c, dst / c)
        lines = [f"{c}/{f.name} {label}" for label, c in enumerate(classes) for f in sorted((dst / c).iterdir())]
        (dst / "file_list.txt").write_text("".join(line + "\n" for line in lines))
    shutil.rmtree(fixtures, ignore_errors=True)
    return absent


def missing(tree: Path, paths: Iterable[str]) -> list:
    """The ``paths`` (DALI_extra-relative; glob patterns allowed) that ``tree`` does not hold."""
    out = []
    for path in paths:
        if _has_glob(path):
            if not glob.glob(str(Path(tree) / path)):
                out.append(path)
        elif not (Path(tree) / path).exists():
            out.append(path)
    return out
