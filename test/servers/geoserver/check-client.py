"""Drives the GeoServer stand-in with the geoserver-rest client library (PyPI), as a user's script
would drive a real GeoServer, and prints what the library returned as JSON for the suite to check.
Usage: check-client.py URL USER PASSWORD GPKG"""
import json
import sys

from geo.Geoserver import Geoserver, GeoserverException

url, user, password, gpkg = sys.argv[1:5]
geo = Geoserver(url, username=user, password=password)
out = {}
out["version"] = geo.get_version()
out["create_workspace"] = geo.create_workspace("clientcheck")
out["workspaces"] = geo.get_workspaces()
out["workspace"] = geo.get_workspace("clientcheck")
out["create_gpkg_datastore"] = geo.create_gpkg_datastore(gpkg, store_name="boroughs", workspace="clientcheck")
out["datastores"] = geo.get_datastores("clientcheck")
out["datastore"] = geo.get_featurestore("boroughs", "clientcheck")
out["featuretypes"] = geo.get_featuretypes("clientcheck", "boroughs")
out["attributes"] = geo.get_feature_attribute("nybb", "clientcheck", "boroughs")
out["layers"] = geo.get_layers("clientcheck")
out["layer"] = geo.get_layer("nybb", "clientcheck")
out["publish_style"] = geo.publish_style("nybb", "polygon", "clientcheck")
out["layer_after_style"] = geo.get_layer("nybb", "clientcheck")
out["edit_featuretype"] = geo.edit_featuretype("boroughs", "clientcheck", "nybb", "nybb", "NYC boroughs", abstract="Borough boundaries")
out["styles"] = geo.get_styles()
try:
    Geoserver(url, username=user, password="wrong").get_workspaces()
    out["wrong_password"] = "accepted"
except GeoserverException as e:
    out["wrong_password"] = e.status
try:
    geo.get_layer("nowhere", "clientcheck")
    out["missing_layer"] = "found"
except GeoserverException as e:
    out["missing_layer"] = e.status
out["delete_featurestore"] = geo.delete_featurestore("boroughs", "clientcheck")
out["datastores_after_delete"] = geo.get_datastores("clientcheck")
print(json.dumps(out))
