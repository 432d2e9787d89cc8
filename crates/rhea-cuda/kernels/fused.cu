// fused.cu: fused kernels of the rhea backend's key switching and rescaling, on operands given
// as separate buffers (no stacking copies).
//
// fused_ks_inner_product: out_c[i] = [add_c[i - add_first] +] sum_d digit_d[i] * key_{d,c}[kl(i)]
//   mod p_i (c = 0, 1; the addend only for i >= add_first), the digits [width][n] each
//   (width = level + K) and the optional addends [width - add_first][n], the key
//   polynomials [L + K][n] each (full level; kl(i) = i for Q limbs, L + (i - level) for the P
//   limbs). Twin: keyswitch.cu (same accumulation: exact 128-bit sums folded every 63 digits,
//   one Barrett reduction), and rhea's CPU inner_product then add.
// fused_sub_mul_scalar: y[i] = (x[i] - y[i]) * w_i mod q_i (Shoup), x read on its first limbs.
// fused_rescale_lift: out[i] = [centred(t)]_{q_i} for a canonical limb t mod q_last.
// fused_moddown_rows: t[r] = [t[r] +] (x[r] - y[r]) * w mod q for a few single limbs modulo one
//   q (the last limb of a ModDown in coefficient form, for the merged ModDown-rescale).
// fused_tensor: (d0, d1, d2) = (a0 b0, a0 b1 + a1 b0, a1 b1) mod q_i, the ciphertext product
//   before relinearisation, one pass over the four inputs (twin: mul, mul, mul_add, mul).
// fused_sums_of_products: out_{s,c}[i] = [out_{s,c}[i] +] sum_t left_{s,t}[i] * right_{t,c}[i]
//   mod q_i for several sums s sharing the right operands (the giant steps of a linear
//   transform over its baby steps): each right operand is read once for all the sums. Exact
//   128-bit sums, one Barrett reduction (twin: rhea's CPU sum_of_products per sum).
//
// Every kernel here is launched with programmatic dependent launch (rhea_cuda::launch):
// pdl_trigger() first, then at most the moduli (a host-uploaded table) before pdl_wait(), and
// every operand buffer (which earlier kernels may write) after it with ld_dep / ld_dep2.

#include "common.cuh"

#define FUSED_MAX_DIGITS 16

// Must match rhea_cuda::fused::KsPtrArgs (#[repr(C)]).
struct KsPtrArgs {
    u64 n;
    u64* out0;
    u64* out1;
    const RheaModulus* moduli;  // full Q u P list
    const u64* add0;            // [width - add_first][n] added to out0 (canonical), or null
    const u64* add1;            // ... to out1
    u32 count;
    u32 level;
    u32 q_full;
    u32 add_first;              // the first limb with an addend (its limb 0); 0: every limb
    const u64* digits[FUSED_MAX_DIGITS];
    const u64* key_b[FUSED_MAX_DIGITS];
    const u64* key_a[FUSED_MAX_DIGITS];
};
// The layout of the Rust twin (`src/fused.rs`), asserted there too: keep both in step.
static_assert(sizeof(KsPtrArgs) == 448, "KsPtrArgs: not the Rust size");
static_assert(alignof(KsPtrArgs) == 8, "KsPtrArgs: not the Rust alignment");
static_assert(RHEA_OFFSETOF(KsPtrArgs, n) == 0, "KsPtrArgs::n: not the Rust offset");
static_assert(RHEA_OFFSETOF(KsPtrArgs, out0) == 8, "KsPtrArgs::out0: not the Rust offset");
static_assert(RHEA_OFFSETOF(KsPtrArgs, out1) == 16, "KsPtrArgs::out1: not the Rust offset");
static_assert(RHEA_OFFSETOF(KsPtrArgs, moduli) == 24, "KsPtrArgs::moduli: not the Rust offset");
static_assert(RHEA_OFFSETOF(KsPtrArgs, add0) == 32, "KsPtrArgs::add0: not the Rust offset");
static_assert(RHEA_OFFSETOF(KsPtrArgs, add1) == 40, "KsPtrArgs::add1: not the Rust offset");
static_assert(RHEA_OFFSETOF(KsPtrArgs, count) == 48, "KsPtrArgs::count: not the Rust offset");
static_assert(RHEA_OFFSETOF(KsPtrArgs, level) == 52, "KsPtrArgs::level: not the Rust offset");
static_assert(RHEA_OFFSETOF(KsPtrArgs, q_full) == 56, "KsPtrArgs::q_full: not the Rust offset");
static_assert(RHEA_OFFSETOF(KsPtrArgs, add_first) == 60, "KsPtrArgs::add_first: not the Rust offset");
static_assert(RHEA_OFFSETOF(KsPtrArgs, digits) == 64, "KsPtrArgs::digits: not the Rust offset");
static_assert(RHEA_OFFSETOF(KsPtrArgs, key_b) == 192, "KsPtrArgs::key_b: not the Rust offset");
static_assert(RHEA_OFFSETOF(KsPtrArgs, key_a) == 320, "KsPtrArgs::key_a: not the Rust offset");

