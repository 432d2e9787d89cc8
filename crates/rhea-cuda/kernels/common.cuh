// common.cuh: device-side modular arithmetic for Rhea's kernels.
//
// Every function here computes exactly what its twin in rhea_math::Modulus
// (crates/rhea-math/src/modulus.rs) computes, bit for bit, for the documented input ranges:
//
//   device                         host (rhea_math::Modulus)
//   mod_add(a, b, q)               add(a, b)            a, b < q
//   mod_sub(a, b, q)               sub(a, b)            a, b < q
//   mod_neg(a, q)                  neg(a)               a < q
//   barrett_reduce(z, m)           reduce_u128(z)       any 128-bit z
//   reduce_u64(a, m)               reduce(a)            any a
//   mod_mul(a, b, m)               mul(a, b)            any a, b
//   mod_mul_add(a, b, c, m)        mul_add(a, b, c)     any a, b, c
//   shoup_mul_lazy(a, w, ws, q)    mul_shoup_lazy       any a, w < q, ws = shoup(w); result < 2q
//   shoup_mul(a, w, ws, q)         mul_shoup            same; result < q
//   montgomery_reduce(t, q, qi)    Montgomery::reduce   t < q * 2^64, qi = q_inv_neg(), q odd
//   mod_pow(b, e, m)               pow(b, e)
//
// Moduli are below 2^61 (rhea_math::MAX_MODULUS_BITS), so lazy values in [0, 4q) and sums of a
// few of them never overflow 64 bits.
//
// Per-modulus constants travel as RheaModulus (32 bytes): the layout written by
// rhea_cuda::elementwise::DeviceModuli, limb j of a buffer at index j.
//
// Compiled by NVRTC with -std=c++17 --device-int128 -default-device (see registry.rs); no host
// headers are available, so only builtins are used.

#pragma once

typedef unsigned long long u64;
typedef unsigned int u32;
typedef long long i64;

#define RHEA_INLINE __device__ __forceinline__

// `offsetof` for the layout checks after each kernel argument struct (twins of the Rust
// `offset_of!` asserts): NVRTC has no <cstddef>; __INTADDR__ is its front end's constant
// address, the one its own `offsetof` expands to.
#define RHEA_OFFSETOF(T, f) __INTADDR__(&(((T*)0)->f))

// Block timeline (diagnostics only; compiled in with RHEA_NVRTC_DEFINES=KERNEL_TIMELINE=<records>):
// thread 0 of every block of every kernel that opens with RHEA_TL takes a slot at its exit and
// records (gridDim.x << 32 | blockDim.x << 16 | SM id,
// blockIdx.y << 48 | gridDim.y << 32 | blockIdx.x, start ns, end ns) from %globaltimer; records
// past the capacity are dropped. Each source's module has its own buffer (rhea_tl, rhea_tl_n),
// which rhea_cuda::timeline::take_timeline reads back.
#ifdef KERNEL_TIMELINE
__device__ unsigned long long rhea_tl[4 * (KERNEL_TIMELINE)];
__device__ unsigned int rhea_tl_n;
__device__ __forceinline__ unsigned long long rhea_tl_now() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
struct RheaTimelineScope {
    unsigned long long t0;
    __device__ RheaTimelineScope() : t0(threadIdx.x == 0 ? rhea_tl_now() : 0) {}
    __device__ ~RheaTimelineScope() {
        if (threadIdx.x != 0) return;
        const unsigned long long t1 = rhea_tl_now();
        unsigned int smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        const unsigned int slot = atomicAdd(&rhea_tl_n, 1u);
        if (slot >= (KERNEL_TIMELINE)) return;
        rhea_tl[4 * slot] = (unsigned long long)gridDim.x << 32 | blockDim.x << 16 | smid;
        rhea_tl[4 * slot + 1] =
            (unsigned long long)blockIdx.y << 48 | (unsigned long long)gridDim.y << 32 | blockIdx.x;
        rhea_tl[4 * slot + 2] = t0;
        rhea_tl[4 * slot + 3] = t1;
    }
};
#define RHEA_TL RheaTimelineScope rhea_tl_scope;
#else
#define RHEA_TL
#endif

// Programmatic dependent launch (rhea_cuda::launch, sm_90 and up): a kernel launched with it
// may start while the previous kernel of the stream still runs. pdl_trigger() lets the next
// kernel start once every block of this one has executed it (or exited); pdl_wait() returns once
// the previous kernel has completed and its writes are visible, and must come before any access
// to memory that earlier work writes or reads (read-only tables may be read before it). Both are
// no-ops for a kernel launched without the attribute, and on older architectures.
RHEA_INLINE void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

