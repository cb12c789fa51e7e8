"""pipe.epoch_size() of a pipeline of several readers, and the iterators' reader_name= (they pick
one reader of the pipeline by its name=)."""

from _helpers import convert

PIPE = """\
@pipeline_def(batch_size=2)
def p(images_root, masks_root):
    images = fn.readers.numpy(file_root=images_root, random_shuffle=True, seed=7, name="{a}")
    masks = fn.readers.numpy(file_root=masks_root, name="{b}")
    return images, masks


pipe = p("/data/img", "/data/mask")
pipe.build()
"""

IMAGES = 'ndd.readers.Numpy(file_root="/data/img").get_metadata()["epoch_size_padded"]'
MASKS = 'ndd.readers.Numpy(file_root="/data/mask").get_metadata()["epoch_size_padded"]'


def test_a_named_reader_gives_its_own_epoch_size():
    out = convert(PIPE.format(a="images", b="masks") + 'n = pipe.epoch_size("masks")\n')
    assert "dali-migrate:" not in out and f"n = {MASKS}\n" in out


def test_without_a_name_every_reader_by_name_in_order_of_names():
    # DALI's dict comes from a std::map: "masks" before "zimages", whatever their order in the pipeline
    out = convert(PIPE.format(a="zimages", b="masks") + "sizes = pipe.epoch_size()\n")
    assert "dali-migrate:" not in out
    assert f'sizes = {{\n    "masks": {MASKS},\n    "zimages": {IMAGES},\n}}\n' in out


def test_a_name_no_reader_has_is_marked():
    out = convert(PIPE.format(a="images", b="masks") + 'n = pipe.epoch_size("labels")\n')
    assert "pipe.epoch_size(name): cannot match the name to one of the pipeline's readers" in out
    assert "@pipeline_def(batch_size=2)" in out


def test_without_a_name_an_unnamed_reader_is_marked():
    out = convert(PIPE.format(a="images", b="masks").replace(', name="masks"', "") + "sizes = pipe.epoch_size()\n")
    assert "pipe.epoch_size() of a pipeline whose readers are not each named with a string of its own" in out
    # named, the other reader's size is still told
    out = convert(PIPE.format(a="images", b="masks").replace(', name="masks"', "") + 'n = pipe.epoch_size("images")\n')
    assert "dali-migrate:" not in out and f"n = {IMAGES}\n" in out


def test_the_iterators_reader_name_picks_its_reader():
    header = "from nvidia.dali.plugin.pytorch import DALIGenericIterator\n"
    out = convert(header + PIPE.format(a="images", b="masks") + 'it = DALIGenericIterator([pipe], ["x", "y"], reader_name="masks")\n')
    assert "dali-migrate:" not in out
    assert 'reader_meta=ndd.readers.Numpy(file_root="/data/mask").get_metadata()' in out
    out = convert(header + PIPE.format(a="images", b="masks") + 'it = DALIGenericIterator([pipe], ["x", "y"], reader_name="images")\n')
    assert 'reader_meta=ndd.readers.Numpy(file_root="/data/img").get_metadata()' in out
    out = convert(header + PIPE.format(a="images", b="masks") + 'it = DALIGenericIterator([pipe], ["x", "y"], reader_name="labels")\n')
    assert "DALIGenericIterator(reader_name=...): cannot match the name to the pipeline's reader" in out
