"""Reads bytes at an offset of an open file without disturbing anyone else's position (any
thread).

POSIX has ``os.pread``. Windows has none: there it is a seek and a read under one lock, so two
threads reading the same descriptor never interleave their seeks (each call is one short read).
"""

from __future__ import annotations

import os
import sys
import threading

if sys.platform == "win32":
    _seek_and_read = threading.Lock()

    def pread(fd: int, size: int, offset: int) -> bytes:
        """Up to ``size`` bytes of ``fd`` from ``offset`` (fewer at the end of the file)."""
        with _seek_and_read:
            os.lseek(fd, offset, os.SEEK_SET)
            return os.read(fd, size)

else:

    def pread(fd: int, size: int, offset: int) -> bytes:
        """Up to ``size`` bytes of ``fd`` from ``offset`` (fewer at the end of the file)."""
        return os.pread(fd, size, offset)
