"""The interval the benchmark tables give with a loop's median ratio (benchmarks/_common.py)."""

from benchmarks import _common


def test_interval_holds_the_median_and_is_reproducible():
    rounds = [1.0, 0.9, 1.1, 1.2, 0.8, 1.05, 0.95, 1.0, 1.3, 0.76, 1.34, 0.97]
    lo, hi = _common.median_ci(rounds)
    assert lo <= 1.0 <= hi
    assert min(rounds) <= lo < hi <= max(rounds)
    assert _common.median_ci(rounds) == (lo, hi)


def test_verdict_says_met_only_when_the_whole_interval_is_above_the_goal():
    assert _common.verdict(_common.median_ci([1.10, 1.12, 1.08, 1.15, 1.11, 1.09])) == "met"
    assert _common.verdict(_common.median_ci([0.90, 0.88, 0.93, 0.91, 0.89, 0.92])) == "not met"
    assert _common.verdict(_common.median_ci([0.8, 1.2, 0.9, 1.1, 1.0, 0.95, 1.05])) == "not shown either way"
    assert _common.verdict(_common.median_ci([1.2, 1.3])) == "too few rounds"


def test_a_tight_spread_gives_a_tight_interval():
    wide = _common.median_ci([0.7, 1.3, 0.8, 1.2, 0.9, 1.1, 1.0, 0.75, 1.25])
    tight = _common.median_ci([0.98, 1.02, 0.99, 1.01, 1.0, 0.985, 1.015, 0.995, 1.005])
    assert tight[1] - tight[0] < (wide[1] - wide[0]) / 5
