"""Pipeline subclasses (dali_migrate/legacy.py): iter_setup / feed_input, subclasses of subclasses."""

import re
import textwrap

import pytest

from _helpers import convert, run_both

HEADER = (
    "import numpy as np\nimport nvidia.dali.ops as ops\nimport nvidia.dali.types as types\n"
    "from nvidia.dali.pipeline import Pipeline\n"
)


def classes(body: str) -> str:
    return convert(textwrap.dedent(body), header=HEADER)


FED = '''
class P(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, it):
        super().__init__(batch_size, num_threads, device_id)
        self.input = ops.ExternalSource({es_args})
        self.flip = ops.Flip(horizontal=1)
        self.it = it

    def define_graph(self):
        self.x = self.input()
        return self.flip(self.x)

    def iter_setup(self):
        {iter_setup}
'''


def fed(iter_setup: str, es_args: str = "") -> str:
    return classes(FED.format(iter_setup=iter_setup, es_args=es_args))


def test_iter_setup_becomes_the_start_of_each_iteration():
    out = fed("self.feed_input(self.x, next(self.it), layout='HWC')")
    assert "class P" not in out
    assert "try:\n            x_data = next(it)\n        except StopIteration:\n            return" in out
    assert "x = ndd.batch(x_data, layout='HWC')" in out
    assert out.index("except StopIteration") < out.index("with ctx:")


def test_feed_of_a_name_uses_it_as_it_is():
    out = fed("batch = next(self.it)\n        self.feed_input(self.x, batch)")
    assert "batch = next(it)" in out and "x = ndd.batch(batch)" in out and "x_data" not in out


def test_feed_by_the_external_source_s_name():
    out = fed("self.feed_input('frames', next(self.it))", es_args="name='frames'")
    assert "class P" not in out and "ndd.batch(" in out


def test_layout_of_the_operator_is_kept_and_an_equal_feed_layout_accepted():
    out = fed("self.feed_input(self.x, next(self.it), layout='HWC')", es_args="layout='HWC'")
    assert out.count("layout='HWC'") == 1 and "ndd.batch(x_data, layout='HWC')" in out


def test_different_layouts_are_left_to_a_person():
    out = fed("self.feed_input(self.x, next(self.it), layout='CHW')", es_args="layout='HWC'")
    assert "class P(Pipeline)" in out and "layout= and feed_input's layout differ" in out


def test_feed_with_cuda_stream_is_left_to_a_person():
    out = fed("self.feed_input(self.x, next(self.it), cuda_stream=0)")
    assert "class P(Pipeline)" in out and "feed_input(cuda_stream=0) is not converted" in out


def test_iter_setup_that_only_feeds_a_kept_batch_leaves_no_try():
    # nothing of it runs each iteration: no `try: pass except StopIteration: return`
    out = fed("self.feed_input(self.x, self.it)")
    assert "class P" not in out and "x = ndd.batch(it)" in out
    assert "try:" not in out and "StopIteration" not in out


def test_batch_size_attribute_is_the_batch_size_setting():
    out = fed("self.feed_input(self.x, [np.zeros(2)] * self.max_batch_size)")
    assert "x_data = [np.zeros(2)] * batch_size" in out


def test_feed_under_a_condition_is_left_to_a_person():
    out = fed("b = next(self.it)\n        if b:\n            self.feed_input(self.x, b)")
    assert "class P(Pipeline)" in out and "under a condition or in a loop" in out


def test_early_return_is_left_to_a_person():
    out = fed("b = next(self.it)\n        if not b:\n            return\n        self.feed_input(self.x, b)")
    assert "class P(Pipeline)" in out and "returns early" in out


def test_state_kept_by_iter_setup_is_a_local_of_the_generator():
    out = classes('''
        class P(Pipeline):
            def __init__(self, batch_size, num_threads, device_id):
                super().__init__(batch_size, num_threads, device_id)
                self.input = ops.ExternalSource()
                self.step = 0

            def define_graph(self):
                self.x = self.input()
                return self.x

            def iter_setup(self):
                self.step += 1
                self.feed_input(self.x, [np.full((2,), self.step)] * self.batch_size)
    ''')
    assert "step = 0" in out and "step += 1" in out and "x_data = [np.full((2,), step)] * batch_size" in out


def test_graph_reading_what_iter_setup_changes_is_left_to_a_person():
    out = classes('''
        class P(Pipeline):
            def __init__(self, batch_size, num_threads, device_id):
                super().__init__(batch_size, num_threads, device_id)
                self.input = ops.ExternalSource()
                self.angle = 0.0

            def define_graph(self):
                self.x = self.input()
                return self.x * self.angle

            def iter_setup(self):
                self.angle += 1.0
                self.feed_input(self.x, [np.zeros(2)] * self.batch_size)
    ''')
    assert "class P(Pipeline)" in out and "reads self.angle, which iter_setup changes" in out


def test_iter_setup_locals_that_clash_with_the_graph_are_renamed():
    out = fed("x = next(self.it)\n        self.feed_input(self.x, x)")
    assert "x_2 = next(it)" in out and "x = ndd.batch(x_2)" in out


def test_module_level_iterator_used_only_by_the_pipeline_converts():
    src = FED.format(iter_setup="self.feed_input(self.x, next(batches))", es_args="")
    out = classes("batches = iter([[np.zeros(2)] * 4])\n" + src)
    assert "class P" not in out and "x_data = next(batches)" in out


def test_module_level_iterator_used_elsewhere_is_left_to_a_person():
    src = FED.format(iter_setup="self.feed_input(self.x, next(batches))", es_args="")
    out = classes("batches = iter([[np.zeros(2)] * 4])\n" + src + "first = next(batches)\n")
    assert "class P(Pipeline)" in out and "module-level batches, which other code of the file uses too" in out


def test_source_and_iter_setup_draw_in_the_pipeline_s_order():
    out = classes('''
        def angles(info):
            return [np.float32(info.iteration)] * 2

        class P(Pipeline):
            def __init__(self, batch_size, num_threads, device_id, it):
                super().__init__(batch_size, num_threads, device_id)
                self.input = ops.ExternalSource()
                self.angles = ops.ExternalSource(source=angles)
                self.it = it

            def define_graph(self):
                self.x = self.input()
                return self.x, self.angles()

            def iter_setup(self):
                self.feed_input(self.x, next(self.it))
    ''')
    # sources' callbacks first, then iter_setup (which a pipeline skips once a source ended)
    assert out.index("source_data = next(source_iter, end)") < out.index("if source_data is end:") < out.index("x_data = next(it)")


BASE = '''
class Base(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, size=64):
        super(Base, self).__init__(batch_size, num_threads, device_id, seed=3)
        self.input = ops.readers.File(file_root=data_dir)
        self.decode = ops.decoders.Image()
        self.res = ops.Resize(resize_x=size, resize_y=size)

    def define_graph(self):
        jpegs, labels = self.input()
        images = self.res(self.decode(jpegs))
        return images, labels
'''


def test_subclass_adding_a_step_after_the_base_graph():
    out = classes(BASE + '''
class Flipped(Base):
    def __init__(self, batch_size, num_threads, device_id, data_dir):
        super(Flipped, self).__init__(batch_size, num_threads, device_id, data_dir, size=32)
        self.flip = ops.Flip(horizontal=1)

    def define_graph(self):
        images, labels = super().define_graph()
        return self.flip(images), labels
''')
    assert "class " not in out
    flipped = out[out.index("def Flipped"):]
    assert "def Flipped(batch_size, num_threads, device_id, data_dir, *, seed=3):" in flipped
    assert "ndd.resize(ndd.decoders.image(jpegs), resize_x=32, resize_y=32)" in flipped
    assert "outputs = ndd.flip(images, horizontal=1), labels" in flipped
    assert "images, labels = images, labels" not in flipped


def test_subclass_without_init_takes_the_base_s_signature():
    out = classes(BASE + '''
class Raw(Base):
    def define_graph(self):
        jpegs, labels = self.input()
        return self.decode(jpegs), labels
''')
    assert "def Raw(batch_size, num_threads, device_id, data_dir, size=64, *, seed=3):" in out


def test_base_init_called_by_name():
    out = classes(BASE + '''
class Small(Base):
    def __init__(self, batch_size, num_threads, device_id, data_dir):
        Base.__init__(self, batch_size, num_threads, device_id, data_dir, 16)
''')
    assert "def Small(" in out and "resize_x=16, resize_y=16" in out


def test_base_argument_that_is_computed_is_left_to_a_person():
    out = classes(BASE + '''
class Twice(Base):
    def __init__(self, batch_size, num_threads, device_id, data_dir, size):
        super().__init__(batch_size, num_threads, device_id, data_dir, size=size * 2)
''')
    assert "class Twice(Base)" in out and "passes `size * 2` for size" in out
    # the base stays a class for it
    assert "class Base(Pipeline)" in out and "class Twice extends it and stays a class" in out


