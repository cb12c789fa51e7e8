# golden-run: pipe=samples_with_noise args=(str(DATA / "numpy" / "f32_2d"), [str(DATA / "numpy" / "i64_1d" / f"i64_1d_0{i}.npy") for i in range(3)]) iterations=13
# golden-verify: pipe=shuffled_samples_with_noise args=(str(DATA / "numpy" / "f32_2d"), [str(DATA / "numpy" / "i64_1d" / f"i64_1d_0{i}.npy") for i in range(3)]) iterations=13
"""Samples read with a bank of noise arrays that has fewer files: the two numpy readers reach the
ends of their epochs at different iterations and each goes on into its next epoch on its own."""
import argparse
import secrets
import numpy as np
import nvidia.dali.experimental.dynamic as ndd


def samples_with_noise(sample_dir, noise_files, *, batch_size=2, num_threads=2, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.Numpy(file_root=sample_dir, file_filter="*.npy")
    reader_2 = ndd.readers.Numpy(files=noise_files)

    # one batch of each reader per iteration, each going on into its next epoch on its own, as in a pipeline
    def endless(reader):
        while True:
            yield from reader.next_epoch(batch_size=batch_size)

    for (samples,), (noise,) in zip(endless(reader), endless(reader_2)):
        with ctx:
            outputs = samples, noise
        yield outputs


def shuffled_samples_with_noise(sample_dir, noise_files, shuffle_seed=42, *, batch_size=2, num_threads=2, device_id=0, seed=1234):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    seed_or_random = seed if seed is not None and seed >= 0 else secrets.randbits(63)
    rng = ndd.random.RNG(seed=seed_or_random)
    reader = ndd.readers.Numpy(file_root=sample_dir, file_filter="*.npy", random_shuffle=True,
                               seed=shuffle_seed if shuffle_seed is not None else seed_or_random ^ 1)
    # the noise bank is shuffled anew every epoch, with the pipeline's seed
    reader_2 = ndd.readers.Numpy(files=noise_files, shuffle_after_epoch=True, seed=seed_or_random)

    # one batch of each reader per iteration, each going on into its next epoch on its own, as in a pipeline
    def endless(reader):
        while True:
            yield from reader.next_epoch(batch_size=batch_size)

    for (samples,), (noise,) in zip(endless(reader), endless(reader_2)):
        with ctx:
            gain = ndd.random.uniform(range=(0.5, 1.5), batch_size=batch_size, rng=rng)
            outputs = samples * gain, noise
        yield outputs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("samples")
    parser.add_argument("noise", nargs="+")
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    pipe = shuffled_samples_with_noise(args.samples, args.noise)
    print({
        "Noise": ndd.readers.Numpy(files=args.noise, shuffle_after_epoch=True).get_metadata()["epoch_size_padded"],
        "Samples": ndd.readers.Numpy(file_root=args.samples, file_filter="*.npy").get_metadata()["epoch_size_padded"],
    })
    for step in range(args.steps):
        samples, noise = next(pipe)
        print(step, np.array(samples.select(0)).shape, np.array(noise.select(0)))


if __name__ == "__main__":
    main()
