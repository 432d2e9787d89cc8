// ntt.cu: negacyclic NTT kernels over [poly][limb][N] buffers (see ntt.cuh for the algorithm).
//
// Fast path, for N = 2^12 .. 2^17: two launches per transform over every row (polynomial x limb)
// of the launch, each tile of a row one block's work.
//   forward: ntt_fwd_cols*_<LOGN>_<LOG1>_<C>, then ntt_fwd_rows*_<LOGN>_<LOG1>
//   inverse: ntt_inv_rows*_<LOGN>_<LOG1>, then ntt_inv_cols*_<LOGN>_<LOG1>_<C>
// Column kernels: blockDim = 2^LOG1 / 8 * C threads, grid = rows * N2 / C blocks.
// Row kernels: blockDim = RowsShape<LOGN - LOG1>::THREADS, grid = rows * N / (N2 * CH) blocks.
//
// Baseline: ntt_naive_{fwd,inv}_stage, one launch per stage, one radix-2 butterfly per thread
// (grid-stride), every stage through global memory.
//
// Benchmark: ntt_bf_{fwd,inv}_throughput, the butterflies alone in registers (the arithmetic
// floor of the fast path; see the end of this file).
//
// Arguments of every kernel: (data, twiddles, compact derived twiddles, primes, NttArgs
// [, log_n, log_m]).

#include "ntt.cuh"

#define NTT_ARGS                                                                            \
    u64* __restrict__ data, const ulonglong2* __restrict__ tw,                              \
        const ulonglong2* __restrict__ tw3, const NttPrime* __restrict__ primes, const NttArgs a

// Register budgets. Blocks of up to 128 threads (N >= 2^14) get a minimum-blocks hint of B x 128
// threads per SM: B = 9 (56 registers) for the forward column kernels, 7 (72) for the inverse
// ones, 8 (64) for the row kernels. Without hints ptxas settles at 56-66 registers for most
// kernels and 74-78 for the forward row kernels; each B is the fastest of 6-9 for its kernel on
// the H100 (bench-history §13: the column kernels, scheduled more freely with 72, ran 4-11 %
// faster; §14: the forward row kernels fit 64 without spilling once their derived-twiddle
// factors are loaded late, NTT_LATE_CST, and the forward transform is then 2 % faster than at
// 80; §21: with row flags, which let the row kernel start on rows whose columns are done, the
// forward column kernels are best at 8 blocks, 1.94 waves of a 32-limb transform instead of
// 2.2; §23: with their twiddles staged in shared memory, at 9: forward 32.1 -> 31.7 us). Larger
// blocks get no hint (a 7-block hint would cap them at 32 registers and spill),
// nor do the transforms below N = 2^14 (the lift-and-add column kernel would spill at 72).
// The row kernels with FP64 rows (ntt_fwd_rowsef_*[_p]) take NTT_ROWS_F64_B = 7 (72 registers):
// their FP64 and integer bodies are disjoint (with shared loads before the branch ptxas spilled
// the FP64 one), and the paired kernel spilled 16 words at 64 registers, none at 72; on the H100 at
// 8 mul+relin ran 0.286 ms, at 7 0.278 (the integer rows: 0.280; bench-history §24).
// NTT_MIN_BLOCKS (e.g. through RHEA_NVRTC_DEFINES) sets one hint for every kernel instead, for
// tuning; 0 removes it; NTT_COLS_FWD_B, NTT_COLS_INV_B, NTT_ROWS_FWD_B and NTT_ROWS_INV_B can
// be set the same way, one class at a time, and NTT_COLS_B sets both column classes.
#ifdef NTT_COLS_B
#define NTT_COLS_FWD_B NTT_COLS_B
#define NTT_COLS_INV_B NTT_COLS_B
#endif
#ifndef NTT_COLS_FWD_B
#define NTT_COLS_FWD_B 9
#endif
#ifndef NTT_COLS_INV_B
#define NTT_COLS_INV_B 7
#endif
#ifndef NTT_ROWS_FWD_B
#define NTT_ROWS_FWD_B 8
#endif
#ifndef NTT_ROWS_INV_B
#define NTT_ROWS_INV_B 8
#endif
#ifndef NTT_ROWS_F64_B
#define NTT_ROWS_F64_B 7
#endif
#ifdef NTT_MIN_BLOCKS
#if NTT_MIN_BLOCKS > 0
#define NTT_BOUNDS(THREADS, LOGN, B) __launch_bounds__(THREADS, NTT_MIN_BLOCKS)
#else
#define NTT_BOUNDS(THREADS, LOGN, B) __launch_bounds__(THREADS)
#endif
#else
#define NTT_BOUNDS(THREADS, LOGN, B) \
    __launch_bounds__(THREADS, (THREADS) <= 128 && (LOGN) >= 14 ? (B) * 128 / (THREADS) : 0)
