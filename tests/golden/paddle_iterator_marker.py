import paddle
from nvidia.dali import fn, pipeline_def, types
from nvidia.dali.plugin.paddle import DALIClassificationIterator, LastBatchPolicy


@pipeline_def(batch_size=64, num_threads=4, device_id=0)
def val_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_shorter=256)
    images = fn.crop_mirror_normalize(images, crop=(224, 224), dtype=types.FLOAT, output_layout="CHW")
    return images, labels.gpu()


def evaluate(model, root):
    pipe = val_pipe(root)
    loader = DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)
    correct = 0
    for data in loader:
        logits = model(data[0]["data"])
        correct += int((paddle.argmax(logits, axis=1) == data[0]["label"].squeeze(-1)).sum())
    return correct
