// ntt.cuh: building blocks of the negacyclic NTT kernels (ntt.cu).
//
// Twin: rhea_math::ntt::NttTable (crates/rhea-math/src/ntt.rs). The tables are that crate's,
// uploaded verbatim by rhea_cuda::ntt::DeviceNttTables:
//
//   twiddles  ulonglong2 [table][N]: (root_powers[i], root_powers_shoup[i]) for the forward
//             transform, (inv_root_powers[i], inv_root_powers_shoup[i]) for the inverse;
//             root_powers[i] = psi^bitrev(i).
//   NttPrime  [table]: q and the constants of the inverse's last stage (N^-1 folded in).
//
// Forward = Cooley-Tukey, natural -> bit-reversed; the stage with m blocks (block i spans 2t
// entries, t = N/2m) uses w = root_powers[m + i]. Inverse = Gentleman-Sande, bit-reversed ->
// natural, stage with m blocks uses inv_root_powers[m + i], the last stage (m = 1) times N^-1.
// Harvey's lazy butterflies with Shoup products whose quotient may come out one low (see
// NTT_APPROX_HI): forward values in [0, 6q), inverse values in [0, 3q); q < 2^61, so nothing
// overflows (6q < 2^64). Inputs and outputs are canonical ([0, q)); the final reduction is fused
// into the last stage, so the outputs are the CPU's words exactly.
//
// Two-kernel design (N = 2^LOGN = N1 x N2, N1 = 2^LOG1): the "column" kernel runs the LOG1 stages
// whose butterfly distance is >= N2 (entries c + k*N2, k < N1, for each column c < N2); the
// "row" kernel runs the remaining stages inside contiguous chunks of N2 entries. Each thread
// holds 8 entries in registers and applies up to 3 stages (radix 8) per pass; passes exchange
// data through shared memory, swizzled against bank conflicts.

#pragma once

#include "common.cuh"
#include "fp64.cuh"

// Per-table constants (8 words, must match rhea_cuda::ntt::PRIME_WORDS / prime_words()).
struct NttPrime {
    u64 q;
    u64 two_q;
    u64 ninv;         // N^-1 mod q
    u64 ninv_shoup;
    u64 last_w;       // inv_root_powers[1] * N^-1 mod q
    u64 last_w_shoup;
    u64 ratio_lo;     // floor((2^128 - 1) / q), low and high word (tw_companion)
    u64 ratio_hi;
};

// Which limbs of a [poly][limb][N] buffer a launch transforms (must match rhea_cuda::ntt::NttArgs,
// #[repr(C)]). Row r of the launch is polynomial r / count, buffer limb start + r % count, which
// uses table first_table + start + r % count.
//
// Grouped launches (groups > 0) instead transform runs of limbs anywhere in device memory: group
// g is `row_start[g+1] - row_start[g]` consecutive limbs from address ptr[g], its row j using
// table table[g] + j (`data` is then unused). Up to NTT_MAX_GROUPS runs in one launch: the digits
// of a ModUp with their own limbs skipped, or both halves of a ciphertext.
//
// Epilogue (forward row kernels `ntt_fwd_rowsde_*` only, for grouped launches): instead of
// writing the transform v back in place, row j of group g writes
//   out = (x - v) * w            (epi_c[g] == 0)
//   out = c + (x - v) * w        (otherwise)
// mod q at epi_out[g] + j*N, with x at epi_x[g] + j*N, c at epi_c[g] + j*N and (w, shoup(w)) =
// epi_w[table] (ModDown's P^-1 or rescale's q_last^-1, relinearisation's add fused).
//
// Prologue (forward column kernels `ntt_fwd_colsl_*` only, for grouped launches): row j of group
// g does not read its input from its run but lifts the single limb at pro_src[g] (N words,
// canonical modulo the odd pro_q = q_last) centred to its prime q = the table's:
//   x = t              (t <= q_last / 2)
//   x = t - q_last     (otherwise)            mod q,
// lazily in [0, 3q) (see lift_lazy), then transforms as usual, writing the column-phase output
// to the run. pro_moduli: the RheaModulus table (rhea_cuda DeviceModuli) indexed by table; only
// its Barrett word ratio_hi = floor(2^64 / q) is used. Rescaling by q_last in the NTT domain.
//
// Lift-and-add prologue (`ntt_fwd_colsla_*`): as above, but the row reads its run too and
// transforms run + P_t * lift(t) (P_t, shoup(P_t)) = pro_w[table]: the merged ModDown-rescale.
//
// Second epilogue factor: with epi_w2 != 0 the epilogue's result is further multiplied by
// epi_w2[table] (the rescale's q_last^-1 after ModDown's P^-1).
#define NTT_MAX_GROUPS 24
struct NttArgs {
    u32 limbs;        // limbs per polynomial in the buffer
    u32 start;        // first limb transformed
    u32 count;        // limbs transformed per polynomial
    u32 first_table;  // table of buffer limb 0
    u32 rows;         // polys * count (grouped: row_start[groups])
    u32 groups;       // 0: the strided form above; else the number of groups
    u32 row_start[NTT_MAX_GROUPS + 1];
    u32 table[NTT_MAX_GROUPS];
    u32 pair_half;    // the paired row kernels (ntt_*_rowsd*_p, even CH): rows r and
                      // r + pair_half share a table and each block takes CH/2 chunks of both
    u32 epi_galois;   // epilogue: 0, or h = g^-1 mod 2N: the result is written permuted by
                      // the automorphism sigma_g (entry k to bitrev(((2 bitrev(k) + 1) h
                      // mod 2N - 1) / 2), the scatter form of automorphism_ntt's gather)
    u32 dead;         // the epilogue's operands read for the last time (bit 1: x), which the
                      // row kernel drops from L2 after reading them (l2_discard)
    u64 ptr[NTT_MAX_GROUPS];
    u64 epi_out[NTT_MAX_GROUPS];
    u64 epi_x[NTT_MAX_GROUPS];
    u64 epi_c[NTT_MAX_GROUPS];
    u64 epi_w;        // const ulonglong2* [table]
    u64 pro_src[NTT_MAX_GROUPS];
    u64 pro_moduli;   // const RheaModulus* [table]
    u64 pro_q;        // q_last
    u64 pro_w;        // const ulonglong2* [table]: the lift-and-add prologue's factor; for the
                      // scaled inverse (ntt_inv_cols_*_s), two pairs per table
    u64 epi_w2;       // const ulonglong2* [table], or 0
    u64 flags;        // row flags (see ntt_dep_wait): u32 [2][NTT_FLAG_ROWS], or 0
    u32 epoch;        // the stamp of this transform's finished rows
    u32 flag_role;    // 0: none; 1: the first phase, signals its rows; 2: the second, waits on them
    u32 tw_staged;    // 1: the kernels stage their twiddles in shared memory (see NTT_TW_SMEM)
    u64 tw_f64;       // FP64 rows (see ntt_f64_row): const ulonglong2* [table][N], or 0
    u64 tw3_f64;      // their compact table (as tw3, the pairs of tw_f64) [table][N/8][3]
};
// The layout of the Rust twin (`src/ntt/args.rs`), asserted there too: keep both in step.
static_assert(sizeof(NttArgs) == 1272, "NttArgs: not the Rust size");
static_assert(alignof(NttArgs) == 8, "NttArgs: not the Rust alignment");
static_assert(RHEA_OFFSETOF(NttArgs, limbs) == 0, "NttArgs::limbs: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, start) == 4, "NttArgs::start: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, count) == 8, "NttArgs::count: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, first_table) == 12, "NttArgs::first_table: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, rows) == 16, "NttArgs::rows: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, groups) == 20, "NttArgs::groups: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, row_start) == 24, "NttArgs::row_start: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, table) == 124, "NttArgs::table: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, pair_half) == 220, "NttArgs::pair_half: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, epi_galois) == 224, "NttArgs::epi_galois: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, dead) == 228, "NttArgs::dead: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, ptr) == 232, "NttArgs::ptr: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, epi_out) == 424, "NttArgs::epi_out: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, epi_x) == 616, "NttArgs::epi_x: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, epi_c) == 808, "NttArgs::epi_c: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, epi_w) == 1000, "NttArgs::epi_w: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, pro_src) == 1008, "NttArgs::pro_src: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, pro_moduli) == 1200, "NttArgs::pro_moduli: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, pro_q) == 1208, "NttArgs::pro_q: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, pro_w) == 1216, "NttArgs::pro_w: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, epi_w2) == 1224, "NttArgs::epi_w2: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, flags) == 1232, "NttArgs::flags: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, epoch) == 1240, "NttArgs::epoch: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, flag_role) == 1244, "NttArgs::flag_role: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, tw_staged) == 1248, "NttArgs::tw_staged: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, tw_f64) == 1256, "NttArgs::tw_f64: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttArgs, tw3_f64) == 1264, "NttArgs::tw3_f64: not the Rust offset");

// FP64 rows (the kernels with F64, fp64.cuh): a row whose prime is below 2^46 may run its
// butterflies on the FP64 pipe instead of the integer one. Its twiddles are then the table
// tw_f64 [table][N] of pairs (w, fl(w / q)) as doubles' bits (the launch's direction: forward
// twiddles, or inverse ones for ntt_inv_*f_*), whose unused entry 0 holds (q, fl(1 / q)) for a
// prime that takes FP64 and zeros for one that does not, and the row kernel's direct pass reads
// their compact table tw3_f64 (pairs in both directions). Between the two
// kernels such a row's entries are signed doubles (|v| < 2^50), not lazy words: both kernels
// choose by this one function of the row.
RHEA_INLINE bool ntt_f64_row(const NttArgs& a, u32 row, u32 table, int logn) {
    if (a.tw_f64 == 0) return false;
    const u64* h = reinterpret_cast<const u64*>(a.tw_f64) + ((u64)table << (logn + 1));
    return __ldg(h) != 0ull;
}

// Row flags: the second kernel of a two-kernel transform starts on a row as soon as the first
// kernel's blocks of that row are done, instead of waiting (pdl_wait) for the whole first grid.
// The first kernel's blocks count themselves done per row (flags[row]); the row's last block
// resets the count and stamps the row with the transform's epoch (flags[NTT_FLAG_ROWS + row]),
// which the second kernel's blocks wait for. The second kernel is launched with programmatic
// dependent launch once every block of the first has started (pdl_trigger comes first in both),
// so a waiting block only ever waits for blocks that are running or done; without PDL it starts
// after the first grid, and the stamps are already there. Counts and stamps belong to one
// DeviceNttTables, whose transforms are ordered on the device's one stream: the next first
// kernel touches them only after its pdl_wait, when this transform's second kernel is complete.
// The second kernel does not wait for the kernel before it, so the host keeps the pair adjacent
// on the stream (rhea_cuda::launch::hold_launches): its completion then implies the first's.
#define NTT_FLAG_ROWS 4096

