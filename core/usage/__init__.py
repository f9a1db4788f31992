"""Token usage and its cost: the shipped price table and the totals ``agentbar usage`` shows."""
