// ntt.cu: negacyclic NTT kernels over [poly][limb][N] buffers (see ntt.cuh for the algorithm).
//
// Fast path, for N = 2^12 .. 2^17: two launches per transform over every row (polynomial x limb)
// of the launch, each tile of a row one block's work.
//   forward: ntt_fwd_cols*_<LOGN>_<LOG1>_<C>, then ntt_fwd_rows*_<LOGN>_<LOG1>
//   inverse: ntt_inv_rows*_<LOGN>_<LOG1>, then ntt_inv_cols*_<LOGN>_<LOG1>_<C>
// Column kernels: blockDim = 2^LOG1 / 8 * C threads, rows * N2 / C tiles.
// Row kernels: blockDim = RowsShape<LOGN - LOG1>::THREADS, rows * N / (N2 * CH) tiles.
// Direct kernels take one block per tile; persistent ("p") kernels any grid (the host sizes it to
// the resident capacity) and loop over the tiles.
//
// Baseline: ntt_naive_{fwd,inv}_stage, one launch per stage, one radix-2 butterfly per thread
// (grid-stride), every stage through global memory.
//
// Arguments of every kernel: (data, twiddles, primes, NttArgs[, log_n, log_m]).

#include "ntt.cuh"

#define NTT_ARGS                                                                            \
    u64* __restrict__ data, const ulonglong2* __restrict__ tw, const NttPrime* __restrict__ primes, \
        const NttArgs a

// Column kernels: ntt_{fwd,inv}_cols[p]_<LOGN>_<LOG1>_<C> (p: persistent with prefetch).
// Persistent kernels cap registers at 64 (1024 threads per SM), else the compiler hoists every
// loop-invariant shared-memory address out of the tile loop.
#define NTT_MIN_BLOCKS(THREADS, PF) ((PF) ? 1024 / (THREADS) : 1)
#define NTT_COLS_BOUNDS(LOG1, C, PF)                                                        \
    __launch_bounds__(((1 << LOG1) / 8) * C, NTT_MIN_BLOCKS(((1 << LOG1) / 8) * C, PF))
#define NTT_ROWS_BOUNDS(LOGS, PF)                                                           \
    __launch_bounds__(RowsShape<LOGS>::THREADS, NTT_MIN_BLOCKS(RowsShape<LOGS>::THREADS, PF))

#define NTT_COLS_V(LOGN, LOG1, C, PF, SUFFIX)                                               \
    extern "C" __global__ void NTT_COLS_BOUNDS(LOG1, C, PF)                                 \
        ntt_fwd_cols##SUFFIX##_##LOGN##_##LOG1##_##C(NTT_ARGS) {                            \
        ntt_cols<LOGN, LOG1, C, true, PF>(data, tw, primes, a);                             \
    }                                                                                       \
    extern "C" __global__ void NTT_COLS_BOUNDS(LOG1, C, PF)                                 \
        ntt_inv_cols##SUFFIX##_##LOGN##_##LOG1##_##C(NTT_ARGS) {                            \
        ntt_cols<LOGN, LOG1, C, false, PF>(data, tw, primes, a);                            \
    }
#define NTT_COLS(LOGN, LOG1, C) NTT_COLS_V(LOGN, LOG1, C, false, ) NTT_COLS_V(LOGN, LOG1, C, true, p)

// Row kernels: ntt_{fwd,inv}_rows[d][p]_<LOGN>_<LOG1> (d: derived twiddles, p: persistent with
// prefetch).
#define NTT_ROWS_V(LOGN, LOG1, D, PF, SUFFIX)                                               \
    extern "C" __global__ void NTT_ROWS_BOUNDS(LOGN - LOG1, PF)                             \
        ntt_fwd_rows##SUFFIX##_##LOGN##_##LOG1(NTT_ARGS) {                                  \
        ntt_rows<LOGN, LOGN - LOG1, true, D, PF>(data, tw, primes, a);                      \
    }                                                                                       \
    extern "C" __global__ void NTT_ROWS_BOUNDS(LOGN - LOG1, PF)                             \
        ntt_inv_rows##SUFFIX##_##LOGN##_##LOG1(NTT_ARGS) {                                  \
        ntt_rows<LOGN, LOGN - LOG1, false, D, PF>(data, tw, primes, a);                     \
    }
