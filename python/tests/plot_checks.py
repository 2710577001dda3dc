"""Checks the figure tests share: a PNG is not blank, and a figure's panels."""

import os

import numpy as np
from matplotlib import image as mpimg


def assert_png(path, min_bytes=8000, min_colours=8):
    assert os.path.getsize(path) > min_bytes, f"{path} is only {os.path.getsize(path)} bytes"
    img = mpimg.imread(path)
    colours = np.unique(img.reshape(-1, img.shape[-1]), axis=0)
    assert len(colours) >= min_colours, f"{path} has {len(colours)} colours: blank?"


def save(fig, tmp_path, name):
    path = tmp_path / name
    fig.savefig(path, dpi=80)
    return path


def visible_axes(fig):
    """The figure's panels (not colorbars)."""
    return [a for a in fig.axes if a.get_visible() and a.get_label() != "<colorbar>"]