def test_subclass_with_a_method_of_its_own_keeps_the_base_a_class():
    out = classes(BASE + '''
class WithEpoch(Base):
    def set_epoch(self, epoch):
        self.epoch = epoch

pipe = WithEpoch(4, 1, 0, "imgs")
pipe.set_epoch(2)
pipe.build()
''')
    assert "class WithEpoch(Base)" in out and "pipe.set_epoch() has no automatic dynamic-mode conversion" in out
    assert "class Base(Pipeline)" in out and "class WithEpoch extends it and stays a class" in out


def test_class_attributes_are_left_to_a_person():
    out = classes('''
        class P(Pipeline):
            SIZE = 4

            def __init__(self, batch_size, num_threads, device_id):
                super().__init__(batch_size, num_threads, device_id)
                self.r = ops.random.Uniform()

            def define_graph(self):
                return self.r()
    ''')
    assert "class P(Pipeline)" in out and "class attributes" in out


def test_subclass_stopped_by_its_uses_keeps_the_base_a_class():
    out = classes(BASE + '''
class Small(Base):
    def __init__(self, batch_size, num_threads, device_id, data_dir):
        super().__init__(batch_size, num_threads, device_id, data_dir, size=16)


p = Small(2, 1, 0, "d")
p.build()
p.run()
p.serialize()
''')
    assert "class Small(Base)" in out and "p.serialize() has no automatic dynamic-mode conversion" in out
    assert "class Base(Pipeline)" in out and "class Small extends it and stays a class" in out


def test_feeding_a_node_no_output_uses_is_left_to_a_person():
    out = classes('''
        class P(Pipeline):
            def __init__(self, batch_size, num_threads, device_id, it):
                super().__init__(batch_size, num_threads, device_id)
                self.a = ops.ExternalSource()
                self.b = ops.ExternalSource()
                self.it = it

            def define_graph(self):
                self.x = self.a()
                self.y = self.b()
                return self.x

            def iter_setup(self):
                x, y = next(self.it)
                self.feed_input(self.x, x)
                self.feed_input(self.y, y)
    ''')
    assert "class P(Pipeline)" in out and "whose output no pipeline output uses" in out


def test_iter_setup_beside_a_reader_draws_inside_the_reader_loop():
    out = classes('''
        class P(Pipeline):
            def __init__(self, batch_size, num_threads, device_id, data_dir, angles):
                super().__init__(batch_size, num_threads, device_id)
                self.reader = ops.readers.File(file_root=data_dir)
                self.decode = ops.decoders.Image()
                self.angle_in = ops.ExternalSource()
                self.rotate = ops.Rotate()
                self.angles = angles

            def define_graph(self):
                jpegs, labels = self.reader()
                self.angle = self.angle_in()
                return self.rotate(self.decode(jpegs), angle=self.angle), labels

            def iter_setup(self):
                self.feed_input(self.angle, [np.float32(a) for a in next(self.angles)], "")
    ''')
    reader_loop = out.index("for jpegs, labels in reader.next_epoch(")
    assert reader_loop < out.index("angle_data = [np.float32(a) for a in next(angles)]") < out.index("with ctx:")
    assert "angle = ndd.batch(angle_data)\n" in out  # an empty layout is no layout


# -- other methods: inlined where define_graph calls them, dropped where nothing can call them --

COMMON = '''
class Common(Pipeline):
    def __init__(self, batch_size, num_threads, device_id):
        super().__init__(batch_size, num_threads, device_id, seed=3)
        self.decode = ops.decoders.Image(output_type=types.RGB)
        self.coin = ops.random.CoinFlip(probability=0.5)
        self.flip = ops.Flip()

    def base_define_graph(self, inputs, labels):
        images = self.decode(inputs)
        {helper_extra}
        return self.flip(images, horizontal=self.coin()), labels
{base_extra}

class FilePipe(Common):
    def __init__(self, batch_size, num_threads, device_id, root):
        super().__init__(batch_size, num_threads, device_id)
        self.input = ops.readers.File(file_root=root)

    def define_graph(self):
        {graph}
{tail}
pipe = FilePipe(4, 1, 0, "imgs")
pipe.build()
images, labels = pipe.run()
'''


def based(graph="jpegs, labels = self.input()\n        return self.base_define_graph(jpegs, labels)",
          helper_extra="", base_extra="", tail="") -> str:
    return classes(COMMON.format(graph=graph, helper_extra=helper_extra, base_extra=base_extra, tail=tail))


def test_base_define_graph_is_inlined_and_the_base_class_goes():
    out = based()
    assert "class " not in out and "dali-migrate:" not in out
    assert "images = ndd.decoders.image(jpegs, output_type=types.RGB)" in out
    assert "outputs = ndd.flip(images, horizontal=ndd.random.coin_flip(" in out


def test_a_base_used_elsewhere_stays_with_its_subclasses():
    out = based(tail="\nprint(Common.__name__)\n")
    assert "class Common(Pipeline)" in out and "class FilePipe(Common)" in out and "dali-migrate:" in out


def test_a_helper_variable_the_caller_reads_later_is_renamed():
    out = based(graph="jpegs, labels = self.input()\n        out, lab = self.base_define_graph(jpegs, labels)\n"
                      "        images = jpegs\n        return out, images, lab")
    assert "images_2 = ndd.decoders.image(jpegs" in out and "out, lab = ndd.flip(images_2," in out
    assert "images = jpegs" in out


def test_a_helper_called_after_an_expression_with_effects_is_left_to_a_person():
    # taking the second call out would run its operators before the first call's result is indexed
    out = based(graph="jpegs, labels = self.input()\n"
                      "        return self.base_define_graph(jpegs, labels)[0], self.base_define_graph(jpegs, labels)[1]")
    assert "class FilePipe(Common)" in out and "inside an expression where taking it out would change what runs first" in out


STATIC = '''
    class P(Pipeline):
        def __init__(self, batch_size, num_threads, device_id, n=3):
            super().__init__(batch_size, num_threads, device_id)
            self.n = n
            self.input = ops.readers.File(file_root="imgs")
            self.shape = ops.Shapes()

        @staticmethod
        def _div_ceil(dividend, divisor):
            return (dividend + divisor - 1) // divisor

        def define_graph(self):
            jpegs, labels = self.input()
            return self._div_ceil(self.shape(jpegs), self.n), labels

    pipe = P(4, 1, 0)
    pipe.build()
    out = pipe.run()
'''


def test_a_static_method_called_on_self_is_inlined_without_self():
    out = classes(STATIC)
    assert "class P" not in out and "dali-migrate:" not in out
    assert "dividend = ndd.as_batch(jpegs.shape" in out and "outputs = (dividend + n - 1) // n, labels" in out


def test_a_static_method_the_file_calls_on_the_class_keeps_the_class():
    out = classes(STATIC.replace("pipe = P(4, 1, 0)", "print(P._div_ceil(7, 2))\n    pipe = P(4, 1, 0)"))
    assert "class P(Pipeline)" in out and "@staticmethod" in out and "P is used here" in out


def test_other_decorated_methods_keep_the_class():
    for decorator in ("@classmethod", "@functools.cache"):
        out = classes('''
        class P(Pipeline):
            def __init__(self, batch_size, num_threads, device_id):
                super().__init__(batch_size, num_threads, device_id)
                self.input = ops.readers.File(file_root="imgs")

            DECORATOR
            def twice(cls, x):
                return x * 2

            def define_graph(self):
                jpegs, labels = self.input()
                return jpegs, self.twice(labels)

        pipe = P(4, 1, 0)
        pipe.build()
        out = pipe.run()
        '''.replace("DECORATOR", decorator))
        why = ("twice(), a class method, is called by the class's own code" if decorator == "@classmethod"
               else "twice() is decorated or async")
        assert "class P(Pipeline)" in out and why in out, decorator


def test_a_helper_reading_a_global_the_caller_binds_is_left_to_a_person():
    out = based(helper_extra="images = images * scale",
                graph="jpegs, labels = self.input()\n        scale = 2\n        return self.base_define_graph(jpegs, labels)")
    assert "class FilePipe(Common)" in out and "reads scale from the module" in out


def test_len_and_unused_methods_go_with_the_class():
    out = based(base_extra="\n    def __len__(self):\n        return 21\n\n    def describe(self):\n        return 'files'\n")
    assert "class " not in out and "__len__" not in out and "describe" not in out and "dali-migrate:" not in out


def test_len_of_the_pipeline_keeps_it_a_class():
    out = based(base_extra="\n    def __len__(self):\n        return 21\n", tail="\nprint(len(FilePipe(4, 1, 0, 'imgs')))\n")
    assert "class FilePipe(Common)" in out and "dali-migrate:" in out


