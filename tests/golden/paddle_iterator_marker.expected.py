import paddle
from nvidia.dali import fn, pipeline_def, types
from nvidia.dali.plugin.paddle import DALIClassificationIterator, LastBatchPolicy


# dali-migrate: [pipeline-def] not converted: some uses of this pipeline in this file need a person (see the markers there)
@pipeline_def(batch_size=64, num_threads=4, device_id=0)
def val_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_shorter=256)
    images = fn.crop_mirror_normalize(images, crop=(224, 224), dtype=types.FLOAT, output_layout="CHW")
    return images, labels.gpu()


def evaluate(model, root):
    pipe = val_pipe(root)
    # dali-migrate: [call-site] the pipeline `pipe` is given to DALIClassificationIterator, which dali-migrate does not convert: convert by hand
    # dali-migrate: [not-yet-converted] Paddle iterator: iterate the converted generator and convert outputs via DLPack (paddle.utils.dlpack.from_dlpack(ndd.as_tensor(batch))) into [{name: paddle.Tensor}]; keep the epoch length / last-batch policy by hand (PARTIAL: cut the last batch to the epoch's samples; LoD outputs (name, level) by hand)
    loader = DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)
    correct = 0
    for data in loader:
        logits = model(data[0]["data"])
        correct += int((paddle.argmax(logits, axis=1) == data[0]["label"].squeeze(-1)).sum())
    return correct