extern "C" __global__ void __launch_bounds__(256) fused_ks_inner_product(const KsPtrArgs A) { RHEA_TL
    pdl_trigger();
    const u64 k = ((u64)blockIdx.x * blockDim.x + threadIdx.x) * 2;
    if (k >= A.n) return;
    const u32 i = blockIdx.y;
    const u32 kl = i < A.level ? i : A.q_full + (i - A.level);
    const RheaModulus m = load_modulus(A.moduli, kl);
    const u64 xo = (u64)i * A.n + k;
    const u64 ko = (u64)kl * A.n + k;
    pdl_wait();
    U128 acc0[2] = {{0ull, 0ull}, {0ull, 0ull}};
    U128 acc1[2] = {{0ull, 0ull}, {0ull, 0ull}};
    // The addends enter as the sums' starting values (< 2^61: 16 products < 2^122 on top fit).
    const u64 ao = (u64)(i - A.add_first) * A.n + k;
    if (A.add0 != nullptr && i >= A.add_first) {
        const ulonglong2 v = ld_dep2(A.add0 + ao);
        acc0[0].lo = v.x;
        acc0[1].lo = v.y;
    }
    if (A.add1 != nullptr && i >= A.add_first) {
        const ulonglong2 v = ld_dep2(A.add1 + ao);
        acc1[0].lo = v.x;
        acc1[1].lo = v.y;
    }
#pragma unroll
    for (u32 d = 0; d < FUSED_MAX_DIGITS; ++d) {
        if (d < A.count) {
            const ulonglong2 xv = ld_dep2(A.digits[d] + xo);
            // The key is streamed: first out of L2 (ld_once2).
            const ulonglong2 bv = ld_once2(A.key_b[d] + ko);
            const ulonglong2 av = ld_once2(A.key_a[d] + ko);
            acc0[0] = add_wide(acc0[0], mul_wide(xv.x, bv.x));
            acc0[1] = add_wide(acc0[1], mul_wide(xv.y, bv.y));
            acc1[0] = add_wide(acc1[0], mul_wide(xv.x, av.x));
            acc1[1] = add_wide(acc1[1], mul_wide(xv.y, av.y));
        }
    }
    store2(A.out0 + xo, make_ulonglong2(barrett_reduce(acc0[0], m), barrett_reduce(acc0[1], m)));
    store2(A.out1 + xo, make_ulonglong2(barrett_reduce(acc1[0], m), barrett_reduce(acc1[1], m)));
}

#define MSOP_MAX_TERMS 16
#define MSOP_MAX_SUMS 4

// Must match rhea_cuda::sums_of_products::SumsArgs (#[repr(C)]).
struct SumsArgs {
    u64 n;
    const RheaModulus* moduli;  // [rows], row i's modulus
    u32 terms;                  // right operands (1..=16)
    u32 sums;                   // sums (1..=4)
    u32 accumulate;             // 1: the sums start from the outputs' words (canonical)
    u32 pad;
    const u64* right0[MSOP_MAX_TERMS];
    const u64* right1[MSOP_MAX_TERMS];
    const u64* left[MSOP_MAX_SUMS][MSOP_MAX_TERMS];  // null: the term is not in that sum
    u64* out0[MSOP_MAX_SUMS];
    u64* out1[MSOP_MAX_SUMS];
};
static_assert(sizeof(SumsArgs) == 864, "SumsArgs: not the Rust size");
static_assert(alignof(SumsArgs) == 8, "SumsArgs: not the Rust alignment");
static_assert(RHEA_OFFSETOF(SumsArgs, terms) == 16, "SumsArgs::terms: not the Rust offset");
static_assert(RHEA_OFFSETOF(SumsArgs, right0) == 32, "SumsArgs::right0: not the Rust offset");
static_assert(RHEA_OFFSETOF(SumsArgs, right1) == 160, "SumsArgs::right1: not the Rust offset");
static_assert(RHEA_OFFSETOF(SumsArgs, left) == 288, "SumsArgs::left: not the Rust offset");
static_assert(RHEA_OFFSETOF(SumsArgs, out0) == 800, "SumsArgs::out0: not the Rust offset");
static_assert(RHEA_OFFSETOF(SumsArgs, out1) == 832, "SumsArgs::out1: not the Rust offset");

