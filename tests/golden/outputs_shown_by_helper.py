"""A helper that prints pipeline outputs sample by sample, as DALI's general/reinterpret.ipynb
does: written for DALI versions whose TensorListCPU had no as_cpu(), it checks with hasattr and
wraps a single output in a tuple."""
import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def
import numpy as np


def show_result(outputs, names=["Input", "Output"], formatter=None):
    if not isinstance(outputs, tuple):
        return show_result((outputs,))

    outputs = [out.as_cpu() if hasattr(out, "as_cpu") else out for out in outputs]

    for i in range(len(outputs[0])):
        print(f"---------------- Sample #{i} ----------------")
        for o, out in enumerate(outputs):
            a = np.array(out[i])
            s = "x".join(str(x) for x in a.shape)
            title = names[o] if names is not None and o < len(names) else f"Output #{o}"
            l = out.layout()
            if l: l += ' '
            print(f"{title} ({l}{s})")
            np.set_printoptions(formatter=formatter)
            print(a)


@pipeline_def(device_id=None, num_threads=2, batch_size=3)
def example_reshape(input_data):
    np.random.seed(1234)
    inp = fn.external_source(input_data, batch=False, dtype=types.INT32)
    return inp, fn.reshape(inp, shape=[5, 5], layout="HW")


pipe = example_reshape(lambda: np.random.randint(0, 10, size=[25], dtype=np.int32))
pipe.build()
show_result(pipe.run())
show_result(pipe.run(), names=None)
