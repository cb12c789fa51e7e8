import pytest
import re

from _helpers import convert, pipeline, unindented

SOURCES = '''
class Frames:
    def __iter__(self):
        yield [1]


def count(info):
    return [info.iteration]


def gen():
    yield [1]
'''



def es_pipeline(body: str, decorator: str = "@pipeline_def(batch_size=4)") -> str:
    import textwrap

    return convert(SOURCES + f"\n{decorator}\ndef p():\n" + textwrap.indent(textwrap.dedent(body), "    "))


def test_one_iterable_source_drives_the_loop_and_is_iterated_once():
    out = es_pipeline("x = fn.external_source(source=Frames(), layout='HWC')\nreturn fn.flip(x)\n")
    # Frames() is made when the pipeline is, as DALI makes it when it defines the graph
    assert "    source_2 = Frames()\n\n" in out and "return batches()" in out
    # `for` calls iter() once, as DALI does; iter(iter(source)) would call __iter__ twice
    assert "for source_data in source_2:" in out
    assert "ndd.batch(source_data, layout='HWC')" in out


def test_source_beside_a_reader_is_drawn_inside_the_reader_loop():
    out = es_pipeline(
        "jpegs, labels = fn.readers.file(file_root='d')\n"
        "b = fn.external_source(source=count, batch_info=True)\n"
        "return fn.decoders.image(jpegs) * b, labels\n"
    )
    assert "@pipeline_def" not in out
    reader_loop = out.index("for jpegs, labels in reader.next_epoch(")
    draw = out.index("source_data = next(source_iter, end)")
    assert reader_loop < draw < out.index("with ctx:")
    assert "if source_data is end:\nreturn" in unindented(out)
    # the source is made once, after the reader, before the loop
    assert out.index("reader = ndd.readers.File(") < out.index("source_iter = map(lambda i: source_2(types.BatchInfo(i, 0))") < reader_loop


def test_several_sources_are_all_drawn_before_the_end_is_decided():
    out = es_pipeline(
        "a = fn.external_source(source=Frames())\nb = fn.external_source(source=gen)\nreturn a, b\n"
    )
    first, second = out.index("source_data = next(source_iter, end)"), out.index("source_data_2 = next(source_iter_2, end)")
    assert first < second < out.index("if source_data is end or source_data_2 is end:\n")
    assert "if source_data is end or source_data_2 is end:\nreturn\n" in unindented(out)
    assert "source_iter_2 = source_3()" in out


def test_parallel_sources_are_drawn_first_as_a_pipeline_runs_them():
    out = es_pipeline(
        "a = fn.external_source(source=Frames())\nb = fn.external_source(source=count, parallel=True)\nreturn a, b\n"
    )
    assert out.index("next(source_iter, end)") < out.index("next(source_iter_2, end)")
    assert "source_2 = count" in out


def test_sources_sharing_a_name_are_left_to_a_person():
    out = es_pipeline("a = fn.external_source(source=count)\nb = fn.external_source(source=count)\nreturn a, b\n")
    assert "@pipeline_def" in out and "two sources use `count`" in out


def test_cycle_true_rewinds_and_draws_again():
    out = es_pipeline("return fn.external_source(source=Frames(), cycle=True)\n")
    assert "if source_data is end:\nsource_iter = iter(source_2)\nsource_data = next(source_iter, end)" in unindented(out)
    assert out.count("if source_data is end:") == 2


def test_cycle_quiet_with_a_generator_function_calls_it_again():
    out = es_pipeline('return fn.external_source(source=gen, cycle="quiet")\n')
    assert "source_iter = source_2()\nsource_data = next(source_iter, end)" in unindented(out)


def test_cycle_raise_rewinds_then_ends():
    out = es_pipeline('return fn.external_source(source=Frames(), cycle="raise")\n')
    assert "if source_data is end:\nsource_iter = iter(source_2)\nreturn" in unindented(out)


def test_cycle_no_is_no_cycle():
    out = es_pipeline('return fn.external_source(source=Frames(), cycle="no")\n')
    assert "for source_data in source_2:" in out


def test_cycle_with_a_callable_is_left_to_a_person():
    out = es_pipeline("return fn.external_source(source=count, cycle=True)\n")
    assert "@pipeline_def" in out and "cycle=...) with a callable source" in out


def test_cycle_not_a_literal_is_left_to_a_person():
    out = es_pipeline("return fn.external_source(source=Frames(), cycle=mode)\n")
    assert "@pipeline_def" in out and "not written as True/False/None" in out


