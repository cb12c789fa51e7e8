# golden-run: pipe=conversion_pipeline args=(str(DATA / "images"),) kwargs=dict(batch_size=4) iterations=6
"""DALI's color-space conversion notebook: the pipeline returns tuple(<list>) of outputs, whose
count only the graph knows; the caller slices them, copies the slices and hands them to a function
that reads samples off each (on the host for GPU outputs)."""
import numpy as np
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def sample_at(batch, i):
    """TensorList.at(i) on an ndd.Batch (added by dali-migrate): as in pipeline mode, a sample of a
    CPU batch is a numpy array, one of a GPU batch the sample itself."""
    sample = batch.select(i)
    return np.array(sample) if batch.device.device_type == "cpu" else sample


conversions = [
    ("RGB to BGR", types.RGB, types.BGR),
    ("RGB to YCbCr", types.RGB, types.YCbCr),
    ("RGB to Gray", types.RGB, types.GRAY),
]


def conversion_pipeline(image_dir, *, batch_size, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=image_dir)
    while True:
        for files, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images_cpu = ndd.decoders.image(files)
                images_gpu = images_cpu.gpu()
                converted_cpu = [ndd.color_space_conversion(images_cpu, image_type=inp, output_type=out) for _, inp, out in conversions]
                converted_gpu = [ndd.color_space_conversion(images_gpu, image_type=inp, output_type=out) for _, inp, out in conversions]
                outputs = tuple([images_cpu] + converted_cpu + converted_gpu)
            yield outputs


def show_images(original, converted, device, n=1):
    shapes = [sample_at(original, n).shape]
    for i in range(len(converted)):
        sample = np.array(converted[i].cpu().select(n)) if device == "gpu" else sample_at(converted[i], n)
        shapes.append(np.asarray(sample).shape)
    return shapes


def main(image_dir):
    pipe = conversion_pipeline(image_dir, batch_size=4)
    pipe_out = next(pipe)
    k = len(conversions)
    on_cpu = [out for out in pipe_out[1 : k + 1]]
    on_gpu = [out for out in pipe_out[k + 1 :]]
    print(len(pipe_out), show_images(pipe_out[0], on_cpu, "cpu"), show_images(pipe_out[0], on_gpu, "gpu"))


if __name__ == "__main__":
    main("images")
