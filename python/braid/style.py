"""Shared look of Braid's figures: a colour-blind-safe palette and readable defaults.

Every plotting function in `braid.figures` draws inside `context()`, so these settings
apply to its figure without changing matplotlib's global state. To restyle:

- change `RC` (or pass `rc={...}` to a plotting function) for fonts, sizes, grid;
- change `PALETTE` / `PATH_COLOURS` for the colours of categories and paths;
- or take the returned Figure and edit its artists as with any matplotlib figure.
"""

import os
import sys
from contextlib import contextmanager

import matplotlib

# Files only, never a display, unless a backend was chosen (MPLBACKEND) or this runs under
# IPython or Jupyter, whose inline backend shows the figures in the notebook.
if "MPLBACKEND" not in os.environ and "IPython" not in sys.modules:
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Okabe & Ito (2008), "Color Universal Design": distinguishable under the common forms of
# colour blindness. Black is left out of the cycle (it marks end-to-end goodput).
OKABE_ITO = {
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
    "black": "#000000",
}

# Category colours in order (schedulers, combinations, ...). Yellow last: weak on white.
PALETTE = [
    OKABE_ITO["blue"],
    OKABE_ITO["vermillion"],
    OKABE_ITO["bluish_green"],
    OKABE_ITO["orange"],
    OKABE_ITO["reddish_purple"],
    OKABE_ITO["sky_blue"],
    OKABE_ITO["yellow"],
]

# Tunnel paths: path 1 (index 0, the preferred one) and path 2, then the rest of the palette.
PATH_COLOURS = [OKABE_ITO["vermillion"], OKABE_ITO["blue"], OKABE_ITO["bluish_green"], OKABE_ITO["orange"]]
GOODPUT_COLOUR = OKABE_ITO["black"]
ERRORBAR_COLOUR = "#555555"  # the paper's grey standard-deviation bars

# Contours: a diverging map, ColorBrewer's RdBu (colour-blind safe). Blue = good (much
# aggregation), red = poor, as the paper reads; `contour` reverses it for values where
# lower is better (relative DLCT).
CONTOUR_CMAP = "RdBu"

RC = {
    "figure.dpi": 100,
    "savefig.dpi": 150,  # the page's PNGs (figures use constrained layout: no "tight" bbox pass)
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
    "figure.facecolor": "white",
    "axes.facecolor": "white",
}


def colour(i):
    """The i-th category colour, cycling."""
    return PALETTE[i % len(PALETTE)]


def path_colour(i):
    """The colour of path i (0-based: path 1 is 0)."""
    return PATH_COLOURS[i % len(PATH_COLOURS)]


@contextmanager
def context(rc=None):
    """matplotlib settings of Braid's figures, plus `rc` overrides, for the `with` block."""
    settings = dict(RC)
    if rc:
        settings.update(rc)
    with plt.rc_context(settings):
        yield


def use(rc=None):
    """Apply Braid's settings globally (for a notebook or a script of your own)."""
    plt.rcParams.update(RC)
    if rc:
        plt.rcParams.update(rc)
