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
// the H100 (BENCHMARKS.md §13: the column kernels, scheduled more freely with 72, ran 4-11 %
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
// 8 mul+relin ran 0.286 ms, at 7 0.278 (the integer rows: 0.280; BENCHMARKS.md §24).
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
// ntt_inv_cols_<LOGN>_<LOG1>_<C>_s with a factor per table folded into N^-1 (NttArgs::pro_w).
#define NTT_COLS(LOGN, LOG1, C)                                                             \
    extern "C" __global__ void NTT_BOUNDS(((1 << LOG1) / 8) * C, LOGN, NTT_COLS_FWD_B)      \
        ntt_fwd_colsl_##LOGN##_##LOG1##_##C(NTT_ARGS) {                                     \
        ntt_cols<LOGN, LOG1, C, true, true>(data, tw, primes, a);                           \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(((1 << LOG1) / 8) * C, LOGN, NTT_COLS_FWD_B)      \
        ntt_fwd_colslf_##LOGN##_##LOG1##_##C(NTT_ARGS) {                                    \
        ntt_cols<LOGN, LOG1, C, true, true, false, false, true>(data, tw, primes, a);       \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(((1 << LOG1) / 8) * C, LOGN, NTT_COLS_FWD_B)      \
        ntt_fwd_colsla_##LOGN##_##LOG1##_##C(NTT_ARGS) {                                    \
        ntt_cols<LOGN, LOG1, C, true, true, true>(data, tw, primes, a);                     \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(((1 << LOG1) / 8) * C, LOGN, NTT_COLS_FWD_B)      \
        ntt_fwd_colslaf_##LOGN##_##LOG1##_##C(NTT_ARGS) {                                   \
        ntt_cols<LOGN, LOG1, C, true, true, true, false, true>(data, tw, primes, a);        \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(((1 << LOG1) / 8) * C, LOGN, NTT_COLS_FWD_B)      \
        ntt_fwd_colsf_##LOGN##_##LOG1##_##C(NTT_ARGS) {                                     \
        ntt_cols<LOGN, LOG1, C, true, false, false, false, true>(data, tw, primes, a);      \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(((1 << LOG1) / 8) * C, LOGN, NTT_COLS_FWD_B)      \
        ntt_fwd_cols_##LOGN##_##LOG1##_##C(NTT_ARGS) {                                      \
        ntt_cols<LOGN, LOG1, C, true>(data, tw, primes, a);                                 \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(((1 << LOG1) / 8) * C, LOGN, NTT_COLS_INV_B)      \
        ntt_inv_cols_##LOGN##_##LOG1##_##C(NTT_ARGS) {                                      \
        ntt_cols<LOGN, LOG1, C, false>(data, tw, primes, a);                                \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(((1 << LOG1) / 8) * C, LOGN, NTT_COLS_INV_B)      \
        ntt_inv_cols_##LOGN##_##LOG1##_##C##_s(NTT_ARGS) {                                  \
        ntt_cols<LOGN, LOG1, C, false, false, false, true>(data, tw, primes, a);            \
    }

// Row kernels: ntt_{fwd,inv}_rows[d]_<LOGN>_<LOG1> (d: derived twiddles from the compact table).
#define NTT_ROWS_V(LOGN, LOG1, D, SUFFIX)                                                   \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_FWD_B)                                   \
        ntt_fwd_rows##SUFFIX##_##LOGN##_##LOG1(NTT_ARGS) {                                  \
        ntt_rows<LOGN, LOGN - LOG1, true, D>(data, tw, tw3, primes, a);                     \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_INV_B)                                   \
        ntt_inv_rows##SUFFIX##_##LOGN##_##LOG1(NTT_ARGS) {                                  \
        ntt_rows<LOGN, LOGN - LOG1, false, D>(data, tw, tw3, primes, a);                    \
    }
// ntt_fwd_rowsde_<LOGN>_<LOG1>: derived twiddles and the fused epilogue (grouped launches);
// ntt_fwd_rowsef_<LOGN>_<LOG1>: the same with FP64 rows (see ntt_f64_row).
#define NTT_ROWS_EPI(LOGN, LOG1)                                                            \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_FWD_B)                                   \
        ntt_fwd_rowsde_##LOGN##_##LOG1(NTT_ARGS) {                                          \
        ntt_rows<LOGN, LOGN - LOG1, true, true, true>(data, tw, tw3, primes, a);            \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_F64_B)                                   \
        ntt_fwd_rowsef_##LOGN##_##LOG1(NTT_ARGS) {                                          \
        ntt_rows<LOGN, LOGN - LOG1, true, true, true, false, false, true>(data, tw, tw3,    \
                                                                          primes, a);       \
    }
