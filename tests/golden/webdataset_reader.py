# golden-run: pipe=wds_pipe args=(str(DATA / "webdataset" / "shard-000000.tar"),) iterations=6
from nvidia.dali import fn, pipeline_def, types


@pipeline_def(batch_size=4, num_threads=1)
def wds_pipe(tar):
    jpegs, cls = fn.readers.webdataset(paths=[tar], ext=["jpg", "cls"], missing_component_behavior="error")
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    return images, cls
