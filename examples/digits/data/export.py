"""Exports scikit-learn's copy of the UCI optical-recognition digits (1,797 images of
8x8 pixels, values 0..16, ten classes) to digits.csv beside this script, once.

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install scikit-learn
    /tmp/venv/bin/python examples/digits/data/export.py

Columns: p0 .. p63 (the pixels row by row, as integers 0..16), then label (0..9); one
row per image in scikit-learn's order. See README.md for provenance and licence.
"""
import pathlib

from sklearn.datasets import load_digits

digits = load_digits()
out = pathlib.Path(__file__).with_name("digits.csv")
with out.open("w", newline="\n") as f:
    f.write(",".join([f"p{i}" for i in range(64)] + ["label"]) + "\n")
    for row, label in zip(digits.data, digits.target):
        f.write(",".join(str(int(v)) for v in row) + f",{int(label)}\n")
print(f"wrote {out} ({len(digits.target)} rows)")
