// Runs cisco/ns3-rmcat's wired test cases (RFC 8867 §5, its `rmcat-wired` test suite) outside
// ns-3's test runner, against an installed ns-3 (the 3.44 PyPI wheel), so NADA's reference
// implementation can be measured beside rtclab's on the same cases.
//
// Each case's settings are copied from ns3-rmcat's test/rmcat-wired-test-suite.cc (commit
// adb3f8e), the "fixfps" video source as there. The case writes ns3-rmcat's own log
// (<case>.log, its `Topo` component: per-packet records and NADA's per-update state) in the
// working directory; bench/ns3-rmcat/summarize.py turns it into the figures docs/algorithms/
// nada.md compares. Usage: run-wired 5.1 [5.2 ...]   (bench/ns3-rmcat/build.sh builds it)

#include "rmcat-wired-test-case.h"

#include "ns3/config.h"
#include "ns3/tcp-socket.h"
#include "ns3/uinteger.h"
#include "ns3/string.h"

#include <iostream>
#include <map>
#include <string>
#include <vector>

using namespace ns3;

// The test runner's private entry points, reached from a subclass.
class Runner : public RmcatWiredTestCase
{
  public:
    using RmcatWiredTestCase::RmcatWiredTestCase;
    void Go ()
    {
        DoSetup ();
        DoRun ();
        DoTeardown ();
    }
};

static Runner* Make (const std::string& id)
{
    const uint64_t mbps = 1u << 20;  // ns3-rmcat's Mbit/s
    const uint64_t bw = 4 * mbps;
    const uint32_t pdel = 50, qdel = 300, simT = 120;
    const std::vector<uint32_t> t0s;
    Runner* tc = nullptr;
    if (id == "5.1") {
        tc = new Runner{bw, pdel, qdel, "rmcat-test-case-5.1-fixfps"};
        tc->SetSimTime (100);
        tc->SetBW ({0, 40, 60, 80}, {mbps, uint64_t (2.5 * mbps), uint64_t (.6 * mbps), mbps}, true);
    } else if (id == "5.2") {
        const uint64_t m2 = 1u << 21;
        tc = new Runner{bw, pdel, qdel, "rmcat-test-case-5.2-fixfps"};
        tc->SetSimTime (125);
        tc->SetBW ({0, 25, 50, 75, 100}, {2 * m2, m2, uint64_t (1.75 * m2), uint64_t (.5 * m2), m2}, true);
        tc->SetRMCATFlows (2, t0s, t0s, true);
    } else if (id == "5.3") {
        tc = new Runner{bw, pdel, qdel, "rmcat-test-case-5.3-fixfps"};
        tc->SetSimTime (100);
        tc->SetBW ({0, 20, 40, 60}, {2 * mbps, mbps, uint64_t (.5 * mbps), 2 * mbps}, true);
        tc->SetBW ({0, 35, 70}, {2 * mbps, uint64_t (.8 * mbps), 2 * mbps}, false);
        tc->SetRMCATFlows (1, t0s, t0s, true);
        tc->SetRMCATFlows (1, t0s, t0s, false);
    } else if (id == "5.4") {
        tc = new Runner{bw, pdel, qdel, "rmcat-test-case-5.4-fixfps"};
        tc->SetCapacity (uint64_t (3.5 * mbps));
        tc->SetSimTime (simT);
        tc->SetRMCATFlows (3, {0, 20, 40}, {119, 119, 119}, true);
    } else if (id == "5.5") {
        tc = new Runner{bw, 10, qdel, "rmcat-test-case-5.5-fixfps"};
        tc->SetSimTime (300);
        tc->SetRMCATFlows (5, {0, 10, 20, 30, 40}, {299, 299, 299, 299, 299}, true);
        tc->SetPropDelays ({10, 25, 50, 100, 150});
    } else if (id == "5.6") {
        tc = new Runner{bw, pdel, qdel, "rmcat-test-case-5.6-fixfps"};
        tc->SetCapacity (2 * mbps);
        tc->SetSimTime (simT);
        tc->SetRMCATFlows (1, {5}, {119}, true);
        tc->SetTCPLongFlows (1, t0s, t0s, true);
    } else if (id == "5.7") {
        tc = new Runner{bw, pdel, qdel, "rmcat-test-case-5.7-fixfps"};
        tc->SetCapacity (2 * mbps);
        tc->SetSimTime (300);
        tc->SetRMCATFlows (2, {5, 5}, {299, 299}, true);
        tc->SetTCPShortFlows (10, 2, true);
    } else if (id == "5.8") {
        tc = new Runner{bw, pdel, qdel, "rmcat-test-case-5.8-fixfps"};
        tc->SetCapacity (uint64_t (3.5 * mbps));
        tc->SetSimTime (simT);
        tc->SetRMCATFlows (3, t0s, t0s, true);
        tc->SetPauseResumeTimes (1, {40}, {60}, true);
    }
    return tc;
}

int main (int argc, char** argv)
{
    if (argc < 2) {
        std::cerr << "usage: run-wired CASE...  (5.1 to 5.8)\n";
        return 2;
    }
    // ns3-rmcat's TCP defaults (test/rmcat-wired-test-suite.cc).
    Config::SetDefault ("ns3::TcpL4Protocol::SocketType", StringValue ("ns3::TcpNewReno"));
    Config::SetDefault ("ns3::TcpSocket::SegmentSize", UintegerValue (RMCAT_TC_TCP_PKTSIZE));
    Config::SetDefault ("ns3::TcpSocket::DelAckCount", UintegerValue (0));
    for (int i = 1; i < argc; ++i) {
        Runner* tc = Make (argv[i]);
        if (tc == nullptr) {
            std::cerr << "unknown case " << argv[i] << " (5.1 to 5.8)\n";
            return 2;
        }
        tc->Go ();
        std::cout << "case " << argv[i] << " done\n";
    }
    return 0;
}
