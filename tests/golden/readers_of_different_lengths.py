# golden-run: pipe=samples_with_noise args=(str(DATA / "numpy" / "f32_2d"), [str(DATA / "numpy" / "i64_1d" / f"i64_1d_0{i}.npy") for i in range(3)]) iterations=13
# golden-verify: pipe=shuffled_samples_with_noise args=(str(DATA / "numpy" / "f32_2d"), [str(DATA / "numpy" / "i64_1d" / f"i64_1d_0{i}.npy") for i in range(3)]) iterations=13
"""Samples read with a bank of noise arrays that has fewer files: the two numpy readers reach the
ends of their epochs at different iterations and each goes on into its next epoch on its own."""
import argparse

from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=2, num_threads=2, device_id=0)
def samples_with_noise(sample_dir, noise_files):
    samples = fn.readers.numpy(file_root=sample_dir, file_filter="*.npy", name="Samples")
    noise = fn.readers.numpy(files=noise_files, name="Noise")
    return samples, noise


@pipeline_def(batch_size=2, num_threads=2, device_id=0, seed=1234)
def shuffled_samples_with_noise(sample_dir, noise_files, shuffle_seed=42):
    samples = fn.readers.numpy(file_root=sample_dir, file_filter="*.npy", random_shuffle=True,
                               seed=shuffle_seed, name="Samples")
    # the noise bank is shuffled anew every epoch, with the pipeline's seed
    noise = fn.readers.numpy(files=noise_files, shuffle_after_epoch=True, name="Noise")
    gain = fn.random.uniform(range=(0.5, 1.5))
    return samples * gain, noise


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("samples")
    parser.add_argument("noise", nargs="+")
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    pipe = shuffled_samples_with_noise(args.samples, args.noise)
    pipe.build()
    print(pipe.epoch_size())
    for step in range(args.steps):
        samples, noise = pipe.run()
        print(step, samples.at(0).shape, noise.at(0))


if __name__ == "__main__":
    main()
