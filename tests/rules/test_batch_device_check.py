from _helpers import convert

PIPE = '@pipeline_def(batch_size=4)\ndef p(root):\n    j, l = fn.readers.file(file_root=root)\n    return j, l\n\n'


def test_type_and_isinstance_checks_become_device_checks():
    src = (
        "import nvidia.dali.backend as backend\nfrom nvidia.dali.tensors import TensorListCPU\n" + PIPE
        + "pipe = p('d')\nj, l = pipe.run()\n"
        "a = type(j) == backend.TensorListGPU\nb = backend.TensorListCPU is not type(l)\nc = not isinstance(l, TensorListCPU)\n"
    )
    out = convert(src)
    assert "@pipeline_def" not in out and "# dali-migrate" not in out
    assert 'a = j.device.device_type == "gpu"' in out
    assert 'b = l.device.device_type != "cpu"' in out
    assert 'c = not l.device.device_type == "cpu"' in out


def test_other_classes_are_left_to_a_person():
    out = convert("import nvidia.dali.backend as backend\n" + PIPE + "pipe = p('d')\nj, l = pipe.run()\nx = type(j) == backend.TensorGPU\n")
    assert "@pipeline_def" in out and "compared with backend.TensorGPU, which is not TensorListCPU/TensorListGPU" in out


def test_rule_disabled_leaves_the_check_marked():
    rules = {"pipeline-def", "pipe-run", "op-name", "reader-args", "batch-size", "random-rng", "device-mixed"}
    out = convert("import nvidia.dali.backend as backend\n" + PIPE + "pipe = p('d')\nj, l = pipe.run()\nx = type(j) == backend.TensorListGPU\n", rules=rules)
    assert "type(j) == backend.TensorListGPU" in out and "use batch.device.device_type" in out
