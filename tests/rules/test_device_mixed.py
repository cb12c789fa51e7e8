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


def test_device_chosen_at_run_time_maps_only_mixed():
    out = pipeline('d = "cpu" if flag else "mixed"\nj, l = fn.readers.file(file_root="x")\n'
                   "return fn.decoders.image(j, device=d), l\n")
    assert 'ndd.decoders.image(j, device="gpu" if d == "mixed" else d)' in out
    # the variable itself, and code comparing it with "mixed", stay as they were
    assert 'd = "cpu" if flag else "mixed"' in out


def test_literal_branches_are_rewritten_in_place():
    out = pipeline('j, l = fn.readers.file(file_root="x")\n'
                   'return fn.decoders.image(j, device="cpu" if cpu else "mixed"), l\n')
    assert 'ndd.decoders.image(j, device="cpu" if cpu else "gpu")' in out


def test_device_of_an_operator_without_mixed_backend_is_left_alone():
    out = pipeline('d = "cpu" if flag else "gpu"\nj, l = fn.readers.file(file_root="x")\n'
                   "return fn.resize(fn.decoders.image(j), device=d, resize_x=8), l\n")
    assert "ndd.resize(ndd.decoders.image(j), device=d, resize_x=8)" in out


def test_device_expression_that_may_change_is_marked():
    out = pipeline('j, l = fn.readers.file(file_root="x")\n'
                   "return fn.decoders.image(j, device=pick_device()), l\n")
    assert "device=pick_device() is chosen at run time and may be \"mixed\"" in out
