//! What elements report about the packets they hold: why one was lost (`DropReason`) and how
//! much is queued (`Backlog`). Its own file, so that the element interface and the queue
//! disciplines' trait import it and not each other.

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DropReason {
    QueueOverflow,
    RandomLoss,
    BurstLoss,
    /// An active queue management decision (a drop, or a CE mark where the packet allows).
    Aqm,
    /// A wireless link gave up on a frame after its retries (collisions).
    RetryLimit,
}

impl DropReason {
    pub const ALL: [DropReason; 5] = [
        DropReason::QueueOverflow,
        DropReason::RandomLoss,
        DropReason::BurstLoss,
        DropReason::Aqm,
        DropReason::RetryLimit,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::QueueOverflow => "queue_overflow",
            DropReason::RandomLoss => "random_loss",
            DropReason::BurstLoss => "burst_loss",
            DropReason::Aqm => "aqm",
            DropReason::RetryLimit => "retry_limit",
        }
    }
    pub fn index(self) -> usize {
        self as usize
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub packets: u32,
    pub bytes: u64,
}

impl std::ops::Add for Backlog {
    type Output = Backlog;
    fn add(self, o: Backlog) -> Backlog {
        Backlog { packets: self.packets + o.packets, bytes: self.bytes + o.bytes }
    }
}
