#!/usr/bin/env bash
# Builds and runs SCReAM v2's reference simulator (EricssonResearch/scream,
# code/scream_simulator.cpp) in the two cases bench/scream/{l4s,noecn}.toml reproduce, and
# leaves each run's logs in OUT/<case>/ (log.txt: ScreamV2Tx's detailed log; txrx.txt: every
# packet's send and receive time). Usage:
#   git clone https://github.com/EricssonResearch/scream /tmp/scream   # measured at c8f84c3
#   bash bench/scream/reference.sh /tmp/scream bench-out/scream        # ~2.5 min, 1 core each
# Changes made to the copy (never to the clone): the simulator's null `void** rtpPacket` that
# RtpQueue::sendPacket writes through is given storage (the simulator crashes at the first
# packet without it, c8f84c3); the encoder's missing trace file ./traces/trace_no_key.txt is
# written flat (every frame the same size: frames follow the target exactly); the per-packet
# log is switched on; the no-ECN case sets `ecnCapable = false`.
set -euo pipefail
src=${1:?usage: reference.sh SCREAM_CLONE OUT_DIR}
out=${2:?usage: reference.sh SCREAM_CLONE OUT_DIR}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src/code/." "$work/"
cd "$work"
sed -i 's|\t\t\tvoid\*\* rtpPacket = 0;|\t\t\tvoid* rtpPacketStore = 0; void** rtpPacket = \&rtpPacketStore;|' scream_simulator.cpp
grep -q rtpPacketStore scream_simulator.cpp
sed -i 's|\tscreamTx->setDetailedLogFp(fp);|\tscreamTx->setDetailedLogFp(fp);\n\tscreamTx->setTxRxLogFp(fopen("txrx.txt", "w"));|' scream_simulator.cpp
grep -q setTxRxLogFp scream_simulator.cpp
sed 's/^const bool ecnCapable = true;/const bool ecnCapable = false;/' scream_simulator.cpp > sim_noecn.cpp
lib="ScreamV2Tx.cpp ScreamV2TxStream.cpp ScreamTx.cpp ScreamRx.cpp RtpQueue.cpp NetQueue.cpp OooQueue.cpp VideoEnc.cpp"
g++ -O2 -o sim_l4s scream_simulator.cpp $lib
g++ -O2 -o sim_noecn sim_noecn.cpp $lib
for case in l4s noecn; do
  mkdir -p "run_$case/traces"
  python3 -c "open('run_$case/traces/trace_no_key.txt', 'w').write('1000\n' * 1000)"
  (cd "run_$case" && "../sim_$case" > stdout.txt 2>&1) &
done
wait
for case in l4s noecn; do
  mkdir -p "$out/$case"
  cp "run_$case/log.txt" "run_$case/txrx.txt" "$out/$case/"
done
echo "reference logs in $out/{l4s,noecn}"
