"""Peer for `rhea bench boot` on the CPU: OpenFHE's CKKS bootstrapping at a matched ring
dimension, slot count and number of levels left.

usage: python3.10 openfhe_boot.py [LOGN] [SLOTS] [--json FILE] [--reps R] [--levels-left L]
           [--scaling FLEXIBLEAUTOEXT|FLEXIBLEAUTO|FIXEDMANUAL] [--scale-bits B]
           [--datatype complex|real] [--secret uniform|sparse]
LOGN defaults to 14, SLOTS to N/2 (full slots), --levels-left to Rhea's preset's (2 at N = 2^12,
4 at N = 2^14), --reps to 3. Prints a table and one JSON object (also written to --json FILE).

Parameters (OpenFHE's own recommendations for bootstrapping, openfhe-development
src/pke/examples/simple-ckks-bootstrapping.cpp and its CKKS bootstrapping docs):
- HEStd_NotSet: N = 2^12 and 2^14 are INSECURE at bootstrapping depth, for OpenFHE as for Rhea
  (the modulus is far above the 128-bit bound for these N); the output says so.
- UNIFORM_TERNARY secret (OpenFHE's default and the secure one; `--secret sparse` picks its
  SPARSE_TERNARY test distribution, which Rhea's sparse-secret encapsulation is not),
  HYBRID key switching with OpenFHE's default number of digits.
- FirstModSize 60, ScalingModSize 59 (the docs: 59 for the best precision with 64-bit words;
  `--scale-bits` may pick 50..59). The scale Δ is therefore 2^59 here, Rhea's is 2^40.
- Scaling technique FLEXIBLEAUTOEXT by default: OpenFHE's docs recommend it for the best
  precision (an extra tower at the bottom takes the encryption noise away). Measured here
  (2026-11-27, 2 shared cores): at N = 2^12 FLEXIBLEAUTOEXT 18.8 / 20.6 bits min / mean,
  FLEXIBLEAUTO 18.6 / 20.5, FIXEDMANUAL 11.6 / 14.4; at N = 2^14 FLEXIBLEAUTOEXT and
  FLEXIBLEAUTO both 15.2-15.7 / 18.2-18.3 with latencies within the load's noise (13.3-14.3 s vs
  13.7-13.8 s in back-to-back runs). ScalingModSize 50 gives 8.7 bits at N = 2^12. `--scaling`
  picks another technique to compare.
- Level budget [3, 3] (3 CoeffToSlot and 3 SlotToCoeff levels, like Rhea's presets), default
  baby-step dims, full slots.
- CKKSDataType COMPLEX (OpenFHE 1.6.1 bootstraps complex slots with it): inputs complex,
  real and imaginary parts uniform in [-1, 1] (numpy default_rng(34)), as Rhea's. A second run
  on real inputs (imaginary parts 0) reads the real part of the output, as Rhea's `_real`
  figures. `--datatype real` builds OpenFHE's default REAL context instead (real inputs only).
- Depth = levelsAvailableAfterBootstrap + GetBootstrapDepth([3, 3], secret). OpenFHE counts
  levels as "towers consumed", Rhea as the refreshed ciphertext's level index (= the
  multiplications it can still take). To match the meaning, the script MEASURES the levels
  left: it multiplies the refreshed ciphertext by fresh unit-modulus ciphertexts until a
  multiplication throws or its result decrypts wrong (error above 2^-10 against the refreshed
  ciphertext's own decryption times the factors), and reports
  that count (`levels_left`) next to OpenFHE's own formula (depth - level - (noiseScaleDeg - 1),
  `levels_left_openfhe_formula`; with FLEXIBLEAUTOEXT it says one less than the measured count,
  the extra tower taking a multiplication). `--levels-left L` sets the target;
  levelsAvailableAfterBootstrap starts at L and is raised until the measured count reaches L
  (the script says so when it has to).
- Input: encrypted at the lowest level OpenFHE's EvalBootstrap accepts: level `depth` with
  FLEXIBLEAUTOEXT (checked: depth + 1 throws "Removing last element of DCRTPoly renders it
  invalid"), else `depth - 1` (its example's "depleted ciphertext"); the script tries `depth`
  first and falls back.
- Timing: one warm-up EvalBootstrap, then the median of R calls (time.perf_counter, wall time,
  OpenFHE's OpenMP threads = all cores unless OMP_NUM_THREADS says otherwise; OMP_WAIT_POLICY
  defaults to passive, see below). keygen_s: KeyGen + EvalMultKeyGen +
  EvalBootstrapSetup + EvalBootstrapKeyGen. key_bytes: the binary serialization of the EvalMult
  and automorphism keys OpenFHE holds (SerializeEval*KeyString(BINARY)), a few bytes of framing
  per key above the raw size.
- Precision as Rhea computes it: the error of slot j is |out_j - z_j| (complex modulus);
  precision_bits_min = -log2(max error), precision_bits_mean = -log2(mean error).
"""
import json
import math
import os
import statistics
import sys
import time

