import torch
from nvidia.dali import fn, pipeline_def, types
from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy


@pipeline_def(batch_size=32, num_threads=4, device_id=0)
def torch_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.resize(images, resize_x=224, resize_y=224)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW")
    return images, labels.gpu()


def train(model, root):
    pipe = torch_pipe(root)
    loader = DALIGenericIterator(
        [pipe], ["data", "label"], reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL
    )
    for batch in loader:
        data = batch[0]["data"]
        label = batch[0]["label"].squeeze(-1).long()
        loss = torch.nn.functional.cross_entropy(model(data), label)
        loss.backward()
