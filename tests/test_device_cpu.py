"""dali_migrate.device_cpu.to_cpu: GPU placements become CPU ones, nothing else changes."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from dali_migrate.device_cpu import to_cpu


def _cpu(src: str) -> str:
    return to_cpu(textwrap.dedent(src))


def test_device_kwargs_become_cpu():
    src = 'a = fn.decoders.image(j, device="mixed")\nb = fn.resize(a, device=\'gpu\', size=3)\nc = fn.flip(b, device="cpu")\n'
    assert to_cpu(src) == 'a = fn.decoders.image(j, device="cpu")\nb = fn.resize(a, device=\'cpu\', size=3)\nc = fn.flip(b, device="cpu")\n'


def test_gpu_calls_removed():
    assert to_cpu("out = images.gpu(), labels.gpu()\n") == "out = images, labels\n"
    assert to_cpu("x = fn.flip(images.gpu(), horizontal=1)\n") == "x = fn.flip(images, horizontal=1)\n"
    assert to_cpu("x = (a + b).gpu()\n") == "x = (a + b)\n"
    assert to_cpu("x = a.gpu().cpu()\n") == "x = a.cpu()\n"


def test_gpu_with_arguments_is_left():
    assert to_cpu("x = batch.gpu(1)\n") == "x = batch.gpu(1)\n"


def test_pipeline_def_and_constructor_device_id():
    src = """\
    @pipeline_def(batch_size=4, num_threads=2, device_id=0)
    def p(root):
        return fn.readers.file(file_root=root)

    pipe = p("/data", device_id=args.local_rank)
    other = Pipeline(batch_size=2, num_threads=1, device_id=1)
    """
    assert _cpu(src) == textwrap.dedent(src).replace("device_id=0", "device_id=None").replace(
        "device_id=args.local_rank", "device_id=None"
    ).replace("device_id=1", "device_id=None")


def test_dynamic_mode_code():
    src = """\
    def p(root, *, batch_size=4, num_threads=2, device_id=0, seed=None):
        ctx = ndd.EvalContext(device_id=device_id)
        reader = ndd.readers.File(file_root=root)
        while True:
            for jpegs, labels in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    images = ndd.decoders.image(jpegs, device="gpu")
                    outputs = images, labels.gpu()
                yield outputs
    """
    want = """\
    def p(root, *, batch_size=4, num_threads=2, device_id=None, seed=None):
        ctx = ndd.EvalContext(device_id=None)
        reader = ndd.readers.File(file_root=root)
        while True:
            for jpegs, labels in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    images = ndd.decoders.image(jpegs, device="cpu")
                    outputs = images, labels
                yield outputs
    """
    assert _cpu(src) == textwrap.dedent(want)


def test_everything_else_byte_identical():
    src = "# comment\nimport nvidia.dali.fn as fn   # keep spacing\n\n\nx = fn.flip(y,  horizontal = 1 )  # odd spacing\nd = {'device': 'gpu'}\nz = device_id\n"
    assert to_cpu(src) == src


def test_none_device_id_untouched():
    src = "ctx = ndd.EvalContext(device_id=None)\ndef f(*, device_id=None): pass\n"
    assert to_cpu(src) == src


def test_imports_without_dali():
    code = (
        "import sys\n"
        "sys.modules['nvidia'] = None\n"
        "from dali_migrate.device_cpu import to_cpu\n"
        "assert to_cpu('a.gpu()\\n') == 'a\\n'\n"
        "assert 'nvidia.dali' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_pipeline_s_positional_device_id():
    # DALI's examples: super().__init__(batch_size, num_threads, device_id, seed=12 + device_id);
    # the class still reads the integer, the Pipeline gets None
    src = """\
    class Train(Pipeline):
        def __init__(self, batch_size, num_threads, device_id):
            super(Train, self).__init__(batch_size, num_threads, device_id, seed=12 + device_id)

    class Val(dali.pipeline.Pipeline):
        def __init__(self, batch_size, num_threads, device_id):
            Pipeline.__init__(self, batch_size, num_threads, device_id)

    class Sub(Train):
        def __init__(self, batch_size, num_threads, device_id):
            super().__init__(batch_size, num_threads, device_id)

    pipe = Pipeline(4, 2, rank)
    """
    out = _cpu(src)
    assert "super(Train, self).__init__(batch_size, num_threads, None, seed=12 + device_id)" in out
    assert "Pipeline.__init__(self, batch_size, num_threads, None)" in out
    # Train's own __init__ takes what Sub passes: its third parameter is not Pipeline's
    assert "super().__init__(batch_size, num_threads, device_id)" in out
    assert "pipe = Pipeline(4, 2, None)" in out
    assert to_cpu(textwrap.dedent(src), positional_device_id=False) == textwrap.dedent(src)


def test_devices_held_in_names_that_calls_take_as_device_become_cpu():
    # ETRI / cassandra / PerClusterQuantization: the device sits in a variable, a conditional, a
    # parameter default or a member; the same literals elsewhere are left alone
    src = textwrap.dedent('''\
        dali_device = "gpu"
        decoder_device = 'cpu' if dali_cpu else 'mixed'
        label = "gpu"
        def pipe(device="gpu", other="gpu"):
            return fn.flip(x, device=device)
        class P:
            def __init__(self):
                self.dev = "mixed"
                self.name: str = "gpu"
            def graph(self):
                a = fn.decoders.image(j, device=decoder_device)
                return fn.resize(a, device=dali_device), fn.flip(a, device=self.dev)
        ''')
    out = to_cpu(src)
    assert 'dali_device = "cpu"' in out and "decoder_device = 'cpu' if dali_cpu else 'cpu'" in out
    assert 'def pipe(device="cpu", other="gpu")' in out and 'self.dev = "cpu"' in out
    assert 'label = "gpu"' in out and 'self.name: str = "gpu"' in out


def test_conditional_devices_move_in_their_arms_only():
    src = 'a = fn.decoders.image(j, device="mixed" if device == "gpu" else "cpu")\nb = fn.flip(a, device=pick("gpu"))\n'
    assert to_cpu(src) == 'a = fn.decoders.image(j, device="cpu" if device == "gpu" else "cpu")\nb = fn.flip(a, device=pick("gpu"))\n'


def test_device_id_given_to_the_module_s_own_classes_and_functions_is_kept():
    # ZhuangLii/speed_up_pytorch: the input iterator shards its files with device_id, and the
    # Pipeline subclass passes it to super().__init__ (moved there); DeepLearningExamples'
    # HybridTrainPipe computes seed=12 + device_id
    src = """\
    class D2InputIterator:
        def __init__(self, files, device_id=0, num_gpus=1):
            self.files = files[device_id::num_gpus]

    class Train(Pipeline):
        def __init__(self, batch_size, num_threads, device_id):
            super().__init__(batch_size, num_threads, device_id, seed=12 + device_id)

    def make(files, device_id=0):
        eii = D2InputIterator(files, device_id=device_id)
        return Train(2, 1, device_id=device_id), Pipeline(batch_size=2, num_threads=1, device_id=device_id)

    @pipeline_def
    def p(root):
        return fn.readers.file(file_root=root)

    loaders = make(["a"], device_id=args.local_rank), p("/data", device_id=args.local_rank)
    """
    out = _cpu(src)
    assert "D2InputIterator(files, device_id=device_id)" in out and "def __init__(self, files, device_id=0, num_gpus=1)" in out
    assert "Train(2, 1, device_id=device_id)" in out and "super().__init__(batch_size, num_threads, None, seed=12 + device_id)" in out
    assert "Pipeline(batch_size=2, num_threads=1, device_id=None)" in out
    assert "def make(files, device_id=0)" in out and 'make(["a"], device_id=args.local_rank)' in out
    assert 'p("/data", device_id=None)' in out


def test_indented_comments_that_end_the_file_are_kept():
    src = "def f():\n    x = fn.flip(y, device='gpu')\n   #######\n   # see https://example.com\n   #######\n"
    assert to_cpu(src) == src.replace("'gpu'", "'cpu'")
