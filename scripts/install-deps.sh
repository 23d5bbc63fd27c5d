#!/usr/bin/env bash
# Installs the Debian 12 packages Switchyard builds against.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake pkg-config \
  libdnnl-dev libboost-dev libboost-filesystem-dev libtomlplusplus-dev \
  libspdlog-dev libfmt-dev libgtest-dev >/dev/null
