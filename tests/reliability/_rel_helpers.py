"""Shared by tests/reliability: a pipeline-mode source, converters to inject, hashing.

Module-level functions (picklable by reference) so they also work in --jobs worker processes."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from dali_migrate import engine

PIPELINE = '''\
from nvidia.dali import pipeline_def, fn


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def pipe_{n}(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs)
    images = fn.resize(images, resize_x=8, resize_y=8)
    return images, labels


pipe = pipe_{n}("/data")
pipe.build()
out = pipe.run()
'''


def pipeline(n: int = 0) -> str:
    return PIPELINE.format(n=n)


def sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def broken_convert(source, *, path="<string>", config=None):
    """The real codemod, but its output no longer parses."""
    result = engine.convert_source(source, path=path, config=config)
    result.output = result.output + "\ndef (:\n"
    return result


def slow_convert(source, *, path="<string>", config=None):
    """The real codemod, slowed down so that a signal lands while files are in flight.
    DALI_MIGRATE_TEST_DELAY seconds per file (default 0.02)."""
    time.sleep(float(os.environ.get("DALI_MIGRATE_TEST_DELAY", "0.02")))
    return engine.convert_source(source, path=path, config=config)
