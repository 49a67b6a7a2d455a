# The API and the worker share one image; docker-compose.yml picks the command.
# Node 22 LTS here (the repository's own scripts also run on Node 20).
FROM node:22-bookworm

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      gdal-bin libgdal-dev bubblewrap unzip zip python3 python3-venv python3-gdal python3-shapely python3-pyproj python3-geopandas \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
# The formats engine (GeoParquet, vector tiles; docs/formats.md), pinned, on Debian's python3 for the sandbox.
COPY geo/formats/requirements.txt /opt/formats-requirements.txt
RUN python3 -m venv /opt/formats \
 && /opt/formats/bin/pip install --no-cache-dir --no-compile -q -r /opt/formats-requirements.txt
ENV SVC_FORMATS_VENV=/opt/formats
COPY package.json package-lock.json .npmrc ./
# gdal-async against Debian's GDAL (which has the PostgreSQL driver), not its bundled copy.
RUN npm_config_build_from_source=gdal-async npm_config_shared_gdal=true npm ci --no-audit --no-fund \
 && node -e "require('gdal-async')"
COPY . .
# The browser app is built at image build time: the image runs as `node` and cannot write web/dist.
RUN node --import tsx web/build.ts

ENV SVC_HOST=0.0.0.0 SVC_PORT=8080 SVC_DATA_DIR=/data UV_THREADPOOL_SIZE=8 NODE_ENV=production
VOLUME /data
EXPOSE 8080
USER node
CMD ["node", "--expose-gc", "--import", "tsx", "api/server.ts"]
