//! The all-data mode's primitives (`kernels/lite_ops.cu`): CKKS's element-wise, NTT,
//! centred base-conversion and automorphism steps on buffers that stay in LITE's memory form
//! ([`LiteForm::Encrypted`]: the 16-byte block at address `a` is XTS ciphertext under the tweak
//! `AES_K2(a / 16)`) or plain, in any mix. A kernel decrypts in registers after loading and
//! encrypts in registers before storing; plaintext lives only in registers and shared memory.
//!
//! | launch | computes | kernel |
//! |---|---|---|
//! | [`elementwise`] | `out = op(a, b, c, w[r])` ([`EwOp`]) | `lite_ops_ew`, one thread per 16-byte block |
//! | [`ntt`] | negacyclic NTT of every row, in place | `lite_ops_ntt_cols` + `lite_ops_ntt_chunks` (N = R·C) |
//! | [`automorphism`] | `out[r][i] = a[r][perm[i]]` | `lite_ops_automorphism`, two gathers per output block |
//! | [`convert_centered`] | `BaseConverter::convert_centered_rows` | `lite_ops_convert`, one thread per coefficient pair |
//!
//! Every result is the canonical word the host math (`rhea_math`) computes, word for word.
//! Operands are rows of `N` words (`N` = [`LiteRingTables::degree`]); row `r` of an operation
//! over [`Rows`] `{ rows, first_table }` is reduced modulo table limb `first_table + r`. An
//! operand is a buffer and the word offset of its first row, which must be even (a 16-byte
//! block never straddles two rows, and the tweak of a protected view at an offset is its own
//! address: a view decrypts, a copy does not).
//!
//! ```no_run
//! # fn main() -> rhea_cuda::Result<()> {
//! use std::sync::Arc;
//! use rhea_cuda::GpuDevice;
//! use rhea_cuda::lite::{LiteForm, LiteSession};
//! use rhea_cuda::lite::ops::{self, Dst, EwOp, LiteRingTables, Rows, Src};
//! use rhea_cuda::ntt::NttDirection;
//! use rhea_math::{ntt::NttTable, Modulus};
//!
//! let dev = GpuDevice::new(0)?;
//! let n = 1 << 12;
//! let q = Modulus::new(1_152_921_504_606_584_833).unwrap(); // ≡ 1 mod 2^13
//! let tables = LiteRingTables::new(&dev, &[NttTable::new(q, n).unwrap()])?;
//! let session = LiteSession::new()?;
//! let a = session.upload(&dev, &vec![3; n], LiteForm::Encrypted)?;   // ciphertext on the device
//! let mut out = rhea_cuda::lite::LiteBuffer::alloc(&dev, n, LiteForm::Encrypted)?;
//! let rows = Rows { rows: 1, first_table: 0 };
//! ops::elementwise(&session, &tables, EwOp::Mul, Dst::Protected(&mut out, 0),
//!                  Src::Protected(&a, 0), Some(Src::Protected(&a, 0)), None, None, rows)?;
//! ops::ntt(&session, &tables, Dst::Protected(&mut out, 0), rows, NttDirection::Forward)?;
//! let words = session.download(&out)?;                    // decrypted on the host
//! # let _ = words; Ok(()) }
//! ```

use super::kernels::{grid_stride, launch_keyed_source};
use super::*;
use crate::ntt::NttDirection;
use rhea_math::bconv::BaseConverter;
use rhea_math::ntt::NttTable;

/// `kernels/lite_ops.cu`: the all-data mode's kernels.
pub const LITE_OPS: KernelSource = KernelSource {
    name: "lite_ops",
    source: include_str!("../../../kernels/lite_ops.cu"),
    headers: &[COMMON_CUH, LITE_AES_XTS_CUH],
};

/// Every kernel of `kernels/lite_ops.cu`.
pub const LITE_OPS_KERNEL_NAMES: &[&str] = &[
    "lite_ops_ew",
    "lite_ops_automorphism",
    "lite_ops_ntt_cols",
    "lite_ops_ntt_chunks",
    "lite_ops_convert",
];

