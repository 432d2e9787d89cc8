// keyswitch.cu: the fused key-switching inner product (HE-Booster's FMAC, Phantom's
// key_switch_inner_prod_c2_and_evk): both output polynomials of sum_d digit_d * key_{d,c}
// in ONE pass over all digits, NTT domain.
//
// Twin: rhea's CPU key switching (crates/rhea/src/backend/cpu.rs inner_product): for every
// output word, the exact sum over d of digit_d[i][k] * key_{d,c}[kl][k] reduced once modulo
// the limb's prime -- canonical, so any exact accumulation agrees word for word.
//
// Layouts (u64 words, every input canonical, i.e. below its limb's prime):
//   digits [count][width][n]          width = level + K (Q limbs 0..level, then the K P limbs)
//   key    [parts][2][full][n]        full = L + K (the full-level key; parts >= count)
//   out    [2][width][n]              out[c] = sum_d digits[d] * key[d][c]
// Output limb i uses key limb kl = i for i < level and L + (i - level) for the P limbs, and
// the prime moduli[kl] (the full Q u P list).
//
// One thread per 2 consecutive coefficients (16-byte loads) of one output limb (blockIdx.y).
// Two 128-bit accumulators per coefficient; products < 2^122, so 63 of them plus a folded
// value < 2^61 fit: after every 63 digits the accumulators are folded (Barrett), and each is
// reduced once (Barrett) at the end. The loads of KS_U digits are issued before their products.
//
// Launched with programmatic dependent launch (rhea_cuda::launch): pdl_trigger() first, the
// limb's modulus (a host-uploaded table) before pdl_wait(), the digits and the key (which earlier
// kernels may write) after it with ld_dep2.

#include "common.cuh"

#define KS_U 4

// Must match rhea_cuda::keyswitch::KsArgs (#[repr(C)]).
struct KsArgs {
    u64 n;
    const u64* digits;
    const u64* key;
    u64* out;
    const RheaModulus* moduli;  // full Q u P, L + K records
    u32 count;                  // digits summed
    u32 width;                  // level + K
    u32 level;                  // active Q limbs
    u32 q_full;                 // L
    u32 full;                   // L + K
    u32 pad;
};

extern "C" __global__ void __launch_bounds__(256) keyswitch_inner_product(const KsArgs A) { RHEA_TL
    pdl_trigger();
    const u64 k = ((u64)blockIdx.x * blockDim.x + threadIdx.x) * 2;
    if (k >= A.n) return;
    const u32 i = blockIdx.y;
    const u32 kl = i < A.level ? i : A.q_full + (i - A.level);
    const RheaModulus m = load_modulus(A.moduli, kl);
    pdl_wait();
    const u64 digit_stride = (u64)A.width * A.n;  // words per digit
    const u64 key_stride = (u64)A.full * A.n;     // words per key component
    const u64* x = A.digits + (u64)i * A.n + k;
    const u64* kb = A.key + (u64)kl * A.n + k;     // component 0 of part d at + 2d*key_stride
    U128 acc0[2] = {{0ull, 0ull}, {0ull, 0ull}};
    U128 acc1[2] = {{0ull, 0ull}, {0ull, 0ull}};
    for (u32 d0 = 0; d0 < A.count; d0 += KS_U) {
        ulonglong2 xv[KS_U], bv[KS_U], av[KS_U];
#pragma unroll
        for (int u = 0; u < KS_U; ++u) {
            const u32 d = d0 + u;
            if (d < A.count) {
                xv[u] = ld_dep2(x + d * digit_stride);
                bv[u] = ld_dep2(kb + 2 * d * key_stride);
                av[u] = ld_dep2(kb + (2 * d + 1) * key_stride);
            }
        }
#pragma unroll
        for (int u = 0; u < KS_U; ++u) {
            const u32 d = d0 + u;
            if (d < A.count) {
                acc0[0] = add_wide(acc0[0], mul_wide(xv[u].x, bv[u].x));
                acc0[1] = add_wide(acc0[1], mul_wide(xv[u].y, bv[u].y));
                acc1[0] = add_wide(acc1[0], mul_wide(xv[u].x, av[u].x));
                acc1[1] = add_wide(acc1[1], mul_wide(xv[u].y, av[u].y));
                if ((d + 1) % 63u == 0 && d + 1 < A.count) {
#pragma unroll
                    for (int c = 0; c < 2; ++c) {
                        acc0[c] = U128{barrett_reduce(acc0[c], m), 0ull};
                        acc1[c] = U128{barrett_reduce(acc1[c], m), 0ull};
                    }
                }
            }
        }
    }
    u64* o = A.out + (u64)i * A.n + k;
    store2(o, make_ulonglong2(barrett_reduce(acc0[0], m), barrett_reduce(acc0[1], m)));
    store2(o + digit_stride,
           make_ulonglong2(barrett_reduce(acc1[0], m), barrett_reduce(acc1[1], m)));
}
