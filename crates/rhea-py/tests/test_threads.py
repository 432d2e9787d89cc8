"""Objects shared between threads, and the GIL released while Rhea computes."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from conftest import precision_bits


def test_shared_objects_from_threads(small, rng):
    n = small.encoder.slots
    xs = [rng.uniform(-1, 1, n) for _ in range(6)]
    cts = [small.encrypt(x) for x in xs]

    def work(i):
        c = small.ev.mul(cts[i], cts[(i + 1) % 6])
        return small.decrypt(small.ev.rotate(c, 1))

    with ThreadPoolExecutor(max_workers=3) as pool:
        outs = list(pool.map(work, range(6)))
    for i, out in enumerate(outs):
        want = np.roll(xs[i] * xs[(i + 1) % 6], -1)
        assert precision_bits(out, want) > 18


def test_gil_is_released_during_evaluation(deep, rng):
    """While one thread runs Rhea calls, the main thread keeps running Python code.

    No absolute time is asserted (a fast host runs a product in a millisecond): the worker
    makes calls for at least 0.2 s, each a key generation of 8 rotation keys and a product. With
    the GIL held through every call the main thread could only tick between calls (about once
    a call); released, it ticks about once a millisecond, many times a call.
    """
    x = rng.uniform(-1, 1, deep.encoder.slots)
    ct = deep.encrypt(x)
    done = threading.Event()
    calls = {"n": 0}

    def work():
        start = time.perf_counter()
        while time.perf_counter() - start < 0.2 or calls["n"] < 3:
            deep.keygen.galois_keys(deep.sk, [1, 2, 3, 4, 5, 6, 7, 8])
            deep.ev.mul(ct, ct)
            calls["n"] += 1
        done.set()

    t = threading.Thread(target=work)
    ticks = 0
    t.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    assert ticks > 3 * calls["n"] + 3, (ticks, calls)


def test_keygen_from_threads(small):
    """One generator used from several threads (serialised by its lock) gives valid keys."""
    with ThreadPoolExecutor(max_workers=3) as pool:
        keys = list(pool.map(lambda _: small.keygen.galois_keys(small.sk, [4]), range(3)))
    assert all(len(k) == 1 for k in keys)
