//! NCCL through cudarc: one communicator per device of a group, and the collectives the
//! multi-GPU key switching needs, on `u64` words of [`DeviceBuffer`]s, each device's part queued
//! on that device's one stream (so it is ordered with the kernels around it, like any launch).
//!
//! - [`NcclGroup::new`]: one communicator per device (`ncclCommInitRankConfig`, rank `r` = the
//!   `r`-th device given).
//! - [`NcclGroup::all_gather_v`]: every rank contributes word ranges of its own buffer, and
//!   every rank receives all of them at the same offsets of its buffer (an all-gather with
//!   ranges of any size, in place: the key switching's limbs, which the ranks own in uneven
//!   numbers), one NCCL group of broadcasts.
//! - [`NcclGroup::all_gather`]: equal chunks, in place: rank `r`'s chunk at `offset + r·count`
//!   of its buffer, every rank receiving all chunks as `[rank][count]` (one `ncclAllGather` per
//!   [`Gather`], all in one NCCL group): one collective instead of a broadcast per range, for
//!   callers that can read the rank-major layout (shares padded to the largest).
//! - [`NcclGroup::all_to_all`]: rank `r` sends block `j` of its send buffer to rank `j`, which
//!   stores it as block `r` (grouped sends and receives; the block to itself is a device copy).
//!
//! The NCCL library is loaded at run time (cudarc's `dynamic-loading`), so a machine without it
//! builds and runs everything else: [`NcclGroup::is_available`] says whether it loads, and every
//! entry point returns [`NcclError::Unavailable`] (wrapped in [`CudaError::Nccl`]) instead of
//! panicking when it does not. cudarc looks for `libnccl.so` (and a few CUDA-versioned names,
//! not `libnccl.so.2`): where NCCL comes as `libnccl.so.2` only (PyTorch's `nvidia-nccl` wheel),
//! put a directory holding a link `libnccl.so → …/libnccl.so.2` on `LD_LIBRARY_PATH`
//! (`scripts/nccl-env.sh` does this). A failed NCCL call is [`NcclError::Call`] with NCCL's
//! result code.
//!
//! **A GPU that fails while collectives are in flight.** The communicators are made with
//! `ncclCommInitRankConfig` (one per rank inside one NCCL group) and are *blocking*: measured on
//! 2 × H200, non-blocking ones (`blocking = 0`) made every key switching's two collectives cost
//! 0.36 ms instead of 0.15 (mul+relin over two GPUs 0.94–1.05× one GPU instead of 1.21×), and the
//! dying-GPU test gives its typed error either way: a queued collective does not wait for its
//! peers on the host, the wait for its completion is where a dead peer would stall, and that
//! wait is bounded. A call that answers `ncclInProgress` (not expected of a blocking
//! communicator) is still polled (`ncclCommGetAsyncError`) until NCCL has posted it, within the
//! group's deadline. The host never waits for a group's streams without a deadline: [`NcclGroup::wait`] (and [`NcclGroup::synchronize`], and the drop) polls, per rank,
//! an event recorded on the device's stream (which reports the device's errors: a faulting
//! kernel leaves its context with a sticky error) and the communicator's asynchronous error,
//! until all are done, one failed, or [`NcclGroup::timeout`] passed (default
//! [`DEFAULT_TIMEOUT`], [`NcclGroup::set_timeout`]). On a failure or at the deadline every
//! communicator of the group is aborted (`ncclCommAbort`: the surviving GPUs' NCCL kernels
//! exit instead of waiting for the dead one; on a thread of its own, since the abort waits for
//! the communicators' work, which a GPU stuck rather than dead holds back for as long as it
//! stays stuck) and the group is *failed*: the call returns
//! [`NcclError::GroupFailed`] naming the GPU (or [`NcclError::Timeout`] naming the GPUs that
//! had not finished), and every later call returns the same error at once. A failed NCCL call
//! fails the group the same way (after an error, abort). What a failed group leaves behind: a GPU
//! whose context died keeps a sticky error
//! for the rest of the process (CUDA offers no way to revive the context in-process), so the
//! group must be dropped and rebuilt over the surviving GPUs, and the dead GPU used again only
//! from a new process.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cudarc::nccl::{result as nccl, sys};
use thiserror::Error;

use crate::buffer::DeviceBuffer;
use crate::device::{guard, GpuDevice};
use crate::error::{CudaError, Result};

mod collectives;
mod watch;

use watch::{Outcome, Probe};

