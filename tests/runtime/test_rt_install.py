"""The opt-in switch: `import nvidia.dali.experimental.dynamic` gives the runtime."""

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("nvidia.dali")

import dali_migrate.runtime as rt  # noqa: E402


def test_install_and_uninstall_in_process():
    before = sys.modules.get("nvidia.dali.experimental.dynamic")
    with rt.installed_runtime():
        import nvidia.dali.experimental.dynamic as ndd
        from nvidia.dali.experimental.dynamic import random as r

        assert ndd is rt and r is rt.random
        assert ndd.readers.File is rt.readers.File
    assert sys.modules.get("nvidia.dali.experimental.dynamic") is before
    assert not rt.installed()


def test_env_var_switch():
    assert rt.install_from_env({"DALI_MIGRATE_RUNTIME": "0"}) is False
    code = textwrap.dedent("""
        import os
        os.environ["DALI_MIGRATE_RUNTIME"] = "1"
        import dali_migrate.runtime as rt
        assert rt.install_from_env()
        import nvidia.dali.experimental.dynamic as ndd
        import numpy as np
        t = ndd.flip(ndd.tensor(np.zeros((2, 2, 3), np.uint8), layout="HWC"))
        print(type(t).__module__)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "dali_migrate.runtime._tensor"
