"""What PROJ offers to go from one CRS to another over an area, and the target's area of use.

Run by geo/crs-operations.ts in the sandbox as  python3 -I crs_ops.py SPEC.json ; prints JSON:
{"operations": [{"name", "accuracy_m", "pipeline"}], "unavailable": [names],
 "target_area": {"name", "west", "south", "east", "north"} | null}
Operations come best first, as PROJ ranks them for the area (the first is what PROJ uses there).
"""

import json
import sys
import warnings

from pyproj import CRS
from pyproj.transformer import AreaOfInterest, TransformerGroup


def area(crs):
    a = crs.area_of_use
    if a is None:
        return None
    return {"name": a.name, "west": a.west, "south": a.south, "east": a.east, "north": a.north}


def main():
    warnings.filterwarnings("ignore")
    spec = json.load(open(sys.argv[1]))
    out = {"operations": [], "unavailable": [], "target_area": None}
    target = CRS.from_user_input(spec["target"])
    out["target_area"] = area(target)
    if spec.get("source"):
        source = CRS.from_user_input(spec["source"])
        box = spec.get("bbox")
        aoi = AreaOfInterest(*box) if box and box[0] <= box[2] and box[1] <= box[3] else None
        group = TransformerGroup(source, target, always_xy=True, area_of_interest=aoi)
        for t in group.transformers[:10]:
            try:
                pipeline = t.to_proj4()
            except Exception:
                pipeline = t.definition
            out["operations"].append({"name": t.description or t.name, "accuracy_m": t.accuracy if t.accuracy is not None and t.accuracy >= 0 else None, "pipeline": pipeline})
        out["unavailable"] = [op.name for op in group.unavailable_operations[:10]]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
