// htsim dumbbell matched to rtclab's bench/htsim/dumbbell-newreno.toml: N long-lived TCP flows
// (htsim's TcpSrc: NewReno, no SACK, an ACK per packet) through one 100 Mbit/s drop-tail queue
// of 250,000 bytes, 10 ms propagation each way (20 ms RTT), 60 simulated seconds.
//
// Built against Broadcom/csg-htsim (sim/libhtsim.a) by build.sh; used by compare.sh to measure
// instructions (callgrind) and CPU time per delivered data packet against rtclab's loop.
//
//   dumbbell [-flows N] [-secs S] [-mbps R] [-buffer BYTES]
// Prints one line: flows, simulated seconds, delivered data packets, events.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "config.h"
#include "eventlist.h"
#include "network.h"
#include "pipe.h"
#include "queue.h"
#include "tcp.h"

int main(int argc, char** argv) {
    int flows = 10;
    double secs = 60;
    uint64_t mbps = 100;
    mem_b buffer = 250000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-flows")) flows = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-secs")) secs = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "-mbps")) mbps = strtoull(argv[i + 1], nullptr, 10);
        else if (!strcmp(argv[i], "-buffer")) buffer = strtoull(argv[i + 1], nullptr, 10);
        else { fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
    }
    if (flows < 1 || secs <= 0 || mbps == 0 || buffer <= 0) {
        fprintf(stderr, "flows, secs, mbps and buffer must be positive\n");
        return 2;
    }
    EventList eventlist;
    eventlist.setEndtime(timeFromSec(secs));
    Packet::set_packet_size(1500);

    Queue bottleneck(speedFromMbps(mbps), buffer, eventlist, nullptr);
    bottleneck.setName("bottleneck");
    Pipe forward(timeFromMs(10), eventlist);
    forward.setName("forward");
    Pipe backward(timeFromMs(10), eventlist);
    backward.setName("backward");
    // htsim's TCP retransmission timers are driven by a scanner, not per-flow timers.
    TcpRtxTimerScanner scanner(timeFromMs(10), eventlist);

    std::vector<TcpSink*> sinks;
    for (int i = 0; i < flows; i++) {
        TcpSrc* src = new TcpSrc(nullptr, nullptr, eventlist);
        src->setName("tcp" + ntoa(i));
        TcpSink* sink = new TcpSink();
        sink->setName("sink" + ntoa(i));
        scanner.registerTcp(*src);
        route_t* out = new route_t();
        out->push_back(&bottleneck);
        out->push_back(&forward);
        out->push_back(sink);
        route_t* back = new route_t();
        back->push_back(&backward);
        back->push_back(src);
        // Staggered by 1 ms each so the flows do not start in lockstep (rtclab starts all at 0
        // with distinct random jitter; either way they share the queue within the first RTTs).
        src->connect(*out, *back, *sink, timeFromMs(i));
        sinks.push_back(sink);
    }
    uint64_t events = 0;
    while (eventlist.doNextEvent()) events++;
    uint64_t bytes = 0;
    for (TcpSink* s : sinks) bytes += s->_packets;
    uint64_t delivered = bytes / Packet::data_packet_size();
    double util = (double)bytes * 8.0 / ((double)mbps * 1e6 * secs);
    printf("flows %d secs %.1f delivered_packets %llu events %llu utilization %.4f\n", flows, secs,
           (unsigned long long)delivered, (unsigned long long)events, util);
    return 0;
}
