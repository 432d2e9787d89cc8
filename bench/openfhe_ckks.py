"""Peer for Rhea's CPU benchmarks: OpenFHE CKKS timings with parameters matched to a Rhea preset.

usage: python3.10 openfhe_ckks.py LOGN DEPTH SCALE_BITS FIRST_BITS DNUM [REPS]
Prints one JSON object: log2 Q, dnum, and the median time (ms) of add, mul+relin (no rescale),
rescale, rotate by 1, and hoisted rotations, all with FIXEDMANUAL scaling so each step is separate.
Based on ../shared/peers/openfhe_bench.py (same library, same warm-up discipline)."""
import sys, time, json, random, math, statistics
from openfhe import *

logn, depth, scale_bits, first_bits, dnum = (int(a) for a in sys.argv[1:6])
reps = int(sys.argv[6]) if len(sys.argv) > 6 else 5
p = CCParamsCKKSRNS()
p.SetRingDim(1 << logn)
p.SetSecurityLevel(HEStd_128_classic if logn >= 15 else HEStd_NotSet)
p.SetMultiplicativeDepth(depth)
p.SetScalingModSize(scale_bits)
p.SetFirstModSize(first_bits)
p.SetScalingTechnique(FIXEDMANUAL)
p.SetKeySwitchTechnique(HYBRID)
p.SetNumLargeDigits(dnum)
p.SetBatchSize(1 << (logn - 1))
cc = GenCryptoContext(p)
for f in (PKE, KEYSWITCH, LEVELEDSHE):
    cc.Enable(f)
slots = 1 << (logn - 1)
res = {"peer": "openfhe", "logN": logn, "depth": depth, "scale_bits": scale_bits, "dnum": dnum,
       "log2_Q": round(math.log2(cc.GetModulus()), 1) if cc.GetModulus() != float("inf") else None,
       "threads": __import__("os").cpu_count()}
t = time.perf_counter(); kp = cc.KeyGen(); cc.EvalMultKeyGen(kp.secretKey)
cc.EvalRotateKeyGen(kp.secretKey, [1, 2, 3, 4]); res["keygen_s"] = round(time.perf_counter() - t, 3)
x = [random.uniform(-1, 1) for _ in range(slots)]; y = [random.uniform(-1, 1) for _ in range(slots)]
cx = cc.Encrypt(kp.publicKey, cc.MakeCKKSPackedPlaintext(x))
cy = cc.Encrypt(kp.publicKey, cc.MakeCKKSPackedPlaintext(y))

def bench(name, fn):
    out = fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter(); out = fn(); times.append(time.perf_counter() - t)
    res[name + "_ms"] = round(statistics.median(times) * 1e3, 3)
    return out

bench("add", lambda: cc.EvalAdd(cx, cy))
m = bench("mul_relin", lambda: cc.EvalMult(cx, cy))
bench("rescale", lambda: cc.Rescale(m))
bench("rotate1", lambda: cc.EvalRotate(cx, 1))
pre = cc.EvalFastRotationPrecompute(cx)
m2 = 2 * (1 << logn)
bench("hoisted4", lambda: [cc.EvalFastRotation(cx, k, m2, pre) for k in (1, 2, 3, 4)])
print(json.dumps(res))
