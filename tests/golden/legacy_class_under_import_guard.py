# golden-verify: pipe=HybridTrainPipe args=(4, 2, None, str(DATA / "images"), 24) iterations=6
"""ziplab/QTool-style: the DALI classes are defined only where DALI imports."""
try:
    from nvidia.dali.pipeline import Pipeline
    import nvidia.dali.ops as ops
    import nvidia.dali.types as types
    from nvidia.dali.plugin.pytorch import DALIClassificationIterator
    dali_enable = True
except ImportError:
    dali_enable = False

if dali_enable:
    class HybridTrainPipe(Pipeline):
        def __init__(self, batch_size, num_threads, device_id, data_dir, crop):
            super().__init__(batch_size, num_threads, device_id, seed=12)
            self.input = ops.readers.File(file_root=data_dir, shard_id=0, num_shards=1, random_shuffle=True)
            self.decode = ops.decoders.Image(device="mixed", output_type=types.RGB)
            self.res = ops.Resize(device="gpu", resize_x=crop, resize_y=crop)
            self.cmnp = ops.CropMirrorNormalize(
                device="gpu",
                dtype=types.FLOAT,
                output_layout=types.NCHW,
                crop=(crop, crop),
                mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
            )

        def define_graph(self):
            jpegs, labels = self.input(name="Reader")
            images = self.decode(jpegs)
            images = self.res(images)
            output = self.cmnp(images)
            return output, labels

    def get_train_loader(data_dir, batch_size, crop=24):
        pipe = HybridTrainPipe(batch_size=batch_size, num_threads=2, device_id=0, data_dir=data_dir, crop=crop)
        pipe.build()
        return DALIClassificationIterator(pipe, reader_name="Reader")
else:
    def get_train_loader(data_dir, batch_size, crop=24):
        raise RuntimeError("DALI is not installed")
