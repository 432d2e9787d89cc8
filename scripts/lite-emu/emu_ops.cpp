// CPU emulation of kernels/lite_ops.cu (scripts/lite-emu.sh): the all-data mode's kernels run with
// one std::thread per thread (common.cuh here) on buffers at their own host addresses, plain or in
// LITE's memory form, against independent host oracles:
//   - element-wise: every op, N = 16, 32, 64, rows 1-3, first_table 1, plain/protected mixes,
//     in place (out = a, out = b), grids smaller than the work;
//   - NTT: the naive negacyclic evaluation (entry i = a(psi^(2·bitrev(i)+1))) for forward, and
//     forward(inverse(y)) = y, for N = 2 … 64 and 2^11 … 2^13 (the Rust side's splits), both paths (chunks only, R = 1; columns + chunks
//     with several R and groups), plain and protected;
//   - centred conversion: exact CRT with __int128 (x centred in (-Q/2, Q/2], then x mod p_j);
//   - automorphism: a random permutation (also pairs from one source block).
// Protected outputs are checked to differ from their plaintext in memory.
#define LITE_DYN_SHARED(T, name) static T name[1 << 16]
#include "lite_ops.cu"
#include <vector>
#include <thread>
#include <random>
#include <cstring>
#include <algorithm>
thread_local Dim threadIdx, blockIdx; Dim blockDim, gridDim; thread_local Warp* cur_warp; thread_local Block* cur_block;
template <class F> void launch(u32 gx, u32 gy, u32 threads, F f) {
    blockDim = {threads, 1, 1}; gridDim = {gx, gy, 1};
    for (u32 by = 0; by < gy; ++by) for (u32 b = 0; b < gx; ++b) {
        std::vector<Warp> ws((threads + 31) / 32); Block blk; blk.threads = threads; std::vector<std::thread> ts;
        for (u32 t = 0; t < threads; ++t) ts.emplace_back([&, t] {
            threadIdx = {t, 0, 0}; blockIdx = {b, by, 0}; cur_warp = &ws[t / 32]; cur_block = &blk;
            f(); cur_warp->exit_lane(t & 31); });
        for (auto& t : ts) t.join();
    }
}
static LiteTables TT; static unsigned char S_[256];
static u32 be(const unsigned char* p) { return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3]; }
static void expand(const unsigned char* key, u32* rk) {
    static const u32 rcon[10] = {0x01000000,0x02000000,0x04000000,0x08000000,0x10000000,0x20000000,0x40000000,0x80000000,0x1b000000,0x36000000};
    for (int i = 0; i < 4; ++i) rk[i] = be(key + 4*i);
    for (int r = 0; r < 10; ++r) { u32 t = rk[4*r+3]; t = (t << 8) | (t >> 24);
        u32 s = (u32)S_[t >> 24] << 24 | (u32)S_[(t >> 16) & 255] << 16 | (u32)S_[(t >> 8) & 255] << 8 | S_[t & 255];
        rk[4*r+4] = rk[4*r] ^ s ^ rcon[r]; rk[4*r+5] = rk[4*r+1] ^ rk[4*r+4]; rk[4*r+6] = rk[4*r+2]^rk[4*r+5]; rk[4*r+7] = rk[4*r+3]^rk[4*r+6]; }
}
static LiteKeys keys(const unsigned char* k1, const unsigned char* k2) {
    LiteKeys K; expand(k1, K.k1_enc); expand(k2, K.k2_enc);
    u32* d = K.k1_dec; const u32* e = K.k1_enc;
    for (int r = 0; r <= 10; ++r) for (int i = 0; i < 4; ++i) d[4*r+i] = e[4*(10-r)+i];
    for (int k = 4; k < 40; ++k) { u32 w = d[k]; d[k] = TT.td[0][S_[w >> 24]] ^ TT.td[1][S_[(w >> 16) & 255]] ^ TT.td[2][S_[(w >> 8) & 255]] ^ TT.td[3][S_[w & 255]]; }
    return K;
}
static LiteKeys KK;
static void oracle(u64* w, size_t words, bool enc) {
    for (size_t b = 0; b + 1 < words; b += 2) {
        uint4 v; memcpy(&v, w + b, 16);
        uint4 r = enc ? lite_encrypt_block_at(TT, KK, (u64)(w + b), v) : lite_decrypt_block_at(TT, KK, (u64)(w + b), v);
        memcpy(w + b, &r, 16);
    }
}
static int fails = 0, checks = 0;
#define CHECK(c, ...) do { checks++; if (!(c)) { fails++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)
std::mt19937_64 rng(11);
typedef unsigned __int128 u128;
static u64 mulm(u64 a, u64 b, u64 q) { return (u64)((u128)a * b % q); }
static u64 powm(u64 b, u64 e, u64 q) { u64 r = 1; b %= q; while (e) { if (e & 1) r = mulm(r, b, q); b = mulm(b, b, q); e >>= 1; } return r; }
static bool is_prime(u64 n) {
    if (n < 4) return n >= 2; if (n % 2 == 0) return false;
    u64 d = n - 1; int s = 0; while (d % 2 == 0) { d /= 2; ++s; }
    for (u64 a : {2ull, 3ull, 5ull, 7ull, 11ull, 13ull, 17ull, 19ull, 23ull, 29ull, 31ull, 37ull}) {
        u64 x = powm(a, d, n); if (x == 1 || x == n - 1) continue;
        bool comp = true; for (int r = 1; r < s; ++r) { x = mulm(x, x, n); if (x == n - 1) { comp = false; break; } }
        if (comp) return false;
    }
    return true;
}
// primes ≡ 1 mod 2^13 below `start`, descending
static std::vector<u64> primes(u64 start, int count) {
    std::vector<u64> v; for (u64 q = (start >> 13 << 13) + 1; (int)v.size() < count; q -= 1ull << 13) if (is_prime(q)) v.push_back(q);
    return v;
}
// a buffer with `pad` words of slack before the data (the data 16-byte aligned)
static u64* alloc16(size_t n) { return (u64*)aligned_alloc(16, ((n * 8 + 15) / 16) * 16 + 64); }
static u64 rev(u64 i, u32 bits) { u64 r = 0; for (u32 b = 0; b < bits; ++b) if (i >> b & 1) r |= 1ull << (bits - 1 - b); return r; }

