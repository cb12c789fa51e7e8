"""Random pipeline-mode programs, as source text, for the property tests.

`pipelines()` is a hypothesis strategy giving a `Generated`: the text of a module with one
`@pipeline_def` function `gen_pipe(root)`: a file reader over the fixture images decoded on the CPU
(or, without a reader, random noise made into an image), then a chain or small DAG of image
operators from a curated set (OPS: every operator and argument is checked against the catalog by
test_catalog_knows_the_generator), random operators as argument inputs, arithmetic between
outputs, and several outputs.

Every node is tracked with its static shape (H, W, 3, HWC) and type, so the arguments are always
valid: crops fit, arithmetic only joins equal shapes, colour operators only get uint8 images.
"""

from __future__ import annotations

import dataclasses
import re

from hypothesis import strategies as st

#: operator -> the arguments the generator may pass (checked against the catalog)
OPS = {
    "readers.file": {"file_root", "random_shuffle", "name", "seed"},
    "decoders.image": {"device", "output_type"},
    "random.uniform": {"range", "shape", "seed"},
    "random.coin_flip": {"probability", "seed"},
    "random.normal": {"mean", "stddev"},
    "cast": {"dtype"},
    "reshape": {"layout"},
    "flip": {"horizontal", "vertical"},
    "rotate": {"angle", "keep_size", "fill_value"},
    "resize": {"resize_x", "resize_y"},
    "crop": {"crop", "crop_pos_x", "crop_pos_y"},
    "crop_mirror_normalize": {"dtype", "mean", "std", "mirror", "output_layout"},
    "hsv": {"hue", "saturation", "value"},
    "brightness_contrast": {"brightness", "contrast"},
    "color_twist": {"hue", "saturation", "contrast", "brightness"},
    "transpose": {"perm", "output_layout"},
    "noise.gaussian": {"stddev", "seed"},
    "random_resized_crop": {"size", "seed"},
    "water": {"ampl_x", "ampl_y"},
    "sphere": set(),
}


@dataclasses.dataclass(frozen=True)
class Node:
    name: str
    h: int
    w: int
    dtype: str  # "u8", "i32" or "f32"


@dataclasses.dataclass
class Generated:
    source: str
    reader: bool
    random: bool  # any random operator in the graph
    outputs: int

    def __repr__(self):  # what hypothesis prints for a failing example: the program itself
        return "Generated(source=\n" + self.source + ")"


HEADER = '''\
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def


@pipeline_def(batch_size={batch}, num_threads=2, device_id=0, seed={seed})
def gen_pipe(root):
'''


class _Builder:
    def __init__(self, draw):
        self.draw = draw
        self.lines: list = []
        self.nodes: list = []
        self.n = 0
        self.random = False

    def var(self, prefix="v") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def emit(self, line: str) -> None:
        self.lines.append("    " + line)

    def seed_arg(self) -> str:
        # now and then an operator's own seed=
        if self.draw(st.integers(0, 9)) == 0:
            return f", seed={self.draw(st.integers(1, 10_000))}"
        return ""

    # -- argument values: a literal, or a random operator's output (an argument input) ---------

    def value(self, lo: float, hi: float, *, allow_random=True) -> str:
        kind = self.draw(st.sampled_from(["literal", "uniform", "normal"] if allow_random else ["literal"]))
        if kind == "literal":
            return repr(round(self.draw(st.floats(lo, hi, allow_nan=False)), 3))
        self.random = True
        name = self.var("r")
        if kind == "uniform":
            self.emit(f"{name} = fn.random.uniform(range=[{lo!r}, {hi!r}]{self.seed_arg()})")
        else:
            mid, spread = (lo + hi) / 2, (hi - lo) / 6
            self.emit(f"{name} = fn.random.normal(mean={mid!r}, stddev={round(spread, 3)!r})")
        return name

    def flag(self) -> str:
        if self.draw(st.booleans()):
            return str(self.draw(st.integers(0, 1)))
        self.random = True
        name = self.var("c")
        p = self.draw(st.sampled_from([0.25, 0.5, 0.75]))
        self.emit(f"{name} = fn.random.coin_flip(probability={p}{self.seed_arg()})")
        return name

    # -- the graph ---------------------------------------------------------------------------

    def pick(self, pred=lambda n: True) -> Node:
        candidates = [n for n in self.nodes if pred(n)]
        # mostly the latest node (a chain), sometimes an earlier one (a DAG)
        if self.draw(st.integers(0, 2)) > 0:
            return candidates[-1]
        return self.draw(st.sampled_from(candidates))

    def add(self, expr: str, h: int, w: int, dtype: str) -> Node:
        node = Node(self.var(), h, w, dtype)
        self.emit(f"{node.name} = {expr}")
        self.nodes.append(node)
        return node

    def step(self) -> None:
        d = self.draw
        op = d(st.sampled_from(sorted(STEPS)))
        STEPS[op](self, d)


