# golden-run: pipe=wds_pipe args=(str(DATA / "webdataset" / "shard-000000.tar"),) iterations=6
from nvidia.dali import types
import nvidia.dali.experimental.dynamic as ndd


def wds_pipe(tar, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.Webdataset(paths=[tar], ext=["jpg", "cls"], missing_component_behavior="error")
    while True:
        for jpegs, cls in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, output_type=types.RGB)
                outputs = images, cls
            yield outputs
