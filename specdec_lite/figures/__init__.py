"""Reusable plotly figure builders for the book's chapters (one module per part)."""
