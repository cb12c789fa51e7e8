"""Tests of fixtures/make_fixtures.py: every data set reads back through DALI's CPU readers."""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest_fixtures import GENERATOR_PATH, load_generator  # fixtures come via tests/conftest.py

BATCH = 4
ITERS = 2


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dali():
    return pytest.importorskip("nvidia.dali")


def _fmt(manifest: dict, name: str) -> dict:
    if name in manifest["skipped"]:
        pytest.skip(f"{name} not generated: {manifest['skipped'][name]}")
    return manifest["formats"][name]


def _run(dali, graph, iters: int = ITERS, batch_size: int = BATCH):
    """Build a CPU-only pipeline from ``graph`` (a callable returning DataNodes), run it
    ``iters`` times and return, per output, the list of numpy samples over all batches."""

    @dali.pipeline_def(batch_size=batch_size, num_threads=1, device_id=None,
                       prefetch_queue_depth=1)
    def pipe():
        return graph()

    p = pipe()
    p.build()
    outs = None
    for _ in range(iters):
        batch = p.run()
        if outs is None:
            outs = [[] for _ in batch]
        for acc, tl in zip(outs, batch):
            acc.extend(np.array(t) for t in tl)
    reader_sizes = p.epoch_size()
    return outs, reader_sizes


def _decode(dali, encoded):
    return dali.fn.decoders.image(encoded, device="cpu", output_type=dali.types.RGB)


def _n() -> int:
    return BATCH * ITERS


def _shapes(samples) -> list:
    return [list(s.shape) for s in samples]


# --------------------------------------------------------------------------------------
# Generator: determinism, size, speed, index files (no DALI needed)
# --------------------------------------------------------------------------------------


def _tree_digest(root: Path) -> dict:
    """sha256 per file; the one path-dependent file (absolute paths) is normalised."""
    gen = load_generator()
    out = {}
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.name == "lock.mdb":
            continue
        data = p.read_bytes()
        rel = p.relative_to(root).as_posix()
        if rel in gen.PATH_DEPENDENT_FILES:
            data = data.replace(str(root.resolve()).encode(), b"<ROOT>")
        out[rel] = hashlib.sha256(data).hexdigest()
    return out


