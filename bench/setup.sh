#!/usr/bin/env bash
# Installs what the benchmark compares against and loads with, from Debian (as root):
# wrk (load), nginx-light (the nginx target), nats-server (the JetStream event-log scenario).
# Each missing tool is skipped by `npm run bench` with a note, so this is optional.
set -euo pipefail
missing=()
command -v wrk >/dev/null || [ -x /usr/bin/wrk ] || missing+=(wrk)
[ -x /usr/sbin/nginx ] || missing+=(nginx-light)
command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || missing+=(nats-server)
if [ ${#missing[@]} -eq 0 ]; then echo "bench/setup.sh: wrk, nginx and nats-server are installed"; exit 0; fi
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${missing[@]}"
# Debian starts nginx as a service on port 80 when it can; the benchmark runs its own.
$SUDO systemctl disable --now nginx >/dev/null 2>&1 || true
echo "bench/setup.sh: installed ${missing[*]}"
