#!/usr/bin/env python3
"""Regenerates every golden JSON file in this folder by running each script in turn."""
import pathlib
import runpy

HERE = pathlib.Path(__file__).resolve().parent
SCRIPTS = ["ops.py", "nn_optim.py", "attention.py", "transformer.py"]

if __name__ == "__main__":
    for name in SCRIPTS:
        print(f"== {name}")
        runpy.run_path(str(HERE / name), run_name="__main__")
