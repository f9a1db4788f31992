"""The tray gives freed heap back to the system: what a worker thread allocated and freed stays
resident until ``malloc_trim`` (glibc keeps a thread's arena), and the trim releases it."""

from __future__ import annotations

import threading

import psutil

from agentbar.tray import memory


def test_a_trim_returns_what_a_thread_freed() -> None:
    def churn() -> None:
        # ~80 MB in blocks glibc serves from the thread's arena (beyond pymalloc's 512 bytes,
        # below malloc's mmap threshold); a few survive, as a catch-up's results do, so the
        # arena cannot simply shrink from its top.
        held = [bytes(2000) + bytes([i % 256]) for i in range(40_000)]
        keep = held[::500]
        del held
        survivors.extend(keep)

    survivors: list[bytes] = []
    worker = threading.Thread(target=churn)
    worker.start()
    worker.join()
    before = psutil.Process().memory_info().rss
    assert memory.trim() is True
    after = psutil.Process().memory_info().rss
    assert before - after > 20 * 2**20, (before / 2**20, after / 2**20)


def test_the_trimmer_waits_for_the_engine_and_stops() -> None:
    ready = threading.Event()
    trimmer = memory.Trimmer(ready, every=0.05)
    trimmer.start()
    assert trimmer._thread.is_alive()
    ready.set()
    trimmer.stop()
    assert not trimmer._thread.is_alive()