def test_num_outputs_spreads_layout_and_dtype_as_dali_does():
    out = es_pipeline(
        "a, b, c = fn.external_source(source=Frames(), num_outputs=3, layout=['HWC', 'C'], dtype=types.UINT8)\nreturn a, b, c\n"
    )
    assert (
        "a, b, c = external_source_batch(source_data[0], types.UINT8, layout='HWC', copy=True), "
        "external_source_batch(source_data[1], types.UINT8, layout='C', copy=True), "
        "external_source_batch(source_data[2], types.UINT8, copy=True)"
    ) in out


def test_num_outputs_per_sample_takes_each_sample_s_item():
    out = es_pipeline("a, b = fn.external_source(source=count, batch=False, num_outputs=2)\nreturn a, b\n")
    assert "a, b = ndd.batch([sample[0] for sample in source_data]), ndd.batch([sample[1] for sample in source_data])" in out


def test_num_outputs_not_unpacked_is_left_to_a_person():
    out = es_pipeline("out = fn.external_source(source=Frames(), num_outputs=2)\nreturn out[0]\n")
    assert "@pipeline_def" in out and "unpacked on the spot" in out


def test_num_outputs_with_layout_from_a_variable_is_left_to_a_person():
    out = es_pipeline("a, b = fn.external_source(source=Frames(), num_outputs=2, layout=layouts)\nreturn a, b\n")
    assert "@pipeline_def" in out and "write it as a literal" in out


def test_source_made_from_setup_code_comes_after_it():
    out = es_pipeline("n = 3\nx = fn.external_source(source=Frames(n))\nreturn x\n")
    assert out.index("n = 3") < out.index("source_2 = Frames(n)")


def test_source_whose_name_is_assigned_again_later_is_left_to_a_person():
    out = es_pipeline("n = 3\nx = fn.external_source(source=Frames(n))\nn = 4\nreturn x + n\n")
    assert "@pipeline_def" in out and "assigned again after it" in out


def test_source_in_the_return_line_converts():
    out = pipeline("return fn.external_source(source=[[1], [2]])\n")
    assert "for source_data in source_2:" in out and "outputs = (ndd.batch(source_data),)" in out


def test_fed_from_outside_without_a_name_says_what_to_do():
    out = pipeline('x = fn.external_source(layout="HWC", dtype=types.UINT8)\nreturn fn.flip(x)\n')
    assert "@pipeline_def" in out
    assert "without name= is fed through its node" in out


def test_positional_source_converts_as_the_keyword_form():
    # DALI 2.4: external_source(source=None, num_outputs=None, *, ...)
    for by_keyword, by_position in [
        ("x = fn.external_source(source=Frames(), layout='HWC')", "x = fn.external_source(Frames(), layout='HWC')"),
        ("x = fn.external_source(source=count, batch_info=True)", "x = fn.external_source(count, batch_info=True)"),
        ("x, y = fn.external_source(source=gen, num_outputs=2)", "x, y = fn.external_source(gen, num_outputs=2)"),
        ("x, y = fn.external_source(source=gen, num_outputs=2)", "x, y = fn.external_source(gen, 2)"),
    ]:
        tail = "return x\n" if "y" not in by_keyword else "return x, y\n"
        expected = es_pipeline(by_keyword + "\n" + tail)
        assert "@pipeline_def" not in expected and "dali-migrate:" not in expected
        # the keyword `source=` takes the name `source` in the keyword form: fresh names differ only
        same_names = lambda text: re.sub(r"\b(source|source_iter|source_data)(_\d+)?\b", r"\1", text)  # noqa: E731
        assert same_names(es_pipeline(by_position + "\n" + tail)) == same_names(expected), by_position


def test_positional_num_outputs_must_be_unpacked_as_the_keyword_one():
    out = es_pipeline("xy = fn.external_source(gen, 2)\nreturn xy[0]\n")
    assert "@pipeline_def" in out and "num_outputs=2) is converted only where its outputs are unpacked" in out


def test_too_many_or_starred_positional_arguments_are_left_to_a_person():
    out = es_pipeline("x = fn.external_source(gen, 1, None)\nreturn x\n")
    assert "@pipeline_def" in out and "more positional arguments than it takes (source, num_outputs)" in out
    out = es_pipeline("x = fn.external_source(*sources)\nreturn x\n")
    assert "@pipeline_def" in out and "fn.external_source with *args/**kwargs" in out


def test_source_no_output_uses_is_left_to_a_person():
    # a pipeline prunes it and never calls its source
    out = es_pipeline("x = fn.external_source(source=gen)\ny = x * 2\nx = fn.random.uniform(shape=2)\nreturn x\n")
    assert "@pipeline_def" in out and "no pipeline output uses" in out


