// lite_ops.cu: the all-data mode's primitives (issue 38; docs/lite.md "The all-data mode"): CKKS's
// element-wise, NTT, base-conversion and automorphism steps on buffers that stay in LITE's memory
// form (16-byte block at address a is XTS ciphertext under the tweak AES_K2(a / 16)) or plain, in
// any mix. Rust side: rhea_cuda::lite::ops.
//
// Polynomials are `rows` consecutive rows of N = 2^log_n u64 words; row r is reduced modulo table
// limb first_table + r. Every operand starts at a 16-byte aligned address, so a 16-byte block
// holds two words of one row. A protected operand is decrypted in registers after it is loaded
// and a protected result is encrypted in registers before it is stored; plaintext lives only in
// registers and shared memory (no local arrays: every per-thread value is a named register, and
// everything indexed at run time lives in shared memory).
//
//   lite_ops_ew            out = op(a, b, c, w[r]), one thread per 16-byte block (EW_* below)
//   lite_ops_automorphism  out[r][i] = a[r][perm[i]], one thread per output block (two gathers)
//   lite_ops_ntt_cols      the first log R stages of a negacyclic NTT (Cooley–Tukey, forward) or
//                          the last log R (Gentleman–Sande, inverse), on columns j + k·C
//   lite_ops_ntt_chunks    the remaining log C stages on contiguous chunks of C words
//                          (N = R·C; R = 1 runs the whole transform here, for small N)
//   lite_ops_convert       BaseConverter::convert_centered_rows, one thread per coefficient pair
//
// In-place blocks (the output at the address of an input) compute the tweak once and use it for
// the load's decryption and the store's encryption.

#include "common.cuh"
#include "lite_aes_xts.cuh"

// ---- helpers ------------------------------------------------------------------------------------

RHEA_INLINE ulonglong2 ops_words(uint4 v) {
    return make_ulonglong2((u64)v.y << 32 | v.x, (u64)v.w << 32 | v.z);
}
RHEA_INLINE uint4 ops_block(u64 lo, u64 hi) {
    return make_uint4((u32)lo, (u32)(lo >> 32), (u32)hi, (u32)(hi >> 32));
}
RHEA_INLINE const uint4* ops_blocks(u64 p) { return reinterpret_cast<const uint4*>(p); }
RHEA_INLINE uint4 ops_zero4() { return make_uint4(0u, 0u, 0u, 0u); }

// The tweak of the block at addr (AES_K2(addr / 16)).
RHEA_INLINE uint4 ops_tweak(const LiteTables& T, const LiteKeys& K, u64 addr) {
    return lite_tweak_at(T, K, addr);
}
// The plaintext words of a loaded block: decrypted with tweak tw when protected.
RHEA_INLINE ulonglong2 ops_open(const LiteTables& T, const LiteKeys& K, uint4 c, bool prot,
                                uint4 tw) {
    return ops_words(prot ? lite_xts_decrypt(T, K, c, tw) : c);
}
// Stores two words at p: encrypted with tweak tw when protected.
RHEA_INLINE void ops_seal(const LiteTables& T, const LiteKeys& K, u64 p, u64 lo, u64 hi, bool prot,
                          uint4 tw) {
    const uint4 v = ops_block(lo, hi);
    lite_st4(reinterpret_cast<void*>(p), prot ? lite_xts_encrypt(T, K, v, tw) : v);
}

// ---- element-wise -------------------------------------------------------------------------------

// Must match rhea_cuda::lite::ops::EwArgs (#[repr(C)]).
struct LiteEwArgs {
    u64 out;      // the output's row 0
    u64 a;        // inputs' row 0 (b, c: 0 when the op does not read them)
    u64 b;
    u64 c;
    u64 w;        // one plain u64 per row (scalar ops; reduced here), or 0
    u64 moduli;   // const RheaModulus*, the ring's table
    u64 words;    // rows · N
    u32 log_n;
    u32 first_table;
    u32 op;       // EW_*
    u32 flags;    // bit 0: out protected; 1: a; 2: b; 3: c
};
static_assert(sizeof(LiteEwArgs) == 72, "LiteEwArgs: not the Rust size");
static_assert(RHEA_OFFSETOF(LiteEwArgs, words) == 48, "LiteEwArgs::words: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiteEwArgs, log_n) == 56, "LiteEwArgs::log_n: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiteEwArgs, flags) == 68, "LiteEwArgs::flags: not the Rust offset");

