import codecs
import os
import stat

import pytest

from dali_migrate.files import FileProblem, read_source, write_source


def _roundtrip(tmp_path, raw: bytes, new_text=None):
    p = tmp_path / "m.py"
    p.write_bytes(raw)
    src = read_source(p)
    if new_text is None:
        new_text = src.text.replace("fn.", "ndd.")
    assert write_source(p, src, new_text)
    return src, p.read_bytes()


def test_plain_utf8(tmp_path):
    src, out = _roundtrip(tmp_path, "x = fn.a  # é\n".encode())
    assert src.text == "x = fn.a  # é\n" and src.encoding == "utf-8" and src.bom == b""
    assert out == "x = ndd.a  # é\n".encode()


@pytest.mark.parametrize("nl", ["\r\n", "\r", "\n"])
def test_newline_style_preserved(tmp_path, nl):
    raw = nl.join(["import fn.a", "y = fn.b", ""]).encode()
    src, out = _roundtrip(tmp_path, raw)
    assert src.newline == nl
    assert src.text == "import fn.a\ny = fn.b\n"  # the converter only ever sees "\n"
    assert out == nl.join(["import ndd.a", "y = ndd.b", ""]).encode()


def test_bom_preserved(tmp_path):
    src, out = _roundtrip(tmp_path, codecs.BOM_UTF8 + b"x = fn.a\n")
    assert src.text == "x = fn.a\n"  # BOM not part of the text
    assert out == codecs.BOM_UTF8 + b"x = ndd.a\n"


def test_latin1_with_coding_cookie(tmp_path):
    raw = b"# -*- coding: latin-1 -*-\nx = fn.a  # caf\xe9\n"
    src, out = _roundtrip(tmp_path, raw)
    assert "café" in src.text
    assert out == b"# -*- coding: latin-1 -*-\nx = ndd.a  # caf\xe9\n"


def test_output_not_encodable_is_refused(tmp_path):
    p = tmp_path / "m.py"
    raw = b"# coding: latin-1\nx = 1\n"
    p.write_bytes(raw)
    src = read_source(p)
    with pytest.raises(FileProblem, match="cannot be encoded"):
        write_source(p, src, src.text + "y = '\u20ac'\n")
    assert p.read_bytes() == raw


@pytest.mark.parametrize(
    "raw, reason",
    [
        (b"x = 1\ny = '\xff'\n", "not valid UTF-8: byte 0xff at offset 11"),
        (b"\xff = 1\n", "not valid UTF-8: byte 0xff at offset 0"),
        (codecs.BOM_UTF8 + b"x = '\xff'\n", "not valid UTF-8: byte 0xff at offset 8"),
        (b"# coding: ascii\nx = '\xe9'\n", "not valid ascii: byte 0xe9 at offset 21"),
        (b"# coding: no-such-codec\nx = 1\n", "unknown encoding: no-such-codec"),
        (b"import x\x00\n", "binary file"),
    ],
)
def test_unreadable(tmp_path, raw, reason):
    p = tmp_path / "m.py"
    p.write_bytes(raw)
    with pytest.raises(FileProblem) as e:
        read_source(p)
    assert str(e.value) == reason


def test_permission_bits_kept(tmp_path):
    p = tmp_path / "script.py"
    p.write_bytes(b"fn.a\n")
    p.chmod(0o750)
    src = read_source(p)
    write_source(p, src, "ndd.a\n")
    assert stat.S_IMODE(p.stat().st_mode) == 0o750
    assert p.read_bytes() == b"ndd.a\n"


def test_read_only_file_untouched(tmp_path):
    p = tmp_path / "ro.py"
    p.write_bytes(b"fn.a\n")
    p.chmod(0o444)
    src = read_source(p)
    with pytest.raises(FileProblem, match="permission denied"):
        write_source(p, src, "ndd.a\n")
    assert p.read_bytes() == b"fn.a\n"
    assert stat.S_IMODE(p.stat().st_mode) == 0o444


def test_no_write_when_equal(tmp_path):
    p = tmp_path / "m.py"
    p.write_bytes(b"x = 1\r\n")
    os.utime(p, ns=(1, 1))
    src = read_source(p)
    assert write_source(p, src, "x = 1\n") is False
    assert p.stat().st_mtime_ns == 1


def test_symlink_writes_target(tmp_path):
    target = tmp_path / "real.py"
    target.write_bytes(b"fn.a\n")
    link = tmp_path / "link.py"
    link.symlink_to(target)
    src = read_source(link)
    write_source(link, src, "ndd.a\n")
    assert link.is_symlink()
    assert target.read_bytes() == b"ndd.a\n"


def test_file_changed_meanwhile_is_not_overwritten(tmp_path):
    p = tmp_path / "m.py"
    p.write_bytes(b"fn.a\n")
    src = read_source(p)
    p.write_bytes(b"fn.a\nsomeone else's edit\n")
    with pytest.raises(FileProblem, match="changed on disk"):
        write_source(p, src, "ndd.a\n")
    assert p.read_bytes() == b"fn.a\nsomeone else's edit\n"


def test_no_temp_files_left(tmp_path):
    _roundtrip(tmp_path, b"fn.a\n")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["m.py"]


def test_not_a_regular_file(tmp_path):
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    with pytest.raises(FileProblem, match="not a regular file"):
        read_source(fifo)
