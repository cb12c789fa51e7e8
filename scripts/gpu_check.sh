#!/usr/bin/env bash
# Everything this project checks on a GPU machine, in one go (the device time is scarce).
# Run from the repository root on the GPU machine after DALI is installed under /root/site
# (see ../shared/gpu/README.md); results go to $OUT (or ./gpu-out).
#   bash scripts/gpu_check.sh [tests|bench|all]
set -uo pipefail
OUT="${OUT:-gpu-out}"; mkdir -p "$OUT"
export PYTHONPATH="/root/site:${PYTHONPATH:-}" PYTHONUNBUFFERED=1
what="${1:-all}"
py=python3
# runtime/ is mapped to dali_migrate.runtime by the package metadata: install it (no network there,
# so no build isolation, no dependencies) or fall back to a link when that is not possible.
$py -m pip install -q --no-build-isolation --no-deps -e . >"$OUT/pip.log" 2>&1 \
  || { [ -e dali_migrate/runtime ] || ln -s ../runtime dali_migrate/runtime; }
{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  $py -c "import nvidia.dali as d, torch, platform; print('DALI', d.__version__, '| torch', torch.__version__, '| python', platform.python_version())"
  nproc
} 2>&1 | tee "$OUT/machine.txt"
# The H.264 clips that the GPU video reader cases read are encoded with PyAV, and the LMDB fixtures
# are written with the lmdb package; the machine has no network: their wheels travel in .whl/av/ and
# .whl/lmdb/ (git-ignored: carry .whl). Best effort (system site-packages, else /root/site beside
# DALI): without them make_fixtures skips those files and the cases that read them skip.
tag=$($py -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
for whl in .whl/*/*-"$tag"-*.whl; do
  [ -e "$whl" ] || continue
  $py -m pip install -q --no-index --no-deps "$whl" >>"$OUT/pip.log" 2>&1 \
    || $py -m pip install -q --no-index --no-deps --target /root/site "$whl" >>"$OUT/pip.log" 2>&1 || true
done
$py -c 'import av; print("PyAV", av.__version__)' >>"$OUT/machine.txt" 2>/dev/null || echo "PyAV: not installed" >>"$OUT/machine.txt"
$py -c 'import lmdb; print("lmdb", lmdb.__version__)' >>"$OUT/machine.txt" 2>/dev/null || echo "lmdb: not installed" >>"$OUT/machine.txt"
$py fixtures/make_fixtures.py >/dev/null
if [ "$what" = tests ] || [ "$what" = all ]; then
  $py -m pytest -p no:cacheprovider -q -rs --timeout=300 \
    tests/runtime tests/test_verify_gpu.py tests/test_several_readers.py tests/multigpu \
    --junitxml="$OUT/gpu-tests.xml" 2>&1 | tail -60 | tee "$OUT/gpu-tests.txt"
  # the GPU cases of the codemod's own tests (marked gpu: an iterator class over a GPU pipeline...)
  $py -m pytest -p no:cacheprovider -q -rs --timeout=300 -m gpu tests/rules tests/test_torch_iterator.py \
    --junitxml="$OUT/codemod-gpu.xml" 2>&1 | tail -20 | tee "$OUT/codemod-gpu.txt"
  DALI_MIGRATE_VERIFY_DEVICE=gpu $py -m pytest -p no:cacheprovider -q -rs --timeout=300 tests/test_verify_golden.py \
    --junitxml="$OUT/verify-gpu.xml" 2>&1 | tail -30 | tee "$OUT/verify-gpu.txt"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  $py benchmarks/run.py --suite gpu --json "$OUT/bench-gpu.json" 2>&1 | tail -60 | tee "$OUT/bench-gpu.txt"
fi
