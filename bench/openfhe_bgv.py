"""Peer for Rhea's BGV CPU benchmarks: OpenFHE BGV timings at a matched ring, depth and dnum.

usage: python3.10 openfhe_bgv.py LOGN DEPTH DNUM [REPS] [T]
FIXEDMANUAL scaling, HYBRID key switching, plaintext modulus T (default 65537, batching). OpenFHE
chooses its own prime sizes for BGV; its log2 Q is printed so the match can be judged. Prints one
JSON object with the median time (ms) of encrypt, HEADD, HEMUL (mul + relinearise, no modulus
switch), modulus switch and HEROT (rotation by 1)."""
import sys, time, json, math, random, statistics, os
from openfhe import *

logn, depth, dnum = (int(a) for a in sys.argv[1:4])
reps = int(sys.argv[4]) if len(sys.argv) > 4 else 5
t = int(sys.argv[5]) if len(sys.argv) > 5 else 65537
p = CCParamsBGVRNS()
p.SetRingDim(1 << logn)
p.SetSecurityLevel(HEStd_NotSet)
p.SetPlaintextModulus(t)
p.SetMultiplicativeDepth(depth)
p.SetScalingTechnique(FIXEDMANUAL)
p.SetKeySwitchTechnique(HYBRID)
p.SetNumLargeDigits(dnum)
cc = GenCryptoContext(p)
for f in (PKE, KEYSWITCH, LEVELEDSHE):
    cc.Enable(f)
res = {"peer": "openfhe-bgv", "logN": logn, "depth": depth, "dnum": dnum, "t": t,
       "log2_Q": round(math.log2(cc.GetModulus()), 1), "threads": os.cpu_count()}
kp = cc.KeyGen(); cc.EvalMultKeyGen(kp.secretKey); cc.EvalRotateKeyGen(kp.secretKey, [1])
n = cc.GetRingDimension()
x = [random.randrange(0, t // 2) for _ in range(n)]; y = [random.randrange(0, t // 2) for _ in range(n)]
px = cc.MakePackedPlaintext(x)
cx = cc.Encrypt(kp.publicKey, px); cy = cc.Encrypt(kp.publicKey, cc.MakePackedPlaintext(y))

def bench(name, fn):
    out = fn(); times = []
    for _ in range(reps):
        s = time.perf_counter(); out = fn(); times.append(time.perf_counter() - s)
    res[name + "_ms"] = round(statistics.median(times) * 1e3, 3)
    return out

bench("encrypt", lambda: cc.Encrypt(kp.publicKey, px))
bench("add", lambda: cc.EvalAdd(cx, cy))
m = bench("mul_relin", lambda: cc.EvalMult(cx, cy))
bench("mod_switch", lambda: cc.ModReduce(m))
bench("rotate1", lambda: cc.EvalRotate(cx, 1))
print(json.dumps(res))
