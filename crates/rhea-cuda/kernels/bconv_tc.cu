// bconv_tc.cu: the base conversion's matrix product on the tensor cores (INT8 mma), exact.
//
// Twin: the second step of rhea_math::bconv::BaseConverter::convert_approx:
//   out[j][c] = (sum_i t[i][c] * qhat[i][j]) mod p_j,   t[i][c] < q_i < 2^61 canonical.
//
// Exactness by splitting into bytes. With k = 8i + a indexing byte a of input limb i,
//   sum_i t_i * qhat_ij = sum_{i,a} t_i[a] * 2^{8a} qhat_ij  ==  sum_{i,a} t_i[a] * C[i,a][j]
// modulo p_j, where C[i,a][j] = 2^{8a} * qhat_ij mod p_j (60-bit). Splitting C into bytes b,
//   P_b[c][j] = sum_{i,a} t_i[a] * C[i,a][j][b]   (u8 x u8 products, < 2^24 for L <= 32)
// is an integer matrix product (mma.m16n8k32 .u8.u8.s32), and
//   sum_b P_b 2^{8b} < 2^81  ==  the sum above modulo p_j,
// reduced once with barrett_reduce. No rounding anywhere: bit-exact with the CPU.
//
// Layout. A warp takes 16 coefficients; its A fragments (the t bytes, K = 32 per mma step, i.e.
// 4 input limbs) come straight from the 32-bit halves of t: thread (g = lane / 4, h = lane % 4)
// holds for step s the half (h & 1) of t[4s + h/2 (+2)][c0 + g (+8)]. One mma's 8 columns are 8
// output primes of one byte plane b; frag ([jt][b][s][lane] as uint2) holds the B fragments in
// register order (built on the host, rhea_cuda::bconv_tc). 128 threads per block, 64 coefficients;
// grid (n / 64, tiles): block y takes output tiles y, y + tiles, ... (more blocks than one pass
// over the coefficients would give, each loading its A fragments again from L2).

#include "common.cuh"

#define TC_MAX_STEPS 8  // L <= 32 input limbs

RHEA_INLINE void mma_u8(int (&d)[4], const u32 (&a)[4], uint2 b) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b.x), "r"(b.y));
}

// out: [k][n]; t: [l][n]; n a multiple of 64; l <= 32; steps = ceil(l / 4); jtiles = ceil(k / 8).
// TC_MIN_BLOCKS (RHEA_NVRTC_DEFINES): a minimum-blocks hint, for tuning.
#ifdef TC_MIN_BLOCKS
#define TC_BOUNDS __launch_bounds__(128, TC_MIN_BLOCKS)
#else
#define TC_BOUNDS __launch_bounds__(128)
#endif
extern "C" __global__ void TC_BOUNDS
    bconv_tc_scaled(u64* __restrict__ out, const u64* __restrict__ t,
                    const uint2* __restrict__ frag, const RheaModulus* __restrict__ to, u64 n,
                    u32 l, u32 k, u32 steps, u32 jtiles) {
    const u32 lane = threadIdx.x & 31, g = lane >> 2, h = lane & 3;
    const u64 c0 = ((u64)blockIdx.x * 4 + (threadIdx.x >> 5)) * 16;
    if (c0 >= n) return;
    u32 A[TC_MAX_STEPS][4];
#pragma unroll
    for (int s = 0; s < TC_MAX_STEPS; ++s) {
        A[s][0] = A[s][1] = A[s][2] = A[s][3] = 0u;
        if (s < (int)steps) {
            const u32 i0 = 4 * s + (h >> 1), i1 = i0 + 2;
            const u32 sh = 32 * (h & 1);
            if (i0 < l) {
                A[s][0] = (u32)(__ldg(t + (u64)i0 * n + c0 + g) >> sh);
                A[s][1] = (u32)(__ldg(t + (u64)i0 * n + c0 + g + 8) >> sh);
            }
            if (i1 < l) {
                A[s][2] = (u32)(__ldg(t + (u64)i1 * n + c0 + g) >> sh);
                A[s][3] = (u32)(__ldg(t + (u64)i1 * n + c0 + g + 8) >> sh);
            }
        }
    }
    // blockIdx.y: the first output tile; TC_TILE_STRIDE (gridDim.y) apart after it.
#pragma unroll 1
    for (u32 jt = blockIdx.y; jt < jtiles; jt += gridDim.y) {
        u64 lo[4] = {0ull, 0ull, 0ull, 0ull}, hi[4] = {0ull, 0ull, 0ull, 0ull};
#pragma unroll
        for (int b = 0; b < 8; ++b) {
            int d[4] = {0, 0, 0, 0};
            const uint2* fb = frag + ((u64)(jt * 8 + b) * steps) * 32 + lane;
#pragma unroll
            for (int s = 0; s < TC_MAX_STEPS; ++s) {
                if (s < (int)steps) mma_u8(d, A[s], __ldg(fb + 32 * s));
            }
#pragma unroll
            for (int v = 0; v < 4; ++v) {
                if (b < 4) {
                    lo[v] += (u64)(u32)d[v] << (8 * b);
                } else {
                    hi[v] += (u64)(u32)d[v] << (8 * (b - 4));
                }
            }
        }
#pragma unroll
        for (int v = 0; v < 4; ++v) {
            const u32 j = jt * 8 + 2 * h + (v & 1);
            if (j < k) {
                // z = lo + hi * 2^32 (lo, hi < 2^49).
                U128 z;
                z.lo = lo[v] + (hi[v] << 32);
                z.hi = (hi[v] >> 32) + (z.lo < lo[v] ? 1ull : 0ull);
                const RheaModulus m = load_modulus(to, j);
                out[(u64)j * n + c0 + g + (v >= 2 ? 8 : 0)] = barrett_reduce(z, m);
            }
        }
    }
}
