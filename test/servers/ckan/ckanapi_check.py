"""Drives the CKAN stand-in with ckanapi (CKAN's own client) and prints what it got, as JSON.

The ckan suite runs this against the stand-in it started and compares the answers with what the
connector reads, so the stand-in cannot drift from what ckanapi accepts as CKAN. Arguments: the
portal URL, the API token, the name of a public dataset, the name of a private one.
"""
import json
import sys

import ckanapi

url, token, public, private = sys.argv[1:5]
out = {}
anonymous = ckanapi.RemoteCKAN(url, user_agent='geoflow-tests')
signed_in = ckanapi.RemoteCKAN(url, apikey=token, user_agent='geoflow-tests')

out['status'] = anonymous.action.status_show()
dataset = anonymous.action.package_show(id=public)
out['public'] = {'id': dataset['id'], 'name': dataset['name'], 'resources': [{k: r.get(k) for k in ('id', 'name', 'format', 'url', 'url_type', 'last_modified')} for r in dataset['resources']]}
first = dataset['resources'][0]
out['resource_show'] = anonymous.action.resource_show(id=first['id'])['name']
out['package_list'] = anonymous.action.package_list()


def error_of(call):
    try:
        call()
        return None
    except ckanapi.NotFound:
        return 'NotFound'
    except ckanapi.NotAuthorized:
        return 'NotAuthorized'
    except ckanapi.ValidationError as e:
        return 'ValidationError:' + ','.join(sorted(k for k in e.error_dict if k != '__type'))


out['missing'] = error_of(lambda: anonymous.action.package_show(id='no-such-dataset'))
out['private_anonymous'] = error_of(lambda: anonymous.action.package_show(id=private))
out['private_signed_in'] = signed_in.action.package_show(id=private)['name']
out['no_id'] = error_of(lambda: anonymous.action.package_show())
out['search'] = anonymous.action.package_search(q=public, rows=5)['count']
print(json.dumps(out))