// The first phase: called by one thread of the block once all its threads have stored
// (__syncthreads); `blocks` = the first kernel's blocks that touch `row`.
RHEA_INLINE void ntt_row_signal(const NttArgs& a, u32 row, u32 blocks) {
    u32* cnt = reinterpret_cast<u32*>(a.flags) + row;
    __threadfence();  // the block's stores (ordered before this thread by the barrier) first
    if (atomicAdd(cnt, 1u) + 1u == blocks) {
        atomicExch(cnt, 0u);
        __threadfence();
        atomicExch(cnt + NTT_FLAG_ROWS, a.epoch);
    }
}

// Where a kernel of a transform waits for the work before it: pdl_wait, or in the second phase
// of a flagged transform the stamp of its row (read by `leader`, one thread per row of the
// block; the acquiring load also invalidates L1), then a barrier for the whole block.
RHEA_INLINE void ntt_dep_wait(const NttArgs& a, u32 row, bool leader) {
    if (a.flag_role != 2) {
        pdl_wait();
        return;
    }
    if (leader) {
        const u32* st = reinterpret_cast<const u32*>(a.flags) + NTT_FLAG_ROWS + row;
        for (;;) {
            u32 v;
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(st) : "memory");
            if (v == a.epoch) break;
            __nanosleep(64);
        }
    }
    __syncthreads();
}

// ---- butterflies ---------------------------------------------------------------------------------

// a - q if a >= q, else a, where the sign of a - q decides (one subtraction, one test of the high
// word, two selects): for q < 2^63 and a < 2q (every call here: a below 2 x its threshold), so
// that a - q lies in (-2^63, 2^63).
RHEA_INLINE u64 ntt_csub(u64 a, u64 q) {
    const u64 d = a - q;
    return (i64)d < 0 ? a : d;
}

// NTT_APPROX_HI (default 1): the high word of the Shoup quotient a * w' / 2^64 drops the
// low-by-low partial product a0 * w0' (and the carry it may send up), so the quotient is the
// exact one or one less and a lazy product a * w - h * q lies in [0, 3q) instead of [0, 2q).
// The butterflies keep forward values in [0, 6q) (reduced by 3q) and inverse values in
// [0, 3q); with q < 2^61 the largest, 6q, stays below 2^64. One 32 x 32 -> 64-bit multiply
// fewer per butterfly (6 -> 4 IMAD.WIDE in SASS): on the H100 the arithmetic floor drops 8 %,
// the 2^16 x 32 transform 2 % forward and 4 % inverse (bench-history §14). 0: the exact
// quotient (for comparison, through RHEA_NVRTC_DEFINES); the outputs are the same words.
#ifndef NTT_APPROX_HI
#define NTT_APPROX_HI 1
#endif

// The high word of a * b (NTT_APPROX_HI: that word or one less).
RHEA_INLINE u64 ntt_mulhi(u64 a, u64 b) {
#if NTT_APPROX_HI
    u64 h;
    asm("{\n\t"
        ".reg .u32 a0, a1, b0, b1, sl, sh, c;\n\t"
        ".reg .u64 t, u, s, x;\n\t"
        "mov.b64 {a0, a1}, %1;\n\t"
        "mov.b64 {b0, b1}, %2;\n\t"
        "mul.wide.u32 t, a0, b1;\n\t"
        "mul.wide.u32 u, a1, b0;\n\t"
        "add.cc.u64 s, t, u;\n\t"
        "addc.u32 c, 0, 0;\n\t"
        "mov.b64 {sl, sh}, s;\n\t"
        "mov.b64 x, {sh, c};\n\t"
        "mad.wide.u32 %0, a1, b1, x;\n\t"
        "}"
        : "=l"(h)
        : "l"(a), "l"(b));
    return h;
#else
    return __umul64hi(a, b);
#endif
}

// The lazy bound b the butterflies reduce to: 3q (2q without NTT_APPROX_HI), from 2q.
RHEA_INLINE u64 ntt_lazy_bound(u64 q, u64 two_q) { return NTT_APPROX_HI ? two_q + q : two_q; }

// shoup_mul_lazy (common.cuh), the same word: a * w - hi * q mod 2^64, written as
// a * w + hi * (2^64 - q) over 32-bit halves, so that the two low products share one chain of
// multiply-adds (two wide products for the low word, four 32-bit ones for the high word) instead
// of two separate 64-bit products and a negation.
RHEA_INLINE u64 ntt_shoup_lazy(u64 a, u64 w, u64 w_shoup, u64 q) {
    const u64 h = ntt_mulhi(a, w_shoup);
    const u64 nq = 0ull - q;
    u64 r;
    asm("{\n\t"
        ".reg .u32 al, ah, wl, wh, hl, hh, nl, nh, tl, th;\n\t"
        ".reg .u64 t;\n\t"
        "mov.b64 {al, ah}, %1;\n\t"
        "mov.b64 {wl, wh}, %2;\n\t"
        "mov.b64 {hl, hh}, %3;\n\t"
        "mov.b64 {nl, nh}, %4;\n\t"
        "mul.wide.u32 t, hl, nl;\n\t"
        "mad.wide.u32 t, al, wl, t;\n\t"
        "mov.b64 {tl, th}, t;\n\t"
        "mad.lo.u32 th, al, wh, th;\n\t"
        "mad.lo.u32 th, ah, wl, th;\n\t"
        "mad.lo.u32 th, hl, nh, th;\n\t"
        "mad.lo.u32 th, hh, nl, th;\n\t"
        "mov.b64 %0, {tl, th};\n\t"
        "}"
        : "=l"(r)
        : "l"(a), "l"(w), "l"(h), "l"(nq));
    return r;
}

// Forward (Cooley-Tukey) lazy butterfly: x, y in [0, 2b) -> x + wy, x - wy in [0, 2b), with
// b = ntt_lazy_bound (3q: [0, 6q); 2q: [0, 4q) without NTT_APPROX_HI).
RHEA_INLINE void fwd_bf(u64& x, u64& y, ulonglong2 w, u64 q, u64 two_q) {
    const u64 b = ntt_lazy_bound(q, two_q);
    const u64 u = ntt_csub(x, b);
    const u64 v = ntt_shoup_lazy(y, w.x, w.y, q);
    x = u + v;
    y = u + b - v;
}

// Reduces a lazy product (below b = ntt_lazy_bound) to [0, q).
RHEA_INLINE u64 ntt_reduce_lazy(u64 v, u64 q, u64 two_q) {
    if (NTT_APPROX_HI) v = ntt_csub(v, two_q);
    return ntt_csub(v, q);
}

// The forward butterfly of the last stage, with the reduction to [0, q).
RHEA_INLINE void fwd_bf_last(u64& x, u64& y, ulonglong2 w, u64 q, u64 two_q) {
    u64 u = ntt_csub(x, ntt_lazy_bound(q, two_q));
    u = ntt_reduce_lazy(u, q, two_q);
    const u64 v = ntt_reduce_lazy(ntt_shoup_lazy(y, w.x, w.y, q), q, two_q);
    x = ntt_csub(u + v, q);
    y = ntt_csub(u + q - v, q);
}

// Inverse (Gentleman-Sande) lazy butterfly: x, y in [0, b) -> x + y, (x - y) w in [0, b), with
// b = ntt_lazy_bound (3q, or 2q without NTT_APPROX_HI).
RHEA_INLINE void inv_bf(u64& x, u64& y, ulonglong2 w, u64 q, u64 two_q) {
    const u64 a = x, c = y, b = ntt_lazy_bound(q, two_q);
    x = ntt_csub(a + c, b);
    y = ntt_shoup_lazy(a + b - c, w.x, w.y, q);
}

// The inverse butterfly with the twiddle w * c given as two factors (two lazy Shoup products).
RHEA_INLINE void inv_bf2(u64& x, u64& y, ulonglong2 w, ulonglong2 c, u64 q, u64 two_q) {
    const u64 a = x, d = y, b = ntt_lazy_bound(q, two_q);
    x = ntt_csub(a + d, b);
    y = ntt_shoup_lazy(ntt_shoup_lazy(a + b - d, w.x, w.y, q), c.x, c.y, q);
}

// The inverse butterfly of the last stage (m = 1) with N^-1 folded in, results in [0, q).
RHEA_INLINE void inv_bf_last(u64& x, u64& y, const NttPrime& p) {
    const u64 a = x, c = y, b = ntt_lazy_bound(p.q, p.two_q);
    x = ntt_reduce_lazy(ntt_shoup_lazy(a + c, p.ninv, p.ninv_shoup, p.q), p.q, p.two_q);
    y = ntt_reduce_lazy(ntt_shoup_lazy(a + b - c, p.last_w, p.last_w_shoup, p.q), p.q, p.two_q);
}

RHEA_INLINE NttPrime load_ntt_prime(const NttPrime* primes, u32 i) {
    const ulonglong2* p = reinterpret_cast<const ulonglong2*>(primes + i);
    const ulonglong2 a = __ldg(p), b = __ldg(p + 1), c = __ldg(p + 2), d = __ldg(p + 3);
    NttPrime r;
    r.q = a.x;
    r.two_q = a.y;
    r.ninv = b.x;
    r.ninv_shoup = b.y;
    r.last_w = c.x;
    r.last_w_shoup = c.y;
    r.ratio_lo = d.x;  // a dead load wherever tw_companion is not used
    r.ratio_hi = d.y;
    return r;
}

// One twiddle pair. A plain global load, not __ldg: ptxas moves read-only (.nc) loads past a
// bar.sync (they cannot observe other threads' writes), so the next pass's twiddles, loaded
// before the barrier that precedes the pass (NTT_PREFETCH), were issued after it, each a few
// instructions before its first use. A plain load is ordered with the barrier and stays before
// it, where its latency overlaps the shared-memory exchange: 2-4 % faster transforms on the H100
// (bench-history §12b). `volatile` keeps the front end from moving it instead. NTT_TW_NC=1
// restores __ldg (for comparison; RHEA_NVRTC_DEFINES).
#ifndef NTT_TW_NC
#define NTT_TW_NC 0
#endif
RHEA_INLINE ulonglong2 ldtw(const ulonglong2* p) {
#if NTT_TW_NC
    return __ldg(p);
#else
    return ld_dep2(p);  // the same plain load (common.cuh)
#endif
}

