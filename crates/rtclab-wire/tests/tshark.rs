//! Interop: our packets, written into a pcap, are dissected by tshark (Wireshark's dissector,
//! code nobody here wrote) as RTP/RTCP without malformed-packet or error reports.
//! Skipped with a reason when tshark is not installed (`make test` installs it where it can).
mod samples;
use rtclab_wire::pcap::PcapWriter;
use rtclab_wire::write_compound;
use std::process::Command;

#[test]
fn tshark_dissects_our_packets_cleanly() {
    if Command::new("tshark").arg("--version").output().is_err() {
        eprintln!(
            "SKIPPED: tshark is not installed (Debian package `tshark`); interop not checked"
        );
        return;
    }
    let mut w = PcapWriter::new();
    let mut t = 1_000_000u64;
    let a = ([10, 0, 0, 1], 5004);
    let b = ([10, 0, 0, 2], 5004);
    for p in samples::rtp_packets() {
        w.add_udp(t, a, b, &p.to_bytes().unwrap());
        t += 10_000;
    }
    let rtcp_a = ([10, 0, 0, 1], 5005);
    let rtcp_b = ([10, 0, 0, 2], 5005);
    let compounds = samples::rtcp_packets();
    for c in &compounds {
        w.add_udp(t, rtcp_b, rtcp_a, &write_compound(c).unwrap());
        t += 10_000;
    }
    let dir = std::env::temp_dir().join(format!("rtclab-wire-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("capture.pcap");
    std::fs::write(&path, w.into_bytes()).unwrap();
    let out = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(&path)
        .args(["-d", "udp.port==5004,rtp", "-d", "udp.port==5005,rtcp", "-V"])
        .env("HOME", &dir)
        .output()
        .expect("run tshark");
    if std::env::var("RTCLAB_KEEP_PCAP").is_err() {
        std::fs::remove_dir_all(&dir).ok();
    } else {
        eprintln!("kept {}", path.display());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    for bad in ["Malformed", "[Expert Info (Error", "Bogus", "[Expert Info (Warning"] {
        assert!(!text.contains(bad), "tshark reports {bad:?}:\n{}", excerpt(&text, bad));
    }
    // Every packet was recognised as what we meant it to be.
    let frames = text.matches("\nFrame ").count() + text.starts_with("Frame ") as usize;
    assert_eq!(frames, 5 + compounds.len());
    assert_eq!(text.matches("Real-Time Transport Protocol").count(), 5);
    for want in [
        "Sender Report",
        "Receiver Report",
        "Source description",
        "Generic negative acknowledgement",
        "REMB: max bitrate=1500000",
        "Transport-cc",
        "Packet Status Count: 40",
        "Feedback Packets Count: 3",
        "Header extensions",
    ] {
        assert!(text.contains(want), "tshark output lacks {want:?}:\n{text}");
    }
    // RFC 8888 (FMT 11): Debian 12's Wireshark has no dissector for it and shows the FCI
    // raw; it still checks the RTCP framing of every packet, including that one.
    assert_eq!(text.matches("[RTCP frame length check: OK").count(), compounds.len());
}

fn excerpt(text: &str, needle: &str) -> String {
    let i = text.find(needle).unwrap_or(0);
    let start = text[..i].rfind("\nFrame ").unwrap_or(0);
    text[start..(i + 400).min(text.len())].to_string()
}
