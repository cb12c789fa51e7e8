"""DALI imported under a guard, the loader falling back to torchvision without it: ndd goes under the same guard."""
try:
    import nvidia.dali.experimental.dynamic as ndd
    HAS_DALI = True
except ImportError:
    HAS_DALI = False

if HAS_DALI:
    def file_pipe(data_dir, *, batch_size=8, num_threads=2, device_id=None, seed=None):
        ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
        reader = ndd.readers.File(file_root=data_dir)
        while True:
            for images, labels in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    outputs = images, labels
                yield outputs


def make_loader(data_dir):
    if not HAS_DALI:
        return None  # caller falls back to torchvision
    pipe = file_pipe(data_dir)
    return pipe
