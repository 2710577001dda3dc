// ns-3 model of Braid's single-path baseline (docs/performance.md): one greedy TCP Cubic
// download over the default scenario's server link and path 1, without the tunnel.
//
//   server --server link (1000 Mbit/s, 20 ms RTT, 1000 pkt)-- proxy --path 1 (50 Mbit/s,
//   20 ms RTT, 500 pkt)-- UE
//
// Point-to-point links, a drop-tail FIFO of the scenario's size in every device and no queue
// disc in front of it (Braid's links are one packet-counted FIFO; the packet being sent is
// not in it, as in ns-3's PointToPointNetDevice). A full device queue stops the
// traffic-control layer, which then drops the packet: drop-tail at exactly the buffer size.
// BulkSendApplication on the server, PacketSink on the UE. No pcap, no logging, no
// FlowMonitor: the program is timed (--sample prints a trace, for looking, not timing).
//
// Prints one JSON object: the simulated download completion time (from the application's
// start, i.e. the SYN, to the last byte at the sink), the handshake's part of it (the
// sender's socket ESTABLISHED; Braid's simulated TCP has no handshake) and the drops (at the proxy: path 1's
// downlink). The caller measures the wall time (scripts/bench_vs_ns3.py).
//
// Braid's links count a 14-byte Ethernet header on every frame (sim.framing_bytes); a
// point-to-point frame carries a 2-byte PPP header. Each device's rate is scaled by
// (mtu + 2) / (mtu + framing) so that a full-size data frame takes exactly as long to send
// as in Braid (only ACK frames, on the idle uplink, differ by 12 bytes).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>

using namespace ns3;

namespace
{

uint64_t g_target = 0;
uint64_t g_received = 0;
Time g_done = Time(-1);

void
OnRx(Ptr<const Packet> p, const Address&)
{
    g_received += p->GetSize();
    if (g_done.IsNegative() && g_received >= g_target)
    {
        g_done = Simulator::Now();
        Simulator::Stop(); // nothing after the last byte is part of the download
    }
}

uint64_t g_drops[3] = {0, 0, 0}; // per node: server, proxy, UE

// With no queue disc, a device's full queue stops the traffic-control layer, which drops the
// packet (the device queue itself never overflows).
void
OnTcDrop(uint32_t node, Ptr<const Packet>)
{
    ++g_drops[node];
}

Time g_established = Time(-1);

void
OnState(TcpSocket::TcpStates_t, TcpSocket::TcpStates_t now)
{
    if (now == TcpSocket::ESTABLISHED && g_established.IsNegative())
    {
        g_established = Simulator::Now();
    }
}

// The sender's socket exists once the application has started: follow its state, to know
// when the handshake ends and data starts (Braid's simulated TCP starts there).
void
TraceState(Ptr<BulkSendApplication> app)
{
    app->GetSocket()->TraceConnectWithoutContext("State", MakeCallback(&OnState));
}

uint32_t g_cwnd = 0;
bool g_cwndTraced = false;

void
OnCwnd(uint32_t, uint32_t now)
{
    g_cwnd = now;
}

// --sample: every `every`, the bottleneck queue and the sender's cwnd on stderr.
void
Sample(Ptr<PointToPointNetDevice> dev, Ptr<BulkSendApplication> app, Time every, uint32_t mss)
{
    if (!g_cwndTraced && app->GetSocket())
    {
        g_cwndTraced = true;
        app->GetSocket()->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&OnCwnd));
    }
    std::fprintf(stderr,
                 "t=%.2f queue_pkts=%u cwnd_pkts=%u received=%" PRIu64 "\n",
                 Simulator::Now().GetSeconds(),
                 dev->GetQueue()->GetNPackets(),
                 g_cwnd / mss,
                 g_received);
    Simulator::Schedule(every, &Sample, dev, app, every, mss);
}

