"""Large host buffers come from DALI's pool (runtime/_host_pool.py); where a pipeline made DALI's
host resource first, or the user chose another threshold, the allocation thread takes over.

Each case runs in a fresh interpreter: DALI reads the variable once per process."""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("nvidia.dali")

from dali_migrate.runtime import _backend  # noqa: E402

_ONE_OP_PIPELINES = _backend.use_pipeline()

_REPORT = """
import json, os
import numpy as np
from dali_migrate.runtime import _alloc_thread, _backend, _host_pool
import dali_migrate.runtime as ndd
b = ndd.batch([np.zeros((700, 800, 3), np.uint8)] * 4, layout="HWC")  # 6.7 MB of outputs
for _ in range(2):  # a CPU operator's call decides where large outputs are made
    np.asarray(ndd.flip(b, horizontal=1).select(0))
# (DALI 1.53's one-operator pipelines reuse their buffers: the choice is never asked there)
thread = "n/a" if _backend.use_pipeline() else _alloc_thread._ENABLED
print(json.dumps({"var": os.environ.get("DALI_MALLOC_POOL_THRESHOLD"),
                  "pooled": _host_pool.pooled(), "thread": thread}))
"""

_PIPELINE_FIRST = """
from nvidia.dali import fn, pipeline_def
@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def p():
    return fn.random.uniform(shape=[1 << 20])
pipe = p()
pipe.build()
pipe.run()
"""


def _expect(var, pooled, thread):
    return {"var": var, "pooled": pooled, "thread": "n/a" if _ONE_OP_PIPELINES else thread}


def _run(code, **env):
    full = {k: v for k, v in os.environ.items()
            if k not in ("DALI_MALLOC_POOL_THRESHOLD", "DALI_MIGRATE_ALLOC_THREAD")}
    full.update(env)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_runtime_asks_for_the_pool_and_leaves_the_thread_off():
    r = _run(_REPORT)
    # (set for DALI to read at the import, then taken out: child processes get DALI's defaults)
    assert r == _expect(None, pooled=True, thread=False)


def test_after_a_pipeline_made_the_host_resource_the_thread_takes_over():
    r = _run(_PIPELINE_FIRST + _REPORT)
    assert r == _expect(None, pooled=False, thread=True)


@pytest.mark.parametrize("value, pooled", [("64M", False), ("0", False), ("256k", True)])
def test_the_users_threshold_is_kept(value, pooled):
    r = _run(_REPORT, DALI_MALLOC_POOL_THRESHOLD=value)
    assert r == _expect(value, pooled=pooled, thread=not pooled)


@pytest.mark.skipif(_ONE_OP_PIPELINES, reason="DALI 1.53's one-operator pipelines do not use the thread")
def test_the_thread_can_be_forced_on_or_off():
    assert _run(_REPORT, DALI_MIGRATE_ALLOC_THREAD="1")["thread"] is True
    assert _run(_PIPELINE_FIRST + _REPORT, DALI_MIGRATE_ALLOC_THREAD="0")["thread"] is False