RHEA_INLINE void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Loads of memory that earlier work writes, in a kernel launched with PDL: a plain ld.global in
// volatile asm, which neither the front end nor ptxas moves above pdl_wait(). A read-only load
// (__ldg, or a const __restrict__ pointer the compiler turns into ld.global.nc) may be moved
// above it by ptxas, and was: it then reads what the previous kernel has not written yet.
RHEA_INLINE u64 ld_dep(const u64* p) {
    u64 r;
    asm volatile("ld.global.u64 %0, [%1];" : "=l"(r) : "l"(p));
    return r;
}

RHEA_INLINE ulonglong2 ld_dep2(const ulonglong2* p) {
    ulonglong2 r;
    asm volatile("ld.global.v2.u64 {%0, %1}, [%2];" : "=l"(r.x), "=l"(r.y) : "l"(p));
    return r;
}

// Two consecutive words (16-byte aligned address), as ld_dep2 above.
RHEA_INLINE ulonglong2 ld_dep2(const u64* p) {
    return ld_dep2(reinterpret_cast<const ulonglong2*>(p));
}

// ld_dep2 when `on`, else no load and zeros: a predicated load, so that a loop
// over a run-time number of operands issues its loads back to back.
RHEA_INLINE ulonglong2 ld_dep2_if(const u64* p, bool on) {
    ulonglong2 r = make_ulonglong2(0ull, 0ull);
    asm volatile(
        "{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %3, 0;\n\t"
        "@p ld.global.v2.u64 {%0, %1}, [%2];\n\t}"
        : "+l"(r.x), "+l"(r.y)
        : "l"(p), "r"((u32)on));
    return r;
}

// L2 cache hints. A deep key switching moves ~520 MB through a 50 MB L2; most of what it writes
// are temporaries written back to device memory although no one reads them again.
//
// ld_once*: a load of data read once (a key, a consumed temporary), ordered like ld_dep: ld.cs
// ("cache streaming": its lines are allocated evict-first in L1 and L2), so that it does not
// push out of L2 what later kernels read.
// l2_discard: drops one 128-byte line (128-byte aligned) from L2 without writing it back; the
// line's words become undefined, so only for a temporary that no one reads again (the fused
// ModUp rows' converted limbs, the epilogue row kernels' scratch runs and consumed x).
// Deep mul+relin on the H100 0.328 -> 0.321 ms, rotate 0.295 -> 0.288 (bench-history §18).
// RHEA_L2_EF=0 / RHEA_L2_DISCARD=0 (RHEA_NVRTC_DEFINES) turn them off for comparison.
#ifndef RHEA_L2_EF
#define RHEA_L2_EF 1
#endif
#ifndef RHEA_L2_DISCARD
#define RHEA_L2_DISCARD 1
#endif

RHEA_INLINE u64 ld_once(const u64* p) {
#if RHEA_L2_EF
    u64 r;
    asm volatile("ld.global.cs.u64 %0, [%1];" : "=l"(r) : "l"(p));
    return r;
#else
    return ld_dep(p);
#endif
}

RHEA_INLINE ulonglong2 ld_once2(const u64* p) {
#if RHEA_L2_EF
    ulonglong2 r;
    asm volatile("ld.global.cs.v2.u64 {%0, %1}, [%2];"
                 : "=l"(r.x), "=l"(r.y)
                 : "l"(p));
    return r;
#else
    return ld_dep2(p);
#endif
}

RHEA_INLINE ulonglong2 ld_once2_if(const u64* p, bool on) {
#if RHEA_L2_EF
    ulonglong2 r = make_ulonglong2(0ull, 0ull);
    asm volatile(
        "{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %3, 0;\n\t"
        "@p ld.global.cs.v2.u64 {%0, %1}, [%2];\n\t}"
        : "+l"(r.x), "+l"(r.y)
        : "l"(p), "r"((u32)on));
    return r;
#else
    return ld_dep2_if(p, on);
#endif
}

RHEA_INLINE void l2_discard(const void* p) {
#if RHEA_L2_DISCARD
    asm volatile("discard.global.L2 [%0], 128;" ::"l"(p) : "memory");
#endif
}

// l2_discard issued only once `dep` (a word the line's last load returned) has arrived: the
// instruction reads it, so it waits for the load's scoreboard.
RHEA_INLINE void l2_discard_after(const void* p, u64 dep) {
#if RHEA_L2_DISCARD
    asm volatile(
        "{\n\t.reg .pred q;\n\tsetp.ne.u64 q, %1, 0xffffffffffffffff;\n\t"
        "@q discard.global.L2 [%0], 128;\n\t}" ::"l"(p),
        "l"(dep)
        : "memory");
#endif
}

