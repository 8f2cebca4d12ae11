"""``faascope tune``: AWS Lambda Power Tuning's question (which memory size is cheapest, fastest,
best balanced?) answered with statistics, for a function the user already deployed."""
