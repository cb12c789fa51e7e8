"""pipe.build() (rules/pipe_build.py): removed, except where a handler catches what building checks."""


def test_build_inside_a_try_with_handlers_is_marked():
    # building checks the reader's files and arguments, which the handler catches; converted, the
    # error would come at the first next(), outside the handler
    from _helpers import convert

    src = ("import sys\nfrom nvidia.dali import fn, pipeline_def\n\n\n"
           "@pipeline_def(batch_size=2, num_threads=1, device_id=None)\ndef p(root):\n"
           "    j, l = fn.readers.file(file_root=root)\n    return j, l\n\n\n"
           "def main(root):\n    pipe = p(root)\n    try:\n        pipe.build()\n    except RuntimeError:\n"
           "        sys.exit(0)\n    return pipe.run()\n")
    out = convert(src)
    assert "@pipeline_def" in out and "pipe.build() inside a `try` with handlers" in out
    out = convert(src.replace("    try:\n        pipe.build()\n    except RuntimeError:\n        sys.exit(0)\n", "    pipe.build()\n"))
    assert "dali-migrate:" not in out and "build()" not in out
