// EXPLORATION ONLY (not committed): bootstrapping precision at N = 2^16 over chain/config variants.
use rand::{Rng, SeedableRng};
use rhea::ckks::bootstrap::{BootstrapConfig, Bootstrapper};
use rhea::ckks::{CkksContext, Complex64, Decryptor, Encoder, Encryptor, Evaluator, KeyGenerator};
use rhea::params::CkksParametersLiteral;
use rhea::Device;

fn main() {
    // args: log_n ratio degree r evalmod_bits cts_bits stc_bits [k]
    let a: Vec<String> = std::env::args().collect();
    let g = |i: usize| a[i].parse::<u32>().unwrap();
    let (log_n, ratio, degree, r, em, cts, stc) = (g(1), g(2), g(3), g(4), g(5), g(6), g(7));
    let k = if a.len() > 8 { g(8) as usize } else { 16 };
    let headroom = if a.len() > 9 { Some(g(9)) } else { None };
    let mut config = BootstrapConfig::full_slots_of(log_n);
    config.message_ratio_bits = ratio;
    config.eval_mod.degree = degree as usize;
    config.eval_mod.double_angles = r as usize;
    config.eval_mod.k = k;
    if let Some(h) = headroom {
        config.eval_mod_headroom_bits = h;
    }
    config.eval_mod.eps_max = (-(ratio as f64)).exp2();
    let em_levels = config.depth() - 6;
    let mut log_q = vec![60];
    log_q.extend([40; 13]);
    log_q.extend([stc; 3]);
    log_q.extend(std::iter::repeat_n(em, em_levels));
    log_q.extend([cts; 3]);
    let lit = CkksParametersLiteral {
        log_n,
        log_q,
        log_p: vec![61; 6],
        q: vec![],
        p: vec![],
        log_default_scale: 40,
        dnum: 5,
        ..CkksParametersLiteral::n13_logqp200_levels2()
    }
    .insecure_allow_below_128_bits();
    let params = lit.build().unwrap();
    let device = if std::env::var("CPU").is_ok() {
        Device::Cpu
    } else {
        Device::Cuda(0)
    };
    let ctx = CkksContext::new(&params, device).unwrap();
    let mut keygen = KeyGenerator::from_seed(&ctx, [23; 32]);
    let sk = keygen.secret_key().unwrap();
    let boot = Bootstrapper::new(&ctx, &mut keygen, &sk, config).unwrap();
    let encoder = Encoder::new(&ctx).unwrap();
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(80);
    let z: Vec<Complex64> = (0..encoder.slots())
        .map(|_| Complex64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)))
        .collect();
    let ct = Encryptor::with_secret_key(&ctx, &sk)
        .unwrap()
        .encrypt(&encoder.encode_complex(&z).unwrap())
        .unwrap();
    let low = Evaluator::new(&ctx).drop_to_level(&ct, 0).unwrap();
    let _ = boot.bootstrap(&low).unwrap();
    let (out, st) = boot.bootstrap_with_stages(&low).unwrap();
    let got = encoder.decode_complex(&dec.decrypt(&out).unwrap()).unwrap();
    let errs: Vec<f64> = got.iter().zip(&z).map(|(g, w)| (g - w).norm()).collect();
    let mean = -(errs.iter().sum::<f64>() / errs.len() as f64).log2();
    let min = -errs.iter().cloned().fold(0.0, f64::max).log2();
    println!(
        "SWEEP head={} logn={log_n} ratio={ratio} deg={degree} r={r} k={k} em={em} cts={cts} stc={stc} depth={} logQP={:.0} min={min:.2} mean={mean:.2} total_ms={:.2}",
        boot.config().eval_mod_headroom_bits,
        boot.depth(),
        params.log_qp(),
        st.total().as_secs_f64() * 1e3
    );
}
