# golden-run: pipe=alias_pipe args=(str(DATA / "images"),) iterations=12
import nvidia.dali as dali
import nvidia.dali.types as types


@dali.pipeline_def(batch_size=4, num_threads=2)
def alias_pipe(root):
    jpegs, labels = dali.fn.readers.file(file_root=root)
    images = dali.fn.decoders.image(jpegs, output_type=types.RGB)
    images = dali.fn.resize(images, resize_shorter=20)
    images = dali.fn.crop_mirror_normalize(
        images,
        crop=(16, 16),
        mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
        std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
        dtype=types.FLOAT,
        output_layout="CHW",
    )
    return images, labels


if __name__ == "__main__":
    pipe = alias_pipe("/data/images")
    pipe.build()
    images, labels = pipe.run()
    print(images.at(0).shape)
