"""Jupyter notebooks (.ipynb, nbformat 4): convert the code cells as one module, touch nothing else.

Pure: text in, text out (runner.py does the I/O). How it works:

1. The JSON is parsed with the standard library (no nbformat dependency) and the way it was
   written (indent, ``ensure_ascii``, trailing newline) is recovered by re-serialising it until
   the bytes match, so that writing it back changes only the cells that were converted.
2. IPython syntax in code cells (``%magic``, ``!shell``, ``x = !cmd``, ``obj?``, a ``%%time``
   first line) is masked: each such line becomes a unique placeholder of the same indentation
   (a name statement for its first line, a comment for backslash-continued lines), so the cell
   parses and keeps its line numbers. Cells run by another interpreter (``%%bash``,
   ``%%writefile``, ...) are left out altogether.
3. All remaining code cells are joined into one module with a unique separator statement between
   cells and converted in one go (a pipeline defined in one cell and run in another is converted
   together; an import the codemod adds lands next to the DALI imports, in their cell).
4. The output is split at the separators and the placeholders are restored. Anything unexpected
   (a separator or placeholder lost, moved or duplicated) is a :class:`NotebookError`: the
   notebook is reported as an error and never written half-converted.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import difflib
import json
import re
from typing import Callable, Optional

import libcst

from dali_migrate.engine import output_syntax_error
from dali_migrate.model import ConversionError, ConversionResult, Marker, Status

#: Cell magics whose body is Python run in the kernel: the body is converted, the magic kept.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})

_HELP = re.compile(r"^\s*[^#'\"\s][^#'\"]*\?\s*$")  # obj?  obj.attr??  np.*load*?
_ASSIGN_MAGIC = re.compile(r"^\s*[A-Za-z_][\w., ]*=\s*(%|!(?!=))")  # files = !ls ; t = %timeit -o f()
_INDENT = re.compile(r"^[ \t]*")
# IPython's automagic (on by default) runs `pip install x`, `cd data`, `conda install -y x` as the
# line magics they name. Such a line is masked only where it is no Python statement: a word of
# these followed by arguments (not `=`, a call, an attribute, an operator that would continue an
# expression on the next line), and the line does not parse (`ls -la` does: it stays code).
_AUTOMAGIC = frozenset({
    "pip", "conda", "mamba", "cd", "pwd", "ls", "env", "set_env", "mkdir", "rm", "rmdir", "cp", "mv", "cat",
    "load_ext", "reload_ext", "matplotlib", "time", "timeit", "run", "who", "whos", "reset", "autoreload",
    "aimport", "config", "history", "pylab", "bookmark", "dhist", "pushd", "popd", "sx", "system", "writefile",
})
_NOT_MAGIC_ARGS = re.compile(r"^(?:[,&^|*+=.(\[:%<>!@]|(?:is|not|in|and|or|if|else|for)\b)")


class NotebookError(Exception):
    """The notebook cannot be converted; the file is left as it was."""

    def __init__(self, message: str, line: Optional[int] = None, cell: Optional[int] = None):
        super().__init__(message)
        self.message, self.line, self.cell = message, line, cell


# --------------------------------------------------------------------------------------------
# JSON: read, and write back the way it was written
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class JsonStyle:
    indent: object  # int, str or None, as json.dumps takes it
    ensure_ascii: bool
    separators: tuple
    trailing: str  # "\n" or ""
    exact: bool  # re-serialising the original gave back the very same text

    def dump(self, data) -> str:
        return json.dumps(data, indent=self.indent, ensure_ascii=self.ensure_ascii,
                          separators=self.separators) + self.trailing


#: What Jupyter itself writes; used when the original style cannot be reproduced exactly.
JUPYTER_STYLE = JsonStyle(1, False, (",", ": "), "\n", exact=False)


def detect_style(text: str, data) -> JsonStyle:
    """The json.dumps settings that give back `text` (newlines already normalised to "\\n")."""
    indents: list = []
    m = re.match(r"[^\n]*\n([ \t]+)\S", text)
    if m:
        ws = m.group(1)
        indents.append(len(ws) if set(ws) == {" "} else ws)
    indents += [1, 2, 4, None]
    seen = set()
    for indent in indents:
        if indent in seen:
            continue
        seen.add(indent)
        seps = [(",", ": ")] if indent is not None else [(", ", ": "), (",", ":")]
        for separators in seps:
            for ensure_ascii in (False, True):
                dumped = json.dumps(data, indent=indent, ensure_ascii=ensure_ascii, separators=separators)
                for trailing in ("\n", ""):
                    if text == dumped + trailing:
                        return JsonStyle(indent, ensure_ascii, separators, trailing, exact=True)
    return JUPYTER_STYLE


def load(text: str) -> dict:
    """Parse and check the notebook's structure; NotebookError says what is wrong."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise NotebookError(
            f"not a valid notebook: invalid JSON: {e.msg} (line {e.lineno}, column {e.colno})", e.lineno
        ) from None
    except RecursionError:
        raise NotebookError("not a valid notebook: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise NotebookError("not a valid notebook: the top level is not a JSON object")
    version = data.get("nbformat")
    if version is None:
        raise NotebookError('not a valid notebook: no "nbformat" version')
    if version != 4:
        hint = " (open and save it in a current Jupyter to upgrade it)" if isinstance(version, int) and version < 4 else ""
        raise NotebookError(f"unsupported notebook format: nbformat {version!r}, only nbformat 4 is supported{hint}")
    cells = data.get("cells")
    if not isinstance(cells, list):
        raise NotebookError('not a valid notebook: no "cells" list')
    for i, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise NotebookError(f'not a valid notebook: cell {i} has no "cell_type"', cell=i)
        source = cell.get("source")
        if not (isinstance(source, str) or (isinstance(source, list) and all(isinstance(s, str) for s in source))):
            raise NotebookError(f'not a valid notebook: cell {i} has no "source" text', cell=i)
    return data


def language(data: dict) -> Optional[str]:
    meta = data.get("metadata")
    if not isinstance(meta, dict):
        return None
    for key in ("language_info", "kernelspec"):
        info = meta.get(key)
        if isinstance(info, dict):
            lang = info.get("name" if key == "language_info" else "language")
            if isinstance(lang, str):
                return lang.lower()
    return None


def source_text(cell: dict) -> str:
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def set_source(cell: dict, text: str) -> None:
    """Store `text` in the form the cell had: one string, or a list of lines as Jupyter writes."""
    if isinstance(cell["source"], str):
        cell["source"] = text
    else:
        cell["source"] = text.splitlines(keepends=True) if text else []
        # splitlines also splits on \x0c, \u2028, ...: join back anything not ending in "\n".
        lines: list = []
        for piece in cell["source"]:
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += piece
            else:
                lines.append(piece)
        cell["source"] = lines


# --------------------------------------------------------------------------------------------
# IPython syntax: mask before conversion, restore after
# --------------------------------------------------------------------------------------------


def _advance(line: str, depth: int, quote: Optional[str]):
    """Python's tokenizer state after `line`: (bracket depth, open string quote, backslash-continued)."""
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if line.startswith(quote, i):
                i += len(quote)
                quote = None
                continue
            i += 1
            continue
        if c == "#":
            return depth, None, False
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(0, depth - 1)
        elif c in "'\"":
            quote = line[i:i + 3] if line[i:i + 3] in ('"""', "'''") else c
            i += len(quote)
            continue
        i += 1
    continued = line.endswith("\\")
    if quote and len(quote) == 1 and not continued:
        quote = None  # an unterminated one-line string: a syntax error, not our business
    return depth, quote, continued


def _is_magic(line: str) -> bool:
    s = line.lstrip()
    if not s:
        return False
    if s[0] in "%?" or (s[0] == "!" and not s.startswith("!=")):
        return True
    return bool(_HELP.match(line) or _ASSIGN_MAGIC.match(line) or _automagic(s))


def _automagic(s: str) -> bool:
    """``pip install x`` and the like: see _AUTOMAGIC."""
    word, _, rest = s.partition(" ")
    if word not in _AUTOMAGIC or not rest.strip() or _NOT_MAGIC_ARGS.match(rest.lstrip()):
        return False
    try:
        ast.parse(s)
    except SyntaxError:
        return True
    return False


@dataclasses.dataclass
class MaskedCell:
    index: int  # 0-based position in the notebook's cells
    original: str
    masked: str
    restore: dict  # placeholder line (stripped) -> (original line, is statement placeholder)


class _Placeholders:
    def __init__(self, nonce: str):
        self.nonce, self.count = nonce, 0

    def next(self) -> str:
        self.count += 1
        return f"__dali_migrate_{self.nonce}_{self.count}__"


def mask_cell(index: int, text: str, ph: _Placeholders) -> Optional[MaskedCell]:
    """The cell with IPython lines masked, or None if the cell is not Python (a %%bash cell...)."""
    lines = _leading_indent_removed(text.split("\n"))
    restore: dict = {}
    out: list = []
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].startswith("%%"):
        name = lines[first][2:].split(None, 1)[0] if lines[first][2:].strip() else ""
        if name not in PYTHON_CELL_MAGICS:
            return None
    depth, quote, continued = 0, None, False
    in_magic = False  # a magic line ended with "\": this line belongs to it
    for i, line in enumerate(lines):
        if in_magic:
            token = "# " + ph.next()
            restore[token] = (line, False)
            out.append(token)
            in_magic = line.endswith("\\")
            continue
        at_start = depth == 0 and quote is None and not continued
        if at_start and (_is_magic(line) or (i == first and line.startswith("%%"))):
            token = ph.next()
            restore[token] = (line, True)
            out.append(_INDENT.match(line).group() + token)
            in_magic = line.endswith("\\")
            continue
        depth, quote, continued = _advance(line, depth, quote)
        out.append(line)
    return MaskedCell(index, text, "\n".join(out), restore)


