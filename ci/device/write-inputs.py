#!/usr/bin/env python3
"""Writes an NVFP4 matmul problem as a safetensors file for `nvfp4-harness run
--inputs` (README, "Your own tensors"), with the Python standard library only,
so it needs no package on whichever machine runs it. A single `run --route R`
call is one launch of R's kernels, which is what Nsight Compute needs to
profile one kernel at one shape (ci/device/fused-round.sh, step ncu7).

Written by hand: the format is an 8-byte little-endian header length, a JSON
header (dtype, shape, byte range of each tensor) padded to 8 bytes, then the
tensors' bytes.

Usage: write-inputs.py OUT M N K [--seed S]
  A: [M, K] BF16, values of a normal distribution rounded to bf16;
  B: [N, K/2] U8, random codes; weight_scale: [N, K/16] U8, E4M3 bytes
  0x30..0x3F (0.75 to 1.875: no NaN, no zero); weight_scale_2: 2^-6 (the
  bench's global scale, the kernels' fast path); no bias.
"""
import argparse
import json
import random
import struct
import sys


def bf16_bytes(values):
    # Round to nearest even on the float32 bits, then keep the high half.
    out = bytearray()
    for v in values:
        bits = struct.unpack("<I", struct.pack("<f", v))[0]
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        out += struct.pack("<H", bits & 0xFFFF)
    return bytes(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("M", type=int)
    p.add_argument("N", type=int)
    p.add_argument("K", type=int)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    for name in ("M", "N", "K"):
        if getattr(a, name) <= 0:
            sys.exit(f"write-inputs.py: {name} = {getattr(a, name)}: must be positive")
    if a.K % 16 != 0:
        sys.exit(f"write-inputs.py: K = {a.K}: must be a multiple of 16 (whole scale blocks)")
    rng = random.Random(a.seed)
    scale_of_byte = bytes(0x30 + (b & 0x0F) for b in range(256))
    tensors = [  # largest first: every offset stays 4-byte aligned
        ("B", "U8", [a.N, a.K // 2], rng.randbytes(a.N * a.K // 2)),
        ("weight_scale", "U8", [a.N, a.K // 16],
         rng.randbytes(a.N * a.K // 16).translate(scale_of_byte)),
        ("A", "BF16", [a.M, a.K], bf16_bytes(rng.gauss(0.0, 1.0) for _ in range(a.M * a.K))),
        ("weight_scale_2", "F32", [], struct.pack("<f", 2.0**-6)),
    ]
    header, offset = {"__metadata__": {"block_size": "16"}}, 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(a.out, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, _, _, data in tensors:
            f.write(data)


if __name__ == "__main__":
    main()
