#!/usr/bin/env bash
# Installs the Debian packages given as arguments when any is missing. As root this runs
# apt-get; otherwise it prints the exact command to run and fails.
set -euo pipefail
missing=()
for p in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  echo "wick: installing missing packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || true
  $cmd
else
  echo "wick: missing Debian packages: ${missing[*]}"
  echo "Install them with:"
  echo "  sudo apt-get update && sudo $cmd"
  exit 1
fi
