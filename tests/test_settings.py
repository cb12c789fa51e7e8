"""[tool.dali-migrate] in pyproject.toml: discovery, checking, and how flags override it."""

import textwrap

import pytest
from click.testing import CliRunner

import _cli_fakes
from dali_migrate import engine, markers, settings
from dali_migrate.catalog import load as load_catalog
from dali_migrate.cli import main
from dali_migrate.config import NATIVE_NDD, Config
from dali_migrate.rules import all_rules

DALI = "from nvidia.dali import fn\n"
ALL_IDS = frozenset(r.id for r in all_rules())


def _pyproject(directory, body, name="pyproject.toml"):
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(textwrap.dedent(body))
    return path


@pytest.fixture
def repo(tmp_path):
    """A project root: the upward search for pyproject.toml stops at the directory with .git."""
    (tmp_path / ".git").mkdir()
    return tmp_path


@pytest.fixture
def cli(monkeypatch):
    """The CLI in-process with the fake codemod; CALLS records the Config it got."""
    monkeypatch.setattr(engine, "convert_source", _cli_fakes.fake_convert)
    _cli_fakes.CALLS.clear()

    def invoke(*args):
        return CliRunner().invoke(main, ["convert", "--jobs", "1", *map(str, args)])

    return invoke


def _config_seen() -> Config:
    configs = {id(c): c for _, c in _cli_fakes.CALLS}
    assert len(configs) == 1
    return next(iter(configs.values()))


# -- discovery -----------------------------------------------------------------------------------


def test_nearest_pyproject_with_the_table_wins(repo):
    top = _pyproject(repo, '[tool.dali-migrate]\nndd-module = "top.ndd"\n')
    _pyproject(repo / "pkg", '[project]\nname = "pkg"\n')  # nearer, but not ours: skipped
    inner = _pyproject(repo / "pkg" / "sub", '[tool.dali-migrate]\nndd-module = "inner.ndd"\n')
    (repo / "pkg" / "sub" / "deep").mkdir()
    assert settings.find(repo / "pkg" / "sub" / "deep") == inner
    assert settings.find(repo / "pkg") == top


def test_search_stops_at_the_repository_root(tmp_path):
    _pyproject(tmp_path, '[tool.dali-migrate]\nndd-module = "outside.ndd"\n')
    (tmp_path / "checkout" / ".git").mkdir(parents=True)
    (tmp_path / "checkout" / "src").mkdir()
    assert settings.find(tmp_path / "checkout" / "src") is None


def test_common_parent_of_the_paths(repo):
    _pyproject(repo / "a", '[tool.dali-migrate]\nndd-module = "a.ndd"\n')
    (repo / "a" / "x").mkdir()
    (repo / "a" / "y").mkdir()
    (repo / "a" / "y" / "f.py").write_text("")
    start = settings.common_parent([repo / "a" / "x", repo / "a" / "y" / "f.py"])
    assert start == repo / "a"
    assert settings.discover([repo / "a" / "x", repo / "a" / "y" / "f.py"]).ndd_module == "a.ndd"


def test_no_config_means_defaults(repo):
    assert settings.discover([repo]) == settings.FileSettings()


def test_other_tools_broken_pyproject_is_not_our_business(repo):
    _pyproject(repo, '[project\nname = "x"  # dali-migrate is a dependency\n')
    assert settings.find(repo) is None


# -- checking ------------------------------------------------------------------------------------


def test_every_key_parsed(repo):
    path = _pyproject(repo, """\
        [tool.dali-migrate]
        include = ["src/"]
        exclude = ["src/legacy/", "*_pb2.py"]
        rules = ["op-name", "device-mixed"]
        disable-rules = ["device-mixed"]
        ndd-module = "dali_migrate.runtime"
        target-dali = "2.4.0"
        marker-style = "# TODO(dali-migrate):"
        """)
    fs = settings.load(path)
    assert fs == settings.FileSettings(
        path=path, include=("src/",), exclude=("src/legacy/", "*_pb2.py"),
        rules=("op-name", "device-mixed"), disable_rules=("device-mixed",),
        ndd_module="dali_migrate.runtime", target_dali="2.4.0", marker_style="# TODO(dali-migrate):",
    )


@pytest.mark.parametrize(
    "body, message",
    [
        ('disable_rules = ["op-name"]', "unknown key 'disable_rules' in [tool.dali-migrate] (did you mean 'disable-rules'?)"),
        ("colour = 1", "unknown key 'colour'"),
        ('exclude = "build/"', "exclude must be a list of strings"),
        ('rules = ["op-nam"]', "unknown rule 'op-nam' (did you mean 'op-name'?)"),
        ('disable-rules = ["nope"]', "unknown rule 'nope'"),
        ('ndd-module = "not a module"', "is not a dotted module name"),
        ('target-dali = "2.4-rc1"', "is not a DALI version"),
        ("target-dali = 2.4", "target-dali must be a string"),
        ('marker-style = "TODO:"', "is not a usable marker prefix"),
        ('marker-style = "# [x]"', "is not a usable marker prefix"),
    ],
)
def test_bad_settings_exit_2_naming_file_and_key(cli, repo, body, message):
    path = _pyproject(repo, "[tool.dali-migrate]\n" + body + "\n")
    f = repo / "m.py"
    f.write_text(DALI + "fn.a()\n")
    r = cli(f)
    assert r.exit_code == 2, r.output
    assert f"dali-migrate: error: {path}" in r.stderr
    assert message in r.stderr
    assert f.read_text() == DALI + "fn.a()\n" and _cli_fakes.CALLS == []


