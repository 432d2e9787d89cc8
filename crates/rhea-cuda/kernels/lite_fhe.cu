// lite_fhe.cu: the secret-dependent steps of an RLWE scheme on LITE-protected buffers (issue 38,
// Rhea's protected mode; docs/lite.md "Protected mode"). Rust side: rhea_cuda::lite::fhe.
//
// Every polynomial is in NTT form, [limb][N] u64 words, limb l reduced modulo moduli[l] (the
// ring's Q ∪ P table: a Q-only polynomial at level ℓ uses its prefix). A protected operand is a
// dense LiteForm::Encrypted buffer: 16-byte block k (words 2k, 2k+1, both of one limb since N is
// even) is XTS ciphertext under the tweak AES_K2(address / 16). Each thread takes one block of
// every operand (the v4 entry points: no shuffles, no padding: every block is read and written by
// one thread), issues all its loads first (the delayed shuffle), decrypts the protected ones in
// registers, computes, and stores: protected results are encrypted in registers (lite_encrypt_v4),
// public ones (key rows, ciphertexts) are stored plain.
//
//   lite_fhe_decrypt     out = c0 + c1·s (+ c2·s²)             c plain (or protected: flag 2),
//                                                               s protected, out protected
//   lite_fhe_key_row     out = e − a·s + f_l·x   (x = s'),      a plain, e, s, s' protected,
//                        or f_l·s² (flag 1),  or nothing (x = 0) out plain (a public key row)
//   lite_fhe_plain_add   out = c + pt                           c plain, pt protected, out plain
//   lite_fhe_plain_mul   out = c · pt                           as plain_add
//
// The plaintext of s, s', e, s² and m exists only in registers.

#include "common.cuh"
#include "lite_aes_xts.cuh"

// Must match rhea_cuda::lite::fhe::FheArgs (#[repr(C)]).
struct LiteFheArgs {
    u64 out;      // the result
    u64 x0;       // operands: see each kernel
    u64 x1;
    u64 x2;
    u64 x3;
    u64 factors;  // lite_fhe_key_row: per-limb u64 factor f_l (plain), or 0
    u64 moduli;   // const RheaModulus*, limb l uses moduli[l]
    u64 words;    // limbs · N (even)
    u32 log_n;    // N = 2^log_n
    u32 flags;    // lite_fhe_key_row: bit 0 = x is s² (x3 unused); lite_fhe_decrypt: bit 1 =
                  // the components are protected
};
static_assert(sizeof(LiteFheArgs) == 72, "LiteFheArgs: not the Rust size");
static_assert(RHEA_OFFSETOF(LiteFheArgs, factors) == 40, "LiteFheArgs::factors: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiteFheArgs, moduli) == 48, "LiteFheArgs::moduli: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiteFheArgs, words) == 56, "LiteFheArgs::words: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiteFheArgs, log_n) == 64, "LiteFheArgs::log_n: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiteFheArgs, flags) == 68, "LiteFheArgs::flags: not the Rust offset");

RHEA_INLINE ulonglong2 fhe_words(uint4 v) {
    return make_ulonglong2((u64)v.y << 32 | v.x, (u64)v.w << 32 | v.z);
}
RHEA_INLINE uint4 fhe_block(u64 lo, u64 hi) {
    return make_uint4((u32)lo, (u32)(lo >> 32), (u32)hi, (u32)(hi >> 32));
}
RHEA_INLINE const uint4* fhe_blocks(u64 p) { return reinterpret_cast<const uint4*>(p); }

#define FHE_PROLOGUE                       \
    __shared__ LiteTables T;               \
    pdl_trigger();                         \
    lite_load_tables(T);                   \
    pdl_wait();                            \
    const RheaModulus* mods = reinterpret_cast<const RheaModulus*>(A.moduli);

#define FHE_FOR_BLOCKS(k)                                                              \
    for (u64 k = blockIdx.x * (u64)blockDim.x + threadIdx.x; 2 * k < A.words;         \
         k += (u64)gridDim.x * blockDim.x)

// x0 = c0, x1 = c1, x2 = c2 (or 0), x3 = s; out protected; the c_i plain, or protected with
// flag 2 (rhea_cuda::lite::fhe::decrypt_protected, the all-data mode).
extern "C" __global__ void lite_fhe_decrypt(const LiteKeys K, const LiteFheArgs A) {
    FHE_PROLOGUE
    FHE_FOR_BLOCKS(k) {
        const RheaModulus m = load_modulus(mods, (u32)((2 * k) >> A.log_n));
        const uint4 rs = lite_ld4(fhe_blocks(A.x3) + k);
        const uint4 r0 = lite_ld4(fhe_blocks(A.x0) + k);
        const uint4 r1 = lite_ld4(fhe_blocks(A.x1) + k);
        const uint4 r2 = A.x2 ? lite_ld4(fhe_blocks(A.x2) + k) : make_uint4(0u, 0u, 0u, 0u);
        const ulonglong2 s = fhe_words(lite_decrypt_v4_loaded(T, K, fhe_blocks(A.x3) + k, rs));
        ulonglong2 c0 = fhe_words(r0), c1 = fhe_words(r1), c2 = fhe_words(r2);
        if (A.flags & 2u) {  // decrypt_protected: the components are protected too
            c0 = fhe_words(lite_decrypt_v4_loaded(T, K, fhe_blocks(A.x0) + k, r0));
            c1 = fhe_words(lite_decrypt_v4_loaded(T, K, fhe_blocks(A.x1) + k, r1));
            if (A.x2) c2 = fhe_words(lite_decrypt_v4_loaded(T, K, fhe_blocks(A.x2) + k, r2));
        }
        // Horner, as the unprotected path: ((c2·s + c1)·s + c0); the words are canonical
        // residues either way.
        u64 m0 = c1.x, m1 = c1.y;
        if (A.x2) {
            m0 = mod_mul_add(c2.x, s.x, c1.x, m);
            m1 = mod_mul_add(c2.y, s.y, c1.y, m);
        }
        m0 = mod_mul_add(m0, s.x, c0.x, m);
        m1 = mod_mul_add(m1, s.y, c0.y, m);
        lite_encrypt_v4(T, K, reinterpret_cast<uint4*>(A.out) + k, fhe_block(m0, m1));
    }
}

