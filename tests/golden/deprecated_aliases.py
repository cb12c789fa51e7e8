# golden-run: pipe=legacy_pipe args=(str(DATA / "images"),) iterations=12
from nvidia.dali import fn, pipeline_def, types


@pipeline_def(batch_size=4, num_threads=1)
def legacy_pipe(root):
    jpegs, labels = fn.file_reader(file_root=root)
    images = fn.image_decoder(jpegs, output_type=types.RGB)
    return images, labels
