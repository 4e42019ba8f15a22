#!/usr/bin/env bash
# Build htsim (Broadcom/csg-htsim, pinned) and bench/htsim/dumbbell.cpp against it.
#   bench/htsim/build.sh [OUT_DIR]       (default bench-out/htsim)
# Source: $HTSIM_SRC (a csg-htsim checkout) if set, otherwise a clone from GitHub. Writes only
# under OUT_DIR. About a minute on 2 cores.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
commit=841d9e7be46bb968eece766aa4b6c044c7799f67
out="$(mkdir -p "${1:-bench-out/htsim}" && cd "${1:-bench-out/htsim}" && pwd)"
src="${HTSIM_SRC:-$out/csg-htsim}"
if [ ! -d "$src/sim" ]; then
  git clone -q https://github.com/Broadcom/csg-htsim "$src"
  git -C "$src" checkout -q "$commit"
fi
# htsim's own Makefile builds its library with -O3; build only the library, not its tools.
make -s -C "$src/sim" -j "$(nproc)" libhtsim.a > "$out/build.log" 2>&1
g++ -O3 -std=c++17 -w -I"$src/sim" "$here/dumbbell.cpp" "$src/sim/libhtsim.a" -o "$out/dumbbell"
echo "built $out/dumbbell (htsim $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo "$commit"))"