# OpenMP's default (active, spinning) wait policy collapses on a machine whose cores other
# processes share: on the 2-core box, N = 2^12 took 6-27 s a bootstrap with it and 1.5-2.7 s with
# "passive" (2.5 s with OMP_NUM_THREADS=1). Set before OpenFHE (and its OpenMP runtime) loads; the caller's value
# wins.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numpy as np  # noqa: E402
import openfhe as ofhe  # noqa: E402
from openfhe import *  # noqa: E402,F403


def arg(name, default):
    if name in sys.argv:
        i = sys.argv.index(name)
        return sys.argv[i + 1]
    return default


flags_with_value = {"--json", "--reps", "--levels-left", "--scaling", "--scale-bits",
                    "--datatype", "--secret"}
pos = []
skip = False
for a in sys.argv[1:]:
    if skip:
        skip = False
        continue
    if a in flags_with_value:
        skip = True
        continue
    if a.startswith("--"):
        sys.exit(f"unknown option {a}")
    pos.append(a)
logn = int(pos[0]) if pos else 14
n_ring = 1 << logn
slots = int(pos[1]) if len(pos) > 1 else n_ring // 2
json_path = arg("--json", None)
reps = int(arg("--reps", "3"))
rhea_levels = {12: 2, 14: 4, 16: 13, 17: 24}
target_levels = int(arg("--levels-left", str(rhea_levels.get(logn, 4))))
scaling_name = arg("--scaling", "FLEXIBLEAUTOEXT")
scale_bits = int(arg("--scale-bits", "59"))
datatype = arg("--datatype", "complex")
secret_name = arg("--secret", "uniform")
level_budget = [3, 3]
if slots & (slots - 1) or not 0 < slots <= n_ring // 2:
    sys.exit(f"slots must be a power of two <= N/2 = {n_ring // 2}")
if not 50 <= scale_bits <= 59:
    sys.exit("--scale-bits must be in 50..59")
scaling = {"FLEXIBLEAUTOEXT": FLEXIBLEAUTOEXT, "FLEXIBLEAUTO": FLEXIBLEAUTO,
           "FIXEDMANUAL": FIXEDMANUAL}[scaling_name]
secret = {"uniform": UNIFORM_TERNARY, "sparse": SPARSE_TERNARY}[secret_name]
complex_mode = datatype == "complex"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def build(levels_after):
    depth = levels_after + CryptoContext.GetBootstrapDepth(level_budget, secret)
    p = CCParamsCKKSRNS()
    p.SetSecretKeyDist(secret)
    p.SetSecurityLevel(HEStd_NotSet)
    p.SetRingDim(n_ring)
    p.SetBatchSize(slots)
    p.SetScalingTechnique(scaling)
    p.SetScalingModSize(scale_bits)
    p.SetFirstModSize(60)
    p.SetKeySwitchTechnique(HYBRID)
    p.SetMultiplicativeDepth(depth)
    if complex_mode:
        p.SetCKKSDataType(COMPLEX)
    cc = GenCryptoContext(p)
    for f in (PKE, KEYSWITCH, LEVELEDSHE, ADVANCEDSHE, FHE):
        cc.Enable(f)
    if cc.GetRingDimension() != n_ring:
        sys.exit(f"OpenFHE chose N = {cc.GetRingDimension()}, not {n_ring}")
    t = time.perf_counter()
    kp = cc.KeyGen()
    cc.EvalMultKeyGen(kp.secretKey)
    cc.EvalBootstrapSetup(level_budget, [0, 0], slots)
    cc.EvalBootstrapKeyGen(kp.secretKey, slots)
    keygen_s = time.perf_counter() - t
    return cc, kp, depth, keygen_s


def encrypt(cc, kp, v, level):
    pt = cc.MakeCKKSPackedPlaintext(np.asarray(v), 1, level, None, slots)
    return cc.Encrypt(kp.publicKey, pt)


def decrypt(cc, kp, ct):
    pt = cc.Decrypt(kp.secretKey, ct)
    pt.SetLength(slots)
    return np.array(pt.GetCKKSPackedValue(), dtype=complex)


def measured_levels_left(cc, kp, ct, rng):
    """Multiplications the refreshed ciphertext still takes (each by a fresh ciphertext of
    unit-modulus values, so the magnitude stays put) while decrypting right."""
    if complex_mode:
        w = np.exp(2j * np.pi * rng.uniform(size=slots))
    else:
        w = rng.choice([-1.0, 1.0], size=slots)
    cw = encrypt(cc, kp, w, 0)
    # Against the refreshed ciphertext's own decryption: this tests the levels, not the
    # bootstrapping error.
    expect = decrypt(cc, kp, ct)
    count = 0
    cur = ct
    for _ in range(64):
        try:
            cur = cc.EvalMult(cur, cw)
            out = decrypt(cc, kp, cur)
        except Exception:  # OpenFHE throws when no tower is left
            break
        expect = expect * w
        if np.max(np.abs(out - expect)) > 2.0 ** -10 * max(1.0, np.max(np.abs(expect))):
            break
        count += 1
    return count


def precision(out, z, real):
    err = np.abs(out.real - z.real) if real else np.abs(out - z)
    return -math.log2(err.max()), -math.log2(err.mean())


