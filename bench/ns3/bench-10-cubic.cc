// The foundation benchmark in ns-3, for the side-by-side with `rtclab run bench-10-cubic`
// (docs/benchmarks.md, `make bench-ns3`): ten TCP CUBIC flows (SACK, delayed ACKs every
// second segment, 1448-byte segments = 1500-byte packets) over one 100 Mbit/s bottleneck with
// a 1-BDP (250,000-byte) drop-tail queue and no qdisc, 20 ms round trip, 60 simulated
// seconds. Prints one JSON line: delivered data packets (received bytes / 1448), the
// simulation loop's wall time, and the bottleneck's utilization.
//
// Written for this benchmark against ns-3.44's public API (the PyPI `ns3` wheel's headers
// and libraries); the dumbbell follows ns-3's examples/tcp (tcp-variants-comparison.cc).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdio>

using namespace ns3;

int
main(int argc, char* argv[])
{
    uint32_t flows = 10;
    double seconds = 60.0;
    CommandLine cmd;
    cmd.AddValue("flows", "number of CUBIC flows", flows);
    cmd.AddValue("seconds", "simulated seconds", seconds);
    cmd.Parse(argc, argv);

    const uint32_t segment = 1448;
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::TcpCubic"));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    // Windows large enough for the path (the default 128 KB buffers would cap each flow).
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));

    NodeContainer left;
    left.Create(flows);
    NodeContainer right;
    right.Create(flows);
    NodeContainer routers;
    routers.Create(2);

    // 20 ms round trip: 4 ms + 1 ms + 5 ms each way.
    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    access.SetChannelAttribute("Delay", StringValue("4ms"));
    PointToPointHelper egress;
    egress.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    egress.SetChannelAttribute("Delay", StringValue("5ms"));
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
    bottleneck.SetChannelAttribute("Delay", StringValue("1ms"));
    bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("250000B"));

    InternetStackHelper stack;
    stack.InstallAll();

    NetDeviceContainer core = bottleneck.Install(routers.Get(0), routers.Get(1));
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.0");
    addr.Assign(core);
    // No qdisc on the bottleneck (Assign installs one): the device's drop-tail queue is the
    // only queue, as in rtclab's scenario.
    TrafficControlHelper tch;
    tch.Uninstall(core);
    std::vector<Ipv4Address> sinks;
    for (uint32_t i = 0; i < flows; i++)
    {
        NetDeviceContainer l = access.Install(left.Get(i), routers.Get(0));
        NetDeviceContainer r = egress.Install(routers.Get(1), right.Get(i));
        addr.NewNetwork();
        addr.Assign(l);
        addr.NewNetwork();
        Ipv4InterfaceContainer ri = addr.Assign(r);
        sinks.push_back(ri.GetAddress(1));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    const uint16_t port = 5000;
    ApplicationContainer sinkApps;
    ApplicationContainer sendApps;
    for (uint32_t i = 0; i < flows; i++)
    {
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        sinkApps.Add(sink.Install(right.Get(i)));
        BulkSendHelper send("ns3::TcpSocketFactory", InetSocketAddress(sinks[i], port));
        send.SetAttribute("MaxBytes", UintegerValue(0));
        send.SetAttribute("SendSize", UintegerValue(segment));
        sendApps.Add(send.Install(left.Get(i)));
    }
    sinkApps.Start(Seconds(0.0));
    sendApps.Start(Seconds(0.0));
    sendApps.Stop(Seconds(seconds));

    Simulator::Stop(Seconds(seconds));
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    uint64_t bytes = 0;
    for (uint32_t i = 0; i < sinkApps.GetN(); i++)
    {
        bytes += DynamicCast<PacketSink>(sinkApps.Get(i))->GetTotalRx();
    }
    Simulator::Destroy();
    double packets = double(bytes) / segment;
    std::printf("{\"delivered_packets\": %.0f, \"loop_wall_s\": %.3f, \"delivered_packets_per_wall_second\": %.0f, "
                "\"utilization\": %.4f, \"ns3_version\": \"3.44\"}\n",
                packets, wall, packets / wall, bytes * 8.0 / seconds / 100e6);
    return 0;
}
