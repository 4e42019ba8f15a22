#![allow(dead_code)]
//! One well-formed instance of every packet type we emit (shared by the tests).
use rtclab_wire::extensions::{abs_send_time_bytes, abs_send_time_from_nanos, transport_seq_bytes};
use rtclab_wire::rtcp::*;
use rtclab_wire::RtpPacket;

pub fn rtp_packets() -> Vec<RtpPacket> {
    (0..5u16)
        .map(|i| {
            let mut p = RtpPacket::new(
                96,
                1000 + i,
                90_000 + 3000 * i as u32,
                0x1234_5678,
                vec![0xAB; 100 + i as usize],
            );
            p.marker = i == 4;
            p.set_extension(
                1,
                abs_send_time_bytes(abs_send_time_from_nanos(i as u64 * 33_000_000)),
            );
            p.set_extension(3, transport_seq_bytes(i));
            p
        })
        .collect()
}

pub fn rtcp_packets() -> Vec<Vec<RtcpPacket>> {
    let block = ReportBlock {
        ssrc: 0x1234_5678,
        fraction_lost: 25,
        cumulative_lost: 17,
        extended_highest_sequence: 66_000,
        jitter: 120,
        last_sr: 0xAABB_CCDD,
        delay_since_last_sr: 6553,
    };
    let arrivals: Vec<Option<i64>> = (0..40)
        .map(|i| if i % 9 == 4 { None } else { Some(5_000_000 + i * 1_300 + (i % 3) * 70_000) })
        .collect();
    vec![
        vec![
            RtcpPacket::SenderReport(SenderReport {
                ssrc: 0x1234_5678,
                ntp_time: 0xE000_0000_8000_0000,
                rtp_timestamp: 90_000,
                packet_count: 500,
                octet_count: 600_000,
                reports: vec![block],
            }),
            // SDES with a CNAME item (kept as an opaque packet).
            RtcpPacket::Other {
                count: 1,
                packet_type: PT_SDES,
                body: sdes_cname(0x1234_5678, "rtclab"),
            },
        ],
        vec![RtcpPacket::ReceiverReport(ReceiverReport {
            ssrc: 0x9999,
            reports: vec![block, block],
        })],
        vec![RtcpPacket::Nack(Nack::from_lost(0x9999, 0x1234_5678, &[1001, 1002, 1005, 1030]))],
        vec![RtcpPacket::Remb(Remb {
            sender_ssrc: 0x9999,
            bitrate_bps: 1_500_000,
            ssrcs: vec![0x1234_5678],
        })],
        vec![RtcpPacket::TransportFeedback(
            TransportFeedback::from_arrivals(0x9999, 0x1234_5678, 1000, 3, &arrivals).unwrap(),
        )],
        vec![RtcpPacket::CongestionControlFeedback(CongestionControlFeedback {
            sender_ssrc: 0x9999,
            blocks: vec![CcfbBlock {
                media_ssrc: 0x1234_5678,
                begin_seq: 1000,
                reports: vec![
                    CcfbReport::received(2000, 0),
                    CcfbReport::default(),
                    CcfbReport::received(500, 3),
                ],
            }],
            report_timestamp: 0x0001_8000,
        })],
    ]
}

fn sdes_cname(ssrc: u32, cname: &str) -> Vec<u8> {
    let mut b = ssrc.to_be_bytes().to_vec();
    b.push(1);
    b.push(cname.len() as u8);
    b.extend_from_slice(cname.as_bytes());
    b.push(0); // end of items
    while !b.len().is_multiple_of(4) {
        b.push(0);
    }
    b
}
