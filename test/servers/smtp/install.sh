#!/usr/bin/env bash
# A real SMTP server for the notification suites: aiosmtpd from PyPI, in a venv under the data
# folder (serve.py runs it with STARTTLS or TLS and AUTH, and keeps what it receives).
set -euo pipefail
cd "$(dirname "$0")/../../.."
source devservers/venv.sh
venv_install smtp "the email notification tests are skipped" "aiosmtpd==1.4.6" || true