// Constants of one modulus q, as uploaded by DeviceModuli (4 words, in this order).
struct RheaModulus {
    u64 value;     // q, 2 <= q < 2^61
    u64 ratio_hi;  // floor((2^128 - 1) / q) >> 64      (Modulus::barrett_ratio().0)
    u64 ratio_lo;  // floor((2^128 - 1) / q) mod 2^64   (Modulus::barrett_ratio().1)
    u64 mont_inv;  // -q^{-1} mod 2^64 for odd q (Montgomery::q_inv_neg()), 0 for even q
};

// A 128-bit unsigned value as two words.
struct U128 {
    u64 lo;
    u64 hi;
};

// Loads the constants of modulus `i` through the read-only cache.
RHEA_INLINE RheaModulus load_modulus(const RheaModulus* moduli, u32 i) {
    const ulonglong2* p = reinterpret_cast<const ulonglong2*>(moduli + i);
    ulonglong2 x = __ldg(p);
    ulonglong2 y = __ldg(p + 1);
    RheaModulus m;
    m.value = x.x;
    m.ratio_hi = x.y;
    m.ratio_lo = y.x;
    m.mont_inv = y.y;
    return m;
}

// ---- 128-bit helpers ---------------------------------------------------------------------

// The full product a * b.
RHEA_INLINE U128 mul_wide(u64 a, u64 b) {
    U128 r;
    r.lo = a * b;
    r.hi = __umul64hi(a, b);
    return r;
}

// x + y mod 2^128.
RHEA_INLINE U128 add_wide(U128 x, U128 y) {
    U128 r;
    asm("add.cc.u64 %0, %2, %4;\n\t"
        "addc.u64 %1, %3, %5;"
        : "=l"(r.lo), "=l"(r.hi)
        : "l"(x.lo), "l"(x.hi), "l"(y.lo), "l"(y.hi));
    return r;
}

// x + c mod 2^128 for a single word c.
RHEA_INLINE U128 add_wide(U128 x, u64 c) {
    U128 r;
    asm("add.cc.u64 %0, %2, %4;\n\t"
        "addc.u64 %1, %3, 0;"
        : "=l"(r.lo), "=l"(r.hi)
        : "l"(x.lo), "l"(x.hi), "l"(c));
    return r;
}

// a * b + c (never overflows 128 bits).
RHEA_INLINE U128 mul_add_wide(u64 a, u64 b, u64 c) { return add_wide(mul_wide(a, b), c); }

// ---- additive arithmetic -----------------------------------------------------------------

// (a + b) mod q for a, b < q.
RHEA_INLINE u64 mod_add(u64 a, u64 b, u64 q) {
    u64 s = a + b;
    return s >= q ? s - q : s;
}

// (a - b) mod q for a, b < q.
RHEA_INLINE u64 mod_sub(u64 a, u64 b, u64 q) { return a >= b ? a - b : a + q - b; }

// -a mod q for a < q.
RHEA_INLINE u64 mod_neg(u64 a, u64 q) { return a == 0 ? 0 : q - a; }

// a mod q for a < 2q (one conditional subtraction).
RHEA_INLINE u64 csub(u64 a, u64 q) { return a >= q ? a - q : a; }

// ---- Barrett reduction (rhea_math::Modulus::reduce_u128) ----------------------------------

// z mod q for any 128-bit z = (hi, lo), with the same quotient estimate as the host:
// quotient = floor(z * ratio / 2^128) mod 2^64, at most one short, then one conditional
// subtraction.
RHEA_INLINE u64 barrett_reduce(u64 hi, u64 lo, const RheaModulus& m) {
    const u64 z0 = lo, z1 = hi;
    const u64 z0r0_hi = __umul64hi(z0, m.ratio_lo);
    // s = z1 * ratio_lo + z0 * ratio_hi + z0r0_hi  (mod 2^128; carries out of bit 127 only
    // change the quotient by multiples of 2^64, which vanish mod 2^64)
    U128 s = add_wide(mul_wide(z1, m.ratio_lo), mul_wide(z0, m.ratio_hi));
    s = add_wide(s, z0r0_hi);
    const u64 quotient = z1 * m.ratio_hi + s.hi;
    const u64 r = z0 - quotient * m.value;
    return r >= m.value ? r - m.value : r;
}

