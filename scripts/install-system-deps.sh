#!/usr/bin/env bash
# Installs the Debian packages dbabench runs on, only those that are missing.
# Needs root (or sudo); safe to run again.
set -euo pipefail
packages=(postgresql-15 postgresql-contrib postgresql-doc-15 prometheus
          prometheus-postgres-exporter prometheus-node-exporter xfsprogs util-linux)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing Debian packages: ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
# Debian's packages would start their own services where systemd runs; dbabench starts its own.
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
