// CPU emulation of kernels/lite_fhe.cu (scripts/lite-emu.sh): the protected mode's kernels run
// with one std::thread per lane (common.cuh here) on buffers in LITE's memory form at their own
// host addresses, against host modular arithmetic: decryption (2 and 3 components, s longer than
// the operation, components plain or protected), key rows (no term, f·s', f·s²), plaintext add
// and multiply in place. Checks the kernels' indexing and arithmetic, and that protected outputs
// are ciphertext in memory.
#include "lite_fhe.cu"
#include <vector>
#include <thread>
#include <random>
#include <cstring>
thread_local Dim threadIdx, blockIdx; Dim blockDim, gridDim; thread_local Warp* cur_warp; thread_local Block* cur_block;
template <class F> void launch(u32 grid, F f, u32 threads = 32) {
    blockDim = {threads, 1, 1}; gridDim = {grid, 1, 1};
    for (u32 b = 0; b < grid; ++b) {
        std::vector<Warp> ws(threads / 32); Block blk; blk.threads = threads; std::vector<std::thread> ts;
        for (u32 t = 0; t < threads; ++t) ts.emplace_back([&, t] {
            threadIdx = {t, 0, 0}; blockIdx = {b, 0, 0}; cur_warp = &ws[t / 32]; cur_block = &blk;
            f(); cur_warp->exit_lane(t & 31); });
        for (auto& t : ts) t.join();
    }
}
static LiteTables TT; static unsigned char S[256];
static u32 be(const unsigned char* p) { return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3]; }
static void expand(const unsigned char* key, u32* rk) {
    static const u32 rcon[10] = {0x01000000,0x02000000,0x04000000,0x08000000,0x10000000,0x20000000,0x40000000,0x80000000,0x1b000000,0x36000000};
    for (int i = 0; i < 4; ++i) rk[i] = be(key + 4*i);
    for (int r = 0; r < 10; ++r) { u32 t = rk[4*r+3]; t = (t << 8) | (t >> 24);
        u32 s = (u32)S[t >> 24] << 24 | (u32)S[(t >> 16) & 255] << 16 | (u32)S[(t >> 8) & 255] << 8 | S[t & 255];
        rk[4*r+4] = rk[4*r] ^ s ^ rcon[r]; rk[4*r+5] = rk[4*r+1] ^ rk[4*r+4]; rk[4*r+6] = rk[4*r+2]^rk[4*r+5]; rk[4*r+7] = rk[4*r+3]^rk[4*r+6]; }
}
static LiteKeys keys(const unsigned char* k1, const unsigned char* k2) {
    LiteKeys K; expand(k1, K.k1_enc); expand(k2, K.k2_enc);
    u32* d = K.k1_dec; const u32* e = K.k1_enc;
    for (int r = 0; r <= 10; ++r) for (int i = 0; i < 4; ++i) d[4*r+i] = e[4*(10-r)+i];
    for (int k = 4; k < 40; ++k) { u32 w = d[k]; d[k] = TT.td[0][S[w >> 24]] ^ TT.td[1][S[(w >> 16) & 255]] ^ TT.td[2][S[(w >> 8) & 255]] ^ TT.td[3][S[w & 255]]; }
    return K;
}
static void oracle(const LiteKeys& K, u64* w, size_t words, bool enc) {
    for (size_t b = 0; b + 1 < words; b += 2) {
        uint4 v; memcpy(&v, w + b, 16);
        uint4 r = enc ? lite_encrypt_block_at(TT, K, (u64)(w + b), v) : lite_decrypt_block_at(TT, K, (u64)(w + b), v);
        memcpy(w + b, &r, 16);
    }
}
static int fails = 0;
#define CHECK(c, ...) do { if (!(c)) { fails++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)
static u64* alloc16(size_t n) { return (u64*)aligned_alloc(16, n * 8 + 16); }
static const u32 LOG_N = 6, N = 1u << LOG_N, LIMBS = 3, WORDS = LIMBS * N;
static const u64 Q[LIMBS + 1] = {1152921504606748673ull, 1152921504606683137ull, 1152921504606584833ull, 1152921504598720513ull};
std::mt19937_64 rng(7);
static u64 mulm(u64 a, u64 b, u64 q) { return (u64)((unsigned __int128)a * b % q); }
static u64* random_poly(u32 limbs) { u64* p = alloc16(limbs * N); for (u32 i = 0; i < limbs * N; ++i) p[i] = rng() % Q[i / N]; return p; }
static u64* protect(const LiteKeys& K, const u64* plain, u32 words) { u64* p = alloc16(words); memcpy(p, plain, words * 8); oracle(K, p, words, true); return p; }

