"""Helpers called where writing them into the pipeline would change what runs: left as written."""
from nvidia.dali import fn, pipeline_def


# dali-migrate: [not-yet-converted] blur() builds DALI operators with fn.*, which only works inside a pipeline: convert it with the pipelines that call it (ndd calls, batch_size= on random ops); repeated_blur(), blur_large(), which call it, are not converted: see the marker there
def blur(img, sigma):
    return fn.gaussian_blur(img, sigma=sigma)


# dali-migrate: [not-yet-converted] is_large() builds DALI operators with fn.*, which only works inside a pipeline: convert it with the pipelines that call it (ndd calls, batch_size= on random ops); blur_large(), which calls it, is not converted: see the marker there
def is_large(img):
    return fn.shapes(img)[0] > 64


# dali-migrate: [pipeline-def] pipeline not converted: calls blur(), which builds DALI operators itself and cannot be written into the pipeline: blur() is called inside a block, or inside an expression where taking it out would change what runs first; convert by hand
@pipeline_def(num_threads=2, device_id=0)
def repeated_blur(data_dir, times=2):
    jpegs, labels = fn.readers.file(file_root=data_dir)
    images = fn.decoders.image(jpegs, device="mixed")
    for _ in range(times):
        images = blur(images, 1.5)
    return images, labels


# dali-migrate: [pipeline-def] pipeline not converted: calls blur(), is_large(), which build DALI operators themselves and cannot be written into the pipeline: is_large() is called inside a block, or inside an expression where taking it out would change what runs first; convert by hand
# dali-migrate: [pipeline-def] pipeline not converted: `if is_large(images):`: cannot tell that the condition is one batch; convert by hand (line 4 of blur_large())
# dali-migrate: [pipeline-def] pipeline not converted: `blur(...)` inside a branch of an `if` on DALI data: DALI runs a branch's Python code once, when it traces the branch; the converted branch would run it every iteration: convert by hand (line 5 of blur_large())
# dali-migrate: [pipeline-def] pipeline not converted: `if is_large(images):` gives `images` a value that is not one DALI batch in a branch (DALI would make a Python value a constant batch): convert by hand (line 4 of blur_large())
@pipeline_def(num_threads=2, device_id=0, enable_conditionals=True)
def blur_large(data_dir):
    jpegs, labels = fn.readers.file(file_root=data_dir)
    images = fn.decoders.image(jpegs, device="mixed")
    if is_large(images):
        images = blur(images, 2.0)
    return images, labels
