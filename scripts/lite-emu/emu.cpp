// CPU emulation of kernels/lite.cu (scripts/lite-emu.sh): runs the test and benchmark kernels of
// LITE with one std::thread per lane (see common.cuh here) and checks them against
//   - the IEEE 1619 XTS-AES-128 vectors 1-9 (vectors.txt, made from tests/common/xts_vectors.rs)
//     through lite_test_xts, and FIPS-197 C.1 through lite_test_ecb;
//   - an oracle of the memory form (lite_encrypt_block_at per block at the buffer's own host
//     address, itself checked by the vectors) for every entry point: v4, word-granular u32/u64,
//     masked (with partial groups: tails and skipped lanes) and full-mask;
//   - the plain kernel for every LITE variant of the element-wise, gather and SpMV kernels.
// Exit status 0 when all pass. It checks the kernels' logic (masks, shuffles, partial groups,
// padding, indexing), not their speed or anything specific to a GPU's memory model.
#include "lite.cu"
#include <vector>
#include <thread>
#include <random>
#include <cstring>
#include <string>
#include <csignal>
#include <sys/mman.h>
#include <unistd.h>
thread_local Dim threadIdx, blockIdx; Dim blockDim, gridDim; thread_local Warp* cur_warp; thread_local Block* cur_block;
// Runs f as `grid` blocks of `threads` threads (a multiple of 32; the Rust side launches 256).
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
// Buffers of exactly the bytes the Rust side allocates, ending at a PROT_NONE guard page: a
// kernel that reads or writes past the end stops the emulation with SIGSEGV (reported).
static void on_segv(int, siginfo_t* si, void*) {
    char m[128]; int n = snprintf(m, sizeof m, "FAIL: out-of-bounds access at %p (guard page past a buffer)\n", si->si_addr);
    if (write(2, m, n) < 0) {} _exit(3);
}
static u64* fenced(size_t words) {
    const size_t page = sysconf(_SC_PAGESIZE), bytes = ((words * 8 + 15) / 16) * 16, span = (bytes + page - 1) / page * page;
    char* p = (char*)mmap(nullptr, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || mprotect(p + span, page, PROT_NONE) != 0) { perror("mmap"); exit(2); }
    return (u64*)(p + span - bytes);
}
// The launch of rhea_cuda::lite::transcode for a word entry point (one_per_thread: 256 threads
// per block, blocks to cover the items rounded up to a warp).
static const u32 RUST_THREADS = 256;
static u32 one_per_thread_blocks(size_t items) { size_t r = (items + 31) / 32 * 32; return (u32)((r + RUST_THREADS - 1) / RUST_THREADS); }
static LiteTables TT; static unsigned char S[256];
static std::vector<unsigned char> hex(const std::string& s) { std::vector<unsigned char> v; for (size_t i = 0; i + 1 < s.size(); i += 2) v.push_back(std::stoi(s.substr(i, 2), 0, 16)); return v; }
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
static int fails = 0, variant_runs = 0;
#define CHECK(c, ...) do { if (!(c)) { fails++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)
// oracle: memory-form encryption of words at their own addresses, block by block
static void oracle(const LiteKeys& K, u64* w, size_t words, bool enc) {
    for (size_t b = 0; b + 1 < words; b += 2) {
        uint4 v; memcpy(&v, w + b, 16);
        uint4 r = enc ? lite_encrypt_block_at(TT, K, (u64)(w + b), v) : lite_decrypt_block_at(TT, K, (u64)(w + b), v);
        memcpy(w + b, &r, 16);
    }
}
template <class T> static T* alloc16(size_t n) { return (T*)aligned_alloc(16, ((n * sizeof(T) + 15) / 16) * 16 + 16); }
std::mt19937_64 rng(42);

