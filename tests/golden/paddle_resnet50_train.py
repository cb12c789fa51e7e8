# golden-run: pipe=val_pipe args=(str(DATA / "images"),) kwargs={"batch_size": 4, "shard_id": 0, "num_shards": 1} iterations=8
import argparse
import os

from nvidia.dali import fn, pipeline_def, types


@pipeline_def(seed=12)
def train_pipe(data_dir, shard_id, num_shards, crop=224):
    jpegs, labels = fn.readers.file(
        file_root=data_dir, shard_id=shard_id, num_shards=num_shards, random_shuffle=True, pad_last_batch=True, name="Reader"
    )
    images = fn.decoders.image_random_crop(
        jpegs, device="mixed", output_type=types.RGB, random_aspect_ratio=[0.8, 1.25], random_area=[0.1, 1.0], num_attempts=100
    )
    images = fn.resize(images, resize_x=crop, resize_y=crop, interp_type=types.INTERP_TRIANGULAR)
    mirror = fn.random.coin_flip(probability=0.5)
    images = fn.crop_mirror_normalize(
        images,
        dtype=types.FLOAT,
        output_layout="CHW",
        crop=(crop, crop),
        mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
        std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
        mirror=mirror,
    )
    labels = fn.cast(labels.gpu(), dtype=types.INT64)
    return images, labels


@pipeline_def
def val_pipe(data_dir, shard_id, num_shards, crop=224, size=256):
    jpegs, labels = fn.readers.file(
        file_root=data_dir, shard_id=shard_id, num_shards=num_shards, pad_last_batch=True, name="Reader"
    )
    images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
    images = fn.resize(images, resize_shorter=size, interp_type=types.INTERP_TRIANGULAR)
    images = fn.crop_mirror_normalize(
        images,
        dtype=types.FLOAT,
        output_layout="CHW",
        crop=(crop, crop),
        mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
        std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
    )
    labels = fn.cast(labels.gpu(), dtype=types.INT64)
    return images, labels


def main(args):
    # Imported here: the pipelines above are also used by tools that do not install Paddle.
    import paddle
    from nvidia.dali.plugin.paddle import DALIClassificationIterator, LastBatchPolicy

    local_rank = int(os.environ.get("PADDLE_TRAINER_ID", 0))
    world_size = int(os.environ.get("PADDLE_TRAINERS_NUM", 1))
    device_id = int(os.environ.get("FLAGS_selected_gpus", 0))
    paddle.set_device(f"gpu:{device_id}")

    train_dir, val_dir = os.path.join(args.data, "train"), os.path.join(args.data, "val")
    pipe = train_pipe(
        train_dir, local_rank, world_size,
        batch_size=args.batch_size, num_threads=args.num_threads, device_id=device_id,
    )
    pipe.build()
    train_loader = DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.DROP)

    val = val_pipe(
        val_dir, local_rank, world_size,
        batch_size=args.batch_size, num_threads=args.num_threads, device_id=device_id,
    )
    val.build()
    val_loader = DALIClassificationIterator(val, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL)

    model = paddle.vision.models.resnet50(num_classes=1000)
    optimizer = paddle.optimizer.Momentum(
        learning_rate=args.lr, momentum=0.9, parameters=model.parameters(), weight_decay=1e-4
    )
    for epoch in range(args.epochs):
        model.train()
        for step, batch in enumerate(train_loader):
            images = paddle.to_tensor(batch[0]["data"])
            labels = paddle.to_tensor(batch[0]["label"])
            loss = paddle.nn.functional.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            optimizer.clear_grad()
            if local_rank == 0 and step % args.print_freq == 0:
                print(f"epoch {epoch} step {step}/{len(train_loader)} loss {float(loss):.4f}")
        train_loader.reset()

        model.eval()
        correct = total = 0
        with paddle.no_grad():
            for batch in val_loader:
                images = paddle.to_tensor(batch[0]["data"])
                labels = paddle.to_tensor(batch[0]["label"])
                correct += int((model(images).argmax(axis=1) == labels.squeeze(-1)).sum())
                total += batch[0]["label"].shape()[0]
        val_loader.reset()
        print(f"epoch {epoch}: top-1 {correct / total:.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Paddle ImageNet training with DALI")
    parser.add_argument("data", metavar="DIR", help="path to the dataset (with train/ and val/)")
    parser.add_argument("-j", "--num_threads", default=4, type=int, help="DALI threads (default: 4)")
    parser.add_argument("-b", "--batch-size", default=128, type=int, help="mini-batch size per GPU (default: 128)")
    parser.add_argument("--lr", default=0.1, type=float, help="initial learning rate")
    parser.add_argument("--epochs", default=90, type=int, help="number of epochs")
    parser.add_argument("--print-freq", "-p", default=10, type=int, help="print frequency (default: 10)")
    main(parser.parse_args())
