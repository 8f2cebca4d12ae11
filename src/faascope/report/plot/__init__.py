"""Figures described once (model.py) and drawn by two renderers: plotly for report.html
(render_plotly.py) and matplotlib for the publication figures (render_matplotlib.py)."""
