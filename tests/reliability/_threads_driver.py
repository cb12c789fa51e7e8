"""Two threads running the same converted loop concurrently, each with its own EvalContext (see
test_runtime_faults.py). Run in a subprocess: today it can crash the interpreter.

Usage: python _threads_driver.py FN_NAME IMAGE_ROOT; prints EQUAL and exits 0 when the threaded
outputs equal the single-threaded ones."""

import os
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import test_runtime_faults as T  # noqa: E402
from dali_migrate.config import Config  # noqa: E402
from dali_migrate.engine import convert_source  # noqa: E402

if __name__ == "__main__":
    fn_name, root = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as d:
        text = convert_source(T.SOURCE, config=Config(ndd_module="dali_migrate.runtime")).output
        conv = T._load(text, Path(d) / "conv.py", "faults_conv_threads")
        try:
            T._threaded_equals_single(conv, root, fn_name, trials=3)
        except AssertionError as e:
            print("DIFFERENT", str(e)[:2000], flush=True)
            os._exit(1)  # not sys.exit: a stuck worker thread must not keep us alive
    print("EQUAL", flush=True)
    os._exit(0)