/// How long [`NcclGroup::wait`] (and every other wait of a group) lets the group's work run
/// before it gives up on it: 60 s, far above any collective of Rhea's sizes (milliseconds),
/// so that only a stuck group reaches it. [`NcclGroup::set_timeout`] changes it per group.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The oldest NCCL with `ncclCommInitRankConfig` and `ncclConfig_t`: 2.14.
pub const MIN_NCCL_VERSION: i32 = 21400;

/// What can go wrong with NCCL.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NcclError {
    /// The NCCL library could not be loaded, or lacks a symbol.
    #[error(
        "NCCL is not available: {0} (cudarc loads `libnccl.so`: put a directory with \
         `libnccl.so` (a link to `libnccl.so.2` will do) on LD_LIBRARY_PATH; scripts/nccl-env.sh)"
    )]
    Unavailable(String),
    /// An NCCL call returned an error code.
    #[error("NCCL call {call} failed: {code}")]
    Call {
        /// The NCCL function.
        call: &'static str,
        /// NCCL's result code and message.
        code: String,
    },
    /// A request the group cannot serve (no devices, a device twice, buffers of other devices,
    /// ranges outside the buffers).
    #[error("invalid NCCL request: {0}")]
    InvalidArgument(String),
    /// The group failed: a GPU's device reported an error while the group's work ran (its
    /// context died, e.g. a faulting kernel), or an NCCL call or communicator failed. Every
    /// communicator of the group was aborted; this group's calls return this error from now
    /// on. Drop the group and build a new one over the GPUs that still work (a GPU whose
    /// context died is usable again only from a new process).
    #[error(
        "the NCCL group failed{}: {reason}; its communicators were aborted: drop the group and \
         build a new one over the GPUs that still work",
        match gpu { Some(g) => format!(" on GPU {g}"), None => String::new() }
    )]
    GroupFailed {
        /// The GPU that failed (its ordinal), where one is known.
        gpu: Option<usize>,
        /// The device's or NCCL's error.
        reason: String,
    },
    /// The group's work did not finish within its deadline ([`NcclGroup::timeout`]): a GPU
    /// stopped answering. Every communicator of the group was aborted; this group's calls
    /// return this error from now on (drop it, as for [`NcclError::GroupFailed`]).
    #[error(
        "the NCCL group's work did not finish within {waited:?} (GPUs {pending:?} still \
         running); its communicators were aborted: drop the group and build a new one"
    )]
    Timeout {
        /// How long the host waited.
        waited: Duration,
        /// The ordinals of the GPUs whose work had not finished.
        pending: Vec<usize>,
    },
}

impl From<NcclError> for CudaError {
    fn from(e: NcclError) -> Self {
        CudaError::Nccl(e)
    }
}

/// `Ok` for NCCL's success (or in-progress) codes, [`NcclError::Call`] otherwise.
fn check(
    call: &'static str,
    r: std::result::Result<nccl::NcclStatus, nccl::NcclError>,
) -> Result<()> {
    r.map(|_| ()).map_err(|e| {
        NcclError::Call {
            call,
            code: error_text(e.0),
        }
        .into()
    })
}