#define NTT_ROWS(LOGN, LOG1)                                                                \
    NTT_ROWS_V(LOGN, LOG1, false, false, ) NTT_ROWS_V(LOGN, LOG1, true, false, d)           \
    NTT_ROWS_V(LOGN, LOG1, false, true, p) NTT_ROWS_V(LOGN, LOG1, true, true, dp)

// The instantiated shapes; keep in sync with rhea_cuda::ntt::SHAPES (the first shape listed
// there for each N is the default).
NTT_COLS(12, 6, 16)
NTT_ROWS(12, 6)
NTT_COLS(13, 6, 16)
NTT_ROWS(13, 6)
NTT_COLS(14, 7, 8)
NTT_ROWS(14, 7)
NTT_COLS(15, 7, 8)
NTT_ROWS(15, 7)
NTT_COLS(15, 8, 8)
NTT_ROWS(15, 8)
NTT_COLS(16, 8, 4)
NTT_COLS(16, 8, 8)
NTT_ROWS(16, 8)
NTT_COLS(16, 7, 8)
NTT_ROWS(16, 7)
NTT_COLS(17, 8, 4)
NTT_COLS(17, 8, 8)
NTT_ROWS(17, 8)
NTT_COLS(17, 9, 4)
NTT_ROWS(17, 9)

// ---- naive baseline ------------------------------------------------------------------------------

// Forward stage with m = 2^log_m blocks (t = N / 2m); the stage with t = 1 reduces to [0, q).
extern "C" __global__ void ntt_naive_fwd_stage(NTT_ARGS, const u32 log_n, const u32 log_m) {
    const u32 log_t = log_n - 1 - log_m;
    const u64 half = 1ull << (log_n - 1);
    const u64 total = (u64)a.rows << (log_n - 1);
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 id = (u64)blockIdx.x * blockDim.x + threadIdx.x; id < total; id += stride) {
        u64 off;
        u32 table;
        ntt_row(a, (u32)(id >> (log_n - 1)), log_n, off, table);
        const u64 bf = id & (half - 1);
        const u64 i = bf >> log_t;
        const u64 x = (i << (log_t + 1)) + (bf & ((1ull << log_t) - 1));
        const u64 y = x + (1ull << log_t);
        const NttPrime pr = load_ntt_prime(primes, table);
        const ulonglong2 w = ldtw(tw + ((u64)table << log_n) + (1ull << log_m) + i);
        u64 vx = data[off + x], vy = data[off + y];
        if (log_t == 0) {
            fwd_bf_last(vx, vy, w, pr.q, pr.two_q);
        } else {
            fwd_bf(vx, vy, w, pr.q, pr.two_q);
        }
        data[off + x] = vx;
        data[off + y] = vy;
    }
}

// Inverse stage with m = 2^log_m blocks; the stage with m = 1 folds in N^-1 and reduces to [0, q).
extern "C" __global__ void ntt_naive_inv_stage(NTT_ARGS, const u32 log_n, const u32 log_m) {
    const u32 log_t = log_n - 1 - log_m;
    const u64 half = 1ull << (log_n - 1);
    const u64 total = (u64)a.rows << (log_n - 1);
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 id = (u64)blockIdx.x * blockDim.x + threadIdx.x; id < total; id += stride) {
        u64 off;
        u32 table;
        ntt_row(a, (u32)(id >> (log_n - 1)), log_n, off, table);
        const u64 bf = id & (half - 1);
        const u64 i = bf >> log_t;
        const u64 x = (i << (log_t + 1)) + (bf & ((1ull << log_t) - 1));
        const u64 y = x + (1ull << log_t);
        const NttPrime pr = load_ntt_prime(primes, table);
        u64 vx = data[off + x], vy = data[off + y];
        if (log_m == 0) {
            inv_bf_last(vx, vy, pr);
        } else {
            const ulonglong2 w = ldtw(tw + ((u64)table << log_n) + (1ull << log_m) + i);
            inv_bf(vx, vy, w, pr.q, pr.two_q);
        }
        data[off + x] = vx;
        data[off + y] = vy;
    }
}
