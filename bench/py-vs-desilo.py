"""Side by side from Python, on the same device in one command: Rhea vs DESILO (`desilofhe`).

usage: python bench/py-vs-desilo.py [gpu|cpu] [--reps N] [--no-boot] [--json FILE]

Both are called as a Python user calls them, numpy in and out, with the same timing discipline
(the one of /work/main/.peers/desilo_bench.py): one warm-up, N calls back to back, then a
decryption of the last result that forces completion, divided by N.
- encrypt: numpy float64 vector (full slots) -> ciphertext under the public key
  (Rhea: encoder.encode + encryptor.encrypt; DESILO: engine.encrypt(x, pk));
- add; mul_relin: multiply + relinearise, no rescale (Rhea: ev.mul_relin; DESILO:
  engine.multiply(a, b, rlk)); rotate by 1 (DESILO: a fixed rotation key);
- bootstrap: full slots, input at level 0 (Rhea: boot_n16_levels13 on the GPU, 128-bit;
  DESILO: Engine(bootstrap=True) (1.x: use_bootstrap=True), its default bootstrappable parameters).
Two parameter sets, each side printing its slots and levels so that the match can be checked:
- "small": DESILO's default Engine (desilofhe 2.0: N = 2^14, 8192 slots, 7 levels) against Rhea's
  n14_logqp400_levels7 (the DESILO-comparable small set);
- "deep": DESILO's bootstrappable Engine (desilofhe 2.0: 2^15 slots, 17 levels) against Rhea's n16_logqp1520_levels26 (the
  DESILO-comparable deep set, N = 2^16) for the operations, and boot_n16_levels13 for bootstrap.
Without desilofhe installed, prints Rhea's side and says so.
"""

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import py_rhea_ops  # noqa: E402

import rhea  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("mode", nargs="?", default="gpu", choices=["gpu", "cpu"])
ap.add_argument("--reps", type=int, default=0)
ap.add_argument("--no-boot", action="store_true")
ap.add_argument("--rhea-boot-preset", default="")
ap.add_argument("--json")
args = ap.parse_args()
reps = args.reps or (50 if args.mode == "gpu" else 3)
boot = not args.no_boot

device = rhea.Device.cuda(0) if args.mode == "gpu" else rhea.Device.cpu()
boot_preset = args.rhea_boot_preset or (
    "boot_n16_levels13" if args.mode == "gpu" else "boot_test_n12_insecure")
sets = {"small": ("n14_logqp400_levels7", False), "deep": ("n16_logqp1520_levels26", boot)}
rhea_res = {}
for name, (preset, with_boot) in sets.items():
    print(f"== Rhea from Python on {device.name}: {name} ({preset})", flush=True)
    rhea_res[name] = py_rhea_ops.run(device, preset, reps,
                                     boot_preset if with_boot else "none", "amortised")
    print(json.dumps(rhea_res[name]), flush=True)


def desilo(mode, use_bootstrap, time_bootstrap):
    from desilofhe import Engine

    res = {"peer": "desilofhe", "mode": mode, "use_bootstrap": use_bootstrap}
    t = time.perf_counter()
    if use_bootstrap:
        try:
            eng = Engine(mode=mode, bootstrap=True)  # desilofhe >= 2
        except TypeError:
            eng = Engine(mode=mode, use_bootstrap=True)  # desilofhe 1.x
    else:
        eng = Engine(mode=mode)
    res["engine_s"] = round(time.perf_counter() - t, 3)
    res["slots"], res["max_level"] = eng.slot_count, eng.max_level
    sk = eng.create_secret_key()
    pk = eng.create_public_key(sk)
    rlk = eng.create_relinearization_key(sk)
    rk1 = eng.create_fixed_rotation_key(sk, 1)
    rng = np.random.default_rng(7)
    x, y = rng.uniform(-1, 1, eng.slot_count), rng.uniform(-1, 1, eng.slot_count)
    cx, cy = eng.encrypt(x, pk), eng.encrypt(y, pk)

    def bench(fn, n):
        out = fn()
        eng.decrypt(out, sk)
        t = time.perf_counter()
        for _ in range(n):
            out = fn()
        eng.decrypt(out, sk)
        return round((time.perf_counter() - t) / n * 1e3, 3)

    res["encrypt_ms"] = bench(lambda: eng.encrypt(x, pk), reps)
    res["add_ms"] = bench(lambda: eng.add(cx, cy), reps)
    res["mul_relin_ms"] = bench(lambda: eng.multiply(cx, cy, rlk), reps)
    res["rotate1_ms"] = bench(lambda: eng.rotate(cx, rk1), reps)
    m = eng.rescale(eng.multiply(cx, cy, rlk))
    res["mul_precision_bits"] = round(float(-np.log2(np.max(np.abs(eng.decrypt(m, sk) - x * y)))), 1)
    if use_bootstrap and time_bootstrap:
        conj = eng.create_conjugation_key(sk)
        t = time.perf_counter()
        bk = eng.create_bootstrap_key(sk)
        res["bootkey_s"] = round(time.perf_counter() - t, 3)
        low = eng.encrypt(x, pk, 0)
        res["bootstrap_ms"] = bench(lambda: eng.bootstrap(low, rlk, conj, bk),
                                    10 if mode == "gpu" else 1)
        b = eng.bootstrap(low, rlk, conj, bk)
        res["boot_level_after"] = b.level
        res["boot_precision_bits"] = round(float(-np.log2(np.max(np.abs(eng.decrypt(b, sk) - x)))), 1)
    return res


desilo_res = {}
try:
    for name, (_, with_boot) in sets.items():
        print(f"== DESILO ({args.mode}): {name}", flush=True)
        desilo_res[name] = desilo(args.mode, name == "deep", with_boot)
        print(json.dumps(desilo_res[name]), flush=True)
except ImportError as e:
    print(f"desilofhe is not installed here ({e}); Rhea's side only")

for name in sets:
    r, d = rhea_res[name], desilo_res.get(name)
    print()
    print(f"{name + ': ms from Python':<24} {'Rhea':>10} {'DESILO':>10} {'DESILO/Rhea':>12}")
    for op in ["encrypt", "add", "mul_relin", "rotate1", "bootstrap"]:
        k = op + "_ms"
        rv, dv = r.get(k), (d or {}).get(k)
        if rv is None and dv is None:
            continue
        ratio = f"{dv / rv:.1f}x" if (rv and dv) else "-"
        print(f"{op:<24} {rv if rv is not None else '-':>10} {dv if dv is not None else '-':>10} {ratio:>12}")
    for k in ["slots", "max_level", "mul_precision_bits", "boot_level_after", "boot_precision_bits"]:
        if k in r or (d and k in d):
            print(f"{k:<24} {r.get(k, '-')!s:>10} {(d or {}).get(k, '-')!s:>10}")
if args.json:
    with open(args.json, "w") as f:
        json.dump({"rhea": rhea_res, "desilo": desilo_res}, f, indent=1)