def _u8(n: Node) -> bool:
    return n.dtype == "u8"


def _promote(a: str, b: str) -> str:
    for t in ("f32", "i32"):
        if t in (a, b):
            return t
    return "u8"


def _flip(b: _Builder, d):
    x = b.pick()
    b.add(f"fn.flip({x.name}, horizontal={b.flag()}, vertical={b.flag()})", x.h, x.w, x.dtype)


def _rotate(b: _Builder, d):
    x = b.pick(_u8)
    b.add(f"fn.rotate({x.name}, angle={b.value(-45.0, 45.0)}, keep_size=True, fill_value=0)", x.h, x.w, "u8")


def _resize(b: _Builder, d):
    x = b.pick(lambda n: n.dtype in ("u8", "f32"))
    h, w = d(st.integers(6, 20)), d(st.integers(6, 20))
    b.add(f"fn.resize({x.name}, resize_x={w}, resize_y={h})", h, w, "f32" if x.dtype == "f32" else "u8")


def _crop(b: _Builder, d):
    x = b.pick(lambda n: n.h >= 4 and n.w >= 4)
    ch, cw = d(st.integers(2, x.h)), d(st.integers(2, x.w))
    b.add(f"fn.crop({x.name}, crop=({ch}, {cw}), crop_pos_x={b.value(0.0, 1.0)}, crop_pos_y={b.value(0.0, 1.0)})",
          ch, cw, x.dtype)


def _cmn(b: _Builder, d):
    x = b.pick(_u8)
    mean = [d(st.integers(0, 200)) * 1.0 for _ in range(3)]
    std = [d(st.integers(1, 80)) * 1.0 for _ in range(3)]
    b.add(f"fn.crop_mirror_normalize({x.name}, dtype=types.FLOAT, mean={mean}, std={std}, "
          f"mirror={b.flag()}, output_layout=\"HWC\")", x.h, x.w, "f32")


def _hsv(b: _Builder, d):
    x = b.pick(_u8)
    b.add(f"fn.hsv({x.name}, hue={b.value(-30.0, 30.0)}, saturation={b.value(0.5, 1.5)}, "
          f"value={b.value(0.5, 1.5)})", x.h, x.w, "u8")


def _brightness_contrast(b: _Builder, d):
    x = b.pick(_u8)
    b.add(f"fn.brightness_contrast({x.name}, brightness={b.value(0.5, 1.5)}, contrast={b.value(0.5, 1.5)})",
          x.h, x.w, "u8")


def _color_twist(b: _Builder, d):
    x = b.pick(_u8)
    b.add(f"fn.color_twist({x.name}, hue={b.value(-20.0, 20.0)}, saturation={b.value(0.5, 1.5)}, "
          f"contrast={b.value(0.5, 1.5)}, brightness={b.value(0.5, 1.5)})", x.h, x.w, "u8")


def _cast(b: _Builder, d):
    x = b.pick()
    if x.dtype in ("u8", "i32"):
        b.add(f"fn.cast({x.name}, dtype=types.FLOAT)", x.h, x.w, "f32")
    else:
        b.add(f"fn.cast({x.name}, dtype=types.UINT8)", x.h, x.w, "u8")


def _transpose(b: _Builder, d):
    x = b.pick()
    b.add(f"fn.transpose({x.name}, perm=[1, 0, 2], output_layout=\"HWC\")", x.w, x.h, x.dtype)


def _gaussian(b: _Builder, d):
    x = b.pick(_u8)
    b.random = True
    b.add(f"fn.noise.gaussian({x.name}, stddev={d(st.sampled_from([1.0, 5.0, 20.0]))}{b.seed_arg()})",
          x.h, x.w, "u8")


def _rrc(b: _Builder, d):
    x = b.pick(_u8)
    b.random = True
    h, w = d(st.integers(4, 16)), d(st.integers(4, 16))
    b.add(f"fn.random_resized_crop({x.name}, size=[{h}, {w}]{b.seed_arg()})", h, w, "u8")


