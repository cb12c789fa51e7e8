"""The module of operator helpers that DALI's TensorFlow detection examples import from their
pipeline modules (`from . import ops`): nothing here calls them."""
import nvidia.dali as dali


# dali-migrate: [not-yet-converted] input() builds DALI operators with fn.* and nothing in this file calls it: it serves pipelines of other modules, and dali-migrate converts one file at a time. Keep it while they stay in pipeline mode (as one given to TensorFlow's DALIDataset or DALIIterator must); where one is converted, write its operators into it as ndd calls (batch_size= on random ops)
def input(file_root, annotations_file, shard_id, num_shards=1):
    inputs, bboxes, classes = dali.fn.readers.coco(
        file_root=file_root,
        annotations_file=annotations_file,
        ltrb=True,
        shard_id=shard_id,
        num_shards=num_shards,
        random_shuffle=True,
    )
    images = dali.fn.decoders.image(inputs, device="mixed", output_type=dali.types.RGB)
    return images, bboxes, classes


# dali-migrate: [not-yet-converted] bbox_adjust_ltrb() builds DALI operators with fn.* and nothing in this file calls it: it serves pipelines of other modules, and dali-migrate converts one file at a time. Keep it while they stay in pipeline mode (as one given to TensorFlow's DALIDataset or DALIIterator must); where one is converted, write its operators into it as ndd calls (batch_size= on random ops)
def bbox_adjust_ltrb(bboxes, shape_x, shape_y, pos_x, pos_y):
    sx, sy, ex, ey = pos_x, pos_y, shape_x + pos_x, shape_y + pos_y
    MT = dali.fn.transforms.crop(to_start=dali.fn.stack(sx, sy, sx, sy), to_end=dali.fn.stack(ex, ey, ex, ey))
    return dali.fn.coord_transform(bboxes, MT=MT)


# dali-migrate: [not-yet-converted] flip() builds DALI operators with fn.* and nothing in this file calls it: it serves pipelines of other modules, and dali-migrate converts one file at a time. Keep it while they stay in pipeline mode (as one given to TensorFlow's DALIDataset or DALIIterator must); where one is converted, write its operators into it as ndd calls (batch_size= on random ops)
def flip(images, bboxes):
    coin = dali.fn.random.coin_flip(probability=0.5)
    images = dali.fn.flip(images, horizontal=coin)
    bboxes = dali.fn.bb_flip(bboxes, horizontal=coin, ltrb=True)
    return images, bboxes


# dali-migrate: [not-yet-converted] mosaic() builds DALI operators with fn.* and nothing in this file calls it: it serves pipelines of other modules, and dali-migrate converts one file at a time. Keep it while they stay in pipeline mode (as one given to TensorFlow's DALIDataset or DALIIterator must); where one is converted, write its operators into it as ndd calls (batch_size= on random ops)
def mosaic(images, bboxes, image_size):
    pos_x = dali.fn.random.uniform(range=(0.2, 0.8))
    pos_y = dali.fn.random.uniform(range=(0.2, 0.8))
    bboxes = bbox_adjust_ltrb(bboxes, image_size[0], image_size[1], pos_x, pos_y)
    return images, bboxes