def test_invalid_toml_with_our_table_is_an_error(cli, repo):
    path = _pyproject(repo, '[tool.dali-migrate]\nexclude = [\n')
    (repo / "m.py").write_text(DALI)
    r = cli(repo / "m.py")
    assert r.exit_code == 2 and f"{path}: not valid TOML" in r.stderr


def test_without_a_toml_parser_only_our_table_is_an_error(repo, monkeypatch):
    """Python 3.9/3.10 without tomli: fine unless a pyproject actually has [tool.dali-migrate]."""
    monkeypatch.setattr(settings, "_toml_loads", lambda: None)
    _pyproject(repo / "other", '[project]\nname = "x"\ndependencies = ["dali-migrate"]\n')
    assert settings.discover([repo / "other"]) == settings.FileSettings()
    _pyproject(repo / "ours", '[tool.dali-migrate]\nexclude = ["x/"]\n')
    with pytest.raises(settings.SettingsError, match=r"needs the 'tomli' package"):
        settings.discover([repo / "ours"])


# -- flags over the file -------------------------------------------------------------------------


def test_ndd_module_from_file_and_flag_overrides(cli, repo):
    _pyproject(repo, '[tool.dali-migrate]\nndd-module = "dali_migrate.runtime"\n')
    f = repo / "m.py"
    f.write_text(DALI)
    cli("--check", f)
    assert _config_seen().ndd_module == "dali_migrate.runtime"
    _cli_fakes.CALLS.clear()
    cli("--check", "--ndd-module", "my.shim", f)
    assert _config_seen().ndd_module == "my.shim"


def test_defaults_without_a_file(cli, repo):
    (repo / "m.py").write_text(DALI)
    assert cli("--check", repo / "m.py").exit_code == 0
    assert _config_seen() == Config(ndd_module=NATIVE_NDD, enabled_rules=None)


def test_rules_and_disable_rules(cli, repo):
    f = repo / "m.py"
    f.write_text(DALI)
    _pyproject(repo, '[tool.dali-migrate]\ndisable-rules = ["batch-len"]\n')
    cli("--check", f)
    assert _config_seen().enabled_rules == ALL_IDS - {"batch-len"}

    _cli_fakes.CALLS.clear()  # --disable-rule adds to the file's list
    cli("--check", "--disable-rule", "pipe-run", f)
    assert _config_seen().enabled_rules == ALL_IDS - {"batch-len", "pipe-run"}

    _pyproject(repo, '[tool.dali-migrate]\nrules = ["op-name", "batch-len", "pipe-run"]\n'
                     'disable-rules = ["batch-len"]\n')
    _cli_fakes.CALLS.clear()
    cli("--check", f)
    assert _config_seen().enabled_rules == {"op-name", "pipe-run"}

    _cli_fakes.CALLS.clear()  # --rules replaces the file's list (its disable-rules still apply)
    cli("--check", "--rules", "device-mixed, batch-len", f)
    assert _config_seen().enabled_rules == {"device-mixed"}


def test_unknown_rule_on_the_command_line(cli, repo):
    (repo / "m.py").write_text(DALI)
    r = cli("--disable-rule", "nope", repo / "m.py")
    assert r.exit_code == 2 and "--disable-rule: unknown rule 'nope'" in r.stderr
    r = cli("--rules", "op-name,pipe_run", repo / "m.py")
    assert r.exit_code == 2 and "--rules: unknown rule 'pipe_run' (did you mean 'pipe-run'?)" in r.stderr


def test_include_exclude_relative_to_the_pyproject(cli, repo, monkeypatch):
    _pyproject(repo, '[tool.dali-migrate]\ninclude = ["src/"]\nexclude = ["/src/legacy/", "*_pb2.py"]\n'
                     '[tool.other]\nx = 1\n')
    files = {}
    for rel in ["src/a.py", "src/legacy/b.py", "src/c_pb2.py", "tools/d.py", "src/sub/legacy/e.py"]:
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(DALI + "fn.a()\n")
        files[rel] = path
    # Run from a subdirectory, naming it relatively: globs are still relative to the pyproject.
    monkeypatch.chdir(repo / "src")
    assert cli(".").exit_code == 1
    converted = {rel for rel, p in files.items() if "ndd.a()" in p.read_text()}
    assert converted == {"src/a.py", "src/sub/legacy/e.py"}
    # Files named explicitly (as pre-commit does) are filtered too; --exclude adds to the file's.
    monkeypatch.chdir(repo)
    _cli_fakes.CALLS.clear()
    cli("--check", "--exclude", "sub/", *(rel for rel in files))
    assert {p for p, _ in _cli_fakes.CALLS} == {"src/a.py"}


