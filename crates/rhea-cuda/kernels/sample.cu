// sample.cu: sampling on the device from a seeded, counter-based ChaCha20.
//
// The keystream is rhea_math::sampler's (see its module docs and chacha20_block): state words
// w0..w3 = "expand 32-byte k", w4..w11 = the 32-byte key as little-endian u32s,
// w12/w13 = the 64-bit block counter (low, high), w14/w15 = the 64-bit stream id (low, high);
// 20 rounds, then the input state is added. Every thread computes the block(s) it needs from
// (key, stream, counter) alone, so any position can be generated independently.
//
// sample_uniform: polynomial p uses stream `stream + p`; its coefficient k = limb*N + i uses
//   block k/4, words 4(k%4) .. 4(k%4)+3: lo = w0 | w1 << 32, hi = w2 | w3 << 32,
//   a = ((hi << 64) | lo) mod q_limb   (rhea_math::sampler::uniform_poly_from_seed).
// sample_ternary: polynomial p uses stream `stream + p`; coefficient i takes the i-th 64-bit
//   draw r (block i/8, words 2(i%8), 2(i%8)+1, low word first) and is floor(3r / 2^64) - 1 in
//   {-1, 0, 1} (rhea_math::sampler::ternary on a fresh Prng::from_seed(key) for stream 0),
//   lifted to every limb as in rhea_math::sampler::lift_signed (-1 -> q - 1).
// sample_gaussian: polynomial p uses stream `stream + p`; coefficient i takes the i-th 64-bit
//   draw r (as sample_ternary) and is x = #{t : r >= T_t} - B, the constant-time CDT sample of
//   rhea_math::sampler::gaussian_from_seed (T = gaussian_cdt(sigma, bound), 2B entries, passed
//   in the launch arguments), lifted to every limb as in rhea_math::sampler::lift_signed.

//
// Programmatic dependent launch (common.cuh): the keystream depends on the launch arguments
// alone, so every kernel computes its samples (and reads only the host-uploaded moduli table)
// before pdl_wait(), while the previous kernel drains, and waits only before its first store.

#include "common.cuh"

// Must match rhea_cuda::sample::SampleArgs (#[repr(C)]).
struct SampleArgs {
    u32 key[8];
    u64 stream;
    u64 n;                      // ring degree
    u64* out;                   // [poly][limb][n]
    const RheaModulus* moduli;  // limb l uses moduli[mod_offset + l]
    u32 limbs;
    u32 polys;
    u32 mod_offset;
    u32 limbs_per_block;        // ternary and Gaussian: the limbs of grid slice blockIdx.z
};
// The layout of the Rust twin (`src/sample.rs`), asserted there too: keep both in step.
static_assert(sizeof(SampleArgs) == 80, "SampleArgs: not the Rust size");
static_assert(alignof(SampleArgs) == 8, "SampleArgs: not the Rust alignment");
static_assert(RHEA_OFFSETOF(SampleArgs, key) == 0, "SampleArgs::key: not the Rust offset");
static_assert(RHEA_OFFSETOF(SampleArgs, stream) == 32, "SampleArgs::stream: not the Rust offset");
static_assert(RHEA_OFFSETOF(SampleArgs, n) == 40, "SampleArgs::n: not the Rust offset");
static_assert(RHEA_OFFSETOF(SampleArgs, out) == 48, "SampleArgs::out: not the Rust offset");
static_assert(RHEA_OFFSETOF(SampleArgs, moduli) == 56, "SampleArgs::moduli: not the Rust offset");
static_assert(RHEA_OFFSETOF(SampleArgs, limbs) == 64, "SampleArgs::limbs: not the Rust offset");
static_assert(RHEA_OFFSETOF(SampleArgs, polys) == 68, "SampleArgs::polys: not the Rust offset");
static_assert(RHEA_OFFSETOF(SampleArgs, mod_offset) == 72, "SampleArgs::mod_offset: not the Rust offset");
static_assert(RHEA_OFFSETOF(SampleArgs, limbs_per_block) == 76, "SampleArgs::limbs_per_block: not the Rust offset");

// Threads per block of the ternary and Gaussian kernels (rhea_cuda::sample::SAMPLE_THREADS):
// each computes one ChaCha block (8 coefficients) into shared memory, then the block writes its
// 8 * SAMPLE_THREADS coefficients, lifted, into limbs limbs_per_block * z .. + limbs_per_block
// (coalesced: consecutive threads, consecutive words). The host sizes the limb slices so that
// the grid fills the device; each slice recomputes its samples (cheap).
#define SAMPLE_THREADS 128

RHEA_INLINE u32 rotl32(u32 x, u32 r) { return __funnelshift_l(x, x, r); }

#define CHACHA_QR(a, b, c, d)        \
    a += b; d = rotl32(d ^ a, 16);   \
    c += d; b = rotl32(b ^ c, 12);   \
    a += b; d = rotl32(d ^ a, 8);    \
    c += d; b = rotl32(b ^ c, 7);