/// Threads per block of the element-wise, automorphism and NTT kernels.
const OPS_THREADS: u32 = 256;
/// Words of shared memory an NTT iteration holds (`LITE_NTT_WORDS` in `lite_ops.cu`).
const NTT_WORDS: usize = 2048;
/// The largest `log N` the NTT runs in one shared-memory pass per row (`R = 1`).
const NTT_ONE_PASS_LOG: u32 = 11;
/// The largest input basis of [`convert_centered`] (its `t_i` are staged in shared memory).
pub const MAX_CONVERT_INPUTS: usize = 64;
/// Dynamic shared memory the centred conversion may use (the T-tables take 8.25 KiB more; the
/// total stays below the 48 KiB a block gets without opting in).
const CONVERT_SHARED_BYTES: usize = 36 * 1024;
/// The largest grid `y` dimension (rows per launch).
const MAX_GRID_Y: usize = 65_535;

// ---- tables ----------------------------------------------------------------------------------

/// The ring's tables for the all-data kernels: per limb `l` its modulus and its NTT twiddles
/// (`root_powers` / `inv_root_powers` with their Shoup companions, `N^-1`), uploaded once.
#[derive(Debug)]
pub struct LiteRingTables {
    moduli: Arc<DeviceModuli>,
    /// `[limb][4][N]`: root_powers, their Shoup companions, inv_root_powers, theirs.
    twiddles: DeviceBuffer,
    /// `[limb][2]`: `N^-1` and its Shoup companion.
    inv_degree: DeviceBuffer,
    degree: usize,
}

impl LiteRingTables {
    /// Uploads the tables of `tables` (limb `l` = `tables[l]`), all of one degree.
    ///
    /// Errors: [`CudaError::InvalidArgument`] for no tables or tables of different degrees.
    pub fn new(dev: &Arc<GpuDevice>, tables: &[NttTable]) -> Result<Self> {
        let degree = tables
            .first()
            .ok_or_else(|| CudaError::InvalidArgument("LiteRingTables of no limbs".into()))?
            .degree();
        if let Some(t) = tables.iter().find(|t| t.degree() != degree) {
            return Err(CudaError::InvalidArgument(format!(
                "LiteRingTables: tables of degrees {degree} and {}",
                t.degree()
            )));
        }
        let mut tw = Vec::with_capacity(tables.len() * 4 * degree);
        let mut inv = Vec::with_capacity(2 * tables.len());
        for t in tables {
            tw.extend_from_slice(t.root_powers());
            tw.extend_from_slice(t.root_powers_shoup());
            tw.extend_from_slice(t.inv_root_powers());
            tw.extend_from_slice(t.inv_root_powers_shoup());
            inv.push(t.inv_degree());
            inv.push(t.inv_degree_shoup());
        }
        let mods: Vec<_> = tables.iter().map(|t| *t.modulus()).collect();
        Ok(LiteRingTables {
            moduli: DeviceModuli::new(dev, &mods)?,
            twiddles: dev.upload(&tw)?,
            inv_degree: dev.upload(&inv)?,
            degree,
        })
    }

    /// `N`, the words of a row.
    pub fn degree(&self) -> usize {
        self.degree
    }

    /// The number of limbs (tables).
    pub fn len(&self) -> usize {
        self.moduli.len()
    }

    /// Whether there are no limbs (never: [`LiteRingTables::new`] refuses it).
    pub fn is_empty(&self) -> bool {
        self.moduli.is_empty()
    }

    /// The device the tables live on.
    pub fn device(&self) -> &Arc<GpuDevice> {
        self.twiddles.device()
    }

    /// The moduli table (limb `l` at entry `l`).
    pub fn moduli(&self) -> &DeviceModuli {
        &self.moduli
    }
}

// ---- operands --------------------------------------------------------------------------------

/// `rows` consecutive rows (limbs) of `N` words; row `r` is reduced modulo table limb
/// `first_table + r`.
#[derive(Clone, Copy, Debug)]
pub struct Rows {
    /// The number of rows (≥ 1).
    pub rows: usize,
    /// The table limb of row 0.
    pub first_table: usize,
}

