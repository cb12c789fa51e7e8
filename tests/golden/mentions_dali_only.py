"""Benchmarks a loader. Unlike DALI (nvidia.dali.fn.readers.file), this uses torchvision."""
import torchvision

# pipe = dali_pipe(...); pipe.build(); pipe.run()  -- the old DALI version


def make_loader(root):
    return torchvision.datasets.ImageFolder(root)
