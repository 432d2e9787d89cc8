// ntt_keyswitch.cu: the forward row phase of a ModUp fused with the key-switching inner product.
//
// Twin: the composition it replaces, bit for bit: the ModUp's forward row kernel over every
// converted limb of every digit (ntt.cu, ntt_fwd_rowsd_*), the digits' own limbs copied from
// the NTT-form input, then fused_ks_inner_product (fused.cu) over the digits:
//
//   out_c[i] = sum_d x_d[i] * key_{d,c}[kl(i)] mod p_i        (c = 0, 1; i < width)
//
// with x_d[i] = input[i] when Q limb i is one of digit d's own limbs (own_start[d] <= i <
// own_end[d]), else the forward transform of conv[d][i], the column phase of which
// (ntt_fwd_cols_*) has already run in place. kl(i) = i for the Q limbs (i < level) and q_full +
// (i - level) for the P limbs: the limb's index in the full Q u P list, which is also its NTT
// table and its key limb.
//
// One block per 1024 entries (RowsShape: CH chunks of 2^LOGS) of one output limb. For each
// digit the block transforms its chunks exactly as the row kernel does (derived twiddles, the
// final reduction fused, so the values are canonical) and parks them in shared memory (`held`,
// [count - 1][1024], the last digit in the transform's exchange buffer). After one barrier the entries are dealt anew, two consecutive ones per thread
// and a warp's 32 pairs contiguous (coalesced key loads and output stores), and each output
// word is summed over the digits into a three-word accumulator (common.cuh Acc3: exact sums of
// count <= 4 products < 2^122), one Barrett reduction. The ModUp's converted limbs are thus
// never written back to device memory after their column phase, nor read again by the inner
// product.
//
// Launched with programmatic dependent launch: only twiddles and prime constants (host-uploaded
// tables) before pdl_wait(); the converted limbs, the input and the key with ld_dep2(_if).

#include "ntt.cuh"

#define NKS_MAX_DIGITS 4

// NKS_REV=1 runs the blocks in reverse launch order (see ntt_block_index; no faster, BENCHMARKS.md
// §18).
// NKS_OWN_EF (default 1): the digits' own limbs, read once here, load evict-first (ld_once).
#ifndef NKS_OWN_EF
#define NKS_OWN_EF 1
#endif
#ifndef NKS_REV
#define NKS_REV 0
#endif

#ifndef NKS_MIN_BLOCKS
#define NKS_MIN_BLOCKS 7
#endif

// Must match rhea_cuda::ntt_keyswitch::NttKsArgs (#[repr(C)]).
struct NttKsArgs {
    u64 out;     // u64* [2][width][N]
    u64 input;   // const u64* [level][N], NTT form: the digits' own limbs
    u64 moduli;  // const RheaModulus* [L + K]: the full Q u P list
    u32 width;   // level + K
    u32 level;   // active Q limbs
    u32 q_full;  // L
    u32 count;   // digits, 1 ..= NKS_MAX_DIGITS
    u32 own_start[NKS_MAX_DIGITS];
    u32 own_end[NKS_MAX_DIGITS];
    u64 conv[NKS_MAX_DIGITS];   // u64* [width][N]: column-phase output (own limbs unused)
    u64 key_b[NKS_MAX_DIGITS];  // const u64* [L + K][N]
    u64 key_a[NKS_MAX_DIGITS];
};
// The layout of the Rust twin (`src/ntt_keyswitch.rs`), asserted there too: keep both in step.
static_assert(sizeof(NttKsArgs) == 168, "NttKsArgs: not the Rust size");
static_assert(alignof(NttKsArgs) == 8, "NttKsArgs: not the Rust alignment");
static_assert(RHEA_OFFSETOF(NttKsArgs, out) == 0, "NttKsArgs::out: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttKsArgs, input) == 8, "NttKsArgs::input: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttKsArgs, moduli) == 16, "NttKsArgs::moduli: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttKsArgs, width) == 24, "NttKsArgs::width: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttKsArgs, level) == 28, "NttKsArgs::level: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttKsArgs, q_full) == 32, "NttKsArgs::q_full: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttKsArgs, count) == 36, "NttKsArgs::count: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttKsArgs, own_start) == 40, "NttKsArgs::own_start: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttKsArgs, own_end) == 56, "NttKsArgs::own_end: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttKsArgs, conv) == 72, "NttKsArgs::conv: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttKsArgs, key_b) == 104, "NttKsArgs::key_b: not the Rust offset");
static_assert(RHEA_OFFSETOF(NttKsArgs, key_a) == 136, "NttKsArgs::key_a: not the Rust offset");