// ---- passes --------------------------------------------------------------------------------------
//
// A sub-transform of S = 2^LOGS entries (local index k) runs LOGS local stages; local stage j has
// blocks of S >> j entries, and its twiddle for local block ib is table[(R << j) + ib], where
// R = 1 for the column kernel and R = N1 + chunk for the row kernel.
//
// The stages are grouped into passes: a first pass of LOGS % 3 stages (when non-zero), then passes
// of 3. A pass (J0, P) covers local stages J0 .. J0+P-1; its groups of G = 2^P entries are
// k = g * G * TL + h + r * TL (r < G, TL = S >> (J0 + P), g < 2^J0, h < TL). The S/8 threads of a
// sub-transform each take 8 / G groups: thread tau takes groups tau + u * S/8. In the last pass
// (TL = 1, P = 3, the "direct" pass) each thread owns 8 contiguous entries and 7 twiddles of its
// own; the other passes share their twiddles between threads.

template <int LOGS>
struct NttPasses {
    static_assert(LOGS >= 3, "sub-transforms have at least 8 entries");
    static constexpr int P0 = (LOGS % 3) ? (LOGS % 3) : 3;
    static constexpr int COUNT = (LOGS + 2) / 3;
    static constexpr int j0(int i) { return i == 0 ? 0 : P0 + 3 * (i - 1); }
    static constexpr int p(int i) { return i == 0 ? P0 : 3; }
};

// The local index of register `idx` (0..7) of thread `tau` in pass (J0, P), for tau < T:
//   k = (g << (LTL + P)) + h + (r << LTL),  u = idx >> P, r = idx % G, tau + u*T = g * 2^LTL + h,
// split as k = a(tau) | b(idx), two parts with disjoint bits: a per thread (computed once per
// pass), b a compile-time constant (so that global and shared-memory accesses are a per-thread
// base plus an immediate, and the swizzle, linear over GF(2), is one XOR per access). With
// T >= 2^LTL, T is a multiple of 2^LTL; otherwise 2^LTL is a multiple of T and, as tau < T,
// tau + (u*T mod 2^LTL) < 2^LTL. The group index g is likewise ga(tau) + gb(u).
template <int LOGS, int J0, int P>
struct PassIdx {
    static constexpr int G = 1 << P;
    static constexpr u32 T = (1u << LOGS) >> 3;
    static constexpr int LTL = LOGS - J0 - P;
    static constexpr u32 MASK = (1u << LTL) - 1u;
    static constexpr bool WIDE = T > MASK;  // T >= 2^LTL
    RHEA_INLINE static u32 a(u32 tau) {
        if constexpr (WIDE) {
            return ((tau >> LTL) << (LTL + P)) | (tau & MASK);
        } else {
            return tau;
        }
    }
    RHEA_INLINE static constexpr u32 b(int idx) {
        const u32 ut = ((u32)idx >> P) * T;
        return ((ut >> LTL) << (LTL + P)) + (ut & MASK) + (((u32)idx & (G - 1)) << LTL);
    }
    RHEA_INLINE static u32 ga(u32 tau) { return WIDE ? tau >> LTL : 0u; }
    RHEA_INLINE static constexpr u32 gb(int u) { return ((u32)u * T) >> LTL; }
};

template <int LOGS, int I>
using PassIdxOf = PassIdx<LOGS, NttPasses<LOGS>::j0(I), NttPasses<LOGS>::p(I)>;

// Where a pass finds its twiddles.
//
// tw: the row's table (global memory). DERIVED, in the direct pass: of the 2 + 4 twiddles of the
// last two stages only table[base] is used, and table[base + k] = table[base] * table[k]
// (k = 1, 2, 3; bitrev(base + k) = bitrev(base) + bitrev(k) as base is a multiple of 4) is
// multiplied in as two lazy Shoup products, cst = table[1..3]. The three table[base] of the
// thread are read from the compact table at tw3: for group G < N/8 of the row (G = chunk * S/8 +
// tau), tw3[3G + s] = table[(N/8 << s) + (G << s)], so a warp reads 48 contiguous bytes per
// thread instead of 112 scattered ones.
//
// The inverse's compact table holds the twiddles alone (8 bytes per entry, 24 per thread instead
// of 48): each direct-pass base's Shoup companion floor(w 2^64 / q) is computed when the pass uses
// it (tw_companion, exact: the host's words). The inverse transform is 3-4 % faster so; the
// forward, whose direct pass is its last and waits on these loads, was 7 % slower (BENCHMARKS.md
// §17), so it keeps the pairs.
struct TwCtx {
    const ulonglong2* __restrict__ tw;
    const ulonglong2* __restrict__ tw3;
    ulonglong2 cst[3];
    const ulonglong2* st;  // shared memory: the chunk's staged runs (see NTT_TW_SMEM)
};

// floor(w 2^64 / q) for w < q (the Shoup companion), from r = floor((2^128 - 1) / q) =
// ratio_hi 2^64 + ratio_lo: c = floor(w r / 2^64) is that or one less (w r / 2^64 > w 2^64 / q -
// 1), and the remainder w 2^64 - c q (mod 2^64: -c q) tells which.
RHEA_INLINE u64 tw_companion(u64 w, const NttPrime& p) {
    const u64 c = w * p.ratio_hi + __umul64hi(w, p.ratio_lo);
    const u64 r = 0ull - c * p.q;
    return r >= p.q ? c + 1 : c;
}

// The compact table's entries of direct-pass group g: 3 pairs (forward) or 3 twiddles (INV).
template <bool INV>
RHEA_INLINE const ulonglong2* tw3_offset(const ulonglong2* tw3_all, u64 g) {
    if (INV) {
        return reinterpret_cast<const ulonglong2*>(reinterpret_cast<const u64*>(tw3_all) + 3 * g);
    }
    return tw3_all + 3 * g;
}

// The twiddles of one pass, loaded into registers ahead of the pass (before the barrier that
// precedes it, so that their latency overlaps the shared-memory exchange): the twiddle of local
// stage s, group u, k-th block of the group (k < 2^s) is w[tw_slot<P>(u, s, k)]. A direct pass
// with DERIVED twiddles loads only k = 0 of each stage, from the compact table; SKIP0 (the
// inverse's fused last stage) loads nothing for stage 0.
#define NTT_PASS_TW 7
template <int P>
RHEA_INLINE constexpr int tw_slot(int u, int s, int k) {
    return u * ((1 << P) - 1) + (1 << s) - 1 + k;
}

// The thread's twiddle base of local stage s of pass (J0, P): table[(R << (J0 + s)) + (g << s)]
// for g = ga + gb(u) is tws[s][gb(u) << s].
template <int LOGS, int J0, int P, bool DERIVED, bool SKIP0, bool INV>
RHEA_INLINE void pass_tw_load(u32 tau, u32 R, const TwCtx& t, ulonglong2 (&w)[NTT_PASS_TW]) {
    constexpr int G = 1 << P;
    constexpr int LTL = LOGS - J0 - P;
    constexpr bool D = DERIVED && LTL == 0 && P == 3;
    const u32 ga = PassIdx<LOGS, J0, P>::ga(tau);
#pragma unroll
    for (int u = 0; u < 8 / G; ++u) {
        const u32 gb = PassIdx<LOGS, J0, P>::gb(u);
#pragma unroll
        for (int s = 0; s < P; ++s) {
            if (SKIP0 && s == 0) continue;
            const ulonglong2* base = t.tw + ((R << (J0 + s)) + ((ga + gb) << s));
#pragma unroll
            for (int k = 0; k < (1 << s); ++k) {
                if (D && k > 0) continue;
                if (D && INV) {
                    // The twiddle alone: inv_pass computes its companion.
                    w[tw_slot<P>(u, s, k)] = make_ulonglong2(
                        ld_dep(reinterpret_cast<const u64*>(t.tw3) + s), 0ull);
                } else {
                    w[tw_slot<P>(u, s, k)] = D ? ldtw(t.tw3 + s) : ldtw(base + k);
                }
            }
        }
    }
}

// INV: the inverse's compact table (twiddles alone; see TwCtx).
template <int LOGS, int I, bool DERIVED, bool SKIP0, bool INV = false>
RHEA_INLINE void pass_tw_load_of(u32 tau, u32 R, const TwCtx& t, ulonglong2 (&w)[NTT_PASS_TW]) {
    pass_tw_load<LOGS, NttPasses<LOGS>::j0(I), NttPasses<LOGS>::p(I), DERIVED, SKIP0, INV>(
        tau, R, t, w);
}

// ---- twiddles staged in shared memory -------------------------------------------------------------
//
// NTT_TW_SMEM (bits 0 / 1: forward column kernels / forward row kernels with derived twiddles;
// bits 2 / 3: the same inverses; default 13, all but the forward rows): the twiddles of every
// pass but the first one run (column kernels) or of the middle passes (forward row kernels: not
// the first, whose loads overlap the data loads, nor the direct pass, which reads the compact
// table; inverse row kernels: every pass after the direct one) are copied into shared memory at
// the kernel's start by cp.async, before the dependency wait, and read there after the barrier
// that precedes their pass, instead of by up to 7 global loads per thread and pass through L1.
// A chunk's pass (J0, P) uses, for its local stage s, the run table[(R << (J0 + s)) .. +
// 2^(J0 + s)); the staged layout holds these runs one after the other, pass by pass (the passes
// of a mask, a bit per pass), per chunk. The host asks for it per launch (NttArgs::tw_staged):
// on the H100 it pays in launches of a few waves (2^16 x 32 limbs: forward 33.4 -> 32.0 us,
// inverse 31.4 -> 30.3) and costs in long ones (1024 x 8 limbs at 2^15, 248 waves of column
// blocks: forward +15 %), so the host stages launches of at most NTT_FLAG_ROWS rows
// (bench-history §23). Staging the forward rows too made that transform slower (33.6 us).
#ifndef NTT_TW_SMEM
#define NTT_TW_SMEM 13
#endif

// Through L1 (.ca), where the SM's other blocks on the same table find the pairs (L2 only,
// .cg, measured the same: bench-history §23).
RHEA_INLINE void cp_async16(ulonglong2* dst, const ulonglong2* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const u32 d = (u32)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
#else
    *dst = *src;
#endif
}