// The operations (rhea_cuda::lite::ops::EwOp, in order).
#define EW_ADD 0u
#define EW_SUB 1u
#define EW_MUL 2u
#define EW_MUL_ADD 3u
#define EW_MUL_SCALAR 4u
#define EW_ADD_SCALAR 5u
#define EW_SUB_MUL_SCALAR 6u
#define EW_COPY 7u
#define EW_REDUCE_BROADCAST 8u

RHEA_INLINE u64 ew_apply(u32 op, u64 a, u64 b, u64 c, u64 w, const RheaModulus& m) {
    switch (op) {
        case EW_ADD: return mod_add(a, b, m.value);
        case EW_SUB: return mod_sub(a, b, m.value);
        case EW_MUL: return mod_mul(a, b, m);
        case EW_MUL_ADD: return mod_mul_add(a, b, c, m);
        case EW_MUL_SCALAR: return mod_mul(a, w, m);
        case EW_ADD_SCALAR: return mod_add(a, w, m.value);
        case EW_SUB_MUL_SCALAR: return mod_mul(mod_sub(a, b, m.value), w, m);
        case EW_REDUCE_BROADCAST: return mod_add(reduce_u64(a, m), w, m.value);
        default: return a;  // EW_COPY
    }
}

extern "C" __global__ void lite_ops_ew(const LiteKeys K, const LiteEwArgs A) {
    __shared__ LiteTables T;
    pdl_trigger();
    lite_load_tables(T);
    pdl_wait();
    const RheaModulus* mods = reinterpret_cast<const RheaModulus*>(A.moduli);
    const bool po = A.flags & 1u, pa = A.flags & 2u, pb = A.flags & 4u, pc = A.flags & 8u;
    const u64 half_n = (1ull << A.log_n) >> 1;  // blocks per row
    const bool bcast = A.op == EW_REDUCE_BROADCAST;
    for (u64 k = blockIdx.x * (u64)blockDim.x + threadIdx.x; 2 * k < A.words;
         k += (u64)gridDim.x * blockDim.x) {
        const u32 row = (u32)((2 * k) >> A.log_n);
        const RheaModulus m = load_modulus(mods, A.first_table + row);
        const u64 w = A.w ? reduce_u64(lite_ld(reinterpret_cast<const u64*>(A.w) + row), m) : 0;
        const u64 ak = bcast ? (k & (half_n - 1)) : k;  // ReduceBroadcast reads a's row 0
        const u64 pout = A.out + 16 * k, pa_ = A.a + 16 * ak, pb_ = A.b + 16 * k,
                  pc_ = A.c + 16 * k;
        // every load first (the delayed shuffle), then the tweaks and decryptions
        const uint4 ra = lite_ld4(ops_blocks(pa_));
        const uint4 rb = A.b ? lite_ld4(ops_blocks(pb_)) : ops_zero4();
        const uint4 rc = A.c ? lite_ld4(ops_blocks(pc_)) : ops_zero4();
        const uint4 tw_out = po ? ops_tweak(T, K, pout) : ops_zero4();
        // an input at the output's address shares its tweak (in place)
        const uint4 tw_a = pa ? (po && pa_ == pout ? tw_out : ops_tweak(T, K, pa_)) : ops_zero4();
        const uint4 tw_b =
            (pb && A.b) ? (po && pb_ == pout ? tw_out : ops_tweak(T, K, pb_)) : ops_zero4();
        const uint4 tw_c =
            (pc && A.c) ? (po && pc_ == pout ? tw_out : ops_tweak(T, K, pc_)) : ops_zero4();
        const ulonglong2 a = ops_open(T, K, ra, pa, tw_a);
        const ulonglong2 b = A.b ? ops_open(T, K, rb, pb, tw_b) : make_ulonglong2(0, 0);
        const ulonglong2 c = A.c ? ops_open(T, K, rc, pc, tw_c) : make_ulonglong2(0, 0);
        const u64 o0 = ew_apply(A.op, a.x, b.x, c.x, w, m);
        const u64 o1 = ew_apply(A.op, a.y, b.y, c.y, w, m);
        ops_seal(T, K, pout, o0, o1, po, tw_out);
    }
}

