"""pipe-device-id: ``pipe.device_id`` becomes the device id the pipeline is made with, only where
that is an integer for certain; any other attribute of a pipeline, and other device ids, are left
to a person with a marker that says so."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from dali_migrate.engine import convert_source

HEAD = (
    "from nvidia.dali import fn, pipeline_def\n\n\n"
    "@pipeline_def(batch_size=4{settings})\n"
    "def pipe_fn(root):\n"
    '    jpegs, labels = fn.readers.file(file_root=root, name="Reader")\n'
    "    return jpegs, labels\n\n\n"
    "def ids(root, args):\n"
    "    seen = []\n"
)


def _source(body: str, settings: str = "") -> str:
    return HEAD.format(settings=settings) + "".join(f"    {line}\n" for line in body.splitlines()) + "    return seen\n"


CONVERTED = {
    "literal in the call": ("pipe = pipe_fn(root, device_id=1)\nseen.append(pipe.device_id)", "", "seen.append(1)"),
    "literal in the decorator": ("pipe = pipe_fn(root)\nseen.append(pipe.device_id)", ", device_id=0", "seen.append(0)"),
    "range index": ("for i in range(3):\n    pipe = pipe_fn(root, device_id=i)\n    seen.append(pipe.device_id)", "",
                    "seen.append(i)"),
    "enumerate index in an f-string": (
        'for i, name in enumerate(["a", "b"]):\n    pipe = pipe_fn(root, device_id=i)\n    seen.append(f"{name}: {pipe.device_id}")',
        "", 'seen.append(f"{name}: {i}")'),
}


@pytest.mark.parametrize("key", sorted(CONVERTED))
def test_device_id_written_in(key):
    body, settings, expected = CONVERTED[key]
    result = convert_source(_source(body, settings))
    assert not result.markers, result.output
    assert expected in result.output and ".device_id" not in result.output


MARKED = {
    "no device id": ("pipe = pipe_fn(root)\nseen.append(pipe.device_id)", "made without a device_id"),
    "a value that may be None": ("pipe = pipe_fn(root, device_id=args.gpu)\nseen.append(pipe.device_id)", "may be None"),
    "index changed in the loop": ("for i in range(3):\n    pipe = pipe_fn(root, device_id=i)\n    i = i + 1\n    seen.append(pipe.device_id)",
                                  "may be None"),
    "read after the loop": ("for i in range(3):\n    pipe = pipe_fn(root, device_id=i)\nseen.append(pipe.device_id)", "may be None"),
    "a method not called": ("pipe = pipe_fn(root, device_id=0)\nseen.append(pipe.run)", "`pipe.run` is used here without being called"),
    "another attribute": ("pipe = pipe_fn(root, device_id=0)\nseen.append(pipe.max_batch_size)", "`pipe.max_batch_size`: the converted generator has no attributes"),
}


@pytest.mark.parametrize("key", sorted(MARKED))
def test_left_with_a_marker(key):
    body, words = MARKED[key]
    result = convert_source(_source(body))
    assert "@pipeline_def" in result.output and body.splitlines()[-1].strip() in result.output
    assert any(words in m.reason for m in result.markers), [m.reason for m in result.markers]


def _load(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"_device_id_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("key", sorted(CONVERTED))
def test_same_value_as_the_pipeline(key, tmp_path):
    """What DALI's Pipeline.device_id gives, made (not built) as the code makes it."""
    pytest.importorskip("nvidia.dali")
    body, settings, _ = CONVERTED[key]
    source = _source(body, settings)
    original = _load(tmp_path, "original", source)
    converted = _load(tmp_path, "converted", convert_source(source).output)
    want = original.ids("/no/such/dir", None)
    assert want == converted.ids("/no/such/dir", None)
    assert all(isinstance(x, (int, str)) for x in want)