def test_a_method_overriding_pipeline_s_own_is_left_to_a_person():
    out = based(base_extra="\n    def epoch_size(self, name=None):\n        return 21\n")
    assert "class FilePipe(Common)" in out and "epoch_size() overrides Pipeline.epoch_size" in out


def test_a_dunder_python_calls_by_itself_is_left_to_a_person():
    out = based(base_extra="\n    def __del__(self):\n        print('bye')\n")
    assert "class FilePipe(Common)" in out and "defines __del__(), which Python calls by itself" in out


def test_a_recursive_helper_is_left_to_a_person():
    out = based(helper_extra="images = self.base_define_graph(images, labels)")
    assert "class FilePipe(Common)" in out and "calls itself" in out


def test_helpers_calling_helpers_with_keywords_defaults_and_literal_branches():
    out = classes('''
    class P(Pipeline):
        def __init__(self, batch_size, num_threads, device_id):
            super().__init__(batch_size, num_threads, device_id, seed=1)
            self.input = ops.readers.File(file_root="imgs")
            self._ops(angle=10)

        def _ops(self, angle):
            self.decode = ops.decoders.Image()
            self.rotate = ops.Rotate(angle=angle)
            self.flip = ops.Flip()

        def aug(self, images, flip=False):
            images = self.rotate(images)
            if flip:
                images = self.flip(images)
            return images

        def define_graph(self):
            jpegs, labels = self.input()
            images = self.decode(jpegs)
            flipped = self.aug(images, flip=True)
            rotated = self.aug(images)
            return flipped, rotated, labels

    pipe = P(4, 1, 0)
    pipe.build()
    a, b, c = pipe.run()
    ''')
    assert "class P" not in out and "if " not in out
    assert out.count("ndd.rotate(") == 2 and out.count("ndd.flip(") == 1 and "angle=10" in out


def test_pipeline_attribute_list_is_dali_s():
    pipeline = __import__("pytest").importorskip("nvidia.dali.pipeline")
    from dali_migrate.legacy import _PIPELINE_ATTRS

    own = {n for n in vars(pipeline.Pipeline) if not (n.startswith("__") and n.endswith("__"))}
    assert own <= _PIPELINE_ATTRS


COMMENTED = '''
class P(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, root):
        super().__init__(batch_size, num_threads, device_id, seed=12)
        # reader above
        self.input = ops.readers.File(  # reader after paren
            file_root=root,  # reader root
            # reader own line
            files=["a.jpg",  # reader nested
                   "b.jpg"],
        )  # reader trailing
        self.unused = ops.Flip()  # flip never called
        self.decode = ops.decoders.Image(device="cpu")  # decoder trailing

    def define_graph(self):
        jpegs, labels = self.input()

        # graph above decode
        images = self.decode(jpegs)  # graph trailing
        return images, labels

pipe = P(4, 2, 0, "/data")
pipe.build()
out = pipe.run()
'''


def test_comments_of_an_operator_s_statement_go_above_its_first_use_once_each():
    out = classes(COMMENTED)
    assert "class P" not in out
    lines = [line.strip() for line in out.splitlines()]
    reader = next(i for i, line in enumerate(lines) if line.startswith("reader = ndd.readers.File("))
    # an operator nothing calls has no statement of its own left: its comment joins the first one
    expected_above_reader = [
        "# reader above", "# reader after paren", "# reader root", "# reader own line",
        "# reader nested", "# reader trailing", "# flip never called",
    ]
    assert lines[reader - len(expected_above_reader) : reader] == expected_above_reader
    decode = next(i for i, line in enumerate(lines) if line.startswith("images = ndd.decoders.image("))
    # define_graph's own comment stays, the operator's goes between it and the statement
    assert lines[decode - 2 : decode] == ["# graph above decode", "# decoder trailing"]
    assert lines[decode].endswith("# graph trailing")
    for comment in [*expected_above_reader, "# decoder trailing", "# graph above decode", "# graph trailing"]:
        assert out.count(comment) == 1, comment
    assert '"b.jpg"]' in out


def test_comments_of_a_base_class_s_operator_follow_it_into_the_subclass():
    out = classes('''
    class Base(Pipeline):
        def __init__(self, batch_size, num_threads, device_id):
            super().__init__(batch_size, num_threads, device_id)
            self.input = ops.readers.File(file_root="imgs")  # base reader

        def define_graph(self):
            jpegs, labels = self.input()
            return jpegs, labels


    class Child(Base):
        def __init__(self, batch_size, num_threads, device_id):
            super().__init__(batch_size, num_threads, device_id)
            # child flip
            self.flip = ops.Flip(horizontal=1)

        def define_graph(self):
            jpegs, labels = super().define_graph()
            return self.flip(jpegs), labels

    pipe = Child(4, 1, 0)
    pipe.build()
    a, b = pipe.run()
    ''')
    assert "class Child" not in out
    child = out[out.index("def Child("):]
    assert "# base reader\n    reader = ndd.readers.File(" in child
    assert "# child flip\n                outputs = ndd.flip(" in child


def test_init_doing_more_than_making_operators_is_marked_on_one_line():
    # the marker quotes the statement's first line, not the comment above it, and stays one
    # comment line
    out = classes('''
    class HybridTrainPipe(Pipeline):
        def __init__(self, batch_size, num_threads, device_id, root, dali_cpu=False):
            super().__init__(batch_size, num_threads, device_id, seed=12)
            self.input = ops.readers.File(file_root=root)
            # decoding on the GPU unless asked not to
            for device in ["cpu"] if dali_cpu else ["mixed"]:
                self.decode = ops.decoders.Image(device=device)

        def define_graph(self):
            jpegs, labels = self.input(name="Reader")
            return self.decode(jpegs), labels
    ''')
    assert "# dali-migrate: [legacy-pipeline] not converted: __init__ does more than create operators and store values: for device in [\"cpu\"] if dali_cpu else [\"mixed\"]:\n" in out
    assert "class HybridTrainPipe(Pipeline):" in out
    compile(out, "<out>", "exec")


# -- operators chosen under an `if` of __init__ ----------------------------------------------------

CHOSEN = '''
class P(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, dali_cpu=False):
        super().__init__(batch_size, num_threads, device_id, seed=1)
        self.input = ops.readers.File(file_root=data_dir)
{init}

    def define_graph(self):
        jpegs, labels = self.input()
{graph}
        return images, labels
'''


def chosen(init: str, graph: str = "        images = self.decode(jpegs)") -> str:
    return classes(CHOSEN.format(init=textwrap.indent(textwrap.dedent(init).strip("\n"), " " * 8), graph=graph))


def test_members_made_in_every_branch_become_an_if_where_they_are_called():
    out = chosen('''
        if dali_cpu:
            device = "cpu"
            self.decode = ops.decoders.Image(device=device)
        else:
            device = "gpu"
            self.decode = ops.decoders.Image(device="mixed")
    ''')
    assert "class P" not in out and "dali-migrate:" not in out
    # the branch's plain values stay in their `if`; each call site picks the branch's operator
    assert 'if dali_cpu:\n        device = "cpu"\n    else:\n        device = "gpu"' in out
    assert "if dali_cpu:\n                    images = ndd.decoders.image(jpegs, device=\"gpu\" if device == \"mixed\" else device)\n" in out
    assert 'else:\n                    images = ndd.decoders.image(jpegs, device="gpu")' in out


def test_a_member_made_in_one_branch_is_called_under_define_graph_s_own_if():
    out = chosen('''
        self.dali_cpu = dali_cpu
        self.decode = ops.decoders.Image(device="cpu")
        if not dali_cpu:
            self.flip = ops.Flip(horizontal=1)
    ''', graph="        images = self.decode(jpegs)\n        if not self.dali_cpu:\n            images = self.flip(images)")
    assert "class P" not in out and "dali-migrate:" not in out
    assert "if not dali_cpu:\n                    images = ndd.flip(images, horizontal=1)" in out


def test_define_graph_s_if_on_a_value_each_branch_stores_as_a_literal_is_decided():
    out = chosen('''
        if dali_cpu:
            self.device = "cpu"
            self.post = ops.Flip(device=self.device, horizontal=1)
        else:
            self.device = "gpu"
            self.post = ops.CropMirrorNormalize(device="gpu", mirror=1)
    ''', graph='''        images = self.decode(jpegs)
        if self.device == "gpu":
            images = self.post(images.gpu())
        else:
            images = self.post(images)'''.replace("self.decode(jpegs)", "jpegs"))
    assert "class P" not in out and "dali-migrate:" not in out
    assert 'if device == "gpu":\n                    images = ndd.crop_mirror_normalize(images.gpu(), device="gpu", mirror=1)' in out
    assert "else:\n                    images = ndd.flip(images, device=device, horizontal=1)" in out