// ---- the ring ----------------------------------------------------------------------------------
static const u32 LIMBS = 5;
static std::vector<u64> Q;
static RheaModulus MODS[LIMBS];

// ---- element-wise --------------------------------------------------------------------------------
static u64 ew_host(u32 op, u64 a, u64 b, u64 c, u64 w, u64 q) {
    switch (op) {
        case EW_ADD: return (a + b) % q;
        case EW_SUB: return (a + q - b) % q;
        case EW_MUL: return mulm(a, b, q);
        case EW_MUL_ADD: return (mulm(a, b, q) + c) % q;
        case EW_MUL_SCALAR: return mulm(a, w, q);
        case EW_ADD_SCALAR: return (a + w) % q;
        case EW_SUB_MUL_SCALAR: return mulm((a + q - b) % q, w, q);
        case EW_COPY: return a;
        default: return (a % q + w) % q;  // EW_REDUCE_BROADCAST
    }
}
static void test_ew() {
    int runs = 0;
    for (u32 log_n : {4u, 5u, 6u}) for (u32 rows = 1; rows <= 3; ++rows) for (u32 op = 0; op <= 8; ++op) for (u32 mix = 0; mix < 4; ++mix) {
        const u32 n = 1u << log_n, words = rows * n, ft = 1;
        const bool bcast = op == EW_REDUCE_BROADCAST;
        // mix 0: all plain; 1: all protected; 2: out protected, inputs mixed; 3: in place (out = a, or = b for mix 3 with b)
        const bool po = mix != 0, pa = mix == 1 || mix == 3, pb = mix == 1 || mix == 2, pc = mix != 0 && mix != 2;
        std::vector<u64> A(words), B(words), C(words), W(rows);
        for (u32 i = 0; i < words; ++i) { const u64 q = Q[ft + i / n]; A[i] = bcast ? rng() : rng() % q; B[i] = rng() % q; C[i] = rng() % q; }
        for (u32 r = 0; r < rows; ++r) W[r] = rng() % Q[ft + r];
        auto place = [&](const std::vector<u64>& v, bool prot) { u64* p = alloc16(v.size()); memcpy(p, v.data(), v.size() * 8); if (prot) oracle(p, v.size(), true); return p; };
        const bool in_place = mix == 3 && !bcast;
        const bool in_place_b = in_place && op != EW_COPY && (op == EW_ADD || op == EW_SUB || op == EW_MUL || op == EW_MUL_ADD || op == EW_SUB_MUL_SCALAR) && (log_n == 5);
        u64* a = place(A, pa); u64* b = place(B, pb); u64* c = place(C, pc); u64* w = place(W, false);
        u64* out = in_place ? (in_place_b ? b : a) : alloc16(words);
        const bool out_prot = in_place ? (in_place_b ? pb : pa) : po;
        LiteEwArgs E{}; E.out = (u64)out; E.a = (u64)a; E.moduli = (u64)MODS; E.words = words; E.log_n = log_n; E.first_table = ft; E.op = op;
        const bool needs_b = op == EW_ADD || op == EW_SUB || op == EW_MUL || op == EW_MUL_ADD || op == EW_SUB_MUL_SCALAR;
        const bool needs_c = op == EW_MUL_ADD;
        const bool needs_w = op == EW_MUL_SCALAR || op == EW_ADD_SCALAR || op == EW_SUB_MUL_SCALAR || op == EW_REDUCE_BROADCAST;
        if (needs_b) E.b = (u64)b; if (needs_c) E.c = (u64)c; if (needs_w) E.w = (u64)w;
        E.flags = (out_prot ? 1u : 0) | (pa ? 2u : 0) | (pb ? 4u : 0) | (pc ? 8u : 0);
        launch(1 + (runs % 2), 1, 32, [&] { lite_ops_ew(KK, E); });
        std::vector<u64> raw(out, out + words);
        if (out_prot) oracle(out, words, false);
        int bad = 0, same = 0;
        for (u32 i = 0; i < words; ++i) {
            const u64 q = Q[ft + i / n];
            const u64 av = bcast ? A[i % n] : A[i];
            const u64 want = ew_host(op, av, B[i], C[i], W[i / n], q);
            bad += out[i] != want; same += raw[i] == want;
        }
        CHECK(bad == 0, "ew op %u N %u rows %u mix %u in_place %d/%d: %d wrong words", op, n, rows, mix, in_place, in_place_b, bad);
        if (out_prot) CHECK(same == 0, "ew op %u mix %u: %d plaintext words in memory", op, mix, same);
        ++runs;
        free(a); free(b); free(c); free(w); if (!in_place) free(out);
    }
    printf("lite_ops_ew: %d launches\n", runs);
}