/// NCCL's name and message of a result code.
fn error_text(code: sys::ncclResult_t) -> String {
    // SAFETY: ncclGetErrorString returns a pointer to a static NUL-terminated string for
    // every result code (or null, handled).
    let text = guard("ncclGetErrorString", || unsafe {
        let p = sys::ncclGetErrorString(code);
        if p.is_null() {
            String::new()
        } else {
            std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    })
    .unwrap_or_default();
    format!("{code:?}: {text}")
}

/// The state of a communicator's work as [`watch::poll`] reads it: done (`ncclSuccess`),
/// pending (`ncclInProgress`: a non-blocking call not yet posted) or failed.
///
/// The caller holds `NCCL_LOCK` and `comm` is live (created, not aborted nor destroyed).
fn comm_probe(comm: sys::ncclComm_t) -> Probe {
    let mut state = sys::ncclResult_t::ncclSuccess;
    // SAFETY: `comm` is a live communicator (the caller's contract) and `state` a valid place
    // for the result.
    let r = guard("ncclCommGetAsyncError", || unsafe {
        sys::ncclCommGetAsyncError(comm, &mut state)
    });
    match r {
        Err(e) => Probe::CommFailed(e.to_string()),
        Ok(sys::ncclResult_t::ncclSuccess) => match state {
            sys::ncclResult_t::ncclSuccess => Probe::Done,
            sys::ncclResult_t::ncclInProgress => Probe::Pending,
            other => Probe::CommFailed(error_text(other)),
        },
        Ok(other) => Probe::CommFailed(format!("ncclCommGetAsyncError: {}", error_text(other))),
    }
}

/// The communicators of a failed group, handed to the thread that aborts them
/// ([`abort_in_background`]).
struct Doomed(Vec<sys::ncclComm_t>);

// SAFETY: NCCL communicators may be used from any thread, one call at a time. A `Doomed` is
// made once its group is marked failed (under `NCCL_LOCK`, which every other use of the
// handles checks first), so the aborting thread is the only user of these handles from then on.
unsafe impl Send for Doomed {}

/// Aborts `comms` ([`abort_comms`]) on a thread of its own, so that the caller returns now:
/// `ncclCommAbort` frees the communicators' device memory, which waits for the work queued on
/// their GPUs — behind a kernel of a GPU that is stuck rather than dead, for as long as that
/// kernel runs (measured: the whole stall, not the group's deadline). Where no thread can be
/// started, aborts here. The caller has marked the group failed and never uses the handles
/// again; the thread does not take `NCCL_LOCK` (it may block for long), and aborting one
/// group's communicators while another group's are in use is allowed (separate communicators).
fn abort_in_background(comms: &[sys::ncclComm_t], culprit: Option<usize>) {
    let doomed = Doomed(comms.to_vec());
    let spawned = std::thread::Builder::new()
        .name("rhea-nccl-abort".into())
        .spawn(move || {
            let doomed = doomed;
            abort_comms(&doomed.0, culprit)
        });
    if spawned.is_err() {
        abort_comms(comms, culprit);
    }
}

/// Aborts every communicator of `comms` (the non-null ones), `culprit`'s last (a dead GPU's
/// abort talks to a dead context; the others' kernels are released first). Errors are
/// ignored: the handles are gone either way. The caller never uses the handles again, and no
/// other thread uses them.
fn abort_comms(comms: &[sys::ncclComm_t], culprit: Option<usize>) {
    let order = (0..comms.len())
        .filter(|&r| Some(r) != culprit)
        .chain(culprit.filter(|&r| r < comms.len()));
    for r in order {
        let c = comms[r];
        if c.is_null() {
            continue;
        }
        // SAFETY: `c` came from ncclCommInitRankConfig and is aborted once, here; the caller
        // never uses it again.
        let _ = guard("ncclCommAbort", || unsafe { nccl::comm_abort(c) });
    }
}

/// NCCL's `NCCL_CONFIG_INITIALIZER` for a runtime of version `version`, with `blocking = 1`:
/// every other field "undefined" (NCCL's defaults). NCCL reads `size` bytes of it (at most its
/// own struct's), so a runtime older or newer than cudarc's bindings reads the fields it has.
fn communicator_config(version: i32) -> sys::ncclConfig_t {
    const UNDEF: i32 = i32::MIN;
    sys::ncclConfig_t {
        size: std::mem::size_of::<sys::ncclConfig_t>(),
        magic: 0xcafe_beef,
        version: version.max(0) as u32,
        blocking: 1,
        cgaClusterSize: UNDEF,
        minCTAs: UNDEF,
        maxCTAs: UNDEF,
        netName: std::ptr::null(),
        splitShare: UNDEF,
        trafficClass: UNDEF,
        commName: std::ptr::null(),
        collnetEnable: UNDEF,
        CTAPolicy: UNDEF,
        shrinkShare: UNDEF,
        nvlsCTAs: UNDEF,
        nChannelsPerNetPeer: UNDEF,
        nvlinkCentricSched: UNDEF,
        graphUsageMode: UNDEF,
        numRmaCtx: UNDEF,
        maxP2pPeers: UNDEF,
    }
}

/// Runs an NCCL call, turning a panic inside cudarc (the library or a symbol missing) into
/// [`NcclError::Unavailable`].
fn call<T>(what: &'static str, f: impl FnOnce() -> T) -> Result<T> {
    guard(what, f).map_err(|e| NcclError::Unavailable(e.to_string()).into())
}

/// One equal-chunk all-gather of [`NcclGroup::all_gather`]: rank `r`'s chunk is the `count`
/// words at `offset + r·count` of its buffer, of which the first `payload[r]` carry data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gather {
    /// The first word of rank 0's chunk (the same on every rank).
    pub offset: usize,
    /// Words per chunk (the largest share).
    pub count: usize,
    /// Per rank, the words of its chunk that carry data (counted as received by the others).
    pub payload: Vec<usize>,
}

