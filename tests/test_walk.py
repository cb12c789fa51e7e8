from pathlib import Path

from dali_migrate.walk import find_files


def _tree(root: Path, files):
    for name in files:
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("" if not name.endswith(".gitignore") else files[name])
    return root


def _rel(root, found):
    return [p.relative_to(root).as_posix() for p in found]


def test_suffixes_and_order(tmp_path):
    _tree(tmp_path, {"b.py": 1, "a.py": 1, "n.ipynb": 1, "x.txt": 1, "pkg/c.py": 1, "pkg/sub/d.py": 1})
    assert _rel(tmp_path, find_files([tmp_path])) == ["a.py", "b.py", "n.ipynb", "pkg/c.py", "pkg/sub/d.py"]


def test_always_skipped_dirs(tmp_path):
    _tree(tmp_path, {
        "keep.py": 1, ".git/hook.py": 1, ".hg/x.py": 1, "__pycache__/m.py": 1,
        "node_modules/pkg/x.py": 1, "env/pyvenv.cfg": 1, "env/lib/site.py": 1,
    })
    assert _rel(tmp_path, find_files([tmp_path])) == ["keep.py"]


def test_gitignore_nested_and_negation(tmp_path):
    _tree(tmp_path, {
        ".gitignore": "build/\n*_pb2.py\n",
        "a.py": 1, "build/gen.py": 1, "proto_pb2.py": 1,
        "sub/.gitignore": "local.py\n!keep_pb2.py\n",
        "sub/local.py": 1, "sub/keep_pb2.py": 1, "sub/other_pb2.py": 1, "sub/ok.py": 1,
        "local.py": 1,  # the nested .gitignore only applies below sub/
    })
    assert _rel(tmp_path, find_files([tmp_path])) == ["a.py", "local.py", "sub/keep_pb2.py", "sub/ok.py"]


def test_gitignore_anchored_pattern_is_relative_to_its_directory(tmp_path):
    _tree(tmp_path, {"sub/.gitignore": "/top.py\n", "sub/top.py": 1, "sub/deeper/top.py": 1})
    assert _rel(tmp_path, find_files([tmp_path])) == ["sub/deeper/top.py"]


def test_explicit_file_overrides_gitignore(tmp_path):
    _tree(tmp_path, {".gitignore": "gen.py\n", "gen.py": 1})
    assert find_files([tmp_path]) == []
    assert find_files([tmp_path / "gen.py"]) == [tmp_path / "gen.py"]


def test_explicit_file_any_suffix(tmp_path):
    _tree(tmp_path, {"tool": 1})
    assert find_files([tmp_path / "tool"]) == [tmp_path / "tool"]


def test_exclude(tmp_path):
    _tree(tmp_path, {"a.py": 1, "gen/x.py": 1, "src/gen_b.py": 1, "src/c.py": 1, "deep/gen/y.py": 1})
    assert _rel(tmp_path, find_files([tmp_path], exclude=["gen/", "gen_*.py"])) == ["a.py", "src/c.py"]
    # anchored relative to the walked directory
    assert _rel(tmp_path, find_files([tmp_path], exclude=["/gen"])) == [
        "a.py", "deep/gen/y.py", "src/c.py", "src/gen_b.py"]


def test_exclude_applies_to_explicit_files(tmp_path, monkeypatch):
    _tree(tmp_path, {"gen/x.py": 1, "a.py": 1})
    monkeypatch.chdir(tmp_path)
    assert find_files([Path("gen/x.py"), Path("a.py")], exclude=["gen/"]) == [Path("a.py")]
    assert find_files([Path("./gen/x.py")], exclude=["gen/x.py"]) == []


def test_exclude_matches_path_as_given(tmp_path, monkeypatch):
    _tree(tmp_path, {"src/gen/x.py": 1, "src/a.py": 1})
    monkeypatch.chdir(tmp_path)
    assert find_files([Path("src")], exclude=["src/gen"]) == [Path("src/a.py")]


def test_each_file_once_and_symlinked_dirs_not_followed(tmp_path):
    _tree(tmp_path, {"a.py": 1, "pkg/b.py": 1})
    (tmp_path / "alias.py").symlink_to(tmp_path / "a.py")
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    found = find_files([tmp_path, tmp_path / "pkg" / "b.py"])
    assert _rel(tmp_path, found) == ["a.py", "pkg/b.py"]
