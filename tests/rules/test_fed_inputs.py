"""External sources fed from outside (no source=): the pipeline becomes a function of each run's
data (dali_migrate/fed_inputs.py; rules external-source, pipe-run, pipe-feed-input)."""

from tests.rules._helpers import convert, pipeline

FED = '''
@pipeline_def(batch_size=4, num_threads=2, device_id=0)
def p(source_name):
    x = fn.external_source(name=source_name, dtype=types.UINT8)
    return fn.decoders.image(x, device="mixed")

'''


def test_named_source_becomes_a_function_of_the_fed_batch():
    out = pipeline('x = fn.external_source(name="images", layout="HWC", dtype=types.UINT8)\nreturn fn.flip(x)\n')
    assert "@pipeline_def" not in out and "dali-migrate:" not in out
    assert "    def run(**pipeline_inputs):\n        with ctx:\n" in out
    # DALI copies fed data unless no_copy=True
    assert 'x = external_source_batch(pipeline_inputs["images"], types.UINT8, layout="HWC", copy=True)' in out
    assert "    return run\n" in out and "yield" not in out


def test_no_copy_source_views_the_fed_data():
    out = pipeline('x = fn.external_source(name="images", no_copy=True)\nreturn fn.flip(x)\n')
    assert 'x = ndd.as_batch(pipeline_inputs["images"])' in out


def test_random_operators_take_the_fed_batch_size_and_one_rng_made_once():
    out = pipeline(
        'x = fn.external_source(name="images")\nflip = fn.random.coin_flip(probability=0.5)\nreturn fn.flip(x, horizontal=flip)\n',
        decorator="@pipeline_def(batch_size=4, seed=7)",
    )
    assert "seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)\n    rng = ndd.random.RNG(seed=seed_or_random)\n\n    def run(**pipeline_inputs):" in out
    assert "ndd.random.coin_flip(probability=0.5, batch_size=x.batch_size, rng=rng)" in out


def test_random_operator_before_the_fed_source_is_left_to_a_person():
    out = pipeline('flip = fn.random.coin_flip(probability=0.5)\nx = fn.external_source(name="images")\nreturn fn.flip(x, horizontal=flip)\n')
    assert "@pipeline_def" in out and "need the fed batch's size" in out


def test_fed_source_beside_a_reader_is_left_to_a_person():
    out = pipeline('j, l = fn.readers.file(file_root="d")\nx = fn.external_source(name="images")\nreturn j, x\n')
    assert "@pipeline_def" in out and "beside a reader" in out


def test_run_with_names_through_the_construction_argument():
    out = convert(FED + 'pipe = p("img", prefetch_queue_depth=1)\npipe.build()\nout = pipe.run(img=data)\n')
    assert "dali-migrate:" not in out
    assert 'x = external_source_batch(pipeline_inputs[source_name], types.UINT8, copy=True)' in out
    assert 'pipe = p("img")\nout = pipe(img=data)\n' in out


def test_feed_input_lines_move_into_the_call():
    src = FED.replace("(source_name)", "()").replace("name=source_name", 'name="jpegs"')
    out = convert(src + 'pipe = p(prefetch_queue_depth=1)\npipe.build()\nfor b in batches:\n    pipe.feed_input("jpegs", b)\n    (images,) = pipe.run()\n')
    assert "dali-migrate:" not in out
    assert "for b in batches:\n    (images,) = pipe(jpegs=b)\n" in out


def test_deeper_prefetch_queue_is_left_to_a_person():
    out = convert(FED + 'pipe = p("img")\npipe.build()\nout = pipe.run(img=data)\n')
    assert "@pipeline_def" in out and "prefetch_queue_depth=1" in out and "pipe.run(img=data)" in out


def test_legacy_executor_is_left_to_a_person():
    out = convert(FED + 'pipe = p("img", prefetch_queue_depth=1, exec_dynamic=False)\nout = pipe.run(img=data)\n')
    assert "@pipeline_def" in out and "legacy executor" in out


def test_run_that_feeds_another_name_is_left_to_a_person():
    out = convert(FED + 'pipe = p("img", prefetch_queue_depth=1)\nout = pipe.run(other=data)\n')
    assert "@pipeline_def" in out and 'no data for "img"' in out and 'data for "other"' in out


def test_name_not_a_literal_at_the_construction_is_left_to_a_person():
    out = convert(FED + 'pipe = p(args.name, prefetch_queue_depth=1)\nout = pipe.run(img=data)\n')
    assert "@pipeline_def" in out and "is not a string literal here" in out


def test_feed_input_apart_from_its_run_is_left_to_a_person():
    src = FED.replace("(source_name)", "()").replace("name=source_name", 'name="jpegs"')
    out = convert(src + 'pipe = p(prefetch_queue_depth=1)\npipe.feed_input("jpegs", b)\nlog("fed")\nout = pipe.run()\n')
    assert "@pipeline_def" in out and "is not right above" in out


def test_fed_pipeline_given_to_an_iterator_is_left_to_a_person():
    src = "from nvidia.dali.plugin.pytorch import DALIGenericIterator\n" + FED
    out = convert(src + 'pipe = p("img", prefetch_queue_depth=1)\nit = DALIGenericIterator(pipe, ["x"])\n')
    assert "@pipeline_def" in out and "is fed from outside" in out


def test_caught_errors_need_no_resume_wrapper():
    out = convert(FED + 'pipe = p("img", prefetch_queue_depth=1)\nfor d in data:\n    try:\n        out = pipe.run(img=d)\n    except Exception:\n        pass\n')
    assert "dali-migrate:" not in out
    assert "ResumeAfterErrors" not in out and "out = pipe(img=d)" in out
    # operators run asynchronously: the outputs are evaluated before the call returns
    assert "for output in outputs:\n                output.evaluate()" in out


def test_run_with_arguments_of_a_pipeline_without_fed_sources_is_left_to_a_person():
    out = convert('@pipeline_def(batch_size=2)\ndef q():\n    return fn.random.uniform()\n\npipe = q()\nout = pipe.run(x=1)\n')
    assert "@pipeline_def" in out and "has no external source fed from outside" in out
