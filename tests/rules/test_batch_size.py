from _helpers import pipeline


def test_random_op_gets_batch_size():
    out = pipeline("return fn.random.uniform(range=[0, 1])\n")
    assert "ndd.random.uniform(range=[0, 1], batch_size=batch_size, rng=rng)" in out


def test_op_without_inputs_gets_batch_size():
    out = pipeline("return fn.transforms.rotation(angle=30.0)\n")
    assert "ndd.transforms.rotation(angle=30.0, batch_size=batch_size)" in out


def test_op_with_input_does_not():
    out = pipeline("j, l = fn.readers.file(file_root='d')\nreturn fn.decoders.image(j)\n")
    assert "ndd.decoders.image(j)" in out


def test_explicit_batch_size_is_refused_as_dali_refuses_it():
    # (no operator schema has batch_size: a pipeline giving it fails where it is defined)
    out = pipeline("return fn.random.uniform(batch_size=2)\n")
    assert "fn.random.uniform has no argument `batch_size` in DALI" in out and "ndd." not in out


def test_disabled_rule_blocks_instead_of_emitting_wrong_code():
    from _helpers import convert

    out = convert("@pipeline_def(batch_size=4)\ndef p():\n    return fn.random.uniform()\n", rules={"pipeline-def", "op-name", "random-rng"})
    assert "@pipeline_def" in out and "needs rule batch-size, which is disabled" in out
