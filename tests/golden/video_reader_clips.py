# golden-run: pipe=clip_pipe args=(sorted(str(p) for p in (DATA / "video").glob("*/*.avi")),) iterations=6
import glob

from nvidia.dali import fn, pipeline_def


@pipeline_def(batch_size=2, num_threads=2)
def clip_pipe(files, sequence_length=4):
    # filenames without labels: the reader gives the frames alone
    frames = fn.experimental.readers.video(
        device="cpu", filenames=files, sequence_length=sequence_length, name="Reader"
    )
    frames = fn.flip(frames, horizontal=1)
    return frames


if __name__ == "__main__":
    files = sorted(glob.glob("data/videos/*/*.avi"))
    pipe = clip_pipe(files)
    pipe.build()
    for _ in range(pipe.epoch_size("Reader") // 2):
        (frames,) = pipe.run()
        print(frames.as_array().shape)