/// One NCCL communicator per device of a group (single process, one host thread drives them
/// all, with group calls), and the words each rank received.
pub struct NcclGroup {
    comms: Vec<sys::ncclComm_t>,
    devices: Vec<Arc<GpuDevice>>,
    received: Vec<AtomicU64>,
    /// Per rank, a second stream for [`NcclGroup::all_gather_v_pipelined`] (made on first use):
    /// its collectives run beside the compute queued on the device's stream.
    side: Mutex<Vec<Arc<cudarc::driver::CudaStream>>>,
    /// The failure that aborted the communicators (then never used again), if any.
    failed: Mutex<Option<NcclError>>,
    /// Per rank, the event a wait records on the device's stream and polls (made once, so
    /// that a wait allocates nothing: a wait on a full GPU must not fail for want of memory).
    events: Vec<cudarc::driver::CudaEvent>,
    /// [`NcclGroup::pace`]'s two sets of marks (one event per rank each), and the set recorded
    /// last (`None` before the first).
    marks: [Vec<cudarc::driver::CudaEvent>; 2],
    last_mark: Mutex<Option<usize>>,
    /// How long a wait lets the group's work run ([`NcclGroup::set_timeout`]).
    timeout: Duration,
}

/// Held while any group queues a collective (process-wide). Every device has one stream that
/// all its users share, so two groups over the same GPUs whose collectives reached the streams
/// in different orders (group A first on GPU 0, group B first on GPU 1) would wait for each
/// other forever; queued under one lock, every stream sees the groups' collectives in the same
/// order. It also keeps a communicator from being used by two threads at once.
static NCCL_LOCK: Mutex<()> = Mutex::new(());

// SAFETY: the communicators are opaque handles that NCCL allows to be used from any thread,
// one call at a time; every use goes through `&self` methods that hold `NCCL_LOCK` (creation
// and destruction own the group).
unsafe impl Send for NcclGroup {}
// SAFETY: as for `Send`: concurrent `&self` calls are serialised by `NCCL_LOCK`.
unsafe impl Sync for NcclGroup {}

impl std::fmt::Debug for NcclGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let idx: Vec<usize> = self.devices.iter().map(|d| d.index()).collect();
        f.debug_struct("NcclGroup").field("devices", &idx).finish()
    }
}

impl Drop for NcclGroup {
    /// A failed group's communicators are already aborted: nothing is left to do. Otherwise
    /// waits for the streams with the deadline ([`NcclGroup::wait`], which fails and aborts
    /// the group if its work fails or hangs), finalizes every communicator in one NCCL group
    /// (one thread drives all ranks, so the finalizations must not wait for each other one by
    /// one; polled within the deadline), then destroys them; if the finalization
    /// fails or does not end, aborts them instead. Errors are ignored: nothing more can be
    /// done in a drop.
    fn drop(&mut self) {
        if self.wait().is_err() {
            return;
        }
        let comms = &self.comms;
        let _held = NCCL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let finalized = guard("ncclCommFinalize", || {
            if nccl::group_start().is_err() {
                return false;
            }
            // SAFETY: each handle came from ncclCommInitRankConfig, is live (the group did not
            // fail) and is finalized once, here.
            let all: Vec<bool> = comms
                .iter()
                .map(|&c| unsafe { nccl::comm_finalize(c) }.is_ok())
                .collect();
            nccl::group_end().is_ok() && all.iter().all(|&ok| ok)
        })
        .unwrap_or(false);
        let finalized = finalized
            && watch::poll(comms.len(), self.timeout, |r| comm_probe(comms[r])) == Outcome::Done;
        for &c in comms {
            // SAFETY: each handle is destroyed (or aborted) once, here, after its finalization
            // or instead of it.
            let _ = guard("ncclCommDestroy", || unsafe {
                if finalized {
                    nccl::comm_destroy(c)
                } else {
                    nccl::comm_abort(c)
                }
            });
        }
    }
}

impl NcclGroup {
    /// Whether the NCCL library loads on this machine (never panics).
    pub fn is_available() -> bool {
        // SAFETY: only tries to dlopen the library names cudarc knows; no symbol is called.
        guard("probing libnccl", || unsafe { sys::is_culib_present() }).unwrap_or(false)
    }

    /// NCCL's version code (e.g. 22703 for 2.27.3).
    ///
    /// Errors: [`NcclError::Unavailable`], [`NcclError::Call`].
    pub fn version() -> Result<i32> {
        Self::require_library()?;
        let v = call("ncclGetVersion", nccl::get_nccl_version)?;
        v.map_err(|e| {
            NcclError::Call {
                call: "ncclGetVersion",
                code: format!("{:?}", e.0),
            }
            .into()
        })
    }

