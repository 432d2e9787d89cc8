//! The benchmark kernels, plain and LITE: element-wise multiply-add and one NTT stage
//! (regular), the automorphism gather and a CSR sparse matrix-vector product (irregular).

use super::*;

// ---- benchmark kernels -------------------------------------------------------------------------

/// The shuffle optimisations of a LITE kernel (compile-time parameters of its variants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shuffle {
    /// Masked shuffle: the participating lanes from `__ballot_sync` before the divergent code;
    /// off, every lane runs the warp's longest path (full-mask shuffles).
    pub masked: bool,
    /// Delayed shuffle: every load of an iteration is issued before the first decryption.
    pub delayed: bool,
}

impl Shuffle {
    /// Both optimisations on.
    pub const OPTIMISED: Shuffle = Shuffle {
        masked: true,
        delayed: true,
    };
    /// Both off (the seed's naive port).
    pub const NAIVE: Shuffle = Shuffle {
        masked: false,
        delayed: false,
    };
}

fn bit(b: bool) -> u8 {
    u8::from(b)
}

/// How the element-wise kernel reads and writes its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EwAccess {
    /// One word per thread: LITE's word-granular entry points (two lanes per block).
    Word,
    /// One 16-byte block (two words) per thread: the v4 entry points.
    V4,
}

/// The operands of [`mul_add`]: `out = a·b + c mod q_l` over `limbs` limbs of `degree` words
/// (`[limb][N]`), limb `l` reduced modulo `moduli[l]`; inputs canonical (`< q`).
#[derive(Clone, Copy, Debug)]
pub struct MulAdd<'a> {
    /// First factor.
    pub a: &'a LiteBuffer,
    /// Second factor.
    pub b: &'a LiteBuffer,
    /// Addend.
    pub c: &'a LiteBuffer,
    /// The limbs' moduli (at least `limbs`).
    pub moduli: &'a DeviceModuli,
    /// Words per limb, a power of two.
    pub degree: usize,
    /// Limbs.
    pub limbs: usize,
}

/// Launch arguments of the element-wise kernels (`struct LiteEwArgs`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct EwArgs {
    out: u64,
    a: u64,
    b: u64,
    c: u64,
    moduli: u64,
    words: u64,
    log_n: u32,
    pad: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for EwArgs {}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<EwArgs>() == 56);
    assert!(offset_of!(EwArgs, moduli) == 32);
    assert!(offset_of!(EwArgs, words) == 40);
    assert!(offset_of!(EwArgs, log_n) == 48);
};

/// The kernel [`mul_add`] launches for these forms, access and shuffle options.
///
/// Errors: [`CudaError::InvalidArgument`] for mixed or padded inputs, a padded output, or a
/// variant that is not instantiated.
pub fn mul_add_kernel(
    inputs: LiteForm,
    output: LiteForm,
    access: EwAccess,
    shuffle: Shuffle,
) -> Result<&'static str> {
    if inputs == LiteForm::Padded || output == LiteForm::Padded {
        return Err(CudaError::InvalidArgument(
            "the element-wise kernels read and write dense operands (no padding)".into(),
        ));
    }
    let (i, o) = (inputs.encrypted(), output.encrypted());
    let name = match (i || o, access) {
        (false, EwAccess::Word) => "lite_ew_plain".to_string(),
        (false, EwAccess::V4) => "lite_ew_plain_v2".to_string(),
        (true, EwAccess::Word) => format!(
            "lite_ew_word_m{}_d{}_i{}_o{}",
            bit(shuffle.masked),
            bit(shuffle.delayed),
            bit(i),
            bit(o)
        ),
        (true, EwAccess::V4) => {
            format!(
                "lite_ew_v4_d{}_i{}_o{}",
                bit(shuffle.delayed),
                bit(i),
                bit(o)
            )
        }
    };
    checked_name(name)
}

fn common_form(what: &str, bufs: &[&LiteBuffer]) -> Result<LiteForm> {
    let f = bufs[0].form;
    if bufs.iter().any(|b| b.form != f) {
        return Err(CudaError::InvalidArgument(format!(
            "the inputs of {what} must share one form (all plain, all encrypted or all padded)"
        )));
    }
    Ok(f)
}

