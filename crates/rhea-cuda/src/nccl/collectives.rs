//! The collectives of [`NcclGroup`]: in-place all-gathers (ranges of any size, equal chunks,
//! staged beside compute) and the all-to-all, each queued on the devices' streams in one NCCL
//! group (`NcclGroup::grouped`: posted within the deadline, a failure fails the group).

use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use cudarc::nccl::{result as nccl, sys};

use super::{call, check, Gather, NcclError, NcclGroup};
use crate::buffer::DeviceBuffer;
use crate::error::{CudaError, Result};

impl NcclGroup {
    /// All-gather of word ranges, in place: `ranges[r]` are the word ranges that rank `r` owns
    /// in its buffer `bufs[r]`; afterwards every rank's buffer holds every rank's ranges at the
    /// same offsets (the other words untouched). Ranges of one rank must not overlap another
    /// rank's; empty ranges are skipped. One NCCL group of broadcasts (root `r` for its ranges),
    /// queued on each device's stream.
    ///
    /// Errors: [`NcclError::InvalidArgument`] for a buffer of another device, a list of another
    /// length, or a range outside a buffer; [`NcclError::Call`], [`NcclError::Unavailable`].
    pub fn all_gather_v(
        &self,
        bufs: &mut [&mut DeviceBuffer],
        ranges: &[Vec<Range<usize>>],
    ) -> Result<()> {
        let streams: Vec<sys::cudaStream_t> = self
            .devices
            .iter()
            .map(|d| d.stream().cu_stream() as sys::cudaStream_t)
            .collect();
        self.all_gather_v_on(bufs, ranges, &streams)
    }

    /// In-place all-gathers of equal chunks, all in one NCCL group: for each [`Gather`] `g`,
    /// rank `r`'s chunk is the `g.count` words at `g.offset + r·g.count` of `bufs[r]`, and
    /// afterwards every rank's buffer holds every rank's chunk there (`[rank][count]` from
    /// `g.offset`). NCCL moves whole chunks; the received-byte counters count only the first
    /// `g.payload[r]` words of rank `r`'s chunk (the rest is padding where the ranks' shares
    /// differ). One `ncclAllGather` per gather and rank, queued on each device's stream.
    ///
    /// Errors: [`NcclError::InvalidArgument`] for a buffer of another device, a list of
    /// another length, a payload above its chunk, or a chunk outside a buffer;
    /// [`NcclError::Call`], [`NcclError::Unavailable`].
    pub fn all_gather(&self, bufs: &mut [&mut DeviceBuffer], gathers: &[Gather]) -> Result<()> {
        self.check_buffers(bufs.iter().map(|b| &**b))?;
        let k = self.len();
        for g in gathers {
            let end = g.count.checked_mul(k).and_then(|x| x.checked_add(g.offset));
            if g.payload.len() != k
                || g.payload.iter().any(|&p| p > g.count)
                || bufs.iter().any(|b| end.map_or(true, |e| e > b.len()))
            {
                return Err(NcclError::InvalidArgument(format!(
                    "an all-gather of {k} chunks of {} words at {} (payloads {:?}) over buffers \
                     of {:?} words",
                    g.count,
                    g.offset,
                    g.payload,
                    bufs.iter().map(|b| b.len()).collect::<Vec<_>>()
                ))
                .into());
            }
        }
        let ptrs: Vec<u64> = bufs.iter().map(|b| b.device_ptr()).collect();
        self.grouped(|| {
            for g in gathers.iter().filter(|g| g.count > 0) {
                for (rank, &p) in ptrs.iter().enumerate() {
                    let recv = p + (g.offset * 8) as u64;
                    let send = recv + (rank * g.count * 8) as u64;
                    let stream = self.devices[rank].stream().cu_stream() as sys::cudaStream_t;
                    // SAFETY: `recv` addresses `k · count` words inside rank `rank`'s live
                    // buffer (checked above; borrowed mutably until the call returns, pooled
                    // memory, so work queued on the device's stream may use it); `send` is the
                    // rank's own chunk inside it (NCCL's in-place all-gather); `comms[rank]` is
                    // the rank's communicator and `stream` its device's stream.
                    let res = call("ncclAllGather", || unsafe {
                        nccl::all_gather(
                            send as *const std::ffi::c_void,
                            recv as *mut std::ffi::c_void,
                            g.count,
                            sys::ncclDataType_t::ncclUint64,
                            self.comms[rank],
                            stream,
                        )
                    })?;
                    check("ncclAllGather", res)?;
                    let others: usize = (0..k).filter(|&r| r != rank).map(|r| g.payload[r]).sum();
                    self.received[rank].fetch_add((others * 8) as u64, Ordering::Relaxed);
                }
            }
            Ok(())
        })
    }

