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


def test_a_name_of_either_device_beside_gpu_data_is_moved():
    # `.gpu()` of data already on the GPU gives it back as it is (Batch.to_device)
    out = _convert("    images = fn.decoders.image(jpegs, device='mixed')\n"
                   "    flip = fn.random.coin_flip()\n"
                   "    if root.endswith('gpu'):\n"
                   "        flip = flip.gpu()\n"
                   "    return flip * images, labels\n")
    assert "flip.gpu() * images" in out and "dali-migrate:" not in out


def test_operands_made_from_one_name_share_its_device():
    # QuartzNet's dither: audio is on the CPU or the GPU, the noise follows it (no device=)
    out = _convert("    audio = fn.cast(jpegs, dtype=types.FLOAT)\n"
                   "    if root.endswith('gpu'):\n"
                   "        audio = audio.gpu()\n"
                   "    audio = audio + fn.random.normal(audio) * 0.5\n"
                   "    return audio, labels\n")
    assert "audio = audio + ndd.random.normal(audio" in out and ".gpu()" in out
    assert "dali-migrate:" not in out and "audio.gpu() +" not in out


def test_a_name_of_either_device_beside_cpu_data_stops_the_pipeline():
    # moved only if the name is on the GPU: which cannot be told
    out = _convert("    audio = fn.cast(jpegs, dtype=types.FLOAT)\n"
                   "    if root.endswith('gpu'):\n"
                   "        audio = audio.gpu()\n"
                   "    return audio + fn.random.normal(device='cpu'), labels\n")
    assert "arithmetic on DALI data whose devices dali-migrate cannot tell" in out and "@pipeline_def" in out


def test_two_names_of_either_device_stop_the_pipeline():
    out = _convert("    a = fn.cast(jpegs, dtype=types.FLOAT)\n"
                   "    b = fn.cast(labels, dtype=types.FLOAT)\n"
                   "    if root.endswith('gpu'):\n"
                   "        a = a.gpu()\n"
                   "    else:\n"
                   "        b = b.gpu()\n"
                   "    return a * b, labels\n")
    assert "arithmetic on DALI data whose devices dali-migrate cannot tell" in out and "@pipeline_def" in out


def test_a_name_bound_from_another_of_either_device_is_not_taken_for_it():
    # `early` was made from `audio` before it moved: the two may differ
    out = _convert("    audio = fn.cast(jpegs, dtype=types.FLOAT)\n"
                   "    early = audio * 2\n"
                   "    if root.endswith('gpu'):\n"
                   "        audio = audio.gpu()\n"
                   "    return early + audio, labels\n")
    assert "arithmetic on DALI data whose devices dali-migrate cannot tell" in out and "@pipeline_def" in out


def test_a_name_bound_again_later_keeps_its_device_where_it_is_read():
    # DALI's RNN-T example: `audio` is CPU data at the dither; a tuple binds it again below
    out = _convert("    audio = fn.cast(jpegs, dtype=types.FLOAT)\n"
                   "    audio = audio + fn.random.normal(audio, device='cpu') * 0.1\n"
                   "    audio, shape = audio, fn.shapes(audio)\n"
                   "    return audio.gpu(), shape.gpu(), labels\n")
    assert "audio = audio + ndd.random.normal(audio, device='cpu'" in out and "dali-migrate:" not in out


def test_a_value_of_either_device_by_a_condition_is_not_known():
    out = _convert("    images = fn.decoders.image(jpegs, device='mixed')\n"
                   "    other = images if root else fn.decoders.image(jpegs)\n"
                   "    return images * other, labels\n")
    assert "arithmetic on DALI data whose devices dali-migrate cannot tell" in out and "@pipeline_def" in out


def test_a_python_value_made_by_a_call_is_no_data():
    # feitreim's video loader: `scale = types.Constant(255)`, then GPU frames / scale
    out = _convert("    images = fn.transpose(fn.decoders.image(jpegs, device='mixed'), perm=[2, 0, 1])\n"
                   "    scale = types.Constant(255)\n"
                   "    return images / scale, labels\n")
    assert "dali-migrate:" not in out


def test_joining_tuples_of_dali_data_is_no_arithmetic():
    # makani's loader: `pout = (inp, tar)`, then `pout = pout + (izen, tzen)` under a condition
    from _helpers import pipeline

    out = pipeline(
        "j, l = fn.readers.file(file_root='d')\nimages = fn.decoders.image(j, device='mixed')\n"
        "pout = (images, l)\npout = pout + (l.gpu(), images)\nreturn tuple(pout)\n",
        decorator="@pipeline_def(batch_size=4, device_id=0)",
    )
    assert "arithmetic on DALI data" not in out and "outputs = tuple(pout)" in out