template <int LOGN, int LOGS>
RHEA_INLINE void ntt_rows_keyswitch(const ulonglong2* __restrict__ tw_all,
                                    const ulonglong2* __restrict__ tw3_all,
                                    const NttPrime* __restrict__ primes, const NttKsArgs& a) {
    using RS = RowsShape<LOGS>;
    using PS = NttPasses<LOGS>;
    constexpr u32 S = 1u << LOGS;
    constexpr u32 E = S * RS::CH;  // entries per block
    constexpr u32 BPR = (1u << LOGN) / E;
    constexpr int LOG1 = LOGN - LOGS;
    constexpr bool WARP = RS::T <= 32;
    static_assert(BPR >= 1, "at least one block per limb");
    __shared__ __align__(16) u64 sm[E];
    extern __shared__ __align__(16) u64 held[];  // [count - 1][E]; the last digit parks in sm

    pdl_trigger();
    const u32 bid = ntt_block_index<NKS_REV>();
    const u32 i = bid / BPR;
    const u32 b = threadIdx.x / RS::T;
    const u32 tau = threadIdx.x % RS::T;
    const u32 chunk = (bid % BPR) * RS::CH + b;
    const u32 table = i < a.level ? i : a.q_full + (i - a.level);
    TwCtx tc;
    tc.tw = tw_all + ((u64)table << LOGN);
    tc.tw3 = tw3_all + 3 * (((u64)table << (LOGN - 3)) + chunk * RS::T + tau);
    tc.cst[0] = tc.cst[1] = tc.cst[2] = make_ulonglong2(0, 0);
    tc.st = nullptr;
    if (!NTT_LATE_CST || PS::COUNT == 1) load_cst(tc);  // else fwd_passes loads them
    const NttPrime pr = load_ntt_prime(primes, table);
    const RheaModulus m = load_modulus(reinterpret_cast<const RheaModulus*>(a.moduli), table);
    const u32 R = (1u << LOG1) + chunk;
    const RowsSmem at{b * S};
    // This thread's 8 entries (the direct pass: contiguous) within the block.
    const u32 slot = b * S + 8 * tau;
    ulonglong2 w[NTT_PASS_TW];
    pass_tw_load_of<LOGS, 0, true, false>(tau, R, tc, w);
    bool w_ready = true;
    pdl_wait();
    const bool is_q = i < a.level;
#pragma unroll 1
    for (u32 d = 0; d < a.count; ++d) {
        u64 v[8];
        if (is_q && i >= a.own_start[d] && i < a.own_end[d]) {
            // One of the digit's own limbs: the input's NTT-form words as they are.
            const u64* src = reinterpret_cast<const u64*>(a.input) + ((u64)i << LOGN);
            rows_global_load<LOGS, PS::COUNT - 1, NKS_OWN_EF>(src + (u64)chunk * S, tau, v);
        } else {
            // The previous digit's last pass may still be reading the exchange buffer.
            if (d > 0) ntt_sync<WARP>();
            if (!w_ready) pass_tw_load_of<LOGS, 0, true, false>(tau, R, tc, w);
            const u64* src = reinterpret_cast<const u64*>(a.conv[d]) + ((u64)i << LOGN);
            rows_global_load<LOGS, 0, true>(src + (u64)chunk * S, tau, v);
            fwd_passes<LOGS, 0, true, WARP, true>(v, w, sm, at, tau, R, tc, pr.q, pr.two_q);
            // Every thread of the block has its words (the passes' barriers).
            rows_discard<LOGS>(src + (u64)chunk * S, tau);
            w_ready = false;
        }
        // The last digit parks in the exchange buffer, once every thread is done with it.
        const bool last = d + 1 == a.count;
        if (last) ntt_sync<false>();
        ulonglong2* h = reinterpret_cast<ulonglong2*>((last ? sm : held + d * E) + slot);
#pragma unroll
        for (int j = 0; j < 4; ++j) h[j] = make_ulonglong2(v[2 * j], v[2 * j + 1]);
    }

    // The inner product, entries re-dealt so that a warp's key loads and output stores are
    // contiguous: thread t takes the pairs 2 (j T + t) of the block's E entries.
    ntt_sync<false>();
    constexpr u32 THREADS = RS::THREADS;
    const u64 blk_off = (u64)(bid % BPR) * E;  // the block's first entry in the limb
    u64* out0 = reinterpret_cast<u64*>(a.out) + ((u64)i << LOGN) + blk_off;
    u64* out1 = out0 + ((u64)a.width << LOGN);
    const u64 kb_off = ((u64)table << LOGN) + blk_off;
#pragma unroll
    for (u32 j = 0; j < E / (2 * THREADS); ++j) {
        const u32 e = 2 * (j * THREADS + threadIdx.x);
        ulonglong2 x[NKS_MAX_DIGITS];
#pragma unroll
        for (u32 d = 0; d < NKS_MAX_DIGITS; ++d) {
            const u64* parked = d + 1 == a.count ? sm : held + d * E;
            x[d] = d < a.count ? *reinterpret_cast<const ulonglong2*>(parked + e)
                               : make_ulonglong2(0ull, 0ull);
        }
        // One key component at a time (fewer live registers), each with every digit's loads
        // issued first (predicated, not branched around: a branch per digit would leave one
        // digit's loads in flight at a time), then the products.
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            ulonglong2 k[NKS_MAX_DIGITS];
#pragma unroll
            for (u32 d = 0; d < NKS_MAX_DIGITS; ++d) {
                const u64* key = reinterpret_cast<const u64*>(c == 0 ? a.key_b[d] : a.key_a[d]);
                k[d] = ld_once2_if(key + kb_off + e, d < a.count);  // streamed
            }
            Acc3 acc[2];
            acc3_set(acc[0], 0ull);
            acc3_set(acc[1], 0ull);
#pragma unroll
            for (u32 d = 0; d < NKS_MAX_DIGITS; ++d) {
                if (d < a.count) {
                    acc3_mac(acc[0], x[d].x, k[d].x);
                    acc3_mac(acc[1], x[d].y, k[d].y);
                }
            }
            store2((c == 0 ? out0 : out1) + e,
                   make_ulonglong2(barrett_reduce(acc3_value(acc[0]), m),
                                   barrett_reduce(acc3_value(acc[1]), m)));
        }
    }
}