    fn require_library() -> Result<()> {
        if Self::is_available() {
            Ok(())
        } else {
            Err(NcclError::Unavailable("libnccl could not be loaded".into()).into())
        }
    }

    /// One communicator per device, rank `r` for `devices[r]`, with the deadline
    /// [`DEFAULT_TIMEOUT`] (the creation itself is polled within it).
    ///
    /// Errors: [`NcclError::InvalidArgument`] for no devices or a device given twice;
    /// [`NcclError::Unavailable`] without the library or with an NCCL older than
    /// [`MIN_NCCL_VERSION`]; [`NcclError::Call`] if NCCL refuses a call;
    /// [`NcclError::GroupFailed`] or [`NcclError::Timeout`] if the creation fails later or
    /// does not end; device errors. The communicators made so far are aborted.
    pub fn new(devices: &[Arc<GpuDevice>]) -> Result<Self> {
        if devices.is_empty() {
            return Err(NcclError::InvalidArgument("a group of no devices".into()).into());
        }
        let ordinals: Vec<i32> = devices.iter().map(|d| d.index() as i32).collect();
        for (i, o) in ordinals.iter().enumerate() {
            if ordinals[..i].contains(o) {
                return Err(NcclError::InvalidArgument(format!("GPU {o} given twice")).into());
            }
        }
        let version = Self::version()?;
        if version < MIN_NCCL_VERSION {
            return Err(NcclError::Unavailable(format!(
                "NCCL {version} lacks ncclCommInitRankConfig (2.14 or newer needed)"
            ))
            .into());
        }
        let id = call("ncclGetUniqueId", nccl::get_uniqueid)?.map_err(|e| {
            CudaError::from(NcclError::Call {
                call: "ncclGetUniqueId",
                code: error_text(e.0),
            })
        })?;
        let k = devices.len();
        let mut comms: Vec<sys::ncclComm_t> = vec![std::ptr::null_mut(); k];
        // One config per rank, alive until the creation has ended.
        let mut configs: Vec<sys::ncclConfig_t> =
            (0..k).map(|_| communicator_config(version)).collect();
        let _held = NCCL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let mut issued: Result<()> =
            check("ncclGroupStart", call("ncclGroupStart", nccl::group_start)?);
        if issued.is_ok() {
            for (r, d) in devices.iter().enumerate() {
                // NCCL takes the rank's device from the thread's current context.
                issued = d.context().bind_to_thread().map_err(CudaError::from);
                if issued.is_err() {
                    break;
                }
                // SAFETY: `comms[r]` and `configs[r]` are valid places that outlive the
                // creation (polled below before they are dropped); `id` is one unique id
                // shared by the `k` ranks, `r < k`; the thread's current context is the
                // rank's device, which this process opened.
                issued = call("ncclCommInitRankConfig", || unsafe {
                    nccl::comm_init_rank_config(
                        &mut comms[r],
                        k as i32,
                        id,
                        r as i32,
                        &mut configs[r],
                    )
                })
                .and_then(|res| check("ncclCommInitRankConfig", res));
                if issued.is_err() {
                    break;
                }
            }
            let end = call("ncclGroupEnd", nccl::group_end).and_then(|r| check("ncclGroupEnd", r));
            issued = issued.and(end);
        }
        if let Err(e) = issued {
            abort_comms(&comms, None);
            return Err(e);
        }
        let outcome = watch::poll(k, DEFAULT_TIMEOUT, |r| {
            if comms[r].is_null() {
                Probe::CommFailed("no communicator was made".into())
            } else {
                comm_probe(comms[r])
            }
        });
        let failure = match outcome {
            Outcome::Done => None,
            Outcome::Failed { rank, reason } => Some((
                NcclError::GroupFailed {
                    gpu: devices.get(rank).map(|d| d.index()),
                    reason: format!("creating the communicators: {reason}"),
                },
                Some(rank),
            )),
            Outcome::TimedOut { waited, pending } => Some((
                NcclError::Timeout {
                    waited,
                    pending: pending.iter().map(|&r| devices[r].index()).collect(),
                },
                None,
            )),
        };
        if let Some((e, culprit)) = failure {
            abort_comms(&comms, culprit);
            return Err(e.into());
        }
        drop(configs);
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
        let events: std::result::Result<Vec<_>, _> = devices
            .iter()
            .map(|d| d.context().new_event(flags))
            .collect();
        let new_events = || -> std::result::Result<Vec<_>, _> {
            devices
                .iter()
                .map(|d| d.context().new_event(flags))
                .collect()
        };
        let (events, marks) = match (events, new_events(), new_events()) {
            (Ok(ev), Ok(m0), Ok(m1)) => (ev, [m0, m1]),
            (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
                abort_comms(&comms, None);
                return Err(e.into());
            }
        };
        Ok(Self {
            comms,
            devices: devices.to_vec(),
            received: devices.iter().map(|_| AtomicU64::new(0)).collect(),
            side: Mutex::new(Vec::new()),
            failed: Mutex::new(None),
            events,
            marks,
            last_mark: Mutex::new(None),
            timeout: DEFAULT_TIMEOUT,
        })
    }

