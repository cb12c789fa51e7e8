# golden-run: pipe=decode_only args=(str(DATA / "images"),) iterations=12
from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=4, num_threads=1)
def decode_only(root):
    jpegs, _ = fn.readers.file(file_root=root)
    return fn.decoders.image(jpegs)


pipe = decode_only("/data/images")
pipe.build()
(images,) = pipe.run()
first = pipe.run()[0]
print(images.at(0).shape, len(first))