def test_generation_is_deterministic_small_and_fast(tmp_path):
    gen = load_generator()
    t0 = time.perf_counter()
    m1 = gen.generate(tmp_path / "a", force=True)
    elapsed = time.perf_counter() - t0
    gen.generate(tmp_path / "b", force=True)
    a, b = _tree_digest(tmp_path / "a"), _tree_digest(tmp_path / "b")
    assert a == b
    # MANIFEST.json (which hashes every other file) is byte-identical too
    assert (tmp_path / "a" / gen.MANIFEST_NAME).read_bytes() == \
        (tmp_path / "b" / gen.MANIFEST_NAME).read_bytes()
    # a second run into the same folder gives the very same bytes, lock.mdb aside
    gen.generate(tmp_path / "a", force=True)
    assert _tree_digest(tmp_path / "a") == a
    assert len(a) > 50
    assert set(m1["files"]) | {gen.MANIFEST_NAME} == set(a)
    total = sum(p.stat().st_size for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert total < 5 * 1024 * 1024
    assert elapsed < 10.0
    assert set(m1["formats"]) | set(m1["skipped"]) == set(gen.FORMATS)


def test_up_to_date_and_rerun_is_noop(tmp_path):
    gen = load_generator()
    out = tmp_path / "d"
    assert not gen.is_up_to_date(out)
    gen.generate(out)
    assert gen.is_up_to_date(out)
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    gen.generate(out)
    assert before == {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    (out / "images_list.txt").unlink()
    assert not gen.is_up_to_date(out)
    # --only regenerates one format and keeps the others in the manifest
    man = gen.generate(out, only=["images"])
    assert gen.is_up_to_date(out)
    assert set(man["formats"]) | set(man["skipped"]) == set(gen.FORMATS)


def test_generation_leaves_unowned_files_alone(tmp_path):
    gen = load_generator()
    keep = tmp_path / "mine.txt"
    keep.write_text("keep me")
    gen.generate(tmp_path, force=True)
    assert keep.read_text() == "keep me"


def test_lmdb_formats_skipped_without_lmdb(tmp_path, monkeypatch):
    gen = load_generator()
    monkeypatch.setattr(gen, "_have_lmdb", lambda: False)
    man = gen.generate(tmp_path, force=True)
    without_av = set() if gen._have_av() else {"video_h264"}
    assert set(man["skipped"]) == {"caffe_lmdb", "caffe2_lmdb"} | without_av
    assert "lmdb" in man["skipped"]["caffe_lmdb"]
    assert not (tmp_path / "caffe_lmdb").exists()
    assert gen.is_up_to_date(tmp_path)
    monkeypatch.undo()
    # once lmdb is importable the folder is stale (the skipped formats can now be made)
    if gen._have_lmdb():
        assert not gen.is_up_to_date(tmp_path)


def test_h264_clips_skipped_without_pyav(tmp_path, monkeypatch):
    gen = load_generator()
    monkeypatch.setattr(gen, "_have_av", lambda: False)
    man = gen.generate(tmp_path, force=True)
    assert "video_h264" in man["skipped"] and "'av'" in man["skipped"]["video_h264"]
    assert not (tmp_path / "video_h264").exists() and not (tmp_path / gen.H264_FILE_LIST).exists()
    assert gen.is_up_to_date(tmp_path)
    monkeypatch.undo()
    if gen._have_av():
        assert not gen.is_up_to_date(tmp_path)


def test_unknown_format_rejected(tmp_path):
    with pytest.raises(ValueError):
        load_generator().generate(tmp_path, only=["nope"])


def test_cli(tmp_path):
    out = tmp_path / "cli"
    r = subprocess.run([sys.executable, str(GENERATOR_PATH), "--out", str(out), "-q"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert load_generator().is_up_to_date(out)


def test_crc32c_known_vectors():
    gen = load_generator()
    assert gen.crc32c(b"") == 0
    assert gen.crc32c(b"123456789") == 0xE3069283
    assert gen.crc32c(b"\0" * 32) == 0x8A9136AA


def test_tfrecord_framing_and_index(fixture_data, fixture_manifest):
    gen = load_generator()
    info = _fmt(fixture_manifest, "tfrecord")
    data = (fixture_data / info["path"]).read_bytes()
    index = [tuple(map(int, line.split()))
             for line in (fixture_data / info["index_path"]).read_text().splitlines()]
    assert len(index) == info["count"]
    pos = 0
    for off, size in index:
        assert off == pos
        (length,) = struct.unpack_from("<Q", data, off)
        (len_crc,) = struct.unpack_from("<I", data, off + 8)
        payload = data[off + 12: off + 12 + length]
        (data_crc,) = struct.unpack_from("<I", data, off + 12 + length)
        assert len_crc == gen.masked_crc32c(data[off: off + 8])
        assert data_crc == gen.masked_crc32c(payload)
        assert size == length + 16
        pos += size
    assert pos == len(data)


def _tool(name: str):
    path = shutil.which(name) or str(Path(sys.executable).parent / name)
    return path if Path(path).exists() else None


def test_tfrecord_index_matches_dali_tfrecord2idx(fixture_data, fixture_manifest, tmp_path):
    info = _fmt(fixture_manifest, "tfrecord")
    tool = _tool("tfrecord2idx")
    if tool is None:
        pytest.skip("DALI's tfrecord2idx script is not installed")
    idx = tmp_path / "t.idx"
    subprocess.run([sys.executable, tool, str(fixture_data / info["path"]), str(idx)],
                   check=True, capture_output=True, timeout=60)
    assert idx.read_text() == (fixture_data / info["index_path"]).read_text()


def test_webdataset_index_matches_dali_wds2idx(fixture_data, fixture_manifest, tmp_path):
    info = _fmt(fixture_manifest, "webdataset")
    tool = _tool("wds2idx")
    if tool is None:
        pytest.skip("DALI's wds2idx script is not installed")
    idx = tmp_path / "w.idx"
    subprocess.run([sys.executable, tool, str(fixture_data / info["paths"][0]), str(idx)],
                   check=True, capture_output=True, timeout=60)
    assert idx.read_text() == (fixture_data / info["index_paths"][0]).read_text()


def test_recordio_layout(fixture_data, fixture_manifest):
    info = _fmt(fixture_manifest, "recordio")
    data = (fixture_data / info["path"]).read_bytes()
    offsets = [int(line.split("\t")[1])
               for line in (fixture_data / info["index_path"]).read_text().splitlines()]
    pos, labels = 0, []
    while pos < len(data):
        assert pos == offsets[len(labels)]
        magic, lrec = struct.unpack_from("<II", data, pos)
        assert magic == 0xCED7230A and lrec >> 29 == 0
        length = lrec & ((1 << 29) - 1)
        flag, label, rec_id, _ = struct.unpack_from("<IfQQ", data, pos + 8)
        assert flag == 0 and rec_id == len(labels)
        assert data[pos + 8 + 24: pos + 8 + 26] == b"\xff\xd8"  # JPEG SOI
        labels.append(int(label))
        pos += 8 + length + (-length % 4)
    assert labels == info["labels"]


def test_coco_annotations_consistent(fixture_data, fixture_manifest):
    info = _fmt(fixture_manifest, "coco")
    doc = json.loads((fixture_data / info["annotations_file"]).read_text())
    assert [c["id"] for c in doc["categories"]] == info["category_ids"]
    for im in doc["images"]:
        assert (fixture_data / info["file_root"] / im["file_name"]).is_file()
        for a in (a for a in doc["annotations"] if a["image_id"] == im["id"]):
            x, y, w, h = a["bbox"]
            assert 0 <= x and 0 <= y and x + w <= im["width"] and y + h <= im["height"]
            assert a["segmentation"] and all(len(p) % 2 == 0 and len(p) >= 6
                                             for p in a["segmentation"])


# --------------------------------------------------------------------------------------
# DALI readers (CPU only)
# --------------------------------------------------------------------------------------


@pytest.mark.dali
def test_file_reader_folder(dali, fixture_data, fixture_manifest):
    info = _fmt(fixture_manifest, "images")
    assert info["count"] % 4 and info["count"] % 8 and info["classes"] == sorted(info["classes"])

    def graph():
        jpegs, labels = dali.fn.readers.file(file_root=str(fixture_data / info["root"]),
                                             name="Reader")
        return _decode(dali, jpegs), labels

    (images, labels), sizes = _run(dali, graph)
    assert sizes == {"Reader": info["count"]}
    # DALI labels = index of the class folder in sorted order; files sorted within.
    assert [int(lab[0]) for lab in labels] == info["labels"][: _n()]
    assert _shapes(images) == info["shapes"][: _n()]
    assert all(im.dtype == np.uint8 for im in images)


@pytest.mark.dali
def test_file_reader_file_list(dali, fixture_data, fixture_manifest):
    info = _fmt(fixture_manifest, "images")

    def graph():
        jpegs, labels = dali.fn.readers.file(file_list=str(fixture_data / info["file_list"]),
                                             name="Reader")
        return _decode(dali, jpegs), labels

    (images, labels), sizes = _run(dali, graph, iters=3)
    assert sizes == {"Reader": info["count"]}
    assert [int(lab[0]) for lab in labels] == info["labels"][:12]
    assert _shapes(images) == info["shapes"][:12]


@pytest.mark.dali
def test_file_reader_png(dali, fixture_data, fixture_manifest):
    info = _fmt(fixture_manifest, "images_png")

    def graph():
        pngs, labels = dali.fn.readers.file(file_root=str(fixture_data / info["root"]),
                                            name="Reader")
        return _decode(dali, pngs), labels

    (images, labels), sizes = _run(dali, graph)
    assert sizes == {"Reader": info["count"]}
    n = info["count"]
    # 2 iterations of 4 wrap around the 5 files (reader pads by restarting the epoch)
    expected = [info["labels"][k % n] for k in range(_n())]
    assert [int(lab[0]) for lab in labels][:n] == expected[:n]
    assert _shapes(images)[:n] == info["shapes"]


@pytest.mark.dali
@pytest.mark.parametrize("remap", [True, False])
def test_coco_reader(dali, fixture_data, fixture_manifest, remap):
    info = _fmt(fixture_manifest, "coco")

    def graph():
        jpegs, bboxes, labels, polygons, vertices = dali.fn.readers.coco(
            file_root=str(fixture_data / info["file_root"]),
            annotations_file=str(fixture_data / info["annotations_file"]),
            polygon_masks=True, ratio=True, skip_empty=False,
            avoid_class_remapping=not remap, name="Reader")
        return _decode(dali, jpegs), bboxes, labels, polygons, vertices

    (images, bboxes, labels, polygons, vertices), sizes = _run(dali, graph)
    assert sizes == {"Reader": info["count"]}
    n = info["count"]
    objs = info["objects_per_image"]
    assert _shapes(images)[:n] == info["shapes"]
    assert [len(b) for b in bboxes[:n]] == objs
    assert [len(lab) for lab in labels[:n]] == objs
    all_labels = {int(v) for lab in labels for v in np.ravel(lab)}
    assert all_labels <= ({1, 2, 3} if remap else set(info["category_ids"]))
    for b in bboxes:
        if len(b):
            assert b.shape[1] == 4 and b.min() >= 0.0 and b.max() <= 1.0  # ratio=True
    # one annotation has a two-part segmentation, so one image has objs + 1 polygons
    assert sum(len(p) for p in polygons[:n]) == info["num_annotations"] + 1
    assert all(v.shape[-1] == 2 for v in vertices if len(v))


@pytest.mark.dali
def test_coco_reader_skip_empty(dali, fixture_data, fixture_manifest):
    info = _fmt(fixture_manifest, "coco")

    def graph():
        jpegs, bboxes, labels = dali.fn.readers.coco(
            file_root=str(fixture_data / info["file_root"]),
            annotations_file=str(fixture_data / info["annotations_file"]),
            skip_empty=True, ltrb=True, name="Reader")
        return jpegs, bboxes, labels

    (_, bboxes, _), sizes = _run(dali, graph)
    assert sizes == {"Reader": info["count_nonempty"]}
    assert all(len(b) > 0 for b in bboxes)


@pytest.mark.dali
def test_tfrecord_reader(dali, fixture_data, fixture_manifest):
    info = _fmt(fixture_manifest, "tfrecord")
    tfrec = pytest.importorskip("nvidia.dali.tfrecord")

    def graph():
        inputs = dali.fn.readers.tfrecord(
            path=str(fixture_data / info["path"]),
            index_path=str(fixture_data / info["index_path"]),
            features={
                "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
                "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
                "image/height": tfrec.FixedLenFeature([1], tfrec.int64, -1),
                "image/object/bbox/xmin": tfrec.VarLenFeature(tfrec.float32, 0.0),
            },
            name="Reader")
        return (_decode(dali, inputs["image/encoded"]), inputs["image/class/label"],
                inputs["image/height"], inputs["image/object/bbox/xmin"])

    (images, labels, heights, xmin), sizes = _run(dali, graph)
    assert sizes == {"Reader": info["count"]}
    assert [int(lab[0]) for lab in labels] == info["labels"][: _n()]
    assert _shapes(images) == info["shapes"][: _n()]
    assert [int(h[0]) for h in heights] == [s[0] for s in info["shapes"][: _n()]]
    assert all(np.allclose(x, [0.0, 0.25]) for x in xmin)


@pytest.mark.dali
@pytest.mark.parametrize("group", ["f32_2d", "u8_hwc", "i64_1d", "f16_3d"])
def test_numpy_reader(dali, fixture_data, fixture_manifest, group):
    info = _fmt(fixture_manifest, "numpy")
    g = info["groups"][group]
    gen = load_generator()

    def graph():
        return dali.fn.readers.numpy(file_root=str(fixture_data / info["root"] / group),
                                     file_filter="*.npy", name="Reader")

    (arrays,), sizes = _run(dali, graph)
    assert sizes == {"Reader": info["count_per_group"]}
    for k, arr in enumerate(arrays[: info["count_per_group"]]):
        expected = gen.numpy_expected(g, k)
        assert arr.dtype == expected.dtype
        np.testing.assert_array_equal(arr, expected)


@pytest.mark.dali
def test_numpy_pairs_read_as_pairs(dali, fixture_data, fixture_manifest):
    info = _fmt(fixture_manifest, "numpy_pairs")
    gen = load_generator()
    root = str(fixture_data / info["root"])

    def graph():
        data = dali.fn.readers.numpy(file_root=root, file_filter="data-*.npy", name="data")
        label = dali.fn.readers.numpy(file_root=root, file_filter="label-*.npy", name="label")
        return data, label

    (data, label), sizes = _run(dali, graph)
    assert sizes == {"data": info["count"], "label": info["count"]}
    for k in range(info["count"]):
        np.testing.assert_array_equal(data[k], gen.pair_expected("data", k))
        np.testing.assert_array_equal(label[k], gen.pair_expected("label", k))
        assert list(data[k].shape) == info["data_shape"] and list(label[k].shape) == info["label_shape"]


@pytest.mark.dali
@pytest.mark.parametrize("use_index", [False, True])
def test_webdataset_reader(dali, fixture_data, fixture_manifest, use_index):
    info = _fmt(fixture_manifest, "webdataset")
    kwargs = {"index_paths": [str(fixture_data / p) for p in info["index_paths"]]} if use_index else {}

    def graph():
        jpg, cls, meta = dali.fn.readers.webdataset(
            paths=[str(fixture_data / p) for p in info["paths"]],
            ext=["jpg", "cls", "json"], name="Reader", **kwargs)
        return _decode(dali, jpg), cls, meta

    (images, cls, meta), sizes = _run(dali, graph)
    assert sizes == {"Reader": info["count"]}
    # .cls is ASCII text (webdataset convention); DALI returns its raw bytes as uint8
    assert [int(bytes(c).decode()) for c in cls] == info["labels"][: _n()]
    assert [json.loads(bytes(m))["label"] for m in meta] == info["labels"][: _n()]
    assert _shapes(images) == info["shapes"][: _n()]


@pytest.mark.dali
def test_webdataset_reader_two_ext(dali, fixture_data, fixture_manifest):
    info = _fmt(fixture_manifest, "webdataset")

    def graph():
        jpg, cls = dali.fn.readers.webdataset(
            paths=[str(fixture_data / p) for p in info["paths"]], ext=["jpg", "cls"])
        return _decode(dali, jpg), cls

    (images, cls), _ = _run(dali, graph)
    assert [int(bytes(c).decode()) for c in cls] == info["labels"][: _n()]


@pytest.mark.dali
def test_caffe_reader(dali, fixture_data, fixture_manifest):
    info = _fmt(fixture_manifest, "caffe_lmdb")

    def graph():
        jpegs, labels = dali.fn.readers.caffe(path=str(fixture_data / info["path"]),
                                              name="Reader")
        return _decode(dali, jpegs), labels

    (images, labels), sizes = _run(dali, graph)
    assert sizes == {"Reader": info["count"]}
    assert [int(lab[0]) for lab in labels] == info["labels"][: _n()]
    assert _shapes(images) == info["shapes"][: _n()]


@pytest.mark.dali
def test_caffe2_reader(dali, fixture_data, fixture_manifest):
    info = _fmt(fixture_manifest, "caffe2_lmdb")

    def graph():
        jpegs, labels = dali.fn.readers.caffe2(path=str(fixture_data / info["path"]),
                                               name="Reader")
        return _decode(dali, jpegs), labels

    (images, labels), sizes = _run(dali, graph)
    assert sizes == {"Reader": info["count"]}
    assert [int(np.ravel(lab)[0]) for lab in labels] == info["labels"][: _n()]
    assert _shapes(images) == info["shapes"][: _n()]


@pytest.mark.dali
def test_mxnet_reader(dali, fixture_data, fixture_manifest):
    info = _fmt(fixture_manifest, "recordio")

    def graph():
        jpegs, labels = dali.fn.readers.mxnet(path=str(fixture_data / info["path"]),
                                              index_path=str(fixture_data / info["index_path"]),
                                              name="Reader")
        return _decode(dali, jpegs), labels

    (images, labels), sizes = _run(dali, graph)
    assert sizes == {"Reader": info["count"]}
    assert [int(np.ravel(lab)[0]) for lab in labels] == info["labels"][: _n()]
    assert _shapes(images) == info["shapes"][: _n()]


@pytest.mark.dali
def test_audio_file_reader(dali, fixture_data, fixture_manifest):
    info = _fmt(fixture_manifest, "audio")

    def graph():
        raw, labels = dali.fn.readers.file(file_root=str(fixture_data / info["root"]),
                                           file_filters=["*.wav"], name="Reader")
        audio, rate = dali.fn.decoders.audio(raw, dtype=dali.types.INT16, downmix=True)
        return audio, rate, labels

    (audio, rates, labels), sizes = _run(dali, graph)
    n = info["count"]
    assert sizes == {"Reader": n}
    assert [int(lab[0]) for lab in labels][:n] == info["labels"]
    assert [len(a) for a in audio][:n] == info["lengths"]
    assert all(float(np.ravel(r)[0]) == info["sample_rate"] for r in rates)
    assert all(a.dtype == np.int16 and 10000 < np.abs(a).max() < 20000 for a in audio)


def test_nemo_manifests_agree(fixture_data, fixture_manifest):
    info = _fmt(fixture_manifest, "audio")
    rel = [json.loads(x) for x in (fixture_data / info["manifest_relative"]).read_text().splitlines()]
    abs_ = [json.loads(x) for x in (fixture_data / info["manifest"]).read_text().splitlines()]
    assert len(rel) == len(abs_) == info["count"]
    for r, a in zip(rel, abs_):
        assert Path(a["audio_filepath"]) == (fixture_data / info["root"]).resolve() / r["audio_filepath"]
        assert Path(a["audio_filepath"]).is_file()
        assert (r["duration"], r["text"]) == (a["duration"], a["text"])


def test_moved_data_is_not_up_to_date(tmp_path):
    gen = load_generator()
    gen.generate(tmp_path / "x")
    shutil.move(str(tmp_path / "x"), str(tmp_path / "y"))
    assert not gen.is_up_to_date(tmp_path / "y")  # nemo manifest points at the old place


@pytest.mark.dali
def test_nemo_asr_reader(dali, fixture_data, fixture_manifest):
    info = _fmt(fixture_manifest, "audio")

    def graph():
        audio, rate, text = dali.fn.readers.nemo_asr(
            manifest_filepaths=[str(fixture_data / info["manifest"])],
            read_sample_rate=True, read_text=True, dtype=dali.types.FLOAT, name="Reader")
        return audio, rate, text

    (audio, rates, texts), sizes = _run(dali, graph)
    n = info["count"]
    assert sizes == {"Reader": n}
    # manifest order == generation order (not sorted by folder)
    assert [bytes(t).decode() for t in texts][:n] == info["texts"]
    assert all(float(np.ravel(r)[0]) == info["sample_rate"] for r in rates)
    lengths = [len(a) for a in audio][:n]
    assert sorted(lengths) == sorted(info["lengths"])


@pytest.mark.dali
def test_video_reader(dali, fixture_data, fixture_manifest):
    info = _fmt(fixture_manifest, "video")
    seq = 4

    def graph():
        frames, labels = dali.fn.experimental.readers.video(
            device="cpu", file_root=str(fixture_data / info["root"]), sequence_length=seq,
            name="Reader")
        return frames, labels

    (frames, labels), sizes = _run(dali, graph)
    expected = sum(fc // seq for fc in info["frame_counts"])  # step defaults to seq length
    assert sizes == {"Reader": expected}
    assert all(f.shape == (seq, info["height"], info["width"], 3) for f in frames)
    assert {int(np.ravel(lab)[0]) for lab in labels} <= set(info["labels"])


@pytest.mark.dali
def test_video_decoder(dali, fixture_data, fixture_manifest):
    info = _fmt(fixture_manifest, "video")

    def graph():
        raw, labels = dali.fn.readers.file(file_root=str(fixture_data / info["root"]),
                                           file_filters=["*.avi"], name="Reader")
        return dali.fn.decoders.video(raw, device="cpu"), labels

    (frames, labels), sizes = _run(dali, graph, iters=1)
    n = info["count"]
    assert sizes == {"Reader": n}
    assert [f.shape[0] for f in frames][:n] == info["frame_counts"]
    assert all(f.shape[1:] == (info["height"], info["width"], 3) for f in frames)
    assert [int(lab[0]) for lab in labels][:n] == info["labels"]


def test_h264_clips(fixture_data, fixture_manifest):
    """The H.264 clips, decoded with PyAV (DALI 2.4 decodes H.264 on the GPU only): frame count,
    size, key frames, and the square where each frame has it, so that a reader's frame index can
    be trusted from the pictures."""
    info = _fmt(fixture_manifest, "video_h264")
    av = pytest.importorskip("av")
    size, top = info["square"]["size"], info["square"]["top"]
    for rel, count, xs in zip(info["files"], info["frame_counts"], info["square"]["x"]):
        with av.open(str(fixture_data / rel)) as container:
            stream = container.streams.video[0]
            assert stream.codec_context.name == "h264" and float(stream.average_rate) == info["fps"]
            packets = [p for p in container.demux(stream) if p.size]  # the flush packet is empty
            keys = [i for i, p in enumerate(packets) if p.is_keyframe]
        assert keys == list(range(0, count, info["gop"])), rel
        with av.open(str(fixture_data / rel)) as container:
            frames = np.stack([f.to_ndarray(format="rgb24") for f in container.decode(video=0)])
        assert frames.shape == (count, info["height"], info["width"], 3), rel
        assert len(xs) == count
        # the square's columns: near-white in the middle rows of its band (background < 160)
        band = frames[:, top + 4:top + size - 4].mean(axis=(1, 3))
        for f, (row, x) in enumerate(zip(band, xs)):
            cols = np.flatnonzero(row > 220)
            assert abs((cols.min() + cols.max()) / 2 - (x + (size - 1) / 2)) <= 1, (rel, f)
    listed = (fixture_data / info["file_list"]).read_text().splitlines()
    assert [line.rsplit(" ", 1) for line in listed] == [
        [str((fixture_data / rel).resolve()), str(lab)] for rel, lab in zip(info["files"], info["labels"])]
    assert [info["classes"][lab] for lab in info["labels"]] == [Path(rel).parent.name for rel in info["files"]]