def _leading_indent_removed(lines: list) -> list:
    """What IPython runs: when a cell's first line is indented, that indentation is removed from
    every line that starts with it (IPython's `leading_indent` input transformer)."""
    indent = _INDENT.match(lines[0]).group() if lines else ""
    if not indent:
        return lines
    return [line[len(indent):] if line.startswith(indent) else line for line in lines]


def unmask(text: str, restore: dict) -> str:
    """Put the original IPython lines back; NotebookError if a placeholder is missing or doubled."""
    if not restore:
        return text
    lines = text.split("\n")
    used: set = set()
    for i, line in enumerate(lines):
        key = line.strip()
        if key in restore:
            if key in used:
                raise NotebookError("internal error: an IPython line was duplicated by the conversion")
            used.add(key)
            original, statement = restore[key]
            if statement:  # keep the indentation the output gave it (same as before, normally)
                original = _INDENT.match(line).group() + original[len(_INDENT.match(original).group()):]
            lines[i] = original
    if len(used) != len(restore):
        raise NotebookError("internal error: an IPython line was lost by the conversion")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The conversion
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass
class CellChange:
    index: int  # 0-based
    before: str
    after: str


@dataclasses.dataclass
class NotebookResult:
    source: str
    output: str  # the new notebook text (== source when nothing changed)
    changes: list  # [CellChange]
    markers: list  # [Marker] with .cell set
    rewrites: int = 0
    pipelines_converted: int = 0
    pipelines_left: int = 0

    @property
    def changed(self) -> bool:
        return self.output != self.source

    @property
    def status(self) -> Status:
        return ConversionResult(self.source, self.output, self.markers, rewrites=self.rewrites).status

    def diff(self, path: str) -> str:
        """Unified diff per changed cell, headed ``--- nb.ipynb [cell 3]``."""
        parts = []
        for ch in self.changes:
            name = f"{path} [cell {ch.index + 1}]"
            parts.extend(difflib.unified_diff(_lines(ch.before), _lines(ch.after), fromfile=name, tofile=name))
        return "".join(parts)


