# golden-run: pipe=val_pipe args=(str(DATA / "images"),) iterations=12
# A training script that ends with code its author commented out, indented under the
# `if __name__ == "__main__":` block; libcst 1.9 keeps only the last of such lines.
from nvidia.dali import pipeline_def, fn, types
from nvidia.dali.plugin.pytorch import DALIGenericIterator


@pipeline_def(batch_size=4, num_threads=2, device_id=0)
def val_pipe(image_dir, size=48):
    jpegs, labels = fn.readers.file(file_root=image_dir, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_shorter=size)
    images = fn.crop_mirror_normalize(images, crop=(32, 32), dtype=types.FLOAT, output_layout="CHW")
    return images, labels.gpu()


if __name__ == "__main__":
    pipe = val_pipe("/data/val")
    pipe.build()
    loader = DALIGenericIterator(pipe, ["images", "labels"], reader_name="Reader")
    for batch in loader:
        print(batch[0]["images"].shape)
   # loader.reset()
   # for batch in loader:
   #     print(batch[0]["labels"])
