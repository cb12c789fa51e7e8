"""Issue 8, part 1: an interrupted run (SIGINT as from Ctrl-C to the process group, SIGTERM to
the main process or to the whole group) leaves every file either as it was or fully converted, leaves no temp files,
and exits 130."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _rel_helpers import pipeline
from dali_migrate.engine import convert_source

N_FILES = 200
DRIVER = Path(__file__).with_name("_interrupt_driver.py")


@pytest.fixture(scope="module")
def expected():
    """(original bytes, converted bytes) per file index; the codemod's output for file 0, renamed."""
    template = convert_source(pipeline(0)).output
    assert "pipe_0" in template and convert_source(pipeline(37)).output == template.replace("pipe_0", "pipe_37")
    return [(pipeline(i).encode(), template.replace("pipe_0", f"pipe_{i}").encode()) for i in range(N_FILES)]


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _group_gone(pgid: int, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGTERM-group"])
def test_interrupted_run_leaves_old_or_new(tmp_path, expected, jobs, sig):
    root = tmp_path / "repo"
    for i in range(N_FILES):
        # a few sub-directories, as in a repository
        d = root / f"pkg{i % 4}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"m{i:03d}.py").write_bytes(expected[i][0])
    paths = [root / f"pkg{i % 4}" / f"m{i:03d}.py" for i in range(N_FILES)]
    env = dict(os.environ, DALI_MIGRATE_TEST_DELAY="0.03")
    proc = subprocess.Popen(
        [sys.executable, str(DRIVER), jobs, str(root)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True,
        # Ctrl-C reaches a command run from a terminal; a suite started in the background (`cmd &`
        # in a script) hands its processes SIGINT ignored, and the run would not see it at all
        preexec_fn=_sigint_default,
    )
    try:
        # Wait until the run is well under way, then interrupt it.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            done = sum(p.read_bytes() == expected[i][1] for i, p in enumerate(paths))
            if done >= 15:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the run finished before it could be interrupted"
        if sig == "SIGINT":
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the whole foreground process group
        elif sig == "SIGTERM":
            os.kill(proc.pid, signal.SIGTERM)  # `kill PID`: the main process only
        else:
            os.killpg(proc.pid, signal.SIGTERM)  # a container or job stop: every process
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, (proc.returncode, err.decode()[-2000:])
    assert b"interrupted" in err
    assert b"Traceback" not in err, err.decode()[-3000:]
    assert _group_gone(proc.pid, 30), "worker processes outlived the run"

    old = new = 0
    for i, p in enumerate(paths):
        raw = p.read_bytes()
        if raw == expected[i][0]:
            old += 1
        elif raw == expected[i][1]:
            new += 1
        else:
            pytest.fail(f"{p} is neither the original nor the converted file:\n{raw[:500]!r}")
    assert new >= 15 and old >= 1, (old, new)  # really interrupted mid-way
    leftovers = [p for p in root.rglob("*") if p.is_file() and p not in set(paths)]
    assert leftovers == [], leftovers  # no temp files