int main() {
    { struct sigaction sa{}; sa.sa_sigaction = on_segv; sa.sa_flags = SA_SIGINFO; sigaction(SIGSEGV, &sa, nullptr); }
    launch(1, [&] { lite_load_tables(TT); });
    for (int i = 0; i < 256; ++i) S[i] = TT.te[2][i] >> 24;
    CHECK(S[0] == 0x63 && S[0x53] == 0xed, "sbox");
    // 1. IEEE vectors through the lite_test_xts kernel
    { FILE* f = fopen("vectors.txt", "r"); char a[64], b[64], d[64]; static char p[4096], c[4096]; int n = 0;
      while (fscanf(f, "%63s %63s %63s %4095s %4095s", a, b, d, p, c) == 5) {
        auto k1 = hex(a), k2 = hex(b), pt = hex(p), ct = hex(c); LiteKeys K = keys(k1.data(), k2.data());
        unsigned long long dusn = strtoull(d, 0, 16);
        size_t blocks = pt.size() / 16; u64* buf = alloc16<u64>(2 * blocks); memcpy(buf, pt.data(), pt.size());
        u64 tw[2] = {dusn, 0};
        XtsTestArgs A{(u64)buf, (u64)tw, blocks, (u32)blocks, 0};
        launch(2, [&] { lite_test_xts(K, A); });
        CHECK(memcmp(buf, ct.data(), ct.size()) == 0, "IEEE vector %d encrypt", n + 1);
        A.decrypt = 1; launch(1, [&] { lite_test_xts(K, A); });
        CHECK(memcmp(buf, pt.data(), pt.size()) == 0, "IEEE vector %d decrypt", n + 1);
        ++n; }
      printf("IEEE vectors: %d checked\n", n); }
    // FIPS-197 C.1 through lite_test_ecb
    { auto k = hex("000102030405060708090a0b0c0d0e0f"); LiteKeys K = keys(k.data(), k.data());
      auto pt = hex("00112233445566778899aabbccddeeff"), ct = hex("69c4e0d86a7b0430d8cdb78070b4c55a");
      u64* buf = alloc16<u64>(2); memcpy(buf, pt.data(), 16); XtsTestArgs A{(u64)buf, 0, 1, 1, 0};
      launch(1, [&] { lite_test_ecb(K, A); }); CHECK(memcmp(buf, ct.data(), 16) == 0, "ecb enc");
      A.decrypt = 1; launch(1, [&] { lite_test_ecb(K, A); }); CHECK(memcmp(buf, pt.data(), 16) == 0, "ecb dec"); }
    unsigned char k1[16], k2[16]; for (int i = 0; i < 16; ++i) { k1[i] = i * 7 + 1; k2[i] = 200 - i; }
    LiteKeys K = keys(k1, k2);
    // the memory form at a fixed address: the known answer of the Rust oracle (xts-mode)
    { alignas(16) u64 w[2] = {0x0123456789abcdefull, 0xfedcba9876543210ull}; uint4 v; memcpy(&v, w, 16);
      uint4 e = lite_encrypt_block_at(TT, K, 0x7f1234560010ull, v); u64 o[2]; memcpy(o, &e, 16);
      CHECK(o[0] == 0x67c1cc5c6eb6885full && o[1] == 0xb86241e144cc9551ull,
            "memory form known answer (tests/lite.rs memory_form_known_answer): %016llx %016llx", o[0], o[1]); }
    // 2. transcode through each entry point
    auto run_word = [&](int bits, bool masked, size_t items, u32 skip) {
        // rhea_cuda::lite::EntryPoint::buffer_words: whole blocks (masked) or whole warps (full)
        const size_t G = 128 / bits; const size_t round = masked ? ((items + G - 1) / G) * G : ((items + 31) / 32) * 32;
        const size_t words64 = (round * bits / 8 + 7) / 8;
        u64* plain = alloc16<u64>(words64); u64* old = alloc16<u64>(words64); u64* out = fenced(words64);
        for (size_t i = 0; i < words64; ++i) { plain[i] = rng(); old[i] = rng(); }
        // encrypt: out holds the ciphertext of `old`; the kernel writes plain's items except skipped
        memcpy(out, old, words64 * 8); oracle(K, out, words64 & ~1ull, true);
        u64* in = fenced(words64); memcpy(in, plain, words64 * 8);
        MemTestArgs A{(u64)in, (u64)out, items, skip, 0};
        const u32 grid = one_per_thread_blocks(items);
        launch(grid, [&] {
            if (bits == 32) { if (masked) lite_test_word32_encrypt_masked(K, A); else lite_test_word32_encrypt_full(K, A); }
            else { if (masked) lite_test_word64_encrypt_masked(K, A); else lite_test_word64_encrypt_full(K, A); } }, RUST_THREADS);
        // expected plaintext: items written (not skipped, < items, or full mask: all round), others old
        std::vector<u64> exp(old, old + words64);
        auto skipped = [&](size_t i) { return masked && (i >= items || (skip > 0 && i % skip == skip - 1)); };
        for (size_t i = 0; i < round; ++i) if (!skipped(i)) {
            if (bits == 32) ((u32*)exp.data())[i] = ((u32*)plain)[i]; else exp[i] = plain[i]; }
        size_t cmp = (round * bits / 8 + 15) / 16 * 2;
        oracle(K, out, words64 & ~1ull, false);
        CHECK(memcmp(out, exp.data(), cmp * 8) == 0, "word%d %s encrypt items %zu skip %u", bits, masked ? "masked" : "full", items, skip);
        // decrypt: in = ciphertext of plain, out pre-filled with a sentinel
        u64* ct = fenced(words64); memcpy(ct, plain, words64 * 8); oracle(K, ct, words64 & ~1ull, true);
        for (size_t i = 0; i < words64; ++i) out[i] = 0x5555555555555555ull;
        MemTestArgs D{(u64)ct, (u64)out, items, skip, 0};
        launch(grid, [&] {
            if (bits == 32) { if (masked) lite_test_word32_decrypt_masked(K, D); else lite_test_word32_decrypt_full(K, D); }
            else { if (masked) lite_test_word64_decrypt_masked(K, D); else lite_test_word64_decrypt_full(K, D); } }, RUST_THREADS);
        // the full mask decrypts whole warps (as it encrypts them: tests/lite.rs compares the
        // whole buffer_words after a round trip)
        bool ok = true;
        for (size_t i = 0; i < round; ++i) {
            bool written = masked ? !skipped(i) : true;
            u64 got = bits == 32 ? ((u32*)out)[i] : out[i];
            u64 want = written ? (bits == 32 ? ((u32*)plain)[i] : plain[i]) : (bits == 32 ? 0x55555555ull : 0x5555555555555555ull);
            if (got != want) { ok = false; printf("  word %zu got %llx want %llx\n", i, got, want); break; }
        }
        CHECK(ok, "word%d %s decrypt items %zu skip %u", bits, masked ? "masked" : "full", items, skip);
        free(plain); free(old);  // the fenced buffers are left mapped (a few pages per case)
    };
    for (int bits : {32, 64}) for (bool masked : {true, false}) for (size_t items : {1, 3, 32, 61, 64, 100, 257})
        for (u32 skip : {0u, 3u, 7u}) { if (!masked && skip) continue; run_word(bits, masked, items, skip); }
    // v4
    for (size_t blocks : {1, 5, 40, 100}) {
        u64* plain = alloc16<u64>(2 * blocks); u64* out = alloc16<u64>(2 * blocks); u64* back = alloc16<u64>(2 * blocks);
        for (size_t i = 0; i < 2 * blocks; ++i) plain[i] = rng();
        MemTestArgs A{(u64)plain, (u64)out, blocks, 0, 0}; launch(2, [&] { lite_test_v4_encrypt(K, A); });
        std::vector<u64> exp(plain, plain + 2 * blocks); 
        // expected: ciphertext at out's addresses
        u64* e = alloc16<u64>(2 * blocks); memcpy(e, plain, 16 * blocks);
        for (size_t b = 0; b < blocks; ++b) { uint4 v; memcpy(&v, e + 2*b, 16); uint4 r = lite_encrypt_block_at(TT, K, (u64)(out + 2*b), v); memcpy(e + 2*b, &r, 16); }
        CHECK(memcmp(out, e, 16 * blocks) == 0, "v4 encrypt %zu", blocks);
        MemTestArgs D{(u64)out, (u64)back, blocks, 0, 0}; launch(3, [&] { lite_test_v4_decrypt(K, D); });
        CHECK(memcmp(back, plain, 16 * blocks) == 0, "v4 decrypt %zu", blocks);
    }
    printf("transcode done\n");
    // 3. element-wise
    {
        const u32 log_n = 6; const size_t n = 1 << log_n, limbs = 3, words = n * limbs;
        RheaModulus mods[3] = {{(1ull << 61) - 1, 0, 0, 0}, {1000000007ull, 0, 0, 0}, {998244353ull, 0, 0, 0}};
        u64 *a = alloc16<u64>(words), *b = alloc16<u64>(words), *c = alloc16<u64>(words), *ref = alloc16<u64>(words);
        for (size_t i = 0; i < words; ++i) { u64 q = mods[i >> log_n].value; a[i] = rng() % q; b[i] = rng() % q; c[i] = rng() % q; }
        LiteEwArgs P{(u64)ref, (u64)a, (u64)b, (u64)c, (u64)mods, words, log_n, 0};
        launch(2, [&] { lite_ew_plain(P); });
        bool ok = true; for (size_t i = 0; i < words; ++i) ok &= ref[i] == mod_mul_add(a[i], b[i], c[i], mods[i >> log_n]);
        CHECK(ok, "ew plain");
        u64* o2 = alloc16<u64>(words); P.out = (u64)o2; launch(3, [&] { lite_ew_plain_v2(P); }); CHECK(memcmp(o2, ref, words * 8) == 0, "ew plain v2");
        auto enc_copy = [&](const u64* src) { u64* d = alloc16<u64>(words); memcpy(d, src, words * 8); oracle(K, d, words, true); return d; };
        u64 *ea = enc_copy(a), *eb = enc_copy(b), *ec = enc_copy(c);
        struct V { const char* name; void (*k)(const LiteKeys, const LiteEwArgs); bool i, o; };
        // every instantiated variant (the lists of lite.cu)
#define EMU_EW_WORD(M, D, I, O) {"lite_ew_word_m" #M "_d" #D "_i" #I "_o" #O, lite_ew_word_m##M##_d##D##_i##I##_o##O, I, O},
#define EMU_EW_V4(D, I, O) {"lite_ew_v4_d" #D "_i" #I "_o" #O, lite_ew_v4_d##D##_i##I##_o##O, I, O},
        V vs[] = {LITE_EW_WORD_VARIANTS(EMU_EW_WORD) LITE_EW_V4_VARIANTS(EMU_EW_V4)};
        for (auto& v : vs) {
            u64* o = alloc16<u64>(words); memset(o, 0, words * 8);
            LiteEwArgs L{(u64)o, (u64)(v.i ? ea : a), (u64)(v.i ? eb : b), (u64)(v.i ? ec : c), (u64)mods, words, log_n, 0};
            launch(2, [&] { v.k(K, L); });
            if (v.o) oracle(K, o, words, false);
            CHECK(memcmp(o, ref, words * 8) == 0, "ew %s", v.name); ++variant_runs;
        }
        // masked word variant on a word count that is not a multiple of 32 (one limb of 2^6 = 64... use words-2)
        { u64* o = alloc16<u64>(words); memcpy(o, ref, words * 8); oracle(K, o, words, true);
          // overwrite the first words-2 words with the LITE result of (a,b,c): same values -> unchanged
          LiteEwArgs L{(u64)o, (u64)ea, (u64)eb, (u64)ec, (u64)mods, words - 3, log_n, 0};
          launch(1, [&] { lite_ew_word_m1_d1_i1_o1(K, L); }); oracle(K, o, words, false);
          CHECK(memcmp(o, ref, words * 8) == 0, "ew masked tail"); }
    }
    printf("elementwise done\n");
    // 3b. NTT stage
    for (u32 log_h : {1u, 3u, 5u}) {
        const u32 log_n = 6; const u64 n = 1 << log_n, limbs = 2, words = n * limbs, h = 1ull << log_h, groups = n / (2 * h);
        RheaModulus mods[2] = {{(1ull << 61) - 1, 0, 0, 0}, {998244353ull, 0, 0, 0}};
        u64 *x = alloc16<u64>(words), *tw = alloc16<u64>(limbs * groups), *ref = alloc16<u64>(words);
        for (size_t i = 0; i < words; ++i) x[i] = rng() % mods[i / n].value;
        for (size_t i = 0; i < limbs * groups; ++i) tw[i] = rng() % mods[i / groups].value;
        std::vector<u64> want(words);
        for (u64 l = 0; l < limbs; ++l) for (u64 k = 0; k < n / 2; ++k) {
            u64 g = k / h, j = k % h, i0 = l * n + g * 2 * h + j; const RheaModulus& m = mods[l];
            u64 wy = mod_mul(x[i0 + h], tw[l * groups + g], m);
            want[i0] = mod_add(x[i0], wy, m.value); want[i0 + h] = x[i0] >= wy ? x[i0] - wy : x[i0] + m.value - wy; }
        LiteNttStageArgs P{(u64)ref, (u64)x, (u64)tw, (u64)mods, words, log_n, log_h};
        launch(2, [&] { lite_ntt_stage_plain(P); });
        CHECK(memcmp(ref, want.data(), words * 8) == 0, "ntt stage plain h %llu", h);
        u64* ex = alloc16<u64>(words); memcpy(ex, x, words * 8); oracle(K, ex, words, true);
        struct V { const char* name; void (*k)(const LiteKeys, const LiteNttStageArgs); bool i, o; };
#define EMU_NTT(D, I, O) {"lite_ntt_stage_v4_d" #D "_i" #I "_o" #O, lite_ntt_stage_v4_d##D##_i##I##_o##O, I, O},
        V vs[] = {LITE_NTT_STAGE_VARIANTS(EMU_NTT)};
        for (auto& v : vs) {
            u64* o = alloc16<u64>(words); memset(o, 0, words * 8);
            LiteNttStageArgs L{(u64)o, (u64)(v.i ? ex : x), (u64)tw, (u64)mods, words, log_n, log_h};
            launch(3, [&] { v.k(K, L); });
            if (v.o) oracle(K, o, words, false);
            CHECK(memcmp(o, want.data(), words * 8) == 0, "ntt stage %s h %llu", v.name, h); ++variant_runs;
        }
    }
    printf("ntt stage done\n");
    // 4. gather
    {
        const u32 log_n = 7; const u64 n = 1 << log_n, rows = 3, words = n * rows; const u64 g = 5 * 5 * 5 % (2 * n);
        u64 *in = alloc16<u64>(words), *ref = alloc16<u64>(words);
        for (size_t i = 0; i < words; ++i) in[i] = rng();
        LiteGatherArgs A{(u64)ref, (u64)in, n, g, words, log_n, 0};
        launch(2, [&] { lite_gather_plain(A); });
        // ref check against the formula and permutation property
        bool ok = true; std::vector<int> seen(words, 0);
        for (u64 w = 0; w < words; ++w) { u64 i = w % n; u64 src = w - i + lite_gather_source(i, A); ok &= ref[w] == in[src]; seen[src]++; }
        for (auto s : seen) ok &= s == 1; CHECK(ok, "gather plain is a permutation");
        auto padded = [&](const u64* src, size_t len) { u64* d = alloc16<u64>(2 * len); for (size_t i = 0; i < len; ++i) { d[2*i] = src[i]; d[2*i+1] = 0; } oracle(K, d, 2 * len, true); return d; };
        auto dense = [&](const u64* src, size_t len) { u64* d = alloc16<u64>(len); memcpy(d, src, len * 8); oracle(K, d, len, true); return d; };
        u64* in_p = padded(in, words); u64* in_d = dense(in, words);
        struct V { const char* name; void (*k)(const LiteKeys, const LiteGatherArgs); int in_form, out_form; };  // 0 plain 1 dense 2 padded
#define EMU_GATHER(M, PI, PO, I, O) {"lite_gather_m" #M "_pi" #PI "_po" #PO "_i" #I "_o" #O, lite_gather_m##M##_pi##PI##_po##PO##_i##I##_o##O, I + PI, O + PO},
        V vs[] = {LITE_GATHER_VARIANTS(EMU_GATHER)};
        for (auto& v : vs) {
            u64* o = alloc16<u64>(2 * words); memset(o, 0, 16 * words);
            LiteGatherArgs L{(u64)o, (u64)(v.in_form == 0 ? in : v.in_form == 1 ? in_d : in_p), n, g, words, log_n, 0};
            launch(3, [&] { v.k(K, L); });
            std::vector<u64> got(words);
            if (v.out_form == 0) memcpy(got.data(), o, words * 8);
            else if (v.out_form == 1) { oracle(K, o, words, false); memcpy(got.data(), o, words * 8); }
            else { oracle(K, o, 2 * words, false); for (size_t i = 0; i < words; ++i) got[i] = o[2 * i]; }
            CHECK(memcmp(got.data(), ref, words * 8) == 0, "gather %s", v.name); ++variant_runs;
        }
    }
    printf("gather done\n");
    // 5. spmv
    for (int trial = 0; trial < 3; ++trial) {
        const u64 rows = trial == 0 ? 37 : trial == 1 ? 64 : 101, cols = 53; RheaModulus m{1000000007ull, 0, 0, 0};
        std::vector<u64> rp{0}, col, val;
        for (u64 r = 0; r < rows; ++r) { u64 len = rng() % (trial == 2 ? 40 : 13); if (r % 9 == 4) len = 0; for (u64 k = 0; k < len; ++k) { col.push_back(rng() % cols); val.push_back(rng() % m.value); } rp.push_back(col.size()); }
        std::vector<u64> x(cols); for (auto& v : x) v = rng() % m.value;
        std::vector<u64> ref(rows); for (u64 r = 0; r < rows; ++r) { u64 acc = 0; for (u64 k = rp[r]; k < rp[r+1]; ++k) acc = mod_add(acc, mod_mul(val[k], x[col[k]], m), m.value); ref[r] = acc; }
        auto plain = [&](const std::vector<u64>& v) { u64* d = alloc16<u64>(v.size() + 2); memcpy(d, v.data(), v.size() * 8); return d; };
        auto dense = [&](const std::vector<u64>& v) { size_t len = (v.size() + 1) & ~1ull; if (!len) len = 2; u64* d = alloc16<u64>(len); memset(d, 0, len * 8); memcpy(d, v.data(), v.size() * 8); oracle(K, d, len, true); return d; };
        auto padded = [&](const std::vector<u64>& v) { size_t len = v.size() ? v.size() : 1; u64* d = alloc16<u64>(2 * len); memset(d, 0, 16 * len); for (size_t i = 0; i < v.size(); ++i) d[2*i] = v[i]; oracle(K, d, 2 * len, true); return d; };
        u64 *p[4] = {plain(rp), plain(col), plain(val), plain(x)}, *d[4] = {dense(rp), dense(col), dense(val), dense(x)}, *q[4] = {padded(rp), padded(col), padded(val), padded(x)};
        u64* yo = alloc16<u64>(2 * rows + 2);
        LiteSpmvArgs PA{(u64)yo, (u64)p[0], (u64)p[1], (u64)p[2], (u64)p[3], (u64)&m, rows};
        launch(2, [&] { lite_spmv_plain(PA); });
        CHECK(memcmp(yo, ref.data(), rows * 8) == 0, "spmv plain trial %d", trial);
        struct V { const char* name; void (*k)(const LiteKeys, const LiteSpmvArgs); int in_form, out_form; };
#define EMU_SPMV(M, D, PI, PO, I, O) {"lite_spmv_m" #M "_d" #D "_pi" #PI "_po" #PO "_i" #I "_o" #O, lite_spmv_m##M##_d##D##_pi##PI##_po##PO##_i##I##_o##O, I + PI, O + PO},
        V vs[] = {LITE_SPMV_VARIANTS(EMU_SPMV)};
        for (auto& v : vs) {
            u64** src = v.in_form == 0 ? p : v.in_form == 1 ? d : q;
            u64* y = alloc16<u64>(2 * rows + 2); memset(y, 0, 16 * rows + 16);
            LiteSpmvArgs L{(u64)y, (u64)src[0], (u64)src[1], (u64)src[2], (u64)src[3], (u64)&m, rows};
            launch(2, [&] { v.k(K, L); });
            std::vector<u64> got(rows);
            if (v.out_form == 0) memcpy(got.data(), y, rows * 8);
            else if (v.out_form == 1) { size_t len = (rows + 1) & ~1ull; oracle(K, y, len, false); memcpy(got.data(), y, rows * 8); }
            else { oracle(K, y, 2 * rows, false); for (size_t i = 0; i < rows; ++i) got[i] = y[2 * i]; }
            CHECK(memcmp(got.data(), ref.data(), rows * 8) == 0, "spmv %s trial %d", v.name, trial); ++variant_runs;
        }
    }
    printf("spmv done\n");
    printf("benchmark variant runs checked against the plain kernels: %d\n", variant_runs);
    printf("%s: %d failures\n", fails ? "FAILED" : "ALL OK", fails);
    return fails != 0;
}
