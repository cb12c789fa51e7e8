# golden-run: pipe=decode_pipe args=(str(DATA / "images"),) iterations=8
import argparse
import logging
import functools
import nvidia.dali.experimental.dynamic as ndd


class ResumeAfterErrors:
    """Added by dali-migrate: the converted pipeline's next() raises a failing iteration's error and
    the next call gives the next batch, as pipe.run() did. A generator that raised is finished, so
    the converted pipeline yields the error and this iterator raises it.
    """

    def __init__(self, generator):
        self._generator = generator

    def __iter__(self):
        return self

    def __next__(self):
        outputs = next(self._generator)
        if isinstance(outputs, Exception):
            raise outputs
        return outputs

    @classmethod
    def wrap(cls, pipeline):
        @functools.wraps(pipeline)
        def start(*args, **kwargs):
            return cls(pipeline(*args, **kwargs))

        return start


log = logging.getLogger(__name__)


@ResumeAfterErrors.wrap
def decode_pipe(root, *, batch_size=4, num_threads=2, device_id=None, seed=7):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_root=root)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            try:
                with ctx:
                    images = ndd.decoders.image(jpegs, device="cpu")
                    images = ndd.resize(images, resize_x=16, resize_y=16)
                    outputs = images, labels
                for output in outputs:
                    output.evaluate()
            except Exception as error:
                outputs = error  # raised by next(), as pipe.run() raised it
            yield outputs


def train(root, iterations):
    pipe = decode_pipe(root)
    done = 0
    for _ in range(iterations):
        try:
            images, labels = next(pipe)
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