// ntt_{fwd,inv}_rowsd_<LOGN>_<LOG1>_p, ntt_fwd_rowse{d,f}_<LOGN>_<LOG1>_p: the derived-twiddle row
// kernels whose blocks take chunks of two rows with one table (NttArgs::pair_half; compiled
// apart so that the unpaired kernels keep their index arithmetic).
#define NTT_ROWS_PAIRED(LOGN, LOG1)                                                         \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_FWD_B)                                   \
        ntt_fwd_rowsd_##LOGN##_##LOG1##_p(NTT_ARGS) {                                       \
        ntt_rows<LOGN, LOGN - LOG1, true, true, false, true>(data, tw, tw3, primes, a);     \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_INV_B)                                   \
        ntt_inv_rowsd_##LOGN##_##LOG1##_p(NTT_ARGS) {                                       \
        ntt_rows<LOGN, LOGN - LOG1, false, true, false, true>(data, tw, tw3, primes, a);    \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_FWD_B)                                   \
        ntt_fwd_rowsde_##LOGN##_##LOG1##_p(NTT_ARGS) {                                      \
        ntt_rows<LOGN, LOGN - LOG1, true, true, true, true>(data, tw, tw3, primes, a);      \
    }                                                                                       \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_F64_B)                                   \
        ntt_fwd_rowsef_##LOGN##_##LOG1##_p(NTT_ARGS) {                                      \
        ntt_rows<LOGN, LOGN - LOG1, true, true, true, true, false, true>(data, tw, tw3,     \
                                                                         primes, a);        \
    }
// ntt_inv_rowsd_<LOGN>_<LOG1>_o: the derived-twiddle inverse row kernel out of place (strided
// launches: it reads a.pro_src[0] and writes `data`, DeviceNttTables::inverse_scaled_from;
// grouped launches: group g reads a.pro_src[g] when non-zero, DeviceNttTables::inverse_runs_from).
#define NTT_ROWS_FROM(LOGN, LOG1)                                                           \
    extern "C" __global__ void NTT_BOUNDS(RowsShape<LOGN - LOG1>::THREADS, LOGN,           \
                                          NTT_ROWS_INV_B)                                   \
        ntt_inv_rowsd_##LOGN##_##LOG1##_o(NTT_ARGS) {                                       \
        ntt_rows<LOGN, LOGN - LOG1, false, true, false, false, true>(data, tw, tw3, primes, \
                                                                     a);                    \
    }
#define NTT_ROWS(LOGN, LOG1)                                                                \
    NTT_ROWS_V(LOGN, LOG1, false, ) NTT_ROWS_V(LOGN, LOG1, true, d) NTT_ROWS_EPI(LOGN, LOG1) \
    NTT_ROWS_PAIRED(LOGN, LOG1) NTT_ROWS_FROM(LOGN, LOG1)

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
NTT_COLS(16, 7, 8)
NTT_ROWS(16, 7)
NTT_COLS(16, 8, 4)
NTT_ROWS(16, 8)
NTT_COLS(17, 8, 4)
NTT_COLS(17, 8, 8)
NTT_ROWS(17, 8)
NTT_COLS(17, 9, 4)
NTT_ROWS(17, 9)

// ---- the lifted transform in one pass: clusters of blocks ----------------------------------------
//
// ntt_fwd_lcl_16: the rescale's lifted forward transform with the fused epilogue (the work of
// ntt_fwd_colsl[f]_16_* then ntt_fwd_rowsef_16_*, grouped launches, flag_role 0) without the
// intermediate in global memory; ntt_fwd_lcla_16 the same with the lift-and-add prologue of
// ntt_fwd_colsla[f]_16_* (the merged ModDown-rescale). Row r (a limb of 2^16 entries) is the work of one cluster of
// NTT_CL = 8 blocks of 1024 threads (clusterid.x = r); block c of the cluster (its rank) owns
// chunk c, entries c 2^13 .. (c + 1) 2^13, in 64 KB of dynamic shared memory. First the three
// stages whose distance is >= 2^13 (the column phase of a 3 x 13 split): thread t of block c
// takes column k = c 2^10 + t, lifts its 8 entries k + j 2^13 from pro_src, runs the radix-8
// column transform in registers and stores entry j into block j's shared memory (distributed
// shared memory, st.shared::cluster) at k, where the row passes of ntt.cuh expect it (swizzled).
// After a cluster barrier each block runs the last 13 stages on its chunk (the row kernels'
// passes and the epilogue, rows_epilogue_store). FP64 rows as in the row kernels (ntt_f64_row),
// the others on words; the same words as the two-kernel pair. Needs compute capability 9.0
// (clusters); launched by rhea_cuda::ntt with the cluster dimension NTT_CL.
#define NTT_CL 8
#define NTT_CL_LOGS 13
// NTT_LCL_XS (default 1): each thread copies its epilogue operand x (8 words) into shared memory
// by cp.async once the kernel may read it (pdl_wait), so that the DRAM reads overlap the
// transform instead of following it; the kernel then takes 128 KB of shared memory, not 64.
#ifndef NTT_LCL_XS
#define NTT_LCL_XS 1
#endif

