//! Resolution adaptation under libwebrtc's `MAINTAIN_FRAMERATE` degradation preference: which
//! picture size the source delivers after each "smaller" or "larger" request.
//!
//! Follows WebRTC `call/adaptation/video_stream_adapter.cc` (the restrictions) and
//! `media/base/video_adapter.cc` (the size the source picks for them):
//!
//! - Down (`DecreaseResolution`): the wanted maximum is 3/5 of the current picture's pixels
//!   (`GetLowerResolutionThan`), refused when that is under the encoder's minimum, 320 × 180
//!   (`kDefaultMinPixelsPerFrame`), or not below the current restriction.
//! - Up (`IncreaseResolution`): target 5/3 of the current pixels (`GetHigherResolutionThan`),
//!   maximum 12/5 of that target (`GetIncreasedMaxPixelsWanted`); the last step up lifts every
//!   restriction.
//! - The source scales its native picture by the fraction, among 1, 3/4, 1/2, 3/8, 1/4, ...
//!   (alternately × 3/4 and × 2/3), whose pixel count is closest to the target without passing
//!   the maximum (`VideoAdapter`'s `FindScale`).
//!
//! Also here: `GetMaxDefaultVideoBitrateKbps` (WebRTC `video/config/encoder_stream_factory.cc`),
//! the stream's maximum bitrate for a picture size.

use rtclab_core::Rate;

/// `kDefaultMinPixelsPerFrame`: the encoder's smallest picture for quality scaling.
pub const MIN_PIXELS_PER_FRAME: u64 = 320 * 180;

/// libwebrtc's default maximum bitrate of a stream of `width` × `height` (not screen share).
pub fn default_max_bitrate(width: u32, height: u32) -> Rate {
    let px = u64::from(width) * u64::from(height);
    Rate::from_kbps(if px <= 320 * 240 {
        600
    } else if px <= 640 * 480 {
        1_700
    } else if px <= 960 * 540 {
        2_000
    } else {
        2_500
    })
}

/// A fraction the source scales its native picture by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Scale {
    num: u64,
    den: u64,
}

impl Scale {
    fn pixels(self, native: u64) -> u64 {
        native * self.num * self.num / (self.den * self.den)
    }
}

/// `VideoAdapter::FindScale`: the scale closest to `target` pixels, at most `max`.
fn find_scale(native: u64, target: u64, max: u64) -> Scale {
    let one = Scale { num: 1, den: 1 };
    if target >= native {
        return one;
    }
    let (mut current, mut best) = (one, one);
    let mut best_diff = if native <= max { native.abs_diff(target) } else { u64::MAX };
    while current.pixels(native) > target {
        current = if current.num % 3 == 0 && current.den % 2 == 0 {
            Scale { num: current.num / 3, den: current.den / 2 }
        } else {
            Scale { num: current.num * 3, den: current.den * 4 }
        };
        let px = current.pixels(native);
        if px <= max && px.abs_diff(target) < best_diff {
            best_diff = px.abs_diff(target);
            best = current;
        }
    }
    best
}

#[derive(Clone, Debug)]
pub struct ResolutionAdapter {
    native: (u32, u32),
    /// Steps down in force (`VideoAdaptationCounters::resolution_adaptations`).
    steps: u32,
    /// The restriction (target pixels, max pixels); `None` = unrestricted.
    wants: Option<(u64, u64)>,
    current: (u32, u32),
}

impl ResolutionAdapter {
    pub fn new(width: u32, height: u32) -> Self {
        ResolutionAdapter {
            native: (width, height),
            steps: 0,
            wants: None,
            current: (width, height),
        }
    }

    /// The picture size the source delivers now.
    pub fn size(&self) -> (u32, u32) {
        self.current
    }

    /// Steps down in force.
    pub fn steps(&self) -> u32 {
        self.steps
    }

    fn pixels(&self) -> u64 {
        u64::from(self.current.0) * u64::from(self.current.1)
    }

    fn apply(&mut self) {
        let (w, h) = self.native;
        let native = u64::from(w) * u64::from(h);
        let s = match self.wants {
            None => Scale { num: 1, den: 1 },
            Some((target, max)) => find_scale(native, target, max),
        };
        self.current =
            ((u64::from(w) * s.num / s.den) as u32, (u64::from(h) * s.num / s.den) as u32);
    }

    /// A smaller picture; false where the limit is reached (nothing changes).
    pub fn down(&mut self) -> bool {
        let target = self.pixels() * 3 / 5;
        let max_now = self.wants.map_or(u64::MAX, |(_, m)| m);
        if target >= max_now || target < MIN_PIXELS_PER_FRAME {
            return false;
        }
        self.wants = Some((target, target));
        self.steps += 1;
        self.apply();
        true
    }

    /// A larger picture; false where there is no step down to undo.
    pub fn up(&mut self) -> bool {
        if self.steps == 0 {
            return false;
        }
        if self.steps == 1 {
            self.wants = None;
        } else {
            let target = self.pixels() * 5 / 3;
            let max = target * 12 / 5;
            if max <= self.wants.map_or(u64::MAX, |(_, m)| m) {
                return false;
            }
            self.wants = Some((target, max));
        }
        self.steps -= 1;
        self.apply();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vga_steps_down_to_qvga_and_back() {
        let mut a = ResolutionAdapter::new(640, 480);
        assert!(!a.up());
        assert!(a.down());
        assert_eq!(a.size(), (480, 360));
        assert!(a.down());
        assert_eq!(a.size(), (320, 240));
        // 3/5 of 320x240 is under 320x180: the limit.
        assert!(!a.down());
        assert_eq!((a.size(), a.steps()), ((320, 240), 2));
        assert!(a.up());
        assert_eq!(a.size(), (480, 360));
        assert!(a.up());
        assert_eq!(a.size(), (640, 480));
        assert!(!a.up());
    }

    #[test]
    fn hd_follows_libwebrtcs_series() {
        // VideoAdapter's comment: 1280x720 → 960x540 → 640x360 → 480x270 → 320x180.
        let mut a = ResolutionAdapter::new(1280, 720);
        let mut seen = vec![];
        while a.down() {
            seen.push(a.size());
        }
        assert_eq!(seen, vec![(960, 540), (640, 360), (480, 270), (320, 180)]);
        a.up();
        assert_eq!(a.size(), (480, 270));
    }

    #[test]
    fn the_maximum_bitrate_follows_the_picture() {
        assert_eq!(default_max_bitrate(640, 480), Rate::from_kbps(1_700));
        assert_eq!(default_max_bitrate(480, 360), Rate::from_kbps(1_700));
        assert_eq!(default_max_bitrate(320, 240), Rate::from_kbps(600));
        assert_eq!(default_max_bitrate(1280, 720), Rate::from_kbps(2_500));
    }
}
