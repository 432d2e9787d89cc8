"""Peer for Rhea's CKKS precision tests: the precision (bits, -log2 of the largest slot error) of a
fresh OpenFHE public-key encryption, with parameters matched to Rhea's test preset
(N = 2^13, scale 2^40, first prime 60 bits, FIXEDMANUAL, uniform ternary secret, sigma 3.19).

usage: python3.10 openfhe_precision.py [LOGN] [TRIALS]
Prints one JSON object: min / median bits over TRIALS encryptions of random vectors in [-1, 1]."""
import sys, json, math, random, statistics
from openfhe import *

logn = int(sys.argv[1]) if len(sys.argv) > 1 else 13
trials = int(sys.argv[2]) if len(sys.argv) > 2 else 5
p = CCParamsCKKSRNS()
p.SetRingDim(1 << logn)
p.SetSecurityLevel(HEStd_NotSet)
p.SetMultiplicativeDepth(2)
p.SetScalingModSize(40)
p.SetFirstModSize(60)
p.SetScalingTechnique(FIXEDMANUAL)
p.SetBatchSize(1 << (logn - 1))
cc = GenCryptoContext(p)
for f in (PKE, KEYSWITCH, LEVELEDSHE):
    cc.Enable(f)
kp = cc.KeyGen()
slots = 1 << (logn - 1)
bits = []
for _ in range(trials):
    x = [random.uniform(-1, 1) for _ in range(slots)]
    ct = cc.Encrypt(kp.publicKey, cc.MakeCKKSPackedPlaintext(x))
    pt = cc.Decrypt(kp.secretKey, ct)
    pt.SetLength(slots)
    got = pt.GetRealPackedValue()
    err = max(abs(a - b) for a, b in zip(got, x))
    bits.append(-math.log2(err))
print(json.dumps({"peer": "openfhe", "logN": logn, "scale_bits": 40, "encryption": "public key",
                  "trials": trials, "min_bits": round(min(bits), 2),
                  "median_bits": round(statistics.median(bits), 2)}))
