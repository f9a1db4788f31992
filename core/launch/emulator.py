"""The VT emulator behind a task's ``Screen`` (pyte), kept apart so that pyte and its Unicode
width tables (6.4 MB) load with the first launched task, not with every agentbar (the thread of
the task that feeds it).
"""

from __future__ import annotations

from collections.abc import Callable

import pyte


class Emulator(pyte.Screen):
    answer: Callable[[str], None] | None = None

    def write_process_input(self, data: str) -> None:
        if self.answer is not None:
            self.answer(data)

    def select_graphic_rendition(self, *attrs: int, private: bool = False) -> None:
        """``CSI > 4 ; 2 m`` (xterm's modifyOtherKeys, which Gemini CLI sets at start-up) is a
        private sequence, not a colour: pyte hands it here with ``private=True`` and the base
        class would raise, ending the task's reader."""
        if not private:
            super().select_graphic_rendition(*attrs)


def byte_stream(screen: Emulator) -> pyte.ByteStream:
    """The parser that feeds ``screen`` the bytes a program wrote."""
    return pyte.ByteStream(screen)
