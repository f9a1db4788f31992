"""agentbar's hooks, for any agent whose kit has a hook target: the command, and the installer
for the user's own settings files (headless; main thread). Each agent's events, settings file
editing and per-launch layer are in its own package (``agentbar.core.agents.<agent>``).

The hook program itself is ``agentbar/assets/hooks/agentbar_hook.py``; the engine reads what it
writes through ``agentbar.core.sources.hook_events``.
"""
