"""examples/nested_cc.ipynb runs headless from top to bottom in a real Jupyter kernel
(nbclient), and its cells produce what they say: the summary line, a table, the figures."""

import os

import nbformat
import pytest
from nbclient import NotebookClient

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples")


def test_the_notebook_runs_and_draws(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAID_NOTEBOOK_OUT", str(tmp_path))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(os.path.join(EXAMPLES, "nested_cc.ipynb"), as_version=4)
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": EXAMPLES}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    errors = [o for o in outputs if o.output_type == "error"]
    assert not errors, errors
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "of path 1 alone" in text, text
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 2, f"{len(images)} figures drawn"
    assert (tmp_path / "grid-cluster" / "runs.parquet").is_file()
