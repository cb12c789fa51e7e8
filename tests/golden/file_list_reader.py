# golden-run: pipe=list_pipe args=(str(DATA / "images_list.txt"),) iterations=12
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.pipeline import pipeline_def


@pipeline_def(batch_size=4, num_threads=1)
def list_pipe(file_list):
    jpegs, labels = fn.readers.file(file_list=file_list, name="Reader")
    images = fn.decoders.image(jpegs, output_type=types.GRAY)
    images = fn.crop(images, crop=(16, 16), crop_pos_x=0.5, crop_pos_y=0.5)
    return images, labels


pipe = list_pipe("/data/list.txt")
pipe.build()
iterations = pipe.epoch_size("Reader") // 4
for _ in range(iterations):
    images, labels = pipe.run()