// The ChaCha20 block function (rhea_math::sampler::chacha20_block).
RHEA_INLINE void chacha20_block(const u32 key[8], u64 stream, u64 counter, u32 out[16]) {
    u32 in[16];
    in[0] = 0x61707865u;
    in[1] = 0x3320646eu;
    in[2] = 0x79622d32u;
    in[3] = 0x6b206574u;
#pragma unroll
    for (int i = 0; i < 8; ++i) in[4 + i] = key[i];
    in[12] = (u32)counter;
    in[13] = (u32)(counter >> 32);
    in[14] = (u32)stream;
    in[15] = (u32)(stream >> 32);
    u32 x0 = in[0], x1 = in[1], x2 = in[2], x3 = in[3], x4 = in[4], x5 = in[5], x6 = in[6],
        x7 = in[7], x8 = in[8], x9 = in[9], x10 = in[10], x11 = in[11], x12 = in[12],
        x13 = in[13], x14 = in[14], x15 = in[15];
#pragma unroll
    for (int round = 0; round < 10; ++round) {
        CHACHA_QR(x0, x4, x8, x12)
        CHACHA_QR(x1, x5, x9, x13)
        CHACHA_QR(x2, x6, x10, x14)
        CHACHA_QR(x3, x7, x11, x15)
        CHACHA_QR(x0, x5, x10, x15)
        CHACHA_QR(x1, x6, x11, x12)
        CHACHA_QR(x2, x7, x8, x13)
        CHACHA_QR(x3, x4, x9, x14)
    }
    out[0] = x0 + in[0];
    out[1] = x1 + in[1];
    out[2] = x2 + in[2];
    out[3] = x3 + in[3];
    out[4] = x4 + in[4];
    out[5] = x5 + in[5];
    out[6] = x6 + in[6];
    out[7] = x7 + in[7];
    out[8] = x8 + in[8];
    out[9] = x9 + in[9];
    out[10] = x10 + in[10];
    out[11] = x11 + in[11];
    out[12] = x12 + in[12];
    out[13] = x13 + in[13];
    out[14] = x14 + in[14];
    out[15] = x15 + in[15];
}

// One thread per ChaCha block (4 coefficients); blockIdx.y = polynomial.
extern "C" __global__ void sample_uniform(const __grid_constant__ SampleArgs A) { RHEA_TL
    pdl_trigger();
    const u64 total = (u64)A.limbs * A.n;
    const u64 blocks = (total + 3) >> 2;
    const u64 b = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= blocks) return;
    const u32 p = blockIdx.y;
    u32 w[16];
    chacha20_block(A.key, A.stream + p, b, w);
    u64* out = A.out + (u64)p * total;
    u64 k = 4 * b;
    u32 limb = (u32)(k / A.n);
    u64 limb_end = (u64)(limb + 1) * A.n;
    RheaModulus m = load_modulus(A.moduli, A.mod_offset + limb);
    pdl_wait();
#pragma unroll
    for (int s = 0; s < 4; ++s, ++k) {
        if (k < total) {
            if (k >= limb_end) {
                ++limb;
                limb_end += A.n;
                m = load_modulus(A.moduli, A.mod_offset + limb);
            }
            const u64 lo = (u64)w[4 * s] | ((u64)w[4 * s + 1] << 32);
            const u64 hi = (u64)w[4 * s + 2] | ((u64)w[4 * s + 3] << 32);
            out[k] = barrett_reduce(hi, lo, m);
        }
    }
}

// Blocks of SAMPLE_THREADS threads, each thread one ChaCha block (8 coefficients); blockIdx.y
// = polynomial, blockIdx.z = slice of limbs.
extern "C" __global__ void __launch_bounds__(SAMPLE_THREADS)
    sample_ternary(const __grid_constant__ SampleArgs A) { RHEA_TL
    __shared__ u32 digits[8 * SAMPLE_THREADS];
    pdl_trigger();
    const u64 blocks = (A.n + 7) >> 3;
    const u64 b = (u64)blockIdx.x * SAMPLE_THREADS + threadIdx.x;
    const u32 p = blockIdx.y;
    if (b < blocks) {
        u32 w[16];
        chacha20_block(A.key, A.stream + p, b, w);
        // digit = floor(3 r / 2^64) in {0, 1, 2}, the coefficient plus one.
#pragma unroll
        for (int s = 0; s < 8; ++s) {
            const u64 r = (u64)w[2 * s] | ((u64)w[2 * s + 1] << 32);
            digits[8 * threadIdx.x + s] = (u32)__umul64hi(r, 3ull);
        }
    }
    __syncthreads();
    pdl_wait();
    const u64 base = (u64)blockIdx.x * (8 * SAMPLE_THREADS);
    const u32 l0 = blockIdx.z * A.limbs_per_block;
    const u32 l1 = min(A.limbs, l0 + A.limbs_per_block);
    u64* out = A.out + (u64)p * A.limbs * A.n;
    for (u32 l = l0; l < l1; ++l) {
        const u64 q = A.moduli[A.mod_offset + l].value;
        u64* row = out + (u64)l * A.n;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const u32 local = j * SAMPLE_THREADS + threadIdx.x;
            const u64 k = base + local;
            if (k < A.n) {
                // digit - 1, with -1 lifted to q - 1 (branch-free).
                const u32 d = digits[local];
                const u64 neg_mask = 0ull - (u64)(d == 0);
                row[k] = ((u64)d - 1ull) + (q & neg_mask);
            }
        }
    }
}

