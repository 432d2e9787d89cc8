"""Peer for Rhea's GPU benchmarks: DESILO FHE (CKKS) timings of the basic operations.

usage: python3 desilo_ckks.py gpu|cpu [n16]
Without `n16`: DESILO's default engine (N = 2^14). With `n16`: its bootstrappable N = 2^16 set
(about 27 levels), timed WITHOUT creating bootstrap keys. Prints one JSON object with the median
time (ms) of encrypt, add, mul+relin, rescale and rotate; the device is synchronised inside the
timed region by a decrypt after the loop (amortised over the repetitions), as in
../shared/peers/desilo_bench.py."""
import sys, time, json
import numpy as np
from desilofhe import Engine

mode = sys.argv[1]
n16 = "n16" in sys.argv
eng = Engine(mode=mode, use_bootstrap=True) if n16 else Engine(mode=mode)
res = {"peer": "desilofhe", "mode": mode, "slots": eng.slot_count, "max_level": eng.max_level}
sk = eng.create_secret_key()
pk = eng.create_public_key(sk)
rlk = eng.create_relinearization_key(sk)
rk1 = eng.create_fixed_rotation_key(sk, 1)
x = np.random.uniform(-1, 1, eng.slot_count); y = np.random.uniform(-1, 1, eng.slot_count)
cx = eng.encrypt(x, pk); cy = eng.encrypt(y, pk)
reps = 50 if mode == "gpu" else 3

def bench(name, fn):
    out = fn(); _ = eng.decrypt(out, sk)
    t = time.perf_counter()
    for _ in range(reps):
        out = fn()
    _ = eng.decrypt(out, sk)
    res[name + "_ms"] = round((time.perf_counter() - t) / reps * 1e3, 4)
    return out

bench("encrypt", lambda: eng.encrypt(x, pk))
bench("add", lambda: eng.add(cx, cy))
m = bench("mul_relin", lambda: eng.multiply(cx, cy, rlk))
bench("rescale", lambda: eng.rescale(m))
bench("rotate1", lambda: eng.rotate(cx, rk1))
res["level_of_inputs"] = cx.level
print(json.dumps(res))