    /// [`NcclGroup::all_gather_v`] in `stages` (each one all-gather's `ranges`), overlapped
    /// with compute: the stages are queued one after the other on a second stream of each
    /// device (which first waits for the work queued on the device's stream so far); then, for
    /// each stage `s` in order, every device's stream is made to wait for stage `s` alone and
    /// `after(s, bufs)` is called to queue the work that needs it (reading stage `s`'s ranges,
    /// or any range of an earlier stage) on the devices' streams, while the later stages move.
    /// Last, every device's stream waits for all the stages, so that, when this returns, all
    /// work on the buffers is ordered on the devices' streams again (the pool's reuse of freed
    /// memory relies on it, also when `after` fails). `after` must not write the words a later
    /// stage gathers, nor read them.
    ///
    /// Errors: as [`NcclGroup::all_gather_v`], device errors, and `after`'s.
    pub fn all_gather_v_pipelined<E: From<CudaError>>(
        &self,
        bufs: &mut [&mut DeviceBuffer],
        stages: &[Vec<Vec<Range<usize>>>],
        mut after: impl FnMut(usize, &[&DeviceBuffer]) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let side = self.side_streams()?;
        for (d, s) in self.devices.iter().zip(&side) {
            s.join(d.stream()).map_err(CudaError::from)?;
        }
        let raw: Vec<sys::cudaStream_t> = side
            .iter()
            .map(|s| s.cu_stream() as sys::cudaStream_t)
            .collect();
        let mut events = Vec::with_capacity(stages.len());
        let mut queued = Ok(());
        for ranges in stages {
            if let Err(e) = self.all_gather_v_on(bufs, ranges, &raw) {
                queued = Err(e);
                break;
            }
            let ev: std::result::Result<Vec<_>, _> =
                side.iter().map(|s| s.record_event(None)).collect();
            match ev {
                Ok(ev) => events.push(ev),
                Err(e) => {
                    queued = Err(e.into());
                    break;
                }
            }
        }
        let shared: Vec<&DeviceBuffer> = bufs.iter().map(|b| &**b).collect();
        let mut body: std::result::Result<(), E> = queued.map_err(E::from);
        if body.is_ok() {
            for (s, ev) in events.iter().enumerate() {
                let waited: Result<()> = self
                    .devices
                    .iter()
                    .zip(ev)
                    .try_for_each(|(d, e)| Ok(d.stream().wait(e)?));
                body = waited.map_err(E::from).and_then(|()| after(s, &shared));
                if body.is_err() {
                    break;
                }
            }
        }
        // Whatever happened, the devices' streams wait for everything queued on the side.
        let mut joined: Result<()> = Ok(());
        for (d, s) in self.devices.iter().zip(&side) {
            if let Err(e) = d.stream().join(s) {
                joined = Err(e.into());
            }
        }
        body.and(joined.map_err(E::from))
    }

    /// The side streams, made on first use (each forked from its device's stream).
    fn side_streams(&self) -> Result<Vec<Arc<cudarc::driver::CudaStream>>> {
        let mut side = self.side.lock().unwrap_or_else(|e| e.into_inner());
        if side.is_empty() {
            for d in &self.devices {
                side.push(d.stream().fork()?);
            }
        }
        Ok(side.clone())
    }