// ---- discrete Gaussian ----------------------------------------------------------------------

// Must match rhea_cuda::sample::MAX_GAUSSIAN_TABLE.
#define GAUSSIAN_MAX_TABLE 256
#define GAUSSIAN_THREADS SAMPLE_THREADS

// Must match rhea_cuda::sample::GaussianArgs (#[repr(C)]).
struct GaussianArgs {
    SampleArgs s;
    u32 entries;                   // 2B, the table entries in use (<= GAUSSIAN_MAX_TABLE)
    u32 bound;                     // B
    u64 table[GAUSSIAN_MAX_TABLE]; // the CDT (rhea_math::sampler::gaussian_cdt), then unused
};
// The layout of the Rust twin (`src/sample.rs`), asserted there too: keep both in step.
static_assert(sizeof(GaussianArgs) == 2136, "GaussianArgs: not the Rust size");
static_assert(alignof(GaussianArgs) == 8, "GaussianArgs: not the Rust alignment");
static_assert(RHEA_OFFSETOF(GaussianArgs, s) == 0, "GaussianArgs::s: not the Rust offset");
static_assert(RHEA_OFFSETOF(GaussianArgs, entries) == 80, "GaussianArgs::entries: not the Rust offset");
static_assert(RHEA_OFFSETOF(GaussianArgs, bound) == 84, "GaussianArgs::bound: not the Rust offset");
static_assert(RHEA_OFFSETOF(GaussianArgs, table) == 88, "GaussianArgs::table: not the Rust offset");

// Thread t of block (x, p, z) computes ChaCha block 128x + t of stream `stream + p`, i.e. the 8
// samples of coefficients 8(128x + t) .. +8, into shared memory; then the block writes its 1024
// coefficients, lifted, into limbs 8z .. 8z + 7 (coalesced: consecutive threads, consecutive
// words). Every sample scans the whole table with branch-free comparisons (the table lives in
// the constant bank of the launch arguments and is indexed by the loop counter only), and the
// lift is branch-free in the sign, so nothing depends on the secret but the stored values.
extern "C" __global__ void __launch_bounds__(GAUSSIAN_THREADS)
    sample_gaussian(const __grid_constant__ GaussianArgs G) { RHEA_TL
    __shared__ int xs[8 * GAUSSIAN_THREADS];
    pdl_trigger();
    const SampleArgs& A = G.s;
    const u64 blocks = (A.n + 7) >> 3;
    const u64 b = (u64)blockIdx.x * GAUSSIAN_THREADS + threadIdx.x;
    const u32 p = blockIdx.y;
    if (b < blocks) {
        u32 w[16];
        chacha20_block(A.key, A.stream + p, b, w);
        u64 r[8];
        u32 count[8];
#pragma unroll
        for (int s = 0; s < 8; ++s) {
            r[s] = (u64)w[2 * s] | ((u64)w[2 * s + 1] << 32);
            count[s] = 0;
        }
        // One table entry at a time against all 8 draws (one constant-bank load per entry).
        for (u32 t = 0; t < G.entries; ++t) {
            const u64 e = G.table[t];
#pragma unroll
            for (int s = 0; s < 8; ++s) count[s] += (u32)(r[s] >= e);
        }
#pragma unroll
        for (int s = 0; s < 8; ++s) xs[8 * threadIdx.x + s] = (int)count[s] - (int)G.bound;
    }
    __syncthreads();
    pdl_wait();
    const u64 base = (u64)blockIdx.x * (8 * GAUSSIAN_THREADS);
    const u32 l0 = blockIdx.z * A.limbs_per_block;
    const u32 l1 = min(A.limbs, l0 + A.limbs_per_block);
    u64* out = A.out + (u64)p * A.limbs * A.n;
    for (u32 l = l0; l < l1; ++l) {
        const RheaModulus m = load_modulus(A.moduli, A.mod_offset + l);
        const u64 q = m.value;
        u64* row = out + (u64)l * A.n;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const u32 local = j * GAUSSIAN_THREADS + threadIdx.x;
            const u64 k = base + local;
            if (k < A.n) {
                // rhea_math::sampler::lift_one, branch-free in the sign.
                const int x = xs[local];
                const int sm = x >> 31;                        // -1 when x < 0
                const u64 mag = barrett_reduce(0ull, (u64)(u32)((x ^ sm) - sm), m);
                const u64 neg_mask = (u64)(i64)sm;             // all ones when x < 0
                const u64 negated = q - mag;                   // in (0, q]
                u64 v = mag ^ ((mag ^ negated) & neg_mask);
                const u64 is_q = ((v ^ q) - 1ull) >> 63;       // 1 iff v == q
                v -= q & (0ull - is_q);
                row[k] = v;
            }
        }
    }
}
