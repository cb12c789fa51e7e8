"""Mutation tests: one deliberate change in converted code must be caught by verify."""

import re
from pathlib import Path

import pytest

pytest.importorskip("nvidia.dali")

from dali_migrate.engine import convert_source  # noqa: E402
from dali_migrate.verify import Options, verify  # noqa: E402

CASE = Path(__file__).parent / "verify_cases" / "augment.py"

# (kind of change, pattern in the converted text, replacement)
MUTATIONS = [
    ("crop size", r"resize_x=crop,", "resize_x=crop + 2,"),
    ("normalisation mean", r"mean=\[120\.0,", "mean=[121.0,"),
    ("normalisation std", r"std=\[60\.0, 60\.0, 60\.0\]", "std=[60.0, 60.0, 59.0]"),
    ("swapped outputs", r"outputs = images, labels\.gpu\(\)", "outputs = labels.gpu(), images"),
    ("dropped random op", r"\n\s*images = ndd\.noise\.gaussian\([^\n]*\)", ""),
    ("reader order", r"random_shuffle=True, ", ""),
    ("output dtype", r"dtype=types\.FLOAT,", "dtype=types.FLOAT16,"),
    ("output layout", r'output_layout="CHW"', 'output_layout="HWC"'),
    ("flip probability", r"probability=0\.5", "probability=0.45"),
    ("rotation range", r"range=\[-30\.0, 30\.0\]", "range=[-29.0, 30.0]"),
    ("label offset", r"labels\.gpu\(\)", "(labels + 1).gpu()"),
    ("fill value", r"fill_value=0", "fill_value=3"),
    ("noise strength", r"stddev=3\.0", "stddev=3.5"),
]


@pytest.fixture(scope="module")
def converted_text():
    return convert_source(CASE.read_text()).output


@pytest.mark.parametrize("kind,pattern,replacement", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_mutation_is_caught(kind, pattern, replacement, converted_text, fixture_data, tmp_path):
    mutated, n = re.subn(pattern, replacement, converted_text, count=1)
    assert n == 1, f"mutation {kind!r} did not apply: the converted code changed shape"
    path = tmp_path / "mutant.py"
    path.write_text(mutated)
    verdict = verify(
        Options(original=CASE, name="augment", against=path, params={"root": str(fixture_data / "images")})
    )
    assert not verdict.equal, f"{kind}: verify missed the change"


def test_unmutated_passes(converted_text, fixture_data, tmp_path):
    path = tmp_path / "same.py"
    path.write_text(converted_text)
    verdict = verify(Options(original=CASE, name="augment", against=path, params={"root": str(fixture_data / "images")}))
    assert verdict.equal, verdict.describe()