// z mod q for a 128-bit z.
RHEA_INLINE u64 barrett_reduce(U128 z, const RheaModulus& m) { return barrett_reduce(z.hi, z.lo, m); }

// a mod q for any 64-bit a (rhea_math::Modulus::reduce).
RHEA_INLINE u64 reduce_u64(u64 a, const RheaModulus& m) {
    return a < m.value ? a : barrett_reduce(0ull, a, m);
}

// (a * b) mod q for any a, b (rhea_math::Modulus::mul).
RHEA_INLINE u64 mod_mul(u64 a, u64 b, const RheaModulus& m) { return barrett_reduce(mul_wide(a, b), m); }

// (a * b + c) mod q for any a, b, c (rhea_math::Modulus::mul_add).
RHEA_INLINE u64 mod_mul_add(u64 a, u64 b, u64 c, const RheaModulus& m) {
    return barrett_reduce(mul_add_wide(a, b, c), m);
}

// ---- Shoup multiplication by a precomputed constant ----------------------------------------

// a * w mod q in [0, 2q) for any a and w < q, where w_shoup = floor(w * 2^64 / q)
// (rhea_math::Modulus::shoup / mul_shoup_lazy).
RHEA_INLINE u64 shoup_mul_lazy(u64 a, u64 w, u64 w_shoup, u64 q) {
    const u64 hi = __umul64hi(a, w_shoup);
    return a * w - hi * q;
}

// a * w mod q in [0, q) (rhea_math::Modulus::mul_shoup).
RHEA_INLINE u64 shoup_mul(u64 a, u64 w, u64 w_shoup, u64 q) {
    return csub(shoup_mul_lazy(a, w, w_shoup, q), q);
}

// ---- Montgomery form (R = 2^64, odd q) ------------------------------------------------------

// t * 2^-64 mod q in [0, q) for t < q * 2^64, q_inv_neg = -q^{-1} mod 2^64
// (rhea_math::Montgomery::reduce).
RHEA_INLINE u64 montgomery_reduce(U128 t, u64 q, u64 q_inv_neg) {
    const u64 mq = t.lo * q_inv_neg;
    // (t + mq * q) / 2^64; the low word of the sum is zero by construction.
    U128 s = add_wide(t, mul_wide(mq, q));
    // t + mq * q < 2q * 2^64 < 2^128, so no carry is lost.
    return s.hi >= q ? s.hi - q : s.hi;
}

// The Montgomery product a * b * 2^-64 mod q for a, b < q (rhea_math::Montgomery::mul).
RHEA_INLINE u64 montgomery_mul(u64 a, u64 b, u64 q, u64 q_inv_neg) {
    return montgomery_reduce(mul_wide(a, b), q, q_inv_neg);
}

// 2^64 mod p, from the Barrett word ratio_hi = floor(2^64 / p) (p odd, so not a power of two).
RHEA_INLINE u64 mont_r_mod(const RheaModulus& m) { return 0ull - m.value * m.ratio_hi; }

// REDC for a 128-bit z < 2^65 * p and q_inv_neg = -p^{-1} mod 2^64: z / 2^64 mod p in [0, p).
// (z + m p) / 2^64 = z.hi + hi(m p) + [z.lo != 0] (the low words sum to 0 or to 2^64), below
// z / 2^64 + p < 3p, then two conditional subtractions.
RHEA_INLINE u64 mont_redc_3p(U128 z, u64 p, u64 q_inv_neg) {
    const u64 mq = z.lo * q_inv_neg;
    u64 t = z.hi + __umul64hi(mq, p) + (z.lo != 0ull ? 1ull : 0ull);
    t = t >= 2 * p ? t - 2 * p : t;
    return t >= p ? t - p : t;
}

// ---- three-word accumulators ---------------------------------------------------------------
//
// Value l + m·2^32 + h·2^64 (mod 2^128). A product t·c of t, c < 2^61 is added as its four
// 32 × 32-bit partial products: t0·c0 into l (its carry into h), t0·c1 and t1·c0 (each < 2^61)
// into m (their carries, worth 2^96, into the high half of h), t1·c1 (< 2^58) into h: four
// multiply-adds with carry-out and four carry additions, against about thirteen instructions for
// a 128-bit product added to a 128-bit sum. h gains < 2^58 + 1 + 2·2^32 per product, so 48
// products keep it below 2^64.
struct Acc3 {
    u64 l, m, h;
};

RHEA_INLINE void acc3_set(Acc3& a, u64 v) {
    a.l = v;
    a.m = 0ull;
    a.h = 0ull;
}