def _water(b: _Builder, d):
    x = b.pick(_u8)
    b.add(f"fn.water({x.name}, ampl_x={d(st.sampled_from([1.0, 3.0]))}, ampl_y={d(st.sampled_from([1.0, 3.0]))})",
          x.h, x.w, "u8")


def _sphere(b: _Builder, d):
    x = b.pick(_u8)
    b.add(f"fn.sphere({x.name})", x.h, x.w, "u8")


def _arith(b: _Builder, d):
    x = b.pick()
    same = [n for n in b.nodes if (n.h, n.w) == (x.h, x.w) and n is not x]
    kind = d(st.sampled_from(["binary", "scalar", "random_scalar"] if same else ["scalar", "random_scalar"]))
    if kind == "binary":
        y = d(st.sampled_from(same))
        op = d(st.sampled_from(["+", "-", "*"]))
        dtype = _promote(x.dtype, y.dtype)
        b.add(f"{x.name} {op} {y.name}", x.h, x.w, dtype)
    elif kind == "scalar":
        k = d(st.sampled_from(["0.5", "2", "3.25"]))
        # DALI's type promotion: uint8 * an int literal is int32 (which water, hsv... refuse)
        b.add(f"{x.name} * {k}", x.h, x.w, _promote(x.dtype, "i32") if k == "2" else "f32")
    else:
        b.add(f"{x.name} * {b.value(0.5, 1.5, allow_random=True)}", x.h, x.w, "f32")


STEPS = {
    "flip": _flip, "rotate": _rotate, "resize": _resize, "crop": _crop, "crop_mirror_normalize": _cmn,
    "hsv": _hsv, "brightness_contrast": _brightness_contrast, "color_twist": _color_twist, "cast": _cast,
    "transpose": _transpose, "noise.gaussian": _gaussian, "random_resized_crop": _rrc, "water": _water,
    "sphere": _sphere, "arithmetic": _arith,
}


_ASSIGNED = re.compile(r"^\s*([\w, ]+?) = ")
_NAME = re.compile(r"\b[a-z]+\d*\b")


def _live(lines: list, outputs: list) -> list:
    """Only the lines the outputs depend on: a pipeline prunes unused operators, so dead random
    operators would shift the verifier's seed matching (see test_dead_random_operator)."""
    needed = set(outputs)
    kept = []
    for line in reversed(lines):
        m = _ASSIGNED.match(line)
        defined = {t.strip() for t in m.group(1).split(",")}
        if defined & needed or "readers.file" in line:
            kept.append(line)
            needed |= set(_NAME.findall(line[m.end():]))
    return list(reversed(kept))


@st.composite
def pipelines(draw, max_steps: int = 6) -> Generated:
    b = _Builder(draw)
    reader = draw(st.integers(0, 4)) > 0  # mostly with a reader
    size = draw(st.sampled_from([8, 12, 16]))
    labels = False
    if reader:
        shuffle = draw(st.booleans())
        b.random |= shuffle
        b.emit(f"jpegs, labels = fn.readers.file(file_root=root, random_shuffle={shuffle}, "
               f"name=\"Reader\"{b.seed_arg() if shuffle else ''})")
        device = draw(st.sampled_from(["cpu", "mixed"]))  # verify runs both on the CPU
        b.emit(f"images = fn.decoders.image(jpegs, device=\"{device}\", output_type=types.RGB)")
        b.add(f"fn.resize(images, resize_x={size}, resize_y={size})", size, size, "u8")
        labels = draw(st.booleans())
    else:
        b.random = True
        b.emit(f"noise = fn.random.uniform(range=[0.0, 255.0], shape=[{size}, {size}, 3]{b.seed_arg()})")
        b.add("fn.reshape(fn.cast(noise, dtype=types.UINT8), layout=\"HWC\")", size, size, "u8")
    for _ in range(draw(st.integers(1, max_steps))):
        b.step()
    produced = b.nodes[1:] or b.nodes
    k = draw(st.integers(1, min(3, len(produced))))
    outs = draw(st.permutations(produced))[:k]
    names = [n.name + (".gpu()" if draw(st.integers(0, 5)) == 0 else "") for n in outs]
    if labels:
        names.append("labels")
    batch = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**31 - 1))
    lines = _live(b.lines, [n.name for n in outs] + (["labels"] if labels else []))
    body = "\n".join(lines) + f"\n    return {', '.join(names)}\n"
    source = HEADER.format(batch=batch, seed=seed) + body
    return Generated(source=source, reader=reader, random=b.random, outputs=len(names))