fn check_len(what: &str, b: &LiteBuffer, len: usize) -> Result<()> {
    if b.len != len {
        return Err(CudaError::Shape(format!(
            "{what} has {} words; {len} needed",
            b.len
        )));
    }
    Ok(())
}

/// `out = a·b + c mod q` word by word (the regular benchmark), plain when every operand is
/// plain, else through LITE (inputs and output each encrypted or plain: partial encryption).
///
/// Errors: [`CudaError::Shape`] for operands of the wrong length, a degree that is not a power
/// of two or too few moduli; [`CudaError::InvalidArgument`] as [`mul_add_kernel`], or for the
/// full-mask word variant on a word count that is not a multiple of 32.
pub fn mul_add(
    session: &LiteSession,
    out: &mut LiteBuffer,
    op: &MulAdd<'_>,
    access: EwAccess,
    shuffle: Shuffle,
) -> Result<()> {
    let inputs = common_form("mul_add", &[op.a, op.b, op.c])?;
    let kernel = mul_add_kernel(inputs, out.form, access, shuffle)?;
    if op.degree < 2 || !op.degree.is_power_of_two() || op.limbs == 0 {
        return Err(CudaError::Shape(format!(
            "{} limbs of degree {} (a power of two ≥ 2)",
            op.limbs, op.degree
        )));
    }
    if op.moduli.len() < op.limbs {
        return Err(CudaError::Shape(format!(
            "{} limbs, {} moduli",
            op.limbs,
            op.moduli.len()
        )));
    }
    let words = op.degree * op.limbs;
    for (what, b) in [("a", op.a), ("b", op.b), ("c", op.c)] {
        check_len(what, b, words)?;
        b.raw.check_same_device(&out.raw)?;
    }
    check_len("out", out, words)?;
    let lite = inputs.encrypted() || out.form.encrypted();
    if lite && access == EwAccess::Word && !shuffle.masked && words % 32 != 0 {
        return Err(CudaError::InvalidArgument(format!(
            "the full-mask variant needs whole warps: {words} words is not a multiple of 32"
        )));
    }
    let dev = out.raw.device().clone();
    let args = EwArgs {
        out: out.ptr(),
        a: op.a.ptr(),
        b: op.b.ptr(),
        c: op.c.ptr(),
        moduli: op.moduli.device_ptr(),
        words: words as u64,
        log_n: op.degree.trailing_zeros(),
        pad: 0,
    };
    let items = match access {
        EwAccess::Word => words,
        EwAccess::V4 => words / 2,
    };
    let cfg = grid_stride(&dev, items);
    if lite {
        launch_keyed(&dev, session, kernel, cfg, &args)
    } else {
        launch_plain(&dev, kernel, cfg, &args)
    }
}

/// Launch arguments of the NTT-stage kernels (`struct LiteNttStageArgs`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct NttStageArgs {
    out: u64,
    input: u64,
    tw: u64,
    moduli: u64,
    words: u64,
    log_n: u32,
    log_h: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for NttStageArgs {}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<NttStageArgs>() == 48);
    assert!(offset_of!(NttStageArgs, words) == 32);
    assert!(offset_of!(NttStageArgs, log_h) == 44);
};

/// The operands of [`ntt_stage`]: one radix-2 Cooley–Tukey stage over `limbs` limbs of `degree`
/// words, out of place. In limb `l`, butterfly `(i, i + h)` of group `g = ⌊(i mod N) / 2h⌋`
/// gives `x + w·y` and `x − w·y` mod `q_l` with `w = twiddles[l · N / 2h + g]`; inputs and
/// twiddles below `q_l`. The twiddles are public and plain.
#[derive(Clone, Copy, Debug)]
pub struct NttStage<'a> {
    /// The input words.
    pub input: &'a LiteBuffer,
    /// `limbs · N / (2h)` plain twiddles.
    pub twiddles: &'a DeviceBuffer,
    /// The limbs' moduli (at least `limbs`).
    pub moduli: &'a DeviceModuli,
    /// Words per limb, a power of two.
    pub degree: usize,
    /// Limbs.
    pub limbs: usize,
    /// The butterfly distance `h`: a power of two, `2 ≤ h < N`.
    pub half: usize,
}

