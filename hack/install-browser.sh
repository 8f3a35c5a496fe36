#!/usr/bin/env bash
# Installs what the explorer's browser test needs, if it is missing: Debian's chromium
# and chromium-driver (chromedriver). Needs root (CI runs as root); prints what it did.
set -euo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
	echo "browser: $(chromium --version 2>/dev/null | head -1) and $(chromedriver --version | head -1) already installed"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "browser: chromium or chromedriver missing; install them as root: apt-get install chromium chromium-driver" >&2
	exit 1
fi
echo "browser: installing chromium and chromium-driver from the distribution's packages"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium chromium-driver >/dev/null
echo "browser: $(chromium --version 2>/dev/null | head -1) and $(chromedriver --version | head -1) installed"
