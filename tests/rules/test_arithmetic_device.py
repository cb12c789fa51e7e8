"""arithmetic-device: CPU operands of arithmetic with a GPU operand are moved with .gpu(), as the
pipeline moved them; operands whose device cannot be told stop the pipeline."""

from dali_migrate.engine import convert_source

HEAD = ("from nvidia.dali import fn, math, pipeline_def, types\n\n\n"
        "@pipeline_def(batch_size=2, num_threads=1, device_id=0)\ndef p(root):\n"
        "    jpegs, labels = fn.readers.file(file_root=root)\n")


def _convert(body):
    return convert_source(HEAD + body).output


def test_cpu_random_value_times_gpu_images_is_moved():
    out = _convert("    images = fn.decoders.image(jpegs, device='mixed')\n"
                   "    flip = fn.random.coin_flip(dtype=types.UINT8)\n"
                   "    return flip * images + (flip ^ True) * images, labels\n")
    assert "flip.gpu() * images + (flip ^ True).gpu() * images" in out and "dali-migrate:" not in out


def test_device_follows_the_inputs_of_an_operator_without_device():
    # fn.resize of GPU images runs on the GPU (ops._choose_device): its result is GPU data
    out = _convert("    images = fn.resize(fn.decoders.image(jpegs, device='mixed'), size=(8, 8))\n"
                   "    images = fn.resize(images, size=(4, 4))\n"
                   "    scale = fn.random.uniform(range=(0.5, 1.5))\n"
                   "    return images * scale, labels\n")
    assert "images * scale.gpu()" in out


def test_math_functions_move_their_cpu_arguments():
    out = _convert("    images = fn.cast(fn.decoders.image(jpegs, device='mixed'), dtype=types.FLOAT)\n"
                   "    low = fn.random.uniform(range=(0.0, 10.0))\n"
                   "    return math.clamp(images, low, 200.0), labels\n")
    assert "ndd.math.clamp(images, low.gpu(), 200.0)" in out


def test_one_device_and_python_values_are_left_alone():
    out = _convert("    images = fn.decoders.image(jpegs, device='mixed')\n"
                   "    gpu_flip = fn.random.coin_flip(device='gpu')\n"
                   "    cpu_only = fn.random.uniform(range=(0.0, 1.0)) * 2 + fn.random.uniform(range=(0.0, 1.0))\n"
                   "    return images * gpu_flip * 2, cpu_only, labels\n")
    assert "images * gpu_flip * 2" in out and ".gpu()" not in out


def test_cpu_pipelines_are_not_looked_at():
    out = _convert("    images = fn.decoders.image(jpegs)\n"
                   "    flip = fn.random.coin_flip()\n"
                   "    return flip * images, labels\n")
    assert "flip * images" in out and ".gpu()" not in out


def test_a_name_holding_data_of_both_devices_stops_the_pipeline():
    out = _convert("    images = fn.decoders.image(jpegs, device='mixed')\n"
                   "    flip = fn.random.coin_flip()\n"
                   "    if root.endswith('gpu'):\n"
                   "        flip = flip.gpu()\n"
                   "    return flip * images, labels\n")
    assert "arithmetic on DALI data whose devices dali-migrate cannot tell" in out and "@pipeline_def" in out