/// An input: a buffer and the word offset of its first row (even: 16-byte aligned), plain or
/// LITE ciphertext ([`LiteForm::Encrypted`]; the tweak is the address, so a view at an offset
/// decrypts). `Out` = the destination's own words at the destination's offset (in place).
#[derive(Clone, Copy)]
pub enum Src<'a> {
    /// A plain buffer at a word offset.
    Plain(&'a DeviceBuffer, usize),
    /// A protected buffer at a word offset.
    Protected(&'a LiteBuffer, usize),
    /// The destination's words (in place).
    Out,
}

/// An output: a buffer and the word offset of its first row (even), plain or protected.
pub enum Dst<'a> {
    /// A plain buffer at a word offset.
    Plain(&'a mut DeviceBuffer, usize),
    /// A protected buffer ([`LiteForm::Encrypted`]) at a word offset.
    Protected(&'a mut LiteBuffer, usize),
}

/// An operand resolved to its device address.
#[derive(Clone, Copy, Debug)]
struct View {
    /// The address of its first word.
    ptr: u64,
    /// Whether it is ciphertext.
    protected: bool,
    /// Words from the offset to the end of the buffer.
    avail: usize,
}

impl View {
    fn end(&self, words: usize) -> u64 {
        self.ptr + 8 * words as u64
    }
    /// Whether `[ptr, ptr + 8·words)` and `other`'s `[ptr, ptr + 8·other_words)` intersect.
    fn overlaps(&self, words: usize, other: &View, other_words: usize) -> bool {
        self.ptr < other.end(other_words) && other.ptr < self.end(words)
    }
}

fn view_of(
    what: &str,
    dev: &Arc<GpuDevice>,
    raw: &DeviceBuffer,
    len: usize,
    offset: usize,
    protected: bool,
) -> Result<View> {
    if !Arc::ptr_eq(raw.device(), dev) {
        return Err(CudaError::InvalidArgument(format!(
            "{what}: a buffer on another device than the tables"
        )));
    }
    if offset % 2 != 0 {
        return Err(CudaError::InvalidArgument(format!(
            "{what}: word offset {offset} is odd (rows start on 16-byte blocks)"
        )));
    }
    if offset > len {
        return Err(CudaError::Shape(format!(
            "{what}: word offset {offset} beyond a buffer of {len} words"
        )));
    }
    if raw.device_ptr() % 16 != 0 {
        return Err(CudaError::InvalidArgument(format!(
            "{what}: a buffer at {:#x} is not 16-byte aligned",
            raw.device_ptr()
        )));
    }
    Ok(View {
        ptr: raw.device_ptr() + 8 * offset as u64,
        protected,
        avail: len - offset,
    })
}

fn protected_view(what: &str, dev: &Arc<GpuDevice>, b: &LiteBuffer, offset: usize) -> Result<View> {
    if b.form() != LiteForm::Encrypted {
        return Err(CudaError::InvalidArgument(format!(
            "{what}: a protected operand must be LiteForm::Encrypted (dense); got {:?}",
            b.form()
        )));
    }
    view_of(what, dev, b.raw(), b.len(), offset, true)
}

impl Dst<'_> {
    fn view(&self, what: &str, dev: &Arc<GpuDevice>) -> Result<View> {
        match self {
            Dst::Plain(b, off) => view_of(what, dev, b, b.len(), *off, false),
            Dst::Protected(b, off) => protected_view(what, dev, b, *off),
        }
    }
}

impl Src<'_> {
    fn view(&self, what: &str, dev: &Arc<GpuDevice>, out: &View) -> Result<View> {
        match self {
            Src::Plain(b, off) => view_of(what, dev, b, b.len(), *off, false),
            Src::Protected(b, off) => protected_view(what, dev, b, *off),
            Src::Out => Ok(*out),
        }
    }
}

fn need(what: &str, v: &View, words: usize) -> Result<()> {
    if v.avail < words {
        return Err(CudaError::Shape(format!(
            "{what}: {} words from the offset, {words} needed",
            v.avail
        )));
    }
    Ok(())
}

