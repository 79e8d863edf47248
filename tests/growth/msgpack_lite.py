"""The MessagePack subset of AMDGPU metadata notes (maps, arrays, strings,
integers, booleans, nil, floats), for synth.py: decode a note's document,
encode one back (smallest encodings, as LLVM writes them; map order kept).
Malformed input raises ValueError."""
import struct


def unpack(data):
    """The document at the start of `data`."""
    value, at = _read(data, 0)
    return value


def _take(data, at, n):
    if at + n > len(data):
        raise ValueError(f"msgpack: truncated at {at}")
    return data[at:at + n], at + n


def _read(data, at):
    b, at = _take(data, at, 1)
    t = b[0]
    if t <= 0x7F:
        return t, at
    if t >= 0xE0:
        return t - 0x100, at
    if 0x80 <= t <= 0x8F:
        return _map(data, at, t & 0x0F)
    if 0x90 <= t <= 0x9F:
        return _array(data, at, t & 0x0F)
    if 0xA0 <= t <= 0xBF:
        return _str(data, at, t & 0x1F)
    if t == 0xC0:
        return None, at
    if t in (0xC2, 0xC3):
        return t == 0xC3, at
    fixed = {0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q", 0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q",
             0xCA: ">f", 0xCB: ">d"}
    if t in fixed:
        raw, at = _take(data, at, struct.calcsize(fixed[t]))
        return struct.unpack(fixed[t], raw)[0], at
    lengths = {0xD9: (">B", _str), 0xDA: (">H", _str), 0xDB: (">I", _str), 0xDC: (">H", _array),
               0xDD: (">I", _array), 0xDE: (">H", _map), 0xDF: (">I", _map)}
    if t in lengths:
        fmt, read = lengths[t]
        raw, at = _take(data, at, struct.calcsize(fmt))
        return read(data, at, struct.unpack(fmt, raw)[0])
    raise ValueError(f"msgpack: type byte {t:#x} at {at - 1} not in the metadata subset")


def _str(data, at, n):
    raw, at = _take(data, at, n)
    return raw.decode("utf-8"), at


def _array(data, at, n):
    out = []
    for _ in range(n):
        v, at = _read(data, at)
        out.append(v)
    return out, at


def _map(data, at, n):
    out = {}
    for _ in range(n):
        k, at = _read(data, at)
        v, at = _read(data, at)
        out[k] = v
    return out, at


def pack(value):
    """The encoding of `value` (dict, list, str, int, bool, None, float)."""
    out = bytearray()
    _write(out, value)
    return bytes(out)


def _head(out, n, fix, fix_max, wide):
    if n <= fix_max:
        out.append(fix | n)
        return
    for t, fmt in wide:
        if n < 1 << (8 * struct.calcsize(fmt)):
            out += bytes([t]) + struct.pack(fmt, n)
            return
    raise ValueError("msgpack: too long")


def _write(out, v):
    if v is None:
        out.append(0xC0)
    elif isinstance(v, bool):
        out.append(0xC3 if v else 0xC2)
    elif isinstance(v, int):
        if 0 <= v <= 0x7F:
            out.append(v)
        elif -32 <= v < 0:
            out.append(v + 0x100)
        elif v >= 0:
            for t, fmt in ((0xCC, ">B"), (0xCD, ">H"), (0xCE, ">I"), (0xCF, ">Q")):
                if v < 1 << (8 * struct.calcsize(fmt)):
                    out += bytes([t]) + struct.pack(fmt, v)
                    return
            raise ValueError("msgpack: integer too large")
        else:
            for t, fmt in ((0xD0, ">b"), (0xD1, ">h"), (0xD2, ">i"), (0xD3, ">q")):
                if v >= -(1 << (8 * struct.calcsize(fmt) - 1)):
                    out += bytes([t]) + struct.pack(fmt, v)
                    return
            raise ValueError("msgpack: integer too small")
    elif isinstance(v, float):
        out += b"\xcb" + struct.pack(">d", v)
    elif isinstance(v, str):
        raw = v.encode("utf-8")
        _head(out, len(raw), 0xA0, 31, ((0xD9, ">B"), (0xDA, ">H"), (0xDB, ">I")))
        out += raw
    elif isinstance(v, list):
        _head(out, len(v), 0x90, 15, ((0xDC, ">H"), (0xDD, ">I")))
        for x in v:
            _write(out, x)
    elif isinstance(v, dict):
        _head(out, len(v), 0x80, 15, ((0xDE, ">H"), (0xDF, ">I")))
        for k, x in v.items():
            _write(out, k)
            _write(out, x)
    else:
        raise ValueError(f"msgpack: {type(v).__name__} not in the metadata subset")