// Two coefficients a thread, as fused_ks_inner_product. A term's loads (its right operand and
// every sum's left operand, predicated) are issued back to back before any product, so that
// each thread keeps several loads in flight; the right operand is read once for all the sums,
// each left operand once (streamed: ld_once).
extern "C" __global__ void __launch_bounds__(256) fused_sums_of_products(const SumsArgs A) { RHEA_TL
    pdl_trigger();
    const u64 k = ((u64)blockIdx.x * blockDim.x + threadIdx.x) * 2;
    if (k >= A.n) return;
    const u32 i = blockIdx.y;
    const RheaModulus m = load_modulus(A.moduli, i);
    const u64 o = (u64)i * A.n + k;
    pdl_wait();
    U128 acc0[MSOP_MAX_SUMS][2];
    U128 acc1[MSOP_MAX_SUMS][2];
#pragma unroll
    for (u32 s = 0; s < MSOP_MAX_SUMS; ++s) {
        const bool on = A.accumulate != 0 && s < A.sums;
        // The outputs' words (< 2^61) as starting values: 16 products < 2^122 on top fit.
        const ulonglong2 a0 = ld_dep2_if(A.out0[s] + o, on);
        const ulonglong2 a1 = ld_dep2_if(A.out1[s] + o, on);
        acc0[s][0] = {a0.x, 0ull};
        acc0[s][1] = {a0.y, 0ull};
        acc1[s][0] = {a1.x, 0ull};
        acc1[s][1] = {a1.y, 0ull};
    }
    // Both loops unrolled: every index into the parameter struct is a constant (a run-time
    // index would copy the struct to local memory).
#pragma unroll
    for (u32 t = 0; t < MSOP_MAX_TERMS; ++t) {
        if (t < A.terms) {
            const ulonglong2 r0 = ld_dep2(A.right0[t] + o);
            const ulonglong2 r1 = ld_dep2(A.right1[t] + o);
            ulonglong2 x[MSOP_MAX_SUMS];
#pragma unroll
            for (u32 s = 0; s < MSOP_MAX_SUMS; ++s) {
                const u64* l = A.left[s][t];
                x[s] = ld_once2_if(l + o, s < A.sums && l != nullptr);
            }
#pragma unroll
            for (u32 s = 0; s < MSOP_MAX_SUMS; ++s) {
                // An absent term loaded zeros: its products add nothing.
                acc0[s][0] = add_wide(acc0[s][0], mul_wide(x[s].x, r0.x));
                acc0[s][1] = add_wide(acc0[s][1], mul_wide(x[s].y, r0.y));
                acc1[s][0] = add_wide(acc1[s][0], mul_wide(x[s].x, r1.x));
                acc1[s][1] = add_wide(acc1[s][1], mul_wide(x[s].y, r1.y));
            }
        }
    }
#pragma unroll
    for (u32 s = 0; s < MSOP_MAX_SUMS; ++s) {
        if (s < A.sums) {
            store2(A.out0[s] + o, make_ulonglong2(barrett_reduce(acc0[s][0], m),
                                                  barrett_reduce(acc0[s][1], m)));
            store2(A.out1[s] + o, make_ulonglong2(barrett_reduce(acc1[s][0], m),
                                                  barrett_reduce(acc1[s][1], m)));
        }
    }
}