// ---- NTT -------------------------------------------------------------------------------------------
struct HostNtt { std::vector<u64> tw; std::vector<u64> ninv; };
static HostNtt make_tables(u32 log_n) {
    const u32 n = 1u << log_n; HostNtt h; h.tw.assign((size_t)LIMBS * 4 * n, 0); h.ninv.assign(2 * LIMBS, 0);
    for (u32 l = 0; l < LIMBS; ++l) {
        const u64 q = Q[l];
        u64 psi = 0;
        for (u64 g = 2;; ++g) { psi = powm(g, (q - 1) / (2 * n), q); if (powm(psi, n, q) == q - 1) break; }
        const u64 psi_inv = powm(psi, q - 2, q);
        u64 cur = 1, curi = 1;
        for (u32 k = 0; k < n; ++k) {
            h.tw[(size_t)l * 4 * n + rev(k, log_n)] = cur;  h.tw[(size_t)l * 4 * n + 2 * n + rev(k, log_n)] = curi;
            cur = mulm(cur, psi, q); curi = mulm(curi, psi_inv, q);
        }
        // Shoup companions are unused by the emulation's shoup_mul (exact); fill them anyway
        for (u32 k = 0; k < n; ++k) {
            h.tw[(size_t)l * 4 * n + n + k] = (u64)(((u128)h.tw[(size_t)l * 4 * n + k] << 64) / q);
            h.tw[(size_t)l * 4 * n + 3 * n + k] = (u64)(((u128)h.tw[(size_t)l * 4 * n + 2 * n + k] << 64) / q);
        }
        h.ninv[2 * l] = powm(n, q - 2, q); h.ninv[2 * l + 1] = (u64)(((u128)h.ninv[2 * l] << 64) / q);
    }
    return h;
}
// naive: entry i = a(psi^(2·rev(i)+1)), psi = root_powers[rev(1)] (= psi^1)
static std::vector<u64> naive_forward(const std::vector<u64>& a, u32 log_n, u64 q, u64 psi) {
    const u32 n = 1u << log_n; std::vector<u64> y(n);
    for (u32 i = 0; i < n; ++i) {
        const u64 x = powm(psi, 2 * rev(i, log_n) + 1, q); u64 acc = 0, p = 1;
        for (u32 k = 0; k < n; ++k) { acc = (acc + mulm(a[k], p, q)) % q; p = mulm(p, x, q); }
        y[i] = acc;
    }
    return y;
}
// the launch sequence of rhea_cuda::lite::ops::ntt (log_r = 0: chunks only)
static void run_ntt(u64* data, const HostNtt& h, u32 rows, u32 ft, u32 log_n, u32 log_r, u32 gcols, u32 gch, bool prot, bool inverse, u32 threads) {
    LiteNttArgs A{}; A.data = (u64)data; A.moduli = (u64)MODS; A.tw = (u64)h.tw.data(); A.ninv = (u64)h.ninv.data();
    A.first_table = ft; A.log_n = log_n; A.log_r = log_r;
    const u32 base_flags = (prot ? 1u : 0) | (inverse ? 2u : 0);
    auto cols = [&](bool scale) { A.group = gcols; A.flags = base_flags | (scale ? 4u : 0); launch(2, rows, threads, [&] { lite_ops_ntt_cols(KK, A); }); };
    auto chunks = [&](bool scale) { A.group = gch; A.flags = base_flags | (scale ? 4u : 0); launch(2, rows, threads, [&] { lite_ops_ntt_chunks(KK, A); }); };
    if (log_r == 0) { chunks(inverse); return; }
    if (!inverse) { cols(false); chunks(false); } else { chunks(false); cols(true); }
}
static void test_ntt() {
    int runs = 0;
    struct Case { u32 log_n, log_r, gcols, gch; };
    std::vector<Case> cases = {{1, 0, 1, 1}, {2, 0, 1, 1}, {2, 1, 1, 1}, {4, 0, 1, 1}, {4, 2, 1, 1}, {4, 2, 2, 2}, {4, 3, 1, 4},
                               {5, 3, 1, 1}, {5, 3, 2, 4}, {5, 1, 8, 1}, {5, 0, 1, 1}, {6, 3, 4, 8}, {6, 3, 1, 1}, {6, 4, 2, 2}, {6, 0, 1, 1},
                               // the splits rhea_cuda::lite::ops::ntt_split picks (256 threads, as launched)
                               {11, 0, 1, 1}, {12, 6, 16, 32}, {13, 7, 8, 32}};
    for (const Case& cs : cases) for (u32 rows : {1u, 3u}) for (bool prot : {false, true}) {
        if (cs.log_n > 6 && rows > 1) continue;  // the naive oracle is O(N^2)
        const u32 threads = cs.log_n > 6 ? 256 : 32 + 32 * (runs % 2);
        const u32 n = 1u << cs.log_n, words = rows * n, ft = 1;
        const HostNtt h = make_tables(cs.log_n);
        std::vector<u64> X(words);
        for (u32 i = 0; i < words; ++i) X[i] = rng() % Q[ft + i / n];
        u64* d = alloc16(words); memcpy(d, X.data(), words * 8); if (prot) oracle(d, words, true);
        run_ntt(d, h, rows, ft, cs.log_n, cs.log_r, cs.gcols, cs.gch, prot, false, threads);
        std::vector<u64> raw(d, d + words);
        if (prot) oracle(d, words, false);
        int bad = 0, same = 0;
        for (u32 r = 0; r < rows; ++r) {
            const u32 l = ft + r; const u64 q = Q[l];
            const u64 psi = h.tw[(size_t)l * 4 * n + rev(1, cs.log_n)];
            std::vector<u64> a(X.begin() + r * n, X.begin() + (r + 1) * n);
            const std::vector<u64> y = naive_forward(a, cs.log_n, q, psi);
            for (u32 i = 0; i < n; ++i) { bad += d[r * n + i] != y[i]; same += raw[r * n + i] == y[i]; }
        }
        CHECK(bad == 0, "ntt forward N %u log_r %u groups %u/%u rows %u prot %d: %d wrong words", n, cs.log_r, cs.gcols, cs.gch, rows, prot, bad);
        if (prot && n > 2) CHECK(same == 0, "ntt forward prot: %d plaintext words in memory", same);
        // inverse of random evaluations, then the naive forward must give them back
        std::vector<u64> Y(words);
        for (u32 i = 0; i < words; ++i) Y[i] = rng() % Q[ft + i / n];
        memcpy(d, Y.data(), words * 8); if (prot) oracle(d, words, true);
        run_ntt(d, h, rows, ft, cs.log_n, cs.log_r, cs.gcols, cs.gch, prot, true, cs.log_n > 6 ? threads : 32);
        if (prot) oracle(d, words, false);
        bad = 0;
        for (u32 r = 0; r < rows; ++r) {
            const u32 l = ft + r; const u64 q = Q[l];
            const u64 psi = h.tw[(size_t)l * 4 * n + rev(1, cs.log_n)];
            std::vector<u64> a(d + r * n, d + (r + 1) * n);
            for (u64 v : a) bad += v >= q;
            const std::vector<u64> y = naive_forward(a, cs.log_n, q, psi);
            for (u32 i = 0; i < n; ++i) bad += y[i] != Y[r * n + i];
        }
        CHECK(bad == 0, "ntt inverse N %u log_r %u groups %u/%u rows %u prot %d: %d wrong words", n, cs.log_r, cs.gcols, cs.gch, rows, prot, bad);
        free(d);
        runs += 2;
    }
    printf("lite_ops_ntt_cols/_chunks: %d transforms\n", runs);
}