/// The kernel [`ntt_stage`] launches for these forms and delayed-shuffle option.
///
/// Errors: [`CudaError::InvalidArgument`] for a padded operand or a variant that is not
/// instantiated.
pub fn ntt_stage_kernel(input: LiteForm, output: LiteForm, delayed: bool) -> Result<&'static str> {
    if input == LiteForm::Padded || output == LiteForm::Padded {
        return Err(CudaError::InvalidArgument(
            "the NTT stage reads and writes dense operands (no padding)".into(),
        ));
    }
    let (i, o) = (input.encrypted(), output.encrypted());
    if !i && !o {
        return checked_name("lite_ntt_stage_plain".into());
    }
    checked_name(format!(
        "lite_ntt_stage_v4_d{}_i{}_o{}",
        bit(delayed),
        bit(i),
        bit(o)
    ))
}

/// One radix-2 NTT stage (the second regular benchmark; see [`NttStage`]): two butterflies,
/// i.e. a 16-byte block at `i` and one at `i + h`, per thread. Plain when both buffers are,
/// else through LITE's v4 entry points.
///
/// Errors: [`CudaError::Shape`] for operands of the wrong length, a degree or `h` out of range,
/// or too few moduli; [`CudaError::InvalidArgument`] as [`ntt_stage_kernel`].
pub fn ntt_stage(
    session: &LiteSession,
    out: &mut LiteBuffer,
    op: &NttStage<'_>,
    delayed: bool,
) -> Result<()> {
    let kernel = ntt_stage_kernel(op.input.form, out.form, delayed)?;
    let (n, h) = (op.degree, op.half);
    if !n.is_power_of_two() || !h.is_power_of_two() || h < 2 || h >= n || op.limbs == 0 {
        return Err(CudaError::Shape(format!(
            "an NTT stage of distance {h} over {} limbs of degree {n} (powers of two, 2 ≤ h < N)",
            op.limbs
        )));
    }
    if op.moduli.len() < op.limbs {
        return Err(CudaError::Shape(format!(
            "{} limbs, {} moduli",
            op.limbs,
            op.moduli.len()
        )));
    }
    let words = n * op.limbs;
    check_len("input", op.input, words)?;
    check_len("out", out, words)?;
    if op.twiddles.len() != op.limbs * n / (2 * h) {
        return Err(CudaError::Shape(format!(
            "{} twiddles; {} limbs of {} groups need {}",
            op.twiddles.len(),
            op.limbs,
            n / (2 * h),
            op.limbs * n / (2 * h)
        )));
    }
    op.input.raw.check_same_device(&out.raw)?;
    op.twiddles.check_same_device(&out.raw)?;
    let dev = out.raw.device().clone();
    let args = NttStageArgs {
        out: out.ptr(),
        input: op.input.ptr(),
        tw: op.twiddles.device_ptr(),
        moduli: op.moduli.device_ptr(),
        words: words as u64,
        log_n: n.trailing_zeros(),
        log_h: h.trailing_zeros(),
    };
    let cfg = grid_stride(&dev, words / 4);
    if op.input.form.encrypted() || out.form.encrypted() {
        launch_keyed(&dev, session, kernel, cfg, &args)
    } else {
        launch_plain(&dev, kernel, cfg, &args)
    }
}

/// Launch arguments of the gather kernels (`struct LiteGatherArgs`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct GatherArgs {
    out: u64,
    input: u64,
    n: u64,
    g: u64,
    words: u64,
    log_n: u32,
    pad: u32,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for GatherArgs {}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<GatherArgs>() == 48);
    assert!(offset_of!(GatherArgs, words) == 32);
    assert!(offset_of!(GatherArgs, log_n) == 40);
};

/// The kernel [`gather`] launches for these forms and mask option.
///
/// Errors: [`CudaError::InvalidArgument`] for a variant that is not instantiated.
pub fn gather_kernel(input: LiteForm, output: LiteForm, masked: bool) -> Result<&'static str> {
    let (i, o) = (input.encrypted(), output.encrypted());
    if !i && !o {
        return checked_name("lite_gather_plain".into());
    }
    checked_name(format!(
        "lite_gather_m{}_pi{}_po{}_i{}_o{}",
        bit(masked),
        bit(input == LiteForm::Padded),
        bit(output == LiteForm::Padded),
        bit(i),
        bit(o)
    ))
}