    /// How long a wait of this group lets its work run before it aborts the group
    /// ([`NcclError::Timeout`]); [`DEFAULT_TIMEOUT`] unless set.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Sets the deadline of this group's waits ([`NcclGroup::timeout`]). Choose it above the
    /// longest run of work queued on the group's streams between two waits (with Rhea's
    /// operations: milliseconds); a deadline too short aborts a healthy group.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// The failure that aborted this group, if it failed ([`NcclError::GroupFailed`],
    /// [`NcclError::Timeout`]): every call returns it.
    pub fn failure(&self) -> Option<NcclError> {
        self.failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// [`NcclGroup::failure`] as an error: `Ok` for a working group.
    fn ensure_healthy(&self) -> Result<()> {
        match self.failure() {
            None => Ok(()),
            Some(e) => Err(e.into()),
        }
    }

    /// Fails the group with `e` (unless it failed already: then the first failure stays and is
    /// returned): marks it failed, then aborts every communicator, `culprit`'s last, on a
    /// thread of its own ([`abort_in_background`]: the error returns at once, even while a
    /// stuck GPU holds the abort back). The caller holds `NCCL_LOCK`.
    fn fail_locked(&self, e: NcclError, culprit: Option<usize>) -> CudaError {
        let mut failed = self.failed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(first) = &*failed {
            return first.clone().into();
        }
        *failed = Some(e.clone());
        abort_in_background(&self.comms, culprit);
        e.into()
    }

    /// [`NcclGroup::fail_locked`], taking `NCCL_LOCK`.
    fn fail(&self, e: NcclError, culprit: Option<usize>) -> CudaError {
        let _held = NCCL_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        self.fail_locked(e, culprit)
    }

    /// `Ok` for a wait that ended with [`Outcome::Done`]; otherwise the group fails by
    /// `outcome` and its error is returned. The caller holds `NCCL_LOCK` when `locked`.
    /// A device that reports an error is named, whatever the outcome's rank (an NCCL error of
    /// its peer, a failed NCCL call of no rank, a deadline passed while it was dead).
    fn conclude(&self, outcome: Outcome, what: &str, locked: bool) -> Result<()> {
        if outcome == Outcome::Done {
            return Ok(());
        }
        let outcome = match (&outcome, self.dead_device()) {
            (_, None) => outcome,
            (Outcome::Failed { rank, .. }, Some((dead, _))) if *rank == dead => outcome,
            (_, Some((rank, reason))) => Outcome::Failed { rank, reason },
        };
        let (e, culprit) = match outcome {
            Outcome::Done => return Ok(()),
            Outcome::Failed { rank, reason } => (
                NcclError::GroupFailed {
                    gpu: self.devices.get(rank).map(|d| d.index()),
                    reason: format!("{what}: {reason}"),
                },
                Some(rank),
            ),
            Outcome::TimedOut { waited, pending } => (
                NcclError::Timeout {
                    waited,
                    pending: pending.iter().map(|&r| self.devices[r].index()).collect(),
                },
                None,
            ),
        };
        Err(if locked {
            self.fail_locked(e, culprit)
        } else {
            self.fail(e, culprit)
        })
    }

    /// Rank `r`'s device error, if its context reports one (the rank's event recorded on its
    /// stream and queried: never waits).
    fn device_error(&self, r: usize) -> Option<String> {
        let ev = &self.events[r];
        let state = ev
            .record(self.devices[r].stream())
            .and_then(|()| ev.try_is_complete());
        state.err().map(|e| CudaError::from(e).to_string())
    }

    /// The first rank whose device reports an error, and the error.
    fn dead_device(&self) -> Option<(usize, String)> {
        (0..self.len()).find_map(|r| self.device_error(r).map(|e| (r, e)))
    }

    /// Waits, within [`NcclGroup::timeout`], for all work queued so far on every device's
    /// stream (collectives, kernels, copies), polling each rank's stream (an event recorded
    /// there: it also reports the device's errors) and its communicator's asynchronous error.
    /// A device error, an NCCL error or the deadline aborts every communicator and fails the
    /// group. Never waits without the deadline, so a GPU that died in the middle of a
    /// collective cannot stall the host.
    ///
    /// Errors: [`NcclError::GroupFailed`] naming the GPU (a device error is named before its
    /// peers' NCCL errors); [`NcclError::Timeout`]; for a group that failed before, its
    /// failure, at once.
    pub fn wait(&self) -> Result<()> {
        self.ensure_healthy()?;
        // Another thread's wait may record the same events later: its record covers at least
        // the work queued before this one's, so this wait only waits longer.
        for (r, (d, ev)) in self.devices.iter().zip(&self.events).enumerate() {
            if let Err(e) = ev.record(d.stream()) {
                let outcome = Outcome::Failed {
                    rank: r,
                    reason: CudaError::from(e).to_string(),
                };
                return self.conclude(outcome, "recording an event", false);
            }
        }
        self.poll_events(&self.events, "waiting for the group's work")
    }

    /// Bounds how far the host runs ahead of the group: waits, within the deadline, for the
    /// work queued up to the previous call (an operation's end), then marks the work queued so
    /// far (events recorded, never waited on here). An operation that calls it at its end
    /// returns while its own work runs, so the host prepares the next one meanwhile, and at
    /// most two operations are ever queued: a GPU that dies during one surfaces at the next
    /// operation's `pace`, at a [`NcclGroup::wait`] or at the drop — never as a host blocked
    /// without a deadline behind a full launch queue.
    ///
    /// Errors: as [`NcclGroup::wait`].
    pub fn pace(&self) -> Result<()> {
        self.ensure_healthy()?;
        let mut last = self.last_mark.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(prev) = *last {
            self.poll_events(&self.marks[prev], "waiting for the previous operation")?;
        }
        let next = last.map_or(0, |p| 1 - p);
        for (r, (d, ev)) in self.devices.iter().zip(&self.marks[next]).enumerate() {
            if let Err(e) = ev.record(d.stream()) {
                let outcome = Outcome::Failed {
                    rank: r,
                    reason: CudaError::from(e).to_string(),
                };
                return self.conclude(outcome, "recording an event", false);
            }
        }
        *last = Some(next);
        Ok(())
    }

    /// Polls `events` (one per rank, recorded) and the communicators until every event is
    /// complete, a device or NCCL error, or the deadline (then the group fails).
    fn poll_events(&self, events: &[cudarc::driver::CudaEvent], what: &str) -> Result<()> {
        let outcome = watch::poll(self.len(), self.timeout, |r| {
            let device = match events[r].try_is_complete() {
                Ok(true) => Probe::Done,
                Ok(false) => Probe::Pending,
                Err(e) => return Probe::DeviceFailed(CudaError::from(e).to_string()),
            };
            let _held = NCCL_LOCK.lock().unwrap_or_else(|p| p.into_inner());
            if self.failure().is_some() {
                // Another thread failed the group meanwhile: its communicators are gone.
                return Probe::CommFailed("the group failed in another thread".into());
            }
            match comm_probe(self.comms[r]) {
                Probe::Done | Probe::Pending => device,
                failed => failed,
            }
        });
        self.conclude(outcome, what, false)
    }

    /// The number of ranks.
    pub fn len(&self) -> usize {
        self.devices.len()
    }

    /// Whether the group has no ranks (never: [`NcclGroup::new`] refuses that).
    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }

