"""A helper that prints pipeline outputs sample by sample, as DALI's general/reinterpret.ipynb
does: written for DALI versions whose TensorListCPU had no as_cpu(), it checks with hasattr and
wraps a single output in a tuple."""
import itertools
import nvidia.dali.types as types
import nvidia.dali.experimental.dynamic as ndd
import numpy as np


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


def show_result(outputs, names=["Input", "Output"], formatter=None):
    if not isinstance(outputs, tuple):
        return show_result((outputs,))

    outputs = [out.cpu() for out in outputs]

    for i in range(outputs[0].batch_size):
        print(f"---------------- Sample #{i} ----------------")
        for o, out in enumerate(outputs):
            a = np.array(out.select(i))
            s = "x".join(str(x) for x in a.shape)
            title = names[o] if names is not None and o < len(names) else f"Output #{o}"
            l = (out.layout or "")
            if l: l += ' '
            print(f"{title} ({l}{s})")
            np.set_printoptions(formatter=formatter)
            print(a)


def example_reshape(input_data, *, batch_size=3, num_threads=2, device_id=None, seed=None):
    ctx = ndd.EvalContext(num_threads=num_threads, device_id=device_id)
    np.random.seed(1234)
    source = input_data

    # the code above runs when the pipeline is made, as in pipeline mode
    def batches():
        for source_data in map(lambda i: [source() for j in range(batch_size)], itertools.count()):
            with ctx:
                inp = external_source_batch(source_data, types.INT32, copy=True)
                outputs_2 = inp, ndd.reshape(inp, shape=[5, 5], layout="HW")
            yield outputs_2

    return batches()


pipe = example_reshape(lambda: np.random.randint(0, 10, size=[25], dtype=np.int32))
show_result(next(pipe))
show_result(next(pipe), names=None)
