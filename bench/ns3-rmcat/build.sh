#!/usr/bin/env bash
# Builds cisco/ns3-rmcat (NADA's reference implementation) with its syncodecs submodule against
# the ns-3.44 PyPI wheel (`make bench-ns3` installs it into bench-out/ns3), with
# bench/ns3-rmcat/run-wired.cc as the driver. Usage:
#   git clone https://github.com/cisco/ns3-rmcat /tmp/ns3-rmcat        # measured at adb3f8e
#   git clone https://github.com/cisco/syncodecs /tmp/syncodecs        # measured at 6dcdc0b
#   bash bench/ns3-rmcat/build.sh /tmp/ns3-rmcat /tmp/syncodecs bench-out/ns3-rmcat
# Ported in the copy (never in the clones), for ns-3 releases after 3.28: the bottleneck's and
# the access links' DropTailQueue takes `MaxSize` in bytes instead of `Mode` + `MaxBytes`;
# RmcatSender compares its socket pointer with `!` instead of NULL.
set -euo pipefail
rmcat=${1:?usage: build.sh NS3_RMCAT SYNCODECS OUT}
codecs=${2:?usage: build.sh NS3_RMCAT SYNCODECS OUT}
out=${3:?usage: build.sh NS3_RMCAT SYNCODECS OUT}
here=$(cd "$(dirname "$0")" && pwd)
ns3=${NS3:-$here/../../bench-out/ns3/ns3}
test -d "$ns3/include" || { echo "no ns-3 in $ns3: run 'make bench-ns3' first (or set NS3=)"; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
src="$out/src"
rm -rf "$src"
mkdir -p "$src/model/syncodecs" "$out/inc/ns3" "$out/obj"
cp -r "$rmcat/." "$src/"
cp -r "$codecs/." "$src/model/syncodecs/"
python3 - "$src" <<'PY'
import re, sys
src = sys.argv[1]
p = f"{src}/model/topo/wired-topo.cc"
s = open(p).read()
s, n = re.subn(r'SetQueue \("ns3::DropTailQueue",\s*"Mode", StringValue \("QUEUE_MODE_BYTES"\),\s*'
               r'"MaxBytes", UintegerValue \(m_bufSize\)\);',
               'SetQueue ("ns3::DropTailQueue<Packet>", "MaxSize", '
               'QueueSizeValue (QueueSize (QueueSizeUnit::BYTES, m_bufSize)));', s)
assert n == 2, n
open(p, "w").write(s)
p = f"{src}/model/apps/rmcat-sender.cc"
s = open(p).read()
assert s.count("if (m_socket == NULL) {") == 1
open(p, "w").write(s.replace("if (m_socket == NULL) {", "if (!m_socket) {"))
PY
for h in $(find "$src/model" "$src/test" -name "*.h"); do ln -sf "$h" "$out/inc/ns3/$(basename "$h")"; done
flags=(-std=c++20 -O2 -w -DNS3_LOG_ENABLE -I"$ns3/include" -I"$out/inc" -I"$src/test" -include ns3/queue-size.h)
for f in model/apps/rmcat-sender.cc model/apps/rmcat-receiver.cc model/apps/rtp-header.cc \
         model/congestion-control/nada-controller.cc model/congestion-control/sender-based-controller.cc \
         model/congestion-control/dummy-controller.cc model/topo/topo.cc model/topo/wired-topo.cc \
         model/syncodecs/syncodecs.cc model/syncodecs/traces-reader.cc \
         test/rmcat-common-test.cc test/rmcat-wired-test-case.cc; do
  g++ "${flags[@]}" -c "$src/$f" -o "$out/obj/$(basename "$f" .cc).o"
done
g++ "${flags[@]}" -c "$here/run-wired.cc" -o "$out/obj/run-wired.o"
g++ -o "$out/run-wired" "$out"/obj/*.o -L"$ns3/lib64" -lns3.44-core -lns3.44-network -lns3.44-internet \
  -lns3.44-point-to-point -lns3.44-applications -lns3.44-traffic-control -lns3.44-stats -lns3.44-bridge \
  -lns3.44-mobility -Wl,-rpath,"$ns3/lib64"
echo "built $out/run-wired"