rng = np.random.default_rng(34)
levels_after = target_levels
for attempt in range(4):
    log(f"== OpenFHE {ofhe.__version__ if hasattr(ofhe, '__version__') else ''}: N = 2^{logn}, "
        f"{slots} slots, levelsAvailableAfterBootstrap = {levels_after}, {scaling_name}, "
        f"{datatype}, key generation ...")
    cc, kp, depth, keygen_s = build(levels_after)
    if complex_mode:
        z = rng.uniform(-1, 1, slots) + 1j * rng.uniform(-1, 1, slots)
    else:
        z = rng.uniform(-1, 1, slots).astype(complex)
    # The lowest level EvalBootstrap accepts: `depth` with FLEXIBLEAUTOEXT (its extra tower),
    # `depth - 1` otherwise (its example's "depleted ciphertext"); the warm-up finds it.
    for input_level in (depth, depth - 1):
        low = encrypt(cc, kp, z, input_level)
        try:
            out_ct = cc.EvalBootstrap(low)  # warm-up
            break
        except Exception as e:
            log(f"   EvalBootstrap at level {input_level} fails ({str(e)[-80:]}); trying one level higher")
    else:
        sys.exit("EvalBootstrap fails at every input level tried")
    left = measured_levels_left(cc, kp, out_ct, rng)
    if left >= target_levels:
        break
    log(f"   measured {left} levels left < {target_levels}: one more level after bootstrap")
    levels_after += target_levels - left
times = []
for _ in range(reps):
    t = time.perf_counter()
    out_ct = cc.EvalBootstrap(low)
    times.append(time.perf_counter() - t)
latency_ms = statistics.median(times) * 1e3
pmin, pmean = precision(decrypt(cc, kp, out_ct), z, real=not complex_mode)
res = {
    "peer": "openfhe",
    "openfhe_version": getattr(ofhe, "__version__", None),
    "security": "INSECURE (HEStd_NotSet)",
    "ring_dim": n_ring,
    "slots": slots,
    "latency_ms": latency_ms,
    "latency_all_ms": [t * 1e3 for t in times],
    "reps": reps,
    "precision_bits_min": pmin,
    "precision_bits_mean": pmean,
}
if complex_mode:
    x = rng.uniform(-1, 1, slots).astype(complex)
    outx = decrypt(cc, kp, cc.EvalBootstrap(encrypt(cc, kp, x, input_level)))
    res["precision_bits_min_real"], res["precision_bits_mean_real"] = precision(outx, x, True)
else:
    res["precision_bits_min_real"], res["precision_bits_mean_real"] = pmin, pmean
try:
    key_bytes = len(SerializeEvalMultKeyString(BINARY, "")) + \
        len(SerializeEvalAutomorphismKeyString(BINARY, ""))
except Exception as e:  # pragma: no cover - older bindings
    log(f"   key bytes unavailable: {e}")
    key_bytes = None
try:
    log2_q = round(math.log2(cc.GetModulus()), 1)
except Exception:
    log2_q = None
if log2_q is not None and not math.isfinite(log2_q):
    log2_q = None  # Q beyond a double (GetModulus returns inf)
res.update({
    "levels_left": left,
    "levels_left_openfhe_formula": depth - out_ct.GetLevel() - (out_ct.GetNoiseScaleDeg() - 1),
    "output_level": out_ct.GetLevel(),
    "output_noise_scale_deg": out_ct.GetNoiseScaleDeg(),
    "keygen_s": keygen_s,
    "key_bytes": key_bytes,
    "threads": int(os.environ.get("OMP_NUM_THREADS", os.cpu_count())),
    "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
    "params": {
        "scaling_technique": scaling_name,
        "ckks_data_type": "COMPLEX" if complex_mode else "REAL",
        "secret_key_dist": secret_name.upper() + "_TERNARY",
        "security_level": "HEStd_NotSet",
        "first_mod_bits": 60,
        "scaling_mod_bits": scale_bits,
        "level_budget": level_budget,
        "levels_available_after_bootstrap": levels_after,
        "bootstrap_depth": depth - levels_after,
        "multiplicative_depth": depth,
        "input_level": input_level,
        "log2_q": log2_q,
        "key_switch": "HYBRID",
    },
})
print(f"OpenFHE CKKS bootstrapping — N = 2^{logn}, {slots} slots, INSECURE (HEStd_NotSet: "
      f"N = 2^{logn} is not 128-bit secure at this depth), {scaling_name}, Δ = 2^{scale_bits}, "
      f"level budget {level_budget}, {res['params']['ckks_data_type']}, median of {reps}")
for k in ("latency_ms", "precision_bits_min", "precision_bits_mean", "precision_bits_min_real",
          "precision_bits_mean_real", "levels_left", "levels_left_openfhe_formula", "keygen_s",
          "key_bytes"):
    v = res[k]
    print(f"{k:<28} {v:.3f}" if isinstance(v, float) else f"{k:<28} {v}")
print(f"{'params':<28} {json.dumps(res['params'])}")
if json_path:
    with open(json_path, "w") as f:
        json.dump(res, f, indent=1)
print(json.dumps(res))
