// elementwise.cu: element-wise RNS arithmetic over [poly][limb][N] buffers.
//
// One launch covers every polynomial and limb of its operands: blockIdx.y is a row (one limb of
// one polynomial), blockIdx.x/threadIdx.x stride over the row's N words two at a time (16-byte
// loads and stores) when N is even, one word at a time otherwise. The grid covers each row with
// one vector per thread (measured on H200 faster than two vectors per thread over a two-wave
// grid: see docs/cuda-backend.md).
//
// Row r of a launch is polynomial p = r / limb_count, limb l = limb_begin + r % limb_count; the
// row of operand X starts at X + p * stride_X + l * n, and it is reduced modulo
// moduli[mod_offset + l]. A stride of 0 broadcasts one polynomial to all (ciphertext × plaintext).
// `out` may equal any input (in-place operation): each thread reads its words before writing them.
//
// Launched with programmatic dependent launch (rhea_cuda::launch): the prologue (pdl_trigger(),
// the row pointers, the modulus from its host-uploaded table, the scalars from the parameter
// block) runs before pdl_wait(); the operand rows are read after it with ld_dep / ld_dep2.
//
// Twin: the rhea_math::Modulus operation on each word (see rhea-cuda/src/elementwise.rs).

#include "common.cuh"

// Must match rhea_cuda::elementwise::EwLayout (#[repr(C)]).
struct EwLayout {
    u64 n;           // words per limb (ring degree)
    u32 limb_count;  // limbs per polynomial in this launch
    u32 limb_begin;  // first limb (within each polynomial) of this launch
    u32 mod_offset;  // moduli index of limb 0
    u32 pad;
    u64 stride_out;  // polynomial strides in words; 0 = broadcast
    u64 stride_a;
    u64 stride_b;
    u64 stride_c;
};
// The layout of the Rust twin (`src/elementwise.rs`), asserted there too: keep both in step.
static_assert(sizeof(EwLayout) == 56, "EwLayout: not the Rust size");
static_assert(alignof(EwLayout) == 8, "EwLayout: not the Rust alignment");
static_assert(RHEA_OFFSETOF(EwLayout, n) == 0, "EwLayout::n: not the Rust offset");
static_assert(RHEA_OFFSETOF(EwLayout, limb_count) == 8, "EwLayout::limb_count: not the Rust offset");
static_assert(RHEA_OFFSETOF(EwLayout, limb_begin) == 12, "EwLayout::limb_begin: not the Rust offset");
static_assert(RHEA_OFFSETOF(EwLayout, mod_offset) == 16, "EwLayout::mod_offset: not the Rust offset");
static_assert(RHEA_OFFSETOF(EwLayout, pad) == 20, "EwLayout::pad: not the Rust offset");
static_assert(RHEA_OFFSETOF(EwLayout, stride_out) == 24, "EwLayout::stride_out: not the Rust offset");
static_assert(RHEA_OFFSETOF(EwLayout, stride_a) == 32, "EwLayout::stride_a: not the Rust offset");
static_assert(RHEA_OFFSETOF(EwLayout, stride_b) == 40, "EwLayout::stride_b: not the Rust offset");
static_assert(RHEA_OFFSETOF(EwLayout, stride_c) == 48, "EwLayout::stride_c: not the Rust offset");

// Must match rhea_cuda::elementwise::ScalarTable (#[repr(C)]): one constant per limb of the
// launch (index r % limb_count), with its Shoup companion for multiplications.
#define RHEA_MAX_SCALAR_LIMBS 128
struct ScalarTable {
    u64 w[RHEA_MAX_SCALAR_LIMBS];
    u64 w_shoup[RHEA_MAX_SCALAR_LIMBS];
};
// The layout of the Rust twin (`src/elementwise.rs`), asserted there too: keep both in step.
static_assert(sizeof(ScalarTable) == 2048, "ScalarTable: not the Rust size");
static_assert(alignof(ScalarTable) == 8, "ScalarTable: not the Rust alignment");
static_assert(RHEA_OFFSETOF(ScalarTable, w) == 0, "ScalarTable::w: not the Rust offset");
static_assert(RHEA_OFFSETOF(ScalarTable, w_shoup) == 1024, "ScalarTable::w_shoup: not the Rust offset");

struct RowPtrs {
    u64* out;
    const u64* a;
    const u64* b;
    const u64* c;
    u32 limb;   // index into the launch's limbs (0 .. limb_count)
};

RHEA_INLINE RowPtrs row_ptrs(const EwLayout& L, u64* out, const u64* a, const u64* b,
                             const u64* c) {
    const u32 r = blockIdx.y;
    const u32 p = r / L.limb_count;
    const u32 j = r - p * L.limb_count;
    const u64 l = L.limb_begin + j;
    RowPtrs rp;
    rp.out = out + p * L.stride_out + l * L.n;
    rp.a = a + p * L.stride_a + l * L.n;
    rp.b = b ? b + p * L.stride_b + l * L.n : nullptr;
    rp.c = c ? c + p * L.stride_c + l * L.n : nullptr;
    rp.limb = j;
    return rp;
}

