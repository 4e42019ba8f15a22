// Command pion-peer is one end of a pion (https://github.com/pion/webrtc) video call for
// `rtclab realclient pion`: the sender runs pion's send-side GCC
// (github.com/pion/interceptor/pkg/gcc: the paper's delay-based estimator moved to the sender,
// arrival groups -> Kalman filter -> adaptive threshold -> AIMD; a loss-based controller; a
// leaky-bucket pacer at 1.5x the target) fed by transport-wide
// congestion control feedback (TWCC) from the receiver.
//
// It is run inside the emulator's two namespaces by `rtclab emu shell`: the answerer (receiver)
// as the shell's --receiver, the offerer (sender) as its command. Signalling is two JSON files,
// offer.json and answer.json ({"sdp", "type"}), in a folder both namespaces see; ICE uses host
// candidates only (no STUN, no mDNS).
//
// pion has no video encoder, so the sender is an ideal rate-following one: every 1/30 s it
// writes a VP8 sample of target/30 bytes (the estimator's current target) of random payload,
// and a key frame of 3x that every 3 s. Every 200 ms it logs, on the emulation's clock
// (RTCLAB_START_MONOTONIC_NS, CLOCK_MONOTONIC), the estimator's target, its delay- and
// loss-based parts, the detector's state and usage, its delay estimate m and adaptive
// threshold (ms), and the RTP payload bytes sent so far.
//
//	pion-peer answer DIR
//	pion-peer offer DIR -duration 59
package main

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/interceptor/pkg/cc"
	"github.com/pion/interceptor/pkg/gcc"
	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"
	"golang.org/x/sys/unix"
)

const (
	fps           = 30
	keyFrameEvery = 3 * time.Second
	logEvery      = 200 * time.Millisecond
	// libwebrtc's default start rate; pion's own default is 10 kbit/s.
	initialBitrate = 300_000
	minBitrate     = 50_000
	maxBitrate     = 5_000_000
)

// keyFrameFactor is a key frame's size in frames: 3, or RTCLAB_PION_KEY_FRAME_FACTOR (1-20; a
// cause experiment: 1 sends no bursts).
var keyFrameFactor = func() int {
	if v := os.Getenv("RTCLAB_PION_KEY_FRAME_FACTOR"); v != "" {
		var k int
		if _, err := fmt.Sscanf(v, "%d", &k); err != nil || k < 1 || k > 20 {
			fmt.Fprintf(os.Stderr, "RTCLAB_PION_KEY_FRAME_FACTOR=%q is not a whole number in 1..20\n", v)
			os.Exit(2)
		}
		return k
	}
	return 3
}()

// emulationTime is seconds since the emulation started (CLOCK_MONOTONIC, like the emulator).
func emulationTime() float64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	var start int64
	fmt.Sscan(os.Getenv("RTCLAB_START_MONOTONIC_NS"), &start)
	return float64(ts.Nano()-start) / 1e9
}

