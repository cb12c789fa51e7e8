"""Objects given to a pipeline and changed after it is made: the pipeline read them when it was made."""
import os

from nvidia.dali import fn, pipeline_def


@pipeline_def(num_threads=2, device_id=None)
def list_pipe(files):
    jpegs, labels = fn.readers.file(files=files)
    return jpegs, labels


def grown_list(data_dir):
    files = sorted(os.path.join(data_dir, n) for n in os.listdir(data_dir))
    pipe = list_pipe(files=files[:4], batch_size=2)
    first = files[:4]
    pipe.build()
    later = list_pipe(files=first, batch_size=2)
    first.append(files[4])  # `later` read the list when it was made: 4 files, not 5
    later.build()
    return pipe.run(), later.run()


def settings_changed(settings):
    pipe = list_pipe(settings.files, batch_size=2)
    settings.files[0] = settings.files[1]
    pipe.build()
    return pipe.run()
