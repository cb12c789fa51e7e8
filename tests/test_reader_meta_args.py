"""The reader the codemod writes again for an iterator's ``reader_meta=`` or for
``pipe.epoch_size()`` leaves out the loader arguments that cannot change the metadata read from it
(rules/pipe_epoch_size.py ``meta_free_args``: the arguments the catalog says a reader takes from
DALI's common reader schema, less the sharding ones). Proved here on DALI (CPU), for every reader in
``META_PROVEN``, on the fixture data: for each left-out argument at several values, alone and with
shuffling, in an unsharded, a padded and an unpadded sharded reader, the dynamic-mode reader without
it gives the metadata the pipeline's reader with it reports, and so does the dynamic-mode reader
with it. If DALI adds a loader argument or changes what one does, this fails."""

from __future__ import annotations

import inspect

import pytest

from dali_migrate import catalog
from dali_migrate.rules.pipe_epoch_size import META_ARGS, META_PROVEN, meta_free_args

dali = pytest.importorskip("nvidia.dali")
ndd = pytest.importorskip("nvidia.dali.experimental.dynamic")

# what the emitted iterators and epoch_size() read
KEYS = ("epoch_size", "epoch_size_padded", "number_of_shards", "shard_id", "pad_last_batch", "stick_to_shard")

# several values of each argument the codemod may leave out (a new one fails test_every_left_out_argument_has_values)
VALUES = {
    "random_shuffle": [True, False],
    "initial_fill": [1, 3, 4096],
    "seed": [0, 7, 123457],
    "read_ahead": [True, False],
    "prefetch_queue_depth": [1, 5],
    "lazy_init": [True, False],
    "tensor_init_bytes": [0, 1 << 20],
    "dont_use_mmap": [True, False],
    "skip_cached_images": [True, False],
    "bytes_per_sample_hint": [[0], [1 << 16]],
    "preserve": [True, False],
}

SHARDING = [
    {},
    {"num_shards": 4, "shard_id": 3, "pad_last_batch": True, "stick_to_shard": True},
    {"num_shards": 2, "shard_id": 1},
]


def _readers(data, manifest) -> dict:
    """{dynamic-mode reader: [(fn path, arguments naming the fixture data)]}"""
    fmt = manifest["formats"]
    tfrec = pytest.importorskip("nvidia.dali.tfrecord")
    return {
        "readers.File": [("readers.file", {"file_root": str(data / fmt["images"]["root"])}),
                         ("readers.file", {"file_list": str(data / fmt["images"]["file_list"])})],
        "readers.Numpy": [("readers.numpy", {"file_root": str(data / fmt["numpy"]["root"] / "f32_2d"),
                                             "file_filter": "*.npy"})],
        "readers.TFRecord": [("readers.tfrecord", {
            "path": str(data / fmt["tfrecord"]["path"]), "index_path": str(data / fmt["tfrecord"]["index_path"]),
            "features": {"image/encoded": tfrec.FixedLenFeature((), tfrec.string, "")}})],
        "readers.COCO": [("readers.coco", {"file_root": str(data / fmt["coco"]["file_root"]),
                                           "annotations_file": str(data / fmt["coco"]["annotations_file"])}),
                         ("readers.coco", {"file_root": str(data / fmt["coco"]["file_root"]),
                                           "annotations_file": str(data / fmt["coco"]["annotations_file"]),
                                           "skip_empty": True})],
        "readers.Caffe": [("readers.caffe", {"path": str(data / fmt["caffe_lmdb"]["path"])})],
        "readers.Caffe2": [("readers.caffe2", {"path": str(data / fmt["caffe2_lmdb"]["path"])})],
        "readers.MXNet": [("readers.mxnet", {"path": str(data / fmt["recordio"]["path"]),
                                             "index_path": str(data / fmt["recordio"]["index_path"])})],
        "readers.Webdataset": [("readers.webdataset", {"paths": [str(data / p) for p in fmt["webdataset"]["paths"]],
                                                       "ext": ["jpg", "cls"]}),
                               ("readers.webdataset", {"paths": [str(data / p) for p in fmt["webdataset"]["paths"]],
                                                       "index_paths": [str(data / p) for p in fmt["webdataset"]["index_paths"]],
                                                       "ext": ["jpg", "cls"]})],
        "readers.NemoAsr": [("readers.nemo_asr", {"manifest_filepaths": [str(data / fmt["audio"]["manifest"])]})],
        "experimental.readers.Video": [("experimental.readers.video", {
            "device": "cpu", "file_root": str(data / fmt["video"]["root"]), "sequence_length": 4})],
    }


