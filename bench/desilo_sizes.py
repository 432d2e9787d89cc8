"""Peer sizes for issue 7: DESILO's serialised sizes of a fresh ciphertext, the relinearisation key
and one fixed rotation key at its N = 2^16 set (use_bootstrap=True parameters), in CPU mode
(sizes do not depend on the device).  usage: python3.12 desilo_sizes.py"""
import json, os, tempfile
import numpy as np
from desilofhe import Engine

eng = Engine(mode="cpu", use_bootstrap=True)
sk = eng.create_secret_key(); pk = eng.create_public_key(sk)
d = tempfile.mkdtemp(); res = {"peer": "desilofhe", "slots": eng.slot_count, "max_level": eng.max_level}
ct = eng.encrypt(np.random.uniform(-1, 1, eng.slot_count), pk)
eng.write_ciphertext(ct, f"{d}/ct"); res["ciphertext_MiB"] = round(os.path.getsize(f"{d}/ct") / 2**20, 2)
eng.write_relinearization_key(eng.create_relinearization_key(sk), f"{d}/rlk")
res["relin_key_MiB"] = round(os.path.getsize(f"{d}/rlk") / 2**20, 2)
eng.write_fixed_rotation_key(eng.create_fixed_rotation_key(sk, 1), f"{d}/rot")
res["rotation_key_1_MiB"] = round(os.path.getsize(f"{d}/rot") / 2**20, 2)
print(json.dumps(res))
