"""The incident report: one model (model.py), rendered as Markdown, JSON and HTML (render.py)."""