def test_source_used_through_a_rebinding_converts():
    out = es_pipeline("x = fn.external_source(source=gen)\nx = x * 2\nreturn x\n")
    assert "@pipeline_def" not in out and "for source_data in source_2():" in out


def test_module_level_source_object_says_to_make_it_in_the_pipeline():
    out = convert(SOURCES + "\neii = Frames()\n\n@pipeline_def(batch_size=4)\ndef p():\n    return fn.external_source(source=eii)\n")
    assert "@pipeline_def" in out and "the source `eii` is an object made at module level" in out
    assert "make it in the pipeline (source=Frames(...))" in out


PARAM_PIPE = '''
@pipeline_def(batch_size=3)
def p(input_data):
    np.random.seed(1234)
    inp = fn.external_source(input_data, batch=False, dtype=types.INT32)
    return fn.reshape(inp, shape=[5, 5])
'''


def param_pipeline(calls: str, pipe: str = PARAM_PIPE) -> str:
    return convert("import numpy as np\n" + SOURCES + pipe + "\n" + calls)


def test_parameter_source_takes_the_kind_its_calls_pass():
    out = param_pipeline("pipe = p(lambda: np.zeros(25, dtype=np.int32))\npipe.build()\nout = pipe.run()\n")
    assert "@pipeline_def" not in out and "dali-migrate:" not in out
    assert "source = input_data\n" in out
    # a lambda without parameters: one call per sample, with no SampleInfo
    assert "map(lambda i: [source() for j in range(batch_size)], itertools.count())" in out
    # seeded once, before the first sample is drawn, as the pipeline was when it was built
    assert out.index("np.random.seed(1234)") < out.index("source = input_data")


def test_parameter_source_from_a_function_with_a_parameter_gets_sample_info():
    out = param_pipeline("def sample(info):\n    return np.full(25, info.idx_in_epoch)\n\npipe = p(input_data=sample)\n")
    assert "dali-migrate:" not in out
    assert "source(types.SampleInfo(i * batch_size + j, j, i, 0))" in out


def test_parameter_source_with_calls_of_one_kind_converts():
    out = param_pipeline("def zeros():\n    return np.zeros(25)\n\na = p(zeros)\nb = p(lambda: np.ones(25))\n")
    assert "dali-migrate:" not in out and "@pipeline_def" not in out


def test_parameter_source_with_calls_of_different_kinds_is_left_to_a_person():
    # batch=False with a 0-argument lambda in one call, a 1-argument function in the other: DALI
    # passes SampleInfo to one only, the converted loop would call both alike
    out = param_pipeline("a = p(lambda: np.zeros(25))\nb = p(count)\n")
    assert "@pipeline_def" in out and ("whose calls pass sources of different kinds (`lambda: np.zeros(25)`, a callable of 0 "
                                       "arguments; `count`, a callable of 1 argument)") in out


def test_parameter_source_of_a_pipeline_passed_on_is_left_to_a_person():
    out = param_pipeline("import functools\nmake = functools.partial(p, lambda: np.zeros(25))\n")
    assert "@pipeline_def" in out
    assert "the source `input_data` is a parameter of p(), which is used here other than by calling it" in out


def test_parameter_source_of_a_pipeline_nothing_calls_is_left_to_a_person():
    out = param_pipeline("")
    assert "@pipeline_def" in out and "which nothing in this file calls" in out


def test_parameter_source_named_by_a_local_of_the_calling_function_is_left_to_a_person():
    # `gen` there is the function's parameter, not the module's generator function
    out = param_pipeline("def main(gen):\n    pipe = p(gen)\n    pipe.build()\n    return pipe.run()\n")
    assert "@pipeline_def" in out and "a call passes `gen`, a name of the function it is called in" in out


def test_parameter_source_assigned_in_the_pipeline_is_left_to_a_person():
    pipe = PARAM_PIPE.replace("    np.random.seed(1234)\n", "    input_data = wrap(input_data)\n")
    out = param_pipeline("pipe = p(lambda: np.zeros(25))\n", pipe)
    assert "@pipeline_def" in out and "assigned again in its body" in out


def test_parameter_source_passed_through_star_args_is_left_to_a_person():
    out = param_pipeline("sources = [lambda: np.zeros(25)]\npipe = p(*sources)\n")
    assert "@pipeline_def" in out and "p(...) is called with *args/**kwargs" in out


def test_parameter_source_not_passed_takes_the_default():
    pipe = PARAM_PIPE.replace("def p(input_data):", "def p(input_data=count):")
    out = param_pipeline("pipe = p()\n", pipe)
    assert "dali-migrate:" not in out and "source(types.SampleInfo(" in out
    out = param_pipeline("pipe = p()\n", PARAM_PIPE)
    assert "@pipeline_def" in out and "a call passes none" in out