def test_a_member_made_in_one_branch_and_called_always_is_refused():
    out = chosen('''
        if dali_cpu:
            self.decode = ops.decoders.Image(device="cpu")
    ''')
    assert "class P(Pipeline)" in out
    assert "define_graph calls self.decode, which __init__ does not create when none of its conditions holds" in out


def test_a_member_missing_from_the_else_branch_is_refused():
    out = chosen('''
        if dali_cpu:
            self.decode = ops.decoders.Image(device="cpu")
        else:
            self.other = ops.decoders.Image(device="mixed")
    ''')
    assert "class P(Pipeline)" in out
    assert "define_graph calls self.decode, which __init__ does not create" in out


def test_a_condition_reading_an_attribute_of_an_argument_is_asked_once():
    # the pipeline chose its operators once, when it was built; the converted loop tests which
    # branch __init__ took, not `cfg.dali_cpu` again (a script may change `cfg` after making it)
    out = chosen('''
        if cfg.dali_cpu:
            self.decode = ops.decoders.Image(device="cpu")
        else:
            self.decode = ops.decoders.Image(device="mixed")
    ''')
    assert "class P" not in out and "dali-migrate:" not in out
    assert "    if cfg.dali_cpu:\n        branch = 0\n    else:\n        branch = 1\n    reader = " in out
    assert "if branch == 0:\n                    images = ndd.decoders.image(jpegs, device=\"cpu\")" in out
    assert out.count("cfg.dali_cpu") == 1


def test_a_condition_reading_a_module_variable_is_asked_once_without_else_too():
    out = chosen('''
        self.decode = ops.decoders.Image(device="cpu")
        if USE_FLIP:
            self.flip = ops.Flip(horizontal=1)
    ''', graph="        images = self.decode(jpegs)\n        if USE_FLIP:\n            images = self.flip(images)")
    assert "class P" not in out and "dali-migrate:" not in out
    # no branch ran: the flag says so
    assert "    branch = 1\n    if USE_FLIP:\n        branch = 0\n" in out


def test_a_condition_comparing_with_a_dali_constant_converts():
    out = chosen('''
        interp = types.INTERP_CUBIC if dali_cpu else types.INTERP_LINEAR
        if interp == types.INTERP_CUBIC:
            self.decode = ops.decoders.Image(device="cpu")
        else:
            self.decode = ops.decoders.Image(device="mixed")
    ''')
    assert "class P(Pipeline)" not in out
    assert "if interp == types.INTERP_CUBIC:" in out


def test_a_condition_that_calls_something_is_called_once():
    out = chosen('''
        if torch.cuda.is_available():
            self.decode = ops.decoders.Image(device="mixed")
        else:
            self.decode = ops.decoders.Image(device="cpu")
    ''')
    assert "class P" not in out and "dali-migrate:" not in out
    assert out.count("torch.cuda.is_available()") == 1 and "if branch == 0:" in out


def test_a_condition_asked_once_runs_as_the_pipeline_ran(tmp_path, fixture_data):
    # a script changes the setting after making the pipeline: the pipeline kept its operators
    pytest.importorskip("nvidia.dali")
    import numpy as np

    src = HEADER + CHOSEN.format(
        init=textwrap.indent(textwrap.dedent('''
            if cfg.small:
                self.resize = ops.Resize(resize_x=8, resize_y=8)
            else:
                self.resize = ops.Resize(resize_x=16, resize_y=12)
        ''').strip("\n"), " " * 8),
        graph="        images = self.resize(self.decode(jpegs))",
    ).replace("data_dir, dali_cpu=False):", "data_dir, cfg, dali_cpu=False):").replace(
        "self.input = ops.readers.File(file_root=data_dir)",
        "self.input = ops.readers.File(file_root=data_dir)\n        self.decode = ops.decoders.Image(device=\"cpu\")") + '''

def run(root, make_cfg, later):
    cfg = make_cfg()
    pipe = P(2, 1, None, root, cfg)
    pipe.build()
    later(cfg)  # (code dali-migrate does not see, such as a training loop in another module)
    return [pipe.run() for _ in range(3)]
'''
    out = convert(src, header="")
    assert "dali-migrate:" not in out and "next(pipe)" in out

    def later(cfg):
        cfg.small = False

    import types as pytypes

    root = str(fixture_data / "images")
    want, got = run_both(tmp_path, src, out, "run", root, lambda: pytypes.SimpleNamespace(small=True), later)
    for w, g in zip(want, got):
        assert [np.array(w[0][i]).shape for i in range(2)] == [tuple(g[0].select(i).shape) for i in range(2)] == [(8, 8, 3)] * 2


def test_a_condition_whose_name_is_set_again_later_is_refused():
    out = chosen('''
        if dali_cpu:
            self.decode = ops.decoders.Image(device="cpu")
        else:
            self.decode = ops.decoders.Image(device="mixed")
        dali_cpu = not dali_cpu
    ''')
    assert "class P(Pipeline)" in out
    assert "__init__ sets dali_cpu again after an `if` that reads it" in out


def test_a_condition_whose_name_define_graph_sets_is_refused():
    out = chosen('''
        if dali_cpu:
            self.decode = ops.decoders.Image(device="cpu")
        else:
            self.decode = ops.decoders.Image(device="mixed")
    ''', graph="        dali_cpu = True\n        images = self.decode(jpegs)")
    assert "class P(Pipeline)" in out
    assert "dali_cpu is set again after __init__'s `if` that reads it chose operators" in out


def test_a_member_set_under_the_if_and_outside_it_is_refused():
    # (set before the `if` and again in it, it is the `if`'s choice: see
    # test_a_member_set_then_set_again_by_an_if_is_that_if_s_choice; after it, it is not)
    out = chosen('''
        if not dali_cpu:
            self.decode = ops.decoders.Image(device="mixed")
        self.decode = ops.decoders.Image(device="cpu")
    ''')
    assert "class P(Pipeline)" in out
    assert "self.decode is set both under an `if` of __init__ and outside it" in out


def test_members_set_in_a_nested_if_are_refused():
    out = chosen('''
        if dali_cpu:
            self.decode = ops.decoders.Image(device="cpu")
        else:
            if data_dir:
                self.decode = ops.decoders.Image(device="mixed")
    ''')
    assert "class P(Pipeline)" in out
    assert "`if dali_cpu:` sets members of self in a nested statement (if data_dir:)" in out


def test_a_value_stored_in_one_branch_only_is_refused():
    out = chosen('''
        self.decode = ops.decoders.Image(device="cpu")
        if dali_cpu:
            self.device = "cpu"
    ''')
    assert "class P(Pipeline)" in out
    assert "`if dali_cpu:` sets self.device in some of its branches only" in out


def test_one_statement_calling_operators_of_two_ifs_is_refused():
    out = chosen('''
        if dali_cpu:
            self.decode = ops.decoders.Image(device="cpu")
        else:
            self.decode = ops.decoders.Image(device="mixed")
        if data_dir:
            self.flip = ops.Flip(horizontal=1)
        else:
            self.flip = ops.Flip(vertical=1)
    ''', graph="        images = self.flip(self.decode(jpegs))")
    assert "class P(Pipeline)" in out
    assert "a statement of define_graph calls operators that several `if`s of __init__ chose" in out


# -- operators whose arguments read values of self --------------------------------------------------

def test_operator_arguments_reading_a_value_of_self_read_its_local():
    out = classes('''
        class P(Pipeline):
            def __init__(self, batch_size, num_threads, device_id, boxes):
                super().__init__(batch_size, num_threads, device_id)
                self.anchors = [a * 2 for a in boxes]
                self.input = ops.readers.COCO(file_root="images", annotations_file="ann.json", ltrb=True)
                self.encode = ops.BoxEncoder(criteria=0.5, anchors=self.anchors)

            def define_graph(self):
                images, bboxes, labels = self.input()
                return self.encode(bboxes, labels)
    ''')
    assert "class P" not in out and "dali-migrate:" not in out
    assert "anchors = [a * 2 for a in boxes]" in out
    assert "ndd.box_encoder(bboxes, labels, criteria=0.5, anchors=anchors)" in out


def test_a_value_of_self_set_again_after_an_operator_read_it_is_refused():
    out = classes('''
        class P(Pipeline):
            def __init__(self, batch_size, num_threads, device_id, boxes):
                super().__init__(batch_size, num_threads, device_id)
                self.anchors = boxes
                self.encode = ops.BoxEncoder(criteria=0.5, anchors=self.anchors)
                self.input = ops.readers.COCO(file_root="images", annotations_file="ann.json", ltrb=True)
                self.anchors = None

            def define_graph(self):
                images, bboxes, labels = self.input()
                return self.encode(bboxes, labels)
    ''')
    assert "class P(Pipeline)" in out
    assert "self.anchors is set again after an operator's arguments read it" in out


