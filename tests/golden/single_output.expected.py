# golden-run: pipe=decode_only args=(str(DATA / "images"),) iterations=12
import numpy as np
import nvidia.dali.experimental.dynamic as ndd


def decode_only(root, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, _ in reader.next_epoch(batch_size=batch_size):
            with ctx:
                outputs = (ndd.decoders.image(jpegs),)
            yield outputs


pipe = decode_only("/data/images")
(images,) = next(pipe)
first = next(pipe)[0]
print(np.array(images.select(0)).shape, first.batch_size)
