#!/usr/bin/env python3
"""Assembles the fuzz targets' seed corpora from code objects the build made.

Usage: seeds.py SEED_LISTS OUT OBJECT_DIR...

Objects: every *.co file of at most 64 KiB under each OBJECT_DIR (clang-22
objects of the build and test tree, real ROCm-built objects the growth tests
extract; a missing directory is skipped). Writes OUT/<target>/:

- elf_header, elf_notes: every object;
- cache_entry: every object (its first byte, 0x7f, selects the mode that
  builds an entry around the rest);
- cache_archive: every object (its first byte, 0x7f, selects the mode that
  builds an archive of entries around the rest);
- metadata: every object, and the MessagePack document of each object's
  AMDGPU metadata note (NT_AMDGPU_METADATA, owner "AMDGPU");
- gfx1250: every gfx12.5 object (EF_AMDGPU_MACH of the gfx125x family; the
  analyzer's corpus has every A0 class); rewrite: the same, after each of
  the four option bytes; growth: the same after the two clause-policy bytes
  (the small jax-rocm10-pjrt objects among them, when given);
- container: a few objects, and what clang-offload-bundler-22 makes of them
  (an offload bundle of several targets, compressed bundles v2 and v3), the
  same bundles compressed with zlib (written here: the bundler picks zstd),
  and host objects (clang-22, llvm-objcopy-22) whose .hip_fatbin section holds
  them; tools that are missing are skipped;
- isa_names, tools_lib: one seed per line of SEED_LISTS/<target>.txt (see
  the file for its format);
- capi, tool: each control block of SEED_LISTS/<target>.controls followed by
  each of a few objects (one per processor family and code object version,
  and no object at all).

Findings: every file `fuzz-findings/<target>-*.bin` under an OBJECT_DIR (the
crate's data directory keeps the inputs of past fuzz findings there, raw
inputs of that target) is a seed of that target as it is, so every run starts
from the inputs that once broke a promise.

Seed files are named by the SHA-1 of their content, as libFuzzer names
corpus files, so duplicates collapse. Nothing here is committed: OUT is in the
build tree.
"""

import hashlib
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

RAW_TARGETS = ("elf_header", "elf_notes", "metadata", "cache_entry", "cache_archive")
# EF_AMDGPU_MACH values of the gfx12.5 family (gfx1250, gfx1251, gfx12-5-generic,
# and ROCm's gfx1250-strict), as rust/hotswap-code-object/src/mach.rs lists them.
GFX125_MACH = (0x49, 0x5a, 0x5b, 0xeb)
# Objects bundled for the container target (file name stems).
BUNDLED = ("gfx1250", "gfx942", "gfx1251")
CONTROL_TARGETS = ("capi", "tool")
# Larger objects are not seeds (every target's inputs stay small and fast).
MAX_SEED = 64 * 1024
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


def mach(obj):
    return obj[48] if len(obj) >= 64 and obj[:4] == b"\x7fELF" else None


def containers(objects, out):
    """Bundles, compressed bundles and host objects holding `objects`
    ({stem: path}), made with LLVM 22's tools; [] when they are missing."""
    bundler, clang, objcopy = (shutil.which(t) for t in
                               ("clang-offload-bundler-22", "clang-22", "llvm-objcopy-22"))
    if not bundler or not objects:
        return []
    made = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        targets = ["host-x86_64-unknown-linux-gnu"] + [
            f"hipv4-amdgcn-amd-amdhsa--{stem}" for stem in objects]
        inputs = ["-input=/dev/null"] + [f"-input={path}" for path in objects.values()]
        for name, extra, env in (("plain", [], {}),
                                 ("ccob3", ["-compress"], {}),
                                 ("ccob2", ["-compress"], {"COMPRESSED_BUNDLE_FORMAT_VERSION": "2"})):
            result = tmp / name
            subprocess.run([bundler, "-type=o", "-targets=" + ",".join(targets), *inputs,
                            f"-output={result}", *extra],
                           check=True, env={**os.environ, **env})
            made.append(result.read_bytes())
        # zlib: the same offload bundle in CCOB v2 and v3 headers.
        plain = made[0]
        packed = zlib.compress(plain)
        for version, header in ((2, struct.pack("<4sHHIIQ", b"CCOB", 2, 0, 0, len(plain), 0)),
                                (3, struct.pack("<4sHHQQQ", b"CCOB", 3, 0, 0, len(plain), 0))):
            total = len(header) + len(packed)
            header = (header[:8] + struct.pack("<I" if version == 2 else "<Q", total)
                      + header[12 if version == 2 else 16:])
            made.append(header + packed)
        if clang and objcopy:
            (tmp / "host.c").write_text("int hotswap_fuzz_host;\n")
            subprocess.run([clang, "-c", "-o", tmp / "host.o", tmp / "host.c"], check=True)
            for i, bundle in enumerate(list(made)):
                (tmp / "fatbin").write_bytes(bundle + b"\0" * 64 + bundle)
                subprocess.run([objcopy, "--add-section", f".hip_fatbin={tmp / 'fatbin'}",
                                tmp / "host.o", tmp / f"host{i}.o"], check=True)
                made.append((tmp / f"host{i}.o").read_bytes())
    return made


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
            # Small objects only: the growth tests' directory holds the whole
            # jax-rocm10-pjrt set (up to 4 MB each); its small ones are seeds.
            objects += sorted(p for p in directory.rglob("*.co") if p.stat().st_size <= MAX_SEED)
    if not objects:
        sys.exit("error: no code objects (*.co) in " + " ".join(sys.argv[3:]))
    shutil.rmtree(out, ignore_errors=True)

    for directory in map(pathlib.Path, sys.argv[3:]):
        for path in sorted(directory.glob("**/fuzz-findings/*.bin")) if directory.is_dir() else []:
            write(out / path.name.split("-")[0], path.read_bytes())

    for path in objects:
        data = path.read_bytes()
        for target in RAW_TARGETS:
            write(out / target, data)
        for desc in metadata_notes(data):
            write(out / "metadata", desc)
        if mach(data) in GFX125_MACH:
            write(out / "gfx1250", data)
            for options in range(4):  # allow_partial, s_clause policy
                write(out / "rewrite", bytes([options]) + data)
            for options in (0, 2):  # s_clause policy
                write(out / "growth", bytes([options]) + data)

    bundled = {p.stem: p for p in objects if p.stem in BUNDLED}
    for data in [p.read_bytes() for p in bundled.values()] + containers(bundled, out):
        write(out / "container", data)

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