/// The NTT-domain automorphism `σ_g` of `rows` rows of `degree` words as a gather (the
/// irregular benchmark): `out[r][i] = input[r][j(i)]`, `j` the index map of
/// [`crate::automorphism::apply_ntt`]. Plain when both buffers are; else through LITE, each
/// buffer plain, encrypted or padded (selective padding: only `out` padded).
///
/// Errors: [`CudaError::Shape`] for buffers that do not hold `rows · degree` words or a degree
/// that is not a power of two; [`CudaError::InvalidArgument`] for an even Galois element, or as
/// [`gather_kernel`].
pub fn gather(
    session: &LiteSession,
    out: &mut LiteBuffer,
    input: &LiteBuffer,
    galois: u64,
    degree: usize,
    rows: usize,
    masked: bool,
) -> Result<()> {
    let kernel = gather_kernel(input.form, out.form, masked)?;
    if degree < 2 || !degree.is_power_of_two() || rows == 0 {
        return Err(CudaError::Shape(format!(
            "{rows} rows of degree {degree} (a power of two ≥ 2)"
        )));
    }
    if galois % 2 == 0 {
        return Err(CudaError::InvalidArgument(format!(
            "the Galois element must be odd, got {galois}"
        )));
    }
    let words = degree * rows;
    check_len("input", input, words)?;
    check_len("out", out, words)?;
    input.raw.check_same_device(&out.raw)?;
    let lite = input.form.encrypted() || out.form.encrypted();
    if lite && !masked && words % 32 != 0 {
        return Err(CudaError::InvalidArgument(format!(
            "the full-mask variant needs whole warps: {words} words is not a multiple of 32"
        )));
    }
    let dev = out.raw.device().clone();
    let args = GatherArgs {
        out: out.ptr(),
        input: input.ptr(),
        n: degree as u64,
        g: galois & (2 * degree as u64 - 1),
        words: words as u64,
        log_n: degree.trailing_zeros(),
        pad: 0,
    };
    let cfg = grid_stride(&dev, words);
    if lite {
        launch_keyed(&dev, session, kernel, cfg, &args)
    } else {
        launch_plain(&dev, kernel, cfg, &args)
    }
}

/// A sparse matrix in CSR form with entries modulo a prime, checked on construction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsrMatrix {
    row_ptr: Vec<u64>,
    col: Vec<u64>,
    val: Vec<u64>,
    cols: usize,
}

impl CsrMatrix {
    /// A matrix of `row_ptr.len() - 1` rows and `cols` columns: row `r` holds entries
    /// `row_ptr[r] .. row_ptr[r + 1]` of `col` / `val`.
    ///
    /// Errors: [`CudaError::InvalidArgument`] when `row_ptr` is empty, does not start at 0,
    /// decreases or does not end at `col.len()`, when `col` and `val` differ in length, or a
    /// column index is `≥ cols`.
    pub fn new(row_ptr: Vec<u64>, col: Vec<u64>, val: Vec<u64>, cols: usize) -> Result<Self> {
        let bad = |m: String| Err(CudaError::InvalidArgument(format!("CSR matrix: {m}")));
        if row_ptr.first() != Some(&0) {
            return bad("row_ptr must start with 0".into());
        }
        if row_ptr.windows(2).any(|w| w[1] < w[0]) {
            return bad("row_ptr decreases".into());
        }
        if row_ptr.last() != Some(&(col.len() as u64)) || col.len() != val.len() {
            return bad(format!(
                "row_ptr ends at {:?}; {} column indices, {} values",
                row_ptr.last(),
                col.len(),
                val.len()
            ));
        }
        if let Some(c) = col.iter().find(|&&c| c >= cols as u64) {
            return bad(format!("column index {c} of a matrix of {cols} columns"));
        }
        Ok(Self {
            row_ptr,
            col,
            val,
            cols,
        })
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.row_ptr.len() - 1
    }

    /// Columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Stored entries.
    pub fn nnz(&self) -> usize {
        self.col.len()
    }

    /// `y = A·x mod q` on the host (the oracle of [`spmv`]); `x` has `cols` words `< q`.
    ///
    /// Errors: [`CudaError::Shape`] for a wrong length of `x`.
    pub fn mul_vec(&self, x: &[u64], q: &rhea_math::Modulus) -> Result<Vec<u64>> {
        if x.len() != self.cols {
            return Err(CudaError::Shape(format!(
                "x has {} words; the matrix {} columns",
                x.len(),
                self.cols
            )));
        }
        Ok(self
            .row_ptr
            .windows(2)
            .map(|w| {
                (w[0] as usize..w[1] as usize).fold(0, |acc, k| {
                    q.add(acc, q.mul(self.val[k], x[self.col[k] as usize]))
                })
            })
            .collect())
    }
}

