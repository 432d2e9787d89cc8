//! [`DeviceBuffer`]: a pooled device array of `u64` words.
//!
//! A buffer knows its length and its device. It is allocated from the device's binned pool
//! ([`crate::pool`]) and returns there when dropped. Uploads and device-to-device copies are
//! queued on the device's stream (asynchronous); downloads wait for the stream. Every host↔device
//! copy is added to the device's byte counters.
//!
//! Kernel wrappers pass buffers to kernels as raw device addresses ([`DeviceBuffer::device_ptr`]);
//! this is sound because all work of a device is ordered on its one stream and a buffer goes back
//! to the pool (never to the driver) while work that uses it may still be queued.

use std::sync::Arc;

use cudarc::driver::sys::{CUdeviceptr, CUresult};
use cudarc::driver::{result as drv, CudaSlice, DevicePtr};

use crate::device::GpuDevice;
use crate::error::{CudaError, Result};

/// A device array of `len` u64 words, allocated from its device's pool.
pub struct DeviceBuffer {
    slice: Option<CudaSlice<u64>>,
    len: usize,
    device: Arc<GpuDevice>,
}

impl std::fmt::Debug for DeviceBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("device", &self.device.index())
            .field("len", &self.len)
            .finish()
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if let Some(slice) = self.slice.take() {
            let ptr = {
                let (ptr, _sync) = slice.device_ptr(self.device.stream());
                ptr
            };
            self.device.pool.give_back(slice, ptr);
        }
    }
}

impl DeviceBuffer {
    /// Allocates `words` uninitialised words on `device` (pool first, then the driver; on
    /// out-of-memory the pool cache is trimmed and the allocation retried once).
    pub fn alloc(device: &Arc<GpuDevice>, words: usize) -> Result<DeviceBuffer> {
        // A zero-length buffer still owns one word so that it has a valid address.
        let cap = words.max(1);
        let bytes = cap
            .checked_mul(8)
            .ok_or_else(|| CudaError::InvalidArgument(format!("{words} words overflow usize")))?;
        let slice = match device.pool.take(cap) {
            Some(s) => s,
            None => {
                // Some drivers refuse a request larger than the device with another code than
                // CUDA_ERROR_OUT_OF_MEMORY: a request above the free memory is out-of-memory too.
                let too_big = |e: &drv::DriverError| {
                    is_oom(e) || device.free_memory().is_ok_and(|free| bytes > free)
                };
                let s = match Self::driver_alloc(device, cap) {
                    Ok(s) => s,
                    Err(e) if too_big(&e) => {
                        device.pool.trim();
                        Self::driver_alloc(device, cap).map_err(|e| {
                            if too_big(&e) {
                                CudaError::OutOfMemory {
                                    device: device.index(),
                                    requested_bytes: bytes,
                                    free_bytes: device.free_memory().ok(),
                                }
                            } else {
                                e.into()
                            }
                        })?
                    }
                    Err(e) => return Err(e.into()),
                };
                device.pool.record_new(cap);
                s
            }
        };
        let buf = DeviceBuffer {
            slice: Some(slice),
            len: words,
            device: device.clone(),
        };
        device.pool.mark_live(buf.device_ptr(), cap);
        Ok(buf)
    }

    fn driver_alloc(
        device: &Arc<GpuDevice>,
        words: usize,
    ) -> std::result::Result<CudaSlice<u64>, drv::DriverError> {
        // SAFETY: the memory is uninitialised; every public constructor documents this or
        // initialises it (upload, zeroed) before it can be read.
        unsafe { device.stream().alloc::<u64>(words) }
    }

    /// The number of words.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no words.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The size in bytes (`8 · len`).
    pub fn size_bytes(&self) -> usize {
        self.len * 8
    }

    /// The device the buffer lives on.
    pub fn device(&self) -> &Arc<GpuDevice> {
        &self.device
    }

    /// The underlying cudarc slice (its length may exceed [`DeviceBuffer::len`] by one word for
    /// empty buffers).
    pub fn slice(&self) -> &CudaSlice<u64> {
        self.slice
            .as_ref()
            .expect("a live DeviceBuffer always owns its slice")
    }