#endif

// Column kernels: ntt_{fwd,inv}_cols_<LOGN>_<LOG1>_<C>, ntt_fwd_colsl[a]_<LOGN>_<LOG1>_<C> with
// the centred-lift (and lift-and-add) prologue (grouped launches, see NttArgs), the three with
// FP64 rows ntt_fwd_colsf_*, ntt_fwd_colslf_*, ntt_fwd_colslaf_* (see ntt_f64_row), and
// ntt_inv_cols_<LOGN>_<LOG1>_<C>_s with a factor per table folded into N^-1 (NttArgs::pro_w),
// ntt_inv_colsf_*_s the same with FP64 rows (after ntt_inv_rowsdf_*_o).
#define NTT_COLS(LOGN, LOG1, C)                                                             \
    extern "C" __global__ void NTT_BOUNDS(((1 << LOG1) / 8) * C, LOGN, NTT_COLS_FWD_B)      \
        ntt_fwd_colsl_##LOGN##_##LOG1##_##C(NTT_ARGS) { RHEA_TL                      \
        ntt_cols<LOGN, LOG1, C, true, true>(data, tw, primes, a);                           \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(((1 << LOG1) / 8) * C, LOGN, NTT_COLS_FWD_B)      \
        ntt_fwd_colslf_##LOGN##_##LOG1##_##C(NTT_ARGS) { RHEA_TL                     \
        ntt_cols<LOGN, LOG1, C, true, true, false, false, true>(data, tw, primes, a);       \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(((1 << LOG1) / 8) * C, LOGN, NTT_COLS_FWD_B)      \
        ntt_fwd_colsla_##LOGN##_##LOG1##_##C(NTT_ARGS) { RHEA_TL                     \
        ntt_cols<LOGN, LOG1, C, true, true, true>(data, tw, primes, a);                     \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(((1 << LOG1) / 8) * C, LOGN, NTT_COLS_FWD_B)      \
        ntt_fwd_colslaf_##LOGN##_##LOG1##_##C(NTT_ARGS) { RHEA_TL                    \
        ntt_cols<LOGN, LOG1, C, true, true, true, false, true>(data, tw, primes, a);        \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(((1 << LOG1) / 8) * C, LOGN, NTT_COLS_FWD_B)      \
        ntt_fwd_colsf_##LOGN##_##LOG1##_##C(NTT_ARGS) { RHEA_TL                      \
        ntt_cols<LOGN, LOG1, C, true, false, false, false, true>(data, tw, primes, a);      \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(((1 << LOG1) / 8) * C, LOGN, NTT_COLS_FWD_B)      \
        ntt_fwd_cols_##LOGN##_##LOG1##_##C(NTT_ARGS) { RHEA_TL                       \
        ntt_cols<LOGN, LOG1, C, true>(data, tw, primes, a);                                 \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(((1 << LOG1) / 8) * C, LOGN, NTT_COLS_INV_B)      \
        ntt_inv_cols_##LOGN##_##LOG1##_##C(NTT_ARGS) { RHEA_TL                       \
        ntt_cols<LOGN, LOG1, C, false>(data, tw, primes, a);                                \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(((1 << LOG1) / 8) * C, LOGN, NTT_COLS_INV_B)      \
        ntt_inv_cols_##LOGN##_##LOG1##_##C##_s(NTT_ARGS) { RHEA_TL                   \
        ntt_cols<LOGN, LOG1, C, false, false, false, true>(data, tw, primes, a);            \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(((1 << LOG1) / 8) * C, LOGN, NTT_COLS_INV_B)      \
        ntt_inv_colsf_##LOGN##_##LOG1##_##C##_s(NTT_ARGS) { RHEA_TL                  \
        ntt_cols<LOGN, LOG1, C, false, false, false, true, true>(data, tw, primes, a);      \
    }

