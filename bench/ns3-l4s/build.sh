#!/usr/bin/env bash
# Builds CableLabs' ns-3 L4S models (TcpPrague with accurate ECN, DualPi2QueueDisc; branch
# `l4s-sims` of github.com/AlexandruTabacaru/ns-3-dev-git-rp, ns-3.40-based) with only the
# modules prague-cubic.cc needs, and prague-cubic.cc as a scratch program. Usage:
#   git clone -b l4s-sims https://github.com/AlexandruTabacaru/ns-3-dev-git-rp /tmp/ns3-l4s  # measured at 86ab02b
#   bash bench/ns3-l4s/build.sh /tmp/ns3-l4s          # ~50 min on 2 cores; the clone is built in place
set -euo pipefail
tree=${1:?usage: build.sh NS3_L4S_CLONE}
here=$(cd "$(dirname "$0")" && pwd)
cp "$here/prague-cubic.cc" "$tree/scratch/prague-cubic.cc"
cd "$tree"
./ns3 configure -d optimized --enable-modules="point-to-point;applications;traffic-control;internet;flow-monitor" \
  --disable-examples --disable-tests --disable-python-bindings
./ns3 build -j "$(nproc)" scratch/prague-cubic
echo "run: (cd $tree && ./ns3 run --no-build 'prague-cubic --rtt=20ms')"
