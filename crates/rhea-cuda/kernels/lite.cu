// lite.cu: LITE's test and benchmark kernels (issue 38): AES-XTS memory encryption inside
// kernels, on the device library lite_aes_xts.cuh. Rust side: rhea_cuda::lite.
//
// Test kernels: general XTS over data units (the IEEE 1619 vectors), AES-128 ECB (FIPS-197),
// and the memory form through each entry point (v4, word-granular u32 and u64, masked and
// full-mask).
//
// Benchmark kernels, each in a plain version and LITE versions; the optimisations are template
// parameters of these kernels only, each instantiated under its own name (no environment
// variable, no run-time switch):
//   M  masked shuffle: the shuffle mask comes from __ballot_sync before the divergent branch.
//      M = 0: the full mask, so every lane of the warp runs every step (the longest path).
//   D  delayed shuffle: every load of an iteration is issued before the first decryption.
//      D = 0: each operand is decrypted before the next one is loaded (a data dependency,
//      lite_after).
//   PI/PO  padding of encrypted inputs / outputs: one u64 per 16-byte block. Selective padding
//      = PI 0, PO 1 (only written data padded); full padding = PI 1, PO 1.
//   I/O  partial encryption: I = 1 inputs encrypted, O = 1 outputs encrypted.
// Regular: the element-wise modular multiply-add out = a·b + c mod q over [limbs][N] u64 words
// (word-granular: one word per thread, two lanes per block; v4: one block = two words per
// thread), and one radix-2 NTT stage (v4: two butterflies, two blocks per thread). Irregular: the NTT-domain automorphism gather (rhea_cuda::automorphism's index map)
// and a CSR sparse matrix-vector product mod q (LITE_SPMV_G lanes per row).
//
// Every kernel copies the T-tables into shared memory (read-only module data, before
// pdl_wait()), and touches its operands only after pdl_wait() (launched with programmatic
// dependent launch, rhea_cuda::launch). Grid-stride loops: the Rust side sizes the grid.

#include "common.cuh"
#include "lite_aes_xts.cuh"

// ---- test kernels ----------------------------------------------------------------------------

// Must match rhea_cuda::lite::XtsTestArgs (#[repr(C)]).
struct XtsTestArgs {
    u64 data;         // blocks of 16 bytes, in place
    u64 tweaks;       // per data unit: tweak value lo, hi (2 words)
    u64 blocks;       // total blocks
    u32 unit_blocks;  // blocks per data unit
    u32 decrypt;      // 0 encrypt, 1 decrypt
};
static_assert(sizeof(XtsTestArgs) == 32, "XtsTestArgs: not the Rust size");
static_assert(RHEA_OFFSETOF(XtsTestArgs, blocks) == 16, "XtsTestArgs::blocks: not the Rust offset");
static_assert(RHEA_OFFSETOF(XtsTestArgs, unit_blocks) == 24, "XtsTestArgs::unit_blocks: not the Rust offset");
static_assert(RHEA_OFFSETOF(XtsTestArgs, decrypt) == 28, "XtsTestArgs::decrypt: not the Rust offset");

// General XTS-AES-128: block b is block j = b % unit_blocks of data unit b / unit_blocks.
extern "C" __global__ void lite_test_xts(const LiteKeys K, const XtsTestArgs A) {
    __shared__ LiteTables T;
    pdl_trigger();
    lite_load_tables(T);
    pdl_wait();
    uint4* data = reinterpret_cast<uint4*>(A.data);
    const u64* tw = reinterpret_cast<const u64*>(A.tweaks);
    for (u64 b = blockIdx.x * (u64)blockDim.x + threadIdx.x; b < A.blocks;
         b += (u64)gridDim.x * blockDim.x) {
        const u64 unit = b / A.unit_blocks;
        const u32 j = (u32)(b - unit * A.unit_blocks);
        const uint4 t = lite_xts_tweak(T, K, lite_ld(tw + 2 * unit), lite_ld(tw + 2 * unit + 1), j);
        const uint4 v = lite_ld4(data + b);
        data[b] = A.decrypt ? lite_xts_decrypt(T, K, v, t) : lite_xts_encrypt(T, K, v, t);
    }
}

// AES-128 ECB with key 1, in place (FIPS-197 known answers).
extern "C" __global__ void lite_test_ecb(const LiteKeys K, const XtsTestArgs A) {
    __shared__ LiteTables T;
    pdl_trigger();
    lite_load_tables(T);
    pdl_wait();
    uint4* data = reinterpret_cast<uint4*>(A.data);
    for (u64 b = blockIdx.x * (u64)blockDim.x + threadIdx.x; b < A.blocks;
         b += (u64)gridDim.x * blockDim.x) {
        const uint4 v = lite_ld4(data + b);
        data[b] = A.decrypt ? lite_aes_decrypt_block(T, K.k1_dec, v)
                            : lite_aes_encrypt_block(T, K.k1_enc, v);
    }
}

