#!/bin/sh
# Installs Debian's Chromium for the browser test of package server
# (TestBrowser skips without it). Does nothing when Chromium is present.
set -eu
for b in /usr/bin/chromium /usr/bin/chromium-browser; do
	if [ -x "$b" ]; then
		echo "chromium: $b"
		exit 0
	fi
done
if command -v chromium >/dev/null 2>&1; then
	echo "chromium: $(command -v chromium)"
	exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y chromium
/usr/bin/chromium --version
