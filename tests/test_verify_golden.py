"""Every golden case that reads data (or draws random numbers) passes `verify --device cpu`:
the original pipeline and the converted code give equal outputs, random ones included.

Cases opt in with the `# golden-run:` header (deterministic cases, also run by
test_golden_equivalence.py with native ndd) or `# golden-verify:` (random cases: native ndd cannot
reproduce a pipeline's random stream, the runtime's pipeline-compatible mode can). Both headers
take the same keys.
"""

import os
import re
from pathlib import Path

import pytest

pytest.importorskip("nvidia.dali")

from dali_migrate.verify import Options, verify  # noqa: E402

GOLDEN = Path(__file__).parent / "golden"
# cpu (CI): every operator moved to the CPU on both sides. gpu (the GPU machine): as written.
DEVICE = os.environ.get("DALI_MIGRATE_VERIFY_DEVICE", "cpu")

KEYS = ("pipe", "args", "kwargs", "iterations", "needs", "device")


def _headers(text: str) -> list:
    """Every `# golden-run:` / `# golden-verify:` line of a case (a file may check several pipelines)."""
    found = []
    for line in text.splitlines():
        for prefix in ("# golden-run:", "# golden-verify:"):
            if line.startswith(prefix):
                parts = re.split(r"\s+(?=(?:%s)=)" % "|".join(KEYS), line[len(prefix):].strip())
                found.append(dict(part.partition("=")[::2] for part in parts))
    return found


def _header(text: str, index: int = 0):
    headers = _headers(text)
    return headers[index] if index < len(headers) else None


def _cases() -> list:
    out = []
    for p in sorted(GOLDEN.glob("*.py")):
        if p.name.endswith(".expected.py"):
            continue
        headers = _headers(p.read_text(encoding="utf-8"))
        name = p.name[: -len(".py")]
        out += [name] if len(headers) == 1 else [f"{name}#{i}" for i in range(len(headers))]
    return out


CASES = _cases()


def test_enough_cases_take_part():
    assert len(CASES) >= 25, CASES


@pytest.mark.parametrize("name", CASES)
def test_verify(name, fixture_data, fixture_manifest):
    if DEVICE == "gpu":
        from dali_migrate.runtime import _backend

        if _backend.cuda_device_count() < 1:
            pytest.skip("no CUDA device")
    name, _, index = name.partition("#")
    path = GOLDEN / f"{name}.py"
    h = _header(path.read_text(encoding="utf-8"), int(index or 0))
    # device=gpu: the pipeline cannot be moved to the CPU (DALI's legacy video readers have no CPU
    # variant, and its CPU decoders refuse H.264), so it runs only as written, on a GPU machine.
    if h.get("device", DEVICE) != DEVICE:
        pytest.skip(f"runs with DALI_MIGRATE_VERIFY_DEVICE={h['device']} only (on a machine with a GPU)")
    if DEVICE == "gpu" and re.search(r"parallel\s*=\s*True", path.read_text(encoding="utf-8")):
        # DALI forks a parallel source's workers when the pipeline is built, and refuses to once
        # CUDA is initialised in the process, as it is here after the first GPU case; the CPU
        # run (CI) verifies these cases.
        pytest.skip("parallel external source: DALI cannot fork its workers in a process that has used CUDA")
    env = {"DATA": fixture_data, "str": str}
    args = eval(h.get("args", "()"), env)  # noqa: S307 - our own test headers
    kwargs = dict(eval(h.get("kwargs", "{}"), env))  # noqa: S307
    # needs=: fixtures the pipeline reads under a directory it is given (not named in its arguments)
    needed = [str(Path(fixture_data) / n) for n in eval(h.get("needs", "()"), env)]  # noqa: S307
    for value in [*needed, *args, *kwargs.values()]:
        if isinstance(value, str) and value.startswith(str(fixture_data)) and not Path(value).exists():
            fmt = Path(value).relative_to(fixture_data).parts[0]
            why = fixture_manifest["skipped"].get(fmt, "see fixtures/README.md")
            pytest.skip(f"fixture {value} was not generated here ({why})")
    iterations = int(h["iterations"]) if "iterations" in h else None
    verdict = verify(
        Options(original=path, name=h["pipe"], against=GOLDEN / f"{name}.expected.py", args=tuple(args),
                params=kwargs, iterations=iterations, device=DEVICE)
    )
    assert verdict.equal, verdict.describe()
