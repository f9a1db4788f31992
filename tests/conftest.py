"""Shared fixtures: the web UI's world, Chromium and Xvfb live in ``web_harness.py``; the private
desktop in ``desktop.py``; the running tray in ``tray_rig.py``; a large history in
``big_history.py``; the OpenSSH server and far user of the remote tests in ``remote_rig.py``."""

import os
from collections.abc import Iterator

import pytest

pytest_plugins = ("web_harness", "desktop", "tray_rig", "other_user", "big_history", "remote_rig")


@pytest.fixture(autouse=True)
def _umask_as_it_was() -> Iterator[None]:
    """agentbar's entry points make the process umask private (0o077); one run in-process
    must not change the modes of what later tests create."""
    mask = os.umask(0o022)
    os.umask(mask)
    yield
    os.umask(mask)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that open Chromium run after all others, in their order: Playwright's sync API
    keeps its event loop marked running in the main thread while the session's browser is
    open, so a later test's ``asyncio.run`` would fail however the files were named."""
    in_browser = [i for i in items if "browser" in getattr(i, "fixturenames", ())]
    if in_browser:
        others = [i for i in items if "browser" not in getattr(i, "fixturenames", ())]
        items[:] = others + in_browser
