"""Decoding images fed one by one through pipe.run(name=data), as DALI's zoo examples do
(zoo/images/decode.py): the name comes in a parameter, the file catches a failed run and goes on."""
import numpy as np
import os
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd


def external_source_batch(data, dtype, copy=False, **kwargs):
    """fn.external_source(dtype=...) as a pipeline runs it (added by dali-migrate): the source's
    data must already be of that type; ndd.as_batch(dtype=...) would convert it instead."""
    if isinstance(data, (list, tuple)) and not data:
        return (ndd.batch if copy else ndd.as_batch)(data, dtype=dtype, **kwargs)
    batch = (ndd.batch if copy else ndd.as_batch)(data, **kwargs)
    if batch.dtype != ndd.dtype(dtype):
        raise RuntimeError(
            f"ExternalSource expected data of type {ndd.dtype(dtype)} and got: {batch.dtype}"
        )
    return batch


def decode_pipeline(source_name, *, batch_size=1, num_threads=4, device_id=0, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)

    def run(**pipeline_inputs):
        with ctx:
            # Read the input image
            inputs = external_source_batch(pipeline_inputs[source_name], types.UINT8, device="cpu", copy=True)

            # Decode the encoded image on GPU
            decoded = ndd.decoders.image(
                inputs,
                device="gpu",
                output_type=types.RGB,
                use_fast_idct=False,
                jpeg_fancy_upsampling=True,
            )

            outputs = (decoded,)
            for output in outputs:
                output.evaluate()  # raises here if the run failed, as pipe.run() did
            return outputs

    return run


# Create and build the decoding pipeline
pipe = decode_pipeline("encoded_img")

# The directory with images to decode
directory_path = "./img"
os.makedirs("decoded", exist_ok=True)
# Iterate through all files in the directory
for i, file_name in enumerate(sorted(os.listdir(directory_path))):
    file_path = os.path.join(directory_path, file_name)
    try:
        # Read the file into a numpy array of shape (1, img_size)
        # Send the tensor to the pipeline, run the pipeline and retrieve the output
        decoded = pipe(
            encoded_img=np.expand_dims(
                np.fromfile(file_path, dtype=np.uint8), axis=0
            )
        )
        img_on_gpu = decoded[0].select(0).torch(copy=True)

        # The image is in GPU memory and needs to be retrieved to CPU first.
        img_to_save = img_on_gpu.cpu().numpy()
        np.save(os.path.join("decoded", file_name + ".npy"), img_to_save)

    except Exception as e:
        print(f"Error loading {file_name}")
