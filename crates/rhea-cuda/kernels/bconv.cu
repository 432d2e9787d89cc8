// bconv.cu: fast base conversion (HPS) as a blocked matrix product, ModUp, ModDown and
// rescale-by-last-prime on [poly][limb][N] coefficient-domain buffers.
//
// Twins (crates/rhea-math/src/bconv.rs), canonical outputs equal word for word:
//   bconv_matmul_j{J}_c{C}[_u8][_narrow]_centered, bconv_rin_c2[_narrow]_centered[_l16]
//                               y_j = (sum_i t_i [qhat_i]_{p_j} mod p_j - v [Q]_{p_j}) mod p_j,
//                               t_i = [x_i * qhat_i^{-1}]_{q_i} (the first step, fused unless
//                               the input already holds t_i), v = round-half-down(sum_i t_i *
//                               (1/q_i)) in f64, index order, __dmul_rn/__dadd_rn (never
//                               contracted into FMA); optionally with the ModUp copy of the
//                               digit's own limbs (BaseConverter::convert_centered,
//                               ModUp::apply_centered, ModDown::apply_rounded). Only the centred
//                               instances exist: the templates' CENTERED = false path (the
//                               approximate conversion, BaseConverter::convert_approx) has none.
//   bconv_multi_*_centered      several single-polynomial centred conversions in one launch
//   bconv_rescale_last          out_i = ([x_i + h]_{q_i} - [r]_{q_i}) * q_l^{-1} mod q_i,
//                               r = [x_last + h]_{q_l}   (Rescaler::apply)
//
// Matrix product: blockIdx.x tiles the coefficients (C per thread, C = 2 uses 16-byte loads),
// blockIdx.y is the polynomial, blockIdx.z a group of J output columns. The block stages in
// shared memory the J columns of the [qhat_i]_{p_j} table it needs, the per-input-limb
// constants (q_i, qhat_i^{-1}, Shoup companion) and the J output moduli. Each thread keeps
// J x C exact accumulators in registers (three words each, BconvAcc below): products
// t_i * c < 2^122, so 48 of them plus a folded value < 2^61 plus the centred correction fit in
// 128 bits; after every 48 input limbs the accumulators are folded (Barrett) and at the end
// each is reduced once (Barrett), the centred correction -v [Q]_p added as v (p - [Q]_p) before
// that reduction. Any exact accumulation gives the same canonical residue, hence the
// bit-for-bit agreement with the host (the register-input tiles below also sum in two parts,
// modulo 2^64 and in doubles: BCONV_F64ACC).
//
// Which output columns a launch computes, and which output limb each goes to, is the launch's
// plan (col[], out_limb[]), carried in the parameter block: plain conversion (column k -> limb
// k), ModUp (skip the digit's own limbs) and ModDown (only the active Q columns) are all plans.
//
// Every kernel here is launched with programmatic dependent launch (rhea_cuda::launch): it calls
// pdl_trigger() first, reads only the tables uploaded once by the host (moduli, the converter's
// qhat tables, the ModDown and rescale constants) before pdl_wait(), and reads the input and aux
// rows (written by earlier kernels) after it with ld_dep / ld_dep2. The matrix product stages its
// table slice in shared memory before the wait, while the previous kernel drains.

#include "common.cuh"
#include "fp64.cuh"

#define BCONV_MAX_PLAN 64
#define BCONV_U 4     // input limbs per load chunk

#define BCONV_FLAG_SCALED 1u   // the input already holds t_i (first step done elsewhere)
#define BCONV_FLAG_MODDOWN 2u  // epilogue: out = (reduce(aux row) - y) * w[out_limb]
#define BCONV_FLAG_COPY 4u     // ModUp: blocks with blockIdx.z == 0 also write reduce(x_i)
                               // to output limb copy_first + i

// Must match rhea_cuda::bconv::BconvArgs (#[repr(C)]).
struct BconvArgs {
    u64 n;                       // ring degree (words per limb)
    u64 in_stride;               // words between consecutive polynomials of `input`
    u64 out_stride;              // ... of `out`
    u64 aux_stride;              // ... of `aux`
    const u64* input;            // limb i of poly p at input + p*in_stride + i*n
    u64* out;                    // limb o of poly p at out + p*out_stride + o*n
    const u64* aux;              // ModDown: x_Q, limb o at aux + p*aux_stride + o*n
    const RheaModulus* from_mod; // L input moduli
    const RheaModulus* to_mod;   // K output moduli (by column)
    const u64* q_hat_inv;        // L
    const u64* q_hat_inv_shoup;  // L
    const u64* q_hat_mod_p;      // [L][K], row-major
    const u64* epi_w;            // ModDown: P^{-1} mod q_o, by output limb
    const u64* epi_ws;           // its Shoup companions
    const double* q_inv_f64;     // centred: L doubles, 1/q_i rounded (BaseConverter::q_inv_f64)
    const u64* q_mod_p;          // centred: K words, Q mod p_j (by table column)
    u32 from_count;              // L
    u32 table_stride;            // K
    u32 count;                   // output columns of this launch (<= BCONV_MAX_PLAN)
    u32 flags;
    u32 copy_first;
    u32 group;                   // output columns per block (blockIdx.z groups); read by the
                                 // bconv_rin_* kernels, the others use their J
    u32 col[BCONV_MAX_PLAN];      // table column of plan entry k
    u32 out_limb[BCONV_MAX_PLAN]; // output limb of plan entry k
};
// The layout of the Rust twin (`src/bconv/args.rs`), asserted there too: keep both in step.
static_assert(sizeof(BconvArgs) == 664, "BconvArgs: not the Rust size");
static_assert(alignof(BconvArgs) == 8, "BconvArgs: not the Rust alignment");
static_assert(RHEA_OFFSETOF(BconvArgs, n) == 0, "BconvArgs::n: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, in_stride) == 8, "BconvArgs::in_stride: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, out_stride) == 16, "BconvArgs::out_stride: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, aux_stride) == 24, "BconvArgs::aux_stride: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, input) == 32, "BconvArgs::input: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, out) == 40, "BconvArgs::out: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, aux) == 48, "BconvArgs::aux: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, from_mod) == 56, "BconvArgs::from_mod: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, to_mod) == 64, "BconvArgs::to_mod: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, q_hat_inv) == 72, "BconvArgs::q_hat_inv: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, q_hat_inv_shoup) == 80, "BconvArgs::q_hat_inv_shoup: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, q_hat_mod_p) == 88, "BconvArgs::q_hat_mod_p: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, epi_w) == 96, "BconvArgs::epi_w: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, epi_ws) == 104, "BconvArgs::epi_ws: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, q_inv_f64) == 112, "BconvArgs::q_inv_f64: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, q_mod_p) == 120, "BconvArgs::q_mod_p: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, from_count) == 128, "BconvArgs::from_count: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, table_stride) == 132, "BconvArgs::table_stride: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, count) == 136, "BconvArgs::count: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, flags) == 140, "BconvArgs::flags: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, copy_first) == 144, "BconvArgs::copy_first: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, group) == 148, "BconvArgs::group: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, col) == 152, "BconvArgs::col: not the Rust offset");
static_assert(RHEA_OFFSETOF(BconvArgs, out_limb) == 408, "BconvArgs::out_limb: not the Rust offset");