def test_parameter_named_as_a_module_function_is_what_the_calls_pass():
    # `count` in the pipeline is its parameter: here a list of batches, not the module's count()
    pipe = "\n@pipeline_def(batch_size=1)\ndef p(count):\n    return fn.external_source(count)\n"
    out = param_pipeline("pipe = p([[np.zeros(2)], [np.ones(2)]])\n", pipe)
    assert "dali-migrate:" not in out
    assert "for source_data in source:" in out and "source = count\n" in out


# -- sources a function of the file makes: it defines a function and returns it --------------------

BATCH_PIPE = "\n@pipeline_def(batch_size=2)\ndef p(cb):\n    return fn.external_source(cb)\n"

REPLAY = """
def replay(batches):
    cached = list(batches)

    def source():
        while True:
            for batch in cached:
                yield batch

    return source
"""


def test_a_local_bound_to_a_factory_made_generator_function_is_called_once():
    calls = "def bench(batches):\n    source = replay(batches)\n    pipe = p(source)\n    pipe.build()\n    return pipe.run()\n"
    out = param_pipeline(REPLAY + "\n\n" + calls, BATCH_PIPE)
    assert "dali-migrate:" not in out and "@pipeline_def" not in out
    # DALI calls a generator function once and iterates its generator
    assert "for source_data in source_2():" in out


def test_a_factory_made_callable_gets_sample_info():
    factory = "def make(scale):\n    def sample(info):\n        return np.full(25, info.idx_in_epoch * scale)\n    return sample\n"
    out = param_pipeline(factory + "\n\ndef main():\n    source = make(2)\n    return p(source)\n")
    assert "dali-migrate:" not in out and "source_2(types.SampleInfo(i * batch_size + j, j, i, 0))" in out


def test_a_factory_called_in_the_pipeline_call_converts():
    out = param_pipeline(REPLAY + "\n\npipe = p(replay([[np.zeros(2)]]))\n", BATCH_PIPE)
    assert "dali-migrate:" not in out and "for source_data in source_2():" in out


FACTORY_MARKED = {
    # pipelines made in the loop would share one function, and what it closes over
    "made once, used in a loop": "def bench(b):\n    source = replay(b)\n    for w in (3, 5):\n        pipe = p(source)\n",
    "bound twice": "def bench(b, again):\n    source = replay(b)\n    if again:\n        source = replay(b)\n    return p(source)\n",
    "not a call": "def bench(b):\n    source = b\n    return p(source)\n",
}


def test_factory_forms_that_cannot_be_told_are_left_to_a_person():
    for key, calls in FACTORY_MARKED.items():
        out = param_pipeline(REPLAY + "\n\n" + calls, BATCH_PIPE)
        assert "@pipeline_def" in out and "a call passes `source`, a name of the function it is called in" in out, key


def test_a_factory_made_source_other_code_reads_is_left_to_a_person_saying_so():
    # other code of the function could draw from it too
    calls = "def bench(b):\n    source = replay(b)\n    print(source)\n    return p(source)\n"
    out = param_pipeline(REPLAY + "\n\n" + calls, BATCH_PIPE)
    assert "@pipeline_def" in out and "a call passes `source`: the source `source` is used by other code of the function" in out


def test_a_source_passed_by_keyword_of_its_own_name_is_read_once():
    # `cb=cb`: the keyword is no read of the variable
    calls = "def bench(b):\n    cb = replay(b)\n    pipe = p(cb=cb)\n    pipe.build()\n    return pipe.run()\n"
    out = param_pipeline(REPLAY + "\n\n" + calls, BATCH_PIPE)
    assert "dali-migrate:" not in out and "@pipeline_def" not in out


def test_a_factory_that_keeps_or_may_not_return_its_function_is_not_followed():
    kept = REPLAY.replace("    return source\n", "    REGISTRY.append(source)\n    return source\n")
    falls_off = REPLAY.replace("    return source\n", "    if cached:\n        return source\n")
    decorated = REPLAY.replace("    def source():", "    @functools.wraps(list)\n    def source():")
    for factory in (kept, falls_off, decorated):
        out = param_pipeline(factory + "\n\ndef bench(b):\n    source = replay(b)\n    return p(source)\n", BATCH_PIPE)
        assert "@pipeline_def" in out and "a name of the function it is called in" in out, factory


def test_a_factory_call_as_the_default_is_not_followed():
    # evaluated once, where the pipeline is defined: every pipeline made with it shares the function
    pipe = BATCH_PIPE.replace("def p(cb):", "def p(cb=replay([[1]])):")
    out = convert("import numpy as np\n" + REPLAY + pipe + "\npipe = p()\n")
    assert "@pipeline_def" in out and "cannot tell whether the source `replay([[1]])`" in out


