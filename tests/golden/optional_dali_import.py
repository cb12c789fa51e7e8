"""DALI imported under a guard, the loader falling back to torchvision without it: ndd goes under the same guard."""
try:
    from nvidia.dali import pipeline_def
    import nvidia.dali.fn as fn
    HAS_DALI = True
except ImportError:
    HAS_DALI = False

if HAS_DALI:
    @pipeline_def(batch_size=8, num_threads=2, device_id=None)
    def file_pipe(data_dir):
        images, labels = fn.readers.file(file_root=data_dir)
        return images, labels


def make_loader(data_dir):
    if not HAS_DALI:
        return None  # caller falls back to torchvision
    pipe = file_pipe(data_dir)
    pipe.build()
    return pipe
