// TCP Prague beside CUBIC through DualPI2 in CableLabs' ns-3 L4S models (TcpPrague with
// accurate ECN, DualPi2QueueDisc; the `l4s-sims` branch of AlexandruTabacaru/ns-3-dev-git-rp,
// after Tom Henderson's ns-3 L4S work), as the reference for rtclab's `prague` and `dualpi2`:
// the case of `rtclab suite l4s`'s coexist-<RTT> rows. bench/ns3-l4s/README.md builds and runs it.
//
//   sender0 (Prague) --\                                   /-- receiver0
//                       router0 ==[DualPI2, C Mbit/s]== router1
//   sender1 (CUBIC)  --/      one-way delay RTT/2          \-- receiver1
//   access links 10 Gbit/s, 1 us
//
// Both flows bulk from 0 s (CUBIC 50 ms later, as the branch's own scenarios do), 1448-byte
// segments, pacing on, UseEcn on (Prague: ECT(1), each CE echoed DCTCP-style by its receiver;
// CUBIC's packets still go Not-ECT in this model: the classic queue drops them, marks none).
// Prints each flow's goodput over [warmup, end) and the L and C queues' sojourn percentiles
// over the same span. Usage: prague-cubic [--rtt=20ms] [--rate=100Mbps] [--duration=60s]
//   [--warmup=10s]

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <vector>

using namespace ns3;

static std::vector<double> g_l, g_c;
static Time g_warmup;

static void
LSojourn(Time t)
{
    if (Simulator::Now() >= g_warmup)
        g_l.push_back(t.GetSeconds() * 1e3);
}

static void
CSojourn(Time t)
{
    if (Simulator::Now() >= g_warmup)
        g_c.push_back(t.GetSeconds() * 1e3);
}

static double
Pct(std::vector<double> v, double p)
{
    if (v.empty())
        return 0.0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(p / 100.0 * (v.size() - 1) + 0.5))];
}

int
main(int argc, char* argv[])
{
    std::string rtt = "20ms";
    std::string rate = "100Mbps";
    Time duration = Seconds(60);
    g_warmup = Seconds(10);
    CommandLine cmd;
    cmd.AddValue("rtt", "base RTT", rtt);
    cmd.AddValue("rate", "bottleneck rate", rate);
    cmd.AddValue("duration", "run length", duration);
    cmd.AddValue("warmup", "left out of the figures", g_warmup);
    cmd.Parse(argc, argv);

    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(8 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(8 << 20));
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketState::PaceInitialWindow", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::BulkSendApplication::SendSize", UintegerValue(1448));

    NodeContainer senders(2), routers(2), receivers(2);
    InternetStackHelper stack;
    stack.InstallAll();

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    access.SetChannelAttribute("Delay", StringValue("1us"));
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(rate));
    bottleneck.SetChannelAttribute("Delay", TimeValue(Time(rtt) / 2));
    bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));

    Ipv4AddressHelper ip;
    std::vector<Ipv4InterfaceContainer> recvIfs;
    for (uint32_t i = 0; i < 2; ++i) {
        auto d = access.Install(senders.Get(i), routers.Get(0));
        ip.SetBase(("10.1." + std::to_string(i) + ".0").c_str(), "255.255.255.0");
        ip.Assign(d);
    }
    auto core = bottleneck.Install(routers.Get(0), routers.Get(1));
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("ns3::DualPi2QueueDisc");
    QueueDiscContainer qd = tch.Install(core.Get(0));
    ip.SetBase("10.2.0.0", "255.255.255.0");
    ip.Assign(core);
    for (uint32_t i = 0; i < 2; ++i) {
        auto d = access.Install(routers.Get(1), receivers.Get(i));
        ip.SetBase(("10.3." + std::to_string(i) + ".0").c_str(), "255.255.255.0");
        recvIfs.push_back(ip.Assign(d));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // Both ends of each connection run the same controller, as the branch's own scenarios set
    // them (ConfigurePragueSockets): the receiving end's controller decides how CE is echoed
    // (Prague's receiver, as DCTCP's, echoes each CE change instead of latching ECE until CWR).
    for (auto* nodes : {&senders, &receivers}) {
        nodes->Get(0)->GetObject<TcpL4Protocol>()->SetAttribute("SocketType", TypeIdValue(TcpPrague::GetTypeId()));
        nodes->Get(1)->GetObject<TcpL4Protocol>()->SetAttribute("SocketType", TypeIdValue(TcpCubic::GetTypeId()));
    }

    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t i = 0; i < 2; ++i) {
        uint16_t port = 5000 + i;
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(recvIfs[i].GetAddress(1), port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        auto app = bulk.Install(senders.Get(i));
        app.Start(Seconds(0.0) + MilliSeconds(50 * i));
        app.Stop(duration);
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        auto s = sink.Install(receivers.Get(i));
        s.Start(Seconds(0.0));
        sinks.push_back(DynamicCast<PacketSink>(s.Get(0)));
    }
    auto dual = qd.Get(0)->GetObject<DualPi2QueueDisc>();
    dual->TraceConnectWithoutContext("L4sSojournTime", MakeCallback(&LSojourn));
    dual->TraceConnectWithoutContext("ClassicSojournTime", MakeCallback(&CSojourn));

    std::vector<uint64_t> atWarmup(2, 0);
    Simulator::Schedule(g_warmup, [&]() {
        for (uint32_t i = 0; i < 2; ++i)
            atWarmup[i] = sinks[i]->GetTotalRx();
    });
    Simulator::Stop(duration);
    Simulator::Run();
    double span = (duration - g_warmup).GetSeconds();
    double prague = (sinks[0]->GetTotalRx() - atWarmup[0]) * 8.0 / span / 1e6;
    double cubic = (sinks[1]->GetTotalRx() - atWarmup[1]) * 8.0 / span / 1e6;
    auto st = qd.Get(0)->GetStats();
    std::cout << std::fixed << std::setprecision(2) << "rtt " << rtt << " rate " << rate
              << " prague_mbps " << prague << " cubic_mbps " << cubic << " ratio " << prague / cubic
              << " l_sojourn_ms_p50 " << Pct(g_l, 50) << " p99 " << Pct(g_l, 99) << " c_sojourn_ms_p50 "
              << Pct(g_c, 50) << " p99 " << Pct(g_c, 99) << "\n"
              << st << std::endl;
    Simulator::Destroy();
    return 0;
}