fn check_rows(t: &LiteRingTables, rows: Rows) -> Result<()> {
    if rows.rows == 0 || rows.first_table.saturating_add(rows.rows) > t.len() {
        return Err(CudaError::Shape(format!(
            "rows {}..{} of a table of {} limbs (at least one row)",
            rows.first_table,
            rows.first_table.saturating_add(rows.rows),
            t.len()
        )));
    }
    Ok(())
}

fn words_of(t: &LiteRingTables, rows: Rows) -> Result<usize> {
    rows.rows
        .checked_mul(t.degree)
        .ok_or_else(|| CudaError::Shape(format!("{} rows overflow", rows.rows)))
}

// ---- element-wise ------------------------------------------------------------------------------

/// The element-wise operations of [`elementwise`] (`out = op(a, b, c, w[r])`, every word
/// canonical modulo its row's `q_r`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EwOp {
    /// `a + b`
    Add,
    /// `a - b`
    Sub,
    /// `a * b`
    Mul,
    /// `a * b + c`
    MulAdd,
    /// `a * w[r]`
    MulScalar,
    /// `a + w[r]`
    AddScalar,
    /// `(a - b) * w[r]` (the ModDown / rescale epilogue)
    SubMulScalar,
    /// `a` (re-encrypts at the new address; plain ↔ protected conversion)
    Copy,
    /// Row `r`: `((a's row 0 word, any u64) mod q_r + w[r]) mod q_r` (rescale's last-limb
    /// spread).
    ReduceBroadcast,
}

impl EwOp {
    /// The kernel's op code (`EW_*` in `lite_ops.cu`).
    fn code(self) -> u32 {
        self as u32
    }
    fn needs_b(self) -> bool {
        matches!(
            self,
            EwOp::Add | EwOp::Sub | EwOp::Mul | EwOp::MulAdd | EwOp::SubMulScalar
        )
    }
    fn needs_c(self) -> bool {
        self == EwOp::MulAdd
    }
    fn needs_w(self) -> bool {
        matches!(
            self,
            EwOp::MulScalar | EwOp::AddScalar | EwOp::SubMulScalar | EwOp::ReduceBroadcast
        )
    }
}

/// Launch arguments of `lite_ops_ew` (`struct LiteEwArgs`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct EwArgs {
    out: u64,
    a: u64,
    b: u64,
    c: u64,
    w: u64,
    moduli: u64,
    words: u64,
    log_n: u32,
    first_table: u32,
    op: u32,
    flags: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for EwArgs {}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<EwArgs>() == 72);
    assert!(offset_of!(EwArgs, words) == 48);
    assert!(offset_of!(EwArgs, log_n) == 56);
    assert!(offset_of!(EwArgs, flags) == 68);
};

