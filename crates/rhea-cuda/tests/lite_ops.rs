//! The all-data mode's kernels (`kernels/lite_ops.cu`, `rhea_cuda::lite::ops`) against
//! `rhea_math` on random data: every element-wise op (`Modulus`), the NTT
//! (`NttTable::forward` / `inverse`), the automorphism (a random permutation) and the centred
//! conversion (`BaseConverter::convert_centered_rows`), at N = 2^12, 2^13, 2^16 (and 2^17 for
//! the NTT), several rows, `first_table` ≠ 0, plain and protected operands; protected outputs
//! are decrypted on the host (`LiteSession::download`) and their raw words differ from the
//! plaintext. Plus every error path, and no kernel uses local memory.
//!
//! `lite_ops_kernels_compile` needs NVRTC (`scripts/check-kernels.sh` runs it); the others need
//! a GPU. All are `#[ignore]`d: `--include-ignored` runs them, and then a missing GPU or NVRTC
//! fails them.

mod common;

use std::sync::Arc;

use common::{assert_words, cubin_has, primes, require_gpu, require_nvrtc, rng};
use rand::seq::SliceRandom;
use rand::Rng;
use rhea_cuda::lite::ops::{
    self, Dst, EwOp, LiteConverter, LiteRingTables, Rows, Src, LITE_OPS, LITE_OPS_KERNEL_NAMES,
};
use rhea_cuda::lite::{LiteBuffer, LiteForm, LiteSession};
use rhea_cuda::ntt::NttDirection;
use rhea_cuda::{registry, DeviceBuffer, GpuDevice};
use rhea_math::basis::Basis;
use rhea_math::bconv::BaseConverter;
use rhea_math::ntt::NttTable;
use rhea_math::Modulus;

/// Limbs of the test ring; operations use rows FIRST.. (first_table ≠ 0).
const LIMBS: usize = 5;
const FIRST: usize = 1;
const ROWS: usize = 3;

struct Ring {
    mods: Vec<Modulus>,
    host: Vec<NttTable>,
    dev: LiteRingTables,
    n: usize,
}

fn ring(dev: &Arc<GpuDevice>, n: usize) -> Ring {
    // ≡ 1 mod 2^18: NTT-friendly for every N ≤ 2^17
    let mods = primes(60, LIMBS, 1 << 17);
    let host: Vec<NttTable> = mods.iter().map(|q| NttTable::new(*q, n).unwrap()).collect();
    let t = LiteRingTables::new(dev, &host).unwrap();
    assert_eq!((t.degree(), t.len()), (n, LIMBS));
    Ring {
        mods,
        host,
        dev: t,
        n,
    }
}

fn random_rows(r: &mut impl Rng, ring: &Ring, rows: usize) -> Vec<u64> {
    (0..rows * ring.n)
        .map(|i| r.random_range(0..ring.mods[FIRST + i / ring.n].value()))
        .collect()
}

fn rows() -> Rows {
    Rows {
        rows: ROWS,
        first_table: FIRST,
    }
}

fn host_op(op: EwOp, q: &Modulus, a: u64, b: u64, c: u64, w: u64) -> u64 {
    match op {
        EwOp::Add => q.add(a, b),
        EwOp::Sub => q.sub(a, b),
        EwOp::Mul => q.mul(a, b),
        EwOp::MulAdd => q.mul_add(a, b, c),
        EwOp::MulScalar => q.mul(a, w),
        EwOp::AddScalar => q.add(a, w),
        EwOp::SubMulScalar => q.mul(q.sub(a, b), w),
        EwOp::Copy => a,
        EwOp::ReduceBroadcast => q.add(q.reduce(a), w),
    }
}

const OPS: [EwOp; 9] = [
    EwOp::Add,
    EwOp::Sub,
    EwOp::Mul,
    EwOp::MulAdd,
    EwOp::MulScalar,
    EwOp::AddScalar,
    EwOp::SubMulScalar,
    EwOp::Copy,
    EwOp::ReduceBroadcast,
];

/// Asserts that no raw word of a protected output equals its plaintext at the same place.
fn assert_ciphertext(raw: &[u64], plain: &[u64], what: &str) {
    let same = raw.iter().zip(plain).filter(|(a, b)| a == b).count();
    assert_eq!(same, 0, "{what}: {same} plaintext words in device memory");
}

