"""Shared fixtures: the web UI's world, Chromium and Xvfb live in ``web_harness.py``."""

pytest_plugins = ("web_harness", "desktop", "other_user")
