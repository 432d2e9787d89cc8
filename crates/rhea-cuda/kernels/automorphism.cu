// automorphism.cu: the Galois automorphism X -> X^g (g odd, mod 2N) on [poly][limb][N]
// buffers, by index arithmetic (no permutation tables).
//
// NTT domain (rhea_math::ntt layout: entry i holds a(psi^(2*brv(i)+1)), bit-reversed
// evaluation order): (a o sigma_g)(psi^e) = a(psi^(e*g)), so
//     out[i] = in[j],  j = brv(((2*brv(i) + 1) * g mod 2N - 1) / 2).
// A pure permutation, the same for every limb: each thread computes j once and moves that
// word for ROWS_PER_BLOCK rows (limbs of polynomials).
//
// Coefficient domain: a(X^g) = sum_i a_i X^(i*g mod 2N), with X^N = -1. As a gather over the
// output index k: i = k * g^{-1} mod 2N; out[k] = in[i] when i < N, else -in[i - N] mod q.
//
// Twins: rhea_math::ntt (forward transform of the coefficient-domain automorphism) and the
// host functions in rhea_cuda::automorphism::host.
//
// Launched with programmatic dependent launch (rhea_cuda::launch): pdl_trigger() first, the
// index arithmetic before pdl_wait(), every memory access after it (input rows with ld_dep).

#include "common.cuh"

#define AUTO_ROWS_PER_BLOCK 4

// Must match rhea_cuda::automorphism::AutoArgs (#[repr(C)]).
struct AutoArgs {
    u64 n;                      // ring degree, a power of two
    u64 g;                      // Galois element mod 2N (NTT kernel), or its inverse (coeff)
    const u64* input;           // row r (= poly * limbs + limb) at input + r * n
    u64* out;
    const RheaModulus* moduli;  // limb l uses moduli[mod_offset + l]
    u32 log_n;
    u32 rows;                   // polys * limbs
    u32 limbs;
    u32 mod_offset;
};
// The layout of the Rust twin (`src/automorphism.rs`), asserted there too: keep both in step.
static_assert(sizeof(AutoArgs) == 56, "AutoArgs: not the Rust size");
static_assert(alignof(AutoArgs) == 8, "AutoArgs: not the Rust alignment");
static_assert(RHEA_OFFSETOF(AutoArgs, n) == 0, "AutoArgs::n: not the Rust offset");
static_assert(RHEA_OFFSETOF(AutoArgs, g) == 8, "AutoArgs::g: not the Rust offset");
static_assert(RHEA_OFFSETOF(AutoArgs, input) == 16, "AutoArgs::input: not the Rust offset");
static_assert(RHEA_OFFSETOF(AutoArgs, out) == 24, "AutoArgs::out: not the Rust offset");
static_assert(RHEA_OFFSETOF(AutoArgs, moduli) == 32, "AutoArgs::moduli: not the Rust offset");
static_assert(RHEA_OFFSETOF(AutoArgs, log_n) == 40, "AutoArgs::log_n: not the Rust offset");
static_assert(RHEA_OFFSETOF(AutoArgs, rows) == 44, "AutoArgs::rows: not the Rust offset");
static_assert(RHEA_OFFSETOF(AutoArgs, limbs) == 48, "AutoArgs::limbs: not the Rust offset");
static_assert(RHEA_OFFSETOF(AutoArgs, mod_offset) == 52, "AutoArgs::mod_offset: not the Rust offset");

RHEA_INLINE u64 bitrev(u64 i, u32 log_n) { return log_n == 0 ? 0 : __brevll(i) >> (64 - log_n); }

extern "C" __global__ void automorphism_ntt(const AutoArgs A) { RHEA_TL
    pdl_trigger();
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= A.n) return;
    const u64 mask = 2 * A.n - 1;
    const u64 e = ((2 * bitrev(i, A.log_n) + 1) * A.g) & mask;
    const u64 j = bitrev((e - 1) >> 1, A.log_n);
    const u32 r0 = blockIdx.y * AUTO_ROWS_PER_BLOCK;
    pdl_wait();
#pragma unroll
    for (u32 r = 0; r < AUTO_ROWS_PER_BLOCK; ++r) {
        if (r0 + r < A.rows) {
            const u64 base = (u64)(r0 + r) * A.n;
            A.out[base + i] = ld_dep(A.input + base + j);
        }
    }
}

extern "C" __global__ void automorphism_coeff(const AutoArgs A) { RHEA_TL
    pdl_trigger();
    const u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= A.n) return;
    const u64 mask = 2 * A.n - 1;
    const u64 src = (k * A.g) & mask;  // A.g holds g^{-1} mod 2N
    const bool negate = src >= A.n;
    const u64 i = negate ? src - A.n : src;
    const u32 r0 = blockIdx.y * AUTO_ROWS_PER_BLOCK;
    pdl_wait();
#pragma unroll
    for (u32 r = 0; r < AUTO_ROWS_PER_BLOCK; ++r) {
        const u32 row = r0 + r;
        if (row < A.rows) {
            const u64 base = (u64)row * A.n;
            const u64 v = ld_dep(A.input + base + i);
            const u64 q = A.moduli[A.mod_offset + row % A.limbs].value;
            A.out[base + k] = negate ? mod_neg(v, q) : v;
        }
    }
}