// a += t * c for t, c < 2^61.
RHEA_INLINE void acc3_mac(Acc3& a, u64 t, u64 c) {
    asm("{\n\t"
        ".reg .u32 t0, t1, c0, c1, hl, hh;\n\t"
        ".reg .u64 p;\n\t"
        "mov.b64 {t0, t1}, %3;\n\t"
        "mov.b64 {c0, c1}, %4;\n\t"
        "mov.b64 {hl, hh}, %2;\n\t"
        "mul.wide.u32 p, t0, c0;\n\t"
        "add.cc.u64 %0, %0, p;\n\t"
        "addc.cc.u32 hl, hl, 0;\n\t"
        "addc.u32 hh, hh, 0;\n\t"
        "mul.wide.u32 p, t0, c1;\n\t"
        "add.cc.u64 %1, %1, p;\n\t"
        "addc.u32 hh, hh, 0;\n\t"
        "mul.wide.u32 p, t1, c0;\n\t"
        "add.cc.u64 %1, %1, p;\n\t"
        "addc.u32 hh, hh, 0;\n\t"
        "mov.b64 %2, {hl, hh};\n\t"
        "mad.wide.u32 %2, t1, c1, %2;\n\t"
        "}"
        : "+l"(a.l), "+l"(a.m), "+l"(a.h)
        : "l"(t), "l"(c));
}

// a += t * c for t < 2^32 and c < 2^61: t·c0 into l (its carry into h), t·c1 into m (its carry,
// worth 2^96, into the high half of h).
RHEA_INLINE void acc3_mac_small(Acc3& a, u32 t, u64 c) {
    asm("{\n\t"
        ".reg .u32 c0, c1, hl, hh;\n\t"
        ".reg .u64 p;\n\t"
        "mov.b64 {c0, c1}, %4;\n\t"
        "mov.b64 {hl, hh}, %2;\n\t"
        "mul.wide.u32 p, %3, c0;\n\t"
        "add.cc.u64 %0, %0, p;\n\t"
        "addc.cc.u32 hl, hl, 0;\n\t"
        "addc.u32 hh, hh, 0;\n\t"
        "mul.wide.u32 p, %3, c1;\n\t"
        "add.cc.u64 %1, %1, p;\n\t"
        "addc.u32 hh, hh, 0;\n\t"
        "mov.b64 %2, {hl, hh};\n\t"
        "}"
        : "+l"(a.l), "+l"(a.m), "+l"(a.h)
        : "r"(t), "l"(c));
}

// a += t * c for t, c < 2^32 (narrow moduli): one product into l, its carry into h.
RHEA_INLINE void acc3_mac_narrow(Acc3& a, u64 t, u64 c) {
    asm("{\n\t"
        ".reg .u64 p;\n\t"
        "mul.wide.u32 p, %2, %3;\n\t"
        "add.cc.u64 %0, %0, p;\n\t"
        "addc.u64 %1, %1, 0;\n\t"
        "}"
        : "+l"(a.l), "+l"(a.h)
        : "r"((u32)t), "r"((u32)c));
}

// The 128-bit value l + m·2^32 + h·2^64.
RHEA_INLINE U128 acc3_value(const Acc3& a) {
    return add_wide(U128{a.l, a.h}, U128{a.m << 32, a.m >> 32});
}

// ---- exponentiation ------------------------------------------------------------------------

// base^exp mod q (rhea_math::Modulus::pow); 1 mod q for exp = 0.
RHEA_INLINE u64 mod_pow(u64 base, u64 exp, const RheaModulus& m) {
    u64 result = reduce_u64(1ull, m);
    u64 b = reduce_u64(base, m);
    while (exp > 0) {
        if (exp & 1ull) result = mod_mul(result, b, m);
        b = mod_mul(b, b, m);
        exp >>= 1;
    }
    return result;
}

// ---- vector memory access --------------------------------------------------------------------

// Stores two consecutive words (16-byte aligned address).
RHEA_INLINE void store2(u64* p, ulonglong2 v) { *reinterpret_cast<ulonglong2*>(p) = v; }

// store2 of words read again only after much other traffic (st.cs: evict-first in L2, see
// ld_once), so that they do not push out of L2 what is read sooner. A plain store without
// RHEA_L2_EF.
RHEA_INLINE void store2_late(u64* p, ulonglong2 v) {
#if RHEA_L2_EF
    asm volatile("st.global.cs.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(v.x), "l"(v.y) : "memory");
#else
    store2(p, v);
#endif
}