    /// [`NcclGroup::all_gather_v`] queued on `streams` (one per rank).
    fn all_gather_v_on(
        &self,
        bufs: &mut [&mut DeviceBuffer],
        ranges: &[Vec<Range<usize>>],
        streams: &[sys::cudaStream_t],
    ) -> Result<()> {
        self.check_buffers(bufs.iter().map(|b| &**b))?;
        if ranges.len() != self.len() {
            return Err(NcclError::InvalidArgument(format!(
                "ranges for {} ranks in a group of {}",
                ranges.len(),
                self.len()
            ))
            .into());
        }
        for (root, rs) in ranges.iter().enumerate() {
            for r in rs {
                if r.start > r.end || bufs.iter().any(|b| r.end > b.len()) {
                    return Err(NcclError::InvalidArgument(format!(
                        "rank {root}'s range {r:?} leaves a buffer"
                    ))
                    .into());
                }
            }
        }
        let ptrs: Vec<u64> = bufs.iter().map(|b| b.device_ptr()).collect();
        self.grouped(|| {
            for (root, rs) in ranges.iter().enumerate() {
                for r in rs.iter().filter(|r| !r.is_empty()) {
                    for (rank, &p) in ptrs.iter().enumerate() {
                        let at = p + (r.start * 8) as u64;
                        let stream = streams[rank];
                        // SAFETY: `at` addresses `r.len()` words inside rank `rank`'s live
                        // buffer (checked above; the buffer is borrowed mutably until the call
                        // returns, and its memory returns only to the pool, so work queued on
                        // its device's stream may use it; on a side stream, the caller,
                        // `all_gather_v_pipelined`, makes the device's stream wait for it
                        // before the borrow ends); the root sends from the same words in place;
                        // `comms[rank]` is this rank's communicator and `stream` its device's
                        // stream or a stream of the same context.
                        let res = call("ncclBroadcast", || unsafe {
                            nccl::broadcast(
                                at as *const std::ffi::c_void,
                                at as *mut std::ffi::c_void,
                                r.len(),
                                sys::ncclDataType_t::ncclUint64,
                                root as i32,
                                self.comms[rank],
                                stream,
                            )
                        })?;
                        check("ncclBroadcast", res)?;
                        if rank != root {
                            self.received[rank].fetch_add((r.len() * 8) as u64, Ordering::Relaxed);
                        }
                    }
                }
            }
            Ok(())
        })
    }

    /// All-to-all of equal blocks: rank `r` sends words `j·block .. (j+1)·block` of `send[r]` to
    /// rank `j`, which stores them at words `r·block ..` of `recv[j]`. Grouped sends and
    /// receives; each rank's own block is a device copy.
    ///
    /// Errors: [`NcclError::InvalidArgument`] for buffers of other devices or shorter than
    /// `ranks · block` words; [`NcclError::Call`], [`NcclError::Unavailable`]; device errors.
    pub fn all_to_all(
        &self,
        send: &[&DeviceBuffer],
        recv: &mut [&mut DeviceBuffer],
        block: usize,
    ) -> Result<()> {
        self.check_buffers(send.iter().copied())?;
        self.check_buffers(recv.iter().map(|b| &**b))?;
        let k = self.len();
        let need = k * block;
        if send.iter().any(|b| b.len() < need) || recv.iter().any(|b| b.len() < need) {
            return Err(NcclError::InvalidArgument(format!(
                "all-to-all of {k} blocks of {block} words needs {need}-word buffers"
            ))
            .into());
        }
        if block == 0 {
            return Ok(());
        }
        for r in 0..k {
            DeviceBuffer::copy_region(send[r], r * block, recv[r], r * block, block)?;
        }
        let sp: Vec<u64> = send.iter().map(|b| b.device_ptr()).collect();
        let rp: Vec<u64> = recv.iter().map(|b| b.device_ptr()).collect();
        self.grouped(|| {
            for r in 0..k {
                let stream = self.devices[r].stream().cu_stream() as sys::cudaStream_t;
                for j in (0..k).filter(|&j| j != r) {
                    let src = sp[r] + (j * block * 8) as u64;
                    let dst = rp[r] + (j * block * 8) as u64;
                    // SAFETY: both addresses lie `block` words inside rank r's live buffers
                    // (lengths checked above; borrowed until the call returns, pooled memory);
                    // rank r sends its block j to j and receives j's block r at block j of
                    // its receive buffer, on its own communicator and stream.
                    let s = call("ncclSend", || unsafe {
                        nccl::send(
                            src as *const std::ffi::c_void,
                            block,
                            sys::ncclDataType_t::ncclUint64,
                            j as i32,
                            self.comms[r],
                            stream,
                        )
                    })?;
                    check("ncclSend", s)?;
                    // SAFETY: as above, for the receiving side.
                    let v = call("ncclRecv", || unsafe {
                        nccl::recv(
                            dst as *mut std::ffi::c_void,
                            block,
                            sys::ncclDataType_t::ncclUint64,
                            j as i32,
                            self.comms[r],
                            stream,
                        )
                    })?;
                    check("ncclRecv", v)?;
                    self.received[r].fetch_add((block * 8) as u64, Ordering::Relaxed);
                }
            }
            Ok(())
        })
    }
}
