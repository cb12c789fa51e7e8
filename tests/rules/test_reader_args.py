from _helpers import pipeline


def test_name_dropped_sharding_kept():
    out = pipeline('j, l = fn.readers.file(file_root="d", shard_id=1, num_shards=2, name="Reader")\nreturn j, l\n')
    assert 'ndd.readers.File(file_root="d", shard_id=1, num_shards=2)' in out


def test_shuffling_reader_gets_pipeline_seed():
    out = pipeline('j, l = fn.readers.file(file_root="d", random_shuffle=True)\nreturn j, l\n')
    assert "random_shuffle=True, seed=seed)" in out


def test_explicit_reader_seed_kept():
    out = pipeline('j, l = fn.readers.file(file_root="d", random_shuffle=True, seed=5)\nreturn j, l\n')
    assert "seed=5)" in out and "seed=seed)" not in out


def test_reader_created_once_and_loop_over_epochs():
    out = pipeline('j, l = fn.readers.file(file_root="d")\nreturn j, l\n')
    assert out.index("reader = ndd.readers.File") < out.index("while True:") < out.index("for j, l in reader.next_epoch(batch_size=batch_size):")


def test_two_readers_block():
    out = pipeline('a, b = fn.readers.file(file_root="d")\nc, e = fn.readers.file(file_root="e")\nreturn a, c\n')
    assert "several readers" in out and "@pipeline_def" in out