RHEA_INLINE u32 cluster_rank() {
    u32 r = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
#endif
    return r;
}

RHEA_INLINE u32 cluster_index() {
    u32 r = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
#endif
    return r;
}

// The cluster barrier in two halves: arrive (RELEASE: this thread's earlier writes, shared
// memory of other blocks included, become visible to the threads that wait) and wait (acquire).
template <bool RELEASE>
RHEA_INLINE void cluster_arrive() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (RELEASE) {
        asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    } else {
        asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    }
#endif
}

RHEA_INLINE void cluster_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}

// Stores w at the shared-memory address `saddr` (of this block's window) in block `rank` of the
// cluster.
RHEA_INLINE void cluster_store(u32 saddr, u32 rank, u64 w) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    u32 remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(saddr), "r"(rank));
    asm volatile("st.shared::cluster.u64 [%0], %1;" ::"r"(remote), "l"(w) : "memory");
#endif
}

// The word bits of an entry: a u64 itself, a double's bits.
RHEA_INLINE u64 entry_bits(u64 v) { return v; }
RHEA_INLINE u64 entry_bits(double v) { return (u64)__double_as_longlong(v); }

// One block's part of ntt_fwd_lcl[a]_16 with entries of type T (u64: lazy words; double: FP64
// rows, signed), tables tw / tw3 (the row's own, or its FP64 ones). ADD: the lift-and-add
// prologue of ntt_fwd_colsla_* (the run's words plus P_t times the lift; the run is only read).
template <typename T, bool ADD>
RHEA_INLINE void ntt_lcl_body(u64* sm, const ulonglong2* __restrict__ tw_tables,
                              const ulonglong2* __restrict__ tw3_tables, const NttPrime& pr,
                              const NttArgs& a, const NttRow& nr, u32 row, u32 rank) {
    constexpr int LOGN = 16, LOGS = NTT_CL_LOGS;
    constexpr u32 S = 1u << LOGS;
    constexpr u32 T_ROWS = S / 8;  // threads of the block (PassIdx: tau < S / 8)
    using PS = NttPasses<LOGS>;
    static_assert((1 << (LOGN - LOGS)) == NTT_CL, "one chunk per block of the cluster");
    const u32 tid = threadIdx.x;
    TwCtx tc;
    tc.tw = tw_tables + ((u64)nr.table << LOGN);
    tc.tw3 = nullptr;
    tc.cst[0] = tc.cst[1] = tc.cst[2] = make_ulonglong2(0, 0);
    tc.st = nullptr;

    // Column phase: stages 0-2 of column k (entries k + j S), table[1 .. 7].
    ulonglong2 w[NTT_PASS_TW];
    pass_tw_load_of<3, 0, false, false>(0u, 1u, tc, w);
    ntt_dep_wait(a, row, tid == 0);
    // x of this thread's epilogue words (rank S + 8 tid ..) as pairs at xs[i T_ROWS + tid]
    // (conflict-free reads), behind the chunk.
    ulonglong2* xs = nullptr;
    const u64 off = ((u64)nr.j << LOGN) + (u64)rank * S + 8 * tid;
    const u64* xg = reinterpret_cast<const u64*>(a.epi_x[nr.group]) + off;
    if (NTT_LCL_XS) {
        xs = reinterpret_cast<ulonglong2*>(sm + S) + tid;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            cp_async16(xs + i * T_ROWS, reinterpret_cast<const ulonglong2*>(xg + 2 * i));
        }
        cp_async_commit();
    }
    const u32 k = rank * T_ROWS + tid;
    const u64* src = reinterpret_cast<const u64*>(a.pro_src[nr.group]) + k;
    u64 t[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) t[j] = ld_dep(src + (u64)j * S);
    const u64 ql = a.pro_q;
    T v[8];
    if constexpr (IsF64<T>::value) {
        // The centred representative, exact (|c| <= q_last / 2 < 2^45).
        const double qlf = __ull2double_rn(ql);
#pragma unroll
        for (int j = 0; j < 8; ++j) v[j] = __dsub_rn(f64_from_word(t[j]), t[j] > (ql >> 1) ? qlf : 0.0);
        if constexpr (ADD) {
            // P_t (pro_w) and P_t * fl(1 / q) (entry 0 of the row's FP64 table); below 1.75 q.
            const u64 pw = ld_dep(reinterpret_cast<const u64*>(a.pro_w) + 2ull * nr.table);
            const u64* h = reinterpret_cast<const u64*>(a.tw_f64) + ((u64)nr.table << (LOGN + 1));
            const double qf = __ull2double_rn(pr.q), pf = f64_from_word(pw);
            const double pq = __dmul_rn(pf, __longlong_as_double((long long)__ldg(h + 1)));
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const u64 y = ld_dep(nr.base + k + (u64)j * S);
                v[j] = __dadd_rn(f64_from_word(y), f64_mulmod(v[j], pf, pq, qf));
            }
        }
    } else {
        const u64 s1 = ld_dep(reinterpret_cast<const u64*>(a.pro_moduli) + 4ull * nr.table + 1);
        const u64 neg = pr.q - ntt_csub(shoup_mul_lazy(ql, 1ull, s1, pr.q), pr.q);
#pragma unroll
        for (int j = 0; j < 8; ++j) v[j] = lift_lazy(t[j], ql >> 1, neg, s1, pr.q);
        if constexpr (ADD) {
            // run + P_t * lift: [0, q) + [0, 2q), a valid lazy input below 6q.
            const ulonglong2 pw = ld_dep2(reinterpret_cast<const ulonglong2*>(a.pro_w) + nr.table);
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                v[j] = ld_dep(nr.base + k + (u64)j * S) + shoup_mul_lazy(v[j], pw.x, pw.y, pr.q);
            }
        }
    }
    fwd_pass<3, 0, 3, false, false>(v, w, tc, pr.q, pr.two_q);

    // The row phase's first twiddles (table[8 + rank]) while the cluster's blocks start.
    const u32 R = NTT_CL + rank;
    tc.tw3 = tw3_offset<false>(tw3_tables, ((u64)nr.table << (LOGN - 3)) + rank * T_ROWS + tid);
    pass_tw_load_of<LOGS, 0, true, false>(tid, R, tc, w);
    // Entry j of column k goes to block j's chunk at k. Every block of the cluster has started
    // (the first barrier's wait) before any writes into another's shared memory.
    cluster_wait();
    const u32 at_k = (u32)__cvta_generic_to_shared(sm) + (ntt_swizzle(k) << 3);