// BCONV_ACC3 (default 1): the accumulators are common.cuh's three-word Acc3 (48 products keep
// them exact: the fold interval is 48 products). 0 keeps the 128-bit accumulators (comparison).
#ifndef BCONV_ACC3
#define BCONV_ACC3 1
#endif

#if BCONV_ACC3
typedef Acc3 BconvAcc;  // common.cuh
RHEA_INLINE void acc_set(BconvAcc& a, u64 v) { acc3_set(a, v); }
RHEA_INLINE void acc_mac(BconvAcc& a, u64 t, u64 c) { acc3_mac(a, t, c); }
RHEA_INLINE void acc_mac_small(BconvAcc& a, u32 t, u64 c) { acc3_mac_small(a, t, c); }
RHEA_INLINE void acc_mac_narrow(BconvAcc& a, u64 t, u64 c) { acc3_mac_narrow(a, t, c); }
RHEA_INLINE U128 acc_value(const BconvAcc& a) { return acc3_value(a); }
#else
struct BconvAcc {
    U128 v;
};
RHEA_INLINE void acc_set(BconvAcc& a, u64 x) { a.v = U128{x, 0ull}; }
RHEA_INLINE void acc_mac(BconvAcc& a, u64 t, u64 c) { a.v = add_wide(a.v, mul_wide(t, c)); }
RHEA_INLINE void acc_mac_small(BconvAcc& a, u32 t, u64 c) { a.v = add_wide(a.v, mul_wide(t, c)); }
RHEA_INLINE void acc_mac_narrow(BconvAcc& a, u64 t, u64 c) {
    a.v = add_wide(a.v, (u64)(u32)t * (u64)(u32)c);
}
RHEA_INLINE U128 acc_value(const BconvAcc& a) { return a.v; }
#endif

// The per-limb load of C consecutive words.
template <int C>
struct Words {
    u64 v[C];
};

// Input and aux rows are written by earlier kernels: plain loads (ld_dep), never read-only ones,
// which ptxas may move above pdl_wait().
template <int C>
RHEA_INLINE Words<C> load_words(const u64* p) {
    Words<C> w;
    if (C == 2) {
        ulonglong2 x = ld_dep2(p);
        w.v[0] = x.x;
        w.v[C - 1] = x.y;
    } else {
#pragma unroll
        for (int c = 0; c < C; ++c) w.v[c] = ld_dep(p + c);
    }
    return w;
}

template <int C>
RHEA_INLINE void store_words(u64* p, const Words<C>& w) {
    if (C == 2) {
        store2(p, make_ulonglong2(w.v[0], w.v[C - 1]));
    } else {
#pragma unroll
        for (int c = 0; c < C; ++c) p[c] = w.v[c];
    }
}

// The block's constants in shared memory, for J output columns from plan entry g0 (cnt of
// them real, the others zero): the table slice tab [L][J], the input moduli fq, qhat_i^{-1}
// (finv) and its Shoup companion (finvs), the output moduli tmod [J][4] (RheaModulus words;
// CENTERED: the unused 4th word holds Q mod p_j instead of -p_j^{-1}) and CENTERED: 1/q_i
// (finvd). Reads only host-uploaded tables (before pdl_wait). The caller synchronises. With
// BCONV_FAST the rin tiles' tab holds pairs (entry, its double times 2^-64) and the 4th word of a
// tmod row is the column's two-part-sum flag.
struct BconvStage {
    u64* tab;
    u64* fq;
    u64* finv;
    u64* finvs;
    u64* tmod;
    double* finvd;
    u32 tw;  // words per table entry: 2 where the entry is paired with its double, else 1
};