/// `out = op(a, b, c)` over `rows` (each row `r` modulo table limb `first_table + r`); `w` one
/// plain u64 per row (the `r`-th word for row `r`; reduced modulo `q_r` in the kernel) for the
/// scalar ops. Inputs are canonical words (`< q_r`), except [`EwOp::ReduceBroadcast`]'s `a`
/// (its row 0, any u64). Operands the op does not read are ignored.
///
/// In place: [`Src::Out`] for any input (allowed for every op but
/// [`EwOp::ReduceBroadcast`]). Otherwise an input may not overlap the output (one thread reads
/// and writes one block at a time; a shifted overlap would race).
///
/// Errors: [`CudaError::InvalidArgument`] for a protected operand not in
/// [`LiteForm::Encrypted`], an odd offset, a missing `b`, `c` or `w`, an input overlapping the
/// output other than in place, or buffers on another device than `t`; [`CudaError::Shape`] for
/// rows beyond the table or operands shorter than the rows (`w`: shorter than `rows.rows`).
#[allow(clippy::too_many_arguments)]
pub fn elementwise(
    session: &LiteSession,
    t: &LiteRingTables,
    op: EwOp,
    out: Dst,
    a: Src,
    b: Option<Src>,
    c: Option<Src>,
    w: Option<&DeviceBuffer>,
    rows: Rows,
) -> Result<()> {
    check_rows(t, rows)?;
    let dev = t.device();
    let words = words_of(t, rows)?;
    let n = t.degree;
    let o = out.view("elementwise (out)", dev)?;
    need("elementwise (out)", &o, words)?;
    let bcast = op == EwOp::ReduceBroadcast;
    // the words each input is read over, and its view
    let input = |what: &str, s: Src, len: usize| -> Result<View> {
        let v = s.view(what, dev, &o)?;
        need(what, &v, len)?;
        let in_place = matches!(s, Src::Out) || (v.ptr == o.ptr && v.protected == o.protected);
        if bcast && (matches!(s, Src::Out) || v.overlaps(len, &o, words)) {
            return Err(CudaError::InvalidArgument(format!(
                "{what}: ReduceBroadcast's source overlaps its output"
            )));
        }
        if !in_place && v.overlaps(len, &o, words) {
            return Err(CudaError::InvalidArgument(format!(
                "{what}: an input overlapping the output at another address or form (in place is \
                 Src::Out)"
            )));
        }
        Ok(v)
    };
    let va = input("elementwise (a)", a, if bcast { n } else { words })?;
    let mut args = EwArgs {
        out: o.ptr,
        a: va.ptr,
        moduli: t.moduli.device_ptr(),
        words: words as u64,
        log_n: n.trailing_zeros(),
        first_table: rows.first_table as u32,
        op: op.code(),
        flags: u32::from(o.protected) | u32::from(va.protected) << 1,
        ..Default::default()
    };
    if op.needs_b() {
        let b = b.ok_or_else(|| {
            CudaError::InvalidArgument(format!("elementwise {op:?}: needs an operand b"))
        })?;
        let vb = input("elementwise (b)", b, words)?;
        args.b = vb.ptr;
        args.flags |= u32::from(vb.protected) << 2;
    }
    if op.needs_c() {
        let c = c.ok_or_else(|| {
            CudaError::InvalidArgument(format!("elementwise {op:?}: needs an operand c"))
        })?;
        let vc = input("elementwise (c)", c, words)?;
        args.c = vc.ptr;
        args.flags |= u32::from(vc.protected) << 3;
    }
    if op.needs_w() {
        let w = w.ok_or_else(|| {
            CudaError::InvalidArgument(format!("elementwise {op:?}: needs the per-row words w"))
        })?;
        let vw = view_of("elementwise (w)", dev, w, w.len(), 0, false)?;
        need("elementwise (w)", &vw, rows.rows)?;
        args.w = vw.ptr;
    }
    launch_keyed_source(
        dev,
        session,
        &LITE_OPS,
        "lite_ops_ew",
        grid_stride(dev, words / 2),
        &args,
    )
}

// ---- automorphism ------------------------------------------------------------------------------

/// Launch arguments of `lite_ops_automorphism` (`struct LiteAutArgs`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct AutArgs {
    out: u64,
    a: u64,
    perm: u64,
    words: u64,
    log_n: u32,
    flags: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for AutArgs {}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<AutArgs>() == 40);
    assert!(offset_of!(AutArgs, log_n) == 32);
};

/// `out[r][i] = a[r][perm[i]]` for every row. `perm`: `N` plain **u64** words on the device, one
/// source index per output index (any map, not only permutations; an index is read modulo `N`,
/// so an out-of-range index never reads outside the row — keep them below `N`). `out` must not
/// overlap `a` ([`Src::Out`] is refused). The residues are moved, not reduced: any words.
///
/// For a Galois automorphism `X ↦ X^g` in NTT (bit-reversed evaluation) form this is the usual
/// index permutation of the unprotected kernel, computed on the host.
///
/// Errors: as [`elementwise`], plus [`CudaError::InvalidArgument`] for an overlap of `out` and
/// `a`, and [`CudaError::Shape`] for a `perm` shorter than `N`.
pub fn automorphism(
    session: &LiteSession,
    t: &LiteRingTables,
    out: Dst,
    a: Src,
    perm: &DeviceBuffer,
    rows: Rows,
) -> Result<()> {
    check_rows(t, rows)?;
    let dev = t.device();
    let words = words_of(t, rows)?;
    let o = out.view("automorphism (out)", dev)?;
    need("automorphism (out)", &o, words)?;
    if matches!(a, Src::Out) {
        return Err(CudaError::InvalidArgument(
            "automorphism: the output must not be the input (Src::Out)".into(),
        ));
    }
    let va = a.view("automorphism (a)", dev, &o)?;
    need("automorphism (a)", &va, words)?;
    if va.overlaps(words, &o, words) {
        return Err(CudaError::InvalidArgument(
            "automorphism: the output overlaps the input".into(),
        ));
    }
    let vp = view_of("automorphism (perm)", dev, perm, perm.len(), 0, false)?;
    need("automorphism (perm)", &vp, t.degree)?;
    let args = AutArgs {
        out: o.ptr,
        a: va.ptr,
        perm: vp.ptr,
        words: words as u64,
        log_n: t.degree.trailing_zeros(),
        flags: u32::from(o.protected) | u32::from(va.protected) << 1,
    };
    launch_keyed_source(
        dev,
        session,
        &LITE_OPS,
        "lite_ops_automorphism",
        grid_stride(dev, words / 2),
        &args,
    )
}

