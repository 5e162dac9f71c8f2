#!/usr/bin/env bash
# Installs, from Debian packages, whatever the build needs and this machine lacks.
# Nothing is fetched from anywhere else. Safe to run again: installed packages are skipped.
set -euo pipefail
packages=(build-essential cmake libboost-fiber-dev libboost-context-dev catch2 libcli11-dev
          nlohmann-json3-dev libfmt-dev zlib1g-dev python3 chromium clang-format)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup-deps: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