// BCONV_F64ACC (default 1, with BCONV_MONT): the register-input tiles sum an output column's
// products in two parts instead of a three-word accumulator: the exact sum modulo 2^64 (one
// 64-bit multiply-add per product, 1 wide and 2 narrow multiplies instead of 4 wide ones and
// the carries) and an approximation of the whole sum in a double (one DFMA per product, on the
// otherwise idle FP64 pipe). The two give the exact sum's high word (bconv_f64acc_high). Only
// for columns whose sums are small enough (bconv_stage's flag, see BCONV_F64ACC_MAX_LOG2); the
// others keep the three-word accumulator. Same words: the sum is exact either way.
#ifndef BCONV_F64ACC
#define BCONV_F64ACC 1
#endif
#define BCONV_FAST (BCONV_MONT && BCONV_F64ACC)
// A column takes the two-part sum when (sum_i q_i + L) * p_j <= 2^BCONV_F64ACC_MAX_LOG2 (every
// product t_i c_j < q_i p_j, the centred correction v k < L p_j). Why 106 is safe: with u =
// 2^-53, the doubles t_i, c_j 2^-64 (each within a relative u) and one rounding per FMA, the
// double sum s is within gamma_{L+3} S <= 19 u S < 2^-48.7 S of S 2^-64 for L <= 16 (Higham,
// Accuracy and Stability, 3.1 with nonnegative terms), so |s - S 2^-64| < 2^-6.7 for S <= 2^106;
// the recovery's own roundings add < 2^-10; the high word is the nearest integer to a value
// within 0.02 of it.
#ifndef BCONV_F64ACC_MAX_LOG2
#define BCONV_F64ACC_MAX_LOG2 106
#endif

// BCONV_MONT (default 1): the register-input tiles (bconv_rin_*) reduce each output with one
// Montgomery reduction (R = 2^64) instead of the 128-bit Barrett reduction, and add the centred
// correction v * (p - Q mod p) as a 32 x 64-bit product instead of a 64 x 64-bit one. Their
// stage holds the table slice as c * R mod p (and the correction's factor likewise), so the exact
// sum T = sum_i t_i * c'_i + v * k' is R times the output modulo p, and REDC(T) = T / R mod p is
// the output (same words: both are the canonical residue). The Barrett reduction and the full
// correction product took ~40 % of the multiply pipe's work at key switching's 7-9 inputs.
// 0: the Barrett epilogue (comparison, through RHEA_NVRTC_DEFINES).
#ifndef BCONV_MONT
#define BCONV_MONT 1
#endif

// The block's constants in shared memory (see bconv_stage). MONT (the rin tiles with BCONV_MONT):
// tab holds c * R mod p_j and the rows of tmod are [p, -p^{-1} mod 2^64, (p - Q mod p) * R mod p
// (centred) or 0, 0].
template <bool CENTERED, bool MONT = false>
RHEA_INLINE BconvStage bconv_stage(const BconvArgs& A, u64* smem, u32 g0, u32 cnt, u32 J) {
    const u32 L = A.from_count;
    BconvStage st;
    // The rin tiles with the two-part sum (BCONV_FAST) interleave each entry with its double
    // times 2^-64 (one 16-byte load for both).
    const u32 tw = (MONT && BCONV_FAST) ? 2 : 1;
    st.tw = tw;
    st.tab = smem;
    st.fq = st.tab + tw * L * J;
    st.finv = st.fq + L;
    st.finvs = st.finv + L;
    st.tmod = st.finvs + L;
    st.finvd = reinterpret_cast<double*>(st.tmod + 4 * J);
    for (u32 e = threadIdx.x; e < L * J; e += blockDim.x) {
        const u32 i = e / J, jj = e - (e / J) * J;
        u64 v = jj < cnt ? A.q_hat_mod_p[(u64)i * A.table_stride + A.col[g0 + jj]] : 0ull;
        if (MONT && jj < cnt) {
            const RheaModulus m = A.to_mod[A.col[g0 + jj]];
            v = mod_mul(v, mont_r_mod(m), m);
        }
        st.tab[tw * e] = v;
        if (MONT && BCONV_FAST)
            st.tab[tw * e + 1] =
                (u64)__double_as_longlong(__dmul_rn(__ull2double_rn(v), 0x1p-64));
    }
    for (u32 i = threadIdx.x; i < L; i += blockDim.x) {
        st.fq[i] = A.from_mod[i].value;
        st.finv[i] = A.q_hat_inv[i];
        st.finvs[i] = A.q_hat_inv_shoup[i];
        if (CENTERED) st.finvd[i] = A.q_inv_f64[i];
    }
    for (u32 e = threadIdx.x; e < 4 * J; e += blockDim.x) {
        const u32 jj = e >> 2, w = e & 3;
        u64 v = 0;
        if (jj < cnt) {
            const u64* m = reinterpret_cast<const u64*>(A.to_mod + A.col[g0 + jj]);
            if (MONT) {
                const RheaModulus mm = A.to_mod[A.col[g0 + jj]];
                if (w == 0) v = mm.value;
                if (w == 1) v = mm.mont_inv;
                if (CENTERED && w == 2) {
                    v = mod_mul(mm.value - A.q_mod_p[A.col[g0 + jj]], mont_r_mod(mm), mm);
                }
                // The two-part sum's flag (BCONV_F64ACC_MAX_LOG2), in doubles rounded up.
                if (BCONV_FAST && w == 3) {
                    double sum_q = (double)L;
                    for (u32 i = 0; i < L; ++i)
                        sum_q = __dadd_ru(sum_q, __ull2double_ru(A.from_mod[i].value));
                    const double bound = ldexp(1.0, BCONV_F64ACC_MAX_LOG2);
                    v = __dmul_ru(sum_q, __ull2double_ru(mm.value)) <= bound ? 1ull : 0ull;
                }
            } else {
                v = (CENTERED && w == 3) ? A.q_mod_p[A.col[g0 + jj]] : m[w];
            }
        }
        st.tmod[e] = v;
    }
    return st;
}

