# golden-run: pipe=list_pipe args=(str(DATA / "images_list.txt"),) iterations=12
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def list_pipe(file_list, *, batch_size=4, num_threads=1, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    reader = ndd.readers.File(file_list=file_list)
    while True:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            with ctx:
                images = ndd.decoders.image(jpegs, output_type=types.GRAY)
                images = ndd.crop(images, crop=(16, 16), crop_pos_x=0.5, crop_pos_y=0.5)
                outputs = images, labels
            yield outputs


pipe = list_pipe("/data/list.txt")
iterations = ndd.readers.File(file_list="/data/list.txt").get_metadata()["epoch_size_padded"] // 4
for _ in range(iterations):
    images, labels = next(pipe)
