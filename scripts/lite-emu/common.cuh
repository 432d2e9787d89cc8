// common.cuh for the CPU emulation of LITE's kernels (scripts/lite-emu.sh): the typedefs and
// modular arithmetic the kernels use, CUDA's built-ins on the host, and warps as 32 std::threads
// whose warp intrinsics (__shfl*_sync, __ballot_sync, __reduce_max_sync, __syncthreads) are
// exchange barriers over the lanes of their mask: a lane missing from a mask it names deadlocks
// (reported after 10 s), a lane calling with a mask without itself aborts, and lanes run freely
// between intrinsics, so intra-warp races that SIMT execution usually hides show up.
// Not a CUDA implementation: modular products use __int128 (not Barrett), no PDL, no caches.
#pragma once
#include <cstdint>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <condition_variable>
#include <chrono>
#include <array>
typedef unsigned long long u64;
typedef unsigned int u32;
typedef long long i64;
#define RHEA_INLINE inline
#define __device__
#define __forceinline__ inline
#define __global__
#define __shared__ static
#define RHEA_OFFSETOF(T, f) offsetof(T, f)
struct uint4 { u32 x, y, z, w; };
inline uint4 make_uint4(u32 a, u32 b, u32 c, u32 d) { return {a, b, c, d}; }
struct ulonglong2 { u64 x, y; };
inline ulonglong2 make_ulonglong2(u64 a, u64 b) { return {a, b}; }
struct Dim { u32 x = 0, y = 0, z = 0; };
extern thread_local Dim threadIdx, blockIdx;
extern Dim blockDim, gridDim;
inline u32 __funnelshift_r(u32 lo, u32 hi, u32 s) { s &= 31; return s ? (lo >> s) | (hi << (32 - s)) : lo; }
inline u32 __byte_perm(u32 x, u32 y, u32 s) {
    unsigned char b[8]; for (int i = 0; i < 4; ++i) { b[i] = x >> (8*i); b[4+i] = y >> (8*i); }
    u32 r = 0; for (int i = 0; i < 4; ++i) r |= (u32)b[(s >> (4*i)) & 7] << (8*i); return r; }
inline int __ffs(u32 x) { return x ? __builtin_ctz(x) + 1 : 0; }
inline u64 __brevll(u64 x) { u64 r = 0; for (int i = 0; i < 64; ++i) if (x >> i & 1) r |= 1ull << (63 - i); return r; }

struct Warp {
    std::mutex mu; std::condition_variable cv;
    struct Slot { u64 gen = 0; u32 arrived = 0; u32 left = 0; bool draining = false; u64 vals[32]; };
    std::map<u32, Slot> slots;
    u32 exited = 0;  // lanes whose thread has returned from the kernel
    // A warp intrinsic whose mask names a lane that has exited is undefined on Volta and later
    // (a full-mask shuffle after some lanes returned): reported at once, not as a deadlock.
    void check_exited(u32 mask, u32 pending, u32 lane) {
        if (pending & exited) { fprintf(stderr, "lane %u: warp intrinsic with mask %08x names exited lanes %08x\n", lane, mask, pending & exited); abort(); }
    }
    void exit_lane(u32 lane) { std::lock_guard<std::mutex> lk(mu); exited |= 1u << lane; cv.notify_all(); }
    std::array<u64, 32> exchange(u32 mask, u32 lane, u64 v) {
        if (!(mask >> lane & 1)) { fprintf(stderr, "lane %u calls with mask %08x without itself\n", lane, mask); abort(); }
        std::unique_lock<std::mutex> lk(mu);
        check_exited(mask, mask, lane);
        Slot& s = slots[mask];
        while (s.draining) cv.wait(lk);
        const u64 my = s.gen;
        s.vals[lane] = v; s.arrived |= 1u << lane;
        if (s.arrived == mask) { s.draining = true; s.left = mask; cv.notify_all(); }
        else while (!(s.draining && s.gen == my)) {
            check_exited(mask, mask & ~s.arrived, lane);
            if (cv.wait_for(lk, std::chrono::seconds(10)) == std::cv_status::timeout && !(s.draining && s.gen == my)) {
                fprintf(stderr, "deadlock: mask %08x arrived %08x lane %u\n", mask, s.arrived, lane); abort(); }
        }
        std::array<u64, 32> out; for (int i = 0; i < 32; ++i) out[i] = (mask >> i & 1) ? s.vals[i] : 0xdeadbeefdeadbeefull;
        s.left &= ~(1u << lane);
        if (s.left == 0) { s.draining = false; s.arrived = 0; s.gen++; cv.notify_all(); }
        return out;
    }
};
extern thread_local Warp* cur_warp;
// The threads of one block (__syncthreads over all of them).
struct Block {
    std::mutex mu; std::condition_variable cv; u32 threads = 0, arrived = 0; u64 gen = 0;
    void sync() {
        std::unique_lock<std::mutex> lk(mu); const u64 my = gen;
        if (++arrived == threads) { arrived = 0; gen++; cv.notify_all(); }
        else while (gen == my) {
            if (cv.wait_for(lk, std::chrono::seconds(10)) == std::cv_status::timeout && gen == my) {
                fprintf(stderr, "deadlock in __syncthreads: %u of %u arrived\n", arrived, threads); abort(); }
        }
    }
};
extern thread_local Block* cur_block;
inline u32 emu_lane() { return threadIdx.x & 31; }
template <typename T> inline T __shfl_sync(u32 mask, T v, u32 src) {
    auto a = cur_warp->exchange(mask, emu_lane(), (u64)v); return (T)a[src & 31]; }