// The two-part sum's high word: S = hi 2^64 + lo with lo = S mod 2^64 exact and s within 2^-6 of
// S 2^-64 (BCONV_F64ACC_MAX_LOG2), S < 2^107. hi is the nearest integer to s - lo 2^-64, and the
// low word's top 32 bits are enough for it: d = (s + 2^20) - (2^52 + lo_hi) 2^-32 in one FMA (the
// second term is exact, 2^52 + lo_hi the double whose mantissa holds lo_hi; s + 2^20 < 2^44 rounds
// by < 2^-9), then adding 1.5 2^52 rounds d to an integer held in the mantissa's low 51 bits.
RHEA_INLINE u64 bconv_f64acc_high(u64 lo, double s) {
    const double lo_top = __hiloint2double(0x43300000, (int)(u32)(lo >> 32));  // 2^52 + lo_hi
    const double d = __fma_rn(lo_top, -0x1p-32, __dadd_rn(s, 0x1p20));
    const double k = __dadd_rn(d, F64_ROUND_MAGIC);
    return (u64)__double_as_longlong(k) & ((1ull << 51) - 1);
}

// The centred correction's v = floor(s) + (s - floor(s) > 1/2) (round half down; both
// subtractions exact).
RHEA_INLINE u64 round_half_down(double s) {
    const double fl = floor(s);
    return __double2ull_rz(fl) + (__dsub_rn(__dsub_rn(s, fl), 0.5) > 0.0 ? 1ull : 0ull);
}

// NARROW: every input and output modulus is below 2^32, so t_i and the table entries fit in
// 32 bits and each product is one 32 x 32 -> 64-bit multiply (IMAD.WIDE.U32) instead of a full
// 64 x 64 -> 128-bit one; the accumulation stays 128-bit.
template <int J, int C, bool NARROW, bool CENTERED, int U = BCONV_U>
RHEA_INLINE void bconv_matmul_body(const BconvArgs& A, const u32 p) {
    extern __shared__ u64 smem[];
    pdl_trigger();
    const u32 L = A.from_count;
    const u32 g0 = blockIdx.z * J;
    // A multi-conversion launch sizes its grid for the longest plan (block-uniform exit).
    if (g0 >= A.count) return;
    const u32 cnt = min((u32)J, A.count - g0);

    const BconvStage st = bconv_stage<CENTERED>(A, smem, g0, cnt, J);
    u64* tab = st.tab;
    u64* fq = st.fq;
    u64* finv = st.finv;
    u64* finvs = st.finvs;
    u64* tmod = st.tmod;
    double* finvd = st.finvd;
    __syncthreads();
    // The staging above read only host-uploaded tables (it overlaps the previous kernel's
    // tail); the input and aux rows may be that kernel's output.
    pdl_wait();

    const u64 n0 = ((u64)blockIdx.x * blockDim.x + threadIdx.x) * C;
    if (n0 >= A.n) return;
    const u64* x = A.input + (u64)p * A.in_stride + n0;
    const bool scaled = (A.flags & BCONV_FLAG_SCALED) != 0;
    const bool copy = (A.flags & BCONV_FLAG_COPY) != 0 && blockIdx.z == 0;

    // ModUp's copy of the digit's own limbs (reduced), in a loop of its own (it is off the hot
    // path and would otherwise be unrolled into every step of the product).
    if (copy) {
#pragma unroll 1
        for (u32 i = 0; i < L; ++i) {
            const RheaModulus m = load_modulus(A.from_mod, i);
            const Words<C> w = load_words<C>(x + (u64)i * A.n);
            Words<C> r;
#pragma unroll
            for (int c = 0; c < C; ++c) r.v[c] = reduce_u64(w.v[c], m);
            store_words<C>(A.out + (u64)p * A.out_stride + (u64)(A.copy_first + i) * A.n + n0, r);
        }
    }

    BconvAcc acc[J][C];
#pragma unroll
    for (int j = 0; j < J; ++j)
#pragma unroll
        for (int c = 0; c < C; ++c) acc_set(acc[j][c], 0ull);
    double fsum[C];  // CENTERED: sum_i t_i * (1/q_i), in index order
#pragma unroll
    for (int c = 0; c < C; ++c) fsum[c] = 0.0;

    // The input limbs are read in chunks of U, double-buffered: the loads of the next
    // chunk are issued before the products of the current one, so that 2 * U loads per
    // thread can be in flight (the kernel is otherwise bound by the load latency). The
    // accumulators are folded (Barrett) after every (48 / U) chunks, outside the unrolled
    // chunk body: (48 / U) * U = 48 products < 2^122, a folded value < 2^61 and the
    // centred correction v * (p - [Q]_p) < 2^68 (added before the one final reduction) stay
    // below 2^128. (A fold test inside the unrolled body multiplied the code size by ~3 and the
    // kernel stalled on instruction fetch.)
    Words<C> cur[U], nxt[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
        if ((u32)u < L) cur[u] = load_words<C>(x + (u64)u * A.n);
    u32 chunks = 0;
#pragma unroll 1
    for (u32 i0 = 0; i0 < L; i0 += U) {
#pragma unroll
        for (int u = 0; u < U; ++u)
            if (i0 + U + u < L) nxt[u] = load_words<C>(x + (u64)(i0 + U + u) * A.n);
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const u32 i = i0 + u;
            if (i >= L) continue;
            Words<C> t;
            if (scaled) {
                t = cur[u];
            } else {
                const u64 q = fq[i], w = finv[i], ws = finvs[i];
#pragma unroll
                for (int c = 0; c < C; ++c) t.v[c] = shoup_mul(cur[u].v[c], w, ws, q);
            }
            if (CENTERED) {
                const double inv = finvd[i];
#pragma unroll
                for (int c = 0; c < C; ++c)
                    fsum[c] = __dadd_rn(fsum[c], __dmul_rn(__ull2double_rn(t.v[c]), inv));
            }
            const u64* row = tab + i * J;
#pragma unroll
            for (int j = 0; j < J; ++j) {
                const u64 cf = row[j];
#pragma unroll
                for (int c = 0; c < C; ++c) {
                    if (NARROW)
                        acc_mac_narrow(acc[j][c], t.v[c], cf);
                    else
                        acc_mac(acc[j][c], t.v[c], cf);
                }
            }
        }
        if (++chunks == (48 / U) && i0 + U < L) {
            chunks = 0;
#pragma unroll
            for (int j = 0; j < J; ++j) {
                if ((u32)j < cnt) {
                    const RheaModulus m = {tmod[4 * j], tmod[4 * j + 1], tmod[4 * j + 2], 0ull};
#pragma unroll
                    for (int c = 0; c < C; ++c)
                        acc_set(acc[j][c], barrett_reduce(acc_value(acc[j][c]), m));
                }
            }
        }
#pragma unroll
        for (int u = 0; u < U; ++u) cur[u] = nxt[u];
    }

    // CENTERED: v = floor(s) + (s - floor(s) > 1/2) (round half down; both subtractions exact).
    u64 vcor[C];
#pragma unroll
    for (int c = 0; c < C; ++c) {
        vcor[c] = 0ull;
        if (CENTERED) {
            vcor[c] = round_half_down(fsum[c]);
        }
    }

    u64* out = A.out + (u64)p * A.out_stride + n0;
    if ((A.flags & BCONV_FLAG_MODDOWN) != 0) {
        // All x_Q loads first (they cannot be reordered past the stores by the compiler).
        Words<C> xq[J];
#pragma unroll
        for (int j = 0; j < J; ++j)
            if ((u32)j < cnt)
                xq[j] = load_words<C>(A.aux + (u64)p * A.aux_stride +
                                      (u64)A.out_limb[g0 + j] * A.n + n0);
#pragma unroll
        for (int j = 0; j < J; ++j) {
            if ((u32)j < cnt) {
                const RheaModulus m = {tmod[4 * j], tmod[4 * j + 1], tmod[4 * j + 2], 0ull};
                const u32 ol = A.out_limb[g0 + j];
                const u64 w = __ldg(A.epi_w + ol), ws = __ldg(A.epi_ws + ol);
                Words<C> y;
#pragma unroll
                for (int c = 0; c < C; ++c) {
                    U128 z = acc_value(acc[j][c]);
                    if (CENTERED) z = add_wide(z, mul_wide(vcor[c], m.value - tmod[4 * j + 3]));
                    const u64 v = barrett_reduce(z, m);
                    y.v[c] = shoup_mul(mod_sub(reduce_u64(xq[j].v[c], m), v, m.value), w, ws,
                                       m.value);
                }
                store_words<C>(out + (u64)ol * A.n, y);
            }
        }
    } else {
#pragma unroll
        for (int j = 0; j < J; ++j) {
            if ((u32)j < cnt) {
                const RheaModulus m = {tmod[4 * j], tmod[4 * j + 1], tmod[4 * j + 2], 0ull};
                Words<C> y;
#pragma unroll
                for (int c = 0; c < C; ++c) {
                    U128 z = acc_value(acc[j][c]);
                    if (CENTERED) z = add_wide(z, mul_wide(vcor[c], m.value - tmod[4 * j + 3]));
                    y.v[c] = barrett_reduce(z, m);
                }
                store_words<C>(out + (u64)A.out_limb[g0 + j] * A.n, y);
            }
        }
    }
}