// Must match rhea_cuda::fused::SubMulArgs (#[repr(C)]).
struct SubMulArgs {
    u64 n;
    u64* y;
    const u64* x;
    const u64* w;  // [limbs][2]: (w_i, shoup(w_i))
    const RheaModulus* moduli;
    u32 limbs;
    u32 mod_offset;
};
// The layout of the Rust twin (`src/fused.rs`), asserted there too: keep both in step.
static_assert(sizeof(SubMulArgs) == 48, "SubMulArgs: not the Rust size");
static_assert(alignof(SubMulArgs) == 8, "SubMulArgs: not the Rust alignment");
static_assert(RHEA_OFFSETOF(SubMulArgs, n) == 0, "SubMulArgs::n: not the Rust offset");
static_assert(RHEA_OFFSETOF(SubMulArgs, y) == 8, "SubMulArgs::y: not the Rust offset");
static_assert(RHEA_OFFSETOF(SubMulArgs, x) == 16, "SubMulArgs::x: not the Rust offset");
static_assert(RHEA_OFFSETOF(SubMulArgs, w) == 24, "SubMulArgs::w: not the Rust offset");
static_assert(RHEA_OFFSETOF(SubMulArgs, moduli) == 32, "SubMulArgs::moduli: not the Rust offset");
static_assert(RHEA_OFFSETOF(SubMulArgs, limbs) == 40, "SubMulArgs::limbs: not the Rust offset");
static_assert(RHEA_OFFSETOF(SubMulArgs, mod_offset) == 44, "SubMulArgs::mod_offset: not the Rust offset");

// The scalar table w is the caller's buffer (not necessarily a host upload): read after the wait.
extern "C" __global__ void __launch_bounds__(256) fused_sub_mul_scalar(const SubMulArgs A) { RHEA_TL
    pdl_trigger();
    const u64 k = ((u64)blockIdx.x * blockDim.x + threadIdx.x) * 2;
    if (k >= A.n) return;
    const u32 i = blockIdx.y;
    const u64 q = load_modulus(A.moduli, A.mod_offset + i).value;
    pdl_wait();
    const u64 w = ld_dep(A.w + 2 * i), ws = ld_dep(A.w + 2 * i + 1);
    const u64 o = (u64)i * A.n + k;
    const ulonglong2 xv = ld_dep2(A.x + o);
    const ulonglong2 yv = ld_dep2(A.y + o);
    store2(A.y + o, make_ulonglong2(shoup_mul(mod_sub(xv.x, yv.x, q), w, ws, q),
                                    shoup_mul(mod_sub(xv.y, yv.y, q), w, ws, q)));
}

// Must match rhea_cuda::fused::LiftArgs (#[repr(C)]).
struct LiftArgs {
    u64 n;
    u64* out;
    const u64* t;
    const RheaModulus* moduli;
    u64 q_last;
    u32 limbs;
    u32 pad;
};
// The layout of the Rust twin (`src/fused.rs`), asserted there too: keep both in step.
static_assert(sizeof(LiftArgs) == 48, "LiftArgs: not the Rust size");
static_assert(alignof(LiftArgs) == 8, "LiftArgs: not the Rust alignment");
static_assert(RHEA_OFFSETOF(LiftArgs, n) == 0, "LiftArgs::n: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiftArgs, out) == 8, "LiftArgs::out: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiftArgs, t) == 16, "LiftArgs::t: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiftArgs, moduli) == 24, "LiftArgs::moduli: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiftArgs, q_last) == 32, "LiftArgs::q_last: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiftArgs, limbs) == 40, "LiftArgs::limbs: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiftArgs, pad) == 44, "LiftArgs::pad: not the Rust offset");

RHEA_INLINE u64 lift_centred(u64 t, u64 q_last, const RheaModulus& m) {
    if (t <= (q_last >> 1)) return reduce_u64(t, m);
    const u64 r = reduce_u64(q_last - t, m);
    return r == 0 ? 0 : m.value - r;
}

extern "C" __global__ void __launch_bounds__(256) fused_rescale_lift(const LiftArgs A) { RHEA_TL
    pdl_trigger();
    const u64 k = ((u64)blockIdx.x * blockDim.x + threadIdx.x) * 2;
    if (k >= A.n) return;
    const u32 i = blockIdx.y;
    const RheaModulus m = load_modulus(A.moduli, i);
    pdl_wait();
    const ulonglong2 tv = ld_dep2(A.t + k);
    store2(A.out + (u64)i * A.n + k,
           make_ulonglong2(lift_centred(tv.x, A.q_last, m), lift_centred(tv.y, A.q_last, m)));
}

