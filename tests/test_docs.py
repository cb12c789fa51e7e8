"""The documentation: generated pages match their sources, and the site builds without warnings."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen_docs = _gen_docs()


@pytest.mark.parametrize("name", sorted(gen_docs.GENERATORS))
def test_generated_page_is_up_to_date(name):
    committed = (ROOT / "docs" / name).read_text(encoding="utf-8")
    assert committed == gen_docs.GENERATORS[name](), f"docs/{name} is stale: run python scripts/gen_docs.py"


def test_every_rule_has_an_example():
    from dali_migrate.rules import all_rules

    assert {r.id for r in all_rules()} == set(gen_docs.EXAMPLES)
    rules = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    for rule in all_rules():
        assert f"| `{rule.id}` |" in rules


def test_generation_fails_without_an_example(monkeypatch):
    examples = dict(gen_docs.EXAMPLES)
    del examples["pipe-run"]
    monkeypatch.setattr(gen_docs, "EXAMPLES", examples)
    with pytest.raises(gen_docs.GenerationError, match="no example for rule.*pipe-run"):
        gen_docs.rules_page()


def test_generation_fails_when_a_case_stops_showing_its_rule(monkeypatch):
    examples = dict(gen_docs.EXAMPLES, **{"pipe-run": ("file_reader_basic", "pipe.run()", "not in there")})
    monkeypatch.setattr(gen_docs, "EXAMPLES", examples)
    with pytest.raises(gen_docs.GenerationError, match="no longer shows rule 'pipe-run'"):
        gen_docs.rules_page()


def test_cli_reference_lists_every_command():
    from dali_migrate.cli import main

    cli = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for name in main.commands:
        assert f"## dali-migrate {name}\n" in cli


def test_check_mode_of_the_script():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_mkdocs_build_strict(tmp_path):
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(tmp_path / "site")],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    for page in ["index.html", "cli/index.html", "rules/index.html", "configuration/index.html"]:
        assert (tmp_path / "site" / page).is_file()
