"""Shared fixtures: the web UI's world, Chromium and Xvfb live in ``web_harness.py``; the private
desktop in ``desktop.py``; the running tray in ``tray_rig.py``."""

pytest_plugins = ("web_harness", "desktop", "tray_rig", "other_user")
