"""The Linux tray as a StatusNotifierItem with a com.canonical.dbusmenu menu, spoken over
dbus-fast (no GTK, nothing compiled): the pure parts (pixmaps, the menu's layout and revisions),
the D-Bus objects, the link to the StatusNotifierWatcher, and the thread that runs them.
"""