def test_a_conditional_expression_on_the_same_condition_picks_the_branch_s_operator():
    out = chosen('''
        self.dali_cpu = dali_cpu
        self.decode = ops.decoders.Image(device="cpu")
        if dali_cpu:
            self.coin = ops.random.CoinFlip(probability=0.5)
    ''', graph="        mirror = self.coin() if self.dali_cpu else None\n        images = self.decode(jpegs)")
    assert "class P" not in out and "dali-migrate:" not in out
    assert "mirror = ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng) if dali_cpu else None" in out


def test_the_same_operator_in_every_branch_needs_no_if():
    out = chosen('''
        if dali_cpu:
            device = "cpu"
            self.decode = ops.decoders.Image(device=device)
        else:
            device = "mixed"
            self.decode = ops.decoders.Image(device=device)
    ''')
    assert "class P" not in out and "dali-migrate:" not in out
    assert out.count("ndd.decoders.image(") == 1 and "                if dali_cpu:" not in out


def test_build_at_the_end_of_init_goes():
    # Lightning's DALI example builds the pipeline in its own __init__
    out = classes("""
        class FilePipeline(Pipeline):
            def __init__(self, batch_size, num_threads, device_id, data_dir):
                super().__init__(batch_size, num_threads, device_id, seed=12)
                self.input = ops.readers.File(file_root=data_dir, random_shuffle=True)
                self.build()

            def define_graph(self):
                jpegs, labels = self.input(name="Reader")
                return jpegs, labels


        pipe = FilePipeline(2, 1, None, "d")
        out = pipe.run()
    """)
    assert "def FilePipeline(" in out and "build" not in out and "out = next(pipe)" in out and "dali-migrate:" not in out


# -- scopes that become one function ---------------------------------------------------------

_BASE = '''
import nvidia.dali.ops as ops
from nvidia.dali.pipeline import Pipeline


class Base(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, size):
        super().__init__(batch_size, num_threads, device_id)
        {base_local} = False
        self.res = ops.Resize(resize_x=size, resize_y=size)


class Sub(Base):
    def __init__(self, batch_size, num_threads, device_id, data_dir, shuffle):
        super().__init__(batch_size, num_threads, device_id, 8)
        self.input = ops.readers.File(file_root=data_dir, random_shuffle=shuffle)
        self.decode = ops.decoders.Image()

    def define_graph(self):
        jpegs, labels = self.input()
        return self.res(self.decode(jpegs)), labels


pipe = Sub(2, 1, None, "d", True)
'''


def test_a_base_local_named_like_what_the_subclass_reads_after_super_is_refused():
    # Base binds `shuffle`; inlined into Sub's function, random_shuffle=shuffle would read False
    out = convert(_BASE.format(base_local="shuffle"), header="")
    assert "class Sub(Base):" in out
    assert "the base class's __init__ binds `shuffle`, which this class's __init__ reads after super()" in out
    out = convert(_BASE.format(base_local="ordered"), header="")
    assert "dali-migrate:" not in out and "random_shuffle=shuffle" in out


_GLOBAL = '''
import nvidia.dali.fn as fn
import nvidia.dali.ops as ops
from nvidia.dali.pipeline import Pipeline

size = 8


class One(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir):
        super().__init__(batch_size, num_threads, device_id)
        {init_local} = 16
        self.input = ops.readers.File(file_root=data_dir)

    def define_graph(self):
        jpegs, labels = self.input()
        return fn.resize(fn.decoders.image(jpegs), resize_x=size), labels


pipe = One(2, 1, None, "d")
'''


def test_a_module_variable_define_graph_reads_and_init_binds_is_refused():
    # define_graph reads the module's size (8); in one function it would read __init__'s 16
    out = convert(_GLOBAL.format(init_local="size"), header="")
    assert "class One(Pipeline):" in out
    assert "define_graph reads `size` from outside the class, and __init__ binds `size` too" in out
    out = convert(_GLOBAL.format(init_local="scale"), header="")
    assert "dali-migrate:" not in out and "resize_x=size" in out


def test_a_module_variable_init_reads_and_define_graph_binds_takes_a_new_name_in_the_graph():
    # in one function `size` would be local throughout (__init__'s read of the module's would
    # raise): define_graph's own `size` becomes size_2, everywhere define_graph spells it
    src = _GLOBAL.replace("        {init_local} = 16\n", "        self.width = size * 2\n").replace(
        "        jpegs, labels = self.input()\n", "        jpegs, labels = self.input()\n        size = self.width\n")
    out = convert(src, header="")
    assert "dali-migrate:" not in out and "class One" not in out
    assert "    width = size * 2\n" in out
    assert "size_2 = width\n" in out and "resize_x=size_2)" in out


def test_a_graph_local_a_lambda_of_the_graph_spells_too_keeps_the_class():
    # `lambda size: ...` binds a `size` of its own: renaming every `size` of define_graph but its
    # parameter would change what the lambda reads, so the class stays as it is
    src = _GLOBAL.replace("        {init_local} = 16\n", "        self.width = size * 2\n").replace(
        "        jpegs, labels = self.input()\n",
        "        jpegs, labels = self.input()\n        size = self.width\n        half = (lambda size: size // 2)(size)\n")
    out = convert(src, header="")
    assert "class One(Pipeline):" in out
    assert "__init__ reads `size` from outside the class, and define_graph binds `size`" in out


def test_a_setting_init_computes_before_super_keeps_the_class():
    # ziplab/QTool: super().__init__(self.bs, ...) after `self.bs = ...`; as the converted
    # function's default it would be read where the function is defined (NameError on import)
    src = (
        "import nvidia.dali.ops as ops\nfrom nvidia.dali.pipeline import Pipeline\n\n\n"
        "class P(Pipeline):\n    def __init__(self, split, args):\n"
        "        self.bs = args.batch_size if split == 'train' else args.val_batch_size\n"
        "        super().__init__(self.bs, 2, 0, seed=12)\n"
        "        self.input = ops.readers.File(file_root=args.root)\n\n"
        "    def define_graph(self):\n        jpegs, labels = self.input()\n        return jpegs, labels\n"
    )
    out = convert(src, header="")
    assert "class P(Pipeline):" in out
    assert "a setting that __init__ computes first (`batch_size=self.bs`)" in out


def test_an_operator_argument_the_graph_binds_again_takes_a_new_name_in_the_graph():
    # retinanet-examples: ops.Uniform(range=[resize, ...]) in __init__ and `resize = self.rand_resize()`
    # in define_graph; the operator's call moves into the loop, where from the second iteration on
    # `resize` would be the batch the graph drew: the graph's `resize` takes a new name there
    src = (
        "import nvidia.dali.ops as ops\nfrom nvidia.dali.pipeline import Pipeline\n\n\n"
        "class P(Pipeline):\n    def __init__(self, root, resize, max_size):\n        super().__init__(2, 1, None, seed=1)\n"
        "        self.input = ops.readers.File(file_root=root)\n"
        "        self.rand_resize = ops.Uniform(range=[resize, float(max_size)])\n\n"
        "    def define_graph(self):\n        jpegs, labels = self.input()\n        {name} = self.rand_resize()\n"
        "        return jpegs, {name}\n"
    )
    out = convert(src.format(name="resize"), header="")
    assert "dali-migrate:" not in out and "class P" not in out
    assert "resize_2 = ndd.random.uniform(range=[resize, float(max_size)]" in out
    assert "outputs = jpegs, resize_2" in out
    out = convert(src.format(name="resize").replace(
        "        return jpegs, resize\n", "        keep = [resize for _ in range(1)]\n        f = lambda resize: resize\n        return jpegs, resize\n"), header="")
    assert "class P(Pipeline):" in out
    assert "an operator made in __init__ reads `resize`, which define_graph binds" in out
    out = convert(src.format(name="size"), header="")
    assert "dali-migrate:" not in out and "ndd.random.uniform(range=[resize, float(max_size)]" in out


def test_an_operator_dali_no_longer_has_is_named_with_what_to_do():
    # ops.HostDecoder was renamed in DALI 1.0: the catalog (DALI's registry) does not have it
    out = classes(FED.replace("ops.Flip(horizontal=1)", "ops.HostDecoder(output_type=types.RGB)").format(
        iter_setup="self.feed_input(self.x, self.it)", es_args=""))
    from dali_migrate.catalog import load as load_catalog

    assert "class P(Pipeline)" in out
    version = load_catalog().dali_version
    assert f"unknown legacy operator ops.HostDecoder: DALI {version}'s operator registry has no such operator" in out