// ---- centred conversion ------------------------------------------------------------------------------
static void test_convert() {
    int runs = 0;
    const std::vector<u64> from_all = primes(1ull << 40, 3);      // Q < 2^120: exact CRT in __int128
    const std::vector<u64> to_all = primes(1ull << 59, 3);
    for (u32 L = 1; L <= 3; ++L) for (u32 log_n : {4u, 5u, 6u}) for (u32 mix = 0; mix < 3; ++mix) {
        const u32 n = 1u << log_n, Kp = 3;
        std::vector<u64> from(from_all.begin(), from_all.begin() + L);
        RheaModulus fm[3], tm[3];
        for (u32 i = 0; i < L; ++i) fm[i] = {from[i], 0, 0, 0};
        for (u32 j = 0; j < Kp; ++j) tm[j] = {to_all[j], 0, 0, 0};
        u128 Qb = 1; for (u64 q : from) Qb *= q;
        std::vector<u64> qhi(L), qhp((size_t)L * Kp), qmp(Kp), qinv(L);
        for (u32 i = 0; i < L; ++i) {
            const u128 qh = Qb / from[i];
            qhi[i] = powm((u64)(qh % from[i]), from[i] - 2, from[i]);
            for (u32 j = 0; j < Kp; ++j) qhp[(size_t)i * Kp + j] = (u64)(qh % to_all[j]);
            const double inv = 1.0 / (double)from[i]; memcpy(&qinv[i], &inv, 8);
        }
        for (u32 j = 0; j < Kp; ++j) qmp[j] = (u64)(Qb % to_all[j]);
        // targets: j = 2 into row 0, j = 0 into row 2 (row 1 untouched), so order and placement matter
        std::vector<u64> tg = {2, 0, 0, 2};
        if (mix == 2) tg = {1, 1};
        std::vector<u64> X((size_t)L * n);
        for (u32 i = 0; i < L * n; ++i) X[i] = rng() % from[i / n];
        // a few extreme values: 0, Q-1 (= -1), and (Q-1)/2 (the largest positive) in column 0..2
        for (u32 i = 0; i < L; ++i) { X[i * n] = 0; X[i * n + 1] = (u64)((Qb - 1) % from[i]); X[i * n + 2] = (u64)(((Qb - 1) / 2) % from[i]); }
        const bool pi = mix >= 1, po = mix == 1 || mix == 2;
        u64* in = alloc16(L * n); memcpy(in, X.data(), (size_t)L * n * 8); if (pi) oracle(in, L * n, true);
        const u32 orows = 3;
        u64* out = alloc16(orows * n); for (u32 i = 0; i < orows * n; ++i) out[i] = 0x5a5a5a5a5a5a5a5aull;
        LiteConvArgs A{}; A.in = (u64)in; A.out = (u64)out; A.from_mods = (u64)fm; A.to_mods = (u64)tm;
        A.qhat_inv = (u64)qhi.data(); A.q_inv = (u64)qinv.data(); A.qhat_mod_p = (u64)qhp.data(); A.q_mod_p = (u64)qmp.data();
        A.targets = (u64)tg.data(); A.from_len = L; A.to_len = Kp; A.ntargets = (u32)tg.size() / 2; A.log_n = log_n;
        A.flags = (po ? 1u : 0) | (pi ? 2u : 0);
        launch(1 + (runs % 2), 1, 32, [&] { lite_ops_convert(KK, A); });
        std::vector<u64> raw(out, out + orows * n);
        int bad = 0, same = 0;
        for (size_t t = 0; t < tg.size(); t += 2) {
            const u64 j = tg[t], row = tg[t + 1], p = to_all[j];
            if (po) oracle(out + row * n, n, false);
            for (u32 c = 0; c < n; ++c) {
                u128 x = 0; for (u32 i = 0; i < L; ++i) x = (x + (u128)mulm(X[i * n + c], qhi[i], from[i]) * (Qb / from[i])) % Qb;
                u64 want;
                if (x > Qb / 2) { const u128 neg = Qb - x; want = (u64)((p - (u64)(neg % p)) % p); }
                else want = (u64)(x % p);
                bad += out[row * n + c] != want; same += raw[row * n + c] == want;
            }
        }
        if (mix != 2) for (u32 c = 0; c < n; ++c) bad += out[n + c] != 0x5a5a5a5a5a5a5a5aull;  // row 1 untouched
        CHECK(bad == 0, "convert L %u N %u mix %u: %d wrong words", L, n, mix, bad);
        if (po) CHECK(same == 0, "convert: %d plaintext words in memory", same);
        free(in); free(out); ++runs;
    }
    printf("lite_ops_convert: %d conversions\n", runs);
}

