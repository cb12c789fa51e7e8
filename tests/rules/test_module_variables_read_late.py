"""A module-level pipeline reads module variables when it is made. The converted function reads
those its graph reads every iteration, in the loop: a name bound again after the def (or by a
function, `global`) may hold another value by then, so such a pipeline stays, with a marker naming
the variable (call_sites._read_late). Those read only when the pipeline is made (a reader's
arguments) are read when the converted function is called, as the pipeline read them (the eager
form, rules/pipeline_def.py), and convert."""

import textwrap
from pathlib import Path

import pytest

from dali_migrate.device_cpu import to_cpu
from dali_migrate.engine import convert_source

LATE = "a module variable that is assigned again after the pipeline function is defined"

PIPE = """\
from nvidia.dali import fn, pipeline_def

SHUFFLE = True


@pipeline_def(num_threads=2, device_id=None, seed=3)
def pipe_fn(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader")
    return jpegs, labels * (2 if SHUFFLE else 1)
"""


def convert(tail: str):
    r = convert_source(PIPE + textwrap.dedent(tail))
    return r.output, [m.reason for m in r.markers]


def test_a_variable_bound_again_between_making_and_running_is_marked():
    out, reasons = convert("""
        def first_labels(root):
            pipe = pipe_fn(root, batch_size=4)
            pipe.build()
            return pipe.run()


        SHUFFLE = False
    """)
    assert any("`SHUFFLE`" in r and LATE in r for r in reasons), reasons
    assert "pipe.build()" in out


def test_a_variable_a_function_declares_global_is_marked():
    out, reasons = convert("""
        def no_shuffle():
            global SHUFFLE
            SHUFFLE = False


        def first_labels(root):
            pipe = pipe_fn(root, batch_size=4)
            pipe.build()
            return pipe.run()
    """)
    assert any("`SHUFFLE`" in r and LATE in r for r in reasons), reasons


@pytest.mark.parametrize("header", [
    "import types\nimport nvidia.dali.types as types\n",  # bound twice, both before the def
    "import nvidia.dali.fn as fn\nfrom nvidia.dali import fn\n",  # the same module twice
])
def test_names_bound_only_before_the_def_or_to_the_same_module_convert(header):
    r = convert_source(header + PIPE + textwrap.dedent("""
        def first_labels(root):
            pipe = pipe_fn(root, batch_size=4)
            pipe.build()
            return pipe.run()
    """))
    assert not [m.reason for m in r.markers], r.output
    assert "pipe.build()" not in r.output


def test_a_class_defined_once_after_the_pipeline_converts():
    # (its one binding runs while the module loads, before any function makes the pipeline)
    r = convert_source(PIPE.replace("return jpegs, labels * (2 if SHUFFLE else 1)", "return jpegs, (labels if Later else labels)") + textwrap.dedent("""
        def first_labels(root):
            pipe = pipe_fn(root, batch_size=4)
            pipe.build()
            return pipe.run()


        class Later:
            pass
    """))
    assert not [m.reason for m in r.markers], r.output


def test_the_marked_case_did_differ(fixture_data, tmp_path):
    # what converting it would have done: the converted loop reads SHUFFLE every iteration, after
    # the module bound it again, and gives other labels than the pipeline
    from nvidia.dali import fn, pipeline_def

    root = str(fixture_data / "images")

    @pipeline_def(num_threads=2, device_id=None, seed=3)
    def made_with(shuffle):
        _, labels = fn.readers.file(file_root=root, name="Reader")
        return labels * (2 if shuffle else 1)

    def first(shuffle):
        p = made_with(shuffle, batch_size=8)
        p.build()
        return [int(x) for x in to_list(p.run()[0])]

    assert first(True) != first(False)


def to_list(tl):
    import numpy as np

    return [np.asarray(tl[i]).item() for i in range(len(tl))]


def test_the_same_literal_bound_again_converts_and_another_does_not():
    # (a notebook's cells: `SHUFFLE = True` once more binds what the pipeline read)
    tail = """
        def first_labels(root):
            pipe = pipe_fn(root, batch_size=4)
            pipe.build()
            return pipe.run()


        SHUFFLE = {value}
    """
    _, same = convert(tail.format(value="True"))
    _, other = convert(tail.format(value="False"))
    assert same == []
    assert any("`SHUFFLE`" in r and LATE in r for r in other), other


