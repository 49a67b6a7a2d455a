"""The GeoParquet engine's modules, run by geo/formats/geoflow_formats.py (see its docstring)."""