def _lines(text: str) -> list:
    # Cell sources normally have no final newline: that is not worth a "\ No newline" note.
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line + "\n" for line in lines]


def _nonce(code: str) -> str:
    k = 0
    while f"__dali_migrate_nb{k}_" in code:
        k += 1
    return f"nb{k}"


def convert_notebook(text: str, *, path: str, config, convert: Callable[..., ConversionResult],
                     mentions_dali: Callable[[str], bool] = lambda s: True) -> NotebookResult:
    """Convert the notebook `text`. Raises NotebookError for anything that stops it."""
    data = load(text)
    unchanged = NotebookResult(text, text, [], [])
    lang = language(data)
    if lang is not None and lang != "python":
        return unchanged
    cells = data["cells"]
    code_cells = [(i, source_text(c)) for i, c in enumerate(cells) if c["cell_type"] == "code"]
    if not mentions_dali("\n".join(src for _, src in code_cells)):
        return unchanged

    nonce = _nonce("\n".join(src for _, src in code_cells))
    ph = _Placeholders(nonce)
    masked: list = []
    for i, src in code_cells:
        if not src.strip():
            continue
        cr = src.replace("\r\n", "\n").replace("\r", "\n") != src
        if cr:  # a cell saved with CR line ends: rare; leave it be rather than guess
            continue
        mc = mask_cell(i, src, ph)
        if mc is None:
            continue
        try:
            libcst.parse_module(mc.masked)
        except libcst.ParserSyntaxError as e:
            raise NotebookError(f"does not parse: {e.message}", e.raw_line, i + 1) from None
        masked.append(mc)
    if not masked:
        return unchanged

    # One module: cell, separator, cell, ... Each cell starts on a known line.
    seps = [f"__dali_migrate_{nonce}_cell_{k}__" for k in range(len(masked) - 1)]
    parts, starts, line = [], [], 1
    for k, mc in enumerate(masked):
        body = mc.masked if mc.masked.endswith("\n") else mc.masked + "\n"
        starts.append(line)
        parts.append(body)
        line += body.count("\n")
        if k < len(seps):
            parts.append(seps[k] + "\n")
            line += 1
    module = "".join(parts)

    try:
        result = convert(module, path=path, config=config)
    except ConversionError as e:
        cell, cell_line = _locate(e.line, starts, masked)
        raise NotebookError(e.message, cell_line, cell) from None

    if result.output == module:
        segments = [mc.masked for mc in masked]
        out_starts = starts
    else:
        bad_line = output_syntax_error(module, result.output)
        if bad_line is not None:
            cell, cell_line = _locate(bad_line or None, starts, masked)
            raise NotebookError("internal error: converted code does not parse", cell_line, cell) from None
        segments, out_starts = _split(result.output, seps, masked)

    changes: list = []
    new_data = copy.deepcopy(data)
    for mc, seg in zip(masked, segments):
        # an unchanged cell keeps its bytes (its leading indentation too); a converted one is
        # written as IPython ran it, without that indentation
        after = mc.original if seg == mc.masked else unmask(seg, mc.restore)
        if after != mc.original:
            changes.append(CellChange(mc.index, mc.original, after))
            set_source(new_data["cells"][mc.index], after)

    markers = []
    for m in result.markers:
        cell, cell_line = _locate(m.line, out_starts, masked)
        markers.append(Marker(cell_line or m.line, m.rule, m.reason, cell=cell))

    output = text
    if changes:
        output = detect_style(text, data).dump(new_data)
        _verify(data, output, changes)
    return NotebookResult(
        source=text, output=output, changes=changes, markers=markers, rewrites=result.rewrites,
        pipelines_converted=result.pipelines_converted, pipelines_left=result.pipelines_left,
    )