    /// The raw device address of word 0, for kernel arguments.
    pub fn device_ptr(&self) -> CUdeviceptr {
        let (ptr, _sync) = self.slice().device_ptr(self.device.stream());
        ptr
    }

    /// The raw device address of word `offset` (`offset ≤ len`).
    pub fn device_ptr_at(&self, offset: usize) -> Result<CUdeviceptr> {
        if offset > self.len {
            return Err(CudaError::Shape(format!(
                "offset {offset} is past the end of a buffer of {} words",
                self.len
            )));
        }
        Ok(self.device_ptr() + (offset as u64) * 8)
    }

    /// Checks that `other` lives on the same device.
    pub fn check_same_device(&self, other: &DeviceBuffer) -> Result<()> {
        if Arc::ptr_eq(&self.device, &other.device) {
            Ok(())
        } else {
            Err(CudaError::DeviceMismatch(
                self.device.index(),
                other.device.index(),
            ))
        }
    }

    /// Whether the two buffers share device memory (a buffer overlaps itself).
    pub fn overlaps(&self, other: &DeviceBuffer) -> bool {
        let (a, b) = (self.device_ptr(), other.device_ptr());
        a < b + other.size_bytes() as u64 && b < a + self.size_bytes() as u64
    }

    /// Copies `data` (exactly `len` words) into the buffer; queued on the stream. The host slice
    /// may be reused as soon as this returns.
    pub fn copy_from_host(&mut self, data: &[u64]) -> Result<()> {
        if data.len() != self.len {
            return Err(CudaError::Shape(format!(
                "upload of {} words into a buffer of {} words",
                data.len(),
                self.len
            )));
        }
        self.copy_from_host_at(0, data)
    }

    /// Copies `data` into words `offset .. offset + data.len()`; queued on the stream.
    pub fn copy_from_host_at(&mut self, offset: usize, data: &[u64]) -> Result<()> {
        let end = offset.checked_add(data.len());
        if !matches!(end, Some(e) if e <= self.len) {
            return Err(CudaError::Shape(format!(
                "cannot write {} words at offset {offset} into a buffer of {} words",
                data.len(),
                self.len
            )));
        }
        if data.is_empty() {
            return Ok(());
        }
        let dst = self.device_ptr_at(offset)?;
        let dev = &self.device;
        dev.context().bind_to_thread()?;
        // SAFETY: `dst .. dst + 8·data.len()` lies inside this live allocation (checked above);
        // cuMemcpyHtoDAsync from pageable memory stages the data before it returns.
        unsafe { drv::memcpy_htod_async(dst, data, dev.stream().cu_stream()) }?;
        dev.count_to_device(data.len() * 8);
        Ok(())
    }

    /// Copies the buffer into `out` (exactly `len` words); waits for the stream.
    pub fn to_host_into(&self, out: &mut [u64]) -> Result<()> {
        if out.len() != self.len {
            return Err(CudaError::Shape(format!(
                "download of a buffer of {} words into {} words",
                self.len,
                out.len()
            )));
        }
        self.to_host_range_into(0, out)
    }

    /// Copies words `offset .. offset + out.len()` into `out`; waits for the stream.
    pub fn to_host_range_into(&self, offset: usize, out: &mut [u64]) -> Result<()> {
        let end = offset.checked_add(out.len());
        if !matches!(end, Some(e) if e <= self.len) {
            return Err(CudaError::Shape(format!(
                "cannot read {} words at offset {offset} from a buffer of {} words",
                out.len(),
                self.len
            )));
        }
        if out.is_empty() {
            return Ok(());
        }
        let src = self.device_ptr_at(offset)?;
        let dev = &self.device;
        dev.context().bind_to_thread()?;
        // SAFETY: the source range is inside this live allocation (checked above); the stream
        // is synchronised before `out` is released to the caller.
        unsafe { drv::memcpy_dtoh_async(out, src, dev.stream().cu_stream()) }?;
        dev.synchronize()?;
        dev.count_to_host(out.len() * 8);
        Ok(())
    }

    /// Copies the buffer to a new host vector; waits for the stream.
    pub fn to_host(&self) -> Result<Vec<u64>> {
        let mut out = vec![0u64; self.len];
        self.to_host_into(&mut out)?;
        Ok(out)
    }

