#!/usr/bin/env bash
# Installs the Debian packages dbabench runs on, only those that are missing.
# Needs root (or sudo); safe to run again.
set -euo pipefail
# chromium: the campaign report's test renders its pages in a real browser
packages=(postgresql-15 postgresql-contrib postgresql-doc-15
          prometheus-postgres-exporter prometheus-node-exporter xfsprogs util-linux chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
# External agents run sandboxed as this unprivileged user (operator/dbabench/env/sandbox.py).
if ! getent passwd dbabench-agent >/dev/null; then
  $SUDO useradd --system --user-group --no-create-home --home-dir /tmp \
    --shell /usr/sbin/nologin dbabench-agent
fi
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Debian's packages would start their own services where systemd runs; dbabench starts its own.
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