// The conversion with the inputs held in registers ("rin" tiles): each thread loads its C
// coefficients of all L <= BCONV_RIN_LMAX input limbs once (every load in flight together),
// computes t_i (and the centred sum) once, then walks the block's group of output columns
// (A.group of them, blockIdx.z), one column at a time with C accumulators, reading the
// column's table entries from shared memory (a broadcast). Few live accumulators, so many
// more warps per SM than the register-tiled bconv_matmul_body (whose J x C accumulators hold
// 128-168 registers), which is latency-bound at key switching's 7-9 input limbs. Same
// words: exact sums (L < 48 products, no fold needed) reduced once. The host uses it only
// for L <= BCONV_RIN_LMAX and without the COPY and MODDOWN flags. LMAX sizes the register
// array: BCONV_RIN_LMAX for the usual kernels, BCONV_RIN_LMAX_WIDE for the `_l16` ones (a
// 13-16-limb digit: 2 key-switching digits at the deep preset), which need more registers.
// 16 is also the Montgomery epilogue's bound: REDC needs T < 2^65 p, and T < p (sum q_i + L)
// stays below it for 16 inputs of primes below 2^61.
#define BCONV_RIN_LMAX 12
#define BCONV_RIN_LMAX_WIDE 16
template <int C, bool NARROW, bool CENTERED, int LMAX = BCONV_RIN_LMAX>
RHEA_INLINE void bconv_rin_body(const BconvArgs& A, const u32 p) {
    extern __shared__ u64 smem[];
    pdl_trigger();
    const u32 L = A.from_count;
    const u32 G = A.group;
    const u32 g0 = blockIdx.z * G;
    if (g0 >= A.count) return;  // block-uniform (a multi launch sizes its grid for the longest)
    const u32 cnt = min(G, A.count - g0);
    const BconvStage st = bconv_stage<CENTERED, BCONV_MONT>(A, smem, g0, cnt, G);
    __syncthreads();
    pdl_wait();

    const u64 n0 = ((u64)blockIdx.x * blockDim.x + threadIdx.x) * C;
    if (n0 >= A.n) return;
    const u64* x = A.input + (u64)p * A.in_stride + n0;
    const bool scaled = (A.flags & BCONV_FLAG_SCALED) != 0;
    Words<C> t[LMAX];
#pragma unroll
    for (u32 i = 0; i < (u32)LMAX; ++i) {
        if (i >= L) break;
        t[i] = load_words<C>(x + (u64)i * A.n);
    }
    double fsum[C];
#pragma unroll
    for (int c = 0; c < C; ++c) fsum[c] = 0.0;
    // The two-part sums (not for narrow moduli, whose products are one multiply already).
    constexpr bool FAST = BCONV_FAST && !NARROW;
    double td[FAST ? LMAX : 1][C];  // FAST: t_i as doubles (rounded)
#pragma unroll
    for (u32 i = 0; i < (u32)LMAX; ++i) {
        if (i >= L) break;
        if (!scaled) {
            const u64 q = st.fq[i], w = st.finv[i], ws = st.finvs[i];
#pragma unroll
            for (int c = 0; c < C; ++c) t[i].v[c] = shoup_mul(t[i].v[c], w, ws, q);
        }
#pragma unroll
        for (int c = 0; c < C; ++c) {
            const double d = __ull2double_rn(t[i].v[c]);
            if (FAST) td[FAST ? i : 0][c] = d;
            if (CENTERED) fsum[c] = __dadd_rn(fsum[c], __dmul_rn(d, st.finvd[i]));
        }
    }
    u64 vcor[C];
#pragma unroll
    for (int c = 0; c < C; ++c) vcor[c] = CENTERED ? round_half_down(fsum[c]) : 0ull;

    u64* out = A.out + (u64)p * A.out_stride + n0;
#pragma unroll 1
    for (u32 jj = 0; jj < cnt; ++jj) {
        Words<C> y;
        if (FAST && st.tmod[4 * jj + 3] != 0ull) {
            // The two-part sum (BCONV_F64ACC): lo = S mod 2^64, s ~ S 2^-64.
            // lo = the low-by-low products, x = the cross products' low words (worth 2^32).
            u64 lo[C];
            u32 x[C];
            double s[C];
#pragma unroll
            for (int c = 0; c < C; ++c) {
                lo[c] = 0ull;
                x[c] = 0u;
                s[c] = 0.0;
            }
#pragma unroll
            for (u32 i = 0; i < (u32)LMAX; ++i) {
                if (i >= L) break;
                const ulonglong2 e =
                    *reinterpret_cast<const ulonglong2*>(st.tab + st.tw * (i * G + jj));
                const u64 cf = e.x;
                const double cd = __longlong_as_double((long long)e.y);
#pragma unroll
                for (int c = 0; c < C; ++c) {
                    const u64 tv = t[i].v[c];
                    asm("mad.wide.u32 %0, %1, %2, %0;" : "+l"(lo[c]) : "r"((u32)tv), "r"((u32)cf));
                    x[c] += (u32)tv * (u32)(cf >> 32) + (u32)(tv >> 32) * (u32)cf;
                    s[c] = __fma_rn(td[FAST ? i : 0][c], cd, s[c]);
                }
            }
            const u64 pj = st.tmod[4 * jj], pinv = st.tmod[4 * jj + 1];
            const u64 kc = st.tmod[4 * jj + 2];
            const double kcd = CENTERED ? __dmul_rn(__ull2double_rn(kc), 0x1p-64) : 0.0;
#pragma unroll
            for (int c = 0; c < C; ++c) {
                lo[c] += (u64)x[c] << 32;
                if (CENTERED) {
                    lo[c] += vcor[c] * kc;
                    s[c] = __fma_rn((double)vcor[c], kcd, s[c]);
                }
                y.v[c] = mont_redc_3p(U128{lo[c], bconv_f64acc_high(lo[c], s[c])}, pj, pinv);
            }
            store_words<C>(out + (u64)A.out_limb[g0 + jj] * A.n, y);
            continue;
        }
        BconvAcc acc[C];
#pragma unroll
        for (int c = 0; c < C; ++c) acc_set(acc[c], 0ull);
#pragma unroll
        for (u32 i = 0; i < (u32)LMAX; ++i) {
            if (i >= L) break;
            const u64 cf = st.tab[st.tw * (i * G + jj)];
#pragma unroll
            for (int c = 0; c < C; ++c) {
                if (NARROW)
                    acc_mac_narrow(acc[c], t[i].v[c], cf);
                else
                    acc_mac(acc[c], t[i].v[c], cf);
            }
        }
        if (BCONV_MONT) {
            const u64 pj = st.tmod[4 * jj], pinv = st.tmod[4 * jj + 1];
            const u64 kc = st.tmod[4 * jj + 2];
#pragma unroll
            for (int c = 0; c < C; ++c) {
                // v < L <= LMAX: one 32-bit factor.
                if (CENTERED) acc_mac_small(acc[c], (u32)vcor[c], kc);
                y.v[c] = mont_redc_3p(acc_value(acc[c]), pj, pinv);
            }
        } else {
            const RheaModulus m = {st.tmod[4 * jj], st.tmod[4 * jj + 1], st.tmod[4 * jj + 2],
                                   0ull};
#pragma unroll
            for (int c = 0; c < C; ++c) {
                U128 z = acc_value(acc[c]);
                if (CENTERED) z = add_wide(z, mul_wide(vcor[c], m.value - st.tmod[4 * jj + 3]));
                y.v[c] = barrett_reduce(z, m);
            }
        }
        store_words<C>(out + (u64)A.out_limb[g0 + jj] * A.n, y);
    }
}