RHEA_INLINE void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

RHEA_INLINE void cp_async_wait_all() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

// Staged pairs of the passes in MASK (before pass I: staged_off; all of them: staged_size).
template <int LOGS, u32 MASK>
RHEA_INLINE constexpr u32 staged_off(int I) {
    using PS = NttPasses<LOGS>;
    u32 n = 0;
    for (int i = 0; i < I && i < PS::COUNT; ++i) {
        if ((MASK >> i) & 1u) n += (1u << PS::j0(i)) * ((1u << PS::p(i)) - 1u);
    }
    return n;
}
template <int LOGS, u32 MASK>
RHEA_INLINE constexpr u32 staged_size() {
    return staged_off<LOGS, MASK>(NttPasses<LOGS>::COUNT);
}

// Copies staged pair j (j < staged_size) of the chunk with row index R from tw into st[j].
template <int LOGS, u32 MASK>
RHEA_INLINE void staged_copy(ulonglong2* st, const ulonglong2* tw, u32 R, u32 j) {
    using PS = NttPasses<LOGS>;
    u32 rel = j;
#pragma unroll
    for (int i = 0; i < PS::COUNT; ++i) {
        if (!((MASK >> i) & 1u)) continue;
#pragma unroll
        for (int s = 0; s < PS::p(i); ++s) {
            const u32 len = 1u << (PS::j0(i) + s);
            if (rel < len) {
                cp_async16(st + j, tw + ((R << (PS::j0(i) + s)) + rel));
                return;
            }
            rel -= len;
        }
    }
}

// The twiddles of pass I from its staged runs (st: the chunk's staged pairs), as pass_tw_load
// (not the direct pass of derived twiddles) would load them from the table.
template <int LOGS, int I, u32 MASK>
RHEA_INLINE void pass_tw_load_staged(u32 tau, const ulonglong2* st, ulonglong2 (&w)[NTT_PASS_TW]) {
    constexpr int J0 = NttPasses<LOGS>::j0(I), P = NttPasses<LOGS>::p(I);
    constexpr int G = 1 << P;
    const ulonglong2* run0 = st + staged_off<LOGS, MASK>(I);
    const u32 ga = PassIdx<LOGS, J0, P>::ga(tau);
#pragma unroll
    for (int u = 0; u < 8 / G; ++u) {
        const u32 g = ga + PassIdx<LOGS, J0, P>::gb(u);
#pragma unroll
        for (int s = 0; s < P; ++s) {
            const ulonglong2* run = run0 + (1u << J0) * ((1u << s) - 1u);
#pragma unroll
            for (int k = 0; k < (1 << s); ++k) w[tw_slot<P>(u, s, k)] = run[(g << s) + k];
        }
    }
}

// Forward pass: local stages J0 .. J0+P-1 on the 8 registers with the pass's twiddles w;
// LAST fuses the final reduction into the last stage.
template <int LOGS, int J0, int P, bool LAST, bool DERIVED>
RHEA_INLINE void fwd_pass(u64 (&v)[8], const ulonglong2 (&w)[NTT_PASS_TW], const TwCtx& t, u64 q,
                          u64 two_q) {
    constexpr int G = 1 << P;
    constexpr int LTL = LOGS - J0 - P;
    constexpr bool D = DERIVED && LTL == 0 && P == 3;
#pragma unroll
    for (int u = 0; u < 8 / G; ++u) {
#pragma unroll
        for (int s = 0; s < P; ++s) {
            const int d = G >> (s + 1);
            const ulonglong2 w0 = w[tw_slot<P>(u, s, 0)];
#pragma unroll
            for (int r = 0; r < G; ++r) {
                if (r & d) continue;
                const int k = r >> (P - s);
                u64& x = v[u * G + r];
                u64& y = v[u * G + r + d];
                ulonglong2 wk;
                if (D && k > 0) {
                    y = ntt_shoup_lazy(y, w0.x, w0.y, q);
                    wk = t.cst[k - 1];
                } else {
                    wk = w[tw_slot<P>(u, s, k)];
                }
                if (LAST && s == P - 1) {
                    fwd_bf_last(x, y, wk, q, two_q);
                } else {
                    fwd_bf(x, y, wk, q, two_q);
                }
            }
        }
    }
}

// The forward pass on FP64 rows (fp64.cuh): the same stages on signed doubles, the twiddle pairs
// (w, fl(w / q)) as doubles' bits, from the FP64 tables; no reduction (LAST: the caller's
// epilogue reduces). DERIVED, as fwd_pass: y times the base w0 first (|y w0 mod q| <= 0.625 q),
// then the butterfly with cst[k - 1].
RHEA_INLINE double2 f64_pair(ulonglong2 w) {
    return make_double2(__longlong_as_double((long long)w.x), __longlong_as_double((long long)w.y));
}

template <int LOGS, int J0, int P, bool LAST, bool DERIVED>
RHEA_INLINE void fwd_pass(double (&v)[8], const ulonglong2 (&w)[NTT_PASS_TW], const TwCtx& t,
                          u64 q, u64 two_q) {
    constexpr int G = 1 << P;
    constexpr int LTL = LOGS - J0 - P;
    constexpr bool D = DERIVED && LTL == 0 && P == 3;
    const double qf = __ull2double_rn(q);
#pragma unroll
    for (int u = 0; u < 8 / G; ++u) {
#pragma unroll
        for (int s = 0; s < P; ++s) {
            const int d = G >> (s + 1);
            const double2 w0 = f64_pair(w[tw_slot<P>(u, s, 0)]);
#pragma unroll
            for (int r = 0; r < G; ++r) {
                if (r & d) continue;
                const int k = r >> (P - s);
                double& y = v[u * G + r + d];
                double2 wk;
                if (D && k > 0) {
                    y = f64_mulmod(y, w0.x, w0.y, qf);
                    wk = f64_pair(t.cst[k - 1]);
                } else {
                    wk = f64_pair(w[tw_slot<P>(u, s, k)]);
                }
                f64_fwd_bf(v[u * G + r], y, wk, qf);
            }
        }
    }
}

// Inverse pass: local stages J0+P-1 down to J0; LAST fuses N^-1 and the final reduction into
// local stage 0, which must then be the global stage m = 1 (J0 = 0, R = 1).
template <int LOGS, int J0, int P, bool LAST, bool DERIVED>
RHEA_INLINE void inv_pass(u64 (&v)[8], const ulonglong2 (&w)[NTT_PASS_TW], const TwCtx& t,
                          const NttPrime& pr) {
    constexpr int G = 1 << P;
    constexpr int LTL = LOGS - J0 - P;
    constexpr bool D = DERIVED && LTL == 0 && P == 3;
    static_assert(!LAST || J0 == 0, "the fused last inverse stage is local stage 0");
#pragma unroll
    for (int u = 0; u < 8 / G; ++u) {
#pragma unroll
        for (int s = P - 1; s >= 0; --s) {
            const int d = G >> (s + 1);
            ulonglong2 w0 = w[tw_slot<P>(u, s, 0)];
            // The direct pass's bases come without their companions (see TwCtx).
            if (D && !(LAST && s == 0)) w0.y = tw_companion(w0.x, pr);
#pragma unroll
            for (int r = 0; r < G; ++r) {
                if (r & d) continue;
                const int k = r >> (P - s);
                u64& x = v[u * G + r];
                u64& y = v[u * G + r + d];
                if (LAST && s == 0) {
                    inv_bf_last(x, y, pr);
                } else if (D && k > 0) {
                    inv_bf2(x, y, w0, t.cst[k - 1], pr.q, pr.two_q);
                } else {
                    inv_bf(x, y, k == 0 ? w0 : w[tw_slot<P>(u, s, k)], pr.q, pr.two_q);
                }
            }
        }
    }
}

// The constants of an FP64 row's inverse: q and fl(1 / q) as doubles (entry 0 of the row's FP64
// table), and the last stage's two factors (N^-1 [f], inv_root_powers[1] N^-1 [f], NttPrime's
// ninv and last_w or the scaled variant's) as (w, fl(w fl(1 / q))): products by them lie within
// 0.75 q.
struct F64Inv {
    double q, qinv;
    double2 ninv, last_w;
};

RHEA_INLINE F64Inv f64_inv_consts(const u64* entry0, u64 ninv, u64 last_w) {
    F64Inv c;
    c.q = __longlong_as_double((long long)__ldg(entry0));
    c.qinv = __longlong_as_double((long long)__ldg(entry0 + 1));
    const double n = f64_from_word(ninv), l = f64_from_word(last_w);
    c.ninv = make_double2(n, __dmul_rn(n, c.qinv));
    c.last_w = make_double2(l, __dmul_rn(l, c.qinv));
    return c;
}

// The inverse pass on FP64 rows: the same stages on doubles with f64_inv_bf (sums reduced every
// stage, so every value stays within 0.625 q of 0, from inputs in (-q, q)); DERIVED, as
// inv_pass: (x - y) times the base w0, then by cst[k - 1] (the pairs of the FP64 table's
// entries 1..3). LAST: the last stage times the two factors of c, values within 0.75 q (the
// caller makes them canonical).
template <int LOGS, int J0, int P, bool LAST, bool DERIVED>
RHEA_INLINE void inv_pass(double (&v)[8], const ulonglong2 (&w)[NTT_PASS_TW], const TwCtx& t,
                          const F64Inv& c) {
    constexpr int G = 1 << P;
    constexpr int LTL = LOGS - J0 - P;
    constexpr bool D = DERIVED && LTL == 0 && P == 3;
    static_assert(!LAST || J0 == 0, "the fused last inverse stage is local stage 0");
#pragma unroll
    for (int u = 0; u < 8 / G; ++u) {
#pragma unroll
        for (int s = P - 1; s >= 0; --s) {
            const int d = G >> (s + 1);
            const double2 w0 = f64_pair(w[tw_slot<P>(u, s, 0)]);
#pragma unroll
            for (int r = 0; r < G; ++r) {
                if (r & d) continue;
                const int k = r >> (P - s);
                double& x = v[u * G + r];
                double& y = v[u * G + r + d];
                if (LAST && s == 0) {
                    const double a = x, b = y;
                    x = f64_mulmod(__dadd_rn(a, b), c.ninv.x, c.ninv.y, c.q);
                    y = f64_mulmod(__dsub_rn(a, b), c.last_w.x, c.last_w.y, c.q);
                } else if (D && k > 0) {
                    const double a = x, b = y;
                    const double2 ck = f64_pair(t.cst[k - 1]);
                    x = f64_reduce(__dadd_rn(a, b), c.qinv, c.q);
                    y = f64_mulmod(f64_mulmod(__dsub_rn(a, b), w0.x, w0.y, c.q), ck.x, ck.y, c.q);
                } else {
                    f64_inv_bf(x, y, k == 0 ? w0 : f64_pair(w[tw_slot<P>(u, s, k)]), c.q, c.qinv);
                }
            }
        }
    }
}

