//! Kernel TCP through the emulator (needs root and /dev/net/tun; reports "skipped" otherwise,
//! as on a developer machine without privileges — CI runs as root).

fn scenario(secs: u32) -> rtclab_scenario::Scenario {
    let text = format!(
        r#"
name = "emu-two-cubic"
duration = "{secs}s"
[link]
capacity = "20Mbps"
queue = {{ limit = "1bdp", bdp_rtt = "40ms" }}
[metrics]
warmup = "2s"
[[flows]]
kind = "tcp"
cc = "cubic"
rtt = "40ms"
count = 2
"#
    );
    rtclab_scenario::from_toml_str(&text, std::path::Path::new(".")).expect("valid scenario")
}

/// The tests check this process's namespaces, so they run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn privileged() -> bool {
    match rtclab_emu::netns::check_requirements() {
        Ok(()) => true,
        Err(e) => {
            eprintln!("skipped: {e}");
            false
        }
    }
}

/// Two kernel CUBIC flows fill a 20 Mbit/s emulated link and share it; the run leaves no
/// namespace behind.
#[test]
fn two_kernel_cubic_flows_share_the_link_and_leave_nothing_behind() {
    if !privileged() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let emu = rtclab_emu::Emulation::start(scenario(8), 1, None).expect("start");
    assert_eq!(rtclab_emu::netns::own_namespaces().len(), 2);
    let s = emu.finish().expect("finish").summary;
    let u = s["link"]["utilization"].as_f64().unwrap();
    let shares: Vec<f64> =
        s["flows"].as_array().unwrap().iter().map(|f| f["share"].as_f64().unwrap()).collect();
    println!(
        "emu: utilization {u:.3}, shares {shares:?}, release error {}",
        s["emulator"]["release_error_us"]
    );
    assert_eq!(s["engine"], "emu");
    assert!(u > 0.8, "{u}");
    assert!(shares.iter().all(|x| *x > 0.2), "{shares:?}");
    assert!(rtclab_emu::netns::own_namespaces().is_empty());
}

/// Stopping early and dropping without `finish` also removes everything.
#[test]
fn dropping_a_running_emulation_cleans_up() {
    if !privileged() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let emu = rtclab_emu::Emulation::start(scenario(30), 2, None).expect("start");
    std::thread::sleep(std::time::Duration::from_millis(500));
    emu.stop();
    drop(emu);
    assert!(rtclab_emu::netns::own_namespaces().is_empty());
}

/// A set-up error after the namespaces exist (here: the capture cannot be written) removes
/// them again and names the problem.
#[test]
fn a_failed_start_leaves_nothing_behind() {
    if !privileged() {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let capture = rtclab_emu::CaptureSpec {
        path: std::path::PathBuf::from("/nonexistent-dir/for/capture.pcap"),
        snaplen: 0,
        sent: false,
    };
    let err = match rtclab_emu::Emulation::start(scenario(5), 3, Some(capture)) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("start must fail"),
    };
    assert!(err.contains("capture") && err.contains("nonexistent-dir"), "{err}");
    assert!(rtclab_emu::netns::own_namespaces().is_empty());
}