// ---- automorphism -------------------------------------------------------------------------------

// Must match rhea_cuda::lite::ops::AutArgs (#[repr(C)]).
struct LiteAutArgs {
    u64 out;    // row 0 of the output
    u64 a;      // row 0 of the input (must not overlap out)
    u64 perm;   // N plain u64 source indices (< N)
    u64 words;  // rows · N
    u32 log_n;
    u32 flags;  // bit 0: out protected; 1: a protected
};
static_assert(sizeof(LiteAutArgs) == 40, "LiteAutArgs: not the Rust size");
static_assert(RHEA_OFFSETOF(LiteAutArgs, log_n) == 32, "LiteAutArgs::log_n: not the Rust offset");

extern "C" __global__ void lite_ops_automorphism(const LiteKeys K, const LiteAutArgs A) {
    __shared__ LiteTables T;
    pdl_trigger();
    lite_load_tables(T);
    pdl_wait();
    const bool po = A.flags & 1u, pa = A.flags & 2u;
    const u64 n = 1ull << A.log_n;
    const u64* perm = reinterpret_cast<const u64*>(A.perm);
    for (u64 k = blockIdx.x * (u64)blockDim.x + threadIdx.x; 2 * k < A.words;
         k += (u64)gridDim.x * blockDim.x) {
        const u64 i = (2 * k) & (n - 1);
        const u64 row = A.a + 8 * ((2 * k) - i);  // the input row's address
        const u64 s0 = lite_ld(perm + i) & (n - 1), s1 = lite_ld(perm + i + 1) & (n - 1);
        const u64 p0 = row + 16 * (s0 >> 1), p1 = row + 16 * (s1 >> 1);
        const bool same = p0 == p1;
        const uint4 r0 = lite_ld4(ops_blocks(p0));
        const uint4 r1 = same ? r0 : lite_ld4(ops_blocks(p1));
        const uint4 t0 = pa ? ops_tweak(T, K, p0) : ops_zero4();
        const ulonglong2 v0 = ops_open(T, K, r0, pa, t0);
        ulonglong2 v1 = v0;
        if (!same) v1 = ops_open(T, K, r1, pa, pa ? ops_tweak(T, K, p1) : ops_zero4());
        const u64 o0 = (s0 & 1) ? v0.y : v0.x;
        const u64 o1 = (s1 & 1) ? v1.y : v1.x;
        const u64 pout = A.out + 16 * k;
        ops_seal(T, K, pout, o0, o1, po, po ? ops_tweak(T, K, pout) : ops_zero4());
    }
}

// ---- NTT ---------------------------------------------------------------------------------------
// Row r (blockIdx.y) of N = R·C words. Forward (Cooley–Tukey, rhea_math::NttTable::forward):
// stage with m blocks (m = 1, 2, …, N/2; h = N/(2m)): for block i, w = root_powers[m + i], pairs
// (x, x + h): (x + w·y, x − w·y). Stages m < R pair words of one column {j + k·C}: on the column
// as an R-point sequence over k they are the R-point stages with m_loc = m blocks, block i_loc = i.
// Stages m ≥ R pair words of one chunk c (words c·C … c·C + C − 1): m = R·m_loc, i = c·m_loc +
// i_loc. So the twiddle of a local stage is roots[(base)·m_loc + i_loc] with base = 1 for columns
// and base = R + c for chunk c. Inverse (Gentleman–Sande): the mirror, m = N/2 … 1,
// (x, y) ↦ (x + y, (x − y)·w), w = inv_root_powers[m + i], then × N^-1: chunks first, then columns.

