# golden-verify: pipe=TrainPipe kwargs={"args": type("Args", (), {"batch_size": 4, "workers": 2, "local_rank": None, "data": str(DATA / "images"), "size": 24})(), "seed": 5} iterations=7
"""A training script's pipeline class, configured from the parsed command line: the settings come
from attributes of a constructor argument (SSD's coco_pipeline.py does this)."""
import argparse
import secrets
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def TrainPipe(args, seed):
    batch_size = args.batch_size
    num_threads = args.workers
    device_id = args.local_rank
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.File(file_root=args.data, random_shuffle=True, seed=seed_or_random)
    # evaluated once, as when the pipeline was built
    size = args.size

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            for jpegs, labels in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    images = ndd.random_resized_crop(ndd.decoders.image(jpegs, device="gpu", output_type=types.RGB), device="gpu", size=size, batch_size=batch_size, rng=rng)
                    outputs = ndd.crop_mirror_normalize(images, mirror=ndd.random.coin_flip(probability=0.5, batch_size=batch_size, rng=rng), device="gpu", dtype=types.FLOAT, output_layout="CHW"), labels
                yield outputs

    return batches()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--size", type=int, default=224)
    args = parser.parse_args()
    pipe = TrainPipe(args, seed=42)
    for _ in range(10):
        images, labels = next(pipe)