// Row kernels: ntt_{fwd,inv}_rows[d]_<LOGN>_<LOG1> (d: derived twiddles from the compact table).
#define NTT_ROWS_V(LOGN, LOG1, D, SUFFIX)                                                   \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_FWD_B)                                   \
        ntt_fwd_rows##SUFFIX##_##LOGN##_##LOG1(NTT_ARGS) { RHEA_TL                   \
        ntt_rows<LOGN, LOGN - LOG1, true, D>(data, tw, tw3, primes, a);                     \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_INV_B)                                   \
        ntt_inv_rows##SUFFIX##_##LOGN##_##LOG1(NTT_ARGS) { RHEA_TL                   \
        ntt_rows<LOGN, LOGN - LOG1, false, D>(data, tw, tw3, primes, a);                    \
    }
// ntt_fwd_rowsde_<LOGN>_<LOG1>: derived twiddles and the fused epilogue (grouped launches);
// ntt_fwd_rowsef_<LOGN>_<LOG1>: the same with FP64 rows (see ntt_f64_row).
#define NTT_ROWS_EPI(LOGN, LOG1)                                                            \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_FWD_B)                                   \
        ntt_fwd_rowsde_##LOGN##_##LOG1(NTT_ARGS) { RHEA_TL                           \
        ntt_rows<LOGN, LOGN - LOG1, true, true, true>(data, tw, tw3, primes, a);            \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_F64_B)                                   \
        ntt_fwd_rowsef_##LOGN##_##LOG1(NTT_ARGS) { RHEA_TL                           \
        ntt_rows<LOGN, LOGN - LOG1, true, true, true, false, false, true>(data, tw, tw3,    \
                                                                          primes, a);       \
    }
// ntt_{fwd,inv}_rowsd_<LOGN>_<LOG1>_p, ntt_fwd_rowse{d,f}_<LOGN>_<LOG1>_p: the derived-twiddle row
// kernels whose blocks take chunks of two rows with one table (NttArgs::pair_half; compiled
// apart so that the unpaired kernels keep their index arithmetic).
#define NTT_ROWS_PAIRED(LOGN, LOG1)                                                         \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_FWD_B)                                   \
        ntt_fwd_rowsd_##LOGN##_##LOG1##_p(NTT_ARGS) { RHEA_TL                        \
        ntt_rows<LOGN, LOGN - LOG1, true, true, false, true>(data, tw, tw3, primes, a);     \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_INV_B)                                   \
        ntt_inv_rowsd_##LOGN##_##LOG1##_p(NTT_ARGS) { RHEA_TL                        \
        ntt_rows<LOGN, LOGN - LOG1, false, true, false, true>(data, tw, tw3, primes, a);    \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_FWD_B)                                   \
        ntt_fwd_rowsde_##LOGN##_##LOG1##_p(NTT_ARGS) { RHEA_TL                       \
        ntt_rows<LOGN, LOGN - LOG1, true, true, true, true>(data, tw, tw3, primes, a);      \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_F64_B)                                   \
        ntt_fwd_rowsef_##LOGN##_##LOG1##_p(NTT_ARGS) { RHEA_TL                       \
        ntt_rows<LOGN, LOGN - LOG1, true, true, true, true, false, true>(data, tw, tw3,     \
                                                                         primes, a);        \
    }
// ntt_inv_rowsd_<LOGN>_<LOG1>_o: the derived-twiddle inverse row kernel out of place (strided
// launches: it reads a.pro_src[0] and writes `data`, DeviceNttTables::inverse_scaled_from;
// grouped launches: group g reads a.pro_src[g] when non-zero, DeviceNttTables::inverse_runs_from);
// ntt_inv_rowsdf_<LOGN>_<LOG1>_o the same with FP64 rows (words in, doubles out to
// ntt_inv_colsf_*_s; see ntt_f64_row).
#define NTT_ROWS_FROM(LOGN, LOG1)                                                           \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_INV_B)                                   \
        ntt_inv_rowsd_##LOGN##_##LOG1##_o(NTT_ARGS) { RHEA_TL                        \
        ntt_rows<LOGN, LOGN - LOG1, false, true, false, false, true>(data, tw, tw3, primes, \
                                                                     a);                    \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_INV_B)                                   \
        ntt_inv_rowsdf_##LOGN##_##LOG1##_o(NTT_ARGS) { RHEA_TL                       \
        ntt_rows<LOGN, LOGN - LOG1, false, true, false, false, true, true>(data, tw, tw3,   \
                                                                           primes, a);      \
    }
