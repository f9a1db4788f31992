"""One package per agent behind one seam (``base.AgentKit``); ``registry`` names the list."""