// Must match rhea_cuda::lite::MemTestArgs (#[repr(C)]).
struct MemTestArgs {
    u64 in;     // source (plaintext to encrypt, or ciphertext to decrypt)
    u64 out;    // destination
    u64 n;      // items: words of the entry point's type, or 16-byte blocks (v4)
    u32 skip;   // word entry points, masked: item i is left out when skip > 0 and i % skip == skip - 1
    u32 pad;
};
static_assert(sizeof(MemTestArgs) == 32, "MemTestArgs: not the Rust size");
static_assert(RHEA_OFFSETOF(MemTestArgs, n) == 16, "MemTestArgs::n: not the Rust offset");
static_assert(RHEA_OFFSETOF(MemTestArgs, skip) == 24, "MemTestArgs::skip: not the Rust offset");

// v4: out[b] = encryption of the plaintext block in[b] (stored at out + b).
extern "C" __global__ void lite_test_v4_encrypt(const LiteKeys K, const MemTestArgs A) {
    __shared__ LiteTables T;
    pdl_trigger();
    lite_load_tables(T);
    pdl_wait();
    const uint4* in = reinterpret_cast<const uint4*>(A.in);
    uint4* out = reinterpret_cast<uint4*>(A.out);
    for (u64 b = blockIdx.x * (u64)blockDim.x + threadIdx.x; b < A.n;
         b += (u64)gridDim.x * blockDim.x) {
        lite_encrypt_v4(T, K, out + b, lite_ld4(in + b));
    }
}

// v4: out[b] = decryption of the ciphertext block in[b] (read at in + b), stored plain.
extern "C" __global__ void lite_test_v4_decrypt(const LiteKeys K, const MemTestArgs A) {
    __shared__ LiteTables T;
    pdl_trigger();
    lite_load_tables(T);
    pdl_wait();
    const uint4* in = reinterpret_cast<const uint4*>(A.in);
    uint4* out = reinterpret_cast<uint4*>(A.out);
    for (u64 b = blockIdx.x * (u64)blockDim.x + threadIdx.x; b < A.n;
         b += (u64)gridDim.x * blockDim.x) {
        lite_st4(out + b, lite_decrypt_v4(T, K, in + b));
    }
}

// Word-granular: one word per thread, no grid stride. The grid is whole blocks of threads, so it
// covers more than n rounded up to a warp: threads past that are never in range. Masked: item i
// takes part when i < n and it is not skipped; the other lanes of its group are absent. Full
// mask: the items are whole warps (n rounded up to 32, what the buffers hold), every lane of a
// warp with an item calls, encrypts or decrypts and stores its word; warps wholly past the
// items leave at once (all their lanes together, so no full-mask shuffle names a lane that left).
RHEA_INLINE bool test_word_warp_past_end(u64 i, u64 n) { return i - lite_laneid() >= n; }

template <typename W, bool MASKED>
__device__ void test_word_encrypt(const LiteKeys& K, const MemTestArgs& A) {
    __shared__ LiteTables T;
    pdl_trigger();
    lite_load_tables(T);
    pdl_wait();
    const W* in = reinterpret_cast<const W*>(A.in);
    W* out = reinterpret_cast<W*>(A.out);
    const u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (test_word_warp_past_end(i, A.n)) return;
    if (MASKED) {
        const bool on = i < A.n && !(A.skip > 0 && i % A.skip == A.skip - 1);
        const u32 mask = __ballot_sync(0xffffffffu, on);
        if (on) lite_encrypt<W, true>(T, K, out + i, lite_ld(in + i), mask);
    } else {
        lite_encrypt<W, false>(T, K, out + i, lite_ld(in + i), 0xffffffffu);
    }
}

template <typename W, bool MASKED>
__device__ void test_word_decrypt(const LiteKeys& K, const MemTestArgs& A) {
    __shared__ LiteTables T;
    pdl_trigger();
    lite_load_tables(T);
    pdl_wait();
    const W* in = reinterpret_cast<const W*>(A.in);
    W* out = reinterpret_cast<W*>(A.out);
    const u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (test_word_warp_past_end(i, A.n)) return;
    if (MASKED) {
        const bool on = i < A.n && !(A.skip > 0 && i % A.skip == A.skip - 1);
        const u32 mask = __ballot_sync(0xffffffffu, on);
        if (on) out[i] = lite_decrypt<W, true>(T, K, in + i, mask);
    } else {
        out[i] = lite_decrypt<W, false>(T, K, in + i, 0xffffffffu);
    }
}

#define LITE_TEST_WORD(W, BITS, M, MNAME)                                                      \
    extern "C" __global__ void lite_test_word##BITS##_encrypt_##MNAME(const LiteKeys K,        \
                                                                       const MemTestArgs A) {  \
        test_word_encrypt<W, M>(K, A);                                                         \
    }                                                                                          \
    extern "C" __global__ void lite_test_word##BITS##_decrypt_##MNAME(const LiteKeys K,        \
                                                                       const MemTestArgs A) {  \
        test_word_decrypt<W, M>(K, A);                                                         \
    }
LITE_TEST_WORD(u32, 32, true, masked)
LITE_TEST_WORD(u32, 32, false, full)
LITE_TEST_WORD(u64, 64, true, masked)
LITE_TEST_WORD(u64, 64, false, full)

// ---- operand access for the benchmark kernels --------------------------------------------------

// A word of an input at p, in the form the template says: plain (ENC = 0), or encrypted and
// read word-granularly (MASKED: the group's lanes in `mask`) from ciphertext `raw` loaded at p.
template <bool ENC, bool MASKED>
RHEA_INLINE u64 lite_in_word(const LiteTables& T, const LiteKeys& K, const u64* p, u64 raw,
                             u32 mask) {
    if (ENC) return lite_decrypt_loaded<u64, MASKED>(T, K, p, raw, mask);
    return raw;
}

