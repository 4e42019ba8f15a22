#!/usr/bin/env bash
# Build ns-3.44 from source, optimized, with only the modules bench-10-cubic.cc needs, then build
# the benchmark against it. This is the ns-3 that docs/benchmarks.md compares rtclab with; the
# PyPI wheel (`make bench-ns3`'s default) is about 4x slower.
#
#   bench/ns3/build-optimized.sh [OUT_DIR]        (default bench-out/ns3-opt)
#
# Source: $NS3_SRC (an ns-3 checkout or unpacked release at tag ns-3.44) if set, otherwise the
# ns-3.44 source archive from gitlab.com/nsnam. About 9-15 minutes on 2 cores. Writes only under
# OUT_DIR; an existing OUT_DIR/bench-10-cubic is rebuilt, nothing else there is touched.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "${1:-bench-out/ns3-opt}" && cd "${1:-bench-out/ns3-opt}" && pwd)"
src="${NS3_SRC:-}"
if [ -z "$src" ]; then
  src="$out/ns-3-dev-ns-3.44"
  if [ ! -f "$src/ns3" ]; then
    url="https://gitlab.com/nsnam/ns-3-dev/-/archive/ns-3.44/ns-3-dev-ns-3.44.tar.gz"
    echo "downloading $url"
    curl -fsSL "$url" | tar -xz -C "$out"
  fi
fi
[ -f "$src/ns3" ] || { echo "error: $src is not an ns-3 source tree (no ./ns3)" >&2; exit 2; }
build="$out/build"
mkdir -p "$build"
jobs="$(nproc)"
# The flags of `./ns3 configure -d optimized` (release, no asserts or logging, -march=native).
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=release -DNS3_ASSERT=OFF -DNS3_LOG=OFF \
  -DNS3_NATIVE_OPTIMIZATIONS=ON \
  -DNS3_ENABLED_MODULES="core;network;internet;point-to-point;applications;traffic-control;flow-monitor" \
  -DNS3_TESTS=OFF -DNS3_EXAMPLES=OFF -DNS3_PYTHON_BINDINGS=OFF -DNS3_WARNINGS_AS_ERRORS=OFF \
  -DCMAKE_INSTALL_PREFIX="$out/install" > "$out/configure.log"
cmake --build "$build" -j "$jobs" > "$out/build.log"
cmake --install "$build" > "$out/install.log"
lib="$(ls -d "$out"/install/lib* | head -1)"
inc="$out/install/include"
ver="$(ls "$lib" | sed -n 's/^libns\(3\.[0-9.]*\)-core.*\.so$/\1/p' | head -1)"
libs=""
for m in core network internet point-to-point applications traffic-control; do
  libs="$libs -lns$ver-$m-optimized"
done
[ -f "$lib/libns$ver-core-optimized.so" ] || libs="${libs//-optimized/}"
g++ -O3 -march=native -std=c++20 -w "$here/bench-10-cubic.cc" -I"$inc" -L"$lib" $libs \
  -Wl,-rpath,"$lib" -o "$out/bench-10-cubic"
echo "built $out/bench-10-cubic against ns-3 $ver (optimized) in $lib"