// Applies `op(x_a, x_b, x_c)` to every word of the row; `Op` sees the modulus constants.
template <typename Op>
RHEA_INLINE void ew_row(const EwLayout& L, const RowPtrs& rp, Op op) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    const u64 start = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if ((L.n & 1ull) == 0) {
        const u64 half = L.n >> 1;
        for (u64 i = start; i < half; i += stride) {
            const u64 k = 2 * i;
            ulonglong2 va = ld_dep2(rp.a + k);
            ulonglong2 vb = rp.b ? ld_dep2(rp.b + k)
                                 : make_ulonglong2(0, 0);
            ulonglong2 vc = rp.c ? ld_dep2(rp.c + k)
                                 : make_ulonglong2(0, 0);
            ulonglong2 r;
            r.x = op(va.x, vb.x, vc.x);
            r.y = op(va.y, vb.y, vc.y);
            store2(rp.out + k, r);
        }
    } else {
        for (u64 i = start; i < L.n; i += stride) {
            const u64 xb = rp.b ? ld_dep(rp.b + i) : 0;
            const u64 xc = rp.c ? ld_dep(rp.c + i) : 0;
            rp.out[i] = op(ld_dep(rp.a + i), xb, xc);
        }
    }
}

#define EW_PLAIN_ARGS                                                                   \
    const EwLayout L, u64* out, const u64* a, const u64* b, const u64* c,               \
        const RheaModulus* moduli

#define EW_PLAIN_PROLOGUE                                                               \
    pdl_trigger();                                                                      \
    const RowPtrs rp = row_ptrs(L, out, a, b, c);                                       \
    const RheaModulus m = load_modulus(moduli, L.mod_offset + L.limb_begin + rp.limb);  \
    const u64 q = m.value;                                                              \
    (void)q;                                                                            \
    pdl_wait();

// out = a + b
extern "C" __global__ void ew_add(EW_PLAIN_ARGS) { RHEA_TL
    EW_PLAIN_PROLOGUE
    ew_row(L, rp, [&](u64 x, u64 y, u64) { return mod_add(x, y, q); });
}

// out = a - b
extern "C" __global__ void ew_sub(EW_PLAIN_ARGS) { RHEA_TL
    EW_PLAIN_PROLOGUE
    ew_row(L, rp, [&](u64 x, u64 y, u64) { return mod_sub(x, y, q); });
}

// out = -a
extern "C" __global__ void ew_neg(EW_PLAIN_ARGS) { RHEA_TL
    EW_PLAIN_PROLOGUE
    ew_row(L, rp, [&](u64 x, u64, u64) { return mod_neg(x, q); });
}

// out = a * b
extern "C" __global__ void ew_mul(EW_PLAIN_ARGS) { RHEA_TL
    EW_PLAIN_PROLOGUE
    ew_row(L, rp, [&](u64 x, u64 y, u64) { return mod_mul(x, y, m); });
}

// out = a * b + c (one Barrett reduction of the 128-bit a*b + c)
extern "C" __global__ void ew_mul_add(EW_PLAIN_ARGS) { RHEA_TL
    EW_PLAIN_PROLOGUE
    ew_row(L, rp, [&](u64 x, u64 y, u64 z) { return mod_mul_add(x, y, z, m); });
}

#define EW_SCALAR_ARGS                                                                  \
    const EwLayout L, u64* out, const u64* a, const u64* b, const RheaModulus* moduli,  \
        const __grid_constant__ ScalarTable t

#define EW_SCALAR_PROLOGUE                                                              \
    pdl_trigger();                                                                      \
    const RowPtrs rp = row_ptrs(L, out, a, b, nullptr);                                 \
    const RheaModulus m = load_modulus(moduli, L.mod_offset + L.limb_begin + rp.limb);  \
    const u64 q = m.value;                                                              \
    const u64 w = t.w[rp.limb];                                                         \
    const u64 ws = t.w_shoup[rp.limb];                                                  \
    (void)ws;                                                                           \
    pdl_wait();

// out = a * w_l (Shoup)
extern "C" __global__ void ew_mul_scalar(EW_SCALAR_ARGS) { RHEA_TL
    EW_SCALAR_PROLOGUE
    ew_row(L, rp, [&](u64 x, u64, u64) { return shoup_mul(x, w, ws, q); });
}

// out = a + w_l
extern "C" __global__ void ew_add_scalar(EW_SCALAR_ARGS) { RHEA_TL
    EW_SCALAR_PROLOGUE
    ew_row(L, rp, [&](u64 x, u64, u64) { return mod_add(x, w, q); });
}

// out = a * w_l + b (Shoup, then a modular addition)
extern "C" __global__ void ew_mul_scalar_add(EW_SCALAR_ARGS) { RHEA_TL
    EW_SCALAR_PROLOGUE
    ew_row(L, rp, [&](u64 x, u64 y, u64) { return mod_add(shoup_mul(x, w, ws, q), y, q); });
}
