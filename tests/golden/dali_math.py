# golden-run: pipe=math_pipe args=(str(DATA / "images"),) iterations=12
import nvidia.dali.math as dmath
from nvidia.dali import fn, math, pipeline_def, types


@pipeline_def(batch_size=4, num_threads=1)
def math_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root)
    images = fn.decoders.image(jpegs, output_type=types.GRAY)
    images = fn.cast(images, dtype=types.FLOAT)
    clipped = dmath.clamp(images, 30.0, 200.0)
    roots = math.sqrt(clipped)
    scaled = dmath.pow(roots, 2.0) - clipped
    return roots, scaled, math.abs(scaled), labels
