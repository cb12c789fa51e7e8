# golden-run: pipe=decode_pipe args=(str(DATA / "images"),) iterations=8
import argparse
import logging

from nvidia.dali import fn, pipeline_def

log = logging.getLogger(__name__)


@pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=7)
def decode_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader")
    images = fn.decoders.image(jpegs, device="cpu")
    images = fn.resize(images, resize_x=16, resize_y=16)
    return images, labels


def train(root, iterations):
    pipe = decode_pipe(root)
    pipe.build()
    done = 0
    for _ in range(iterations):
        try:
            images, labels = pipe.run()
        except RuntimeError as e:  # a corrupt image: skip the batch, keep training
            log.warning("skipped a batch: %s", e)
            continue
        done += 1
    return done


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    args = parser.parse_args()
    print(train(args.root, 10))