// Must match rhea_cuda::lite::ops::NttArgs (#[repr(C)]).
struct LiteNttArgs {
    u64 data;         // row 0
    u64 moduli;       // const RheaModulus*
    u64 tw;           // [limb][4][N]: root_powers, their Shoup, inv_root_powers, their Shoup
    u64 ninv;         // [limb][2]: N^-1 and its Shoup
    u32 first_table;
    u32 log_n;
    u32 log_r;        // R = 2^log_r (0: the chunk kernel runs the whole transform)
    u32 group;        // column pairs (cols) or chunks (chunks) per iteration
    u32 flags;        // bit 0: protected; 1: inverse; 2: multiply by N^-1 at the end
    u32 pad;
};
static_assert(sizeof(LiteNttArgs) == 56, "LiteNttArgs: not the Rust size");
static_assert(RHEA_OFFSETOF(LiteNttArgs, first_table) == 32, "LiteNttArgs::first_table: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiteNttArgs, flags) == 48, "LiteNttArgs::flags: not the Rust offset");

// Words of shared memory for an iteration's data, and 16-byte blocks (tweaks).
#define LITE_NTT_WORDS 2048
#define LITE_NTT_BLOCKS (LITE_NTT_WORDS / 2)

// The stages of `nsub` sub-transforms of length L (a power of two ≥ 2), sub-transform t at
// s[t·L …], twiddle base (base0 + t·step), forward (CT) or inverse (GS). Every thread of the block
// calls it (it synchronises after each stage).
RHEA_INLINE void ntt_stages(u64* s, u32 L, u32 nsub, u32 base0, u32 step, bool inverse,
                            const u64* w, const u64* ws, u64 q) {
    const u32 half = L >> 1;
    const u32 total = nsub * half;
    for (u32 st = 0; (1u << st) < L; ++st) {
        // forward: m_loc = 1, 2, …, L/2; inverse: L/2, …, 1
        const u32 ml = inverse ? (half >> st) : (1u << st);
        const u32 hl = half / ml;
        for (u32 b = threadIdx.x; b < total; b += blockDim.x) {
            const u32 t = b / half, p = b - t * half;
            const u32 il = p / hl, jj = p - il * hl;
            const u32 x = t * L + il * 2 * hl + jj, y = x + hl;
            const u32 idx = (base0 + t * step) * ml + il;
            const u64 wv = w[idx], wsv = ws[idx];
            const u64 u = s[x], v = s[y];
            if (!inverse) {
                const u64 vw = shoup_mul(v, wv, wsv, q);
                s[x] = mod_add(u, vw, q);
                s[y] = mod_sub(u, vw, q);
            } else {
                s[x] = mod_add(u, v, q);
                s[y] = shoup_mul(mod_sub(u, v, q), wv, wsv, q);
            }
        }
        __syncthreads();
    }
}

#define NTT_PROLOGUE                                                                   \
    __shared__ LiteTables T;                                                           \
    __shared__ u64 S[LITE_NTT_WORDS];                                                  \
    __shared__ uint4 TW[LITE_NTT_BLOCKS];                                              \
    pdl_trigger();                                                                     \
    lite_load_tables(T);                                                               \
    pdl_wait();                                                                        \
    const bool prot = A.flags & 1u, inverse = A.flags & 2u, scale = A.flags & 4u;      \
    const u32 n = 1u << A.log_n;                                                       \
    const u32 limb = A.first_table + blockIdx.y;                                       \
    const u64 q = load_modulus(reinterpret_cast<const RheaModulus*>(A.moduli), limb).value; \
    const u64* tw = reinterpret_cast<const u64*>(A.tw) + (u64)limb * 4 * n;            \
    const u64* w = tw + (inverse ? 2 * n : 0);                                         \
    const u64* ws = w + n;                                                             \
    const u64 ni = reinterpret_cast<const u64*>(A.ninv)[2 * limb];                     \
    const u64 nis = reinterpret_cast<const u64*>(A.ninv)[2 * limb + 1];                \
    const u64 rowp = A.data + 8ull * n * blockIdx.y;

// Columns: an iteration takes `group` adjacent column pairs (2·group columns j0 … j0 + 2·group − 1,
// j0 even), R words each: 16-byte block u = k·group + p (k < R, p < group) sits at word k·C + j0 +
// 2p, and holds column 2p's word k (S[2p·R + k]) and column 2p + 1's (S[(2p + 1)·R + k]).
extern "C" __global__ void lite_ops_ntt_cols(const LiteKeys K, const LiteNttArgs A) {
    NTT_PROLOGUE
    const u32 R = 1u << A.log_r, C = n >> A.log_r, G = A.group;
    const u32 iters = C / (2 * G), blocks = R * G;
    for (u32 it = blockIdx.x; it < iters; it += gridDim.x) {
        const u32 j0 = it * 2 * G;
        for (u32 u = threadIdx.x; u < blocks; u += blockDim.x) {
            const u32 k = u / G, p = u - k * G;
            const u64 addr = rowp + 8ull * ((u64)k * C + j0 + 2 * p);
            const uint4 r = lite_ld4(ops_blocks(addr));
            const uint4 t = prot ? ops_tweak(T, K, addr) : ops_zero4();
            TW[u] = t;
            const ulonglong2 v = ops_open(T, K, r, prot, t);
            S[2 * p * R + k] = v.x;
            S[(2 * p + 1) * R + k] = v.y;
        }
        __syncthreads();
        ntt_stages(S, R, 2 * G, 1, 0, inverse, w, ws, q);
        for (u32 u = threadIdx.x; u < blocks; u += blockDim.x) {
            const u32 k = u / G, p = u - k * G;
            const u64 addr = rowp + 8ull * ((u64)k * C + j0 + 2 * p);
            u64 lo = S[2 * p * R + k], hi = S[(2 * p + 1) * R + k];
            if (scale) {
                lo = shoup_mul(lo, ni, nis, q);
                hi = shoup_mul(hi, ni, nis, q);
            }
            ops_seal(T, K, addr, lo, hi, prot, TW[u]);
        }
        __syncthreads();
    }
}

// Chunks: an iteration takes `group` consecutive chunks c0 … c0 + group − 1 of C words (C·group
// contiguous words, S in natural order); chunk c0 + t's twiddle base is R + c0 + t.
extern "C" __global__ void lite_ops_ntt_chunks(const LiteKeys K, const LiteNttArgs A) {
    NTT_PROLOGUE
    const u32 R = 1u << A.log_r, C = n >> A.log_r, G = A.group;
    const u32 iters = R / G, blocks = C * G / 2;
    for (u32 it = blockIdx.x; it < iters; it += gridDim.x) {
        const u32 c0 = it * G;
        const u64 base = rowp + 8ull * c0 * C;
        for (u32 u = threadIdx.x; u < blocks; u += blockDim.x) {
            const u64 addr = base + 16ull * u;
            const uint4 r = lite_ld4(ops_blocks(addr));
            const uint4 t = prot ? ops_tweak(T, K, addr) : ops_zero4();
            TW[u] = t;
            const ulonglong2 v = ops_open(T, K, r, prot, t);
            S[2 * u] = v.x;
            S[2 * u + 1] = v.y;
        }
        __syncthreads();
        ntt_stages(S, C, G, (R == 1 ? 1 : R + c0), R == 1 ? 0 : 1, inverse, w, ws, q);
        for (u32 u = threadIdx.x; u < blocks; u += blockDim.x) {
            u64 lo = S[2 * u], hi = S[2 * u + 1];
            if (scale) {
                lo = shoup_mul(lo, ni, nis, q);
                hi = shoup_mul(hi, ni, nis, q);
            }
            ops_seal(T, K, base + 16ull * u, lo, hi, prot, TW[u]);
        }
        __syncthreads();
    }
}

// ---- centred base conversion (rhea_math::BaseConverter::convert_centered_rows) --------------------

// Must match rhea_cuda::lite::ops::ConvArgs (#[repr(C)]).
struct LiteConvArgs {
    u64 in;          // row 0 of the L input rows
    u64 out;         // row 0 of the output buffer
    u64 from_mods;   // const RheaModulus*[L]
    u64 to_mods;     // const RheaModulus*[K]
    u64 qhat_inv;    // [L]: [q̂_i^{-1}]_{q_i}
    u64 q_inv;       // [L]: 1/q_i as f64 bits
    u64 qhat_mod_p;  // [L][K]: [q̂_i]_{p_j} at i·K + j
    u64 q_mod_p;     // [K]: [Q]_{p_j}
    u64 targets;     // [T][2]: (j, output row)
    u32 from_len;
    u32 to_len;
    u32 ntargets;
    u32 log_n;
    u32 flags;       // bit 0: out protected; 1: in protected
    u32 pad;
};
static_assert(sizeof(LiteConvArgs) == 96, "LiteConvArgs: not the Rust size");
static_assert(RHEA_OFFSETOF(LiteConvArgs, from_len) == 72, "LiteConvArgs::from_len: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiteConvArgs, flags) == 88, "LiteConvArgs::flags: not the Rust offset");

#ifndef LITE_HOST_EMULATION
#define LITE_DYN_SHARED(T, name) extern __shared__ T name[]
#endif

// One thread per coefficient pair (2p, 2p + 1); t_i of both staged in dynamic shared memory at
// TS[(2i)·blockDim + tid] and TS[(2i + 1)·blockDim + tid] (L · blockDim · 16 bytes).
extern "C" __global__ void lite_ops_convert(const LiteKeys K, const LiteConvArgs A) {
    __shared__ LiteTables T;
    LITE_DYN_SHARED(u64, TS);
    pdl_trigger();
    lite_load_tables(T);
    pdl_wait();
    const bool po = A.flags & 1u, pi = A.flags & 2u;
    const u32 L = A.from_len, Kp = A.to_len;
    const u64 n = 1ull << A.log_n;
    const RheaModulus* fm = reinterpret_cast<const RheaModulus*>(A.from_mods);
    const RheaModulus* tm = reinterpret_cast<const RheaModulus*>(A.to_mods);
    const u64* qhi = reinterpret_cast<const u64*>(A.qhat_inv);
    const u64* qinv = reinterpret_cast<const u64*>(A.q_inv);
    const u64* qhp = reinterpret_cast<const u64*>(A.qhat_mod_p);
    const u64* qmp = reinterpret_cast<const u64*>(A.q_mod_p);
    const u64* tg = reinterpret_cast<const u64*>(A.targets);
    const u32 tid = threadIdx.x, bd = blockDim.x;
    const u64 pairs = n / 2;
    // the loop bound is uniform per block iteration only through `base`: every thread of the
    // block runs the same number of iterations (the shared staging needs no barrier: each thread
    // reads back only its own slots)
    for (u64 base = (u64)blockIdx.x * bd; base < pairs; base += (u64)gridDim.x * bd) {
        const u64 pr = base + tid;
        if (pr < pairs) {
            // t_i, software-pipelined: row i + 1's load leaves before row i is decrypted
            double s0 = 0.0, s1 = 0.0;
            u64 addr = A.in + 16 * pr;
            uint4 next = lite_ld4(ops_blocks(addr));
            for (u32 i = 0; i < L; ++i) {
                const uint4 cur = next;
                const u64 cur_addr = addr;
                if (i + 1 < L) {
                    addr += 8 * n;
                    next = lite_ld4(ops_blocks(addr));
                }
                const ulonglong2 x =
                    ops_open(T, K, cur, pi, pi ? ops_tweak(T, K, cur_addr) : ops_zero4());
                const RheaModulus m = load_modulus(fm, i);
                const u64 inv = qhi[i];
                const u64 t0 = mod_mul(x.x, inv, m), t1 = mod_mul(x.y, inv, m);
                TS[(2 * i) * bd + tid] = t0;
                TS[(2 * i + 1) * bd + tid] = t1;
                const double qi = __longlong_as_double((long long)qinv[i]);
                s0 = __dadd_rn(s0, __dmul_rn(__ull2double_rn(t0), qi));
                s1 = __dadd_rn(s1, __dmul_rn(__ull2double_rn(t1), qi));
            }
            const double f0 = floor(s0), f1 = floor(s1);
            const u64 v0 = (u64)f0 + (__dsub_rn(s0, f0) > 0.5 ? 1 : 0);
            const u64 v1 = (u64)f1 + (__dsub_rn(s1, f1) > 0.5 ? 1 : 0);
            for (u32 tt = 0; tt < A.ntargets; ++tt) {
                const u32 j = (u32)tg[2 * tt];
                const u64 orow = tg[2 * tt + 1];
                const RheaModulus p = load_modulus(tm, j);
                u64 a0 = 0, a1 = 0;
                for (u32 i = 0; i < L; ++i) {
                    const u64 c = qhp[(u64)i * Kp + j];
                    a0 = mod_mul_add(TS[(2 * i) * bd + tid], c, a0, p);
                    a1 = mod_mul_add(TS[(2 * i + 1) * bd + tid], c, a1, p);
                }
                const u64 qm = qmp[j];
                const u64 y0 = mod_sub(a0, mod_mul(v0, qm, p), p.value);
                const u64 y1 = mod_sub(a1, mod_mul(v1, qm, p), p.value);
                const u64 oaddr = A.out + 8 * (orow * n) + 16 * pr;
                ops_seal(T, K, oaddr, y0, y1, po, po ? ops_tweak(T, K, oaddr) : ops_zero4());
            }
        }
    }
}
