#!/usr/bin/python3
"""Writes tests/data/widen.safetensors: tensors of the safetensors dtypes wick widens on load
(Note [Widening safetensors dtypes] in nn/include/wick/nn/safetensors.h), each next to PyTorch's
own conversion of it ("<name>.expected": t.float() or t.long()), for
tests/nn/safetensors_widen_test.cpp.

    /usr/bin/python3 tests/data/make_widen_file.py tests/data/widen.safetensors

Every float16 code (65536, NaNs and subnormals included); bfloat16 codes for every high byte with
eight low bytes; every int8 and uint8 value; int16 and int32 extremes and random values.
"""
import json
import struct
import sys

import torch

NAMES = {torch.float16: "F16", torch.bfloat16: "BF16", torch.int8: "I8", torch.uint8: "U8",
         torch.int16: "I16", torch.int32: "I32", torch.float32: "F32", torch.int64: "I64"}


def tensors():
    g = torch.Generator().manual_seed(7)
    out = []
    f16 = torch.arange(65536, dtype=torch.int32).to(torch.int16).view(torch.float16).reshape(256, 256)
    out.append(("f16", f16))
    high = torch.arange(256, dtype=torch.int32).reshape(256, 1) << 8
    low = torch.tensor([0, 1, 0x3f, 0x40, 0x7f, 0x80, 0xc1, 0xff], dtype=torch.int32).reshape(1, 8)
    out.append(("bf16", (high | low).to(torch.int16).view(torch.bfloat16)))
    out.append(("i8", torch.arange(-128, 128, dtype=torch.int8)))
    out.append(("u8", torch.arange(0, 256, dtype=torch.int32).to(torch.uint8).reshape(16, 16)))
    i16 = torch.cat([torch.tensor([-32768, -32767, -1, 0, 1, 32766, 32767], dtype=torch.int16),
                     torch.randint(-32768, 32768, (500,), generator=g, dtype=torch.int64).to(torch.int16)])
    out.append(("i16", i16))
    i32 = torch.cat([torch.tensor([-2**31, -2**31 + 1, -1, 0, 1, 2**31 - 2, 2**31 - 1], dtype=torch.int32),
                     torch.randint(-2**31, 2**31, (500,), generator=g, dtype=torch.int64).to(torch.int32)])
    out.append(("i32", i32.reshape(1, 507)))
    out.append(("f16_scalar", torch.tensor(-0.0, dtype=torch.float16)))  # 0-d
    out.append(("f16_empty", torch.zeros(0, 3, dtype=torch.float16)))
    # A tensor wick holds, between the others: read as it is.
    out.append(("plain", torch.tensor([1.5, -2.0], dtype=torch.float32)))
    expected = []
    for name, t in out:
        if name == "plain":
            continue
        expected.append((name + ".expected", t.float() if t.is_floating_point() else t.long()))
    return out + expected


def main():
    path = sys.argv[1]
    header = {}
    data = b""
    for name, t in tensors():
        raw = t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


if __name__ == "__main__":
    main()
