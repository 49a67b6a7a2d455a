"""Drives the GeoNode stand-in with the geonodectl client library (PyPI, GeoNode API v2), as a
user's script would drive a real GeoNode, and prints what the library returned as JSON.
Usage: check-client.py URL USER PASSWORD GPKG"""
import base64
import json
import sys
from pathlib import Path

from geonoderest.apiconf import GeonodeApiConf
from geonoderest.datasets import GeonodeDatasetsHandler
from geonoderest.executionrequest import GeonodeExecutionRequestHandler

url, user, password, gpkg = sys.argv[1:5]
env = GeonodeApiConf(url=url.rstrip("/") + "/api/v2/", auth_basic=base64.b64encode(f"{user}:{password}".encode()).decode(), verify=False)
datasets = GeonodeDatasetsHandler(env)
executions = GeonodeExecutionRequestHandler(env)
out = {}
started = datasets.upload(file_path=Path(gpkg))
out["upload"] = started
done = executions.wait_for_completion(exec_id=str(started["execution_id"]), poll_interval=1, timeout=60)
out["execution"] = done
pk = done["output_params"]["resources"][0]["id"]
out["dataset"] = datasets.get(pk=pk)
out["patch"] = datasets.patch(pk=pk, json_content={"title": "Checked by geonodectl", "abstract": "client check"})
out["after_patch"] = datasets.get(pk=pk)
out["list"] = datasets.list(page_size=2, page=1)
out["search"] = datasets.list(search="geonodectl", page_size=10, page=1)
out["by_name"] = datasets.list(filter={"name": out["dataset"]["name"]}, page_size=10, page=1)
wrong = GeonodeDatasetsHandler(GeonodeApiConf(url=env.url, auth_basic=base64.b64encode(b"editor:wrong").decode(), verify=False))
out["wrong_password"] = wrong.list(page_size=1, page=1)
print(json.dumps(out, default=str))