    /// The devices, by rank.
    pub fn devices(&self) -> &[Arc<GpuDevice>] {
        &self.devices
    }

    /// Bytes rank `rank` has received through this group's collectives.
    pub fn bytes_received(&self, rank: usize) -> u64 {
        self.received
            .get(rank)
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// Bytes received by all ranks together.
    pub fn total_bytes_received(&self) -> u64 {
        (0..self.len()).map(|r| self.bytes_received(r)).sum()
    }

    /// Sets the received-byte counters to zero.
    pub fn reset_counters(&self) {
        for c in &self.received {
            c.store(0, Ordering::Relaxed);
        }
    }

    /// Waits for every device's stream: [`NcclGroup::wait`] (with the deadline).
    ///
    /// Errors: as [`NcclGroup::wait`].
    pub fn synchronize(&self) -> Result<()> {
        self.wait()
    }

    /// The failed group's error, else [`NcclError::InvalidArgument`] unless `bufs` holds one
    /// buffer per rank, each on its rank's device.
    fn check_buffers<'b>(&self, bufs: impl Iterator<Item = &'b DeviceBuffer>) -> Result<()> {
        self.ensure_healthy()?;
        let mut count = 0;
        for (r, b) in bufs.enumerate() {
            count += 1;
            let want = self.devices.get(r).map(|d| d.index());
            if want != Some(b.device().index()) {
                return Err(NcclError::InvalidArgument(format!(
                    "the buffer of rank {r} lives on GPU {}, not on the rank's GPU {want:?}",
                    b.device().index()
                ))
                .into());
            }
        }
        if count != self.len() {
            return Err(NcclError::InvalidArgument(format!(
                "{count} buffers for {} ranks",
                self.len()
            ))
            .into());
        }
        Ok(())
    }

