# golden-run: pipe=conversion_pipeline args=(str(DATA / "images"),) kwargs=dict(batch_size=4) iterations=6
"""DALI's color-space conversion notebook: the pipeline returns tuple(<list>) of outputs, whose
count only the graph knows; the caller slices them, copies the slices and hands them to a function
that reads samples off each (on the host for GPU outputs)."""
import numpy as np
from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types

conversions = [
    ("RGB to BGR", types.RGB, types.BGR),
    ("RGB to YCbCr", types.RGB, types.YCbCr),
    ("RGB to Gray", types.RGB, types.GRAY),
]


@pipeline_def(num_threads=2, device_id=0)
def conversion_pipeline(image_dir):
    files, labels = fn.readers.file(file_root=image_dir)
    images_cpu = fn.decoders.image(files)
    images_gpu = images_cpu.gpu()
    converted_cpu = [fn.color_space_conversion(images_cpu, image_type=inp, output_type=out) for _, inp, out in conversions]
    converted_gpu = [fn.color_space_conversion(images_gpu, image_type=inp, output_type=out) for _, inp, out in conversions]
    return tuple([images_cpu] + converted_cpu + converted_gpu)


def show_images(original, converted, device, n=1):
    shapes = [original.at(n).shape]
    for i in range(len(converted)):
        sample = converted[i].as_cpu().at(n) if device == "gpu" else converted[i].at(n)
        shapes.append(np.asarray(sample).shape)
    return shapes


def main(image_dir):
    pipe = conversion_pipeline(image_dir, batch_size=4)
    pipe.build()
    pipe_out = pipe.run()
    k = len(conversions)
    on_cpu = [out for out in pipe_out[1 : k + 1]]
    on_gpu = [out for out in pipe_out[k + 1 :]]
    print(len(pipe_out), show_images(pipe_out[0], on_cpu, "cpu"), show_images(pipe_out[0], on_gpu, "gpu"))


if __name__ == "__main__":
    main("images")