// Stores word v at p: plain, or encrypted word-granularly.
template <bool ENC, bool MASKED>
RHEA_INLINE void lite_out_word(const LiteTables& T, const LiteKeys& K, u64* p, u64 v, u32 mask) {
    if (ENC) {
        lite_encrypt<u64, MASKED>(T, K, p, v, mask);
    } else {
        *p = v;
    }
}

// ---- regular: element-wise a·b + c mod q -------------------------------------------------------

// Must match rhea_cuda::lite::EwArgs (#[repr(C)]).
struct LiteEwArgs {
    u64 out;
    u64 a;
    u64 b;
    u64 c;
    u64 moduli;  // const RheaModulus*, limb l uses moduli[l]
    u64 words;   // limbs · N
    u32 log_n;   // N = 2^log_n
    u32 pad;
};
static_assert(sizeof(LiteEwArgs) == 56, "LiteEwArgs: not the Rust size");
static_assert(RHEA_OFFSETOF(LiteEwArgs, moduli) == 32, "LiteEwArgs::moduli: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiteEwArgs, words) == 40, "LiteEwArgs::words: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiteEwArgs, log_n) == 48, "LiteEwArgs::log_n: not the Rust offset");

// Plain, one word per thread.
extern "C" __global__ void lite_ew_plain(const LiteEwArgs A) {
    pdl_trigger();
    pdl_wait();
    const RheaModulus* mods = reinterpret_cast<const RheaModulus*>(A.moduli);
    const u64* a = reinterpret_cast<const u64*>(A.a);
    const u64* b = reinterpret_cast<const u64*>(A.b);
    const u64* c = reinterpret_cast<const u64*>(A.c);
    u64* out = reinterpret_cast<u64*>(A.out);
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < A.words;
         i += (u64)gridDim.x * blockDim.x) {
        const RheaModulus m = load_modulus(mods, (u32)(i >> A.log_n));
        const u64 va = lite_ld(a + i), vb = lite_ld(b + i), vc = lite_ld(c + i);
        out[i] = mod_mul_add(va, vb, vc, m);
    }
}

// Plain, two words (one 16-byte vector) per thread.
extern "C" __global__ void lite_ew_plain_v2(const LiteEwArgs A) {
    pdl_trigger();
    pdl_wait();
    const RheaModulus* mods = reinterpret_cast<const RheaModulus*>(A.moduli);
    const u64* a = reinterpret_cast<const u64*>(A.a);
    const u64* b = reinterpret_cast<const u64*>(A.b);
    const u64* c = reinterpret_cast<const u64*>(A.c);
    u64* out = reinterpret_cast<u64*>(A.out);
    for (u64 p = blockIdx.x * (u64)blockDim.x + threadIdx.x; 2 * p < A.words;
         p += (u64)gridDim.x * blockDim.x) {
        const RheaModulus m = load_modulus(mods, (u32)((2 * p) >> A.log_n));
        const ulonglong2 va = ld_dep2(a + 2 * p), vb = ld_dep2(b + 2 * p), vc = ld_dep2(c + 2 * p);
        store2(out + 2 * p, make_ulonglong2(mod_mul_add(va.x, vb.x, vc.x, m),
                                            mod_mul_add(va.y, vb.y, vc.y, m)));
    }
}

// LITE, word-granular (one word per thread, two lanes per 16-byte block). The loop runs while
// the warp's first index is in range (the same trip count for the whole warp); with M = 0 the
// words must be a multiple of 32 (checked on the Rust side), so no lane is ever out of range.
template <bool M, bool D, bool I, bool O>
__device__ void ew_word(const LiteKeys& K, const LiteEwArgs& A) {
    __shared__ LiteTables T;
    pdl_trigger();
    lite_load_tables(T);
    pdl_wait();
    const RheaModulus* mods = reinterpret_cast<const RheaModulus*>(A.moduli);
    const u64* a = reinterpret_cast<const u64*>(A.a);
    const u64* b = reinterpret_cast<const u64*>(A.b);
    const u64* c = reinterpret_cast<const u64*>(A.c);
    u64* out = reinterpret_cast<u64*>(A.out);
    const u64 lane = lite_laneid();
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i - lane < A.words;
         i += (u64)gridDim.x * blockDim.x) {
        const bool on = i < A.words;
        const u32 mask = M ? __ballot_sync(0xffffffffu, on) : 0xffffffffu;
        if (!M || on) {
            const RheaModulus m = load_modulus(mods, (u32)(i >> A.log_n));
            u64 va, vb, vc;
            if (D) {
                const u64 ra = lite_ld(a + i), rb = lite_ld(b + i), rc = lite_ld(c + i);
                va = lite_in_word<I, M>(T, K, a + i, ra, mask);
                vb = lite_in_word<I, M>(T, K, b + i, rb, mask);
                vc = lite_in_word<I, M>(T, K, c + i, rc, mask);
            } else {
                va = lite_in_word<I, M>(T, K, a + i, lite_ld(a + i), mask);
                const u64* pb = lite_after(b + i, va);
                vb = lite_in_word<I, M>(T, K, b + i, lite_ld(pb), mask);
                const u64* pc = lite_after(c + i, vb);
                vc = lite_in_word<I, M>(T, K, c + i, lite_ld(pc), mask);
            }
            lite_out_word<O, M>(T, K, out + i, mod_mul_add(va, vb, vc, m), mask);
        }
    }
}