// ---- automorphism ------------------------------------------------------------------------------------
static void test_automorphism() {
    int runs = 0;
    for (u32 log_n : {4u, 5u, 6u}) for (u32 rows : {1u, 2u}) for (u32 mix = 0; mix < 4; ++mix) {
        const u32 n = 1u << log_n, words = rows * n;
        std::vector<u64> perm(n); for (u32 i = 0; i < n; ++i) perm[i] = i;
        std::shuffle(perm.begin(), perm.end(), rng);
        if (n >= 4) { perm[2] = 7 % n; perm[3] = 6 % n; }  // one output block from one source block, swapped
        std::vector<u64> X(words); for (auto& x : X) x = rng();
        const bool pa = mix & 1, po = mix & 2;
        u64* a = alloc16(words); memcpy(a, X.data(), words * 8); if (pa) oracle(a, words, true);
        u64* out = alloc16(words);
        LiteAutArgs A{}; A.out = (u64)out; A.a = (u64)a; A.perm = (u64)perm.data(); A.words = words; A.log_n = log_n;
        A.flags = (po ? 1u : 0) | (pa ? 2u : 0);
        launch(1 + (runs % 2), 1, 32, [&] { lite_ops_automorphism(KK, A); });
        std::vector<u64> raw(out, out + words);
        if (po) oracle(out, words, false);
        int bad = 0, same = 0;
        for (u32 i = 0; i < words; ++i) { const u64 want = X[(i / n) * n + perm[i % n]]; bad += out[i] != want; same += raw[i] == want; }
        CHECK(bad == 0, "automorphism N %u rows %u mix %u: %d wrong words", n, rows, mix, bad);
        if (po) CHECK(same == 0, "automorphism: %d plaintext words in memory", same);
        free(a); free(out); ++runs;
    }
    printf("lite_ops_automorphism: %d launches\n", runs);
}

int main() {
    launch(1, 1, 32, [&] { lite_load_tables(TT); });
    for (int i = 0; i < 256; ++i) S_[i] = TT.te[2][i] >> 24;
    unsigned char k1[16], k2[16]; for (int i = 0; i < 16; ++i) { k1[i] = i * 7 + 1; k2[i] = 200 - 3 * i; }
    KK = keys(k1, k2);
    Q = primes(1ull << 60, LIMBS);
    for (u32 l = 0; l < LIMBS; ++l) MODS[l] = {Q[l], 0, 0, 0};
    test_ew();
    test_ntt();
    test_convert();
    test_automorphism();
    printf("lite_ops.cu: %d checks: %s\n", checks, fails ? "FAILED" : "all equal to the host oracles");
    return fails ? 1 : 0;
}
