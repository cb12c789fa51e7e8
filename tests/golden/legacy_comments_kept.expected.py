# golden-run: pipe=TrainPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images")} iterations=8
"""A Pipeline subclass whose authors explained their operators in comments: above the line, after
it and between the arguments. The converted function must keep every one of them."""
import numpy as np
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def TrainPipe(batch_size, num_threads, device_id, data_dir, *, seed=12):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    # one folder per class; the label is the folder's index
    # the training images
    # TODO: re-enable once the labels are mirrored too
    reader = ndd.readers.File(file_root=data_dir)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                # CPU decode: no GPU on the build machines
                images = ndd.decoders.image(jpegs, device="cpu", output_type=types.RGB)
                # resize before normalizing: CropMirrorNormalize keeps the size it is given
                # the model was trained on 32x32 inputs
                # linear, as in the reference implementation
                images = ndd.resize(images, resize_x=32, resize_y=32, interp_type=types.INTERP_LINEAR)
                # ImageNet mean
                # ImageNet std
                images = ndd.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", mean=[0.485 * 255, 0.456 * 255, 0.406 * 255], std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
                outputs = images, labels  # labels stay on the CPU
            yield outputs


pipe = TrainPipe(batch_size=4, num_threads=2, device_id=0, data_dir="images")
for _ in range(3):
    images, labels = next(pipe)
    print(np.array(images.select(0)).shape, np.array(labels.select(0)))
