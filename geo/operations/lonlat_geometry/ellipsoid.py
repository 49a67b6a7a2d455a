"""The layer's ellipsoid: geodesics (GeographicLib) and azimuthal equidistant projections centred anywhere."""

from pyproj import Geod, Transformer


class Ellipsoid:
    def __init__(self, srs):
        self.a = srs.GetSemiMajor()
        rf = srs.GetInvFlattening()
        self.rf = rf if rf and rf > 0 else 0.0
        self.geod = Geod(a=self.a, rf=self.rf) if self.rf else Geod(a=self.a, b=self.a)
        self._cache = {}

    def aeqd(self, lat0, lon0):
        key = (round(lat0, 6), round(lon0, 6))
        t = self._cache.get(key)
        if t is None:
            shape = f"+a={self.a} +rf={self.rf}" if self.rf else f"+R={self.a}"
            t = Transformer.from_pipeline(f"+proj=aeqd +lat_0={key[0]} +lon_0={key[1]} {shape}")
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = t
        return t