#define NTT_ROWS(LOGN, LOG1)                                                                \
    NTT_ROWS_V(LOGN, LOG1, false, ) NTT_ROWS_V(LOGN, LOG1, true, d) NTT_ROWS_EPI(LOGN, LOG1) \
    NTT_ROWS_PAIRED(LOGN, LOG1) NTT_ROWS_FROM(LOGN, LOG1)

// The instantiated shapes; keep in sync with rhea_cuda::ntt::SHAPES (the first shape listed
// there for each N is the default).
// A module per degree: the registry compiles this source once per log2 N with NTT_ONLY_LOG_N
// defined (rhea_cuda::ntt::ntt_source), so that a ring's first transform compiles only its own
// degree's kernels; without it (the NTT constant, compile checks) every degree is instantiated.
#ifndef NTT_ONLY_LOG_N
#define NTT_ALL_DEGREES 1
#define NTT_ONLY_LOG_N 0
#else
#define NTT_ALL_DEGREES 0
#endif
#if NTT_ALL_DEGREES || NTT_ONLY_LOG_N == 12
NTT_COLS(12, 6, 16)
NTT_ROWS(12, 6)
#endif
#if NTT_ALL_DEGREES || NTT_ONLY_LOG_N == 13
NTT_COLS(13, 6, 16)
NTT_ROWS(13, 6)
#endif
#if NTT_ALL_DEGREES || NTT_ONLY_LOG_N == 14
NTT_COLS(14, 7, 8)
NTT_ROWS(14, 7)
#endif
#if NTT_ALL_DEGREES || NTT_ONLY_LOG_N == 15
NTT_COLS(15, 7, 8)
NTT_ROWS(15, 7)
#endif
#if NTT_ALL_DEGREES || NTT_ONLY_LOG_N == 16
NTT_COLS(16, 7, 8)
NTT_ROWS(16, 7)
#endif
#if NTT_ALL_DEGREES || NTT_ONLY_LOG_N == 17
NTT_COLS(17, 8, 4)
NTT_ROWS(17, 8)
#endif

// ---- naive baseline ------------------------------------------------------------------------------

// Forward stage with m = 2^log_m blocks (t = N / 2m); the stage with t = 1 reduces to [0, q).
extern "C" __global__ void ntt_naive_fwd_stage(NTT_ARGS, const u32 log_n, const u32 log_m) {
    const u32 log_t = log_n - 1 - log_m;
    const u64 half = 1ull << (log_n - 1);
    const u64 total = (u64)a.rows << (log_n - 1);
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 id = (u64)blockIdx.x * blockDim.x + threadIdx.x; id < total; id += stride) {
        const NttRow nr = ntt_row(data, a, (u32)(id >> (log_n - 1)), (int)log_n);
        const u32 table = nr.table;
        u64* const row = nr.base;
        const u64 bf = id & (half - 1);
        const u64 i = bf >> log_t;
        const u64 x = (i << (log_t + 1)) + (bf & ((1ull << log_t) - 1));
        const u64 y = x + (1ull << log_t);
        const NttPrime pr = load_ntt_prime(primes, table);
        const ulonglong2 w = ldtw(tw + ((u64)table << log_n) + (1ull << log_m) + i);
        u64 vx = row[x], vy = row[y];
        if (log_t == 0) {
            fwd_bf_last(vx, vy, w, pr.q, pr.two_q);
        } else {
            fwd_bf(vx, vy, w, pr.q, pr.two_q);
        }
        row[x] = vx;
        row[y] = vy;
    }
}