#[test]
#[ignore = "needs NVRTC (run with --include-ignored; scripts/check-kernels.sh and scripts/gpu-run.sh do)"]
fn lite_ops_kernels_compile() {
    require_nvrtc("lite_ops_kernels_compile");
    let cubin = registry::compile(&LITE_OPS, "sm_90").unwrap_or_else(|e| panic!("{e}"));
    let mut names = registry::cubin_kernel_names(&cubin).unwrap();
    names.sort();
    let mut want: Vec<String> = LITE_OPS_KERNEL_NAMES
        .iter()
        .map(|s| s.to_string())
        .collect();
    want.sort();
    assert_eq!(names, want, "the kernels of lite_ops.cu");
    for n in LITE_OPS_KERNEL_NAMES {
        assert!(cubin_has(&cubin, n), "{n} missing from the CUBIN");
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn lite_ops_kernels_use_no_local_memory() {
    use cudarc::driver::sys::CUfunction_attribute_enum as A;
    let dev = require_gpu("lite_ops_kernels_use_no_local_memory");
    for name in LITE_OPS_KERNEL_NAMES {
        let f = dev.function(&LITE_OPS, name).unwrap();
        let local = f
            .get_attribute(A::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
            .unwrap();
        // Plaintext in local memory would be plaintext in device memory.
        assert_eq!(local, 0, "{name}: {local} bytes of local memory per thread");
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn elementwise_equals_host_arithmetic() {
    let dev = require_gpu("elementwise_equals_host_arithmetic");
    let mut r = rng("elementwise_equals_host_arithmetic");
    let session = LiteSession::new().unwrap();
    for log_n in [12, 13, 16] {
        let ring = ring(&dev, 1 << log_n);
        let (n, words) = (ring.n, ROWS * ring.n);
        let (a, b, c) = (
            random_rows(&mut r, &ring, ROWS),
            random_rows(&mut r, &ring, ROWS),
            random_rows(&mut r, &ring, ROWS),
        );
        let wide: Vec<u64> = (0..n).map(|_| r.random()).collect(); // ReduceBroadcast's row
        let w: Vec<u64> = (0..ROWS)
            .map(|i| r.random_range(0..ring.mods[FIRST + i].value()))
            .collect();
        let dw = dev.upload(&w).unwrap();
        // inputs at an offset of 2 rows + 2 words (views: the tweak is the address)
        let off = 2 * n + 2;
        let pad = |v: &[u64]| [vec![7u64; off], v.to_vec()].concat();
        let (pa, pb, pc) = (
            session.upload(&dev, &pad(&a), LiteForm::Encrypted).unwrap(),
            session.upload(&dev, &b, LiteForm::Encrypted).unwrap(),
            session.upload(&dev, &c, LiteForm::Encrypted).unwrap(),
        );
        let (da, db) = (dev.upload(&a).unwrap(), dev.upload(&b).unwrap());
        let pwide = session.upload(&dev, &wide, LiteForm::Encrypted).unwrap();
        for op in OPS {
            let bcast = op == EwOp::ReduceBroadcast;
            let want: Vec<u64> = (0..words)
                .map(|i| {
                    let q = &ring.mods[FIRST + i / n];
                    let av = if bcast { wide[i % n] } else { a[i] };
                    host_op(op, q, av, b[i], c[i], w[i / n])
                })
                .collect();
            let what = format!("{op:?} N 2^{log_n}");
            let a_prot = if bcast {
                Src::Protected(&pwide, 0)
            } else {
                Src::Protected(&pa, off)
            };
            // protected everything
            let mut out = LiteBuffer::alloc(&dev, words, LiteForm::Encrypted).unwrap();
            ops::elementwise(
                &session,
                &ring.dev,
                op,
                Dst::Protected(&mut out, 0),
                a_prot,
                Some(Src::Protected(&pb, 0)),
                Some(Src::Protected(&pc, 0)),
                Some(&dw),
                rows(),
            )
            .unwrap();
            assert_words(&session.download(&out).unwrap(), &want, &what);
            assert_ciphertext(&out.raw().to_host().unwrap(), &want, &what);
            // plain inputs, protected output at an offset
            let mut out2 = LiteBuffer::alloc(&dev, words + 4, LiteForm::Encrypted).unwrap();
            // (ReduceBroadcast: row 0 of a, canonical words are u64s too)
            let a_plain = Src::Plain(&da, 0);
            ops::elementwise(
                &session,
                &ring.dev,
                op,
                Dst::Protected(&mut out2, 4),
                a_plain,
                Some(Src::Plain(&db, 0)),
                Some(Src::Protected(&pc, 0)),
                Some(&dw),
                rows(),
            )
            .unwrap();
            let want2: Vec<u64> = if bcast {
                (0..words)
                    .map(|i| host_op(op, &ring.mods[FIRST + i / n], a[i % n], 0, 0, w[i / n]))
                    .collect()
            } else {
                want.clone()
            };
            assert_words(
                &session.download(&out2).unwrap()[4..],
                &want2,
                &format!("{what} (plain in)"),
            );
            // protected inputs, plain output
            let mut plain_out = dev.alloc(words).unwrap();
            ops::elementwise(
                &session,
                &ring.dev,
                op,
                Dst::Plain(&mut plain_out, 0),
                a_prot,
                Some(Src::Protected(&pb, 0)),
                Some(Src::Protected(&pc, 0)),
                Some(&dw),
                rows(),
            )
            .unwrap();
            assert_words(
                &plain_out.to_host().unwrap(),
                &want,
                &format!("{what} (plain out)"),
            );
            // in place: out = op(out, b, c), protected
            if !bcast {
                let mut io = session.upload(&dev, &a, LiteForm::Encrypted).unwrap();
                ops::elementwise(
                    &session,
                    &ring.dev,
                    op,
                    Dst::Protected(&mut io, 0),
                    Src::Out,
                    Some(Src::Protected(&pb, 0)),
                    Some(Src::Protected(&pc, 0)),
                    Some(&dw),
                    rows(),
                )
                .unwrap();
                assert_words(
                    &session.download(&io).unwrap(),
                    &want,
                    &format!("{what} (in place)"),
                );
            }
        }
        // in place as b: out = a - out
        let mut io = session.upload(&dev, &b, LiteForm::Encrypted).unwrap();
        ops::elementwise(
            &session,
            &ring.dev,
            EwOp::Sub,
            Dst::Protected(&mut io, 0),
            Src::Protected(&pa, off),
            Some(Src::Out),
            None,
            None,
            rows(),
        )
        .unwrap();
        let want: Vec<u64> = (0..words)
            .map(|i| ring.mods[FIRST + i / n].sub(a[i], b[i]))
            .collect();
        assert_words(&session.download(&io).unwrap(), &want, "a - out (in place)");
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn ntt_equals_host_transform() {
    let dev = require_gpu("ntt_equals_host_transform");
    let mut r = rng("ntt_equals_host_transform");
    let session = LiteSession::new().unwrap();
    for log_n in [4, 10, 11, 12, 13, 16, 17] {
        let ring = ring(&dev, 1 << log_n);
        let n = ring.n;
        let x = random_rows(&mut r, &ring, ROWS);
        let mut fwd = x.clone();
        for (row, t) in fwd.chunks_mut(n).zip(&ring.host[FIRST..]) {
            t.forward(row).unwrap();
        }
        let what = format!("NTT N 2^{log_n}");
        // protected, at an offset
        let off = 6;
        let mut buf = session
            .upload(
                &dev,
                &[vec![1u64; off], x.clone()].concat(),
                LiteForm::Encrypted,
            )
            .unwrap();
        ops::ntt(
            &session,
            &ring.dev,
            Dst::Protected(&mut buf, off),
            rows(),
            NttDirection::Forward,
        )
        .unwrap();
        let got = session.download(&buf).unwrap();
        assert_words(&got[off..], &fwd, &format!("{what} forward (protected)"));
        assert_eq!(
            &got[..off],
            &[1u64; 6][..],
            "{what}: words before the offset"
        );
        assert_ciphertext(&buf.raw().to_host().unwrap()[off..], &fwd, &what);
        ops::ntt(
            &session,
            &ring.dev,
            Dst::Protected(&mut buf, off),
            rows(),
            NttDirection::Inverse,
        )
        .unwrap();
        assert_words(
            &session.download(&buf).unwrap()[off..],
            &x,
            &format!("{what} inverse (protected)"),
        );
        // plain: the inverse of random evaluations
        let y = random_rows(&mut r, &ring, ROWS);
        let mut inv = y.clone();
        for (row, t) in inv.chunks_mut(n).zip(&ring.host[FIRST..]) {
            t.inverse(row).unwrap();
        }
        let mut d = dev.upload(&y).unwrap();
        ops::ntt(
            &session,
            &ring.dev,
            Dst::Plain(&mut d, 0),
            rows(),
            NttDirection::Inverse,
        )
        .unwrap();
        assert_words(
            &d.to_host().unwrap(),
            &inv,
            &format!("{what} inverse (plain)"),
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn automorphism_equals_host_permutation() {
    let dev = require_gpu("automorphism_equals_host_permutation");
    let mut r = rng("automorphism_equals_host_permutation");
    let session = LiteSession::new().unwrap();
    for log_n in [12, 13, 16] {
        let ring = ring(&dev, 1 << log_n);
        let n = ring.n;
        let x = random_rows(&mut r, &ring, ROWS);
        let mut perm: Vec<u64> = (0..n as u64).collect();
        perm.shuffle(&mut r);
        let dperm = dev.upload(&perm).unwrap();
        let want: Vec<u64> = (0..ROWS * n)
            .map(|i| x[(i / n) * n + perm[i % n] as usize])
            .collect();
        let px = session.upload(&dev, &x, LiteForm::Encrypted).unwrap();
        let mut out = LiteBuffer::alloc(&dev, ROWS * n, LiteForm::Encrypted).unwrap();
        ops::automorphism(
            &session,
            &ring.dev,
            Dst::Protected(&mut out, 0),
            Src::Protected(&px, 0),
            &dperm,
            rows(),
        )
        .unwrap();
        let what = format!("automorphism N 2^{log_n}");
        assert_words(&session.download(&out).unwrap(), &want, &what);
        assert_ciphertext(&out.raw().to_host().unwrap(), &want, &what);
        let dx = dev.upload(&x).unwrap();
        let mut pout = dev.alloc(ROWS * n).unwrap();
        ops::automorphism(
            &session,
            &ring.dev,
            Dst::Plain(&mut pout, 0),
            Src::Plain(&dx, 0),
            &dperm,
            rows(),
        )
        .unwrap();
        assert_words(&pout.to_host().unwrap(), &want, &format!("{what} (plain)"));
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn convert_centered_equals_host_conversion() {
    let dev = require_gpu("convert_centered_equals_host_conversion");
    let mut r = rng("convert_centered_equals_host_conversion");
    let session = LiteSession::new().unwrap();
    for (log_n, l, k) in [(12, 1, 3), (13, 3, 4), (16, 4, 5), (12, 24, 6), (12, 64, 2)] {
        let n = 1usize << log_n;
        let from: Vec<u64> = primes(60, l, n).iter().map(|q| q.value()).collect();
        let to: Vec<u64> = primes(59, k, n).iter().map(|q| q.value()).collect();
        let conv =
            BaseConverter::new(&Basis::new(&from).unwrap(), &Basis::new(&to).unwrap()).unwrap();
        let dconv = LiteConverter::new(&dev, &conv).unwrap();
        assert_eq!((dconv.from_len(), dconv.to_len()), (l, k));
        let x: Vec<u64> = (0..l * n).map(|i| r.random_range(0..from[i / n])).collect();
        // targets: every j, in reverse, into rows 1.. of an output of k + 1 rows (row 0 untouched)
        let targets: Vec<(usize, usize)> = (0..k).rev().map(|j| (j, k - j)).collect();
        let mut want = vec![0u64; (k + 1) * n];
        {
            let mut rows: Vec<(usize, &mut [u64])> = Vec::new();
            let mut chunks: Vec<&mut [u64]> = want.chunks_mut(n).collect();
            let mut by_row: Vec<Option<&mut [u64]>> = chunks.drain(..).map(Some).collect();
            for &(j, row) in &targets {
                rows.push((j, by_row[row].take().unwrap()));
            }
            conv.convert_centered_rows(&x, n, rows).unwrap();
        }
        let what = format!("convert_centered N 2^{log_n} {l} → {k}");
        let px = session.upload(&dev, &x, LiteForm::Encrypted).unwrap();
        let mut out = session
            .upload(&dev, &vec![0u64; (k + 1) * n], LiteForm::Encrypted)
            .unwrap();
        ops::convert_centered(
            &session,
            &dconv,
            Src::Protected(&px, 0),
            Dst::Protected(&mut out, 0),
            &targets,
            n,
        )
        .unwrap();
        assert_words(&session.download(&out).unwrap(), &want, &what);
        assert_ciphertext(&out.raw().to_host().unwrap()[n..], &want[n..], &what);
        // plain in, plain out
        let dx = dev.upload(&x).unwrap();
        let mut pout = dev.upload(&vec![0u64; (k + 1) * n]).unwrap();
        ops::convert_centered(
            &session,
            &dconv,
            Src::Plain(&dx, 0),
            Dst::Plain(&mut pout, 0),
            &targets,
            n,
        )
        .unwrap();
        assert_words(&pout.to_host().unwrap(), &want, &format!("{what} (plain)"));
    }
}

#[test]
#[ignore = "needs a CUDA GPU (run with --include-ignored; scripts/gpu-run.sh does)"]
fn every_error_path_returns_err() {
    let dev = require_gpu("every_error_path_returns_err");
    let session = LiteSession::new().unwrap();
    let ring = ring(&dev, 1 << 12);
    let n = ring.n;
    let words = ROWS * n;
    let zeros = vec![0u64; words];
    let p = session.upload(&dev, &zeros, LiteForm::Encrypted).unwrap();
    let padded = session.upload(&dev, &zeros, LiteForm::Padded).unwrap();
    let plain_lite = session.upload(&dev, &zeros, LiteForm::Plain).unwrap();
    let d = dev.upload(&zeros).unwrap();
    let short = dev.upload(&zeros[..words - 2]).unwrap();
    let w = dev.upload(&[1, 2, 3]).unwrap();
    let w_short = dev.upload(&[1]).unwrap();
    let mut out = LiteBuffer::alloc(&dev, words, LiteForm::Encrypted).unwrap();
    let mut dout = dev.alloc(words).unwrap();
    let ew = |out: Dst, a: Src, b: Option<Src>, w: Option<&DeviceBuffer>, op: EwOp, rows: Rows| {
        ops::elementwise(&session, &ring.dev, op, out, a, b, None, w, rows)
    };
    let r = rows();
    // wrong form
    assert!(ew(
        Dst::Protected(&mut out, 0),
        Src::Protected(&padded, 0),
        Some(Src::Plain(&d, 0)),
        None,
        EwOp::Add,
        r
    )
    .is_err());
    assert!(ew(
        Dst::Protected(&mut out, 0),
        Src::Protected(&plain_lite, 0),
        Some(Src::Plain(&d, 0)),
        None,
        EwOp::Add,
        r
    )
    .is_err());
    // short buffers
    assert!(ew(
        Dst::Protected(&mut out, 0),
        Src::Plain(&short, 0),
        Some(Src::Plain(&d, 0)),
        None,
        EwOp::Add,
        r
    )
    .is_err());
    assert!(ew(
        Dst::Protected(&mut out, 2),
        Src::Plain(&d, 0),
        Some(Src::Plain(&d, 0)),
        None,
        EwOp::Add,
        r
    )
    .is_err());
    assert!(ew(
        Dst::Plain(&mut dout, 0),
        Src::Plain(&d, 0),
        None,
        Some(&w_short),
        EwOp::MulScalar,
        r
    )
    .is_err());
    // odd offsets
    assert!(ew(
        Dst::Plain(&mut dout, 0),
        Src::Protected(&p, 1),
        Some(Src::Plain(&d, 0)),
        None,
        EwOp::Add,
        Rows {
            rows: 1,
            first_table: 0
        }
    )
    .is_err());
    assert!(ew(
        Dst::Plain(&mut dout, 1),
        Src::Plain(&d, 0),
        Some(Src::Plain(&d, 0)),
        None,
        EwOp::Add,
        Rows {
            rows: 1,
            first_table: 0
        }
    )
    .is_err());
    // rows beyond the table, no rows
    assert!(ew(
        Dst::Plain(&mut dout, 0),
        Src::Plain(&d, 0),
        Some(Src::Plain(&d, 0)),
        None,
        EwOp::Add,
        Rows {
            rows: 3,
            first_table: 3
        }
    )
    .is_err());
    assert!(ew(
        Dst::Plain(&mut dout, 0),
        Src::Plain(&d, 0),
        Some(Src::Plain(&d, 0)),
        None,
        EwOp::Add,
        Rows {
            rows: 0,
            first_table: 0
        }
    )
    .is_err());
    // missing b, c, w
    assert!(ew(
        Dst::Plain(&mut dout, 0),
        Src::Plain(&d, 0),
        None,
        None,
        EwOp::Add,
        r
    )
    .is_err());
    assert!(ew(
        Dst::Plain(&mut dout, 0),
        Src::Plain(&d, 0),
        None,
        None,
        EwOp::MulScalar,
        r
    )
    .is_err());
    assert!(ops::elementwise(
        &session,
        &ring.dev,
        EwOp::MulAdd,
        Dst::Plain(&mut dout, 0),
        Src::Plain(&d, 0),
        Some(Src::Plain(&d, 0)),
        None,
        None,
        r
    )
    .is_err());
    // ReduceBroadcast in place
    assert!(ew(
        Dst::Plain(&mut dout, 0),
        Src::Out,
        None,
        Some(&w),
        EwOp::ReduceBroadcast,
        r
    )
    .is_err());
    // NTT: rows beyond the table, short, odd offset, wrong form
    let mut pad_buf = session.upload(&dev, &zeros, LiteForm::Padded).unwrap();
    assert!(ops::ntt(
        &session,
        &ring.dev,
        Dst::Protected(&mut out, 0),
        Rows {
            rows: 5,
            first_table: 1
        },
        NttDirection::Forward
    )
    .is_err());
    assert!(ops::ntt(
        &session,
        &ring.dev,
        Dst::Protected(&mut out, 2),
        r,
        NttDirection::Forward
    )
    .is_err());
    assert!(ops::ntt(
        &session,
        &ring.dev,
        Dst::Protected(&mut out, 1),
        Rows {
            rows: 1,
            first_table: 0
        },
        NttDirection::Forward
    )
    .is_err());
    assert!(ops::ntt(
        &session,
        &ring.dev,
        Dst::Protected(&mut pad_buf, 0),
        r,
        NttDirection::Forward
    )
    .is_err());
    // automorphism: in place, short perm
    let perm = dev.upload(&(0..n as u64).collect::<Vec<_>>()).unwrap();
    assert!(ops::automorphism(
        &session,
        &ring.dev,
        Dst::Protected(&mut out, 0),
        Src::Out,
        &perm,
        r
    )
    .is_err());
    assert!(ops::automorphism(
        &session,
        &ring.dev,
        Dst::Protected(&mut out, 0),
        Src::Protected(&p, 0),
        &w,
        r
    )
    .is_err());
    // conversion: target out of range, row twice, row beyond the output, short input, bad n
    let from: Vec<u64> = primes(60, 2, n).iter().map(|q| q.value()).collect();
    let to: Vec<u64> = primes(59, 2, n).iter().map(|q| q.value()).collect();
    let conv = BaseConverter::new(&Basis::new(&from).unwrap(), &Basis::new(&to).unwrap()).unwrap();
    let dconv = LiteConverter::new(&dev, &conv).unwrap();
    let cv = |input: Src, out: Dst, t: &[(usize, usize)], n: usize| {
        ops::convert_centered(&session, &dconv, input, out, t, n)
    };
    assert!(cv(
        Src::Protected(&p, 0),
        Dst::Protected(&mut out, 0),
        &[(2, 0)],
        n
    )
    .is_err());
    assert!(cv(
        Src::Protected(&p, 0),
        Dst::Protected(&mut out, 0),
        &[(0, 1), (1, 1)],
        n
    )
    .is_err());
    assert!(cv(
        Src::Protected(&p, 0),
        Dst::Protected(&mut out, 0),
        &[(0, 3)],
        n
    )
    .is_err());
    assert!(cv(
        Src::Protected(&p, 2 * n),
        Dst::Protected(&mut out, 0),
        &[(0, 0)],
        n
    )
    .is_err());
    assert!(cv(
        Src::Protected(&p, 0),
        Dst::Protected(&mut out, 0),
        &[(0, 0)],
        n + 1
    )
    .is_err());
    assert!(cv(
        Src::Protected(&padded, 0),
        Dst::Protected(&mut out, 0),
        &[(0, 0)],
        n
    )
    .is_err());
    // tables of mixed degrees, a basis too large
    let t2 = NttTable::new(ring.mods[0], n / 2).unwrap();
    assert!(LiteRingTables::new(&dev, &[ring.host[0].clone(), t2]).is_err());
    assert!(LiteRingTables::new(&dev, &[]).is_err());
    let big: Vec<u64> = primes(50, 65, n).iter().map(|q| q.value()).collect();
    let conv = BaseConverter::new(&Basis::new(&big).unwrap(), &Basis::new(&to).unwrap()).unwrap();
    assert!(LiteConverter::new(&dev, &conv).is_err());
}