_FIXTURE = {"readers.Caffe": "caffe_lmdb", "readers.Caffe2": "caffe2_lmdb", "readers.TFRecord": "tfrecord",
            "readers.COCO": "coco", "readers.MXNet": "recordio", "readers.Webdataset": "webdataset",
            "readers.NemoAsr": "audio", "experimental.readers.Video": "video", "readers.Numpy": "numpy",
            "readers.File": "images"}


def _resolve(root, path: str):
    for part in path.split("."):
        root = getattr(root, part)
    return root


def _pipeline_meta(fn_path: str, kwargs: dict):
    """The pipeline reader's metadata, as pipe.reader_meta() reports it; None where DALI refuses
    the arguments (skip_cached_images on a reader without it): no working pipeline passes them."""
    import nvidia.dali.fn as fn

    @dali.pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        out = _resolve(fn, fn_path)(**kwargs, name="Reader")
        return tuple(out.values()) if isinstance(out, dict) else tuple(out) if isinstance(out, (list, tuple)) else out

    p = pipe()
    try:
        p.build()
    except RuntimeError:
        return None
    meta = p.reader_meta("Reader")
    assert p.epoch_size("Reader") == meta["epoch_size_padded"]
    return {k: meta[k] for k in KEYS}


def _ndd_meta(cls, kwargs: dict):
    meta = cls(**kwargs).get_metadata()
    return {k: meta[k] for k in KEYS}


def test_every_proven_reader_leaves_out_the_loader_arguments_but_sharding():
    cat = catalog.load()
    for name in META_PROVEN:
        infos = [i for i in cat.all() if i.is_reader and i.ndd_name == name]
        assert infos, name
        free = meta_free_args(name)
        assert free and not free & META_ARGS, name
        assert all(free == set(i.loader_args) - META_ARGS for i in infos), name
    assert meta_free_args("readers.Video") == frozenset()  # the GPU-only video reader: not proved here


def test_every_left_out_argument_has_values():
    free = set().union(*(meta_free_args(n) for n in META_PROVEN))
    assert free <= set(VALUES), sorted(free - set(VALUES))


@pytest.mark.parametrize("name", sorted(META_PROVEN))
def test_left_out_arguments_do_not_change_the_metadata(name, fixture_data, fixture_manifest):
    if _FIXTURE[name] in fixture_manifest["skipped"]:
        pytest.skip(f"{_FIXTURE[name]} not generated: {fixture_manifest['skipped'][_FIXTURE[name]]}")
    cls = _resolve(ndd, name)
    takes = set(inspect.signature(cls.__init__).parameters)
    free = meta_free_args(name)
    checked = set()
    for fn_path, data_args in _readers(fixture_data, fixture_manifest)[name]:
        for shard in SHARDING:
            base = {**data_args, **shard}
            written_again = _ndd_meta(cls, base)
            assert _pipeline_meta(fn_path, base) == written_again, (name, base)
            for arg in sorted(free):
                for value in VALUES[arg]:
                    for extra in ({arg: value}, {arg: value, "random_shuffle": True}):
                        full = {**base, **extra}
                        got = _pipeline_meta(fn_path, full)
                        if got is None:
                            continue
                        assert got == written_again, (name, full)
                        if set(extra) <= takes:  # (dynamic mode has no bytes_per_sample_hint, preserve)
                            assert _ndd_meta(cls, full) == written_again, (name, full)
                        checked.add(arg)
    # each argument was accepted by DALI at some value and proved there
    assert checked == free, sorted(free - checked)
