"""Braid from Python.

Light on purpose: importing `braid` loads nothing heavy. The figures live in
`braid.figures` (matplotlib, pandas), imported only when asked for:

    from braid import figures
    fig = figures.bars_relative_dlct(figures.load_sweep("out/nested/matrix"))
"""

__all__ = ["figures", "style"]