// An FP64 inverse's canonical word of a value within 0.75 q.
RHEA_INLINE u64 f64_canonical_word(double t, double q) {
    return f64_to_word(t < 0.0 ? __dadd_rn(t, q) : t);
}

// Shared-memory swizzle (word address): XORs bits 3..6 into bits 0..3, a bijection that keeps
// every pass of every supported shape free of bank conflicts (64-bit accesses). It is linear over
// GF(2): ntt_swizzle(x | y) = ntt_swizzle(x) ^ ntt_swizzle(y) for x, y with disjoint bits.
RHEA_INLINE constexpr u32 ntt_swizzle(u32 a) { return (a & ~15u) | ((a ^ (a >> 3)) & 15u); }

// Shared-memory word address of local entry k = a | b (PassIdx) of this thread's sub-transform,
// as x(a) | y(b) (disjoint bits), so that the address is ntt_swizzle(x(a)) ^ ntt_swizzle(y(b)).
template <int C>
struct ColsSmem {  // column kernel: entries of C columns interleaved, [k][c]
    u32 c;
    RHEA_INLINE u32 x(u32 a) const { return a * C + c; }
    RHEA_INLINE static constexpr u32 y(u32 b) { return b * C; }
};
struct RowsSmem {  // row kernel: chunks one after the other, [b][k]
    u32 base;
    RHEA_INLINE u32 x(u32 a) const { return base + a; }
    RHEA_INLINE static constexpr u32 y(u32 b) { return b; }
};

// The byte offset in shared memory of register idx of pass I, from the thread's swizzled part.
template <int LOGS, int I, typename Smem>
RHEA_INLINE u32 smem_off(u32 xb, int idx) {
    return xb ^ (ntt_swizzle(Smem::y(PassIdxOf<LOGS, I>::b(idx))) << 3);
}

template <bool WARP>
RHEA_INLINE void ntt_sync() {
    if (WARP) {
        __syncwarp();
    } else {
        __syncthreads();
    }
}

// T: u64 (words) or double (FP64 rows), 8 bytes either way.
template <int LOGS, int I, typename Smem, typename T>
RHEA_INLINE void smem_store(u64* sm, const Smem& at, u32 tau, const T (&v)[8]) {
    static_assert(sizeof(T) == 8, "8-byte entries");
    const u32 xb = ntt_swizzle(at.x(PassIdxOf<LOGS, I>::a(tau))) << 3;
    char* p = reinterpret_cast<char*>(sm);
#pragma unroll
    for (int idx = 0; idx < 8; ++idx) {
        *reinterpret_cast<T*>(p + smem_off<LOGS, I, Smem>(xb, idx)) = v[idx];
    }
}

template <int LOGS, int I, typename Smem, typename T>
RHEA_INLINE void smem_load(const u64* sm, const Smem& at, u32 tau, T (&v)[8]) {
    static_assert(sizeof(T) == 8, "8-byte entries");
    const u32 xb = ntt_swizzle(at.x(PassIdxOf<LOGS, I>::a(tau))) << 3;
    const char* p = reinterpret_cast<const char*>(sm);
#pragma unroll
    for (int idx = 0; idx < 8; ++idx) {
        v[idx] = *reinterpret_cast<const T*>(p + smem_off<LOGS, I, Smem>(xb, idx));
    }
}

// NTT_PREFETCH (default 1): the next pass's twiddles are loaded before the barrier that
// precedes it; 0 loads them after the barrier (for comparison; RHEA_NVRTC_DEFINES).
#ifndef NTT_PREFETCH
#define NTT_PREFETCH 1
#endif

// NTT_LATE_CST (default 1): a forward row kernel with derived twiddles loads the factors
// cst = table[1..3] of its direct pass (the last one) with that pass's twiddles instead of at
// its start, so that they do not hold 12 registers through the earlier passes. 0: at the start.
#ifndef NTT_LATE_CST
#define NTT_LATE_CST 1
#endif

// The derived twiddles' factors table[1..3] (see TwCtx).
RHEA_INLINE void load_cst(TwCtx& t) {
    t.cst[0] = ldtw(t.tw + 1);
    t.cst[1] = ldtw(t.tw + 2);
    t.cst[2] = ldtw(t.tw + 3);
}

// Forward passes I .. COUNT-1; pass I's entries and twiddles are in registers on entry, the last
// pass's entries on exit. LAST_PHASE: the last pass ends the whole transform. With DERIVED and
// NTT_LATE_CST, t.cst is loaded here, before the direct pass (the caller loads it when that pass
// is the first).
//
// STAGED: the passes (a bit per pass, never pass 0) whose twiddles the kernel may stage in
// shared memory (NTT_TW_SMEM); it did when t.st is set, and the barrier before the first of them
// also completes the copies.
// T: u64 (words) or double (FP64 rows: the fwd_pass overload for doubles).
template <int LOGS, int I, bool LAST_PHASE, bool WARP, bool DERIVED, u32 STAGED = 0u,
          typename Smem, typename T>
RHEA_INLINE void fwd_passes(T (&v)[8], ulonglong2 (&w)[NTT_PASS_TW], u64* sm, const Smem& at,
                            u32 tau, u32 R, TwCtx& t, u64 q, u64 two_q) {
    using PS = NttPasses<LOGS>;
    constexpr bool last = I == PS::COUNT - 1;
    static_assert((STAGED & 1u) == 0, "pass 0's twiddles are never staged");
    fwd_pass<LOGS, PS::j0(I), PS::p(I), LAST_PHASE && last, DERIVED>(v, w, t, q, two_q);
    if constexpr (!last) {
        constexpr bool staged = (STAGED >> (I + 1)) & 1u;
        constexpr bool first_staged = staged && (STAGED & ((2u << I) - 1u)) == 0;
        smem_store<LOGS, I>(sm, at, tau, v);
        if constexpr (DERIVED && NTT_LATE_CST && I + 1 == PS::COUNT - 1) load_cst(t);
        if (staged && t.st != nullptr) {
            if (first_staged) cp_async_wait_all();
            ntt_sync<WARP>();
            pass_tw_load_staged<LOGS, I + 1, STAGED>(tau, t.st, w);
        } else {
            if (NTT_PREFETCH) pass_tw_load_of<LOGS, I + 1, DERIVED, false>(tau, R, t, w);
            ntt_sync<WARP>();
            if (!NTT_PREFETCH) pass_tw_load_of<LOGS, I + 1, DERIVED, false>(tau, R, t, w);
        }
        smem_load<LOGS, I + 1>(sm, at, tau, v);
        fwd_passes<LOGS, I + 1, LAST_PHASE, WARP, DERIVED, STAGED>(v, w, sm, at, tau, R, t, q,
                                                                   two_q);
    }
}

// Inverse passes I down to 0 (pass I's twiddles in w on entry). STAGED: as fwd_passes (the
// first pass run, the last of the transform's, is never staged).
// T, Pr: u64 and NttPrime (words), or double and F64Inv (FP64 rows: the inv_pass overload for
// doubles).
template <int LOGS, int I, bool LAST_PHASE, bool WARP, bool DERIVED, u32 STAGED = 0u,
          typename Smem, typename T, typename Pr>
RHEA_INLINE void inv_passes(T (&v)[8], ulonglong2 (&w)[NTT_PASS_TW], u64* sm, const Smem& at,
                            u32 tau, u32 R, const TwCtx& t, const Pr& pr) {
    using PS = NttPasses<LOGS>;
    constexpr bool last = I == 0;
    inv_pass<LOGS, PS::j0(I), PS::p(I), LAST_PHASE && last, DERIVED>(v, w, t, pr);
    if constexpr (!last) {
        constexpr bool skip0 = LAST_PHASE && I - 1 == 0;
        constexpr bool staged = (STAGED >> (I - 1)) & 1u;
        constexpr bool first_staged = staged && (STAGED >> I) == 0;
        smem_store<LOGS, I>(sm, at, tau, v);
        if (staged && t.st != nullptr) {
            if (first_staged) cp_async_wait_all();
            ntt_sync<WARP>();
            pass_tw_load_staged<LOGS, I - 1, STAGED>(tau, t.st, w);
        } else {
            if (NTT_PREFETCH) pass_tw_load_of<LOGS, I - 1, DERIVED, skip0, true>(tau, R, t, w);
            ntt_sync<WARP>();
            if (!NTT_PREFETCH) pass_tw_load_of<LOGS, I - 1, DERIVED, skip0, true>(tau, R, t, w);
        }
        smem_load<LOGS, I - 1>(sm, at, tau, v);
        inv_passes<LOGS, I - 1, LAST_PHASE, WARP, DERIVED, STAGED>(v, w, sm, at, tau, R, t, pr);
    }
}

// ---- global memory access of one pass ------------------------------------------------------------

// Column kernel: entry k of column c at base[k * N2 + c].
template <int LOGS, int I, int LOGN2>
RHEA_INLINE void cols_global_load(const u64* __restrict__ base, u32 tau, u64 (&v)[8]) {
    using PI = PassIdxOf<LOGS, I>;
    const u64* p = base + (PI::a(tau) << LOGN2);
#pragma unroll
    for (int idx = 0; idx < 8; ++idx) v[idx] = ld_dep(p + (PI::b(idx) << LOGN2));
}

template <int LOGS, int I, int LOGN2>
RHEA_INLINE void cols_global_store(u64* __restrict__ base, u32 tau, const u64 (&v)[8]) {
    using PI = PassIdxOf<LOGS, I>;
    u64* p = base + (PI::a(tau) << LOGN2);
#pragma unroll
    for (int idx = 0; idx < 8; ++idx) p[PI::b(idx) << LOGN2] = v[idx];
}

