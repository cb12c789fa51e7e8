"""Reading and writing source files byte-exactly: encoding, BOM, newline style, atomic replace."""

from __future__ import annotations

import codecs
import dataclasses
import errno
import io
import os
import re
import stat
import tempfile
import tokenize
from pathlib import Path

_NEWLINE = re.compile(r"\r\n|\r|\n")


class FileProblem(Exception):
    """The file cannot be read or written safely; the message is the reason shown to the user."""


@dataclasses.dataclass(frozen=True)
class SourceFile:
    """A decoded file plus everything needed to write it back the way it was."""

    text: str  # newlines normalised to "\n", BOM stripped
    encoding: str  # codec used for the body (never "utf-8-sig": the BOM is kept in `bom`)
    bom: bytes  # b"" or codecs.BOM_UTF8
    newline: str  # the file's newline style, restored on write
    raw: bytes
    # (mtime_ns, size) at read time, to notice the file changing under us before we replace it
    stamp: tuple


def read_source(path: Path) -> SourceFile:
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise FileProblem("not a regular file")
        with open(path, "rb") as f:
            raw = f.read()
    except PermissionError:
        raise FileProblem("permission denied") from None
    except OSError as e:
        if os.path.islink(path):
            raise FileProblem(_broken_link(path, e)) from None
        raise FileProblem(e.strerror or str(e)) from None
    text, encoding, bom = decode_source(raw)
    m = _NEWLINE.search(text)
    # A file with mixed endings gets its first one everywhere, but only if we rewrite it at all.
    newline = m.group() if m else "\n"
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return SourceFile(text, encoding, bom, newline, raw, (st.st_mtime_ns, st.st_size))


def _broken_link(path: Path, e: OSError) -> str:
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    if e.errno == errno.ELOOP:
        return f"symbolic link loop (-> {target})"
    return f"broken symbolic link (-> {target}): {e.strerror or e}"


def decode_source(raw: bytes) -> tuple[str, str, bytes]:
    """Decode as Python would (PEP 263: BOM, coding cookie, UTF-8 default). Returns (text, codec, bom)."""
    if b"\0" in raw:
        raise FileProblem("binary file")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(_cr_as_lf(raw)).readline)
    except SyntaxError as e:
        if "invalid or missing" in e.msg:
            # Undecodable bytes in the first two lines: give the precise "byte 0x.. at offset .."
            # that the same bytes further down would get.
            bom = codecs.BOM_UTF8 if raw.startswith(codecs.BOM_UTF8) else b""
            _decode(raw[len(bom):], "utf-8", len(bom))
        if e.msg.startswith("encoding problem"):
            raise FileProblem("coding declaration contradicts the UTF-8 BOM") from None
        raise FileProblem(e.msg) from None
    bom = b""
    if encoding == "utf-8-sig":
        bom, encoding = codecs.BOM_UTF8, "utf-8"
    return _decode(raw[len(bom):], encoding, len(bom)), encoding, bom


def _cr_as_lf(raw: bytes) -> bytes:
    """tokenize.detect_encoding splits lines at b"\\n" only; Python itself also ends lines at a
    lone b"\\r", so a coding cookie in a CR-only file must be found the same way (same length,
    so offsets are unchanged; used for the detection only)."""
    if b"\r" in raw and b"\n" not in raw:
        return raw.replace(b"\r", b"\n")
    return raw


def _decode(body: bytes, encoding: str, offset_base: int) -> str:
    try:
        return body.decode(encoding)
    except UnicodeDecodeError as e:
        label = "UTF-8" if codecs.lookup(encoding).name == "utf-8" else encoding
        raise FileProblem(
            f"not valid {label}: byte 0x{body[e.start]:02x} at offset {e.start + offset_base}"
        ) from None
    except LookupError:
        raise FileProblem(f"unknown encoding: {encoding}") from None


def encode_source(src: SourceFile, text: str) -> bytes:
    """The inverse of read_source for new text: original newline style, codec and BOM."""
    if src.newline != "\n":
        text = text.replace("\n", src.newline)
    try:
        return src.bom + text.encode(src.encoding)
    except UnicodeEncodeError as e:
        raise FileProblem(
            f"internal error: converted code cannot be encoded as {src.encoding}: {e.object[e.start]!r}"
        ) from None


def write_source(path: Path, src: SourceFile, text: str) -> bool:
    """Replace the file's content with `text`, atomically. Returns False if nothing had to be written."""
    data = encode_source(src, text)
    if data == src.raw:
        return False
    # Through a symlink we write the target, so the link stays a link.
    target = Path(os.path.realpath(path))
    try:
        st = os.stat(target)
    except OSError as e:
        raise FileProblem(e.strerror or str(e)) from None
    # os.access alone says yes to root; a file with no write bit at all is read-only by intent.
    if not os.access(target, os.W_OK) or not st.st_mode & 0o222:
        raise FileProblem("permission denied")
    if (st.st_mtime_ns, st.st_size) != src.stamp:
        raise FileProblem("file changed on disk while being converted; run again")
    atomic_write(target, data, st)
    return True


def atomic_write(target: Path, data: bytes, st: os.stat_result) -> None:
    """Write via a temp file in the same directory and os.replace: readers, and an interrupted
    run, only ever see the old or the new content."""
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".dali-migrate.tmp")
    except PermissionError:
        raise FileProblem("permission denied: cannot create a file next to it") from None
    except OSError as e:
        raise FileProblem(e.strerror or str(e)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        try:
            os.chown(tmp, st.st_uid, st.st_gid)
        except OSError:
            pass  # only possible for root or the owner; the content matters more than the owner
        os.replace(tmp, target)
    except BaseException as e:
        # BaseException too: an interrupt mid-write must not leave the temp file behind.
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise FileProblem(e.strerror or str(e)) from None
        raise
    _fsync_dir(target.parent)


def _fsync_dir(directory: Path) -> None:
    # Makes the rename itself durable; not possible on every platform, and not worth failing for.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