def test_a_variable_a_module_level_for_loop_binds_is_marked():
    # (each turn makes a pipeline with the loop's value; the converted generator would read the
    # value the loop holds when it first runs)
    _, reasons = convert("""
        labels = []
        for SHUFFLE in (True, False):
            pipe = pipe_fn("data", batch_size=4)
            pipe.build()
            labels.append(pipe.run())
    """)
    assert any("`SHUFFLE`" in r and LATE in r for r in reasons), reasons


ARGS_PIPE = """\
import argparse

from nvidia.dali import fn, pipeline_def


@pipeline_def(num_threads=2, device_id=None, seed=3)
def pipe_fn():
    jpegs, labels = fn.readers.file(file_root=args.data, name="Reader")
    return jpegs, labels * (2 if args.shuffle else 1)


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("--shuffle", action="store_true")
    return parser.parse_args()
"""

MAIN = """
    def main():
        global args
        args = parse()
        pipe = pipe_fn(batch_size=4)
        pipe.build()
        for _ in range(3):
            print(pipe.run())


    if __name__ == "__main__":
        main()
"""


def test_a_training_scripts_global_args_set_once_in_main_converts():
    # (main() binds args once, at its top, before it makes any pipeline, and runs once: the
    # generator reads the args the pipeline read)
    r = convert_source(ARGS_PIPE + textwrap.dedent(MAIN))
    assert not [m.reason for m in r.markers], r.output
    assert "pipe.build()" not in r.output


@pytest.mark.parametrize("change", [
    # main() runs twice: a pipeline of the first run may first run after the second binds args
    ("        main()\n", "        main()\n        main()\n"),
    # bound in a loop of main(): more than once
    ("        args = parse()\n", "        for _ in range(2):\n            args = parse()\n"),
    # bound after the pipeline is made
    ("        pipe.build()\n", "        pipe.build()\n        args = parse()\n"),
    # bound in a branch (not surely before)
    ("        args = parse()\n", "        if True:\n            args = parse()\n"),
    # the pipeline is made by another function too
    ("    if __name__", "    def other():\n        return pipe_fn(batch_size=2)\n\n\n    if __name__"),
    # the module binds args again after main() runs
    ("        main()\n", "        main()\n        args = None\n"),
    # another function declares it global as well
    ("    if __name__", "    def reset():\n        global args\n        args = None\n\n\n    if __name__"),
    # args is deleted after the pipeline is made
    ("        pipe.build()\n", "        pipe.build()\n        del args\n"),
    # main() is called in a loop
    ("        main()\n", "        for _ in range(2):\n            main()\n"),
])
def test_global_args_not_surely_set_once_before_is_marked(change):
    old, new = change
    assert old in MAIN
    r = convert_source(ARGS_PIPE + textwrap.dedent(MAIN.replace(old, new)))
    reasons = [m.reason for m in r.markers]
    assert any("`args`" in x and LATE in x for x in reasons), (reasons, r.output)


def test_a_pipeline_class_reading_global_args_in_init_converts():
    # (imagenet training scripts: the reader's shard comes from args, which main() sets first)
    r = convert_source(textwrap.dedent("""\
        import argparse

        import nvidia.dali.ops as ops
        from nvidia.dali.pipeline import Pipeline


        class TrainPipe(Pipeline):
            def __init__(self, batch_size, num_threads, device_id, data_dir):
                super().__init__(batch_size, num_threads, device_id, seed=12)
                self.input = ops.readers.File(file_root=data_dir, shard_id=args.local_rank,
                                              num_shards=args.world_size, random_shuffle=True)

            def define_graph(self):
                jpegs, labels = self.input(name="Reader")
                return jpegs, labels


        def main():
            global args
            parser = argparse.ArgumentParser()
            parser.add_argument("data")
            parser.add_argument("--local_rank", type=int, default=0)
            parser.add_argument("--world_size", type=int, default=1)
            args = parser.parse_args()
            pipe = TrainPipe(8, 2, None, args.data)
            pipe.build()
            print(pipe.run())


        if __name__ == "__main__":
            main()
    """))
    assert not [m.reason for m in r.markers], r.output
    assert "class TrainPipe" not in r.output