// ---- NTT -------------------------------------------------------------------------------------

/// Launch arguments of the NTT kernels (`struct LiteNttArgs`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct NttArgs {
    data: u64,
    moduli: u64,
    tw: u64,
    ninv: u64,
    first_table: u32,
    log_n: u32,
    log_r: u32,
    group: u32,
    flags: u32,
    pad: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for NttArgs {}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<NttArgs>() == 56);
    assert!(offset_of!(NttArgs, first_table) == 32);
    assert!(offset_of!(NttArgs, flags) == 48);
};

/// How [`ntt`] splits `N = R·C`: `(log R, column pairs per iteration, chunks per iteration)`.
/// `log R = 0` for `log N ≤ 11` (one pass over the whole row in shared memory); otherwise
/// `R = 2^⌈log N / 2⌉` and the groups fill [`NTT_WORDS`] words of shared memory.
fn ntt_split(log_n: u32) -> (u32, usize, usize) {
    if log_n <= NTT_ONE_PASS_LOG {
        return (0, 1, 1);
    }
    let log_r = log_n.div_ceil(2);
    let (r, c) = (1usize << log_r, 1usize << (log_n - log_r));
    let cols = (NTT_WORDS / (2 * r)).clamp(1, c / 2);
    let chunks = (NTT_WORDS / c).clamp(1, r);
    (log_r, cols, chunks)
}

