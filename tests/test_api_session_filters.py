"""``GET /api/sessions``'s filters and paging, and ``/api/health``'s ``home``: a real server
over a real engine of fixture sessions (docs/api.md is the contract)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from replay_rig import Home, make_home
from server_rig import serving


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return make_home(tmp_path)


async def get(client: aiohttp.ClientSession, url: str, status: int = 200) -> Any:
    async with client.get(url) as response:
        assert response.status == status, await response.text()
        return await response.json()


def test_filters_paging_and_total(home: Home) -> None:
    with serving(home) as running:
        base = f"{running.origin}/api/sessions"

        async def main() -> None:
            async with aiohttp.ClientSession(headers=running.auth()) as client:
                every = await get(client, f"{base}?all=1")
                rows = every["sessions"]
                assert every["total"] == len(rows) == 3 and "diagnostics" in every
                ids = [s["session_id"] for s in rows]
                # Paging keeps the order and the total.
                page = await get(client, f"{base}?all=1&limit=1&offset=1")
                assert [s["session_id"] for s in page["sessions"]] == ids[1:2]
                assert page["total"] == 3
                past = await get(client, f"{base}?all=1&offset=5")
                assert (past["sessions"], past["total"]) == ([], 3)
                # Each filter, as status has it.
                one = rows[0]
                name = one["project"].rstrip("/").rsplit("/", 1)[-1]
                by_project = await get(client, f"{base}?all=1&project={name}")
                assert one["session_id"] in [s["session_id"] for s in by_project["sessions"]]
                assert all(name in s["project"] for s in by_project["sessions"])
                by_state = await get(client, f"{base}?state={one['state']}")
                assert {s["state"] for s in by_state["sessions"]} == {one["state"]}
                assert by_state["total"] == sum(s["state"] == one["state"] for s in rows)
                assert (await get(client, f"{base}?all=1&agent=codex"))["total"] == sum(
                    s["agent"] == "codex" for s in rows
                )
                assert (await get(client, f"{base}?all=1&host=local"))["total"] == 3
                assert (await get(client, f"{base}?all=1&host=devbox"))["total"] == 0
                since = await get(client, f"{base}?since=2000-01-01")
                assert since["total"] == 3  # a time lists ended sessions too
                assert (await get(client, f"{base}?since=1m"))["total"] <= 3
                # Bad values say what is accepted.
                bad = await get(client, f"{base}?state=sleeping", 400)
                assert "unknown state 'sleeping'" in bad["error"]["message"]
                bad = await get(client, f"{base}?since=soon", 400)
                assert "30m, 2h" in bad["error"]["message"]
                await get(client, f"{base}?limit=0", 400)
                await get(client, f"{base}?limit=-1", 400)
                await get(client, f"{base}?agent=nosuchagent", 400)

        asyncio.run(main())


def test_health_names_this_users_home(home: Home) -> None:
    with serving(home) as running:

        async def main() -> None:
            async with aiohttp.ClientSession(headers=running.auth()) as client:
                health = await get(client, f"{running.origin}/api/health")
                assert health["home"] == os.path.normpath(os.path.expanduser("~"))

        asyncio.run(main())