# MLCommons' 3D U-Net loader: a subclass takes `seed` for its readers and leaves the pipeline's
# seed to its base class. The converted function's setting parameter takes another name.
CLASH_SOURCE = (
    "class Base(Pipeline):\n"
    "    def __init__(self, batch_size, device_id=None):\n"
    "        super().__init__(batch_size=batch_size, num_threads=1, device_id=device_id, seed=7)\n\n\n"
    "class TrainPipe(Base):\n"
    "    def __init__(self, batch_size, root, seed=0):\n"
    "        super().__init__(batch_size=batch_size)\n"
    "        self.input = ops.readers.File(file_root=root, random_shuffle=True, seed=seed)\n"
    "        self.flip = ops.random.CoinFlip()\n\n"
    "    def define_graph(self):\n"
    "        jpegs, labels = self.input(name='Reader')\n"
    "        return labels, self.flip()\n\n\n"
    "def first(root):\n"
    "    pipe = TrainPipe(2, root, seed=3)\n"
    "    pipe.build()\n"
    "    return pipe.run()\n"
)


def test_a_parameter_named_like_a_setting_it_does_not_carry_renames_the_setting():
    out = convert(CLASH_SOURCE, header=HEADER)
    assert "def TrainPipe(batch_size, root, seed=0, *, num_threads=1, device_id=None, pipeline_seed=7):" in out, out
    assert "pipeline_seed_or_random = pipeline_seed if pipeline_seed is not None and pipeline_seed >= 0 else secrets.randbits(63)" in out
    assert "rng = ndd.random.RNG(seed=pipeline_seed_or_random)" in out
    # (the reader's own seed= falls back to the pipeline's where a caller passes None: own_seed.py)
    assert "ndd.readers.File(file_root=root, random_shuffle=True, seed=seed if seed is not None else pipeline_seed_or_random)" in out
    assert "dali-migrate:" not in out


def test_a_setting_the_body_computes_still_clashes():
    # the subclass computes the pipeline's seed from its own `seed`: renaming cannot keep both
    src = CLASH_SOURCE.replace("super().__init__(batch_size=batch_size)\n",
                               "Pipeline.__init__(self, batch_size, 1, None, seed=seed + 1)\n")
    out = convert(src, header=HEADER)
    assert "clash with the pipeline settings" in out or "dali-migrate:" in out


SHADOWED = '''
import numpy as np
import nvidia.dali.fn as fn
import nvidia.dali.ops as ops
from nvidia.dali.pipeline import Pipeline


class P(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, size, samples):
        super().__init__(batch_size, num_threads, device_id, seed=3)
        crop = 24
        self.crop = crop + 8  # another value under the name of a local
        self.size = size * 2  # ... and of a parameter
        self.samples = iter(samples)  # an iterator of the parameter (a source)
        self.input = ops.readers.File(file_root=data_dir)
        self.decode = ops.decoders.Image(device="cpu")
        self.res = ops.Resize(resize_x=crop, resize_y=size)

    def define_graph(self):
        jpegs, labels = self.input()
        images = self.res(self.decode(jpegs))
        extra = fn.external_source(source=self.samples)
        return images, fn.resize(images, resize_x=self.crop, resize_y=self.size), extra
'''


def test_a_value_kept_on_self_under_a_variable_s_name_gets_a_local_of_its_own(tmp_path, fixture_data):
    """self.crop = crop + 32 beside the local crop, self.dataset = iter(dataset) beside the
    parameter: each value a local of its own, what the operators read unchanged."""
    from dali_migrate.engine import convert_source
    from dali_migrate.testing import assert_equivalent

    r = convert_source(SHADOWED)
    assert not r.markers, r.output
    assert "crop_2 = crop + 8" in r.output and "size_2 = size * 2" in r.output and "samples_2 = iter(samples)" in r.output
    (tmp_path / "orig.py").write_text(SHADOWED)
    (tmp_path / "conv.py").write_text(r.output)
    import numpy as np

    verdict = assert_equivalent(
        tmp_path / "orig.py", "P", against=tmp_path / "conv.py", iterations=4,
        params={"batch_size": 2, "num_threads": 1, "device_id": None, "data_dir": str(fixture_data / "images"),
                "size": 20, "samples": [[np.full((2,), k, dtype=np.int32)] * 2 for k in range(4)]},
    )
    assert verdict.outputs == 3


def test_a_local_bound_again_after_self_keeps_it_gets_a_local_of_its_own():
    out = classes('''
        class P(Pipeline):
            def __init__(self, batch_size, num_threads, device_id, data_dir, size):
                super().__init__(batch_size, num_threads, device_id)
                self.size = size
                size = size + 1
                self.input = ops.readers.File(file_root=data_dir)
                self.res = ops.Resize(resize_x=size)

            def define_graph(self):
                jpegs, labels = self.input()
                return self.res(jpegs, resize_y=self.size), labels
    ''')
    # (self.size is the parameter's value, the operator's resize_x the one after `size + 1`)
    assert "size_2 = size\n" in out and "resize_y=size_2, resize_x=size" in out, out


MADE_THEN_CHANGED = '''
from nvidia.dali import ops, types
from nvidia.dali.pipeline import Pipeline


class P(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir, size):
        super().__init__(batch_size, num_threads, device_id)
        self.input = ops.readers.File(file_root=data_dir)
        self.decode = ops.decoders.Image(device="cpu")
        self.axes = [0]
        self.shape = [16, 16]
        mean = [0.5, 0.5, 0.5]
        self.res = ops.Resize({res_args})
        self.norm = ops.CropMirrorNormalize(mean=mean, std=[1.0, 1.0, 1.0])
        self.sum = ops.reductions.Sum(axes=self.axes)
        {later}

    def define_graph(self):
        jpegs, labels = self.input()
        images = self.res(self.decode(jpegs))
        return self.norm(images), self.sum(images), labels
{iter_setup}'''


@pytest.mark.parametrize("res_args, later, iter_setup, why", [
    ("resize_x=size", "size = 32", "", "`size` is bound again after __init__ made an operator from it"),
    ("resize_x=size", "size *= 2", "", "`size` is bound again after __init__ made an operator from it"),
    ("resize_x=size", "mean[0] = 255.0", "", "`mean` is changed in place after __init__ made an operator from it"),
    ("size=self.shape", "self.shape[0] = 8", "", "`shape` is changed in place after __init__ made an operator from it"),
    ("resize_x=size", "self.axes.append(1)", "", "`axes` is changed in place after __init__ made an operator from it"),
    ("size=self.shape", "pass",
     "\n    def iter_setup(self):\n        self.shape = [self.shape[0] * 2, 16]\n",
     "an operator made in __init__ reads self.shape, which iter_setup changes"),
])
def test_a_value_changed_after_an_operator_was_made_from_it_is_left_to_a_person(res_args, later, iter_setup, why):
    """DALI took the operator's arguments when __init__ made it; converted, the operator's call is
    written where define_graph calls it and would read the later value (64 became 32)."""
    from dali_migrate.engine import convert_source

    r = convert_source(MADE_THEN_CHANGED.format(res_args=res_args, later=later, iter_setup=iter_setup))
    assert "class P(Pipeline)" in r.output and any(why in m.reason for m in r.markers), [m.reason for m in r.markers]


def test_the_same_class_without_the_change_converts():
    from dali_migrate.engine import convert_source

    r = convert_source(MADE_THEN_CHANGED.format(res_args="resize_x=size", later="pass", iter_setup=""))
    assert not r.markers and "def P(" in r.output, r.output


HELPER_LOCAL = '''
from nvidia.dali import ops, types
from nvidia.dali.pipeline import Pipeline

out_size = 16


class TrainPipe(Pipeline):
    def __init__(self, data_dir, batch_size=2, num_threads=2, device_id=None):
        super().__init__(batch_size, num_threads, device_id, seed=12)
        self.input = ops.readers.File(file_root=data_dir, random_shuffle=False)
        self.decode = ops.decoders.Image(device="cpu", output_type=types.RGB)
        self.res = ops.Resize(resize_x=out_size, resize_y=out_size)
        self.cropper = ops.Crop()

    def center_crop(self, images):
        out_size = 8
        return self.cropper(images, crop=(out_size, out_size))

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        images = self.res(self.decode(jpegs))
        crops = self.center_crop(images)
        return images, crops, labels
'''