// Row kernel: entry k of the chunk at base[k]; 16-byte accesses in the direct pass. ONCE: the
// chunk is read once (ld_once: first out of L2).
template <int LOGS, int I, bool ONCE = false>
RHEA_INLINE void rows_global_load(const u64* __restrict__ base, u32 tau, u64 (&v)[8]) {
    using PS = NttPasses<LOGS>;
    constexpr int J0 = PS::j0(I), P = PS::p(I);
    if constexpr (P == 3 && J0 + P == LOGS) {
        const u64* p = base + 8 * tau;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const ulonglong2 x = ONCE ? ld_once2(p + 2 * i) : ld_dep2(p + 2 * i);
            v[2 * i] = x.x;
            v[2 * i + 1] = x.y;
        }
    } else {
        using PI = PassIdx<LOGS, J0, P>;
        const u64* p = base + PI::a(tau);
#pragma unroll
        for (int idx = 0; idx < 8; ++idx) {
            v[idx] = ONCE ? ld_once(p + PI::b(idx)) : ld_dep(p + PI::b(idx));
        }
    }
}

// Drops a chunk of 2^LOGS words read for the last time from L2 (l2_discard, one 128-byte line
// per thread of the first S / 16); call it once every thread of the chunk has its words.
template <int LOGS>
RHEA_INLINE void rows_discard(const u64* base, u32 tau) {
    if (tau < ((1u << LOGS) >> 4)) l2_discard(base + 16 * tau);
}

template <int LOGS, int I>
RHEA_INLINE void rows_global_store(u64* __restrict__ base, u32 tau, const u64 (&v)[8]) {
    using PS = NttPasses<LOGS>;
    constexpr int J0 = PS::j0(I), P = PS::p(I);
    if constexpr (P == 3 && J0 + P == LOGS) {
        ulonglong2* p = reinterpret_cast<ulonglong2*>(base + 8 * tau);
#pragma unroll
        for (int i = 0; i < 4; ++i) p[i] = make_ulonglong2(v[2 * i], v[2 * i + 1]);
    } else {
        using PI = PassIdx<LOGS, J0, P>;
        u64* p = base + PI::a(tau);
#pragma unroll
        for (int idx = 0; idx < 8; ++idx) p[PI::b(idx)] = v[idx];
    }
}

// ---- the kernels -----------------------------------------------------------------------------------

// The block's index, in launch order or (REV) the reverse. A kernel that reads what the previous
// one wrote in launch order, reversed, finds the most recently written data (the likeliest to be
// still in L2) first, instead of the oldest, which an LRU cache evicts first. In a key switching
// the forward column kernels follow a conversion (launch order) and the inverse row kernels the
// tensor product or the fused inner product (launch order): they run reversed, and so do the
// forward row kernels; the inverse column kernels, which follow the reversed inverse rows, and
// the fused inner product run in launch order. Deep mul+relin on the H100 0.317 -> 0.309 ms
// (bench-history §18). Each can be set through RHEA_NVRTC_DEFINES, for comparison.
#ifndef NTT_FWD_COLS_REV
#define NTT_FWD_COLS_REV 1
#endif
#ifndef NTT_INV_COLS_REV
#define NTT_INV_COLS_REV 0
#endif
#ifndef NTT_FWD_ROWS_REV
#define NTT_FWD_ROWS_REV 1
#endif
#ifndef NTT_INV_ROWS_REV
#define NTT_INV_ROWS_REV 1
#endif
template <bool REV>
RHEA_INLINE u32 ntt_block_index() {
    return REV ? gridDim.x - 1u - blockIdx.x : blockIdx.x;
}

// Row r of a launch -> (address of its limb, table index, group, row within the group).
struct NttRow {
    u64* base;
    u32 table;
    u32 group;
    u32 j;
};

RHEA_INLINE NttRow ntt_row(u64* data, const NttArgs& a, u32 row, int logn) {
    NttRow r;
    if (a.groups == 0) {
        const u32 poly = row / a.count;
        const u32 j = row - poly * a.count;
        const u32 limb = a.start + j;
        r.base = data + (((u64)poly * a.limbs + limb) << logn);
        r.table = a.first_table + limb;
        r.group = 0;
        r.j = j;
    } else {
        u32 g = 0;
#pragma unroll 1
        while (g + 1 < a.groups && row >= a.row_start[g + 1]) ++g;
        const u32 j = row - a.row_start[g];
        r.base = reinterpret_cast<u64*>(a.ptr[g]) + ((u64)j << logn);
        r.table = a.table[g] + j;
        r.group = g;
        r.j = j;
    }
    return r;
}

// The epilogue's factor w: (w, shoup(w)) for word rows; for FP64 rows also w, w / q (as
// fl(w fl(1 / q)), within 2^-52 of it relatively: f64_mulmod's products then lie within 0.75 q)
// and q as doubles.
struct EpiFactor {
    ulonglong2 w;
    double wf, wq, q;
};

// The epilogue's first step, (x - v) * w mod q in [0, q), for a canonical transform value v...
RHEA_INLINE u64 epi_sub_mul(u64 x, u64 v, const EpiFactor& f, u64 q) {
    return shoup_mul(mod_sub(x, v, q), f.w.x, f.w.y, q);
}

// ... or for a signed FP64-row value v (|v| < 2^49.5, so |x - v| < 2^50).
RHEA_INLINE u64 epi_sub_mul(u64 x, double v, const EpiFactor& f, u64 q) {
    const double t = f64_mulmod(__dsub_rn(f64_from_word(x), v), f.wf, f.wq, f.q);
    return f64_to_word(t < 0.0 ? __dadd_rn(t, f.q) : t);
}

// NTT_EPI_OUT_EF (default 1): the epilogue stores its outputs evict-first (st.global.cs), so
// that they leave L2 before the scratch runs the column kernel wrote and the row kernel has yet
// to read (and drop). H100, stream ms: rescale 0.052 -> 0.049, mul+relin 0.277 -> 0.275,
// mul+relin+rescale 0.293 -> 0.289 (bench-history §25; an evict-last policy on the column
// kernels' stores of the scratch runs gained nothing more). 0: plain stores (for comparison).
#ifndef NTT_EPI_OUT_EF
#define NTT_EPI_OUT_EF 1
#endif

// The forward epilogue of a grouped launch (see NttArgs): out = [c +] (x - v) * w mod q for the
// transform values v of this thread's entries (the direct pass: 8 contiguous words): canonical
// words, or an FP64 row's signed doubles (T = double).
template <int LOGS, int I, typename T>
RHEA_INLINE void rows_epilogue_store(const NttArgs& a, const NttRow& nr, u64 chunk_off, int logn,
                                     u32 tau, const T (&v)[8], u64 q) {
    using PS = NttPasses<LOGS>;
    static_assert(PS::p(I) == 3 && PS::j0(I) + PS::p(I) == LOGS, "the last pass is direct");
    const u64 off = ((u64)nr.j << logn) + chunk_off + 8 * tau;
    EpiFactor f;
    f.w = ld_dep2(reinterpret_cast<const ulonglong2*>(a.epi_w) + nr.table);
    if constexpr (IsF64<T>::value) {
        // fl(1 / q) from entry 0 of the row's FP64 table: no division.
        const u64* h = reinterpret_cast<const u64*>(a.tw_f64) + ((u64)nr.table << (logn + 1));
        f.q = __ull2double_rn(q);
        f.wf = f64_from_word(f.w.x);
        f.wq = __dmul_rn(f.wf, __longlong_as_double((long long)__ldg(h + 1)));
    }
    const ulonglong2* xp = reinterpret_cast<const ulonglong2*>(
        reinterpret_cast<const u64*>(a.epi_x[nr.group]) + off);
    const u64 cptr = a.epi_c[nr.group];
    ulonglong2* op = reinterpret_cast<ulonglong2*>(reinterpret_cast<u64*>(a.epi_out[nr.group]) + off);
    u64 r[8];
    u64 x_last = 0;  // a word that depends on every x load
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const ulonglong2 x = ld_once2(reinterpret_cast<const u64*>(xp + i));
        r[2 * i] = epi_sub_mul(x.x, v[2 * i], f, q);
        r[2 * i + 1] = epi_sub_mul(x.y, v[2 * i + 1], f, q);
        x_last ^= x.x ^ x.y;  // depends on every load
    }
    // x consumed (a.dead & 2): its line (this thread's 64 bytes and its neighbour's, whose
    // words arrive with the same warp-wide loads) dropped from L2 once they are here.
    if ((a.dead & 2u) && (tau & 1u) == 0) l2_discard_after(xp, x_last);
    if (cptr != 0) {
        const ulonglong2* cp =
            reinterpret_cast<const ulonglong2*>(reinterpret_cast<const u64*>(cptr) + off);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const ulonglong2 c = ld_once2(reinterpret_cast<const u64*>(cp + i));
            r[2 * i] = mod_add(c.x, r[2 * i], q);
            r[2 * i + 1] = mod_add(c.y, r[2 * i + 1], q);
        }
    }
    if (a.epi_w2 != 0) {
        const ulonglong2 w2 = ld_dep2(reinterpret_cast<const ulonglong2*>(a.epi_w2) + nr.table);
#pragma unroll
        for (int i = 0; i < 8; ++i) r[i] = shoup_mul(r[i], w2.x, w2.y, q);
    }
    if (a.epi_galois != 0) {
        u64* ob = reinterpret_cast<u64*>(a.epi_out[nr.group]) + ((u64)nr.j << logn);
        const u64 k0 = chunk_off + 8 * tau;
        const u64 mask = (2ull << logn) - 1ull;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const u64 e = ((2ull * (__brevll(k0 + i) >> (64 - logn)) + 1ull) * a.epi_galois) & mask;
            ob[__brevll((e - 1ull) >> 1) >> (64 - logn)] = r[i];
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        if (NTT_EPI_OUT_EF) {
            asm volatile("st.global.cs.v2.u64 [%0], {%1, %2};" ::"l"(op + i), "l"(r[2 * i]),
                         "l"(r[2 * i + 1])
                         : "memory");
        } else {
            op[i] = make_ulonglong2(r[2 * i], r[2 * i + 1]);
        }
    }
}

// The centred lift of the prologue (see NttArgs) as a lazy forward input: for t < q_last < 2^61,
// [t]_{q} lazily reduced by a Shoup product by 1 (s1 = floor(2^64 / q), result in [0, 2q)), plus
// neg = q - (q_last mod q) in (0, q] when t is above q_last / 2: in [0, 3q), congruent to the
// centred representative of t modulo q. The forward butterflies take inputs in [0, 6q) and the
// transform's output is canonical, so the result is the transform of the canonical lift, bit
// for bit.
RHEA_INLINE u64 lift_lazy(u64 t, u64 half, u64 neg, u64 s1, u64 q) {
    return shoup_mul_lazy(t, 1ull, s1, q) + (t > half ? neg : 0ull);
}