template <typename T> inline T __shfl_xor_sync(u32 mask, T v, u32 x) {
    auto a = cur_warp->exchange(mask, emu_lane(), (u64)v); return (T)a[(emu_lane() ^ x) & 31]; }
template <typename T> inline T __shfl_down_sync(u32 mask, T v, u32 d) {
    auto a = cur_warp->exchange(mask, emu_lane(), (u64)v); u32 s = emu_lane() + d; return s < 32 ? (T)a[s] : v; }
inline u32 __ballot_sync(u32 mask, bool p) {
    auto a = cur_warp->exchange(mask, emu_lane(), p); u32 r = 0; for (int i = 0; i < 32; ++i) if ((mask >> i & 1) && a[i]) r |= 1u << i; return r; }
inline u32 __reduce_max_sync(u32 mask, u32 v) {
    auto a = cur_warp->exchange(mask, emu_lane(), v); u32 r = 0; for (int i = 0; i < 32; ++i) if (mask >> i & 1) r = a[i] > r ? a[i] : r; return r; }
inline void __syncthreads() { cur_block->sync(); }
inline void pdl_trigger() {}
inline void pdl_wait() {}
struct RheaModulus { u64 value, ratio_hi, ratio_lo, mont_inv; };
inline RheaModulus load_modulus(const RheaModulus* m, u32 i) { return m[i]; }
inline u64 mod_add(u64 a, u64 b, u64 q) { u64 s = a + b; return s >= q ? s - q : s; }
inline u64 mod_sub(u64 a, u64 b, u64 q) { return a >= b ? a - b : a + q - b; }
inline u64 mod_mul(u64 a, u64 b, const RheaModulus& m) { return (u64)((unsigned __int128)a * b % m.value); }
inline u64 mod_mul_add(u64 a, u64 b, u64 c, const RheaModulus& m) { return (u64)(((unsigned __int128)a * b + c) % m.value); }
inline u64 reduce_u64(u64 a, const RheaModulus& m) { return a % m.value; }
inline u64 shoup_mul(u64 a, u64 w, u64, u64 q) { return (u64)((unsigned __int128)a * w % q); }
// f64 built-ins: the host's IEEE-754 double operations (round to nearest; compiled without FMA
// contraction: -ffp-contract=off in lite-emu.sh)
#include <cmath>
#include <cstring>
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ull2double_rn(u64 a) { return (double)a; }
inline double __longlong_as_double(long long a) { double d; memcpy(&d, &a, 8); return d; }
inline ulonglong2 ld_dep2(const u64* p) { return {p[0], p[1]}; }
inline void store2(u64* p, ulonglong2 v) { p[0] = v.x; p[1] = v.y; }
// host versions of the header's asm helpers
inline u32 lite_ld(const u32* p) { return *(volatile const u32*)p; }
inline u64 lite_ld(const u64* p) { return *(volatile const u64*)p; }
inline uint4 lite_ld4(const void* p) { return *(const uint4*)p; }
template <typename P, typename V> inline P lite_after(P p, V) { return p; }
inline u32 lite_laneid() { return emu_lane(); }