// LITE, v4 (one 16-byte block = two words per thread; no shuffles).
template <bool D, bool I, bool O>
__device__ void ew_v4(const LiteKeys& K, const LiteEwArgs& A) {
    __shared__ LiteTables T;
    pdl_trigger();
    lite_load_tables(T);
    pdl_wait();
    const RheaModulus* mods = reinterpret_cast<const RheaModulus*>(A.moduli);
    const uint4* a = reinterpret_cast<const uint4*>(A.a);
    const uint4* b = reinterpret_cast<const uint4*>(A.b);
    const uint4* c = reinterpret_cast<const uint4*>(A.c);
    uint4* out = reinterpret_cast<uint4*>(A.out);
    for (u64 p = blockIdx.x * (u64)blockDim.x + threadIdx.x; 2 * p < A.words;
         p += (u64)gridDim.x * blockDim.x) {
        const RheaModulus m = load_modulus(mods, (u32)((2 * p) >> A.log_n));
        uint4 va, vb, vc;
        if (D) {
            va = lite_ld4(a + p);
            vb = lite_ld4(b + p);
            vc = lite_ld4(c + p);
            if (I) {
                va = lite_decrypt_v4_loaded(T, K, a + p, va);
                vb = lite_decrypt_v4_loaded(T, K, b + p, vb);
                vc = lite_decrypt_v4_loaded(T, K, c + p, vc);
            }
        } else {
            va = lite_ld4(a + p);
            if (I) va = lite_decrypt_v4_loaded(T, K, a + p, va);
            vb = lite_ld4(lite_after(b + p, va.x));
            if (I) vb = lite_decrypt_v4_loaded(T, K, b + p, vb);
            vc = lite_ld4(lite_after(c + p, vb.x));
            if (I) vc = lite_decrypt_v4_loaded(T, K, c + p, vc);
        }
        const u64 r0 = mod_mul_add(lite_word<u64>(va, 0), lite_word<u64>(vb, 0),
                                   lite_word<u64>(vc, 0), m);
        const u64 r1 = mod_mul_add(lite_word<u64>(va, 1), lite_word<u64>(vb, 1),
                                   lite_word<u64>(vc, 1), m);
        const uint4 r = make_uint4((u32)r0, (u32)(r0 >> 32), (u32)r1, (u32)(r1 >> 32));
        if (O) {
            lite_encrypt_v4(T, K, out + p, r);
        } else {
            lite_st4(out + p, r);
        }
    }
}

#define LITE_EW_WORD(M, D, I, O)                                                               \
    extern "C" __global__ void lite_ew_word_m##M##_d##D##_i##I##_o##O(const LiteKeys K,        \
                                                                       const LiteEwArgs A) {   \
        ew_word<M, D, I, O>(K, A);                                                             \
    }
#define LITE_EW_V4(D, I, O)                                                                    \
    extern "C" __global__ void lite_ew_v4_d##D##_i##I##_o##O(const LiteKeys K,                 \
                                                              const LiteEwArgs A) {            \
        ew_v4<D, I, O>(K, A);                                                                  \
    }
// Every variant that rhea_cuda::lite's kernel choice can name (mul_add_kernel): all
// combinations its options and operand forms give (padding only of encrypted operands). The
// names are in rhea_cuda::lite::LITE_KERNEL_NAMES; its CPU test
// every_variant_the_rust_side_can_name_is_listed enumerates them, the NVRTC test
// lite_kernels_compile checks the list against this file's CUBIN, scripts/lite-emu.sh runs them.
#define LITE_EW_WORD_VARIANTS(X) \
    X(0, 0, 1, 1) \
    X(0, 0, 1, 0) \
    X(0, 0, 0, 1) \
    X(0, 1, 1, 1) \
    X(0, 1, 1, 0) \
    X(0, 1, 0, 1) \
    X(1, 0, 1, 1) \
    X(1, 0, 1, 0) \
    X(1, 0, 0, 1) \
    X(1, 1, 1, 1) \
    X(1, 1, 1, 0) \
    X(1, 1, 0, 1)
#define LITE_EW_V4_VARIANTS(X) \
    X(0, 1, 1) \
    X(0, 1, 0) \
    X(0, 0, 1) \
    X(1, 1, 1) \
    X(1, 1, 0) \
    X(1, 0, 1)
LITE_EW_WORD_VARIANTS(LITE_EW_WORD)
LITE_EW_V4_VARIANTS(LITE_EW_V4)

// ---- regular: one radix-2 NTT stage -------------------------------------------------------------

