"""Staggered launches: `faascope stagger suggest` (successive halving over batch size × delay)."""
