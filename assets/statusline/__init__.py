"""agentbar's status-line link for Claude Code: the program Claude runs for its status line."""