// Must match rhea_cuda::lite::NttStageArgs (#[repr(C)]).
struct LiteNttStageArgs {
    u64 out;
    u64 in;
    u64 tw;      // plain twiddles, limb l's at tw + l · N / (2h), one per butterfly group
    u64 moduli;  // const RheaModulus*, limb l uses moduli[l]
    u64 words;   // limbs · N
    u32 log_n;   // N = 2^log_n
    u32 log_h;   // butterfly distance h = 2^log_h, 1 ≤ log_h < log_n
};
static_assert(sizeof(LiteNttStageArgs) == 48, "LiteNttStageArgs: not the Rust size");
static_assert(RHEA_OFFSETOF(LiteNttStageArgs, words) == 32, "LiteNttStageArgs::words: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiteNttStageArgs, log_h) == 44, "LiteNttStageArgs::log_h: not the Rust offset");

// Butterflies (i0, i0 + h) of a Cooley-Tukey stage, out-of-place: x' = x + w·y, y' = x − w·y
// mod q, w = tw[group]; each thread does two neighbouring butterflies (j, j + 1; h ≥ 2), i.e.
// one 16-byte block at i0 and one at i0 + h (v4 access). I / O: inputs / outputs encrypted;
// D: both blocks loaded before either is decrypted.
template <bool LITE, bool D, bool I, bool O>
__device__ void ntt_stage(const LiteKeys* K, const LiteNttStageArgs& A, LiteTables* Tp) {
    pdl_trigger();
    if (LITE) lite_load_tables(*Tp);
    pdl_wait();
    const RheaModulus* mods = reinterpret_cast<const RheaModulus*>(A.moduli);
    const u64* in = reinterpret_cast<const u64*>(A.in);
    u64* out = reinterpret_cast<u64*>(A.out);
    const u64* tw = reinterpret_cast<const u64*>(A.tw);
    const u64 h = 1ull << A.log_h;
    const u64 half_n = 1ull << (A.log_n - 1);
    for (u64 t = blockIdx.x * (u64)blockDim.x + threadIdx.x; 4 * t < A.words;
         t += (u64)gridDim.x * blockDim.x) {
        const u64 b = 2 * t;                       // first butterfly of the pair
        const u64 limb = b >> (A.log_n - 1);
        const u64 k = b & (half_n - 1);
        const u64 group = k >> A.log_h;
        const u64 i0 = (limb << A.log_n) + (group << (A.log_h + 1)) + (k & (h - 1));
        const RheaModulus m = load_modulus(mods, (u32)limb);
        const u64 w = lite_ld(tw + (limb << (A.log_n - 1 - A.log_h)) + group);
        uint4 x = lite_ld4(in + i0), y;
        if (LITE && I && !D) {
            x = lite_decrypt_v4_loaded(*Tp, *K, in + i0, x);
            y = lite_ld4(lite_after(in + i0 + h, x.x));
        } else {
            y = lite_ld4(in + i0 + h);
            if (LITE && I) x = lite_decrypt_v4_loaded(*Tp, *K, in + i0, x);
        }
        if (LITE && I) y = lite_decrypt_v4_loaded(*Tp, *K, in + i0 + h, y);
        u64 r0[2], r1[2];
#pragma unroll
        for (u32 e = 0; e < 2; ++e) {
            const u64 wy = mod_mul(lite_word<u64>(y, e), w, m);
            const u64 xv = lite_word<u64>(x, e);
            r0[e] = mod_add(xv, wy, m.value);
            r1[e] = mod_sub(xv, wy, m.value);
        }
        const uint4 o0 = lite_pack(r0), o1 = lite_pack(r1);
        if (LITE && O) {
            lite_encrypt_v4(*Tp, *K, out + i0, o0);
            lite_encrypt_v4(*Tp, *K, out + i0 + h, o1);
        } else {
            lite_st4(out + i0, o0);
            lite_st4(out + i0 + h, o1);
        }
    }
}

extern "C" __global__ void lite_ntt_stage_plain(const LiteNttStageArgs A) {
    ntt_stage<false, false, false, false>(nullptr, A, nullptr);
}

#define LITE_NTT_STAGE(D, I, O)                                                                \
    extern "C" __global__ void lite_ntt_stage_v4_d##D##_i##I##_o##O(const LiteKeys K,          \
                                                                     const LiteNttStageArgs A) { \
        __shared__ LiteTables T;                                                               \
        ntt_stage<true, D, I, O>(&K, A, &T);                                                   \
    }
// Every variant that rhea_cuda::lite's kernel choice can name (ntt_stage_kernel): all
// combinations its options and operand forms give (padding only of encrypted operands). The
// names are in rhea_cuda::lite::LITE_KERNEL_NAMES; its CPU test
// every_variant_the_rust_side_can_name_is_listed enumerates them, the NVRTC test
// lite_kernels_compile checks the list against this file's CUBIN, scripts/lite-emu.sh runs them.
#define LITE_NTT_STAGE_VARIANTS(X) \
    X(0, 1, 1) \
    X(0, 1, 0) \
    X(0, 0, 1) \
    X(1, 1, 1) \
    X(1, 1, 0) \
    X(1, 0, 1)
LITE_NTT_STAGE_VARIANTS(LITE_NTT_STAGE)

// ---- irregular: the NTT-domain automorphism gather --------------------------------------------

