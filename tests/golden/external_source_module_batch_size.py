"""A module's `batch_size` (the source's batches) beside a pipeline whose own batch size is larger,
the way DALI's video zoo example reads clips with their annotations: the source gives batches of
`batch_size` samples and DALI's PyTorch iterator runs over the pipeline until the source ends."""
# golden-run: pipe=read_meta_pipeline args=(str(DATA),) iterations=7
import argparse
import os

import numpy as np

from nvidia.dali.pipeline import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types
import nvidia.dali.plugin.pytorch as dali_pytorch

# The files come in batches of 3 although the pipeline could take 8: the iterator's batches are
# as large as the source's.
batch_size = 3


class ReadMetaExternalInput:
    def __init__(self, batch_size, root_dir):
        with open(os.path.join(root_dir, "images_list.txt"), "r") as file:
            self.files = [line.split() for line in file if line.strip()]

        self.batch_size = batch_size
        self.full_iterations = len(self.files) // self.batch_size
        self.root_dir = root_dir

    def __iter__(self):
        self.i = 0
        return self

    def __next__(self):
        batch = []
        labels = []
        for _ in range(self.batch_size):
            if self.i == self.full_iterations * self.batch_size:
                self.__iter__()
                raise StopIteration()

            path, label = self.files[self.i]
            batch.append(np.fromfile(os.path.join(self.root_dir, path), dtype=np.uint8))
            labels.append(np.array([int(label)], dtype=np.int32))
            self.i += 1

        return batch, labels


@pipeline_def(batch_size=8, num_threads=4, device_id=0, exec_dynamic=True)
def read_meta_pipeline(root_dir):
    image, label = fn.external_source(
        source=ReadMetaExternalInput(batch_size, root_dir),
        num_outputs=2,
        dtype=[types.UINT8, types.INT32],
    )
    decoded = fn.decoders.image(image, device="mixed", output_type=types.RGB)
    resized = fn.resize(decoded, size=(32, 32))
    return resized, label


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", default="./data/")
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()

    pipeline = read_meta_pipeline(args.data_dir)
    pipeline.build()

    dali_iter = dali_pytorch.DALIGenericIterator(pipeline, ["images", "labels"])
    for epoch in range(args.epochs):
        for i, data in enumerate(dali_iter):
            print(epoch, i, tuple(data[0]["images"].shape), data[0]["labels"].flatten().tolist())
