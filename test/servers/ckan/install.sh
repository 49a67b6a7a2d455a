#!/usr/bin/env bash
# A real CKAN 2.12.0 for the ckan suites, everything under the data folder:
# - CKAN itself with its pinned requirements (PyPI `ckan[requirements]`) in the venv .data/tools/ckan,
#   plus ckanapi 4.11 (CKAN's own client, which seeds the portal; also in .data/tools/ckanapi, where
#   it checks the stand-in);
# - Solr 9.10.1 (Maven Central's solr-core and solr-test-framework; Debian has no Solr) in
#   .data/tools/ckan-solr, started by the suite through JettySolrRunner (SolrRunner.java, compiled
#   here) with the schema.xml the ckan package ships;
# - Redis from Debian (CKAN's background jobs and sessions; the suite starts its own on a free port).
# PostgreSQL is the test run's own cluster. Whatever fails to install, the real-CKAN cases skip
# naming it; the rest of the suite still runs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
here=test/servers/ckan
tools="${SVC_DATA_DIR:-.data}/tools"
source test/servers/apt.sh
source devservers/venv.sh

if ! command -v redis-server >/dev/null; then
  install_without_daemon redis-server "Redis for the real CKAN" || printf '[test-servers] redis-server could not be installed: the real-CKAN cases will be skipped\n' >&2
fi
# psycopg2 is built from source: libpq's headers and a C compiler (both Debian's).
command -v pg_config >/dev/null || install_without_daemon libpq-dev "psycopg2 for CKAN" || true
venv_install ckan 'the real-CKAN cases will be skipped' 'ckan[requirements]==2.12.0' ckanapi==4.11
# ckanapi alone too: the stand-in's check runs even where CKAN does not install.
venv_install ckanapi 'the ckanapi checks of the CKAN stand-in will be skipped' ckanapi==4.11

# Solr: the jars, and SolrRunner compiled against them. The stamp names the pom and the runner,
# so a change to either fetches/compiles again.
solr="$tools/ckan-solr"
stamp="$(cat "$here/solr/pom.xml" "$here/solr/SolrRunner.java" | sha256sum | cut -c1-16)"
if [ "$(cat "$solr/.stamp" 2>/dev/null)" != "$stamp" ]; then
  if ! command -v javac >/dev/null || ! command -v mvn >/dev/null; then
    printf '[test-servers] Java 17 (javac) and Maven are needed for Solr: the real-CKAN cases will be skipped\n' >&2
  else
    printf '[test-servers] installing Solr 9.10.1 for CKAN\n' >&2
    rm -rf "$solr" && mkdir -p "$solr/lib" "$solr/classes"
    if mvn -q -B -f "$here/solr/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$(realpath "$solr")/lib" >&2 &&
      javac -d "$solr/classes" -cp "$solr/lib/*" "$here/solr/SolrRunner.java" >&2; then
      echo "$stamp" > "$solr/.stamp"
    else
      rm -rf "$solr"
      printf '[test-servers] Solr 9.10.1 could not be installed: the real-CKAN cases will be skipped\n' >&2
    fi
  fi
fi
exit 0