func waitFor(path string, timeout time.Duration) (webrtc.SessionDescription, error) {
	var sd webrtc.SessionDescription
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if raw, err := os.ReadFile(path); err == nil {
			if json.Unmarshal(raw, &sd) == nil {
				return sd, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return sd, fmt.Errorf("no %s after %v: did the other peer start?", filepath.Base(path), timeout)
}

func writeAtomically(path string, sd *webrtc.SessionDescription) error {
	raw, err := json.Marshal(map[string]string{"sdp": sd.SDP, "type": sd.Type.String()})
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// publish sets sdp (made with error err) as the local description, waits for ICE gathering
// (no trickle: the file carries every candidate) and writes the description to path.
func publish(pc *webrtc.PeerConnection, sdp webrtc.SessionDescription, err error, path string) error {
	if err != nil {
		return err
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(sdp); err != nil {
		return err
	}
	<-gathered
	return writeAtomically(path, pc.LocalDescription())
}

// newPeer makes a peer connection with host-only UDP/IPv4 ICE; the sender's registry carries
// the GCC interceptor and the TWCC header extension, the receiver's the TWCC feedback sender
// (both get pion's defaults: NACK, RTCP reports, stats).
func newPeer(sender bool) (*webrtc.PeerConnection, chan cc.BandwidthEstimator, error) {
	m := &webrtc.MediaEngine{}
	if err := m.RegisterDefaultCodecs(); err != nil {
		return nil, nil, err
	}
	reg := &interceptor.Registry{}
	estimators := make(chan cc.BandwidthEstimator, 1)
	if sender {
		ctl, err := cc.NewInterceptor(func() (cc.BandwidthEstimator, error) {
			return gcc.NewSendSideBWE(gcc.SendSideBWEInitialBitrate(initialBitrate),
				gcc.SendSideBWEMinBitrate(minBitrate), gcc.SendSideBWEMaxBitrate(maxBitrate))
		})
		if err != nil {
			return nil, nil, err
		}
		ctl.OnNewPeerConnection(func(_ string, e cc.BandwidthEstimator) { estimators <- e })
		reg.Add(ctl)
		if err := webrtc.ConfigureTWCCHeaderExtensionSender(m, reg); err != nil {
			return nil, nil, err
		}
	}
	if err := webrtc.RegisterDefaultInterceptors(m, reg); err != nil {
		return nil, nil, err
	}
	s := webrtc.SettingEngine{}
	s.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	s.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	api := webrtc.NewAPI(webrtc.WithMediaEngine(m), webrtc.WithInterceptorRegistry(reg), webrtc.WithSettingEngine(s))
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	return pc, estimators, err
}

func offer(dir string, duration time.Duration, logPath string) error {
	pc, estimators, err := newPeer(true)
	if err != nil {
		return err
	}
	defer pc.Close()
	track, err := webrtc.NewTrackLocalStaticSample(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8}, "video", "rtclab")
	if err != nil {
		return err
	}
	rtpSender, err := pc.AddTrack(track)
	if err != nil {
		return err
	}
	go func() { // RTCP must be read for the interceptors (GCC among them) to see it
		buf := make([]byte, 1500)
		for {
			if _, _, err := rtpSender.Read(buf); err != nil {
				return
			}
		}
	}()
	connected := make(chan struct{})
	pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		if s == webrtc.PeerConnectionStateConnected {
			close(connected)
		}
	})
	sdp, err := pc.CreateOffer(nil)
	if err := publish(pc, sdp, err, filepath.Join(dir, "offer.json")); err != nil {
		return err
	}
	answer, err := waitFor(filepath.Join(dir, "answer.json"), 30*time.Second)
	if err != nil {
		return err
	}
	if err := pc.SetRemoteDescription(answer); err != nil {
		return err
	}
	estimator := <-estimators
	select {
	case <-connected:
	case <-time.After(20 * time.Second):
		return errors.New("the call did not connect within 20 s")
	}

	rows := []string{"time_s,target_bps,bytes_sent,delay_target_bps,loss_target_bps,average_loss,usage,state," +
		"delay_estimate_ms,delay_threshold_ms"}
	frame := time.NewTicker(time.Second / fps)
	defer frame.Stop()
	logTick := time.NewTicker(logEvery)
	defer logTick.Stop()
	end := time.After(duration)
	start := time.Now()
	lastKey := time.Time{}
	var sent int64
	for {
		select {
		case now := <-frame.C:
			size := estimator.GetTargetBitrate() / 8 / fps
			if now.Sub(lastKey) >= keyFrameEvery {
				size *= keyFrameFactor
				lastKey = now
			}
			payload := make([]byte, size)
			_, _ = rand.Read(payload)
			if err := track.WriteSample(media.Sample{Data: payload, Duration: time.Second / fps}); err != nil {
				return err
			}
			sent += int64(size)
		case <-logTick.C:
			st := estimator.GetStats()
			rows = append(rows, fmt.Sprintf("%.3f,%d,%d,%v,%v,%v,%v,%v,%v,%v", emulationTime(), estimator.GetTargetBitrate(), sent,
				st["delayTargetBitrate"], st["lossTargetBitrate"], st["averageLoss"], st["usage"], st["state"],
				st["delayEstimate"], st["delayThreshold"]))
		case <-end:
			fmt.Fprintf(os.Stderr, "pion sender: %d bytes of media in %.1f s\n", sent, time.Since(start).Seconds())
			// let the pacer drain before the connection closes under it
			time.Sleep(500 * time.Millisecond)
			return os.WriteFile(logPath, []byte(strings.Join(rows, "\n")+"\n"), 0o644)
		}
	}
}

func answer(dir string) error {
	pc, _, err := newPeer(false)
	if err != nil {
		return err
	}
	defer pc.Close()
	pc.OnTrack(func(t *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		go func() {
			for {
				if _, _, err := t.ReadRTP(); err != nil {
					return
				}
			}
		}()
	})
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	o, err := waitFor(filepath.Join(dir, "offer.json"), 60*time.Second)
	if err != nil {
		return err
	}
	if err := pc.SetRemoteDescription(o); err != nil {
		return err
	}
	sdp, err := pc.CreateAnswer(nil)
	if err := publish(pc, sdp, err, filepath.Join(dir, "answer.json")); err != nil {
		return err
	}
	<-stop
	return nil
}

func main() {
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: pion-peer offer|answer DIR [-duration SECONDS] [-log FILE]")
	}
	if len(os.Args) < 3 || (os.Args[1] != "offer" && os.Args[1] != "answer") {
		flag.Usage()
		os.Exit(2)
	}
	role, dir := os.Args[1], os.Args[2]
	fs := flag.NewFlagSet(role, flag.ExitOnError)
	seconds := fs.Float64("duration", 30, "seconds of media (offer)")
	logPath := fs.String("log", "", "the sender's log (default DIR/sender.csv)")
	_ = fs.Parse(os.Args[3:])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "pion-peer:", err)
		os.Exit(1)
	}
	var err error
	if role == "offer" {
		if *logPath == "" {
			*logPath = filepath.Join(dir, "sender.csv")
		}
		err = offer(dir, time.Duration(*seconds*float64(time.Second)), *logPath)
	} else {
		err = answer(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pion-peer:", err)
		os.Exit(1)
	}
}
