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
    """While one thread runs products, the main thread keeps running Python code."""
    x = rng.uniform(-1, 1, deep.encoder.slots)
    ct = deep.encrypt(x)
    done = threading.Event()
    busy = {"seconds": 0.0}

    def work():
        start = time.perf_counter()
        for _ in range(10):
            deep.ev.mul(ct, ct)
        busy["seconds"] = time.perf_counter() - start
        done.set()

    t = threading.Thread(target=work)
    ticks = 0
    t.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    # With the GIL held for the whole product, the main thread would tick about once per
    # product; released, it ticks about once per millisecond.
    assert busy["seconds"] > 0.02
    assert ticks > 5 * 10, (ticks, busy)


def test_keygen_from_threads(small):
    """One generator used from several threads (serialised by its lock) gives valid keys."""
    with ThreadPoolExecutor(max_workers=3) as pool:
        keys = list(pool.map(lambda _: small.keygen.galois_keys(small.sk, [4]), range(3)))
    assert all(len(k) == 1 for k in keys)
