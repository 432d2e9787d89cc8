//! Waiting for a group's work with a deadline: the polling loop of [`super::NcclGroup::wait`],
//! kept apart from NCCL and CUDA so that its rules are tested on the CPU.
//!
//! Each pass asks every rank once ([`Probe`]); the wait ends when every rank is done, at the
//! first pass in which a rank failed, or at the deadline. A failure of a device (its CUDA
//! context reports an error) is named before an NCCL error of another rank seen in the same
//! pass: when one GPU dies, its peers' communicators may report errors too, and the GPU to
//! name is the one that died. Between passes the loop yields the CPU for the first
//! [`SPIN`] (as the driver's own synchronization spins: an operation's milliseconds end
//! within microseconds of the GPUs), then sleeps for growing intervals up to [`MAX_SLEEP`],
//! so a long wait (a stuck group running to its deadline) costs little CPU.

use std::time::{Duration, Instant};

/// How long the loop only yields between passes.
pub(crate) const SPIN: Duration = Duration::from_millis(20);

/// The longest sleep between two passes (after [`SPIN`]).
pub(crate) const MAX_SLEEP: Duration = Duration::from_millis(1);

/// What one rank says when asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    /// Its work so far has finished.
    Done,
    /// Its work is still running.
    Pending,
    /// Its device reported an error (a dead context, a faulting kernel).
    DeviceFailed(String),
    /// Its communicator reported an asynchronous NCCL error.
    CommFailed(String),
}

/// How a wait ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Every rank is done.
    Done,
    /// A rank failed: `rank`, and what it said.
    Failed {
        /// The rank (a device failure first, else the first NCCL failure, in rank order).
        rank: usize,
        /// The error text.
        reason: String,
    },
    /// The deadline passed with `pending` ranks still running (in rank order).
    TimedOut {
        /// How long the wait lasted.
        waited: Duration,
        /// The ranks not done at the last pass.
        pending: Vec<usize>,
    },
}

/// Asks `probe(r)` for every rank `r < ranks`, pass after pass, until all are done, one
/// failed, or `timeout` has passed since the call (at least one pass runs, however short the
/// timeout).
pub(crate) fn poll(
    ranks: usize,
    timeout: Duration,
    mut probe: impl FnMut(usize) -> Probe,
) -> Outcome {
    let start = Instant::now();
    let mut sleep = Duration::from_micros(10);
    loop {
        let mut pending = Vec::new();
        let mut device: Option<(usize, String)> = None;
        let mut comm: Option<(usize, String)> = None;
        for r in 0..ranks {
            match probe(r) {
                Probe::Done => {}
                Probe::Pending => pending.push(r),
                Probe::DeviceFailed(e) => {
                    device.get_or_insert((r, e));
                }
                Probe::CommFailed(e) => {
                    comm.get_or_insert((r, e));
                }
            }
        }
        if let Some((rank, reason)) = device.or(comm) {
            return Outcome::Failed { rank, reason };
        }
        if pending.is_empty() {
            return Outcome::Done;
        }
        let waited = start.elapsed();
        if waited >= timeout {
            return Outcome::TimedOut { waited, pending };
        }
        if waited < SPIN {
            std::thread::yield_now();
        } else {
            std::thread::sleep(sleep.min(timeout - waited));
            sleep = (sleep * 2).min(MAX_SLEEP);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_done_returns_at_once() {
        let mut asked = vec![0; 3];
        let out = poll(3, Duration::from_secs(60), |r| {
            asked[r] += 1;
            Probe::Done
        });
        assert_eq!(out, Outcome::Done);
        assert_eq!(asked, vec![1, 1, 1]);
    }

    #[test]
    fn pending_ranks_finish_later() {
        let mut calls = 0;
        let out = poll(2, Duration::from_secs(60), |r| {
            calls += 1;
            if r == 1 && calls < 200 {
                Probe::Pending
            } else {
                Probe::Done
            }
        });
        assert_eq!(out, Outcome::Done);
        assert!(calls >= 200, "{calls}");
    }

    /// The dying GPU is named, not its peer whose communicator complains in the same pass;
    /// a failure ends the wait although another rank is still pending.
    #[test]
    fn a_device_failure_is_named_before_a_peer_nccl_error() {
        let mut pass = 0;
        let out = poll(3, Duration::from_secs(60), |r| {
            if r == 0 {
                pass += 1;
            }
            match (r, pass) {
                (_, p) if p < 5 => Probe::Pending,
                (0, _) => Probe::CommFailed("ncclRemoteError".into()),
                (1, _) => Probe::Pending,
                (2, _) => Probe::DeviceFailed("CUDA_ERROR_ILLEGAL_INSTRUCTION".into()),
                _ => unreachable!(),
            }
        });
        assert_eq!(
            out,
            Outcome::Failed {
                rank: 2,
                reason: "CUDA_ERROR_ILLEGAL_INSTRUCTION".into()
            }
        );
        // An NCCL error alone is reported for its rank.
        let out = poll(2, Duration::from_secs(60), |r| {
            if r == 1 {
                Probe::CommFailed("ncclSystemError".into())
            } else {
                Probe::Pending
            }
        });
        assert!(matches!(out, Outcome::Failed { rank: 1, .. }), "{out:?}");
    }

    /// A rank that never finishes: the wait ends at the deadline (not long after), naming the
    /// pending ranks.
    #[test]
    fn the_deadline_ends_a_wait_for_a_stuck_rank() {
        let timeout = Duration::from_millis(60);
        let start = Instant::now();
        let out = poll(3, timeout, |r| {
            if r == 1 {
                Probe::Pending
            } else {
                Probe::Done
            }
        });
        let took = start.elapsed();
        match out {
            Outcome::TimedOut { waited, pending } => {
                assert_eq!(pending, vec![1]);
                assert!(waited >= timeout, "{waited:?}");
            }
            other => panic!("{other:?}"),
        }
        assert!(took >= timeout && took < Duration::from_secs(2), "{took:?}");
        // A zero deadline still asks once: finished work is not a timeout.
        assert_eq!(poll(2, Duration::ZERO, |_| Probe::Done), Outcome::Done);
        assert!(matches!(
            poll(2, Duration::ZERO, |_| Probe::Pending),
            Outcome::TimedOut { .. }
        ));
    }
}