# -- sources that are objects of the file's classes, made outside the pipeline --------------------

LOADER = '''
def loader(steps):
    class Synthetic(object):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            self.i = 0
            return self

        def __next__(self):
            if self.i >= self.n:
                raise StopIteration
            self.i += 1
            return [np.zeros(2)]

    eli = Synthetic(steps)
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=0)
    with pipe:
        pipe.set_outputs(fn.external_source(source=eli))
    {use}
'''
LOADER_HEADER = "import numpy as np\nimport nvidia.dali.fn as fn\nfrom nvidia.dali.pipeline import Pipeline\n"


def test_an_instance_of_a_class_the_function_defines_is_an_iterable():
    out = convert(LOADER.format(use="pipe.build()\n    return pipe.run()"), header=LOADER_HEADER)
    assert "dali-migrate:" not in out
    assert "source_2 = eli\n" in out and "for source_data in source_2:" in out


def test_an_instance_other_code_of_the_function_uses_is_left_to_a_person():
    # the pipeline drew prefetch_queue_depth batches ahead of what that code sees
    out = convert(LOADER.format(use="pipe.build()\n    print(eli.i)\n    return pipe.run()"), header=LOADER_HEADER)
    assert "with pipe:" in out and "the source `eli` is used by other code of the function" in out


def test_an_iterable_class_with_a_call_method_is_an_iterable_as_dali_tells_it():
    # DALI tries iter(source) before calling it: __call__ is never used
    both = LOADER.replace("        def __next__(self):", "        def __call__(self, info):\n            return [np.ones(2)]\n\n        def __next__(self):")
    out = convert(both.format(use="pipe.build()\n    return pipe.run()"), header=LOADER_HEADER)
    assert "dali-migrate:" not in out and "for source_data in source_2:" in out


def test_a_class_whose_call_yields_is_a_generator_function_even_if_iterable():
    # ...but a __call__ that is a generator function comes first
    gen = LOADER.replace("        def __next__(self):", "        def __call__(self):\n            yield [np.ones(2)]\n\n        def __next__(self):")
    out = convert(gen.format(use="pipe.build()\n    return pipe.run()"), header=LOADER_HEADER)
    assert "dali-migrate:" not in out and "for source_data in source_2():" in out


def test_an_instance_bound_twice_cannot_be_told():
    out = convert(LOADER.format(use="pipe.build()\n    eli = None\n    return pipe.run()"), header=LOADER_HEADER)
    assert "with pipe:" in out and "cannot tell whether the source `eli`" in out


def test_a_class_that_binds_a_protocol_method_by_assignment_is_left_to_a_person():
    body = SOURCES.replace("class Frames:\n", "class Frames:\n    __call__ = print\n\n")
    out = convert(body + "\n@pipeline_def(batch_size=4)\ndef p():\n    return fn.external_source(source=Frames())\n")
    assert "@pipeline_def" in out and "its class binds __call__ by assignment" in out


def test_a_module_level_instance_is_the_kind_of_its_class_where_an_iterator_drives_the_pipeline():
    src = (
        SOURCES + "\neii = Frames()\n\n@pipeline_def(batch_size=4)\ndef p():\n    return fn.external_source(source=eii)\n\n\n"
        "from nvidia.dali.plugin.pytorch import DALIGenericIterator\n"
        "pipe = p()\nloader = DALIGenericIterator(pipe, ['x'])\n"
    )
    out = convert(src)
    assert "dali-migrate:" not in out
    assert "source_iter = iter(source_2)" in out and "source_2 = eii\n" in out


WITH_PIPE_FACTORY = '''
import nvidia.dali.fn as fn
from nvidia.dali.pipeline import Pipeline


class Frames:
    def __iter__(self):
        yield [1]


def build(batch_size, external_data):
    pipe = Pipeline(batch_size, 1, 0)
    with pipe:
        pipe.set_outputs(fn.external_source(source=external_data))
    return pipe

'''


def test_a_source_the_pipeline_builder_takes_has_the_kind_its_callers_pass():
    out = convert(WITH_PIPE_FACTORY + "pipe = build(4, Frames())\npipe.build()\nout = pipe.run()\n", header="")
    assert "dali-migrate:" not in out and "source_2 = external_data\n" in out
    out = convert(WITH_PIPE_FACTORY + "pipe = build(4, Frames())\npipe.build()\nout = pipe.run()\nother = build(4, lambda: [1])\n", header="")
    assert "with pipe:" in out and "the source `external_data` is a parameter of build(), whose calls pass sources of different kinds" in out


