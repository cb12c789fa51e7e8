import paddle
from nvidia.dali import fn, pipeline_def, types
from nvidia.dali.plugin.paddle import DALIGenericIterator, LastBatchPolicy


# dali-migrate: [pipeline-def] not converted: some uses of this pipeline in this file need a person (see the markers there)
@pipeline_def(batch_size=8, num_threads=4, device_id=0, seed=42)
def coco_pipe(file_root, annotations_file):
    jpegs, bboxes, labels = fn.readers.coco(
        file_root=file_root, annotations_file=annotations_file, skip_empty=True, ratio=True, ltrb=True, name="Reader"
    )
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_x=300, resize_y=300)
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", mean=[104.0, 117.0, 123.0])
    return images, bboxes, labels


def train(model, optimizer, file_root, annotations_file):
    pipe = coco_pipe(file_root, annotations_file)
    # dali-migrate: [call-site] Paddle DALIGenericIterator: output_map asks for a LoD level (name, level): a LoDTensor with sequence lengths has no dynamic-mode counterpart; convert by hand (iterate the converted generator, build the LoDTensor from each batch's samples and their shapes)
    # dali-migrate: [not-yet-converted] Paddle iterator not converted (its pipeline, coco_pipe, is not converted: its marker says why): iterate the converted generator and convert outputs via DLPack into [{name: tensor}] as DALI's iterator does (paddle.framework.core.from_dlpack(ndd.as_tensor(batch).__dlpack__()), a core DenseTensor; a GPU batch with stream=paddle.device.cuda.current_stream(device_id).cuda_stream); keep the epoch length / last-batch policy by hand (PARTIAL: cut the last batch to the epoch's samples; LoD outputs (name, level) by hand)
    loader = DALIGenericIterator(
        [pipe], ["image", ("gt_box", 1), ("gt_label", 1)],
        reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True, dynamic_shape=True)
    for data in loader:
        loss = model(paddle.to_tensor(data[0]["image"]), data[0]["gt_box"], data[0]["gt_label"])
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