// Several single-polynomial conversions in one launch (a ModUp's digits): blockIdx.y picks the
// conversion. Must match rhea_cuda::bconv::BconvMulti (#[repr(C)]); 5 of them keep the kernel
// parameters below 4 KiB.
#define BCONV_MAX_MULTI 5
struct BconvMulti {
    BconvArgs a[BCONV_MAX_MULTI];
};
// The layout of the Rust twin (`src/bconv/args.rs`), asserted there too: keep both in step.
static_assert(sizeof(BconvMulti) == 3320, "BconvMulti: not the Rust size");
static_assert(alignof(BconvMulti) == 8, "BconvMulti: not the Rust alignment");
static_assert(RHEA_OFFSETOF(BconvMulti, a) == 0, "BconvMulti::a: not the Rust offset");

// Resident blocks per SM asked of ptxas for the widest tile (J * C = 16): BCONV_WIDE_MIN_BLOCKS
// (4: at most 128 registers; 3: at most 168), else no constraint. The three-word accumulators
// need 6 registers each: capped at 128 they spill, so they take 3 blocks (166-168 registers);
// measured on an H100 (bench-history §10) that is 5-9 % faster than the 128-bit accumulators at 4.
#ifndef BCONV_WIDE_MIN_BLOCKS
#if BCONV_ACC3
#define BCONV_WIDE_MIN_BLOCKS 3
#else
#define BCONV_WIDE_MIN_BLOCKS 4
#endif
#endif
#define BCONV_MIN_BLOCKS(J, C) ((J) * (C) >= 16 ? BCONV_WIDE_MIN_BLOCKS : 1)