// A link's rate as ns-3 must set it: Braid's rate over frames of mtu + framing bytes, in
// frames of mtu + 2 (PPP) bytes.
DataRate
LinkRate(double mbps, uint32_t mtu, uint32_t framing)
{
    double bps = mbps * 1e6 * (mtu + 2.0) / (mtu + framing);
    return DataRate(static_cast<uint64_t>(bps + 0.5));
}

NetDeviceContainer
Link(Ptr<Node> a,
     Ptr<Node> b,
     double mbps,
     double rttMs,
     uint32_t bufferPkts,
     uint32_t mtu,
     uint32_t framing)
{
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(LinkRate(mbps, mtu, framing)));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(std::llround(rttMs * 1e6 / 2.0))));
    p2p.SetQueue("ns3::DropTailQueue<Packet>",
                 "MaxSize",
                 QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, bufferPkts)));
    return p2p.Install(a, b);
}

} // namespace

int
main(int argc, char* argv[])
{
    // Defaults: scenarios/default.toml, path 1 alone.
    uint64_t bytes = 300000000;
    double rateMbps = 50.0;  // paths.0.rate_mbps (and uplink_rate_mbps)
    double rttMs = 20.0;     // paths.0.rtt_ms
    uint32_t buffer = 500;   // paths.0.buffer_pkts (and uplink_buffer_pkts)
    double serverRateMbps = 1000.0; // server_link.rate_mbps
    double serverRttMs = 20.0;      // server_link.rtt_ms
    uint32_t serverBuffer = 1000;   // server_link.buffer_pkts
    uint32_t mss = 1448;            // e2e.mss_bytes
    uint32_t initialWindow = 10;    // e2e.initial_window_pkts
    uint32_t rwnd = 6291456;        // e2e.rwnd_bytes
    double minRtoMs = 200.0;        // e2e.min_rto_ms
    uint32_t delackSegments = 2;    // e2e.delack_segments
    double delackTimeoutMs = 40.0;  // e2e.delack_timeout_ms
    bool hystart = true;            // e2e.hystart
    uint32_t framing = 14;          // sim.framing_bytes
    std::string recovery = "prr";   // Linux's; Braid has none ("classic")
    double maxTimeS = 3600.0;       // sim.max_time_s
    double sampleS = 0;             // 0: no samples (the timed run)

    CommandLine cmd(__FILE__);
    cmd.AddValue("bytes", "download size, bytes", bytes);
    cmd.AddValue("rate", "path rate, Mbit/s (both directions)", rateMbps);
    cmd.AddValue("rtt", "path RTT, ms", rttMs);
    cmd.AddValue("buffer", "path buffer, packets (both directions)", buffer);
    cmd.AddValue("serverRate", "server link rate, Mbit/s", serverRateMbps);
    cmd.AddValue("serverRtt", "server link RTT, ms", serverRttMs);
    cmd.AddValue("serverBuffer", "server link buffer, packets", serverBuffer);
    cmd.AddValue("mss", "TCP payload per segment, bytes", mss);
    cmd.AddValue("iw", "initial window, segments", initialWindow);
    cmd.AddValue("rwnd", "receive (and send) buffer, bytes", rwnd);
    cmd.AddValue("minRto", "minimum RTO, ms", minRtoMs);
    cmd.AddValue("delackSegments", "ACK at least every this many segments", delackSegments);
    cmd.AddValue("delackTimeout", "delayed ACK timeout, ms", delackTimeoutMs);
    cmd.AddValue("hystart", "Cubic's HyStart", hystart);
    cmd.AddValue("framing", "link-layer bytes Braid counts per frame", framing);
    cmd.AddValue("recovery", "fast recovery: prr or classic", recovery);
    cmd.AddValue("maxTime", "give up after this much simulated time, s", maxTimeS);
    cmd.AddValue("sample", "print queue and cwnd every this many s on stderr (0: off)", sampleS);
    cmd.Parse(argc, argv);
    g_target = bytes;

    // IPv4 20 + TCP 20 + timestamp option 12: Braid's TCP_IP_HEADER_BYTES.
    const uint32_t mtu = mss + 52;

    // End-to-end TCP: Linux-like Cubic (HyStart, fast convergence, beta 0.7, C 0.4 are ns-3's
    // defaults), SACK and timestamps on (ns-3's defaults), window scaling for the 6 MiB rwnd.
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpCubic::GetTypeId()));
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(hystart));
    if (recovery == "classic")
    {
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                           TypeIdValue(TcpClassicRecovery::GetTypeId()));
    }
    else if (recovery == "prr")
    {
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                           TypeIdValue(TcpPrrRecovery::GetTypeId()));
    }
    else
    {
        std::fprintf(stderr, "--recovery must be prr or classic\n");
        return 2;
    }
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initialWindow));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rwnd));
    // Braid's sender always has data; a send buffer below cwnd would limit it.
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 * rwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delackSegments));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(delackTimeoutMs)));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(minRtoMs)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));

    NodeContainer nodes;
    nodes.Create(3); // server, proxy (a router here), UE
    Ptr<Node> server = nodes.Get(0);
    Ptr<Node> proxy = nodes.Get(1);
    Ptr<Node> ue = nodes.Get(2);

    NetDeviceContainer serverLink =
        Link(server, proxy, serverRateMbps, serverRttMs, serverBuffer, mtu, framing);
    NetDeviceContainer path = Link(proxy, ue, rateMbps, rttMs, buffer, mtu, framing);

    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.1.0", "255.255.255.0");
    addr.Assign(serverLink);
    addr.SetBase("10.0.2.0", "255.255.255.0");
    Ipv4InterfaceContainer pathIfs = addr.Assign(path);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // Address assignment installs a pfifo_fast queue disc on every device; remove it so that
    // each direction of each link is the device's single drop-tail FIFO.
    TrafficControlHelper tch;
    tch.Uninstall(serverLink);
    tch.Uninstall(path);

    // The bottleneck: path 1's downlink, the proxy's device.
    Ptr<PointToPointNetDevice> bottleneck = DynamicCast<PointToPointNetDevice>(path.Get(0));

    for (uint32_t i = 0; i < nodes.GetN(); ++i)
    {
        nodes.Get(i)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
            "TcDrop",
            MakeBoundCallback(&OnTcDrop, i));
    }

    const uint16_t port = 5001;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApp = sinkHelper.Install(ue);
    sinkApp.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&OnRx));
    sinkApp.Start(Seconds(0));

    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(pathIfs.GetAddress(1), port));
    bulk.SetAttribute("MaxBytes", UintegerValue(bytes));
    bulk.SetAttribute("SendSize", UintegerValue(64 * 1024));
    ApplicationContainer bulkApp = bulk.Install(server);
    const Time start = Seconds(0);
    bulkApp.Start(start);

    if (sampleS > 0)
    {
        Simulator::Schedule(Seconds(sampleS),
                            &Sample,
                            bottleneck,
                            DynamicCast<BulkSendApplication>(bulkApp.Get(0)),
                            Seconds(sampleS),
                            mss);
    }
    Simulator::Schedule(start + NanoSeconds(1),
                        &TraceState,
                        DynamicCast<BulkSendApplication>(bulkApp.Get(0)));
    Simulator::Stop(Seconds(maxTimeS));
    Simulator::Run();
    Simulator::Destroy();

    if (g_done.IsNegative())
    {
        std::fprintf(stderr,
                     "incomplete: %" PRIu64 " of %" PRIu64 " bytes after %.0f s\n",
                     g_received,
                     bytes,
                     maxTimeS);
        return 1;
    }
    std::printf("{\"dlct_s\": %.6f, \"handshake_s\": %.6f, \"bytes\": %" PRIu64 ", \"proxy_drops\": %" PRIu64
                ", \"drops\": %" PRIu64 ", \"recovery\": \"%s\"}\n",
                (g_done - start).GetSeconds(),
                (g_established - start).GetSeconds(),
                g_received,
                g_drops[1],
                g_drops[0] + g_drops[1] + g_drops[2],
                recovery.c_str());
    return 0;
}