def test_a_star_import_at_the_top_binds_once_and_the_usual_checks_still_apply():
    # (before: any star import in the module switched the check off, and a function that rebinds
    # the variable (`global`) between making and running went through)
    star = "from os.path import *\n"
    r = convert_source(star + PIPE + textwrap.dedent("""
        def first_labels(root):
            pipe = pipe_fn(root, batch_size=4)
            pipe.build()
            return pipe.run()
    """))
    assert not r.markers, r.output
    r = convert_source(star + PIPE + textwrap.dedent("""
        def no_shuffle():
            global SHUFFLE
            SHUFFLE = False


        def first_labels(root):
            pipe = pipe_fn(root, batch_size=4)
            pipe.build()
            no_shuffle()
            return pipe.run()
    """))
    assert any("`SHUFFLE`" in m.reason and LATE in m.reason for m in r.markers), r.output


@pytest.mark.parametrize("where", ["after", "loop"])
def test_a_star_import_after_the_pipeline_function_or_in_a_loop_is_marked(where):
    star = "from settings import *\n"
    head, tail = ("", star) if where == "after" else ("for _ in range(2):\n    " + star, "")
    r = convert_source(head + PIPE + "\n\n" + tail + textwrap.dedent("""
        def first_labels(root):
            pipe = pipe_fn(root, batch_size=4)
            pipe.build()
            return pipe.run()
    """))
    assert any("from settings import *" in m.reason and "may bind any name its graph reads" in m.reason
               for m in r.markers), r.output


def test_global_args_bound_once_at_module_level_and_only_changed_in_attributes_converts():
    # (Hurricane-Nas and NVIDIA's ResNet-50 scripts: `args = parser.parse_args()` at module level
    # after the pipeline classes, and main() declares `global args` only to set its attributes:
    # nothing binds args again, so the generator reads the object the pipeline read)
    tail = """
        args = parse()


        def main():
            global args
            args.shuffle = not args.shuffle
            pipe = pipe_fn(batch_size=4)
            pipe.build()
            print(pipe.run())


        if __name__ == "__main__":
            main()
    """
    r = convert_source(ARGS_PIPE + textwrap.dedent(tail))
    assert not [m.reason for m in r.markers], r.output
    # the same function binding it after making the pipeline keeps the pipeline
    r = convert_source(ARGS_PIPE + textwrap.dedent(tail.replace("pipe.build()\n", "pipe.build()\n            args = parse()\n")))
    assert any("`args`" in m.reason and LATE in m.reason for m in r.markers), r.output


READER_PIPE = """\
from nvidia.dali import fn, pipeline_def

SHUFFLE = True


@pipeline_def(num_threads=2, device_id=None, seed=3)
def pipe_fn(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=SHUFFLE, name="Reader")
    return labels


def first_labels(root):
    pipe = pipe_fn(root, batch_size=8)
    pipe.build()
    return pipe


SHUFFLE = False
"""


def test_a_variable_only_a_reader_reads_is_read_when_the_pipeline_is_made():
    # (DALI's numpy-reader and LMDB notebooks: `files` / `db_folder` bound again in a later cell)
    r = convert_source(READER_PIPE)
    assert not r.markers, r.output
    assert "# the code above runs when the pipeline is made, as in pipeline mode" in r.output
    head = r.output.split("def batches():")[0]
    assert "random_shuffle=SHUFFLE" in head  # the reader is made before the generator


def test_the_reader_gets_the_value_bound_when_the_pipeline_was_made(fixture_data, tmp_path):
    # made while SHUFFLE is True, run after the module bound it to False: each side gives what it
    # gives when nothing is bound again (shuffled), not the files in order
    from _modules import load_source

    root = str(fixture_data / "images")
    original = load_source(tmp_path, "original", READER_PIPE)
    converted = load_source(tmp_path, "converted", convert_source(READER_PIPE).output)
    for mod, first in ((original, lambda p: p.run()[0]), (converted, lambda g: next(g)[0])):
        orders = []
        for rebind in (True, False):
            mod.SHUFFLE = True
            made = mod.first_labels(root)
            if rebind:
                mod.SHUFFLE = False
            orders.append([int(x.item()) for x in to_list_any(first(made))])
        mod.SHUFFLE = False
        in_order = [int(x.item()) for x in to_list_any(first(mod.first_labels(root)))]
        assert orders[0] == orders[1] != in_order, mod.__name__


def to_list_any(batch):
    import numpy as np

    if hasattr(batch, "select"):
        return [np.asarray(batch.select(i)) for i in range(batch.batch_size)]
    return [np.asarray(batch[i]) for i in range(len(batch))]
