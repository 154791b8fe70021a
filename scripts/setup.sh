#!/usr/bin/env bash
# Installs what hetsched needs from Debian packages, if it is missing. Safe to re-run: it only
# calls apt-get when a package is not installed yet.
set -euo pipefail

packages=(
  cmake ninja-build g++ clang clang-format pkg-config git
  libboost-dev libfmt-dev libeigen3-dev libhwloc-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-dev pybind11-dev python3-pytest python3-pandas
  libcpp-httplib-dev libcli11-dev libssl-dev zlib1g-dev openssl golang-go
)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  echo "setup: all packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