#define BCONV_INSTANCE(J, C)                                                               \
    extern "C" __global__ void __launch_bounds__(128, BCONV_MIN_BLOCKS(J, C))            \
        bconv_matmul_j##J##_c##C##_centered(const __grid_constant__ BconvArgs A) { RHEA_TL \
        bconv_matmul_body<J, C, false, true>(A, blockIdx.y);                               \
    }                                                                                      \
    extern "C" __global__ void __launch_bounds__(128, BCONV_MIN_BLOCKS(J, C))            \
        bconv_matmul_j##J##_c##C##_narrow_centered(const __grid_constant__ BconvArgs A) { RHEA_TL \
        bconv_matmul_body<J, C, true, true>(A, blockIdx.y);                                \
    }                                                                                      \
    extern "C" __global__ void __launch_bounds__(128, BCONV_MIN_BLOCKS(J, C))            \
        bconv_multi_j##J##_c##C##_centered(const __grid_constant__ BconvMulti M) { RHEA_TL \
        bconv_matmul_body<J, C, false, true>(M.a[blockIdx.y], 0u);                         \
    }                                                                                      \
    extern "C" __global__ void __launch_bounds__(128, BCONV_MIN_BLOCKS(J, C))            \
        bconv_multi_j##J##_c##C##_narrow_centered(const __grid_constant__ BconvMulti M) { RHEA_TL \
        bconv_matmul_body<J, C, true, true>(M.a[blockIdx.y], 0u);                          \
    }

// The same tile with 8-limb load chunks and no register cap (what BconvTile::Auto picks above
// 16 input limbs): 152-164 registers, 3 blocks per SM.
#define BCONV_INSTANCE_U8(J, C)                                                            \
    extern "C" __global__ void __launch_bounds__(128)                                      \
        bconv_matmul_j##J##_c##C##_u8_centered(const __grid_constant__ BconvArgs A) { RHEA_TL \
        bconv_matmul_body<J, C, false, true, 8>(A, blockIdx.y);                            \
    }                                                                                      \
    extern "C" __global__ void __launch_bounds__(128)                                      \
        bconv_matmul_j##J##_c##C##_u8_narrow_centered(const __grid_constant__ BconvArgs A) { RHEA_TL \
        bconv_matmul_body<J, C, true, true, 8>(A, blockIdx.y);                             \
    }

// The tiles BconvTile::choose picks (J2C1, J4C2 and the one-coefficient register-input tiles,
// which it never picks, are gone).
BCONV_INSTANCE_U8(8, 2)
BCONV_INSTANCE(4, 1)
BCONV_INSTANCE(8, 1)
BCONV_INSTANCE(8, 2)
// Narrower two-coefficient tiles, so that a count of outputs that is not a multiple of 8 (a
// ModDown to 25 limbs: 8 + 8 + 8 + 1) splits into even groups (4 x 7) with fewer empty columns.
BCONV_INSTANCE(5, 2)
BCONV_INSTANCE(6, 2)
BCONV_INSTANCE(7, 2)

// Resident blocks per SM asked of ptxas for the two-coefficient register-input tiles
// (BCONV_RIN_C2_MIN_BLOCKS; 1: no constraint). Their two-part sums hold each input twice (the
// word and its double): 16 inputs took 185 registers, 2 blocks per SM, and the key switching
// lost 8 µs; at 4 (at most 128 registers, 17 words spilled by the 16-input kernels) they gain
// (H100, bench-history §28); at 5 (92 registers, 31 spilled) they lose 27 µs.
#ifndef BCONV_RIN_C2_MIN_BLOCKS
#define BCONV_RIN_C2_MIN_BLOCKS 4
#endif
#define BCONV_RIN_MIN_BLOCKS(C) ((C) == 2 ? BCONV_RIN_C2_MIN_BLOCKS : 1)