    /// Copies the whole buffer into `dst` (same length, same device); queued on the stream.
    pub fn copy_into(&self, dst: &mut DeviceBuffer) -> Result<()> {
        if dst.len != self.len {
            return Err(CudaError::Shape(format!(
                "copy of {} words into a buffer of {} words",
                self.len, dst.len
            )));
        }
        Self::copy_region(self, 0, dst, 0, self.len)
    }

    /// Copies `words` words from `src[src_offset..]` to `dst[dst_offset..]` on the device;
    /// queued on the stream.
    pub fn copy_region(
        src: &DeviceBuffer,
        src_offset: usize,
        dst: &mut DeviceBuffer,
        dst_offset: usize,
        words: usize,
    ) -> Result<()> {
        src.check_same_device(dst)?;
        let fits = |off: usize, len: usize| off.checked_add(words).is_some_and(|e| e <= len);
        if !fits(src_offset, src.len) || !fits(dst_offset, dst.len) {
            return Err(CudaError::Shape(format!(
                "copy of {words} words from offset {src_offset} of {} words to offset \
                 {dst_offset} of {} words is out of bounds",
                src.len, dst.len
            )));
        }
        if words == 0 {
            return Ok(());
        }
        let s = src.device_ptr_at(src_offset)?;
        let d = dst.device_ptr_at(dst_offset)?;
        let dev = &src.device;
        dev.context().bind_to_thread()?;
        // SAFETY: both ranges are inside live allocations of the same device (checked above).
        unsafe { drv::memcpy_dtod_async(d, s, words * 8, dev.stream().cu_stream()) }?;
        Ok(())
    }