def test_a_source_object_made_in_the_return_line_is_made_once():
    # the source argument is this rule's: not also a call evaluated once before the loop
    out = es_pipeline("return fn.external_source(source=Frames())\n")
    assert out.count("Frames()") == 1 and "evaluated once" not in out


def _device_param_pipeline(body: str) -> str:
    import textwrap

    return convert(SOURCES + "\n@pipeline_def(batch_size=4)\ndef p(device='gpu'):\n" + textwrap.indent(textwrap.dedent(body), "    "))


def test_device_from_a_parameter_goes_to_as_batch_as_written():
    # the generator keeps the parameter: as_batch gets the value the pipeline got
    out = _device_param_pipeline("x = fn.external_source(source=gen, device=device)\nreturn x\n")
    assert "def p(device='gpu', *, batch_size=4," in out
    assert "ndd.batch(source_data, device=device)" in out


def test_device_from_a_parameter_the_pipeline_assigns_is_left_to_a_person():
    out = _device_param_pipeline("device = 'cpu' if device == 'cpu' else 'gpu'\nx = fn.external_source(source=gen, device=device)\nreturn x\n")
    assert "fn.external_source(device=...) neither a string literal nor a parameter of the pipeline function" in out


def test_device_from_another_expression_is_left_to_a_person():
    out = _device_param_pipeline("x = fn.external_source(source=gen, device=device.lower())\nreturn x\n")
    assert "fn.external_source(device=...) neither a string literal nor a parameter of the pipeline function" in out


# -- a source made in the graph by a factory of the file ----------------------------------------

FACTORY = '''
import nvidia.dali.pickling as dali_pickle


{decorator}
def make_callback(n):
    def callback(info):
        return np.array([info.idx_in_epoch % n])

    return callback
'''


def test_a_factory_call_in_the_graph_is_followed_to_the_function_it_returns():
    for decorator in ("", "@dali_pickle.pickle_by_value"):
        src = "import numpy as np\n" + FACTORY.format(decorator=decorator) + (
            "\n@pipeline_def(batch_size=4)\ndef p():\n"
            "    return fn.external_source(source=make_callback(5), batch=False, parallel=True)\n\npipe = p()\n")
        out = convert(src)
        assert "dali-migrate:" not in out, out
        assert "source_2 = make_callback(5)" in out
        assert "source_2(types.SampleInfo(i * batch_size + j, j, i, 0))" in out  # called per sample


def test_a_factory_with_another_decorator_is_not_followed():
    src = "import numpy as np\nimport functools\n" + FACTORY.format(decorator="@functools.lru_cache") + (
        "\n@pipeline_def(batch_size=4)\ndef p():\n"
        "    return fn.external_source(source=make_callback(5), batch=False)\n\npipe = p()\n")
    out = convert(src)
    assert "@pipeline_def" in out and "cannot tell whether the source `make_callback(5)`" in out


def test_iterable_and_callable_sources_give_what_dali_gives(tmp_path):
    """The kinds above, run: the pipeline and its conversion give the same batches."""
    pytest = __import__("pytest")
    pytest.importorskip("nvidia.dali")
    import numpy as np
    from _modules import load_source

    calls = "        def __call__(self{params}):\n            {body}\n\n        def __next__(self):"
    variants = {
        "iterable": calls.format(params=", info", body="return [np.ones(2)]"),
        "generator": calls.format(params="", body="yield [np.full(2, 7.0)]"),
    }
    for key, call in variants.items():
        src = LOADER_HEADER + LOADER.replace("        def __next__(self):", call).replace(
            "return [np.zeros(2)]", "return [np.full(2, 3.0)]").replace("device_id=0", "device_id=None").format(
            use="pipe.build()\n    return pipe.run()")
        out = convert(src, header="")
        assert "dali-migrate:" not in out, key
        (want,) = load_source(tmp_path, f"original_{key}", src).loader(3)
        (got,) = load_source(tmp_path, f"converted_{key}", out).loader(3)
        assert np.array_equal(want.as_array(), np.stack([np.asarray(got.select(i)) for i in range(got.batch_size)])), key
        assert want.as_array()[0, 0] == (3.0 if key == "iterable" else 7.0)


DTYPE_CHECKED = '''
import numpy as np


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def typed(dtype):
    return fn.external_source(source=lambda: np.arange(6, dtype=np.float32).reshape(2, 3), dtype=dtype)


def first(dtype_name):
    pipe = typed(getattr(types, dtype_name))
    pipe.build()
    try:
        (out,) = pipe.run()
    except RuntimeError as e:
        return "raised", "expected data of type" in str(e)
    return str(out.dtype), np.asarray(out.as_tensor()).tolist()
'''


