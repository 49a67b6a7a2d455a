"""CRS conversions (PROJJSON, WKT) through the GDAL library bundled in the pyogrio wheel."""

import json
import os

_gdal = None


def libgdal():
    """The GDAL library inside the pyogrio wheel, for what pyogrio does not expose (PROJJSON)."""
    global _gdal
    if _gdal is None:
        import ctypes
        import glob

        import pyogrio

        libs = glob.glob(os.path.join(os.path.dirname(pyogrio.__file__), os.pardir, "pyogrio.libs", "libgdal*.so*"))
        lib = ctypes.CDLL(libs[0])
        lib.OSRNewSpatialReference.restype = ctypes.c_void_p
        lib.OSRNewSpatialReference.argtypes = [ctypes.c_char_p]
        lib.OSRSetFromUserInput.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        lib.OSRExportToPROJJSON.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
        lib.OSRExportToWkt.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.OSRDestroySpatialReference.argtypes = [ctypes.c_void_p]
        lib.VSIFree.argtypes = [ctypes.c_void_p]
        lib.CPLSetConfigOption.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        lib.CPLSetConfigOption(b"OSR_USE_NON_DEPRECATED", b"NO")
        _gdal = (lib, ctypes)
    return _gdal


def crs_convert(text, to):
    """A CRS GDAL reads (WKT, EPSG:n, PROJJSON text) as PROJJSON (dict) or WKT; None if unreadable."""
    if text is None:
        return None
    lib, ctypes = libgdal()
    srs = lib.OSRNewSpatialReference(None)
    try:
        if lib.OSRSetFromUserInput(srs, text.encode()) != 0:
            return None
        out = ctypes.c_void_p()
        if to == "projjson":
            err = lib.OSRExportToPROJJSON(srs, ctypes.byref(out), None)
        else:
            err = lib.OSRExportToWkt(srs, ctypes.byref(out))
        if err != 0 or not out.value:
            return None
        value = ctypes.string_at(out.value).decode()
        lib.VSIFree(out)
        return json.loads(value) if to == "projjson" else value
    finally:
        lib.OSRDestroySpatialReference(srs)
