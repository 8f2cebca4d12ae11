"""The report's visual vocabulary, shared by both renderers and by the cells' styles."""
from __future__ import annotations

# Okabe & Ito's colour-blind-safe palette (black last): one colour per level of the compared factor
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]
GREY = "#8c8c8c"
# one line style and marker per combination of the other factors (plotly's names; the matplotlib
# renderer maps them)
DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]
MARKERS = ["circle", "square", "diamond", "triangle-up", "x", "star"]
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"
