"""Peer sizes for issue 7: OpenFHE's serialised (BINARY) sizes of a fresh CKKS ciphertext, the
relinearisation key and one rotation key, at parameters matched to Rhea's n16_logqp1440_levels24
(N = 2^16, 60-bit first prime + 24 × 40-bit, dnum 3).
usage: python3.10 openfhe_sizes.py"""
import json, os, tempfile, random
from openfhe import *

p = CCParamsCKKSRNS()
p.SetRingDim(1 << 16); p.SetSecurityLevel(HEStd_128_classic)
p.SetMultiplicativeDepth(24); p.SetScalingModSize(40); p.SetFirstModSize(60)
p.SetScalingTechnique(FIXEDMANUAL); p.SetKeySwitchTechnique(HYBRID); p.SetNumLargeDigits(3)
p.SetBatchSize(1 << 15)
cc = GenCryptoContext(p)
for f in (PKE, KEYSWITCH, LEVELEDSHE):
    cc.Enable(f)
kp = cc.KeyGen()
d = tempfile.mkdtemp()
res = {"peer": "openfhe", "format": "BINARY"}
ct = cc.Encrypt(kp.publicKey, cc.MakeCKKSPackedPlaintext([random.uniform(-1, 1) for _ in range(1 << 15)]))
SerializeToFile(f"{d}/ct", ct, BINARY); res["ciphertext_MiB"] = os.path.getsize(f"{d}/ct") / 2**20
cc.EvalMultKeyGen(kp.secretKey)
cc.SerializeEvalMultKey(f"{d}/rlk", BINARY); res["relin_key_MiB"] = os.path.getsize(f"{d}/rlk") / 2**20
cc.EvalRotateKeyGen(kp.secretKey, [1])
cc.SerializeEvalAutomorphismKey(f"{d}/rot", BINARY); res["rotation_key_1_MiB"] = os.path.getsize(f"{d}/rot") / 2**20
print(json.dumps({k: (round(v, 2) if isinstance(v, float) else v) for k, v in res.items()}))
