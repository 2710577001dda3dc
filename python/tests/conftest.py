"""Puts python/ on the import path, so `import braid` finds python/braid without installing, and
closes the figures each test drew."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pytest


@pytest.fixture(autouse=True)
def _close_figures():
    """Each test's figures are closed after it: pyplot keeps every open figure alive."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")