// The register-input tiles: bconv_rin_c<C>[_narrow]_centered[_l16] and the multi-conversion
// bconv_multi_rin_c<C>[_narrow]_centered[_l16] (`_l16`: up to BCONV_RIN_LMAX_WIDE inputs).
#define BCONV_RIN_INSTANCE(C, LMAX, SFX)                                                           \
    extern "C" __global__ void __launch_bounds__(128, BCONV_RIN_MIN_BLOCKS(C))                     \
        bconv_rin_c##C##_centered##SFX(const __grid_constant__ BconvArgs A) { RHEA_TL              \
        bconv_rin_body<C, false, true, LMAX>(A, blockIdx.y);                                       \
    }                                                                                              \
    extern "C" __global__ void __launch_bounds__(128, BCONV_RIN_MIN_BLOCKS(C))                     \
        bconv_rin_c##C##_narrow_centered##SFX(const __grid_constant__ BconvArgs A) { RHEA_TL       \
        bconv_rin_body<C, true, true, LMAX>(A, blockIdx.y);                                        \
    }                                                                                              \
    extern "C" __global__ void __launch_bounds__(128, BCONV_RIN_MIN_BLOCKS(C))                     \
        bconv_multi_rin_c##C##_centered##SFX(const __grid_constant__ BconvMulti M) { RHEA_TL       \
        bconv_rin_body<C, false, true, LMAX>(M.a[blockIdx.y], 0u);                                 \
    }                                                                                              \
    extern "C" __global__ void __launch_bounds__(128, BCONV_RIN_MIN_BLOCKS(C))                     \
        bconv_multi_rin_c##C##_narrow_centered##SFX(const __grid_constant__ BconvMulti M) { RHEA_TL \
        bconv_rin_body<C, true, true, LMAX>(M.a[blockIdx.y], 0u);                                  \
    }
BCONV_RIN_INSTANCE(2, BCONV_RIN_LMAX, )
BCONV_RIN_INSTANCE(2, BCONV_RIN_LMAX_WIDE, _l16)

// Must match rhea_cuda::bconv::RescaleArgs (#[repr(C)]).
struct RescaleArgs {
    u64 n;
    u64 in_stride;
    u64 out_stride;
    const u64* input;            // [poly][level][n]
    u64* out;                    // [poly][level-1][n]
    const RheaModulus* moduli;   // the basis; limb i uses moduli[i]
    const u64* inv;              // level-1 words: q_last^{-1} mod q_i
    const u64* inv_shoup;        // level-1 words
    const u64* half;             // level-1 words: floor(q_last/2) mod q_i
    u32 level;
    u32 pad;
};
// The layout of the Rust twin (`src/bconv/args.rs`), asserted there too: keep both in step.
static_assert(sizeof(RescaleArgs) == 80, "RescaleArgs: not the Rust size");
static_assert(alignof(RescaleArgs) == 8, "RescaleArgs: not the Rust alignment");
static_assert(RHEA_OFFSETOF(RescaleArgs, n) == 0, "RescaleArgs::n: not the Rust offset");
static_assert(RHEA_OFFSETOF(RescaleArgs, in_stride) == 8, "RescaleArgs::in_stride: not the Rust offset");
static_assert(RHEA_OFFSETOF(RescaleArgs, out_stride) == 16, "RescaleArgs::out_stride: not the Rust offset");
static_assert(RHEA_OFFSETOF(RescaleArgs, input) == 24, "RescaleArgs::input: not the Rust offset");
static_assert(RHEA_OFFSETOF(RescaleArgs, out) == 32, "RescaleArgs::out: not the Rust offset");
static_assert(RHEA_OFFSETOF(RescaleArgs, moduli) == 40, "RescaleArgs::moduli: not the Rust offset");
static_assert(RHEA_OFFSETOF(RescaleArgs, inv) == 48, "RescaleArgs::inv: not the Rust offset");
static_assert(RHEA_OFFSETOF(RescaleArgs, inv_shoup) == 56, "RescaleArgs::inv_shoup: not the Rust offset");
static_assert(RHEA_OFFSETOF(RescaleArgs, half) == 64, "RescaleArgs::half: not the Rust offset");
static_assert(RHEA_OFFSETOF(RescaleArgs, level) == 72, "RescaleArgs::level: not the Rust offset");
static_assert(RHEA_OFFSETOF(RescaleArgs, pad) == 76, "RescaleArgs::pad: not the Rust offset");

// One thread per coefficient (and polynomial, blockIdx.y): reads x_last once and walks the
// lower limbs in chunks of 8 (all loads of a chunk in flight before its stores).
#define RESCALE_U 8
extern "C" __global__ void bconv_rescale_last(const RescaleArgs A) { RHEA_TL
    pdl_trigger();
    const u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= A.n) return;
    const u32 p = blockIdx.y;
    const u32 last = A.level - 1;
    const u64* x = A.input + (u64)p * A.in_stride + k;
    u64* o = A.out + (u64)p * A.out_stride + k;
    const RheaModulus ml = load_modulus(A.moduli, last);
    const u64 h = ml.value >> 1;
    pdl_wait();
    const u64 r = mod_add(reduce_u64(ld_dep(x + (u64)last * A.n), ml), h, ml.value);
    for (u32 i0 = 0; i0 < last; i0 += RESCALE_U) {
        u64 v[RESCALE_U];
#pragma unroll
        for (int u = 0; u < RESCALE_U; ++u)
            if (i0 + u < last) v[u] = ld_dep(x + (u64)(i0 + u) * A.n);
#pragma unroll
        for (int u = 0; u < RESCALE_U; ++u) {
            const u32 i = i0 + u;
            if (i < last) {
                const RheaModulus m = load_modulus(A.moduli, i);
                const u64 a = mod_add(reduce_u64(v[u], m), __ldg(A.half + i), m.value);
                const u64 b = reduce_u64(r, m);
                o[(u64)i * A.n] = shoup_mul(mod_sub(a, b, m.value), __ldg(A.inv + i),
                                            __ldg(A.inv_shoup + i), m.value);
            }
        }
    }
}
