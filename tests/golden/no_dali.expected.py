"""A data loader that does not use DALI at all."""
import numpy as np
from PIL import Image


def pipeline_def(func):
    return func


@pipeline_def
def load(path):
    image = np.asarray(Image.open(path))
    return image.transpose(2, 0, 1)


class fn:
    @staticmethod
    def resize(x, size):
        return x[:size, :size]