// Must match rhea_cuda::lite::GatherArgs (#[repr(C)]).
struct LiteGatherArgs {
    u64 out;
    u64 in;
    u64 n;      // ring degree, a power of two
    u64 g;      // Galois element mod 2N, odd
    u64 words;  // rows · N
    u32 log_n;
    u32 pad;
};
static_assert(sizeof(LiteGatherArgs) == 48, "LiteGatherArgs: not the Rust size");
static_assert(RHEA_OFFSETOF(LiteGatherArgs, words) == 32, "LiteGatherArgs::words: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiteGatherArgs, log_n) == 40, "LiteGatherArgs::log_n: not the Rust offset");

// The source index of output word i of a row (automorphism.cu's automorphism_ntt).
RHEA_INLINE u64 lite_gather_source(u64 i, const LiteGatherArgs& A) {
    const u64 brv_i = A.log_n == 0 ? 0 : __brevll(i) >> (64 - A.log_n);
    const u64 e = ((2 * brv_i + 1) * A.g) & (2 * A.n - 1);
    const u64 k = (e - 1) >> 1;
    return A.log_n == 0 ? 0 : __brevll(k) >> (64 - A.log_n);
}

extern "C" __global__ void lite_gather_plain(const LiteGatherArgs A) {
    pdl_trigger();
    pdl_wait();
    const u64* in = reinterpret_cast<const u64*>(A.in);
    u64* out = reinterpret_cast<u64*>(A.out);
    for (u64 w = blockIdx.x * (u64)blockDim.x + threadIdx.x; w < A.words;
         w += (u64)gridDim.x * blockDim.x) {
        const u64 i = w & (A.n - 1);
        out[w] = lite_ld(in + (w - i) + lite_gather_source(i, A));
    }
}

// LITE gather: PI / PO padded encrypted input / output (one word per 16-byte block).
template <bool M, bool PI, bool PO, bool I, bool O>
__device__ void gather(const LiteKeys& K, const LiteGatherArgs& A) {
    __shared__ LiteTables T;
    pdl_trigger();
    lite_load_tables(T);
    pdl_wait();
    const u64 lane = lite_laneid();
    for (u64 w = blockIdx.x * (u64)blockDim.x + threadIdx.x; w - lane < A.words;
         w += (u64)gridDim.x * blockDim.x) {
        const bool on = w < A.words;
        const u32 mask = M ? __ballot_sync(0xffffffffu, on) : 0xffffffffu;
        if (!M || on) {
            const u64 i = w & (A.n - 1);
            const u64 src = (w - i) + lite_gather_source(i, A);
            u64 v;
            if (!I) {
                v = lite_ld(reinterpret_cast<const u64*>(A.in) + src);
            } else if (PI) {
                v = lite_read_padded(T, K, reinterpret_cast<const uint4*>(A.in), src);
            } else {
                v = lite_load_word(T, K, reinterpret_cast<const u64*>(A.in) + src);
            }
            if (O && PO) {
                lite_write_padded(T, K, reinterpret_cast<uint4*>(A.out), w, v);
            } else {
                lite_out_word<O, M>(T, K, reinterpret_cast<u64*>(A.out) + w, v, mask);
            }
        }
    }
}

#define LITE_GATHER(M, PI, PO, I, O)                                                           \
    extern "C" __global__ void lite_gather_m##M##_pi##PI##_po##PO##_i##I##_o##O(               \
        const LiteKeys K, const LiteGatherArgs A) {                                            \
        gather<M, PI, PO, I, O>(K, A);                                                         \
    }
// Every variant that rhea_cuda::lite's kernel choice can name (gather_kernel): all
// combinations its options and operand forms give (padding only of encrypted operands). The
// names are in rhea_cuda::lite::LITE_KERNEL_NAMES; its CPU test
// every_variant_the_rust_side_can_name_is_listed enumerates them, the NVRTC test
// lite_kernels_compile checks the list against this file's CUBIN, scripts/lite-emu.sh runs them.
#define LITE_GATHER_VARIANTS(X) \
    X(0, 0, 0, 0, 1) \
    X(0, 0, 1, 0, 1) \
    X(0, 0, 0, 1, 0) \
    X(0, 0, 0, 1, 1) \
    X(0, 0, 1, 1, 1) \
    X(0, 1, 0, 1, 0) \
    X(0, 1, 0, 1, 1) \
    X(0, 1, 1, 1, 1) \
    X(1, 0, 0, 0, 1) \
    X(1, 0, 1, 0, 1) \
    X(1, 0, 0, 1, 0) \
    X(1, 0, 0, 1, 1) \
    X(1, 0, 1, 1, 1) \
    X(1, 1, 0, 1, 0) \
    X(1, 1, 0, 1, 1) \
    X(1, 1, 1, 1, 1)
LITE_GATHER_VARIANTS(LITE_GATHER)

// ---- irregular: CSR sparse matrix-vector product y = A·x mod q --------------------------------

// Lanes per row (a power of two, at most 16, so that rows r and r + 1 of an even r share a warp).
#define LITE_SPMV_G 8

// Must match rhea_cuda::lite::SpmvArgs (#[repr(C)]).
struct LiteSpmvArgs {
    u64 y;        // rows
    u64 row_ptr;  // rows + 1
    u64 col;      // nnz column indices
    u64 val;      // nnz values < q
    u64 x;        // columns, values < q
    u64 modulus;  // const RheaModulus*
    u64 rows;
};
static_assert(sizeof(LiteSpmvArgs) == 56, "LiteSpmvArgs: not the Rust size");
static_assert(RHEA_OFFSETOF(LiteSpmvArgs, rows) == 48, "LiteSpmvArgs::rows: not the Rust offset");

