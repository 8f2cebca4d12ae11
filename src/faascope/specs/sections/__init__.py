"""One checker per section of a spec, in the order :func:`faascope.specs.loader.parse_spec` runs
them: the provider (settings, deployments), the base workload, the factors, the design's rules,
the overrides, the load section (bursts) and the design's time structure (blocking, schedule).
Each appends ``(field path, message)`` problems to one list, which ``parse_spec`` reports at
once (:func:`faascope.specs.fields.raise_errors`)."""