// Inverse stage with m = 2^log_m blocks; the stage with m = 1 folds in N^-1 and reduces to [0, q).
extern "C" __global__ void ntt_naive_inv_stage(NTT_ARGS, const u32 log_n, const u32 log_m) {
    const u32 log_t = log_n - 1 - log_m;
    const u64 half = 1ull << (log_n - 1);
    const u64 total = (u64)a.rows << (log_n - 1);
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 id = (u64)blockIdx.x * blockDim.x + threadIdx.x; id < total; id += stride) {
        const NttRow nr = ntt_row(data, a, (u32)(id >> (log_n - 1)), (int)log_n);
        const u32 table = nr.table;
        u64* const row = nr.base;
        const u64 bf = id & (half - 1);
        const u64 i = bf >> log_t;
        const u64 x = (i << (log_t + 1)) + (bf & ((1ull << log_t) - 1));
        const u64 y = x + (1ull << log_t);
        const NttPrime pr = load_ntt_prime(primes, table);
        u64 vx = row[x], vy = row[y];
        if (log_m == 0) {
            inv_bf_last(vx, vy, pr);
        } else {
            const ulonglong2 w = ldtw(tw + ((u64)table << log_n) + (1ull << log_m) + i);
            inv_bf(vx, vy, w, pr.q, pr.two_q);
        }
        row[x] = vx;
        row[y] = vy;
    }
}

// ---- butterfly throughput (benchmark) ------------------------------------------------------------
//
// The arithmetic floor of the fast NTT: each thread keeps 8 entries and 7 twiddles in registers
// and runs `iters` radix-8 passes (3 stages, 12 lazy butterflies each) on them, with no memory
// traffic, then writes one word (so that nothing is optimised away). 128 threads per block, as the
// NTT kernels. 64-bit words: the forward (FWD) or inverse butterflies of the NTT, table 0 of `tw`,
// prime 0. 32-bit words (`ntt_bf32_*`): the same butterflies on words below 2^32 with a prime
// q32 < 2^30 (lazy values below 4q, Shoup companions floor(w * 2^32 / q)), twiddles derived from
// the thread index: what one butterfly costs if a 60-bit limb were carried by two ~30-bit primes
// (Cheddar's word size).

// One radix-8 pass (3 stages) of butterfly bf(x, y, w) over v with the twiddles w[0..7).
template <typename T, typename W, typename BF>
RHEA_INLINE void radix8_pass(T (&v)[8], const W (&w)[7], BF bf) {
#pragma unroll
    for (int s = 0; s < 3; ++s) {
        const int d = 4 >> s;
#pragma unroll
        for (int r = 0; r < 8; ++r) {
            if (r & d) continue;
            bf(v[r], v[r + d], w[(1 << s) - 1 + (r >> (3 - s))]);
        }
    }
}

template <bool FWD>
RHEA_INLINE void ntt_bf_loop(u64* out, const ulonglong2* __restrict__ tw,
                             const NttPrime* __restrict__ primes, u32 iters) {
    const NttPrime pr = load_ntt_prime(primes, 0);
    const u32 gid = blockIdx.x * blockDim.x + threadIdx.x;
    u64 v[8];
    ulonglong2 w[7];
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = ((u64)gid * 8 + i + 1) % pr.q;
#pragma unroll
    for (int i = 0; i < 7; ++i) w[i] = ldtw(tw + 8 + i + (threadIdx.x & 63));
#pragma unroll 1
    for (u32 it = 0; it < iters; ++it) {
        radix8_pass(v, w, [&](u64& x, u64& y, ulonglong2 wk) {
            if (FWD) {
                fwd_bf(x, y, wk, pr.q, pr.two_q);
            } else {
                inv_bf(x, y, wk, pr.q, pr.two_q);
            }
        });
    }
    u64 x = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) x ^= v[i];
    out[gid] = x;
}

// The 32-bit butterflies (see above).
RHEA_INLINE void fwd_bf32(u32& x, u32& y, uint2 w, u32 q, u32 two_q) {
    const u32 u = x >= two_q ? x - two_q : x;
    const u32 v = y * w.x - __umulhi(y, w.y) * q;
    x = u + v;
    y = u + two_q - v;
}

