"""Values of load files, query parameters and results: checked and stored as SQLite holds them, answered as BigQuery's REST API sends them."""

import base64
import re
from datetime import datetime, timezone

GEO_KINDS = ("POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION")


def check_wkt(text):
    t = text.strip()
    if t.startswith("{"):
        return t  # GeoJSON geometry, as load jobs accept
    kind = re.match(r"^([A-Za-z]+)", t)
    if not kind or kind.group(1).upper() not in GEO_KINDS or t.count("(") != t.count(")"):
        raise ValueError(f"Invalid WKT: {t[:40]}")
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", t[len(kind.group(1)) :])]
    for lon, lat in zip(numbers[0::2], numbers[1::2]):
        if not (-180 <= lon <= 180 and -90 <= lat <= 90):
            raise ValueError(f"Longitude or latitude out of range: {lon} {lat} (GEOGRAPHY is WGS 84)")
    return t


def parse_timestamp(text):
    t = text.strip()
    if re.fullmatch(r"-?\d+", t):  # microseconds
        dt = datetime.fromtimestamp(int(t) / 1e6, tz=timezone.utc)
    else:
        t = t.replace(" UTC", "+00:00").replace("Z", "+00:00").replace("T", " ").replace("/", "-")
        if re.search(r"[+-]\d\d$", t):
            t += ":00"
        dt = datetime.fromisoformat(t)
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f+00")


def to_storage(field_type, text):
    """A value of a load file or a query parameter, stored as SQLite holds it."""
    if text is None:
        return None
    t = field_type.upper()
    if t in ("INTEGER", "INT64"):
        return int(text)
    if t in ("FLOAT", "FLOAT64"):
        return float(text)
    if t in ("BOOLEAN", "BOOL"):
        v = str(text).strip().lower()
        if v in ("true", "1"):
            return 1
        if v in ("false", "0"):
            return 0
        raise ValueError(f"Invalid BOOL value: {text}")
    if t == "TIMESTAMP":
        return parse_timestamp(str(text))
    if t == "DATE":
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(text)):
            raise ValueError(f"Invalid date: '{text}'")
        return str(text)
    if t == "GEOGRAPHY":
        return check_wkt(str(text))
    if t == "BYTES":
        base64.b64decode(str(text), validate=True)
        return str(text)
    return str(text)


def to_rest(field_type, value, int64_timestamp):
    """A stored value as BigQuery's REST API sends it: text, TIMESTAMP as microseconds or seconds."""
    if value is None:
        return None
    t = field_type.upper()
    if t in ("BOOLEAN", "BOOL"):
        return "true" if value else "false"
    if t == "TIMESTAMP" and isinstance(value, str):
        dt = datetime.fromisoformat(value.replace("+00", "+00:00"))
        micros = int(dt.timestamp()) * 1_000_000 + dt.microsecond
        return str(micros) if int64_timestamp else f"{micros / 1e6:.6E}"
    if t in ("FLOAT", "FLOAT64"):
        return repr(float(value))
    return str(value)
