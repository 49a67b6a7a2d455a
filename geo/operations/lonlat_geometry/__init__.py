"""Metric geometry on longitude/latitude layers, run by geo/operations/geo_step.py (see its docstring)."""