#pragma unroll
    for (int j = 0; j < 8; ++j) cluster_store(at_k, (u32)j, entry_bits(v[j]));
    cluster_arrive<true>();
    cluster_wait();

    // Row phase: the last 13 stages on this block's chunk, then the epilogue.
    const RowsSmem at{0};
    smem_load<LOGS, 0>(sm, at, tid, v);
    fwd_passes<LOGS, 0, true, false, true>(v, w, sm, at, tid, R, tc, pr.q, pr.two_q);
    if (NTT_LCL_XS) {
        // Only this thread's own copies are read: no block barrier. x consumed (a.dead & 2):
        // its lines dropped from L2 (one 128-byte line per even thread, once its odd
        // neighbour's copy has landed too: the warp barrier), as the row kernels do.
        cp_async_wait_all();
        __syncwarp();
        if ((a.dead & 2u) && (tid & 1u) == 0) l2_discard(xg);
    }
    rows_epilogue_store<LOGS, PS::COUNT - 1>(a, nr, (u64)rank * S, LOGN, tid, v, pr.q, xs,
                                             T_ROWS);
}

template <bool ADD>
RHEA_INLINE void ntt_lcl(const ulonglong2* __restrict__ tw, const ulonglong2* __restrict__ tw3,
                         const NttPrime* __restrict__ primes, const NttArgs& a) {
    // 2^13 words of the chunk (64 KB), then with NTT_LCL_XS 2^13 words of x.
    extern __shared__ __align__(16) u64 ntt_lcl_sm[];
    pdl_trigger();
    // Every block arrives at once; the wait comes before its first remote store.
    cluster_arrive<false>();
    const u32 rank = cluster_rank();
    const u32 row = cluster_index();
    const NttRow nr = ntt_row(nullptr, a, row, 16);
    const NttPrime pr = load_ntt_prime(primes, nr.table);
    // Two disjoint bodies (see ntt_rows).
    if (ntt_f64_row(a, row, nr.table, 16)) {
        ntt_lcl_body<double, ADD>(ntt_lcl_sm, reinterpret_cast<const ulonglong2*>(a.tw_f64),
                                  reinterpret_cast<const ulonglong2*>(a.tw3_f64), pr, a, nr, row,
                                  rank);
    } else {
        ntt_lcl_body<u64, ADD>(ntt_lcl_sm, tw, tw3, pr, a, nr, row, rank);
    }
}

extern "C" __global__ void __launch_bounds__(1024, 1) ntt_fwd_lcl_16(NTT_ARGS) {
    ntt_lcl<false>(tw, tw3, primes, a);
}
extern "C" __global__ void __launch_bounds__(1024, 1) ntt_fwd_lcla_16(NTT_ARGS) {
    ntt_lcl<true>(tw, tw3, primes, a);
}

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