// x0 = a (plain), x1 = e, x2 = s, x3 = s' (or 0; unused with flag 1), all protected but a;
// out plain: e − a·s + f_l·x with x = s' (x3 ≠ 0), s² (flag 1) or no term.
extern "C" __global__ void lite_fhe_key_row(const LiteKeys K, const LiteFheArgs A) {
    FHE_PROLOGUE
    const bool square = A.flags & 1u;
    const bool from = square || A.x3 != 0;
    const u64* factors = reinterpret_cast<const u64*>(A.factors);
    FHE_FOR_BLOCKS(k) {
        const u32 limb = (u32)((2 * k) >> A.log_n);
        const RheaModulus m = load_modulus(mods, limb);
        const uint4 ra = lite_ld4(fhe_blocks(A.x0) + k);
        const uint4 re = lite_ld4(fhe_blocks(A.x1) + k);
        const uint4 rs = lite_ld4(fhe_blocks(A.x2) + k);
        const bool own_x = from && !square;
        const uint4 rx = own_x ? lite_ld4(fhe_blocks(A.x3) + k) : make_uint4(0u, 0u, 0u, 0u);
        const u64 f = from ? lite_ld(factors + limb) : 0;
        const ulonglong2 a = fhe_words(ra);
        const ulonglong2 e = fhe_words(lite_decrypt_v4_loaded(T, K, fhe_blocks(A.x1) + k, re));
        const ulonglong2 s = fhe_words(lite_decrypt_v4_loaded(T, K, fhe_blocks(A.x2) + k, rs));
        u64 b0 = mod_sub(e.x, mod_mul(a.x, s.x, m), m.value);
        u64 b1 = mod_sub(e.y, mod_mul(a.y, s.y, m), m.value);
        if (from) {
            ulonglong2 x;
            if (square) {
                x = make_ulonglong2(mod_mul(s.x, s.x, m), mod_mul(s.y, s.y, m));
            } else {
                x = fhe_words(lite_decrypt_v4_loaded(T, K, fhe_blocks(A.x3) + k, rx));
            }
            b0 = mod_mul_add(f, x.x, b0, m);
            b1 = mod_mul_add(f, x.y, b1, m);
        }
        store2(reinterpret_cast<u64*>(A.out) + 2 * k, make_ulonglong2(b0, b1));
    }
}

// x0 = c (plain), x1 = pt (protected); out plain (may be x0).
extern "C" __global__ void lite_fhe_plain_add(const LiteKeys K, const LiteFheArgs A) {
    FHE_PROLOGUE
    FHE_FOR_BLOCKS(k) {
        const RheaModulus m = load_modulus(mods, (u32)((2 * k) >> A.log_n));
        const uint4 rc = lite_ld4(fhe_blocks(A.x0) + k);
        const uint4 rp = lite_ld4(fhe_blocks(A.x1) + k);
        const ulonglong2 c = fhe_words(rc);
        const ulonglong2 p = fhe_words(lite_decrypt_v4_loaded(T, K, fhe_blocks(A.x1) + k, rp));
        store2(reinterpret_cast<u64*>(A.out) + 2 * k,
               make_ulonglong2(mod_add(c.x, p.x, m.value), mod_add(c.y, p.y, m.value)));
    }
}

// x0 = c (plain), x1 = pt (protected); out plain (may be x0).
extern "C" __global__ void lite_fhe_plain_mul(const LiteKeys K, const LiteFheArgs A) {
    FHE_PROLOGUE
    FHE_FOR_BLOCKS(k) {
        const RheaModulus m = load_modulus(mods, (u32)((2 * k) >> A.log_n));
        const uint4 rc = lite_ld4(fhe_blocks(A.x0) + k);
        const uint4 rp = lite_ld4(fhe_blocks(A.x1) + k);
        const ulonglong2 c = fhe_words(rc);
        const ulonglong2 p = fhe_words(lite_decrypt_v4_loaded(T, K, fhe_blocks(A.x1) + k, rp));
        store2(reinterpret_cast<u64*>(A.out) + 2 * k,
               make_ulonglong2(mod_mul(c.x, p.x, m), mod_mul(c.y, p.y, m)));
    }
}