// fused_rescale_lift_many: fused_rescale_lift of up to 16 limbs at once (blockIdx.z: which),
// each into its own buffer: compact plaintexts expanded in one launch.
// Must match rhea_cuda::fused::LiftManyArgs (#[repr(C)]).
#define RHEA_MAX_LIFTS 16
struct LiftManyArgs {
    u64 n;
    const RheaModulus* moduli;
    u64 q_last;
    u32 limbs;
    u32 count;
    u64* out[RHEA_MAX_LIFTS];
    const u64* t[RHEA_MAX_LIFTS];
};
static_assert(sizeof(LiftManyArgs) == 288, "LiftManyArgs: not the Rust size");
static_assert(alignof(LiftManyArgs) == 8, "LiftManyArgs: not the Rust alignment");
static_assert(RHEA_OFFSETOF(LiftManyArgs, q_last) == 16, "LiftManyArgs::q_last: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiftManyArgs, count) == 28, "LiftManyArgs::count: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiftManyArgs, out) == 32, "LiftManyArgs::out: not the Rust offset");
static_assert(RHEA_OFFSETOF(LiftManyArgs, t) == 160, "LiftManyArgs::t: not the Rust offset");

extern "C" __global__ void __launch_bounds__(256) fused_rescale_lift_many(const LiftManyArgs A) { RHEA_TL
    pdl_trigger();
    const u64 k = ((u64)blockIdx.x * blockDim.x + threadIdx.x) * 2;
    const u32 j = blockIdx.z;
    if (k >= A.n || j >= A.count) return;
    const u32 i = blockIdx.y;
    const RheaModulus m = load_modulus(A.moduli, i);
    pdl_wait();
    const ulonglong2 tv = ld_dep2(A.t[j] + k);
    store2(A.out[j] + (u64)i * A.n + k,
           make_ulonglong2(lift_centred(tv.x, A.q_last, m), lift_centred(tv.y, A.q_last, m)));
}

// Must match rhea_cuda::fused::TensorArgs (#[repr(C)]).
struct TensorArgs {
    u64 n;
    const u64* a0;
    const u64* a1;
    const u64* b0;
    const u64* b1;
    u64* d0;
    u64* d1;
    u64* d2;
    const RheaModulus* moduli;
};
// The layout of the Rust twin (`src/fused.rs`), asserted there too: keep both in step.
static_assert(sizeof(TensorArgs) == 72, "TensorArgs: not the Rust size");
static_assert(alignof(TensorArgs) == 8, "TensorArgs: not the Rust alignment");
static_assert(RHEA_OFFSETOF(TensorArgs, n) == 0, "TensorArgs::n: not the Rust offset");
static_assert(RHEA_OFFSETOF(TensorArgs, a0) == 8, "TensorArgs::a0: not the Rust offset");
static_assert(RHEA_OFFSETOF(TensorArgs, a1) == 16, "TensorArgs::a1: not the Rust offset");
static_assert(RHEA_OFFSETOF(TensorArgs, b0) == 24, "TensorArgs::b0: not the Rust offset");
static_assert(RHEA_OFFSETOF(TensorArgs, b1) == 32, "TensorArgs::b1: not the Rust offset");
static_assert(RHEA_OFFSETOF(TensorArgs, d0) == 40, "TensorArgs::d0: not the Rust offset");
static_assert(RHEA_OFFSETOF(TensorArgs, d1) == 48, "TensorArgs::d1: not the Rust offset");
static_assert(RHEA_OFFSETOF(TensorArgs, d2) == 56, "TensorArgs::d2: not the Rust offset");
static_assert(RHEA_OFFSETOF(TensorArgs, moduli) == 64, "TensorArgs::moduli: not the Rust offset");

