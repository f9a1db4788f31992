"""The first reading on a real StatusNotifier host: the real tray (``agentbar`` in its own process)
over a large history (``big_history``, hard-linked into its HOME), its item registered with
``status-notifier-watcher`` and shown by ``gtk-sni-tray-standalone``: while the engine reads,
the item's tooltip says so and its dbusmenu has a disabled line for it; both go once it is done,
and the rest of the menu is as ever."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import sni_client
from desktop import Desktop, wait_until
from tray_rig import Tray

pytestmark = pytest.mark.slow


@pytest.fixture
def sni_host(desktop: Desktop) -> Iterator[None]:
    watcher = desktop.start_sni_watcher()
    host = desktop.start_sni_host()
    try:
        yield
    finally:
        desktop.stop(host)
        desktop.stop(watcher)


def hard_link_history(history: Path, home: Path) -> None:
    """The large history in ``home`` at no cost: the same files, linked (their times kept)."""
    for folder in (".claude/projects", ".codex/sessions"):
        done = subprocess.run(
            ["cp", "-al", f"{history / folder}/.", str(home / folder)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr


def reading_entries(menu: sni_client.MenuNode) -> list[sni_client.MenuNode]:
    return [node for node in menu.children if node.label.startswith("Reading")]


def test_the_tooltip_and_the_menu_show_the_reading_until_it_is_done(
    tray: Tray, sni_host: None, big_history: Path
) -> None:
    hard_link_history(big_history, tray.home)
    tray.run_tray()
    tray.sni_service()

    def tooltip() -> str:
        return str(tray.sni_props()["ToolTip"][3])

    def reading() -> tuple[str, sni_client.MenuNode] | None:
        """The tooltip and the menu, both saying it reads."""
        said = tooltip()
        menu = tray.menu()
        return (said, menu) if "; reading" in said and reading_entries(menu) else None

    said, menu = wait_until("the tooltip and the menu to say it reads", reading)
    assert said.startswith("agentbar: nothing needs you; reading ")
    [line] = reading_entries(menu)
    assert line.props.get("enabled") is False  # a note, not a choice
    assert menu.children[0].id == line.id  # at the top
    assert line.label.startswith("Reading ")

    tray.wait_ready()
    # (The history's Codex rollouts may name usage windows: those follow, after a "; ".)
    wait_until(
        "the tooltip to say it no more",
        lambda: (
            tooltip().split("; ")[0] == "agentbar: nothing needs you" and "reading" not in tooltip()
        ),
    )
    menu = tray.menu()
    assert reading_entries(menu) == []
    assert "Open window" in [node.label for node in menu.children]
    status, err = tray.stop()
    assert status == 0, err
    assert "Traceback" not in err