// Column kernel: LOGS = LOG1 stages on C columns per block, T = 2^LOGS / 8 threads per column.
// Forward: the first LOG1 stages. Inverse: the last LOG1 stages, with N^-1 fused. One block per
// tile of C columns of one row: blockIdx.x = row * N2 / C + tile. LIFT (forward, grouped
// launches): the prologue of NttArgs; with ADD, the lift-and-add prologue. F64 (forward): FP64
// rows (ntt_f64_row) take their input as doubles — the run's canonical words (< q < 2^46); with
// LIFT exactly the centred representative (|c| <= q_last / 2 < 2^45, the host checks q_last <
// 2^46); with ADD the run's words plus P_t * c (f64_mulmod: within 0.75 q), below 1.75 q — and
// write doubles, below 2^49.7 after the row kernel's stages too.
template <int LOGN, int LOGS, int C, bool FWD, bool LIFT = false, bool ADD = false,
          bool SCALED = false, bool F64 = false>
RHEA_INLINE void ntt_cols(u64* __restrict__ data, const ulonglong2* __restrict__ tw_all,
                          const NttPrime* __restrict__ primes, const NttArgs& a) {
    constexpr int LOGN2 = LOGN - LOGS;
    constexpr u32 BPR = (1u << LOGN2) / C;  // blocks per row
    static_assert((1u << LOGN2) % C == 0, "columns per block divide N2");
    __shared__ u64 sm[(1 << LOGS) * C];
    using PS = NttPasses<LOGS>;
    // Staged twiddles (NTT_TW_SMEM bits 0, 2): every pass after the first one run.
    constexpr u32 STAGED = PS::COUNT == 1 ? 0u
                           : FWD          ? ((NTT_TW_SMEM & 1) ? (1u << PS::COUNT) - 2u : 0u)
                                          : ((NTT_TW_SMEM & 4) ? (1u << (PS::COUNT - 1)) - 1u : 0u);
    constexpr u32 NST = staged_size<LOGS, STAGED>();
    __shared__ ulonglong2 smtw[NST > 0 ? NST : 1];

    pdl_trigger();
    const u32 bid = ntt_block_index<FWD ? NTT_FWD_COLS_REV : NTT_INV_COLS_REV>();
    const u32 row = bid / BPR;
    const u32 col0 = (bid % BPR) * C;
    const NttRow nr = ntt_row(data, a, row, LOGN);
    const u32 table = nr.table;
    u64* base = nr.base + col0;
    TwCtx tc;
    tc.tw = tw_all + ((u64)table << LOGN);
    static_assert(!F64 || FWD || SCALED, "FP64 rows: forward, or the scaled inverse");
    bool f64 = false;
    if constexpr (F64) {
        f64 = ntt_f64_row(a, row, table, LOGN);
        if (f64) tc.tw = reinterpret_cast<const ulonglong2*>(a.tw_f64) + ((u64)table << LOGN);
    }
    tc.tw3 = nullptr;
    tc.cst[0] = tc.cst[1] = tc.cst[2] = make_ulonglong2(0, 0);
    tc.st = nullptr;
    if (NST > 0 && a.tw_staged) {
        // One staged set for the block: the columns all use the table's first 2^LOGS pairs.
        tc.st = smtw;
        for (u32 j = threadIdx.x; j < NST; j += blockDim.x) {
            staged_copy<LOGS, STAGED>(smtw, tc.tw, 1u, j);
        }
        cp_async_commit();
    }
    NttPrime pr = load_ntt_prime(primes, table);
    static_assert(!SCALED || !FWD, "the scaled variant is an inverse");
    if constexpr (SCALED) {
        // The inverse times f_t: N^-1 f_t and inv_root_powers[1] N^-1 f_t with their Shoup
        // companions, host-uploaded per table at a.pro_w (read before pdl_wait).
        const ulonglong2* fw = reinterpret_cast<const ulonglong2*>(a.pro_w) + 2 * (u64)table;
        const ulonglong2 f0 = __ldg(fw), f1 = __ldg(fw + 1);
        pr.ninv = f0.x;
        pr.ninv_shoup = f0.y;
        pr.last_w = f1.x;
        pr.last_w_shoup = f1.y;
    }

    const u32 c = threadIdx.x % C;
    const u32 tau = threadIdx.x / C;  // < T: blockDim = T * C (PassIdx relies on it)
    const ColsSmem<C> at{c};
    u64 v[8];
    ulonglong2 w[NTT_PASS_TW];
    static_assert(FWD || !LIFT, "the lifting prologue is forward only");
    if constexpr (FWD) {
        pass_tw_load_of<LOGS, 0, false, false>(tau, 1u, tc, w);
        ntt_dep_wait(a, row, threadIdx.x == 0);
        if constexpr (F64) {
            if (f64) {
                double d[8];
                if constexpr (LIFT) {
                    const u64 ql = a.pro_q;
                    const double qlf = __ull2double_rn(ql);
                    const u64* src = reinterpret_cast<const u64*>(a.pro_src[nr.group]) + col0 + c;
                    cols_global_load<LOGS, 0, LOGN2>(src, tau, v);
#pragma unroll
                    for (int i = 0; i < 8; ++i) {
                        d[i] = __dsub_rn(f64_from_word(v[i]), v[i] > (ql >> 1) ? qlf : 0.0);
                    }
                    if constexpr (ADD) {
                        // P_t (pro_w) and P_t * fl(1 / q) (entry 0 of the row's FP64 table).
                        const u64 pw = ld_dep(reinterpret_cast<const u64*>(a.pro_w) + 2ull * table);
                        const u64* h =
                            reinterpret_cast<const u64*>(a.tw_f64) + ((u64)table << (LOGN + 1));
                        const double qf = __ull2double_rn(pr.q), pf = f64_from_word(pw);
                        const double pq = __dmul_rn(pf, __longlong_as_double((long long)__ldg(h + 1)));
                        cols_global_load<LOGS, 0, LOGN2>(base + c, tau, v);
#pragma unroll
                        for (int i = 0; i < 8; ++i) {
                            d[i] = __dadd_rn(f64_from_word(v[i]), f64_mulmod(d[i], pf, pq, qf));
                        }
                    }
                } else {
                    cols_global_load<LOGS, 0, LOGN2>(base + c, tau, v);
#pragma unroll
                    for (int i = 0; i < 8; ++i) d[i] = f64_from_word(v[i]);
                }
                fwd_passes<LOGS, 0, false, false, false, STAGED>(d, w, sm, at, tau, 1u, tc, pr.q,
                                                                 pr.two_q);
#pragma unroll
                for (int i = 0; i < 8; ++i) v[i] = (u64)__double_as_longlong(d[i]);
                cols_global_store<LOGS, PS::COUNT - 1, LOGN2>(base + c, tau, v);
            }
        }
        if (!f64) {
            if constexpr (LIFT) {
                const u64 s1 =
                    ld_dep(reinterpret_cast<const u64*>(a.pro_moduli) + 4ull * table + 1);
                const u64 ql = a.pro_q;
                const u64 neg = pr.q - ntt_csub(shoup_mul_lazy(ql, 1ull, s1, pr.q), pr.q);
                const u64* src = reinterpret_cast<const u64*>(a.pro_src[nr.group]) + col0 + c;
                cols_global_load<LOGS, 0, LOGN2>(src, tau, v);
#pragma unroll
                for (int i = 0; i < 8; ++i) v[i] = lift_lazy(v[i], ql >> 1, neg, s1, pr.q);
                if constexpr (ADD) {
                    // run + P_t * lift: [0, q) + [0, 2q), a valid lazy input below 6q.
                    const ulonglong2 pw =
                        ld_dep2(reinterpret_cast<const ulonglong2*>(a.pro_w) + table);
                    u64 y[8];
                    cols_global_load<LOGS, 0, LOGN2>(base + c, tau, y);
#pragma unroll
                    for (int i = 0; i < 8; ++i) {
                        v[i] = y[i] + shoup_mul_lazy(v[i], pw.x, pw.y, pr.q);
                    }
                }
            } else {
                cols_global_load<LOGS, 0, LOGN2>(base + c, tau, v);
            }
            fwd_passes<LOGS, 0, false, false, false, STAGED>(v, w, sm, at, tau, 1u, tc, pr.q,
                                                             pr.two_q);
            cols_global_store<LOGS, PS::COUNT - 1, LOGN2>(base + c, tau, v);
        }
    } else {
        // FP64 rows (F64, the scaled inverse): the row kernel's doubles in, canonical words out.
        if constexpr (F64) {
            if (f64) {
                pass_tw_load_of<LOGS, PS::COUNT - 1, false, PS::COUNT == 1>(tau, 1u, tc, w);
                const F64Inv fc = f64_inv_consts(
                    reinterpret_cast<const u64*>(a.tw_f64) + ((u64)table << (LOGN + 1)), pr.ninv,
                    pr.last_w);
                ntt_dep_wait(a, row, threadIdx.x == 0);
                cols_global_load<LOGS, PS::COUNT - 1, LOGN2>(base + c, tau, v);
                double d[8];
#pragma unroll
                for (int i = 0; i < 8; ++i) d[i] = __longlong_as_double((long long)v[i]);
                inv_passes<LOGS, PS::COUNT - 1, true, false, false, STAGED>(d, w, sm, at, tau, 1u,
                                                                           tc, fc);
#pragma unroll
                for (int i = 0; i < 8; ++i) v[i] = f64_canonical_word(d[i], fc.q);
                cols_global_store<LOGS, 0, LOGN2>(base + c, tau, v);
            }
        }
        if (!f64) {
            pass_tw_load_of<LOGS, PS::COUNT - 1, false, PS::COUNT == 1>(tau, 1u, tc, w);
            ntt_dep_wait(a, row, threadIdx.x == 0);
            cols_global_load<LOGS, PS::COUNT - 1, LOGN2>(base + c, tau, v);
            inv_passes<LOGS, PS::COUNT - 1, true, false, false, STAGED>(v, w, sm, at, tau, 1u,
                                                                       tc, pr);
            cols_global_store<LOGS, 0, LOGN2>(base + c, tau, v);
        }
    }
    if (a.flag_role == 1) {
        __syncthreads();
        if (threadIdx.x == 0) ntt_row_signal(a, row, BPR);
    }
}

