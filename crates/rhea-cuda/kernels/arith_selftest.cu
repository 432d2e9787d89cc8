// arith_selftest.cu: runs each function of common.cuh on arrays of inputs, so that tests can
// compare it bit for bit with its rhea_math::Modulus twin on full-range random values.
// Not used by the library itself (see rhea_cuda::selftest).

#include "common.cuh"

// Must match rhea_cuda::selftest::ArithOp.
enum ArithOp : u32 {
    OP_BARRETT = 0,        // barrett_reduce(hi = a, lo = b)
    OP_REDUCE_U64 = 1,     // reduce_u64(a)
    OP_MUL = 2,            // mod_mul(a, b)
    OP_MUL_ADD = 3,        // mod_mul_add(a, b, c)
    OP_SHOUP_LAZY = 4,     // shoup_mul_lazy(a, w = b, w_shoup = c)
    OP_SHOUP = 5,          // shoup_mul(a, w = b, w_shoup = c)
    OP_MONT_MUL = 6,       // montgomery_mul(a, b)
    OP_MONT_REDUCE = 7,    // montgomery_reduce(hi = a, lo = b)
    OP_POW = 8,            // mod_pow(a, b)
    OP_ADD = 9,            // mod_add(a, b)
    OP_SUB = 10,           // mod_sub(a, b)
    OP_NEG = 11,           // mod_neg(a)
};

extern "C" __global__ void arith_selftest(u32 op, u64* out, const u64* a, const u64* b,
                                          const u64* c, u64 n, const RheaModulus* moduli) { RHEA_TL
    const RheaModulus m = load_modulus(moduli, 0);
    const u64 q = m.value;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (u64)gridDim.x * blockDim.x) {
        const u64 x = a[i], y = b[i], z = c[i];
        u64 r = 0;
        switch (op) {
            case OP_BARRETT: r = barrett_reduce(x, y, m); break;
            case OP_REDUCE_U64: r = reduce_u64(x, m); break;
            case OP_MUL: r = mod_mul(x, y, m); break;
            case OP_MUL_ADD: r = mod_mul_add(x, y, z, m); break;
            case OP_SHOUP_LAZY: r = shoup_mul_lazy(x, y, z, q); break;
            case OP_SHOUP: r = shoup_mul(x, y, z, q); break;
            case OP_MONT_MUL: r = montgomery_mul(x, y, q, m.mont_inv); break;
            case OP_MONT_REDUCE: {
                U128 t;
                t.hi = x;
                t.lo = y;
                r = montgomery_reduce(t, q, m.mont_inv);
                break;
            }
            case OP_POW: r = mod_pow(x, y, m); break;
            case OP_ADD: r = mod_add(x, y, q); break;
            case OP_SUB: r = mod_sub(x, y, q); break;
            case OP_NEG: r = mod_neg(x, q); break;
            default: r = ~0ull; break;
        }
        out[i] = r;
    }
}