def test_explicit_config_file(cli, repo):
    cfg = _pyproject(repo / "cfg", '[tool.dali-migrate]\nndd-module = "from.flag"\n', name="dm.toml")
    _pyproject(repo, '[tool.dali-migrate]\nndd-module = "from.discovery"\n')
    (repo / "m.py").write_text(DALI)
    cli("--check", "--config", cfg, repo / "m.py")
    assert _config_seen().ndd_module == "from.flag"
    empty = _pyproject(repo / "cfg", '[tool.black]\nline-length = 99\n', name="pyproject.toml")
    r = cli("--config", empty, repo / "m.py")
    assert r.exit_code == 2 and f"{empty}: has no [tool.dali-migrate] table" in r.stderr
    r = cli("--config", repo / "missing.toml", repo / "m.py")
    assert r.exit_code == 2 and "missing.toml: no such file" in r.stderr


# -- target-dali ---------------------------------------------------------------------------------


def test_target_dali_older_than_the_catalog_warns(cli, repo):
    catalog = load_catalog().dali_version
    assert catalog == "2.4.0"  # if this changes, update docs/configuration.md
    (repo / "m.py").write_text(DALI)
    path = _pyproject(repo, '[tool.dali-migrate]\ntarget-dali = "2.3"\n')
    r = cli("--check", repo / "m.py")
    assert r.exit_code == 0
    assert (f"dali-migrate: warning: {path}: target-dali is 2.3, but this dali-migrate's operator "
            f"catalog is from DALI {catalog}: the conversion assumes DALI {catalog}") in r.stderr
    assert "warning" not in cli("--check", "--quiet", repo / "m.py").stderr
    _pyproject(repo, f'[tool.dali-migrate]\ntarget-dali = "{catalog}"\n')
    assert "warning" not in cli("--check", repo / "m.py").stderr
    _pyproject(repo, '[tool.dali-migrate]\ntarget-dali = "2.5.1"\n')
    assert "unknown to it" in cli("--check", repo / "m.py").stderr


def test_version_order_is_numeric():
    assert settings.version_tuple("2.10") > settings.version_tuple("2.4.0")
    assert settings.target_dali_warning("2.4", "2.4.0") is None


# -- marker-style (the real codemod) -------------------------------------------------------------

PYTHON_FUNCTION = '''\
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=4)
def python_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.dl_tensor_python_function(jpegs, function=len)
    return images, labels
'''


def _run(repo, *args):
    return CliRunner().invoke(main, ["convert", "--jobs", "1", *map(str, args)])


def test_marker_style_written_and_recognised(repo):
    _pyproject(repo, '[tool.dali-migrate]\nmarker-style = "# TODO(dali-migrate):"\n')
    f = repo / "m.py"
    f.write_text(PYTHON_FUNCTION)
    r = _run(repo, f)
    assert r.exit_code == 1, r.output
    out = f.read_text()
    marker_lines = [line for line in out.splitlines() if "[pipeline-def]" in line]
    assert marker_lines and all(line.startswith("# TODO(dali-migrate): [pipeline-def] ") for line in marker_lines)
    assert "# dali-migrate:" not in out
    # Idempotent: a second run changes nothing, and --check still counts the markers.
    r = _run(repo, f)
    assert f.read_text() == out
    r = _run(repo, "--check", f)
    assert r.exit_code == 1 and f"{f}:" in r.stderr and "[pipeline-def]" in r.stderr


def test_switching_marker_style_keeps_old_markers_and_adds_no_duplicates(repo):
    f = repo / "m.py"
    f.write_text(PYTHON_FUNCTION)
    _run(repo, f)  # default style
    before = f.read_text()
    assert "# dali-migrate: [pipeline-def]" in before
    _pyproject(repo, '[tool.dali-migrate]\nmarker-style = "# TODO(dali-migrate):"\n')
    r = _run(repo, "--check", f)
    assert r.exit_code == 1 and "[pipeline-def]" in r.stderr  # old markers still count
    _run(repo, f)
    assert f.read_text() == before  # not rewritten in the new style, not duplicated


def test_markers_module_with_a_prefix():
    assert markers.text("r", "why", "# TODO(x):") == "# TODO(x): [r] why"
    src = "# TODO(x): [r] why\n# dali-migrate: [s] other\n# TODO: [t] not ours\n"
    assert [(m.line, m.rule) for m in markers.scan(src, "# TODO(x):")] == [(1, "r"), (2, "s")]
    assert [(m.line, m.rule) for m in markers.scan(src)] == [(2, "s")]