def test_a_helper_local_named_like_a_global_an_operator_reads_is_renamed(tmp_path, fixture_data):
    """center_crop's out_size = 8, written into define_graph, would have hidden the module's
    out_size = 16 that ops.Resize reads (the converted code raised UnboundLocalError, or resized
    to 8 where the helper's local came first)."""
    from dali_migrate.engine import convert_source
    from dali_migrate.testing import assert_equivalent

    r = convert_source(HELPER_LOCAL)
    assert not r.markers, r.output
    (tmp_path / "orig.py").write_text(HELPER_LOCAL)
    (tmp_path / "conv.py").write_text(r.output)
    assert_equivalent(tmp_path / "orig.py", "TrainPipe", against=tmp_path / "conv.py", iterations=2,
                      params={"data_dir": str(fixture_data / "images")})


FRAMES = '''
import numpy as np
from nvidia.dali import ops, types
from nvidia.dali.pipeline import Pipeline


class Frames:
    """{doc}"""

    def __init__(self, batch_size, n_frames):
        self.buf = np.zeros((batch_size, 4, 4, 3), dtype=np.uint8)
        self.n_frames = n_frames
        self.k = 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.k >= self.n_frames:
            raise StopIteration
        count = min(len(self.buf), self.n_frames - self.k)
        self.buf[:count] = np.arange(self.k, self.k + count, dtype=np.uint8)[:, None, None, None]
        self.k += count
        return self.buf[:count]


class FramePipe(Pipeline):
    def __init__(self, batch_size=4, num_threads=2, device_id=None, n_frames=10):
        super().__init__(batch_size, num_threads, device_id, seed=12)
        self.source = ops.ExternalSource(layout="HWC")
        self.coin = ops.CoinFlip(probability=0.5)
        self.frames_iter = iter(Frames(batch_size, n_frames))

    def define_graph(self):
        self.frames = self.source()
        return self.frames, self.coin()

    def iter_setup(self):
        self.feed_input(self.frames, next(self.frames_iter))
'''


def test_iter_setup_feeds_are_copied_and_random_operators_take_the_fed_batch_s_size(tmp_path, fixture_data):
    """One buffer refilled for every batch: feed_input copied it (converted: ndd.batch, not a view
    that the next refill changes). The last batch is short (10 frames in 4s): the pipeline ran that
    iteration at 2 samples, so the coin flip draws 2, not batch_size."""
    import importlib.util

    import numpy as np

    from dali_migrate.engine import convert_source
    from dali_migrate.testing import assert_equivalent

    src = FRAMES.format(doc="Frames read into one preallocated buffer, refilled for every batch.")
    out = convert_source(src).output
    assert "ndd.batch(frames_data" in out and "batch_size=len(frames_data)" in out, out
    (tmp_path / "orig.py").write_text(src)
    (tmp_path / "conv.py").write_text(out)
    verdict = assert_equivalent(tmp_path / "orig.py", "FramePipe", against=tmp_path / "conv.py", iterations=3)
    assert verdict.iterations == 3
    # batches kept while later ones are drawn keep their own frames
    spec = importlib.util.spec_from_file_location("conv_frames", tmp_path / "conv.py")
    conv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conv)
    kept = [np.asarray(conv.ndd.as_tensor(frames)) for frames, _ in conv.FramePipe()]
    assert [int(frames[0, 0, 0, 0]) for frames in kept] == [0, 4, 8]
    assert [len(frames) for frames in kept] == [4, 4, 2]


# -- class methods (MLPerf's RNN-T pipelines: `from_config(cls, ...)`, called by other files) ------

FACTORY = '''
class P(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, root):
        super().__init__(batch_size, num_threads, device_id)
        self.input = ops.readers.File(file_root=root)
{init_extra}
    @classmethod
    def from_config(cls, cfg):
        return cls(cfg["bs"], 2, None, cfg["root"])

    def define_graph(self):
        jpegs, labels = self.input()
        return jpegs, labels
{after}'''


def test_a_class_method_nothing_here_calls_goes_with_the_class():
    # as other methods nothing in the file calls: another file that calls it imports the class,
    # which then stays (imported_elsewhere)
    out = classes(FACTORY.format(init_extra="", after=""))
    assert "dali-migrate:" not in out and "def P(" in out and "from_config" not in out


def test_a_class_method_called_here_keeps_the_class():
    out = classes(FACTORY.format(init_extra="", after="\n\ndef main(cfg):\n    pipe = P.from_config(cfg)\n    pipe.build()\n"))
    assert "class P(Pipeline)" in out
    assert "P is used here in a way dali-migrate cannot follow (`pipe = P.from_config(cfg)`)" in out


def test_a_class_method_the_class_calls_itself_keeps_the_class():
    out = classes(FACTORY.format(init_extra="        self.other = self.from_config({'bs': 1, 'root': root})\n", after=""))
    assert "class P(Pipeline)" in out
    assert "from_config(), a class method, is called by the class's own code" in out


def test_locals_passed_to_a_logging_helper_keeps_the_class():
    # MLPerf's RNN-T: `self._dali_init_log(locals())` in __init__ printed __init__'s arguments
    # (and self); in the converted function locals() would also hold ctx, seed, the reader...
    out = classes(FACTORY.format(
        init_extra="        self._log(locals())\n\n    @staticmethod\n    def _log(args):\n        print(sorted(args))\n",
        after=""))
    assert "class P(Pipeline)" in out
    assert "locals() would list the converted function's own names too" in out


def test_a_comment_carried_on_below_its_line_stays_with_its_operator():
    # DALI's SSD example: the second line of ops.Hsv's comment is, to libcst, a comment above the
    # next statement; both lines go above the call that replaces ops.Hsv's
    out = classes('''
    class P(Pipeline):
        def __init__(self, batch_size, num_threads, device_id):
            super().__init__(batch_size, num_threads, device_id)
            self.input = ops.readers.File(file_root="imgs")
            self.decode = ops.decoders.Image()
            self.hsv = ops.Hsv(dtype=types.FLOAT)  # use float to avoid clipping and
                                                   # quantizing the intermediate result
            # brightness next
            self.bc = ops.BrightnessContrast(contrast_center=128)  # input in 0..255

        def define_graph(self):
            jpegs, labels = self.input()
            images = self.hsv(self.decode(jpegs))
            return self.bc(images), labels
    ''')
    assert "dali-migrate:" not in out
    assert ("# use float to avoid clipping and\n                # quantizing the intermediate result\n"
            "                images = ndd.hsv(") in out
    assert "# brightness next\n                # input in 0..255\n                outputs = ndd.brightness_contrast(" in out


@pytest.mark.parametrize("init, test", [
    # asked once (an argument's attribute): the loop tests the branch
    ("            if cfg.color:\n                self.twist = ops.ColorTwist(saturation=0.5)\n", "branch == 0"),
    # a parameter: the condition itself, as define_graph's own `if dali_cpu:` would be
    ("            if color:\n                self.twist = ops.ColorTwist(saturation=0.5)\n", "color"),
    # (the else branch of `if not color:` is written as the opposite test)
    ("            if not color:\n                pass\n            else:\n                self.twist = ops.ColorTwist(saturation=0.5)\n",
     "color"),
])
def test_hasattr_of_an_operator_made_under_an_if_asks_the_same_choice(init, test):
    # dali-pytorch: `if hasattr(self, 'color'): images = self.color(images, ...)`
    out = classes(f'''
    class P(Pipeline):
        def __init__(self, batch_size, num_threads, device_id, cfg, color=True):
            super().__init__(batch_size, num_threads, device_id)
            self.input = ops.readers.File(file_root="imgs")
            self.decode = ops.decoders.Image()
{init}
        def define_graph(self):
            jpegs, labels = self.input()
            images = self.decode(jpegs)
            if hasattr(self, 'twist'):
                images = self.twist(images)
            return images, labels
    ''')
    assert "dali-migrate:" not in out and "hasattr" not in out, out
    assert re.search(rf"if {re.escape(test)}:\n +images = ndd.color_twist\(images, saturation=0.5\)", out), out


def test_hasattr_of_an_operator_made_in_one_of_several_branches_asked_again_is_marked():
    out = chosen('''
        if dali_cpu:
            self.twist = ops.ColorTwist(saturation=0.5)
        elif data_dir:
            pass
    ''', graph="        images = self.decode(jpegs) if False else jpegs\n        if hasattr(self, 'twist'):\n            images = self.twist(images)")
    assert "class P(Pipeline)" in out
    assert "asks whether one of several branches of __init__ made an operator" in out


OP_OR_NONE = '''
    class P(Pipeline):
        def __init__(self, batch_size, num_threads, device_id, cfg, color=None, train=True):
            super().__init__(batch_size, num_threads, device_id)
            self.train = train
            self.input = ops.readers.File(file_root="imgs")
            self.decode = ops.decoders.Image()
{init}
        def define_graph(self):
            jpegs, labels = self.input()
            images = self.decode(jpegs)
{graph}
            return images, labels
    '''


