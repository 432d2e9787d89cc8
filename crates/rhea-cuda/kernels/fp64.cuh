// fp64.cuh: modular arithmetic in IEEE-754 doubles, for primes q < 2^F64_MAX_Q_BITS (46).
//
// Twin: rhea_cuda::fp64 (crates/rhea-cuda/src/fp64.rs), the same operations in Rust's f64 (whose
// mul_add is the same correctly rounded fused multiply-add as the device's DFMA), where the
// bounds below are tested at their limits.
//
// A value is an integer held exactly in a double, signed, |v| < 2^50; residues are congruence
// classes, not canonical words, until the caller reduces them. The products need no 64-bit
// integer multiplies: the FP64 pipe does them in 6 operations per modular product against ~12
// integer ones (a forward butterfly in 8 against ~23), with no conditional subtractions, since
// a signed value may grow by 0.625 q per forward stage and stay exact for all 17 stages of
// N <= 2^17 from |v| < 1.75 q.
//
// Every operation goes through the _rn intrinsics, so that nvcc/NVRTC neither contracts a product
// into an FMA nor reorders the exact two-product below.
//
//   f64_round_mul(a, b)          rint(a * b), the product unrounded       |a * b| < 2^51
//   f64_mulmod(y, w, wq, q)      t = y * w mod q, |t| <= 0.625 q          |y| < 2^50, 0 <= w < q,
//                                (0.75 q for wq = fl(w fl(1 / q)))       wq = fl(w / q)
//   f64_reduce(v, qinv, q)       t = v mod q, |t| <= q/2 + 1              |v| < 2^51, qinv = fl(1/q)
//   f64_from_word(a), f64_to_word(v)   u64 <-> double, exact              0 <= a, v < 2^52
//
// Why f64_mulmod is exact: k = rint(y * wq) with y * wq = y w / q (1 + e), |e| <= 2^-53, so
// |k - y w / q| <= 1/2 + 2^50 * 2^-53 and |y w - k q| <= 0.625 q (with |e| <= 2^-52, two
// roundings, 0.75 q). h = fl(y w) is an integer with |h - y w| <= ulp(h) / 2 <= 2^43
// (|y w| < 2^96); fma(-k, q, h) = h - k q exactly, an integer
// below 2^53; l = fma(y, w, -h) = y w - h exactly (the two-product); their sum y w - k q is an
// integer of magnitude <= 0.625 q < 2^53: exact.

#pragma once

#include "common.cuh"

#define F64_MAX_Q_BITS 46
// 1.5 * 2^52: adding it to |x| < 2^51 rounds x to the nearest integer (ties to even).
#define F64_ROUND_MAGIC 6755399441055744.0
// 2^52: a double in [2^52, 2^53) has the integer below 2^52 it holds in its mantissa bits.
#define F64_TWO_52 4503599627370496.0

// Whether a kernel's entries of type T are FP64 values (double) rather than words (u64).
template <typename T>
struct IsF64 {
    static constexpr bool value = false;
};
template <>
struct IsF64<double> {
    static constexpr bool value = true;
};

RHEA_INLINE double f64_round_mul(double a, double b) {
    return __dsub_rn(__fma_rn(a, b, F64_ROUND_MAGIC), F64_ROUND_MAGIC);
}

RHEA_INLINE double f64_mulmod(double y, double w, double wq, double q) {
    const double h = __dmul_rn(y, w);
    const double l = __fma_rn(y, w, -h);
    const double k = f64_round_mul(y, wq);
    return __dadd_rn(__fma_rn(-k, q, h), l);
}

RHEA_INLINE double f64_reduce(double v, double qinv, double q) {
    return __fma_rn(-f64_round_mul(v, qinv), q, v);
}

RHEA_INLINE double f64_from_word(u64 a) {
    return __dsub_rn(__longlong_as_double((long long)(a | 0x4330000000000000ull)), F64_TWO_52);
}

RHEA_INLINE u64 f64_to_word(double v) {
    return (u64)__double_as_longlong(__dadd_rn(v, F64_TWO_52)) & 0x000FFFFFFFFFFFFFull;
}

// Forward (Cooley-Tukey) butterfly: x + w y, x - w y; each output at most 0.625 q above the
// larger input bound. w = (w, fl(w / q)).
RHEA_INLINE void f64_fwd_bf(double& x, double& y, double2 w, double q) {
    const double t = f64_mulmod(y, w.x, w.y, q);
    const double a = x;
    x = __dadd_rn(a, t);
    y = __dsub_rn(a, t);
}

// Inverse (Gentleman-Sande) butterfly: reduce(x + y), (x - y) w; outputs within 0.625 q for
// inputs below 2^49 in magnitude.
RHEA_INLINE void f64_inv_bf(double& x, double& y, double2 w, double q, double qinv) {
    const double a = x, b = y;
    x = f64_reduce(__dadd_rn(a, b), qinv, q);
    y = f64_mulmod(__dsub_rn(a, b), w.x, w.y, q);
}
