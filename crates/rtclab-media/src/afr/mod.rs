//! AFR: adaptive frame rate against decoder queuing (dissertation ch. 6; Meng et al., NSDI
//! 2023; spec `shared/specs/afr-hairpin-confucius.md` §2; released code transys-project/afr).
//!
//! - [`controller`]: AFR (Kingman stationary × transient controller) and the baselines.
//! - [`decoder_queue`]: the frame-level decoder-queue simulator the chapter evaluates with
//!   (frames generated at the controller's rate, network delay, a FIFO decoder with a
//!   bounded queue), driving any [`controller::FrameRatePolicy`].
//! - [`clients`]: synthetic client categories (decode-time and network processes calibrated
//!   to the dataset means the spec gives), since the production traces are not public.

pub mod clients;
pub mod controller;
pub mod decoder_queue;