#define NKS_ARGS                                                                            \
    const ulonglong2* __restrict__ tw, const ulonglong2* __restrict__ tw3,                  \
        const NttPrime* __restrict__ primes, const NttKsArgs a

// ntt_fwd_rowsks_<LOGN>_<LOG1>: the default split of each degree (rhea_cuda::ntt::SHAPES'
// first entry), with NKS_MIN_BLOCKS blocks per SM asked of ptxas from N = 2^14 (7: 72
// registers, no spills; the shared memory, 8 KiB per digit with the last digit in the exchange
// buffer, allows 8 blocks of 3 digits). On the H100 6, 7 and 8 blocks (80, 72, 64 registers)
// run the deep mul+relin within 1 % of each other (bench-history §14).
#define NTT_ROWS_KS(LOGN, LOG1)                                                             \
    extern "C" __global__ void __launch_bounds__(RowsShape<LOGN - LOG1>::THREADS,          \
                                                 (LOGN) >= 14 ? NKS_MIN_BLOCKS : 0)         \
        ntt_fwd_rowsks_##LOGN##_##LOG1(NKS_ARGS) { RHEA_TL                                  \
        ntt_rows_keyswitch<LOGN, LOGN - LOG1>(tw, tw3, primes, a);                          \
    }

// A module per degree: the registry compiles this source once per log2 N with NTT_ONLY_LOG_N
// defined (rhea_cuda::ntt_keyswitch::ntt_keyswitch_source), so that a ring's first key switching compiles only its own
// degree's kernel; without it (the NTT_KEYSWITCH constant) every degree is instantiated.
#ifndef NTT_ONLY_LOG_N
#define NTT_ALL_DEGREES 1
#define NTT_ONLY_LOG_N 0
#else
#define NTT_ALL_DEGREES 0
#endif
#if NTT_ALL_DEGREES || NTT_ONLY_LOG_N == 12
NTT_ROWS_KS(12, 6)
#endif
#if NTT_ALL_DEGREES || NTT_ONLY_LOG_N == 13
NTT_ROWS_KS(13, 6)
#endif
#if NTT_ALL_DEGREES || NTT_ONLY_LOG_N == 14
NTT_ROWS_KS(14, 7)
#endif
#if NTT_ALL_DEGREES || NTT_ONLY_LOG_N == 15
NTT_ROWS_KS(15, 7)
#endif
#if NTT_ALL_DEGREES || NTT_ONLY_LOG_N == 16
NTT_ROWS_KS(16, 7)
#endif
#if NTT_ALL_DEGREES || NTT_ONLY_LOG_N == 17
NTT_ROWS_KS(17, 8)
#endif
