#!/usr/bin/env python3
"""Regenerates every golden JSON file in this folder and in claims/ by running each script in turn."""
import pathlib
import runpy

HERE = pathlib.Path(__file__).resolve().parent
SCRIPTS = ["ops.py", "nn_optim.py", "attention.py", "transformer.py"]
# The recordings behind the book's sentences about PyTorch, one script per page.
CLAIMS = sorted(p.name for p in (HERE / "claims").glob("*.py") if p.name != "recorder.py")

if __name__ == "__main__":
    for name in SCRIPTS:
        print(f"== {name}")
        runpy.run_path(str(HERE / name), run_name="__main__")
    for name in CLAIMS:
        print(f"== claims/{name}")
        runpy.run_path(str(HERE / "claims" / name), run_name="__main__")
