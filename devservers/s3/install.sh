#!/usr/bin/env bash
# An S3 API for the s3 connector suite: moto's server from PyPI, in a venv under the data folder.
set -uo pipefail
cd "$(dirname "$0")/../.."
source devservers/venv.sh
venv_install moto 'the S3 suites will be skipped' 'moto[server]==5.2.5'
exit 0
