"""How close the local platform's cloud-like profiles come to what the clouds were measured to do
(``faascope platform fidelity``, docs/platform.md "Fidelity").

- :mod:`.metrics`: the battery's metrics, each tied to one published figure of a calibration
  table (``published-anchors``, ``standins-aws``) and marked fit or held out;
- :mod:`.compare`: local figure vs published figure (ratio, within ×1.5, why not), and whether the
  2024 study's decisions (which platform wins) come out the same; pure arithmetic;
- :mod:`.battery`: the campaigns that measure the local figures, run through the same driver as
  ``faascope run`` into results files, and the reading of those files;
- :mod:`.render`: the report as a table or JSON.
"""