/// In-place negacyclic NTT of every row (canonical words in and out), equal to
/// `NttTable::forward` / `inverse` of table limb `first_table + r` for row `r`: two phases per
/// transform in shared memory (`N = R·C`, `R = 2^⌈log N / 2⌉`; the first `log R` stages on
/// columns, then the rest on chunks of `C` words; the inverse mirrors it, times `N^-1`), or one
/// pass for `N ≤ 2^11`. Each 16-byte block is decrypted once per phase and re-encrypted at its
/// own address with the same tweak.
///
/// Errors: as [`elementwise`] ([`CudaError::Shape`] also for more than 65 535 rows).
pub fn ntt(
    session: &LiteSession,
    t: &LiteRingTables,
    buf: Dst,
    rows: Rows,
    dir: NttDirection,
) -> Result<()> {
    check_rows(t, rows)?;
    if rows.rows > MAX_GRID_Y {
        return Err(CudaError::Shape(format!(
            "an NTT of {} rows (at most {MAX_GRID_Y} per launch)",
            rows.rows
        )));
    }
    let dev = t.device();
    let words = words_of(t, rows)?;
    let v = buf.view("ntt", dev)?;
    need("ntt", &v, words)?;
    let log_n = t.degree.trailing_zeros();
    let (log_r, cols, chunks) = ntt_split(log_n);
    let inverse = dir == NttDirection::Inverse;
    let mut args = NttArgs {
        data: v.ptr,
        moduli: t.moduli.device_ptr(),
        tw: t.twiddles.device_ptr(),
        ninv: t.inverse_degree_ptr(),
        first_table: rows.first_table as u32,
        log_n,
        log_r,
        ..Default::default()
    };
    let base = u32::from(v.protected) | u32::from(inverse) << 1;
    let sms = dev.multiprocessor_count().max(1) as usize;
    let run = |args: &mut NttArgs, kernel: &str, group: usize, iters: usize, scale: bool| {
        args.group = group as u32;
        args.flags = base | u32::from(scale) << 2;
        // enough blocks for ~4 per SM over all rows, at most one per iteration
        let gx = (4 * sms).div_ceil(rows.rows).clamp(1, iters.max(1));
        let cfg = LaunchConfig {
            grid_dim: (gx as u32, rows.rows as u32, 1),
            block_dim: (OPS_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        launch_keyed_source(dev, session, &LITE_OPS, kernel, cfg, &*args)
    };
    let (r, c) = (1usize << log_r, t.degree >> log_r);
    if log_r == 0 {
        return run(&mut args, "lite_ops_ntt_chunks", 1, 1, inverse);
    }
    if !inverse {
        run(&mut args, "lite_ops_ntt_cols", cols, c / (2 * cols), false)?;
        run(&mut args, "lite_ops_ntt_chunks", chunks, r / chunks, false)
    } else {
        run(&mut args, "lite_ops_ntt_chunks", chunks, r / chunks, false)?;
        run(&mut args, "lite_ops_ntt_cols", cols, c / (2 * cols), true)
    }
}

impl LiteRingTables {
    fn inverse_degree_ptr(&self) -> u64 {
        self.inv_degree.device_ptr()
    }
}

mod convert;
pub use convert::{convert_centered, LiteConverter};

#[cfg(test)]
mod tests {
    use super::convert::convert_threads;
    use super::*;

    #[test]
    fn ntt_split_fits_shared_memory() {
        for log_n in 1..=17u32 {
            let (log_r, cols, chunks) = ntt_split(log_n);
            let n = 1usize << log_n;
            if log_r == 0 {
                assert!(n <= NTT_WORDS, "log N {log_n}");
                continue;
            }
            let (r, c) = (1usize << log_r, n >> log_r);
            assert_eq!(r * c, n);
            assert!(c >= 2 && r >= 2, "log N {log_n}");
            assert!(
                2 * cols * r <= NTT_WORDS && (c / 2) % cols == 0,
                "log N {log_n}: cols"
            );
            assert!(
                chunks * c <= NTT_WORDS && r % chunks == 0,
                "log N {log_n}: chunks"
            );
        }
    }

    #[test]
    fn convert_threads_fit_shared_memory() {
        for l in 1..=MAX_CONVERT_INPUTS {
            let t = convert_threads(l) as usize;
            assert!(t.is_power_of_two() && (32..=256).contains(&t), "L {l}: {t}");
            assert!(16 * l * t <= CONVERT_SHARED_BYTES, "L {l}: {t} threads");
        }
        assert_eq!(convert_threads(1), 256);
        assert_eq!(convert_threads(64), 32);
    }

    #[test]
    fn ew_op_codes_match_the_kernel() {
        // EW_ADD … EW_REDUCE_BROADCAST in lite_ops.cu, in this order.
        let src = LITE_OPS.source;
        let ops = [
            (EwOp::Add, "EW_ADD 0u"),
            (EwOp::Sub, "EW_SUB 1u"),
            (EwOp::Mul, "EW_MUL 2u"),
            (EwOp::MulAdd, "EW_MUL_ADD 3u"),
            (EwOp::MulScalar, "EW_MUL_SCALAR 4u"),
            (EwOp::AddScalar, "EW_ADD_SCALAR 5u"),
            (EwOp::SubMulScalar, "EW_SUB_MUL_SCALAR 6u"),
            (EwOp::Copy, "EW_COPY 7u"),
            (EwOp::ReduceBroadcast, "EW_REDUCE_BROADCAST 8u"),
        ];
        for (op, def) in ops {
            assert!(src.contains(&format!("#define {def}")), "{op:?}: {def}");
            let code: u32 = def
                .rsplit(' ')
                .next()
                .unwrap()
                .trim_end_matches('u')
                .parse()
                .unwrap();
            assert_eq!(op.code(), code, "{op:?}");
        }
    }
}