def test_dtype_is_checked_as_the_pipeline_checks_it_not_converted(tmp_path):
    """external_source(dtype=X) checks the data's type (a float32 source with dtype=FLOAT16 fails
    the run); ndd.as_batch(dtype=X) would convert it and go on."""
    import pytest

    pytest.importorskip("nvidia.dali")
    from _helpers import HEADER, run_both
    from dali_migrate.engine import convert_source

    src = HEADER + DTYPE_CHECKED
    out = convert_source(src).output
    assert "@pipeline_def" not in out and "external_source_batch(" in out and "# dali-migrate" not in out
    want, got = run_both(tmp_path, src, out, "first", "FLOAT")
    assert want == got == ("DALIDataType.FLOAT", [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    (tmp_path / "b").mkdir()
    want, got = run_both(tmp_path / "b", src, out, "first", "FLOAT16")
    assert want == got == ("raised", True)


REUSED_BUFFER = """\
import numpy as np
from nvidia.dali import fn, pipeline_def


class Reuse:
    def __init__(self):
        self.buf = [np.zeros((2,), dtype=np.int32), np.zeros((2,), dtype=np.int32)]

    def __call__(self, i):
        for k, b in enumerate(self.buf):
            b[:] = i * 10 + k
        return self.buf


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def reuse_pipe({params}):
    x = fn.external_source(source=Reuse(){extra})
    return x, x * 2


def kept():
    pipe = reuse_pipe()
    pipe.build()
    outs = [pipe.run() for _ in range(3)]
    return [[np.asarray(t).tolist() for t in o[0]] for o in outs]
"""


def test_a_sources_batch_is_copied_as_the_pipeline_copies_it(tmp_path):
    """DALI copies what a source returns unless no_copy=True: a source that fills one buffer again
    for each batch must not change the batches already handed out."""
    from _helpers import run_both

    src = REUSED_BUFFER.format(params="", extra="")
    out = convert(src)
    assert "ndd.batch(source_data)" in out and "as_batch" not in out
    want, got = run_both(tmp_path, src, out, "kept")
    assert want == got == [[[0, 0], [1, 1]], [[10, 10], [11, 11]], [[20, 20], [21, 21]]]
    no_copy = convert(REUSED_BUFFER.format(params="", extra=", no_copy=True"))
    assert "ndd.as_batch(source_data)" in no_copy


SHORT_LAST_BATCH = """\
import numpy as np
from nvidia.dali import fn, pipeline_def, types


class ExternalInputIterator:
    def __init__(self, batch_size, n):
        self.batch_size, self.n = batch_size, n

    def __iter__(self):
        self.i = 0
        return self

    def __next__(self):
        if self.i >= self.n:
            raise StopIteration
        batch = []
        for _ in range(self.batch_size):
            if self.i >= self.n:
                break
            batch.append(np.full((2, 2, 3), self.i, dtype=np.uint8))
            self.i += 1
        return batch


@pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3)
def mirror_pipe():
    images = fn.external_source(source=ExternalInputIterator(2, 3), layout="HWC")
    flip = fn.random.coin_flip()
    return fn.crop_mirror_normalize(images, mirror=flip, dtype=types.UINT8), flip


def sizes():
    pipe = mirror_pipe()
    pipe.build()
    seen = []
    while True:
        try:
            images, flips = pipe.run()
        except StopIteration:
            return seen
        seen.append((len([np.asarray(t) for t in images]), len([np.asarray(t) for t in flips])))
"""


def test_a_sources_short_last_batch_sizes_the_operators_that_make_a_batch(tmp_path):
    """A pipeline runs each iteration at the size of the batch its source gave: the last one of
    three samples in twos has one sample, and one coin flip. Given batch_size, the converted coin
    flip drew two (and crop_mirror_normalize raised on the mismatch)."""
    from _helpers import run_both

    out = convert(SHORT_LAST_BATCH)
    assert "source_batch_size = len(source_data)" in out
    assert "ndd.random.coin_flip(batch_size=source_batch_size, rng=rng)" in out
    want, got = run_both(tmp_path, SHORT_LAST_BATCH, out, "sizes")
    assert want == got == [(2, 2), (1, 1)]


def test_a_source_made_from_a_class_the_calling_function_defines_converts():
    # a tutorial's demo function: `class MetadataSource:` defined in it, then an instance passed on
    local = ("def main():\n    class Source:\n        def __init__(self, n):\n            self.n = n\n\n"
             "        def __call__(self, info):\n            return np.full(25, info.idx_in_epoch * self.n)\n\n"
             "    src = Source(2)\n    pipe = p(src)\n    pipe.build()\n    return pipe.run()\n")
    out = param_pipeline(local)
    assert "dali-migrate:" not in out and "@pipeline_def" not in out, out
    assert "types.SampleInfo(" in out, out
    # an iterable in one call, a callable in another: the converted loop could not treat both alike
    other = local.replace("def main():", "def other():").replace("        def __call__(self, info):\n            return np.full(25, info.idx_in_epoch * self.n)\n",
                                                                 "        def __iter__(self):\n            return iter([np.zeros(25)])\n")
    out = param_pipeline(local + "\n\n" + other)
    assert "whose calls pass sources of different kinds (`src`, a callable of 1 argument; `src`, an iterable)" in out, out


MODULE_SOURCE_SCRIPT = '''
import numpy as np
import nvidia.dali.fn as fn
from nvidia.dali.pipeline import Pipeline


class Counter(object):
    def __init__(self, batch_size):
        self.batch_size = batch_size

    def __iter__(self):
        self.i = 0
        return self

    def __next__(self):
        self.i += 1
        return [np.full((2,), self.i, dtype=np.uint8)] * self.batch_size


eii = Counter(3)
pipe = Pipeline(batch_size=3, num_threads=1, device_id=None)
with pipe:
    pipe.set_outputs(fn.external_source(source=eii) * 2)
pipe.build()
seen = [pipe.run()[0].as_array().tolist() for _ in range(4)]
'''


def test_a_module_level_source_object_that_one_pipeline_made_once_alone_reads_converts():
    # (DALI's external-source example: nothing else sees when the pipeline draws from it)
    out = convert(MODULE_SOURCE_SCRIPT, header="")
    assert "dali-migrate:" not in out and "source_2 = eii\n" in out


def test_a_module_level_source_object_in_a_main_block_converts():
    body = MODULE_SOURCE_SCRIPT.split("\neii = ")[1]
    src = MODULE_SOURCE_SCRIPT.split("\neii = ")[0] + '\nif __name__ == "__main__":\n' + "".join(
        "    " + line if line.strip() else line for line in ("eii = " + body).splitlines(keepends=True))
    out = convert(src, header="")
    assert "dali-migrate:" not in out and "    source_2 = eii\n" in out


def test_a_module_level_source_object_other_code_reads_is_left_to_a_person():
    out = convert(MODULE_SOURCE_SCRIPT.replace("seen = [", "print(eii.batch_size)\nseen = ["), header="")
    assert "the source `eii` is an object made at module level" in out


def test_a_module_level_source_object_of_a_pipeline_made_twice_or_in_a_loop_is_left_to_a_person():
    src = SOURCES + "\neii = Frames()\n\n@pipeline_def(batch_size=4)\ndef p():\n    return fn.external_source(source=eii)\n\n\n"
    twice = convert(src + "a = p()\na.build()\nb = p()\nb.build()\nx = a.run()\ny = b.run()\n")
    assert "the source `eii` is an object made at module level" in twice
    looped = convert(src + "for _ in range(2):\n    a = p()\n    a.build()\n    x = a.run()\n")
    assert "the source `eii` is an object made at module level" in looped
    once = convert(src + "a = p()\na.build()\nx = a.run()\n")
    assert "dali-migrate:" not in once


def test_a_module_level_source_object_another_file_imports_is_left_to_a_person():
    from dali_migrate.engine import convert_source

    out = convert_source(MODULE_SOURCE_SCRIPT, used_elsewhere={"eii": "other.py:1 (`from script import eii`)"}).output
    assert "the source `eii` is an object made at module level" in out


def test_a_module_level_source_object_gives_the_pipeline_s_batches(tmp_path):
    pytest.importorskip("nvidia.dali")
    from _modules import load_source

    out = convert(MODULE_SOURCE_SCRIPT, header="")
    want = load_source(tmp_path, "original", MODULE_SOURCE_SCRIPT).seen
    got = load_source(tmp_path, "converted", out).seen
    assert want == got == [[[2 * i, 2 * i]] * 3 for i in range(1, 5)]


def test_a_module_level_source_object_above_a_main_block_that_makes_the_pipeline_converts():
    head, tail = MODULE_SOURCE_SCRIPT.split("\npipe = Pipeline(")
    src = head + '\nif __name__ == "__main__":\n' + "".join(
        "    " + line if line.strip() else line for line in ("pipe = Pipeline(" + tail).splitlines(keepends=True))
    out = convert(src, header="")
    assert "dali-migrate:" not in out and "        source_2 = eii\n" in out
    # made in the block before the object is bound: the original fails (NameError); not converted
    late = src.replace("\neii = Counter(3)\n", "\n") + "eii = Counter(3)\n"
    assert "the source `eii` is an object made at module level" in convert(late, header="")
