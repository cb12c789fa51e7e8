# golden-run: pipe=validation_pipeline args=(str(DATA),) iterations=3
# Two pipelines with parallel external sources kept in one list, their Python workers started
# (forked) before any pipeline is built, as DALI's parallel external source notebooks do.
import sys

import numpy as np
import itertools
import secrets
import nvidia.dali.experimental.dynamic as ndd
import nvidia.dali.types

batch_size = 6


class ExternalInputCallable:
    def __init__(self, root):
        self.root = root
        with open(root + "/images_list.txt", "r") as f:
            file_label = [line.rstrip().split(" ") for line in f if line != ""]
            self.files, self.labels = zip(*file_label)
        self.n = len(self.files)

    def __call__(self, sample_info):
        if sample_info.idx_in_epoch >= self.n:
            raise StopIteration()
        jpeg_filename = self.files[sample_info.idx_in_epoch]
        label = np.int32([self.labels[sample_info.idx_in_epoch]])
        with open(self.root + "/" + jpeg_filename, "rb") as f:
            encoded_img = np.frombuffer(f.read(), dtype=np.uint8)
        return encoded_img, label


def training_pipeline(root, *, batch_size=batch_size, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    source_2 = ExternalInputCallable(root)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        for source_data in map(lambda i: [source_2(nvidia.dali.types.SampleInfo(i * batch_size + j, j, i, 0)) for j in range(batch_size)], itertools.count()):
            with ctx:
                jpegs, labels = ndd.batch([sample[0] for sample in source_data]), ndd.batch([sample[1] for sample in source_data])
                decode = ndd.decoders.image(jpegs, device="gpu")
                contrast = ndd.random.uniform(range=(1, 3.0), batch_size=batch_size, rng=rng)
                enhance = ndd.brightness_contrast(decode, contrast=contrast)
                outputs = enhance, labels
            yield outputs

    return batches()


def validation_pipeline(root, *, batch_size=batch_size, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    source_2 = ExternalInputCallable(root)

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        for source_data in map(lambda i: [source_2(nvidia.dali.types.SampleInfo(i * batch_size + j, j, i, 0)) for j in range(batch_size)], itertools.count()):
            with ctx:
                jpegs, labels = ndd.batch([sample[0] for sample in source_data]), ndd.batch([sample[1] for sample in source_data])
                decode = ndd.decoders.image(jpegs, device="gpu")
                enhance = ndd.brightness_contrast(decode, contrast=1.5)
                outputs = enhance, labels
            yield outputs

    return batches()


def main(root):
    train_pipe = training_pipeline(root)
    val_pipe = validation_pipeline(root)

    pipelines = [train_pipe, val_pipe]

    for step in range(3):
        train_out = next(train_pipe)
        val_out = next(val_pipe)
        print(step, np.array(ndd.as_tensor(train_out[1])).ravel(), np.array(ndd.as_tensor(val_out[1])).ravel())


if __name__ == "__main__":
    main(sys.argv[1])
