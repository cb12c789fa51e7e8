"""Two converted pipelines used in turn on one thread (train and validation, say) run on native
ndd as well as on dali_migrate.runtime, and give the batches pipeline mode gives.

DALI 2.4's native ``next_epoch`` keeps the context it runs in entered across its yields; the
converted code used to pass each pipeline's own context, and the first epoch end then failed
(AssertionError in EvalContext.__exit__: contexts left out of order). See
``reader_needs_context`` in dali_migrate/rules/pipeline_def.py.
"""

from __future__ import annotations

import importlib.util

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("nvidia.dali")

from dali_migrate.config import Config  # noqa: E402
from dali_migrate.engine import convert_source  # noqa: E402

SOURCE = '''\
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=4, num_threads=2, device_id=None)
def train_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, seed=3, name="Reader")
    images = fn.decoders.image(jpegs, device="cpu")
    return fn.resize(images, resize_x=16, resize_y=16), labels


@pipeline_def(batch_size=3, num_threads=1, device_id=None)
def val_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader")
    images = fn.decoders.image(jpegs, device="cpu")
    return fn.resize(images, resize_x=8, resize_y=8), labels
'''


def _load(text, path, name):
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _native_works() -> bool:
    try:
        import nvidia.dali.experimental.dynamic as native

        native.tensor(np.zeros((2,), np.uint8))
        return True
    except Exception:  # noqa: BLE001 - DALI 1.53's native ndd needs a GPU
        return False


def _arrays(outputs, at):
    return [[np.array(at(o, k)) for k in range(n)] for o, n in outputs]


@pytest.mark.parametrize("ndd_module", ["nvidia.dali.experimental.dynamic", "dali_migrate.runtime"])
def test_two_converted_pipelines_in_turn_equal_pipeline_mode(ndd_module, fixture_data, tmp_path):
    if ndd_module.startswith("nvidia") and not _native_works():
        pytest.skip("native ndd does not run here")
    root = str(fixture_data / "images")
    orig = _load(SOURCE, tmp_path / "orig.py", "in_turn_orig")
    out = convert_source(SOURCE, config=Config(ndd_module=ndd_module))
    assert not out.markers
    conv = _load(out.output, tmp_path / "conv.py", f"in_turn_conv_{ndd_module.replace('.', '_')}")
    pipes = [orig.train_pipe(root), orig.val_pipe(root)]
    for p in pipes:
        p.build()
    gens = [conv.train_pipe(root), conv.val_pipe(root)]
    # 21 images: epochs of 6 and 7 batches end at different turns, over several epochs each
    for turn in range(16):
        for pipe, gen in zip(pipes, gens):
            want = pipe.run()
            got = next(gen)
            for w, g in zip(want, got):
                assert len(w) == g.batch_size
                for k in range(len(w)):
                    np.testing.assert_array_equal(np.array(w.at(k)), np.asarray(g.select(k)), err_msg=f"turn {turn}")
