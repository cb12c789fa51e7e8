# golden-run: pipe=tfrecord_pipe args=(str(DATA / "tfrecord" / "train.tfrecord"), str(DATA / "tfrecord" / "train.idx")) iterations=6
import nvidia.dali.tfrecord as tfrec
import nvidia.dali.experimental.dynamic as ndd


def tfrecord_pipe(path, index_path, *, batch_size=4, num_threads=2, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.TFRecord(
        path=path,
        index_path=index_path,
        features={
            "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
            "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
        },
    )

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        while True:
            for inputs in reader.next_epoch(batch_size=batch_size):
                with ctx:
                    images = ndd.decoders.image(inputs["image/encoded"])
                    images = ndd.resize(images, resize_x=28, resize_y=28)
                    outputs = images, inputs["image/class/label"]
                yield outputs

    return batches()
