# golden-run: pipe=decode_pipe args=(str(DATA / "images"),) iterations=8
"""Two loaders, each in its own thread, each with its own pipeline."""
import threading

from nvidia.dali import fn, pipeline_def, types


@pipeline_def(batch_size=4, num_threads=2, device_id=0)
def decode_pipe(image_dir):
    jpegs, labels = fn.readers.file(file_root=image_dir, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=16, resize_y=16)
    return images, labels


def load(image_dir, steps, out):
    pipe = decode_pipe(image_dir)
    pipe.build()
    for _ in range(steps):
        images, labels = pipe.run()
        out.append(labels.as_cpu().as_array())


if __name__ == "__main__":
    results = [[], []]
    workers = [threading.Thread(target=load, args=("/data/images", 8, r)) for r in results]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print([len(r) for r in results])
