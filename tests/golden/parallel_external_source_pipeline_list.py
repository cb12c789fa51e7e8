# golden-run: pipe=validation_pipeline args=(str(DATA),) iterations=3
# Two pipelines with parallel external sources kept in one list, their Python workers started
# (forked) before any pipeline is built, as DALI's parallel external source notebooks do.
import sys

import numpy as np
from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn

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


@pipeline_def(batch_size=batch_size, num_threads=2, device_id=0, py_num_workers=4)
def training_pipeline(root):
    jpegs, labels = fn.external_source(source=ExternalInputCallable(root),
                                       num_outputs=2, batch=False,
                                       parallel=True)
    decode = fn.decoders.image(jpegs, device="mixed")
    contrast = fn.random.uniform(range=(1, 3.0))
    enhance = fn.brightness_contrast(decode, contrast=contrast)
    return enhance, labels


@pipeline_def(batch_size=batch_size, num_threads=2, device_id=0, py_num_workers=4)
def validation_pipeline(root):
    jpegs, labels = fn.external_source(source=ExternalInputCallable(root),
                                       num_outputs=2, batch=False,
                                       parallel=True)
    decode = fn.decoders.image(jpegs, device="mixed")
    enhance = fn.brightness_contrast(decode, contrast=1.5)
    return enhance, labels


def main(root):
    train_pipe = training_pipeline(root)
    val_pipe = validation_pipeline(root)

    pipelines = [train_pipe, val_pipe]

    for pipe in pipelines:
        pipe.start_py_workers()

    for pipe in pipelines:
        pipe.build()

    for step in range(3):
        train_out = train_pipe.run()
        val_out = val_pipe.run()
        print(step, train_out[1].as_array().ravel(), val_out[1].as_array().ravel())


if __name__ == "__main__":
    main(sys.argv[1])