int main() {
    launch(1, [&] { lite_load_tables(TT); });
    for (int i = 0; i < 256; ++i) S[i] = TT.te[2][i] >> 24;
    unsigned char k1[16], k2[16]; for (int i = 0; i < 16; ++i) { k1[i] = i * 11 + 3; k2[i] = 99 - i; }
    const LiteKeys K = keys(k1, k2);
    RheaModulus mods[LIMBS + 1]; for (u32 i = 0; i <= LIMBS; ++i) mods[i] = {Q[i], 0, 0, 0};
    u64* s = random_poly(LIMBS + 1);  // one limb longer than the operations: read as a prefix
    u64* sp = protect(K, s, (LIMBS + 1) * N);
    u64 *c0 = random_poly(LIMBS), *c1 = random_poly(LIMBS), *c2 = random_poly(LIMBS);
    LiteFheArgs A{}; A.moduli = (u64)mods; A.words = WORDS; A.log_n = LOG_N;
    // decryption, 2 and 3 components (grids smaller than the work: the grid-stride loop)
    for (int comps = 2; comps <= 3; ++comps) {
        u64* out = alloc16(WORDS);
        A.out = (u64)out; A.x0 = (u64)c0; A.x1 = (u64)c1; A.x2 = comps == 3 ? (u64)c2 : 0; A.x3 = (u64)sp;
        launch(2, [&] { lite_fhe_decrypt(K, A); });
        std::vector<u64> raw(out, out + WORDS);
        oracle(K, out, WORDS, false);
        int bad = 0, same = 0;
        for (u32 i = 0; i < WORDS; ++i) {
            const u64 q = Q[i / N];
            u64 m = c1[i]; if (comps == 3) m = (mulm(c2[i], s[i], q) + c1[i]) % q;
            m = (mulm(m, s[i], q) + c0[i]) % q;
            bad += out[i] != m; same += raw[i] == m;
        }
        CHECK(bad == 0, "decrypt, %d components: %d wrong words", comps, bad);
        CHECK(same == 0, "decrypt, %d components: %d plaintext words in memory", comps, same);
    }
    // decryption with protected components (flag 2: decrypt_protected), 2 and 3 components
    for (int comps = 2; comps <= 3; ++comps) {
        u64* out = alloc16(WORDS);
        u64 *q0 = protect(K, c0, WORDS), *q1 = protect(K, c1, WORDS), *q2 = protect(K, c2, WORDS);
        A = {}; A.moduli = (u64)mods; A.words = WORDS; A.log_n = LOG_N; A.flags = 2;
        A.out = (u64)out; A.x0 = (u64)q0; A.x1 = (u64)q1; A.x2 = comps == 3 ? (u64)q2 : 0; A.x3 = (u64)sp;
        launch(2, [&] { lite_fhe_decrypt(K, A); });
        std::vector<u64> raw(out, out + WORDS);
        oracle(K, out, WORDS, false);
        int bad = 0, same = 0;
        for (u32 i = 0; i < WORDS; ++i) {
            const u64 q = Q[i / N];
            u64 m = c1[i]; if (comps == 3) m = (mulm(c2[i], s[i], q) + c1[i]) % q;
            m = (mulm(m, s[i], q) + c0[i]) % q;
            bad += out[i] != m; same += raw[i] == m;
        }
        CHECK(bad == 0, "decrypt (protected components), %d components: %d wrong words", comps, bad);
        CHECK(same == 0, "decrypt (protected components), %d components: %d plaintext words in memory", comps, same);
    }
    // key rows
    u64 *a = random_poly(LIMBS), *e = random_poly(LIMBS), *x = random_poly(LIMBS);
    u64 *ep = protect(K, e, WORDS), *xp = protect(K, x, WORDS);
    u64 f[LIMBS]; for (u32 l = 0; l < LIMBS; ++l) f[l] = rng() % Q[l];
    for (int term = 0; term < 3; ++term) {
        u64* out = alloc16(WORDS);
        A = {}; A.moduli = (u64)mods; A.words = WORDS; A.log_n = LOG_N;
        A.out = (u64)out; A.x0 = (u64)a; A.x1 = (u64)ep; A.x2 = (u64)sp;
        A.x3 = term == 1 ? (u64)xp : 0; A.factors = term ? (u64)f : 0; A.flags = term == 2;
        launch(3, [&] { lite_fhe_key_row(K, A); });
        int bad = 0;
        for (u32 i = 0; i < WORDS; ++i) {
            const u64 q = Q[i / N];
            u64 b = (e[i] + q - mulm(a[i], s[i], q)) % q;
            if (term == 1) b = (b + mulm(f[i / N], x[i], q)) % q;
            if (term == 2) b = (b + mulm(f[i / N], mulm(s[i], s[i], q), q)) % q;
            bad += out[i] != b;
        }
        CHECK(bad == 0, "key row, term %d: %d wrong words", term, bad);
    }
    // plaintext add, then multiply, in place
    u64* pt = random_poly(LIMBS); u64* ptp = protect(K, pt, WORDS);
    u64* c = alloc16(WORDS); memcpy(c, c0, WORDS * 8);
    A = {}; A.moduli = (u64)mods; A.words = WORDS; A.log_n = LOG_N; A.out = (u64)c; A.x0 = (u64)c; A.x1 = (u64)ptp;
    launch(2, [&] { lite_fhe_plain_add(K, A); });
    int bad = 0; for (u32 i = 0; i < WORDS; ++i) bad += c[i] != (c0[i] + pt[i]) % Q[i / N];
    CHECK(bad == 0, "plain add: %d wrong words", bad);
    launch(1, [&] { lite_fhe_plain_mul(K, A); });
    bad = 0; for (u32 i = 0; i < WORDS; ++i) bad += c[i] != mulm((c0[i] + pt[i]) % Q[i / N], pt[i], Q[i / N]);
    CHECK(bad == 0, "plain mul: %d wrong words", bad);
    printf("lite_fhe.cu: decrypt (2, 3 components, plain and protected), key rows (3 terms), plaintext add and multiply: %s\n",
           fails ? "FAILED" : "all equal to host arithmetic");
    return fails ? 1 : 0;
}
