# golden-verify: pipe=MXNetReaderPipeline kwargs={"batch_size": 4, "num_threads": 2, "device_id": None, "db_folder": str(DATA / "recordio") + "/"} iterations=7
"""The pattern of DALI's "various readers" notebooks: a base class makes the augmentations and
builds the graph in base_define_graph(); each reader's subclass adds its reader and hands its
outputs to base_define_graph() from define_graph()."""
from nvidia.dali.pipeline import Pipeline
import nvidia.dali.ops as ops
import nvidia.dali.types as types


class CommonPipeline(Pipeline):
    def __init__(self, batch_size, num_threads, device_id):
        super(CommonPipeline, self).__init__(batch_size, num_threads, device_id, seed=12)

        self.decode = ops.ImageDecoder(device="mixed", output_type=types.RGB)
        self.res = ops.RandomResizedCrop(device="gpu", size=(32, 32))
        self.cmnp = ops.CropMirrorNormalize(
            device="gpu",
            dtype=types.FLOAT,
            output_layout=types.NCHW,
            crop=(24, 24),
            mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
            std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
        )
        self.coin = ops.random.CoinFlip(probability=0.5)
        self.uniform = ops.random.Uniform(range=(0.0, 1.0))

    def base_define_graph(self, inputs, labels):
        rng = self.coin()
        images = self.decode(inputs)
        images = self.res(images)
        output = self.cmnp(images.gpu(), mirror=rng, crop_pos_x=self.uniform(), crop_pos_y=self.uniform())
        return (output, labels)


class MXNetReaderPipeline(CommonPipeline):
    def __init__(self, batch_size, num_threads, device_id, db_folder, shard_id=0, num_gpus=1):
        super(MXNetReaderPipeline, self).__init__(batch_size, num_threads, device_id)
        self.input = ops.readers.MXNet(
            path=[db_folder + "train.rec"],
            index_path=[db_folder + "train.idx"],
            random_shuffle=True,
            shard_id=shard_id,
            num_shards=num_gpus,
        )

    def define_graph(self):
        images, labels = self.input(name="Reader")
        return self.base_define_graph(images, labels)


class CaffeReadPipeline(CommonPipeline):
    def __init__(self, batch_size, num_threads, device_id, lmdb_folder, shard_id=0, num_gpus=1):
        super(CaffeReadPipeline, self).__init__(batch_size, num_threads, device_id)
        self.input = ops.readers.Caffe(path=lmdb_folder, random_shuffle=True, shard_id=shard_id, num_shards=num_gpus)

    def define_graph(self):
        images, labels = self.input(name="Reader")
        return self.base_define_graph(images, labels)


class FileReadPipeline(CommonPipeline):
    def __init__(self, batch_size, num_threads, device_id, image_dir):
        super(FileReadPipeline, self).__init__(batch_size, num_threads, device_id)
        self.input = ops.readers.File(file_root=image_dir)

    def define_graph(self):
        images, labels = self.input(name="Reader")
        return self.base_define_graph(images, labels)


if __name__ == "__main__":
    rec_pipe = MXNetReaderPipeline(batch_size=8, num_threads=2, device_id=0, db_folder="db/recordio/")
    rec_pipe.build()
    lmdb_pipe = CaffeReadPipeline(batch_size=8, num_threads=2, device_id=0, lmdb_folder="db/lmdb")
    lmdb_pipe.build()
    file_pipe = FileReadPipeline(batch_size=8, num_threads=2, device_id=0, image_dir="images")
    file_pipe.build()
    for step in range(4):
        images, labels = rec_pipe.run()
        images, labels = lmdb_pipe.run()
        images, labels = file_pipe.run()