extern "C" __global__ void __launch_bounds__(256) fused_tensor(const TensorArgs A) { RHEA_TL
    pdl_trigger();
    const u64 k = ((u64)blockIdx.x * blockDim.x + threadIdx.x) * 2;
    if (k >= A.n) return;
    const u32 i = blockIdx.y;
    const RheaModulus m = load_modulus(A.moduli, i);
    const u64 o = (u64)i * A.n + k;
    pdl_wait();
    // The factors are read once here: first out of L2 (ld_once2).
    const ulonglong2 a0 = ld_once2(A.a0 + o);
    const ulonglong2 a1 = ld_once2(A.a1 + o);
    const ulonglong2 b0 = ld_once2(A.b0 + o);
    const ulonglong2 b1 = ld_once2(A.b1 + o);
    const ulonglong2 r0 = make_ulonglong2(mod_mul(a0.x, b0.x, m), mod_mul(a0.y, b0.y, m));
    // a0 b1 + a1 b0 < 2 q^2 < 2^122: one exact 128-bit sum, one reduction.
    const U128 cx = add_wide(mul_wide(a0.x, b1.x), mul_wide(a1.x, b0.x));
    const U128 cy = add_wide(mul_wide(a0.y, b1.y), mul_wide(a1.y, b0.y));
    const ulonglong2 r1 = make_ulonglong2(barrett_reduce(cx, m), barrett_reduce(cy, m));
    // d0 and d1 are read only by the relinearisation's last kernel, after the key switching of
    // d2 (which reads d2 right away): evict-first.
    store2_late(A.d0 + o, r0);
    store2_late(A.d1 + o, r1);
    store2(A.d2 + o, make_ulonglong2(mod_mul(a1.x, b1.x, m), mod_mul(a1.y, b1.y, m)));
}

// Must match rhea_cuda::fused::ModDownRowsArgs (#[repr(C)]).
#define FUSED_MAX_ROWS 4
struct ModDownRowsArgs {
    u64 n;
    u64 q;
    u64 w;
    u64 w_shoup;
    u32 rows;
    u32 add_mask;  // bit r: t[r] is added (else t[r] is only written)
    u64* t[FUSED_MAX_ROWS];
    const u64* x[FUSED_MAX_ROWS];
    const u64* y[FUSED_MAX_ROWS];
};
// The layout of the Rust twin (`src/fused.rs`), asserted there too: keep both in step.
static_assert(sizeof(ModDownRowsArgs) == 136, "ModDownRowsArgs: not the Rust size");
static_assert(alignof(ModDownRowsArgs) == 8, "ModDownRowsArgs: not the Rust alignment");
static_assert(RHEA_OFFSETOF(ModDownRowsArgs, n) == 0, "ModDownRowsArgs::n: not the Rust offset");
static_assert(RHEA_OFFSETOF(ModDownRowsArgs, q) == 8, "ModDownRowsArgs::q: not the Rust offset");
static_assert(RHEA_OFFSETOF(ModDownRowsArgs, w) == 16, "ModDownRowsArgs::w: not the Rust offset");
static_assert(RHEA_OFFSETOF(ModDownRowsArgs, w_shoup) == 24, "ModDownRowsArgs::w_shoup: not the Rust offset");
static_assert(RHEA_OFFSETOF(ModDownRowsArgs, rows) == 32, "ModDownRowsArgs::rows: not the Rust offset");
static_assert(RHEA_OFFSETOF(ModDownRowsArgs, add_mask) == 36, "ModDownRowsArgs::add_mask: not the Rust offset");
static_assert(RHEA_OFFSETOF(ModDownRowsArgs, t) == 40, "ModDownRowsArgs::t: not the Rust offset");
static_assert(RHEA_OFFSETOF(ModDownRowsArgs, x) == 72, "ModDownRowsArgs::x: not the Rust offset");
static_assert(RHEA_OFFSETOF(ModDownRowsArgs, y) == 104, "ModDownRowsArgs::y: not the Rust offset");

extern "C" __global__ void __launch_bounds__(256) fused_moddown_rows(const ModDownRowsArgs A) { RHEA_TL
    pdl_trigger();
    const u64 k = ((u64)blockIdx.x * blockDim.x + threadIdx.x) * 2;
    if (k >= A.n) return;
    const u32 r = blockIdx.y;
    const u64 q = A.q;
    pdl_wait();
    const ulonglong2 xv = ld_dep2(A.x[r] + k);
    const ulonglong2 yv = ld_dep2(A.y[r] + k);
    u64 a = shoup_mul(mod_sub(xv.x, yv.x, q), A.w, A.w_shoup, q);
    u64 b = shoup_mul(mod_sub(xv.y, yv.y, q), A.w, A.w_shoup, q);
    if ((A.add_mask >> r) & 1u) {
        const ulonglong2 tv = ld_dep2(A.t[r] + k);
        a = mod_add(tv.x, a, q);
        b = mod_add(tv.y, b, q);
    }
    store2(A.t[r] + k, make_ulonglong2(a, b));
}