// Reads word k of an input array in the kernel's form (not word-granular: any lane, any index).
template <bool I, bool PI>
RHEA_INLINE u64 lite_in_any(const LiteTables& T, const LiteKeys& K, u64 base, u64 k) {
    if (!I) return lite_ld(reinterpret_cast<const u64*>(base) + k);
    if (PI) return lite_read_padded(T, K, reinterpret_cast<const uint4*>(base), k);
    return lite_load_word(T, K, reinterpret_cast<const u64*>(base) + k);
}

extern "C" __global__ void lite_spmv_plain(const LiteSpmvArgs A) {
    pdl_trigger();
    pdl_wait();
    constexpr u32 G = LITE_SPMV_G;
    const RheaModulus m = load_modulus(reinterpret_cast<const RheaModulus*>(A.modulus), 0);
    const u32 lane = lite_laneid();
    const u32 g = lane % G;
    const u64* rp = reinterpret_cast<const u64*>(A.row_ptr);
    const u64* col = reinterpret_cast<const u64*>(A.col);
    const u64* val = reinterpret_cast<const u64*>(A.val);
    const u64* x = reinterpret_cast<const u64*>(A.x);
    const u64 warp0 = (blockIdx.x * (u64)blockDim.x + threadIdx.x - lane) / G;
    const u64 row_stride = (u64)gridDim.x * blockDim.x / G;
    for (u64 r0 = warp0; r0 < A.rows; r0 += row_stride) {
        const u64 row = r0 + lane / G;
        u64 start = 0, end = 0;
        if (row < A.rows) {
            start = lite_ld(rp + row);
            end = lite_ld(rp + row + 1);
        }
        u64 acc = 0;
        for (u64 k = (start & ~1ull) + g; k < end; k += G) {
            if (k >= start) {
                const u64 c = lite_ld(col + k);
                acc = mod_add(acc, mod_mul(lite_ld(val + k), lite_ld(x + c), m), m.value);
            }
        }
#pragma unroll
        for (u32 off = G / 2; off > 0; off >>= 1) {
            acc = mod_add(acc, __shfl_xor_sync(0xffffffffu, acc, off), m.value);
        }
        if (g == 0 && row < A.rows) reinterpret_cast<u64*>(A.y)[row] = acc;
    }
}

// LITE. A warp handles 32 / G rows per step, G lanes
// per row; lane g of a row reads entries k0 + g, k0 = start rounded down to even, step G, so the
// two lanes of a 16-byte block of col / val are always neighbours (word-granular reads).
// M = 0 (LITE): every lane of the warp runs the warp's longest row (the full-mask shuffles need
// all 32 lanes); M = 1: each row's lanes leave when their row ends, and the shuffle masks come
// from __ballot_sync over the lanes still in the loop.
template <bool M, bool D, bool PI, bool PO, bool I, bool O>
__device__ void spmv(const LiteKeys& K, const LiteSpmvArgs& A) {
    __shared__ LiteTables T;
    pdl_trigger();
    lite_load_tables(T);
    pdl_wait();
    constexpr u32 G = LITE_SPMV_G;
    const RheaModulus m = load_modulus(reinterpret_cast<const RheaModulus*>(A.modulus), 0);
    const u32 lane = lite_laneid();
    const u32 g = lane % G;
    const u64 warp0 = (blockIdx.x * (u64)blockDim.x + threadIdx.x - lane) / G;  // first row of warp
    const u64 row_stride = (u64)gridDim.x * blockDim.x / G;
    for (u64 r0 = warp0; r0 < A.rows; r0 += row_stride) {
        const u64 row = r0 + lane / G;
        u64 start = 0, end = 0;
        if (row < A.rows) {
            if (!I || PI) {
                start = lite_in_any<I, PI>(T, K, A.row_ptr, row);
                end = lite_in_any<I, PI>(T, K, A.row_ptr, row + 1);
            } else {
                // Unpadded: one decryption when both words share a block.
                const u64* rp = reinterpret_cast<const u64*>(A.row_ptr);
                const uint4 blk = lite_decrypt_v4(T, K, (const void*)((u64)(rp + row) & ~15ull));
                start = lite_word<u64>(blk, (u32)(row & 1));
                end = (row & 1) ? lite_load_word(T, K, rp + row + 1) : lite_word<u64>(blk, 1);
            }
        }
        const u64 k0 = start & ~1ull;
        u64 acc = 0;
        const u64* col = reinterpret_cast<const u64*>(A.col);
        const u64* val = reinterpret_cast<const u64*>(A.val);
        // One step: entries k = kb + g of this lane's row, `part`: its block is in the row.
        auto step = [&](u64 kb, bool part, u32 mask) {
            const u64 k = kb + g;
            const bool mine = part && k >= start && k < end;
            u64 c, v;
            if (!I || PI) {
                if (!mine) return;
                c = lite_in_any<I, PI>(T, K, A.col, k);
                v = lite_in_any<I, PI>(T, K, lite_after(A.val, c), k);
            } else {
                // Word-granular reads; a pair of lanes without a block in the row (full mask
                // only) reads block 0, which every encrypted array has, and discards it.
                const u64 kk = part ? k : (g & 1);
                if (D) {
                    const u64 rc = lite_ld(col + kk), rv = lite_ld(val + kk);
                    c = lite_decrypt_loaded<u64, M>(T, K, col + kk, rc, mask);
                    v = lite_decrypt_loaded<u64, M>(T, K, val + kk, rv, mask);
                } else {
                    c = lite_decrypt_loaded<u64, M>(T, K, col + kk, lite_ld(col + kk), mask);
                    const u64* pv = lite_after(val + kk, c);
                    v = lite_decrypt_loaded<u64, M>(T, K, val + kk, lite_ld(pv), mask);
                }
                if (!mine) return;
            }
            const u64 xv = lite_in_any<I, PI>(T, K, A.x, c);
            acc = mod_add(acc, mod_mul(v, xv, m), m.value);
        };
        if (!M) {
            // The longest row of the warp sets every lane's trip count.
            const u32 trips = (u32)((end - k0 + G - 1) / G);
            const u32 most = __reduce_max_sync(0xffffffffu, trips);
            for (u32 t = 0; t < most; ++t) {
                const u64 kb = k0 + (u64)t * G;
                step(kb, t < trips && ((kb + g) & ~1ull) < end, 0xffffffffu);
            }
        } else {
            u32 in_loop = 0xffffffffu;
            for (u64 kb = k0;; kb += G) {
                const bool more = kb < end;
                in_loop = __ballot_sync(in_loop, more);
                if (!more) break;
                const bool part = ((kb + g) & ~1ull) < end;
                const u32 mask = __ballot_sync(in_loop, part);
                if (part) step(kb, true, mask);
            }
        }
        // Sum over the row's lanes (all 32 lanes are here: the loop above has ended for all).
#pragma unroll
        for (u32 off = G / 2; off > 0; off >>= 1) {
            acc = mod_add(acc, __shfl_xor_sync(0xffffffffu, acc, off), m.value);
        }
        if (!O) {
            if (g == 0 && row < A.rows) reinterpret_cast<u64*>(A.y)[row] = acc;
        } else if (PO) {
            if (g == 0 && row < A.rows) lite_write_padded(T, K, reinterpret_cast<uint4*>(A.y), row, acc);
        } else {
            // Unpadded output: the lane of row r (r even) writes the block of rows r and r + 1.
            const u64 next = __shfl_down_sync(0xffffffffu, acc, G);
            if (g == 0 && row < A.rows && (row & 1) == 0) {
                const u64 hi = row + 1 < A.rows ? next : 0;
                lite_encrypt_v4(T, K, reinterpret_cast<uint4*>(A.y) + row / 2,
                                make_uint4((u32)acc, (u32)(acc >> 32), (u32)hi, (u32)(hi >> 32)));
            }
        }
    }
}

