#!/usr/bin/env python3
"""Assembles the fuzz targets' seed corpora from code objects the build made.

Usage: seeds.py SEED_LISTS OUT OBJECT_DIR...

Objects: every *.co file under each OBJECT_DIR (clang-22 objects of the
build and test tree; a missing directory is skipped). Writes OUT/<target>/:

- elf_header, elf_notes: every object;
- metadata: every object, and the MessagePack document of each object's
  AMDGPU metadata note (NT_AMDGPU_METADATA, owner "AMDGPU");
- isa_names, tools_lib: one seed per line of SEED_LISTS/<target>.txt (see
  the file for its format);
- capi, tool: each control block of SEED_LISTS/<target>.controls followed by
  each of a few objects (one per processor family and code object version,
  and no object at all).

Seed files are named by the SHA-1 of their content, as libFuzzer names
corpus files, so duplicates collapse. Nothing here is committed: OUT is in the
build tree.
"""

import hashlib
import pathlib
import shutil
import struct
import sys

RAW_TARGETS = ("elf_header", "elf_notes", "metadata")
CONTROL_TARGETS = ("capi", "tool")
# Objects the structured targets get (file name stems, any directory): a few
# processors and versions; mutation does the rest.
CONTROL_OBJECTS = ("gfx1250", "gfx1251", "gfx942", "gfx1250-v5", "gfx90a-xnack-v4",
                   "gfx1250-probe", "gfx12-5-generic-v6", "gfx1250-v4")


def write(directory, data):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)


def metadata_notes(obj):
    """The descriptors of the AMDGPU metadata notes of an ELF64 LE object."""
    if len(obj) < 64 or obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return []
    phoff, shoff = struct.unpack_from("<QQ", obj, 32)
    phnum = struct.unpack_from("<H", obj, 56)[0]
    shnum = struct.unpack_from("<H", obj, 60)[0]
    areas = []
    if phnum:
        for i in range(phnum):
            at = phoff + 56 * i
            if at + 56 <= len(obj) and struct.unpack_from("<I", obj, at)[0] == 4:  # PT_NOTE
                areas.append((struct.unpack_from("<Q", obj, at + 8)[0],    # p_offset
                              struct.unpack_from("<Q", obj, at + 32)[0]))  # p_filesz
    else:
        for i in range(shnum):
            at = shoff + 64 * i
            if at + 64 <= len(obj) and struct.unpack_from("<I", obj, at + 4)[0] == 7:  # SHT_NOTE
                areas.append(struct.unpack_from("<QQ", obj, at + 24))  # sh_offset, sh_size
    descs = []
    for offset, size in areas:
        area = obj[offset:offset + size]
        at = 0
        while at + 12 <= len(area):
            namesz, descsz, kind = struct.unpack_from("<III", area, at)
            name_at = at + 12
            desc_at = name_at + (namesz + 3) // 4 * 4
            if desc_at + descsz > len(area):
                break
            if area[name_at:name_at + namesz].rstrip(b"\0") == b"AMDGPU" and kind == 32:
                descs.append(area[desc_at:desc_at + descsz])
            at = desc_at + (descsz + 3) // 4 * 4
    return descs


def lines(path):
    """Non-empty lines that are not comments (`#` first), without the newline."""
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line and not line.startswith("#"):
            yield line


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    lists, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    objects = []
    for directory in map(pathlib.Path, sys.argv[3:]):
        if directory.is_dir():
            objects += sorted(directory.rglob("*.co"))
    if not objects:
        sys.exit("error: no code objects (*.co) in " + " ".join(sys.argv[3:]))
    shutil.rmtree(out, ignore_errors=True)

    for path in objects:
        data = path.read_bytes()
        for target in RAW_TARGETS:
            write(out / target, data)
        for desc in metadata_notes(data):
            write(out / "metadata", desc)

    # isa_names: TAB-separated fields, one seed per line.
    for line in lines(lists / "isa_names.txt"):
        write(out / "isa_names", line.encode())
    # tools_lib: the line as is; "hex:" lines give bytes that are not UTF-8.
    for line in lines(lists / "tools_lib.txt"):
        data = bytes.fromhex(line[4:]) if line.startswith("hex:") else line.encode()
        write(out / "tools_lib", data)

    picked = [p.read_bytes() for p in objects if p.stem in CONTROL_OBJECTS] + [b""]
    for target in CONTROL_TARGETS:
        length = None
        for line in lines(lists / f"{target}.controls"):
            if line.startswith("length "):
                length = int(line.split()[1])
                continue
            control = bytes.fromhex(line.split("#")[0])
            if length is None or len(control) > length:
                sys.exit(f"error: {target}.controls: a control block longer than its length line")
            control = control.ljust(length, b"\0")
            for data in picked:
                write(out / target, control + data)

    for target in sorted(p.name for p in out.iterdir()):
        print(f"seeds: {target}: {len(list((out / target).iterdir()))}")


if __name__ == "__main__":
    main()
