# golden-run: pipe=TrainPipe kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "data_dir": str(DATA / "images")} iterations=8
"""A Pipeline subclass whose authors explained their operators in comments: above the line, after
it and between the arguments. The converted function must keep every one of them."""
import nvidia.dali.ops as ops
import nvidia.dali.types as types
from nvidia.dali.pipeline import Pipeline


class TrainPipe(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, data_dir):
        super().__init__(batch_size, num_threads, device_id, seed=12)
        # one folder per class; the label is the folder's index
        self.input = ops.readers.File(file_root=data_dir)  # the training images
        self.decode = ops.decoders.Image(
            device="cpu",  # CPU decode: no GPU on the build machines
            output_type=types.RGB,
        )
        # the model was trained on 32x32 inputs
        self.resize = ops.Resize(
            resize_x=32,
            resize_y=32,
            # linear, as in the reference implementation
            interp_type=types.INTERP_LINEAR,
        )
        self.cmn = ops.CropMirrorNormalize(
            dtype=types.FLOAT,
            output_layout="CHW",
            mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],  # ImageNet mean
            std=[0.229 * 255, 0.224 * 255, 0.225 * 255],  # ImageNet std
        )
        self.flip = ops.Flip(horizontal=1)  # TODO: re-enable once the labels are mirrored too

    def define_graph(self):
        jpegs, labels = self.input(name="Reader")
        images = self.decode(jpegs)
        # resize before normalizing: CropMirrorNormalize keeps the size it is given
        images = self.resize(images)
        images = self.cmn(images)
        return images, labels  # labels stay on the CPU


pipe = TrainPipe(batch_size=4, num_threads=2, device_id=0, data_dir="images")
pipe.build()
for _ in range(3):
    images, labels = pipe.run()
    print(images.at(0).shape, labels.at(0))