/// A [`CsrMatrix`] on the device, its three arrays in one [`LiteForm`].
#[derive(Debug)]
pub struct DeviceCsr {
    row_ptr: LiteBuffer,
    col: LiteBuffer,
    val: LiteBuffer,
    rows: usize,
    cols: usize,
}

impl DeviceCsr {
    /// Uploads `m` in `form` (encrypted on the host unless plain).
    pub fn upload(
        session: &LiteSession,
        dev: &Arc<GpuDevice>,
        m: &CsrMatrix,
        form: LiteForm,
    ) -> Result<DeviceCsr> {
        Ok(DeviceCsr {
            row_ptr: session.upload(dev, &m.row_ptr, form)?,
            col: session.upload(dev, &m.col, form)?,
            val: session.upload(dev, &m.val, form)?,
            rows: m.rows(),
            cols: m.cols,
        })
    }

    /// The arrays' form.
    pub fn form(&self) -> LiteForm {
        self.row_ptr.form
    }
}

/// Launch arguments of the SpMV kernels (`struct LiteSpmvArgs`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct SpmvArgs {
    y: u64,
    row_ptr: u64,
    col: u64,
    val: u64,
    x: u64,
    modulus: u64,
    rows: u64,
}

// SAFETY: plain `#[repr(C)]` integers, the layout of the CUDA struct.
unsafe impl DeviceRepr for SpmvArgs {}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<SpmvArgs>() == 56);
    assert!(offset_of!(SpmvArgs, rows) == 48);
};

/// The kernel [`spmv`] launches for these forms and shuffle options.
///
/// Errors: [`CudaError::InvalidArgument`] for a variant that is not instantiated.
pub fn spmv_kernel(inputs: LiteForm, output: LiteForm, shuffle: Shuffle) -> Result<&'static str> {
    let (i, o) = (inputs.encrypted(), output.encrypted());
    if !i && !o {
        return checked_name("lite_spmv_plain".into());
    }
    checked_name(format!(
        "lite_spmv_m{}_d{}_pi{}_po{}_i{}_o{}",
        bit(shuffle.masked),
        bit(shuffle.delayed),
        bit(inputs == LiteForm::Padded),
        bit(output == LiteForm::Padded),
        bit(i),
        bit(o)
    ))
}

/// `y = A·x mod q` (`q = modulus.moduli()[0]`; entries and `x` below `q`), the second irregular
/// benchmark: [`SPMV_LANES_PER_ROW`] lanes per row. Plain when every operand is plain; else
/// through LITE, the matrix and `x` in one form, `y` in its own.
///
/// Errors: [`CudaError::Shape`] for `x` or `y` of the wrong length; [`CudaError::InvalidArgument`]
/// when `x` and the matrix differ in form, or as [`spmv_kernel`].
pub fn spmv(
    session: &LiteSession,
    y: &mut LiteBuffer,
    a: &DeviceCsr,
    x: &LiteBuffer,
    modulus: &DeviceModuli,
    shuffle: Shuffle,
) -> Result<()> {
    let inputs = common_form("spmv", &[&a.row_ptr, &a.col, &a.val, x])?;
    let kernel = spmv_kernel(inputs, y.form, shuffle)?;
    check_len("x", x, a.cols)?;
    check_len("y", y, a.rows)?;
    for b in [&a.row_ptr, &a.col, &a.val, x] {
        b.raw.check_same_device(&y.raw)?;
    }
    if a.rows == 0 {
        return Ok(());
    }
    let dev = y.raw.device().clone();
    let args = SpmvArgs {
        y: y.ptr(),
        row_ptr: a.row_ptr.ptr(),
        col: a.col.ptr(),
        val: a.val.ptr(),
        x: x.ptr(),
        modulus: modulus.device_ptr(),
        rows: a.rows as u64,
    };
    let cfg = grid_stride(&dev, a.rows * SPMV_LANES_PER_ROW);
    if inputs.encrypted() || y.form.encrypted() {
        launch_keyed(&dev, session, kernel, cfg, &args)
    } else {
        launch_plain(&dev, kernel, cfg, &args)
    }
}