// Threads per block of the row kernel with chunks of 2^LOGS entries.
template <int LOGS>
struct RowsShape {
    static constexpr u32 T = (1u << LOGS) >> 3;       // threads per chunk
    static constexpr u32 CH = T >= 128 ? 1 : 128 / T;  // chunks per block
    static constexpr u32 THREADS = T * CH;
};

// Row kernel: chunks of 2^LOGS contiguous entries, RowsShape<LOGS>::CH chunks per block.
// Forward: the last LOGS stages, with the final reduction. Inverse: the first LOGS stages.
// DERIVED: the direct pass reads 3 twiddles per thread from the compact table tw3_all
// ([table][N/8][3], see TwCtx) instead of 7 from the full table. F64 (forward with EPI, not
// DERIVED, not PAIRED): FP64 rows (ntt_f64_row) read the column kernel's doubles and run the
// epilogue on them.
template <int LOGN, int LOGS, bool FWD, bool DERIVED, bool EPI = false, bool PAIRED = false,
          bool FROM = false, bool F64 = false>
RHEA_INLINE void ntt_rows(u64* __restrict__ data, const ulonglong2* __restrict__ tw_all,
                          const ulonglong2* __restrict__ tw3_all,
                          const NttPrime* __restrict__ primes, const NttArgs& a) {
    using RS = RowsShape<LOGS>;
    constexpr u32 S = 1u << LOGS;
    constexpr u32 BPR = (1u << LOGN) / (S * RS::CH);
    constexpr int LOG1 = LOGN - LOGS;
    static_assert(BPR >= 1, "at least one block per row");
    __shared__ u64 sm[S * RS::CH];
    using PS = NttPasses<LOGS>;
    // Staged twiddles (NTT_TW_SMEM bits 1, 3), with derived twiddles only: the forward's middle
    // passes, the inverse's passes after its direct one; per chunk (each chunk's threads copy
    // their own, so that a warp-wide barrier suffices for chunks of one warp).
    constexpr u32 STAGED = !DERIVED ? 0u
                           : FWD    ? ((NTT_TW_SMEM & 2) && PS::COUNT > 2
                                           ? (1u << (PS::COUNT - 1)) - 2u
                                           : 0u)
                                    : ((NTT_TW_SMEM & 8) && PS::COUNT > 1
                                           ? (1u << (PS::COUNT - 1)) - 1u
                                           : 0u);
    constexpr u32 NST = staged_size<LOGS, STAGED>();
    __shared__ ulonglong2 smtw[NST > 0 ? NST * RS::CH : 1];

    pdl_trigger();
    const u32 b = threadIdx.x / RS::T;
    const u32 tau = threadIdx.x % RS::T;  // < T (PassIdx relies on it)
    static_assert(!PAIRED || RS::CH % 2 == 0, "paired blocks hold chunks of two rows");
    u32 row, chunk;
    const u32 bid = ntt_block_index<FWD ? NTT_FWD_ROWS_REV : NTT_INV_ROWS_REV>();
    if constexpr (PAIRED) {
        // Two rows with one table (a ciphertext's two polynomials): both halves of the block
        // load the same twiddles, which the second finds in L1.
        row = bid / (2 * BPR) + (b & 1) * a.pair_half;
        chunk = (bid % (2 * BPR)) * (RS::CH / 2) + (b >> 1);
    } else {
        row = bid / BPR;
        chunk = (bid % BPR) * RS::CH + b;
    }
    const NttRow nr = ntt_row(data, a, row, LOGN);
    const u32 table = nr.table;
    u64* base = nr.base + (u64)chunk * S;
    TwCtx tc;
    tc.tw = tw_all + ((u64)table << LOGN);
    // Paired rows share a table (PAIRED), so both chunks of a block take the same body.
    static_assert(!F64 || (FWD && EPI) || (!FWD && DERIVED && FROM),
                  "FP64 rows: the epilogue, or the out-of-place inverse");
    bool f64 = false;
    const ulonglong2* tw3_tables = tw3_all;
    if constexpr (F64) {
        f64 = ntt_f64_row(a, row, table, LOGN);
        if (f64) {
            tc.tw = reinterpret_cast<const ulonglong2*>(a.tw_f64) + ((u64)table << LOGN);
            tw3_tables = reinterpret_cast<const ulonglong2*>(a.tw3_f64);
        }
    }
    // The FP64 compact tables hold pairs in both directions.
    const u64 g3 = ((u64)table << (LOGN - 3)) + chunk * RS::T + tau;
    tc.tw3 = f64 ? tw3_offset<false>(tw3_tables, g3) : tw3_offset<!FWD>(tw3_tables, g3);
    tc.cst[0] = tc.cst[1] = tc.cst[2] = make_ulonglong2(0, 0);
    // The inverse's direct pass is its first; the forward's is its last (see NTT_LATE_CST).
    if constexpr (DERIVED && (!FWD || !NTT_LATE_CST || PS::COUNT == 1)) load_cst(tc);
    const NttPrime pr = load_ntt_prime(primes, table);
    const u32 R = (1u << LOG1) + chunk;
    tc.st = nullptr;
    if (NST > 0 && a.tw_staged) {
        tc.st = smtw + b * NST;
        for (u32 j = tau; j < NST; j += RS::T) {
            staged_copy<LOGS, STAGED>(smtw + b * NST, tc.tw, R, j);
        }
        cp_async_commit();
    }

    const RowsSmem at{b * S};
    constexpr bool WARP = RS::T <= 32;
    u64 v[8];
    ulonglong2 w[NTT_PASS_TW];
    if constexpr (FWD) {
        // Two disjoint bodies, so that ptxas allocates each its own registers (sharing the
        // loads before the branch spilled the FP64 body at 64 registers).
        if constexpr (F64) {
            if (f64) {
                pass_tw_load_of<LOGS, 0, DERIVED, false>(tau, R, tc, w);
                ntt_dep_wait(a, row, tau == 0);
                rows_global_load<LOGS, 0, EPI>(base, tau, v);
                double d[8];
#pragma unroll
                for (int i = 0; i < 8; ++i) d[i] = __longlong_as_double((long long)v[i]);
                fwd_passes<LOGS, 0, true, WARP, DERIVED, STAGED>(d, w, sm, at, tau, R, tc, pr.q,
                                                                 pr.two_q);
                rows_discard<LOGS>(base, tau);
                rows_epilogue_store<LOGS, PS::COUNT - 1>(a, nr, (u64)chunk * S, LOGN, tau, d,
                                                         pr.q);
            }
        }
        if (f64) {
            // done above
        } else if constexpr (EPI) {
            pass_tw_load_of<LOGS, 0, DERIVED, false>(tau, R, tc, w);
            ntt_dep_wait(a, row, tau == 0);
            // The epilogue's runs are scratch: read once, then dropped from L2.
            rows_global_load<LOGS, 0, EPI>(base, tau, v);
            fwd_passes<LOGS, 0, true, WARP, DERIVED, STAGED>(v, w, sm, at, tau, R, tc, pr.q,
                                                             pr.two_q);
            rows_discard<LOGS>(base, tau);
            rows_epilogue_store<LOGS, PS::COUNT - 1>(a, nr, (u64)chunk * S, LOGN, tau, v, pr.q);
        } else {
            pass_tw_load_of<LOGS, 0, DERIVED, false>(tau, R, tc, w);
            ntt_dep_wait(a, row, tau == 0);
            rows_global_load<LOGS, 0, EPI>(base, tau, v);
            fwd_passes<LOGS, 0, true, WARP, DERIVED, STAGED>(v, w, sm, at, tau, R, tc, pr.q,
                                                             pr.two_q);
            rows_global_store<LOGS, PS::COUNT - 1>(base, tau, v);
        }
    } else {
        const u64* src = base;
        if constexpr (FROM) {
            // Out of place. Strided launches: the same words of the source a.pro_src[0].
            // Grouped launches: row j of group g from a.pro_src[g] + j N (in place when 0).
            if (a.groups == 0) {
                src = reinterpret_cast<const u64*>(a.pro_src[0]) + (base - data);
            } else {
                const u64 from = a.pro_src[nr.group];
                src = from == 0 ? base
                                : reinterpret_cast<const u64*>(from) + ((u64)nr.j << LOGN) +
                                      (u64)chunk * S;
            }
        }
        // FP64 rows: canonical words in, doubles (|v| <= 0.625 q) out to the column kernel.
        if constexpr (F64) {
            if (f64) {
                // The FP64 compact table's pairs (INV = false: not the words-only layout).
                pass_tw_load_of<LOGS, PS::COUNT - 1, DERIVED, false, false>(tau, R, tc, w);
                const F64Inv fc = f64_inv_consts(
                    reinterpret_cast<const u64*>(a.tw_f64) + ((u64)table << (LOGN + 1)), pr.ninv,
                    pr.last_w);
                ntt_dep_wait(a, row, tau == 0);
                rows_global_load<LOGS, PS::COUNT - 1>(src, tau, v);
                double d[8];
#pragma unroll
                for (int i = 0; i < 8; ++i) d[i] = f64_from_word(v[i]);
                inv_passes<LOGS, PS::COUNT - 1, false, WARP, DERIVED, STAGED>(d, w, sm, at, tau, R,
                                                                            tc, fc);
#pragma unroll
                for (int i = 0; i < 8; ++i) v[i] = (u64)__double_as_longlong(d[i]);
                rows_global_store<LOGS, 0>(base, tau, v);
            }
        }
        if (!f64) {
            pass_tw_load_of<LOGS, PS::COUNT - 1, DERIVED, false, true>(tau, R, tc, w);
            ntt_dep_wait(a, row, tau == 0);
            rows_global_load<LOGS, PS::COUNT - 1>(src, tau, v);
            inv_passes<LOGS, PS::COUNT - 1, false, WARP, DERIVED, STAGED>(v, w, sm, at, tau, R,
                                                                        tc, pr);
            rows_global_store<LOGS, 0>(base, tau, v);
        }
    }
    if (a.flag_role == 1) {
        // Paired blocks hold chunks of two rows (b & 1): 2 x BPR blocks touch each row.
        __syncthreads();
        if (PAIRED ? (tau == 0 && b < 2) : threadIdx.x == 0) {
            ntt_row_signal(a, row, PAIRED ? 2 * BPR : BPR);
        }
    }
}
