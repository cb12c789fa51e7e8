# golden-run: pipe=decode_only args=(str(DATA / "images"),) iterations=12
import nvidia.dali.experimental.dynamic as ndd


def decode_only(root, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ndd.set_num_threads(num_threads)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, _ in reader.next_epoch(batch_size=batch_size):
            yield (ndd.decoders.image(jpegs),)


pipe = decode_only("/data/images")
(images,) = next(pipe)
first = next(pipe)[0]
print(images.select(0).shape, first.batch_size)