#define LITE_SPMV(M, D, PI, PO, I, O)                                                          \
    extern "C" __global__ void lite_spmv_m##M##_d##D##_pi##PI##_po##PO##_i##I##_o##O(          \
        const LiteKeys K, const LiteSpmvArgs A) {                                              \
        spmv<M, D, PI, PO, I, O>(K, A);                                                  \
    }
// Every variant that rhea_cuda::lite's kernel choice can name (spmv_kernel): all
// combinations its options and operand forms give (padding only of encrypted operands). The
// names are in rhea_cuda::lite::LITE_KERNEL_NAMES; its CPU test
// every_variant_the_rust_side_can_name_is_listed enumerates them, the NVRTC test
// lite_kernels_compile checks the list against this file's CUBIN, scripts/lite-emu.sh runs them.
#define LITE_SPMV_VARIANTS(X) \
    X(0, 0, 0, 0, 0, 1) \
    X(0, 0, 0, 1, 0, 1) \
    X(0, 0, 0, 0, 1, 0) \
    X(0, 0, 0, 0, 1, 1) \
    X(0, 0, 0, 1, 1, 1) \
    X(0, 0, 1, 0, 1, 0) \
    X(0, 0, 1, 0, 1, 1) \
    X(0, 0, 1, 1, 1, 1) \
    X(0, 1, 0, 0, 0, 1) \
    X(0, 1, 0, 1, 0, 1) \
    X(0, 1, 0, 0, 1, 0) \
    X(0, 1, 0, 0, 1, 1) \
    X(0, 1, 0, 1, 1, 1) \
    X(0, 1, 1, 0, 1, 0) \
    X(0, 1, 1, 0, 1, 1) \
    X(0, 1, 1, 1, 1, 1) \
    X(1, 0, 0, 0, 0, 1) \
    X(1, 0, 0, 1, 0, 1) \
    X(1, 0, 0, 0, 1, 0) \
    X(1, 0, 0, 0, 1, 1) \
    X(1, 0, 0, 1, 1, 1) \
    X(1, 0, 1, 0, 1, 0) \
    X(1, 0, 1, 0, 1, 1) \
    X(1, 0, 1, 1, 1, 1) \
    X(1, 1, 0, 0, 0, 1) \
    X(1, 1, 0, 1, 0, 1) \
    X(1, 1, 0, 0, 1, 0) \
    X(1, 1, 0, 0, 1, 1) \
    X(1, 1, 0, 1, 1, 1) \
    X(1, 1, 1, 0, 1, 0) \
    X(1, 1, 1, 0, 1, 1) \
    X(1, 1, 1, 1, 1, 1)
LITE_SPMV_VARIANTS(LITE_SPMV)
