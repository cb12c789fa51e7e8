"""data-subscript: per-sample slicing of DALI data becomes .slice[...]; other indexing stops the pipeline."""

from dali_migrate.engine import convert_source

HEAD = "from nvidia.dali import fn, pipeline_def\n\n\n@pipeline_def(batch_size=2, num_threads=1)\ndef p(root):\n"


def _convert(body):
    return convert_source(HEAD + body).output


def test_operator_result_and_arithmetic_are_sliced():
    out = _convert("    jpegs, labels = fn.readers.file(file_root=root)\n"
                   "    x = fn.decoders.image(jpegs) * 2\n"
                   "    return x[0], (x + 1)[1:2], labels\n")
    assert "x.slice[0]" in out and "(x + 1).slice[1:2]" in out


def test_python_values_are_left_alone():
    out = _convert("    sizes = [224, 256]\n"
                   "    jpegs, labels = fn.readers.file(file_root=root)\n"
                   "    return fn.resize(fn.decoders.image(jpegs), size=sizes[0]), labels\n")
    assert "size=sizes[0]" in out and "dali-migrate:" not in out


def test_list_of_outputs_is_marked():
    out = _convert("    jpegs, labels = fn.readers.file(file_root=root)\n"
                   "    both = [jpegs, labels]\n"
                   "    return both[0], both[1]\n")
    assert "cannot tell whether this indexes DALI data" in out and "@pipeline_def" in out


def test_name_bound_to_data_and_to_other_values_is_marked():
    out = _convert("    jpegs, labels = fn.readers.file(file_root=root)\n"
                   "    x = fn.decoders.image(jpegs)\n"
                   "    x = [x]\n"
                   "    return x[0], labels\n")
    assert "cannot tell whether this indexes DALI data" in out


def test_rule_disabled_leaves_the_pipeline_marked():
    from dali_migrate.config import Config

    src = HEAD + "    jpegs, labels = fn.readers.file(file_root=root)\n    return jpegs[0], labels\n"
    enabled = frozenset(r for r in __import__("dali_migrate.rules", fromlist=["x"]).all_rules()
                        if r.id != "data-subscript")
    out = convert_source(src, config=Config(enabled_rules=frozenset(r.id for r in enabled))).output
    assert ".slice[" not in out and "needs rule data-subscript, which is disabled" in out


def test_tfrecord_features_are_looked_up_by_key():
    out = _convert('    inputs = fn.readers.tfrecord(path="x", index_path="y", features={})\n'
                   '    return fn.decoders.image(inputs["image/encoded"]), inputs["image/class/label"]\n')
    assert 'inputs["image/encoded"]' in out and ".slice[" not in out and "dali-migrate:" not in out


def test_item_of_a_readers_list_of_outputs_is_not_sliced():
    # `output` holds the reader's list (next_epoch's tuple once converted): output[1] is its label
    out = _convert('    output = fn.readers.file(file_root=root, name="Reader")\n'
                   "    images = fn.decoders.image(output[0])\n"
                   "    return images[2:8], output[1]\n")
    assert "ndd.decoders.image(output[0])" in out and "images.slice[2:8], output[1]" in out
    assert "dali-migrate:" not in out


def test_slice_of_a_readers_list_is_marked():
    out = _convert('    output = fn.readers.file(file_root=root)\n'
                   "    return output[0:1]\n")
    assert "cannot tell whether this indexes DALI data" in out
