"""A file that guards its DALI imports still loads where DALI is missing once converted."""
import subprocess
import sys
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"

# `nvidia` made unimportable: what a machine without DALI sees
_WITHOUT_DALI = """
import importlib.util, sys
sys.modules["nvidia"] = None
spec = importlib.util.spec_from_file_location("loader", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
print(mod.HAS_DALI, mod.make_loader("/nowhere"))
"""


def _load_without_dali(path: Path) -> str:
    p = subprocess.run([sys.executable, "-c", _WITHOUT_DALI, str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def test_guarded_file_loads_without_dali_before_and_after_conversion():
    assert _load_without_dali(GOLDEN / "optional_dali_import.py") == "False None"
    assert _load_without_dali(GOLDEN / "optional_dali_import.expected.py") == "False None"
