"""Members of the pinned wheels, extracted once per download cache.

The wheels are downloaded into the download cache (HOTSWAP_DOWNLOAD_CACHE,
else ~/.cache/hotswap/wheels) by the tests that use them. Their shared
libraries are large (the jax plugin alone is 459 MB) and several tests read
them, so each member is extracted once, beside its wheel, into
WHEEL-STEM/MEMBER, and every test reads that file. Tests never
write to it: they hard-link (or copy) it when they need it in a tree of
their own.

Concurrent tests are safe: extraction holds an exclusive lock on the
directory and writes a temporary file that is renamed into place, so a file
present under its member name is whole (its size is checked against the
wheel's directory as well).
"""
import fcntl
import os
import shutil
import zipfile
from pathlib import Path


def _root(wheel):
    return Path(wheel).parent / Path(wheel).stem


def extracted(wheel, member):
    """The path of MEMBER of WHEEL, extracted on first use."""
    root = _root(wheel)
    path = root / member
    with zipfile.ZipFile(wheel) as z:
        size = z.getinfo(member).file_size
        if path.is_file() and path.stat().st_size == size:
            return path
        root.mkdir(parents=True, exist_ok=True)
        with open(root / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if path.is_file() and path.stat().st_size == size:
                return path
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + f".partial-{os.getpid()}")
            with z.open(member) as src, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            os.replace(tmp, path)
    return path


def shared_libraries(wheel):
    """Every shared library of WHEEL (members named *.so or *.so.*), extracted."""
    with zipfile.ZipFile(wheel) as z:
        members = [m for m in z.namelist() if m.endswith(".so") or ".so." in m]
    return sorted(extracted(wheel, m) for m in members)


def place(src, dst):
    """DST as a hard link to SRC where the filesystem allows, else a copy."""
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists():
        dst.unlink()
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)
    return dst