    /// Copies `rows` rows of `words` words: row `i` from `src[src_offset + i·src_pitch..]` to
    /// `dst[dst_offset + i·dst_pitch..]` (pitches in words, at least `words`), one 2D copy
    /// queued on the stream (a strided gather or scatter of limbs in one call). `rows = 1` is
    /// [`DeviceBuffer::copy_region`]. The rows of `dst` must not overlap those of `src`.
    ///
    /// Errors: [`CudaError::Shape`] for a row out of bounds or a pitch below `words`;
    /// [`CudaError::DeviceMismatch`] for buffers of two devices; driver errors.
    #[allow(clippy::too_many_arguments)]
    pub fn copy_rows(
        src: &DeviceBuffer,
        src_offset: usize,
        src_pitch: usize,
        dst: &mut DeviceBuffer,
        dst_offset: usize,
        dst_pitch: usize,
        words: usize,
        rows: usize,
    ) -> Result<()> {
        if rows <= 1 || words == 0 {
            let w = if rows == 0 { 0 } else { words };
            return Self::copy_region(src, src_offset, dst, dst_offset, w);
        }
        src.check_same_device(dst)?;
        // The last row's end, without overflow.
        let end = |off: usize, pitch: usize| {
            pitch
                .checked_mul(rows - 1)
                .and_then(|x| x.checked_add(off))
                .and_then(|x| x.checked_add(words))
        };
        let fits = |off, pitch, len| pitch >= words && end(off, pitch).is_some_and(|e| e <= len);
        if !fits(src_offset, src_pitch, src.len) || !fits(dst_offset, dst_pitch, dst.len) {
            return Err(CudaError::Shape(format!(
                "copy of {rows} rows of {words} words (pitches {src_pitch} and {dst_pitch}) from \
                 offset {src_offset} of {} words to offset {dst_offset} of {} words is out of \
                 bounds",
                src.len, dst.len
            )));
        }
        let s = src.device_ptr_at(src_offset)?;
        let d = dst.device_ptr_at(dst_offset)?;
        let dev = &src.device;
        dev.context().bind_to_thread()?;
        use cudarc::driver::sys;
        let copy = sys::CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            srcHost: std::ptr::null(),
            srcDevice: s,
            srcArray: std::ptr::null_mut(),
            srcPitch: src_pitch * 8,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            dstHost: std::ptr::null_mut(),
            dstDevice: d,
            dstArray: std::ptr::null_mut(),
            dstPitch: dst_pitch * 8,
            WidthInBytes: words * 8,
            Height: rows,
        };
        // SAFETY: every row lies inside a live allocation of this device (checked above:
        // pitches at least the row width, the last row inside the buffer); `copy` lives across
        // the call, which only queues the copy on the device's stream (the buffers return to
        // the pool only, so queued work may still use them).
        unsafe { sys::cuMemcpy2DAsync_v2(&copy, dev.stream().cu_stream()) }.result()?;
        Ok(())
    }

    /// A read-only view of the first `words` words, without copying: the buffer of a lower
    /// level read from a higher-level one (limbs outermost, so a level is a prefix).
    ///
    /// The view derefs to a [`DeviceBuffer`] of `words` words that shares this buffer's memory
    /// and borrows it, so the memory outlives every use of the view.
    ///
    /// Errors: [`CudaError::Shape`] if `words` exceeds the buffer's length.
    pub fn prefix(&self, words: usize) -> Result<PrefixView<'_>> {
        if words > self.len {
            return Err(CudaError::Shape(format!(
                "a prefix of {words} words of a buffer of {} words",
                self.len
            )));
        }
        let slice = self.slice();
        // SAFETY: the bitwise copy of the cudarc slice aliases this buffer's allocation and is
        // never dropped (`PrefixView::drop` forgets it), so it neither frees the memory nor
        // returns it to the pool; it is reachable only through `&DeviceBuffer` (no mutation,
        // no move out) for the lifetime `'_` of the borrow of `self`, which keeps the memory
        // alive and unchanged by safe code.
        let alias = unsafe { std::ptr::read(slice) };
        Ok(PrefixView {
            buf: DeviceBuffer {
                slice: Some(alias),
                len: words,
                device: self.device.clone(),
            },
            _borrow: std::marker::PhantomData,
        })
    }

    /// Shortens the buffer to its first `words` words, in place (no copy; the memory stays
    /// allocated until the buffer is dropped): dropping levels of a polynomial without `P`
    /// limbs.
    ///
    /// Errors: [`CudaError::Shape`] if `words` exceeds the buffer's length.
    pub fn truncate(&mut self, words: usize) -> Result<()> {
        if words > self.len {
            return Err(CudaError::Shape(format!(
                "cannot truncate a buffer of {} words to {words} words",
                self.len
            )));
        }
        self.len = words;
        Ok(())
    }

    /// A new buffer with the same contents (device-to-device copy, queued on the stream).
    pub fn try_clone(&self) -> Result<DeviceBuffer> {
        let mut b = DeviceBuffer::alloc(&self.device, self.len)?;
        self.copy_into(&mut b)?;
        Ok(b)
    }

    /// Sets every word to zero; queued on the stream.
    pub fn fill_zero(&mut self) -> Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        let ptr = self.device_ptr();
        let dev = &self.device;
        dev.context().bind_to_thread()?;
        // SAFETY: writes exactly the `8·len` bytes of this live allocation.
        unsafe { drv::memset_d8_async(ptr, 0, self.len * 8, dev.stream().cu_stream()) }?;
        Ok(())
    }
}

fn is_oom(e: &drv::DriverError) -> bool {
    e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY
}

/// A read-only prefix of a [`DeviceBuffer`] ([`DeviceBuffer::prefix`]): derefs to a buffer of
/// the prefix's length that shares the original's memory, borrowed from it.
pub struct PrefixView<'a> {
    /// Aliases the original's slice; its slice is forgotten, never dropped.
    buf: DeviceBuffer,
    _borrow: std::marker::PhantomData<&'a DeviceBuffer>,
}

impl Drop for PrefixView<'_> {
    fn drop(&mut self) {
        // The alias must neither free the memory nor give it back to the pool: the original
        // owns it. `buf` then drops with no slice (its device handle is released as usual).
        if let Some(alias) = self.buf.slice.take() {
            std::mem::forget(alias);
        }
    }
}

impl std::ops::Deref for PrefixView<'_> {
    type Target = DeviceBuffer;
    fn deref(&self) -> &DeviceBuffer {
        &self.buf
    }
}

impl std::fmt::Debug for PrefixView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PrefixView").field(&self.buf).finish()
    }
}
