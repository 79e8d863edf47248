#!/usr/bin/env python3
"""Re-tags a gfx1250 code object for the real-ROCr layout test only:
`retag.py IN OUT` writes IN with e_flags gfx90a (xnack any, sramecc any:
0x53f) and code object v5 (EI_ABIVERSION 3), the newest processor and version
ROCr 5.2 knows (its loader takes the ISA from e_flags, not from the metadata's
`amdhsa.target`). Nothing else changes: the file's size, layout, code and the
descriptors ROCr places are the rewrite's."""
import struct
import sys

GFX90A_ANY = 0x53F


def retag(data):
    out = bytearray(data)
    if out[:4] != b"\x7fELF" or out[4] != 2:
        raise SystemExit("retag.py: not an ELF64 file")
    out[8] = 3
    struct.pack_into("<I", out, 48, GFX90A_ANY)
    return bytes(out)


if __name__ == "__main__":
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, "rb") as f:
        data = f.read()
    with open(dst, "wb") as f:
        f.write(retag(data))
