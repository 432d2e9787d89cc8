"""Rhea from Python: user-visible time of encrypt, add, mul+relin, rotate and bootstrap.

usage: python bench/py_rhea_ops.py [--device gpu|cpu|best] [--preset NAME] [--reps N]
           [--boot-preset NAME|none] [--mode amortised|median] [--json FILE]

Each figure is what a Python caller sees, numpy in and out of the library:
- encrypt: encoder.encode(numpy float64 array) + encryptor.encrypt (public key), full slots;
- add: ev.add(a, b); mul_relin: ev.mul_relin(a, b) (multiply and relinearise, no rescale);
- rotate: ev.rotate(a, 1); bootstrap: boot.bootstrap(ct at level 0), full slots.
--mode median (default on the CPU): the median of --reps single calls, each followed by a device
synchronisation (the latency of one call; OpenFHE's scripts time the same way).
--mode amortised (default on the GPU): one warm-up, --reps calls back to back, then a decryption
of the last result that forces completion, divided by --reps (DESILO's script,
/work/main/.peers/desilo_bench.py, times the same way, so bench/py-vs-desilo.py compares like
with like).
Importable: `run(device, preset, reps, boot_preset, mode)` returns the dict printed as JSON.
"""

import argparse
import json
import statistics
import time

import numpy as np

import rhea
from rhea import ckks


def _timer(device, mode, reps, finish):
    def bench(fn):
        out = fn()  # warm-up
        finish(out)
        if mode == "median":
            times = []
            for _ in range(reps):
                t = time.perf_counter()
                out = fn()
                device.synchronize()
                times.append(time.perf_counter() - t)
            return statistics.median(times) * 1e3
        t = time.perf_counter()
        for _ in range(reps):
            out = fn()
        finish(out)
        return (time.perf_counter() - t) / reps * 1e3

    return bench


def run(device, preset, reps, boot_preset="none", mode=None):
    mode = mode or ("amortised" if device.is_gpu else "median")
    res = {"peer": "rhea-python", "device": device.name, "preset": preset, "mode": mode,
           "reps": reps, "rhea": rhea.__version__}
    t = time.perf_counter()
    ctx = ckks.CkksContext(rhea.CkksParameters.preset(preset), device)
    kg = ckks.KeyGenerator(ctx)
    sk = kg.secret_key()
    pk = kg.public_key(sk)
    ev = ckks.Evaluator(ctx, kg.relinearization_key(sk), kg.galois_keys(sk, [1]))
    device.synchronize()
    res["setup_s"] = round(time.perf_counter() - t, 3)
    enc, dec = ckks.Encoder(ctx), ckks.Decryptor(ctx, sk)
    encryptor = ckks.Encryptor(ctx, pk, evaluator=ev)
    res["slots"], res["max_level"] = enc.slots, ctx.params.max_level
    rng = np.random.default_rng(7)
    x, y = rng.uniform(-1, 1, enc.slots), rng.uniform(-1, 1, enc.slots)
    cx, cy = encryptor.encrypt(enc.encode(x)), encryptor.encrypt(enc.encode(y))
    bench = _timer(device, mode, reps, lambda ct: enc.decode(dec.decrypt(ct)))
    res["encrypt_ms"] = bench(lambda: encryptor.encrypt(enc.encode(x)))
    res["add_ms"] = bench(lambda: ev.add(cx, cy))
    res["mul_relin_ms"] = bench(lambda: ev.mul_relin(cx, cy))
    res["rotate1_ms"] = bench(lambda: ev.rotate(cx, 1))
    res["decrypt_ms"] = _timer(device, "median", max(3, min(reps, 20)), lambda ct: None)(
        lambda: enc.decode(dec.decrypt(cx)))
    got = enc.decode(dec.decrypt(ev.rescale(ev.mul_relin(cx, cy))))
    res["mul_precision_bits"] = round(float(-np.log2(np.max(np.abs(got - x * y)))), 1)
    if boot_preset and boot_preset != "none":
        p = ckks.BootstrapPreset.by_name(boot_preset)
        bctx = ckks.CkksContext(p.params, device)
        bkg = ckks.KeyGenerator(bctx)
        bsk = bkg.secret_key()
        t = time.perf_counter()
        boot = ckks.Bootstrapper(bctx, bkg, bsk, p)
        device.synchronize()
        res["boot_preset"] = boot_preset
        res["bootkey_s"] = round(time.perf_counter() - t, 3)
        benc, bdec = ckks.Encoder(bctx), ckks.Decryptor(bctx, bsk)
        low = ckks.Evaluator(bctx).drop_to_level(
            ckks.Encryptor(bctx, bsk).encrypt(benc.encode(x[: benc.slots])), 0)
        breps = max(1, reps // 5) if device.is_gpu else max(1, min(reps, 3))
        bbench = _timer(device, mode, breps, lambda ct: benc.decode(bdec.decrypt(ct)))
        res["bootstrap_ms"] = bbench(lambda: boot.bootstrap(low))
        out = boot.bootstrap(low)
        res["boot_level_after"] = out.level
        err = np.max(np.abs(benc.decode(bdec.decrypt(out)) - x[: benc.slots]))
        res["boot_precision_bits"] = round(float(-np.log2(err)), 1)
    for k, v in list(res.items()):
        if k.endswith("_ms"):
            res[k] = round(v, 3)
    return res


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="best")
    ap.add_argument("--preset", default="n16_logqp1520_levels26")
    ap.add_argument("--reps", type=int, default=0)
    ap.add_argument("--boot-preset", default="none")
    ap.add_argument("--mode", choices=["amortised", "median"])
    ap.add_argument("--json")
    a = ap.parse_args()
    dev = {"best": rhea.Device.best, "cpu": rhea.Device.cpu,
           "gpu": lambda: rhea.Device.cuda(0)}[a.device]()
    r = run(dev, a.preset, a.reps or (50 if dev.is_gpu else 5), a.boot_preset, a.mode)
    print(json.dumps(r, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(r, f, indent=1)
