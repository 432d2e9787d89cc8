//! Keeping the CPU pool's workers awake through one operation.
//!
//! A key switching on the CPU is a sequence of short parallel regions (ModUp digits, NTTs, the
//! inner product, two ModDowns) separated by short serial steps. Between regions rayon's idle
//! workers go to sleep after a few rounds of searching, and the next region pays a futex wake-up
//! per worker — tens of microseconds, far more when the host steals CPU time from this VM.
//! OpenMP (OpenFHE's runtime) spins instead. [`run_awake`] gives rayon the same behaviour for the
//! length of one operation: the pool's other workers poll for work ([`rayon::yield_now`]) until
//! the operation returns, so every region's stolen halves start at once.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a poller keeps polling without finding work before it leaves the operation to
/// rayon's ordinary idling (a serial stretch that long pays for a wake-up).
const IDLE_LIMIT: Duration = Duration::from_micros(200);

thread_local! {
    /// This thread is running an operation under [`run_awake`].
    static AWAKE: Cell<bool> = const { Cell::new(false) };
}

/// The process-wide setting of [`set_cpu_spin`] (on by default).
static SPIN: AtomicBool = AtomicBool::new(true);

/// Sets whether CPU operations keep the rayon pool's idle workers polling for work between
/// their parallel regions (on by default, process-wide). Polling saves a futex wake-up per
/// worker and region (tens of microseconds a key switching on a busy host) at the cost of
/// up to 200 µs of spinning per worker after each operation; turn it off when the CPU is
/// shared with other work that matters more than Rhea's latency. Results never depend on it:
/// only which thread runs a job changes.
///
/// ```
/// rhea::backend::set_cpu_spin(false);
/// assert!(!rhea::backend::cpu_spin());
/// rhea::backend::set_cpu_spin(true);
/// ```
pub fn set_cpu_spin(on: bool) {
    SPIN.store(on, Ordering::Relaxed);
}

/// Whether CPU operations keep idle workers polling ([`set_cpu_spin`]).
pub fn cpu_spin() -> bool {
    SPIN.load(Ordering::Relaxed)
}

/// Runs `f` on the rayon pool while the pool's other workers poll for its parallel work instead
/// of sleeping between its regions; returns `f`'s result. Nested calls, one-thread pools and
/// [`set_cpu_spin`]`(false)` just run `f` inside a scope.
///
/// A poller leaves when `f` returns, when it has found no work for [`IDLE_LIMIT`], or at once
/// when it lands on the thread running `f` (which picks queued jobs while it waits for a join:
/// polling there would delay `f`). Results are unaffected: only who runs a job changes.
pub(crate) fn run_awake<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    let pollers = rayon::current_num_threads().saturating_sub(1);
    if pollers == 0 || !cpu_spin() || AWAKE.with(Cell::get) {
        return rayon::scope(|_| f());
    }
    let done = AtomicBool::new(false);
    rayon::scope(|s| {
        let owner = rayon::current_thread_index();
        for _ in 0..pollers {
            let done = &done;
            s.spawn(move |_| {
                if rayon::current_thread_index() == owner {
                    return;
                }
                let mut last_work = Instant::now();
                while !done.load(Ordering::Acquire) {
                    match rayon::yield_now() {
                        Some(rayon::Yield::Executed) => last_work = Instant::now(),
                        _ => {
                            if last_work.elapsed() > IDLE_LIMIT {
                                return;
                            }
                            std::hint::spin_loop();
                        }
                    }
                }
            });
        }
        AWAKE.with(|a| a.set(true));
        let r = f();
        AWAKE.with(|a| a.set(false));
        done.store(true, Ordering::Release);
        r
    })
}

/// Runs `f` with [`run_awake`] when `device` is the CPU, directly otherwise (a GPU operation only
/// queues kernels). What the scheme evaluators wrap each operation in.
pub(crate) fn on_pool<R: Send>(device: super::Device, f: impl FnOnce() -> R + Send) -> R {
    if device == super::Device::Cpu {
        run_awake(f)
    } else {
        f()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    #[test]
    fn results_are_those_of_the_closure() {
        let v: Vec<u64> = (0..100_000u64).collect();
        let want: u64 = v.iter().map(|x| x * x % 97).sum();
        for _ in 0..20 {
            let got = run_awake(|| v.par_iter().map(|x| x * x % 97).sum::<u64>());
            assert_eq!(got, want);
        }
    }

    #[test]
    fn nested_calls_and_joins_terminate() {
        let got = run_awake(|| {
            let (a, b) = rayon::join(
                || run_awake(|| (0..1000u64).into_par_iter().sum::<u64>()),
                || (0..1000u64).into_par_iter().map(|x| x * 2).sum::<u64>(),
            );
            a + b
        });
        assert_eq!(got, 499_500 * 3);
    }
}