    /// Runs `f` (NCCL calls only) between `ncclGroupStart` and `ncclGroupEnd` (the end is
    /// called even when `f` fails), under the process-wide NCCL lock, then polls the
    /// communicators until NCCL has posted the group's work (should a call answer
    /// `ncclInProgress`), within the deadline. Any NCCL error here fails the group (after an
    /// error, abort).
    fn grouped(&self, f: impl FnOnce() -> Result<()>) -> Result<()> {
        let _held = NCCL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        self.ensure_healthy()?;
        let issued =
            check("ncclGroupStart", call("ncclGroupStart", nccl::group_start)?).and_then(|()| {
                let body = f();
                let end =
                    call("ncclGroupEnd", nccl::group_end).and_then(|r| check("ncclGroupEnd", r));
                body.and(end)
            });
        let outcome = match issued {
            // A rank whose posting is still pending may be waiting on a dead device.
            Ok(()) => watch::poll(self.len(), self.timeout, |r| {
                match comm_probe(self.comms[r]) {
                    Probe::Pending => self
                        .device_error(r)
                        .map_or(Probe::Pending, Probe::DeviceFailed),
                    other => other,
                }
            }),
            Err(e) => Outcome::Failed {
                rank: usize::MAX,
                reason: e.to_string(),
            },
        };
        self.conclude(outcome, "posting collectives", true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probing_never_panics_and_errors_are_typed() {
        // On a machine without NCCL this is false; with it, true. Either way no panic.
        let have = NcclGroup::is_available();
        if !have {
            assert!(matches!(
                NcclGroup::version(),
                Err(CudaError::Nccl(NcclError::Unavailable(_)))
            ));
        }
        assert!(matches!(
            NcclGroup::new(&[]),
            Err(CudaError::Nccl(NcclError::InvalidArgument(_)))
        ));
        let e = CudaError::from(NcclError::Call {
            call: "ncclBroadcast",
            code: "ncclSystemError".into(),
        });
        assert!(e.to_string().contains("ncclBroadcast"), "{e}");
        let e = CudaError::from(NcclError::Unavailable("x".into()));
        assert!(e.to_string().contains("LD_LIBRARY_PATH"), "{e}");
    }

    /// NCCL_CONFIG_INITIALIZER's fields, `blocking = 1`, and the size NCCL reads.
    #[test]
    fn the_config_is_blocking_and_otherwise_default() {
        let c = communicator_config(22703);
        assert_eq!(c.size, std::mem::size_of::<sys::ncclConfig_t>());
        assert_eq!(c.magic, 0xcafe_beef);
        assert_eq!(c.version, 22703);
        assert_eq!(c.blocking, 1);
        for undefined in [
            c.cgaClusterSize,
            c.minCTAs,
            c.maxCTAs,
            c.splitShare,
            c.CTAPolicy,
        ] {
            assert_eq!(undefined, i32::MIN);
        }
        assert!(c.netName.is_null() && c.commName.is_null());
    }

    #[test]
    fn failures_name_the_gpu_and_what_to_do() {
        let e = CudaError::from(NcclError::GroupFailed {
            gpu: Some(1),
            reason: "CUDA_ERROR_ILLEGAL_INSTRUCTION".into(),
        });
        let text = e.to_string();
        assert!(
            text.contains("on GPU 1") && text.contains("ILLEGAL_INSTRUCTION"),
            "{text}"
        );
        assert!(text.contains("drop the group"), "{text}");
        let e = NcclError::GroupFailed {
            gpu: None,
            reason: "ncclSystemError".into(),
        };
        assert!(!e.to_string().contains("on GPU"), "{e}");
        let e = NcclError::Timeout {
            waited: Duration::from_millis(5000),
            pending: vec![0, 1],
        };
        assert!(
            e.to_string().contains("5s") && e.to_string().contains("[0, 1]"),
            "{e}"
        );
        // Aborting no communicator (creation failed before any was made) calls nothing.
        abort_comms(&[std::ptr::null_mut(), std::ptr::null_mut()], Some(1));
    }
}