RHEA_INLINE void inv_bf32(u32& x, u32& y, uint2 w, u32 q, u32 two_q) {
    const u32 a = x, b = y;
    const u32 s = a + b;
    x = s >= two_q ? s - two_q : s;
    const u32 d = a + two_q - b;
    y = d * w.x - __umulhi(d, w.y) * q;
}

template <bool FWD>
RHEA_INLINE void ntt_bf32_loop(u64* out, u32 q, u32 iters) {
    const u32 gid = blockIdx.x * blockDim.x + threadIdx.x;
    const u32 two_q = 2 * q;
    u32 v[8];
    uint2 w[7];
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = (gid * 8u + i + 1u) % q;
#pragma unroll
    for (int i = 0; i < 7; ++i) {
        w[i].x = (u32)(((u64)(threadIdx.x & 63) * 7919u + 8u + i) % q);
        w[i].y = (u32)(((u64)w[i].x << 32) / q);
    }
#pragma unroll 1
    for (u32 it = 0; it < iters; ++it) {
        radix8_pass(v, w, [&](u32& x, u32& y, uint2 wk) {
            if (FWD) {
                fwd_bf32(x, y, wk, q, two_q);
            } else {
                inv_bf32(x, y, wk, q, two_q);
            }
        });
    }
    u32 x = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) x ^= v[i];
    out[gid] = x;
}

// The FP64 butterflies (fp64.cuh, `ntt_bff64_*`): the same passes on doubles, for a prime
// q < 2^46 (here q32 << 10 | 1, ~2^39: the cost does not depend on the value), twiddles derived
// from the thread index with their quotients w / q; the inverse reduces its sums every stage.
template <bool FWD>
RHEA_INLINE void ntt_bff64_loop(u64* out, u32 q32, u32 iters) {
    const u32 gid = blockIdx.x * blockDim.x + threadIdx.x;
    const u64 qw = ((u64)q32 << 10) | 1ull;
    const double q = (double)qw, qinv = 1.0 / q;
    double v[8];
    double2 w[7];
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = (double)(((u64)gid * 8 + i + 1) % qw);
#pragma unroll
    for (int i = 0; i < 7; ++i) {
        w[i].x = (double)(((u64)(threadIdx.x & 63) * 7919u + 8u + i) % qw);
        w[i].y = w[i].x / q;
    }
#pragma unroll 1
    for (u32 it = 0; it < iters; ++it) {
        radix8_pass(v, w, [&](double& x, double& y, double2 wk) {
            if (FWD) {
                f64_fwd_bf(x, y, wk, q);
            } else {
                f64_inv_bf(x, y, wk, q, qinv);
            }
        });
    }
    u64 x = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) x ^= (u64)__double_as_longlong(v[i]);
    out[gid] = x;
}

// Arguments of all six: (out, tw, primes, q32, iters); the 64-bit loops ignore q32, the 32-bit
// and FP64 ones tw and primes.
#define NTT_BF_ARGS                                                                         \
    u64 *out, const ulonglong2 *__restrict__ tw, const NttPrime *__restrict__ primes, u32 q32, \
        u32 iters
extern "C" __global__ void __launch_bounds__(128) ntt_bf_fwd_throughput(NTT_BF_ARGS) {
    ntt_bf_loop<true>(out, tw, primes, iters);
}
extern "C" __global__ void __launch_bounds__(128) ntt_bf_inv_throughput(NTT_BF_ARGS) {
    ntt_bf_loop<false>(out, tw, primes, iters);
}
extern "C" __global__ void __launch_bounds__(128) ntt_bf32_fwd_throughput(NTT_BF_ARGS) {
    ntt_bf32_loop<true>(out, q32, iters);
}
extern "C" __global__ void __launch_bounds__(128) ntt_bf32_inv_throughput(NTT_BF_ARGS) {
    ntt_bf32_loop<false>(out, q32, iters);
}
extern "C" __global__ void __launch_bounds__(128) ntt_bff64_fwd_throughput(NTT_BF_ARGS) {
    ntt_bff64_loop<true>(out, q32, iters);
}
extern "C" __global__ void __launch_bounds__(128) ntt_bff64_inv_throughput(NTT_BF_ARGS) {
    ntt_bff64_loop<false>(out, q32, iters);
}
