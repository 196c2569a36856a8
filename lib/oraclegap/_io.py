"""Writing files so that nothing is lost (ground floor; imports only the standard library).

Every file the library writes goes through :func:`atomic_write`: the bytes go to a uniquely
named hidden temporary file beside the target, are flushed to disk, and the temporary file is
renamed over the target (an atomic step on POSIX file systems), then the directory entry is
flushed too. A reader therefore sees the old file or the new one, never a torn mix, and two
writers never share a temporary file. New files get the user's umask, like ``open()``.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

__all__ = ["fsync_file", "fsync_dir", "atomic_write", "temp_path"]


def fsync_file(path) -> None:
    """Flush a file's content to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path) -> None:
    """Flush a directory's entries (renames into it) to disk, where the platform allows it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory descriptors
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def temp_path(path) -> Path:
    """A unique hidden temporary name beside ``path`` (same directory, so a rename is atomic)."""
    path = Path(path)
    return path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path, data: bytes | str, *, encoding: str = "utf-8") -> Path:
    """Write ``data`` (bytes, or text in ``encoding``) to ``path`` atomically (see the module
    docstring); creates the parent directory. Returns ``path``."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode(encoding)
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes or str, got {type(data).__name__}")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _umask_mode())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
    return path
