"""OpenFHE's Python bindings: user-visible time of encrypt, add, mul+relin and rotate (the OpenFHE
half of bench/py-vs-openfhe.sh; bench/openfhe_boot.py is its bootstrapping half).

usage: python3.10 bench/py_openfhe_ops.py LOGN DEPTH SCALE_BITS FIRST_BITS DNUM [REPS]
Parameters and timing as bench/openfhe_ckks.py (FIXEDMANUAL, HYBRID key switching with DNUM
digits, full slots; the median of REPS single calls after a warm-up), plus encrypt from a numpy
float64 vector (x.tolist() -> MakeCKKSPackedPlaintext -> Encrypt under the public key: OpenFHE's
Python API takes lists) and decrypt. Prints one JSON object.
"""
import json
import math
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # see bench/openfhe_boot.py

import numpy as np  # noqa: E402
from openfhe import *  # noqa: E402,F403

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
res = {"peer": "openfhe-python", "logN": logn, "depth": depth, "dnum": dnum, "slots": slots,
       "log2_Q": round(math.log2(cc.GetModulus()), 1), "threads": os.cpu_count(), "reps": reps}
t = time.perf_counter()
kp = cc.KeyGen()
cc.EvalMultKeyGen(kp.secretKey)
cc.EvalRotateKeyGen(kp.secretKey, [1])
res["setup_s"] = round(time.perf_counter() - t, 3)
rng = np.random.default_rng(7)
x, y = rng.uniform(-1, 1, slots), rng.uniform(-1, 1, slots)


def encrypt(v):
    return cc.Encrypt(kp.publicKey, cc.MakeCKKSPackedPlaintext(v.tolist()))


def decrypt(ct):
    pt = cc.Decrypt(ct, kp.secretKey)
    pt.SetLength(slots)
    return np.array(pt.GetRealPackedValue())


cx, cy = encrypt(x), encrypt(y)


def bench(name, fn):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    res[name + "_ms"] = round(statistics.median(times) * 1e3, 3)


bench("encrypt", lambda: encrypt(x))
bench("add", lambda: cc.EvalAdd(cx, cy))
bench("mul_relin", lambda: cc.EvalMult(cx, cy))
bench("rotate1", lambda: cc.EvalRotate(cx, 1))
bench("decrypt", lambda: decrypt(cx))
got = decrypt(cc.Rescale(cc.EvalMult(cx, cy)))
res["mul_precision_bits"] = round(float(-np.log2(np.max(np.abs(got - x * y)))), 1)
print(json.dumps(res))
