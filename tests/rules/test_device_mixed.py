from _helpers import pipeline


def test_mixed_becomes_gpu_keeping_quotes():
    out = pipeline("j, l = fn.readers.file(file_root='d')\nreturn fn.decoders.image(j, device='mixed')\n")
    assert "device='gpu'" in out and "mixed" not in out


def test_gpu_pipeline_gets_an_eval_context_left_before_yield():
    out = pipeline('j, l = fn.readers.file(file_root="d")\nreturn fn.decoders.image(j, device="mixed"), l\n')
    assert "ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)" in out
    assert "with ctx:" in out
    # the yield is outside the with-block
    lines = out.splitlines()
    with_indent = next(len(x) - len(x.lstrip()) for x in lines if x.strip() == "with ctx:")
    yield_line = next(x for x in lines if "yield" in x)
    assert len(yield_line) - len(yield_line.lstrip()) == with_indent


def test_threads_and_device_go_to_a_context_of_the_pipeline_not_global_state():
    out = pipeline('j, l = fn.readers.file(file_root="d")\nreturn fn.decoders.image(j), l\n')
    assert "set_num_threads" not in out
    assert "reader.next_epoch(batch_size=batch_size)" in out
