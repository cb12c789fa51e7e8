"""dali_migrate.runtime: DALI dynamic mode ("ndd") API on DALI's real operators, cheaper per call.

    import dali_migrate.runtime as ndd

Converted code runs unchanged against it. See README.md in this folder for what it covers,
how it differs from native ndd, pipeline-compatible seeding and the `install()` switch.
"""

from . import _host_pool

_host_pool.configure()  # before DALI first allocates host memory (see the module)

from ._types import *  # noqa: F401,F403,E402
from ._device import Device, device  # noqa: F401
from ._eval import EvalContext, EvalMode, get_num_threads, set_num_threads  # noqa: F401
from ._stream import (  # noqa: F401
    Stream, stream, get_current_stream, set_current_stream, get_default_stream,
    set_default_stream,
)
from ._thread_pool import ThreadPool  # noqa: F401
from ._typing import DeviceLike, DTypeLike  # noqa: F401
from ._tensor import Tensor, tensor, as_tensor  # noqa: F401
from ._batch import Batch, batch, as_batch  # noqa: F401
from . import random  # noqa: F401
from . import math  # noqa: F401
from ._seeds import (  # noqa: F401
    pipeline_compat, enable_pipeline_compat, disable_pipeline_compat, pipeline_seeds,
    seed_seq_generate,
)
from ._install import install, uninstall, installed, install_from_env, installed_runtime  # noqa: F401,E501
from . import _generate

_ops_built = _generate.build(__import__(__name__, fromlist=["_"]))

from . import checkpoint  # noqa: E402,F401
from . import capture  # noqa: E402,F401
from ._imread import imread  # noqa: E402,F401
from ._external_source import ExternalSource  # noqa: E402,F401

_host_pool.settle()  # DALI reads the pool threshold now; the environment is restored