@pytest.mark.parametrize("init", [
    # MLPerf's RNN-T: the operator, or None in the other branch
    "            if color is not None:\n                self.twist = ops.ColorTwist(saturation=color)\n"
    "            else:\n                self.twist = None\n",
    # NVIDIA's MXNet ResNet-50 loader: the same as one expression
    "            self.twist = ops.ColorTwist(saturation=color) if color is not None else None\n",
    "            self.twist = None if color is None else ops.ColorTwist(saturation=color)\n",
])
@pytest.mark.parametrize("graph, expected", [
    ("            if self.twist is not None:\n                images = self.twist(images)",
     r"if color is not None:\n +images = ndd.color_twist\(images, saturation=color\)"),
    ("            if self.twist:\n                images = self.twist(images)",
     r"if color is not None:\n +images = ndd.color_twist\(images, saturation=color\)"),
    ("            if self.twist is None:\n                pass\n            else:\n                images = self.twist(images)",
     r"if color is None:\n +pass\n +else:\n +images = ndd.color_twist\(images, saturation=color\)"),
    # RNN-T's `if not self.train or self.speed_perturbation_coeffs is None:`: the else branch
    # runs only where the operator was made
    ("            if not self.train or self.twist is None:\n                images = images + 0\n"
     "            else:\n                images = self.twist(images)",
     r"if not train or color is None:\n +images = images \+ 0\n +else:\n +images = ndd.color_twist\(images, saturation=color\)"),
    ("            images = self.twist(images) if self.twist is not None else images",
     r"images = ndd.color_twist\(images, saturation=color\) if color is not None else images"),
])
def test_an_operator_or_none_is_asked_as_the_branch_that_made_it(init, graph, expected):
    out = classes(OP_OR_NONE.format(init=init, graph=graph))
    assert "dali-migrate:" not in out and "self" not in out, out
    assert re.search(expected, out), out


@pytest.mark.parametrize("init, graph, reason", [
    # a branch sets no self.twist at all: `self.twist is None` raises there
    ("            if color is not None:\n                self.twist = ops.ColorTwist(saturation=color)\n",
     "            if self.twist is not None:\n                images = self.twist(images)",
     "tests an operator __init__ chose under an `if`"),
    # where the test does not decide the branch, calling it may call None
    ("            self.twist = ops.ColorTwist(saturation=color) if color is not None else None\n",
     "            if self.train:\n                images = self.twist(images)",
     "which __init__ does not create when none of its conditions holds"),
    # the branch reads what it stored: no local holds it any more
    ("            if color is not None:\n                self.twist = ops.ColorTwist(saturation=color)\n"
     "            else:\n                self.twist = None\n                print(self.twist)\n",
     "            if self.twist is not None:\n                images = self.twist(images)",
     "reads self.twist after setting it to None"),
])
def test_an_operator_or_none_the_loop_cannot_decide_keeps_the_class(init, graph, reason):
    out = classes(OP_OR_NONE.format(init=init, graph=graph))
    assert "class P(Pipeline)" in out
    assert reason in out, out


def test_kwargs_passed_on_whole_to_a_base_taking_kwargs_convert():
    # nnUNet (NVIDIA DeepLearningExamples): TrainPipeline(GenericPipeline) passes **kwargs on
    out = classes('''
    class Generic(Pipeline):
        def __init__(self, batch_size, num_threads, device_id, **kwargs):
            super().__init__(batch_size, num_threads, device_id)
            self.root = kwargs["root"]
            self.input = ops.readers.File(file_root=self.root)

    class Train(Generic):
        def __init__(self, batch_size, num_threads, device_id, **kwargs):
            super().__init__(batch_size, num_threads, device_id, **kwargs)
            self.decode = ops.decoders.Image()

        def define_graph(self):
            jpegs, labels = self.input()
            return self.decode(jpegs), labels
    ''')
    assert re.search(r"def Train\(batch_size, num_threads, device_id, \*, seed=None, \*\*kwargs\)", out), out
    assert "dali-migrate:" not in out.split("def Train")[1], out
    assert "ndd.readers.File(file_root=root)" in out, out


@pytest.mark.parametrize("sub_init, reason", [
    # the dict is changed: the base got a copy of it, in one function it would be the same dict
    ("            kwargs.pop('extra', None)\n            super().__init__(batch_size, num_threads, device_id, **kwargs)\n",
     "is changed or bound again"),
    # what *args fills cannot be seen
    ("            super().__init__(batch_size, num_threads, device_id, *args)\n",
     "the base class's __init__ takes *args/**kwargs"),
])
def test_kwargs_the_base_would_not_see_as_written_keep_the_class(sub_init, reason):
    out = classes(f'''
    class Generic(Pipeline):
        def __init__(self, batch_size, num_threads, device_id, **kwargs):
            super().__init__(batch_size, num_threads, device_id)
            self.input = ops.readers.File(file_root=kwargs["root"])

    class Train(Generic):
        def __init__(self, batch_size, num_threads, device_id, *args, **kwargs):
{sub_init}
        def define_graph(self):
            jpegs, labels = self.input()
            return jpegs, labels
    ''')
    assert "class Train(Generic)" in out
    assert reason in out, out


@pytest.mark.parametrize("call, reason", [
    ('Train(2, 1, 0, root="x")', None),
    # seed= went into **kwargs, not to the pipeline; converted, it would seed the pipeline
    ('Train(2, 1, 0, root="x", seed=4)', "gets seed=, which goes into its __init__'s **kwargs"),
])
def test_keywords_a_class_takes_in_kwargs_reach_them_converted(call, reason):
    out = classes(f'''
    class Train(Pipeline):
        def __init__(self, batch_size, num_threads, device_id, **kwargs):
            super().__init__(batch_size, num_threads, device_id)
            self.input = ops.readers.File(file_root=kwargs["root"])

        def define_graph(self):
            jpegs, labels = self.input()
            return jpegs, labels


    def make():
        pipe = {call}
        pipe.build()
        return pipe.run()
    ''')
    if reason is None:
        assert "dali-migrate:" not in out and "def Train(" in out, out
        assert call in out
    else:
        assert "class Train(Pipeline)" in out and reason in out, out


DEFAULT_THEN_IF = '''
    class P(Pipeline):
        def __init__(self, batch_size, num_threads, device_id, unfused=False):
            super().__init__(batch_size, num_threads, device_id)
            self.input = ops.readers.File(file_root="imgs")
            self.decode = {default}
            self.crop = None
{between}
            if unfused:
                self.decode = ops.decoders.Image()
                self.crop = ops.Crop(crop=(16, 16))

        def define_graph(self):
            jpegs, labels = self.input()
            if self.crop is None:
                images = self.decode(jpegs)
            else:
                images = self.crop(self.decode(jpegs))
            return images, labels
    '''


def test_a_member_set_then_set_again_by_an_if_is_that_if_s_choice():
    # MLPerf's SSD (v0.7): `self.g_slice = None` then `if dali_cache > 0 and use_nvjpeg:` sets it
    out = classes(DEFAULT_THEN_IF.format(default="ops.decoders.ImageCrop(crop=(16, 16))", between=""))
    assert "dali-migrate:" not in out, out
    assert re.search(r"if not unfused:\n +images = ndd.decoders.image_crop\(jpegs, crop=\(16, 16\)\)\n +else:\n"
                     r" +images = ndd.crop\(ndd.decoders.image\(jpegs\), crop=\(16, 16\)\)", out), out


@pytest.mark.parametrize("default, between, reason", [
    # making the default calls something: where it ran (before the `if`, always) matters
    ("ops.decoders.ImageCrop(crop=pick())", "", "is set both under `if unfused:` and outside it"),
    # something reads the default before the `if` sets the member again
    ("ops.decoders.ImageCrop(crop=(16, 16))", "            self.first = self.decode\n",
     "uses self.decode, which cannot be followed"),
])
def test_a_default_that_cannot_move_into_the_if_keeps_the_class(default, between, reason):
    out = classes(DEFAULT_THEN_IF.format(default=default, between=between))
    assert "class P(Pipeline)" in out
    assert reason in out, out


def test_an_argument_given_where_the_operator_is_made_and_where_it_is_called_is_marked():
    # MLPerf RNN-T: ops.AudioDecoder(sample_rate=<rate or None>), called with sample_rate=<data>
    out = classes('''
    class P(Pipeline):
        def __init__(self, batch_size, num_threads, device_id, rate=None):
            super().__init__(batch_size, num_threads, device_id)
            self.input = ops.readers.File(file_root="imgs")
            self.coin = ops.random.CoinFlip()
            self.flip = ops.Flip(horizontal=rate)

        def define_graph(self):
            jpegs, labels = self.input()
            return self.flip(jpegs, horizontal=self.coin()), labels
    ''')
    assert "class P(Pipeline)" in out
    assert "ops.Flip gets horizontal= both where it is made and where define_graph calls it" in out, out