def _verify(data: dict, output: str, changes: list) -> None:
    """The new text must be a valid notebook that differs from the old one in those cells' sources only."""
    try:
        again = load(output)
    except NotebookError as e:
        raise NotebookError(f"internal error: the converted notebook is not valid: {e.message}") from None
    expected = copy.deepcopy(data)
    for ch in changes:
        expected["cells"][ch.index]["source"] = again["cells"][ch.index]["source"]
        if source_text(again["cells"][ch.index]) != ch.after:
            raise NotebookError("internal error: a converted cell did not survive writing")
    if again != expected:
        raise NotebookError("internal error: the converted notebook differs outside the converted cells")


def _split(output: str, seps: list, masked: list):
    """Cut the converted module back into cells at the separator lines."""
    lines = output.split("\n")
    positions = []
    for sep in seps:
        found = [i for i, line in enumerate(lines) if line == sep]
        if len(found) != 1:
            raise NotebookError("internal error: the conversion moved code across cells; notebook left as it was")
        positions.append(found[0])
    if positions != sorted(positions):
        raise NotebookError("internal error: the conversion reordered cells; notebook left as it was")
    bounds = [-1] + positions + [len(lines)]
    segments, starts = [], []
    for k, mc in enumerate(masked):
        chunk = lines[bounds[k] + 1:bounds[k + 1]]
        starts.append(bounds[k] + 2)  # 1-based line of the chunk's first line
        seg = "\n".join(chunk)
        # Every cell was given a final "\n" before joining. A middle chunk stops short of it
        # (the separator line follows): put it back where the cell had one. The last chunk
        # keeps it (the module's final "\n"): take it off where the cell had none.
        if k < len(masked) - 1:
            if mc.masked.endswith("\n") and chunk:
                seg += "\n"
        elif not mc.masked.endswith("\n") and seg.endswith("\n"):
            seg = seg[:-1]
        segments.append(seg)
    return segments, starts


def _locate(line: Optional[int], starts: list, masked: list):
    """(1-based cell index in the notebook, line within the cell) for a line of the joined module."""
    if not line:
        return None, None
    k = 0
    for j, start in enumerate(starts):
        if start <= line:
            k = j
    return masked[k].index + 1, line - starts[k] + 1
