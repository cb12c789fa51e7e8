"""Pipeline-compatible random mode on the GPU: the runtime loop equals `pipe.run()` of a GPU
pipeline bit for bit (decoders.image_random_crop with device="mixed" in the pipeline and "gpu"
in the loop, random_resized_crop, jitter (GPU-only), noise, coin_flip), and readers feeding GPU
operators equal the pipeline. Skipped without a CUDA device (the runtime's own count).
"""

import numpy as np
import pytest

pytest.importorskip("nvidia.dali")

from nvidia.dali import fn, pipeline_def, types  # noqa: E402

import dali_migrate.runtime as ndd  # noqa: E402
from dali_migrate.runtime import _backend  # noqa: E402

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(_backend.cuda_device_count() == 0, reason="no CUDA device")]

BS = 4
ITERS = 8  # 21 files / bs 4 -> 6 batches per epoch: crosses the epoch boundary


def _host(batch_or_tl):
    """List of numpy samples of a runtime Batch or a pipeline TensorList, wherever it lives."""
    if hasattr(batch_or_tl, "select"):  # runtime Batch
        b = batch_or_tl.cpu() if batch_or_tl.device.device_type == "gpu" else batch_or_tl
        return [np.asarray(b.select(i)) for i in range(b.batch_size)]
    tl = batch_or_tl.as_cpu() if type(batch_or_tl).__name__.endswith("GPU") else batch_or_tl
    return [np.array(tl.at(i)) for i in range(len(tl))]


def _compare(ref, got):
    assert len(ref) == len(got)
    for i, (a, b) in enumerate(zip(ref, got)):
        assert len(a) == len(b)
        for j, (x, y) in enumerate(zip(a, b)):
            assert len(x) == len(y)
            for k, (s, t) in enumerate(zip(x, y)):
                assert s.dtype == t.dtype and s.shape == t.shape, f"iter {i} out {j} sample {k}"
                np.testing.assert_array_equal(s, t, err_msg=f"iter {i} output {j} sample {k}")


@pipeline_def(batch_size=BS, num_threads=2, device_id=0)
def _random_gpu_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, initial_fill=8)
    images = fn.decoders.image_random_crop(jpegs, device="mixed", num_attempts=10)
    images = fn.resize(images, resize_x=32, resize_y=32)
    jit = fn.jitter(images)
    rrc = fn.random_resized_crop(images, size=[16, 16])
    noisy = fn.noise.gaussian(rrc, stddev=10.0)
    flip = fn.random.coin_flip(probability=0.5)
    out = fn.crop_mirror_normalize(noisy, mirror=flip, dtype=types.FLOAT)
    return jit, rrc, out, flip, labels


def _random_gpu_loop(root, seed, iters):
    """The converted loop: same graph, random ops called in the pipeline's post-order."""
    out = []
    with ndd.pipeline_compat(seed=seed):
        reader = ndd.readers.File(file_root=root, random_shuffle=True, initial_fill=8)
        with ndd.EvalContext(device_id=0):
            while len(out) < iters:
                for jpegs, labels in reader.next_epoch(batch_size=BS):
                    images = ndd.decoders.image_random_crop(jpegs, device="gpu",
                                                            num_attempts=10)
                    images = ndd.resize(images, resize_x=32, resize_y=32)
                    jit = ndd.jitter(images)
                    rrc = ndd.random_resized_crop(images, size=[16, 16])
                    noisy = ndd.noise.gaussian(rrc, stddev=10.0)
                    flip = ndd.random.coin_flip(probability=0.5, batch_size=BS)
                    o = ndd.crop_mirror_normalize(noisy, mirror=flip, dtype=types.FLOAT)
                    assert jit.device.device_type == "gpu" and o.device.device_type == "gpu"
                    out.append([_host(b) for b in (jit, rrc, o, flip, labels)])
                    if len(out) == iters:
                        break
    return out


@pytest.mark.parametrize("seed", [1234, 7])
def test_random_gpu_loop_equals_pipe_run(image_dir, seed):
    pipe = _random_gpu_pipe(image_dir, seed=seed)
    pipe.build()
    ref = [[_host(o) for o in pipe.run()] for _ in range(ITERS)]
    _compare(ref, _random_gpu_loop(image_dir, seed, ITERS))


@pipeline_def(batch_size=BS, num_threads=2, device_id=0, seed=3)
def _reader_gpu_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, seed=17,
                                    initial_fill=8)
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_x=20, resize_y=24)
    images = fn.crop_mirror_normalize(images, crop=[16, 16], dtype=types.FLOAT,
                                      mean=[120.0, 115.0, 100.0], std=[60.0, 60.0, 60.0],
                                      output_layout="CHW")
    return images, labels.gpu()


def test_reader_feeding_gpu_ops_equals_pipe_run(image_dir):
    pipe = _reader_gpu_pipe(image_dir)
    pipe.build()
    ref = [[_host(o) for o in pipe.run()] for _ in range(ITERS)]
    reader = ndd.readers.File(file_root=image_dir, random_shuffle=True, seed=17,
                              initial_fill=8)
    got = []
    while len(got) < ITERS:
        for jpegs, labels in reader.next_epoch(batch_size=BS):
            images = ndd.decoders.image(jpegs, device="gpu")
            images = ndd.resize(images, resize_x=20, resize_y=24)
            images = ndd.crop_mirror_normalize(images, crop=[16, 16], dtype=types.FLOAT,
                                               mean=[120.0, 115.0, 100.0],
                                               std=[60.0, 60.0, 60.0], output_layout="CHW")
            labels = labels.gpu()
            assert images.device.device_type == "gpu" and labels.device.device_type == "gpu"
            assert images.layout == "CHW"
            got.append([_host(images), _host(labels)])
            if len(got) == ITERS:
                break
    _compare(ref, got)


def test_gpu_reader_metadata_and_epoch(image_dir):
    """A reader used with GPU work: ceil(N/bs) batches per epoch, all labels covered."""
    reader = ndd.readers.File(file_root=image_dir)
    labels = []
    for jpegs, lab in reader.next_epoch(batch_size=5):
        imgs = ndd.decoders.image(jpegs, device="gpu")
        assert imgs.batch_size == 5 and imgs.device.device_type == "gpu"
        labels += [int(np.asarray(t).item()) for t in lab]
    assert len(labels) == 25  # ceil(21/5) batches, the last wrapping into the next epoch
    assert sorted(labels[:21]) == [0] * 7 + [1] * 7 + [2] * 7
