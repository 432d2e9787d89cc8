//! The file verbs of the `rhea` command: key generation, encryption, evaluation, decryption and
//! inspection of serialised objects (`docs/format.md`), for CKKS and BGV.
//!
//! ```text
//! rhea keygen --scheme ckks --params n13_logqp200_levels2 --rotations 1,-1 --out keys/
//! rhea encrypt --keys keys/ --values 1,2,3 --out x.rhea            # public-key encryption
//! rhea encrypt --keys keys/ --secret --values 4,5,6 --out y.rhea   # secret key: seeded, half size
//! rhea eval --keys keys/ --input x=x.rhea --input y=y.rhea 'x*y + rot(x, 1) - 0.5' --out z.rhea
//! rhea decrypt --keys keys/ z.rhea --count 4
//! rhea inspect keys/*.rhea z.rhea
//! ```
//!
//! `keygen` writes `params.rhea`, `secret_key.rhea`, `public_key.rhea`, `relin_key.rhea` and
//! (with `--rotations` or `--conjugation`) `galois_keys.rhea` into the output directory; the
//! other verbs find them with `--keys DIR`.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::Subcommand;
use rhea::bgv::{self, BgvContext, BgvParametersLiteral};
use rhea::ckks::{self, CkksContext};
use rhea::params::{BgvIntent, CkksIntent, CkksParametersLiteral};
use rhea::rlwe::{GaloisKeys, PublicKey, RelinearizationKey, SecretKey};
use rhea::serial::{
    inspect, read_parameters, write_parameters, Codec, Compression, ObjectKind, SchemeParameters,
    Serializable,
};
use rhea::Device;

/// The result of a file verb.
pub type FileResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

const PARAMS: &str = "params.rhea";
const SECRET_KEY: &str = "secret_key.rhea";
const PUBLIC_KEY: &str = "public_key.rhea";
const RELIN_KEY: &str = "relin_key.rhea";
const GALOIS_KEYS: &str = "galois_keys.rhea";

/// The file verbs.
#[derive(Subcommand, Debug)]
pub enum FileCommand {
    /// Generates parameters and keys into a directory (params, secret, public, relinearization
    /// and Galois keys).
    Keygen {
        /// The scheme: `ckks` or `bgv`.
        #[arg(long, default_value = "ckks")]
        scheme: String,
        /// A preset name (`--params list` lists them), a JSON parameter-literal file, or an
        /// intent: `depth=10,scale_bits=40,slots=2^14` (CKKS) or
        /// `depth=3,plaintext_bits=20,slots=2^13` (BGV), also `security=192|256`, `log_n`,
        /// `dnum`.
        #[arg(long, default_value = "n13_logqp200_levels2")]
        params: String,
        /// The output directory (created if needed).
        #[arg(long, short, default_value = ".")]
        out: PathBuf,
        /// Rotation steps to generate Galois keys for (comma-separated, negative = right).
        #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
        rotations: Vec<i64>,
        /// Also generate the conjugation key (BGV: the row-swap key).
        #[arg(long)]
        conjugation: bool,
        /// Storage of the keys: `plain`, `seeded`, `packed` or `seeded-packed`.
        #[arg(long, default_value = "seeded-packed")]
        compression: String,
    },
    /// Encrypts a list of numbers (CKKS: reals; BGV: integers mod t).
    Encrypt {
        /// The directory `rhea keygen` wrote.
        #[arg(long, default_value = ".")]
        keys: PathBuf,
        /// Encrypt with the secret key (a seeded ciphertext, about half the size) instead of the
        /// public key.
        #[arg(long)]
        secret: bool,
        /// The values, comma-separated.
        #[arg(
            long,
            value_delimiter = ',',
            allow_hyphen_values = true,
            required = true
        )]
        values: Vec<String>,
        /// The output file.
        #[arg(long, short)]
        out: PathBuf,
        /// Storage: `plain`, `seeded`, `packed` or `seeded-packed`.
        #[arg(long, default_value = "seeded-packed")]
        compression: String,
        /// Device: `cpu`, `cuda:N` or `best`.
        #[arg(long, default_value = "cpu")]
        device: String,
    },
    /// Evaluates an expression over encrypted inputs: `+ - *`, numbers, parentheses,
    /// `rot(e, k)`, `conj(e)` (BGV: row swap), `square(e)`; products are relinearised (and,
    /// for CKKS, rescaled).
    Eval {
        /// The directory `rhea keygen` wrote (parameters, relinearization and Galois keys).
        #[arg(long, default_value = ".")]
        keys: PathBuf,
        /// An input ciphertext as `name=file` (repeatable).
        #[arg(long = "input", short = 'i', value_name = "NAME=FILE")]
        inputs: Vec<String>,
        /// The expression, e.g. `x*y + rot(x, 1) - 0.5`.
        expression: String,
        /// The output file.
        #[arg(long, short)]
        out: PathBuf,
        /// Storage of the result: `plain` or `packed` (results are never seeded).
        #[arg(long, default_value = "packed")]
        compression: String,
        /// Device: `cpu`, `cuda:N` or `best`.
        #[arg(long, default_value = "cpu")]
        device: String,
    },
    /// Decrypts a ciphertext and prints its first values.
    Decrypt {
        /// The directory `rhea keygen` wrote (parameters and secret key).
        #[arg(long, default_value = ".")]
        keys: PathBuf,
        /// The ciphertext file.
        input: PathBuf,
        /// How many values to print.
        #[arg(long, default_value_t = 8)]
        count: usize,
        /// Device: `cpu`, `cuda:N` or `best`.
        #[arg(long, default_value = "cpu")]
        device: String,
    },
    /// Describes serialised objects: kind, level, scale, size, storage, parameters.
    Inspect {
        /// The files (each may hold several objects one after another).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

/// Runs a file verb.
pub fn run(cmd: FileCommand) -> FileResult {
    match cmd {
        FileCommand::Keygen {
            scheme,
            params,
            out,
            rotations,
            conjugation,
            compression,
        } => keygen(
            &scheme,
            &params,
            &out,
            &rotations,
            conjugation,
            parse_compression(&compression)?,
        ),
        FileCommand::Encrypt {
            keys,
            secret,
            values,
            out,
            compression,
            device,
        } => encrypt(
            &keys,
            secret,
            &values,
            &out,
            parse_compression(&compression)?,
            parse_device(&device)?,
        ),
        FileCommand::Eval {
            keys,
            inputs,
            expression,
            out,
            compression,
            device,
        } => eval(
            &keys,
            &inputs,
            &expression,
            &out,
            parse_compression(&compression)?,
            parse_device(&device)?,
        ),
        FileCommand::Decrypt {
            keys,
            input,
            count,
            device,
        } => decrypt(&keys, &input, count, parse_device(&device)?),
        FileCommand::Inspect { files } => inspect_files(&files),
    }
}

// ---------------------------------------------------------------------- parsing helpers

fn parse_compression(s: &str) -> FileResult<Compression> {
    Ok(match s {
        "plain" | "none" => Compression::NONE,
        "seeded" => Compression::SEEDED,
        "packed" => Compression::PACKED,
        "seeded-packed" | "seeded+packed" | "all" => Compression::SEEDED_PACKED,
        other => {
            return Err(format!(
                "unknown compression `{other}` (use plain, seeded, packed or seeded-packed)"
            )
            .into())
        }
    })
}

fn parse_device(name: &str) -> FileResult<Device> {
    match name {
        "cpu" => Ok(Device::Cpu),
        "best" => Ok(Device::best()),
        other => other
            .strip_prefix("cuda:")
            .and_then(|i| i.parse().ok())
            .map(Device::Cuda)
            .ok_or_else(|| format!("unknown device `{other}` (use cpu, cuda:N or best)").into()),
    }
}

const CKKS_PRESETS: [&str; 8] = [
    "n13_logqp200_levels2",
    "test_n13_levels10_insecure",
    "n14_logqp400_levels7",
    "n15_logqp400_levels7",
    "n16_logqp1440_levels24",
    "n16_logqp1560_levels24",
    "n16_logqp1426_levels20",
    "n16_logqp1520_levels26",
];

const BGV_PRESETS: [&str; 5] = [
    "he_booster_n13_logqp218",
    "he_booster_n14_logqp438",
    "he_booster_n15_logqp881",
    "n16_logqp1717_batching",
    "test_n12_levels5_insecure",
];

/// A CKKS preset by name, or a JSON literal file (`*.json`); the one table of CKKS presets the
/// file verbs and `rhea bench` share.
pub(crate) fn ckks_literal(name: &str) -> FileResult<CkksParametersLiteral> {
    Ok(match name {
        "n13_logqp200_levels2" => CkksParametersLiteral::n13_logqp200_levels2(),
        "test_n13_levels10_insecure" => CkksParametersLiteral::test_n13_levels10_insecure(),
        "n14_logqp400_levels7" => CkksParametersLiteral::n14_logqp400_levels7(),
        "n15_logqp400_levels7" => CkksParametersLiteral::n15_logqp400_levels7(),
        "n16_logqp1440_levels24" => CkksParametersLiteral::n16_logqp1440_levels24(),
        "n16_logqp1560_levels24" => CkksParametersLiteral::n16_logqp1560_levels24(),
        "n16_logqp1426_levels20" => CkksParametersLiteral::n16_logqp1426_levels20(),
        "n16_logqp1520_levels26" => CkksParametersLiteral::n16_logqp1520_levels26(),
        intent if intent.starts_with("depth=") => intent.parse::<CkksIntent>()?.literal()?,
        path if path.ends_with(".json") => serde_json::from_str(&std::fs::read_to_string(path)?)?,
        other => {
            return Err(format!(
                "unknown CKKS preset `{other}` (known: {}; or a .json literal file, or an \
                 intent such as depth=10,scale_bits=40)",
                CKKS_PRESETS.join(", ")
            )
            .into())
        }
    })
}

/// A BGV preset by name, or a JSON literal file (`*.json`); shared with `rhea bench`.
pub(crate) fn bgv_literal(name: &str) -> FileResult<BgvParametersLiteral> {
    Ok(match name {
        "he_booster_n13_logqp218" => BgvParametersLiteral::he_booster_n13_logqp218(),
        "he_booster_n14_logqp438" => BgvParametersLiteral::he_booster_n14_logqp438(),
        "he_booster_n15_logqp881" => BgvParametersLiteral::he_booster_n15_logqp881(),
        "n16_logqp1717_batching" => BgvParametersLiteral::n16_logqp1717_batching(),
        "test_n12_levels5_insecure" => BgvParametersLiteral::test_n12_levels5_insecure(),
        intent if intent.starts_with("depth=") => intent.parse::<BgvIntent>()?.literal()?,
        path if path.ends_with(".json") => serde_json::from_str(&std::fs::read_to_string(path)?)?,
        other => {
            return Err(format!(
                "unknown BGV preset `{other}` (known: {}; or a .json literal file, or an \
                 intent such as depth=3,plaintext_bits=20)",
                BGV_PRESETS.join(", ")
            )
            .into())
        }
    })
}

// ---------------------------------------------------------------------- file helpers

fn open(path: &Path) -> FileResult<BufReader<File>> {
    File::open(path)
        .map(BufReader::new)
        .map_err(|e| format!("{}: {e}", path.display()).into())
}

fn save<T: Serializable>(codec: &Codec, path: &Path, obj: &T, c: Compression) -> FileResult<u64> {
    let mut w = BufWriter::new(File::create(path)?);
    let n = codec.write(&mut w, obj, c)?;
    w.flush()?;
    Ok(n)
}

fn load<T: Serializable>(codec: &Codec, path: &Path) -> FileResult<T> {
    codec
        .read(open(path)?)
        .map_err(|e| format!("{}: {e}", path.display()).into())
}

fn load_params(keys: &Path) -> FileResult<SchemeParameters> {
    let path = keys.join(PARAMS);
    read_parameters(open(&path)?).map_err(|e| format!("{}: {e}", path.display()).into())
}

fn load_secret_key(codec: &Codec, keys: &Path) -> FileResult<SecretKey> {
    let path = keys.join(SECRET_KEY);
    codec
        .read_secret_key(open(&path)?)
        .map_err(|e| format!("{}: {e}", path.display()).into())
}

fn report(path: &Path, bytes: u64) {
    println!("wrote {} ({bytes} bytes)", path.display());
}

// ---------------------------------------------------------------------- keygen

fn keygen(
    scheme: &str,
    params: &str,
    out: &Path,
    rotations: &[i64],
    conjugation: bool,
    c: Compression,
) -> FileResult {
    if params == "list" {
        println!("CKKS presets: {}", CKKS_PRESETS.join(", "));
        println!("BGV presets:  {}", BGV_PRESETS.join(", "));
        return Ok(());
    }
    std::fs::create_dir_all(out)?;
    let galois = !rotations.is_empty() || conjugation;
    match scheme {
        "ckks" => {
            let p = ckks_literal(params)?.build()?;
            println!("{p}");
            let ctx = CkksContext::new(&p, Device::Cpu)?;
            let mut kg = ckks::KeyGenerator::new(&ctx)?;
            let sk = kg.secret_key()?;
            let pk = kg.public_key(&sk)?;
            let rlk = kg.relinearization_key(&sk)?;
            let gk = if galois {
                Some(kg.galois_keys(&sk, rotations, conjugation)?)
            } else {
                None
            };
            write_keys(&Codec::from(&ctx), out, &sk, &pk, &rlk, gk.as_ref(), c)
        }
        "bgv" => {
            let p = bgv_literal(params)?.build()?;
            println!("{p}");
            let ctx = BgvContext::new(&p, Device::Cpu)?;
            let mut kg = bgv::KeyGenerator::new(&ctx)?;
            let sk = kg.secret_key()?;
            let pk = kg.public_key(&sk)?;
            let rlk = kg.relinearization_key(&sk)?;
            let gk = if galois {
                Some(kg.galois_keys(&sk, rotations, conjugation)?)
            } else {
                None
            };
            write_keys(&Codec::from(&ctx), out, &sk, &pk, &rlk, gk.as_ref(), c)
        }
        other => Err(format!("unknown scheme `{other}` (use ckks or bgv)").into()),
    }
}

fn write_keys(
    codec: &Codec,
    out: &Path,
    sk: &SecretKey,
    pk: &PublicKey,
    rlk: &RelinearizationKey,
    gk: Option<&GaloisKeys>,
    c: Compression,
) -> FileResult {
    let path = out.join(PARAMS);
    let mut w = BufWriter::new(File::create(&path)?);
    let n = write_parameters(&mut w, codec.params())?;
    w.flush()?;
    report(&path, n);

    let path = out.join(SECRET_KEY);
    let mut w = BufWriter::new(File::create(&path)?);
    let n = codec.write_secret_key(&mut w, sk)?;
    w.flush()?;
    report(&path, n);
    println!("  (the secret key: keep this file private)");

    for (name, n) in [
        (PUBLIC_KEY, save(codec, &out.join(PUBLIC_KEY), pk, c)?),
        (RELIN_KEY, save(codec, &out.join(RELIN_KEY), rlk, c)?),
    ] {
        report(&out.join(name), n);
    }
    if let Some(gk) = gk {
        let path = out.join(GALOIS_KEYS);
        report(&path, save(codec, &path, gk, c)?);
    }
    Ok(())
}

// ---------------------------------------------------------------------- encrypt

fn encrypt(
    keys: &Path,
    secret: bool,
    values: &[String],
    out: &Path,
    c: Compression,
    device: Device,
) -> FileResult {
    match load_params(keys)? {
        SchemeParameters::Ckks(p) => {
            let ctx = CkksContext::new(&p, device)?;
            let codec = Codec::from(&ctx);
            let vals = values
                .iter()
                .map(|v| v.trim().parse::<f64>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("--values: {e}"))?;
            let pt = ckks::Encoder::new(&ctx)?.encode(&vals)?;
            let ct = if secret {
                let sk = load_secret_key(&codec, keys)?;
                ckks::Encryptor::with_secret_key(&ctx, &sk)?.encrypt(&pt)?
            } else {
                let pk: PublicKey = load(&codec, &keys.join(PUBLIC_KEY))?;
                ckks::Encryptor::new(&ctx, &pk)?.encrypt(&pt)?
            };
            report(out, save(&codec, out, &ct, c)?);
        }
        SchemeParameters::Bgv(p) => {
            let ctx = BgvContext::new(&p, device)?;
            let codec = Codec::from(&ctx);
            let vals = values
                .iter()
                .map(|v| v.trim().parse::<i64>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("--values (integers for BGV): {e}"))?;
            let pt = bgv::Encoder::new(&ctx)?.encode_signed_at(&vals, p.max_level())?;
            let ct = if secret {
                let sk = load_secret_key(&codec, keys)?;
                bgv::Encryptor::with_secret_key(&ctx, &sk)?.encrypt(&pt)?
            } else {
                let pk: PublicKey = load(&codec, &keys.join(PUBLIC_KEY))?;
                bgv::Encryptor::new(&ctx, &pk)?.encrypt(&pt)?
            };
            report(out, save(&codec, out, &ct, c)?);
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------- decrypt

fn decrypt(keys: &Path, input: &Path, count: usize, device: Device) -> FileResult {
    match load_params(keys)? {
        SchemeParameters::Ckks(p) => {
            let ctx = CkksContext::new(&p, device)?;
            let codec = Codec::from(&ctx);
            let sk = load_secret_key(&codec, keys)?;
            let ct: ckks::Ciphertext = load(&codec, input)?;
            let pt = ckks::Decryptor::new(&ctx, &sk)?.decrypt(&ct)?;
            let values = ckks::Encoder::with_slots(&ctx, ct.slots())?.decode(&pt)?;
            let shown: Vec<String> = values
                .iter()
                .take(count)
                .map(|v| format!("{v:.6}"))
                .collect();
            println!("{}", shown.join(", "));
        }
        SchemeParameters::Bgv(p) => {
            let ctx = BgvContext::new(&p, device)?;
            let codec = Codec::from(&ctx);
            let sk = load_secret_key(&codec, keys)?;
            let ct: bgv::Ciphertext = load(&codec, input)?;
            let d = bgv::Decryptor::new(&ctx, &sk)?.decrypt(&ct)?;
            let values = bgv::Encoder::new(&ctx)?.decode_signed(&d)?;
            let shown: Vec<String> = values.iter().take(count).map(|v| v.to_string()).collect();
            println!("{}", shown.join(", "));
            eprintln!("noise budget: {} bits", d.noise_budget());
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------- inspect

fn inspect_files(files: &[PathBuf]) -> FileResult {
    for path in files {
        let len = std::fs::metadata(path)?.len();
        let mut r = open(path)?;
        let mut read = 0u64;
        while read < len {
            let info = inspect(&mut r).map_err(|e| format!("{}: {e}", path.display()))?;
            read += info.size;
            println!("{}: {info}", path.display());
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------- eval

/// The expression tree.
#[derive(Clone, Debug, PartialEq)]
enum Expr {
    Num(f64),
    Var(String),
    Neg(Box<Expr>),
    Bin(char, Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn parse(src: &str) -> FileResult<Expr> {
        let mut p = Parser {
            s: src.as_bytes(),
            i: 0,
        };
        let e = p.expr()?;
        p.ws();
        if p.i != p.s.len() {
            return Err(format!("unexpected `{}` at offset {}", &src[p.i..], p.i).into());
        }
        Ok(e)
    }

    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expr(&mut self) -> FileResult<Expr> {
        let mut e = self.term()?;
        loop {
            if self.eat(b'+') {
                e = Expr::Bin('+', Box::new(e), Box::new(self.term()?));
            } else if self.eat(b'-') {
                e = Expr::Bin('-', Box::new(e), Box::new(self.term()?));
            } else {
                return Ok(e);
            }
        }
    }

    fn term(&mut self) -> FileResult<Expr> {
        let mut e = self.unary()?;
        while self.eat(b'*') {
            e = Expr::Bin('*', Box::new(e), Box::new(self.unary()?));
        }
        Ok(e)
    }

    fn unary(&mut self) -> FileResult<Expr> {
        if self.eat(b'-') {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        self.atom()
    }

    fn atom(&mut self) -> FileResult<Expr> {
        self.ws();
        if self.eat(b'(') {
            let e = self.expr()?;
            if !self.eat(b')') {
                return Err(format!("missing `)` at offset {}", self.i).into());
            }
            return Ok(e);
        }
        let start = self.i;
        let c = *self
            .s
            .get(self.i)
            .ok_or("unexpected end of the expression")?;
        if c.is_ascii_digit() || c == b'.' {
            while self.i < self.s.len()
                && (self.s[self.i].is_ascii_digit()
                    || matches!(self.s[self.i], b'.' | b'e' | b'E')
                    || (matches!(self.s[self.i], b'+' | b'-')
                        && matches!(self.s[self.i - 1], b'e' | b'E')))
            {
                self.i += 1;
            }
            let text = std::str::from_utf8(&self.s[start..self.i])?;
            return Ok(Expr::Num(
                text.parse().map_err(|e| format!("number `{text}`: {e}"))?,
            ));
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            while self.i < self.s.len()
                && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_')
            {
                self.i += 1;
            }
            let name = std::str::from_utf8(&self.s[start..self.i])?.to_string();
            if self.eat(b'(') {
                let mut args = vec![self.expr()?];
                while self.eat(b',') {
                    args.push(self.expr()?);
                }
                if !self.eat(b')') {
                    return Err(format!("missing `)` after the arguments of {name}").into());
                }
                return Ok(Expr::Call(name, args));
            }
            return Ok(Expr::Var(name));
        }
        Err(format!("unexpected `{}` at offset {start}", c as char).into())
    }
}

/// Whether the expression needs the relinearisation key, and which rotation steps and whether
/// conjugation it needs.
fn needs(e: &Expr, relin: &mut bool, steps: &mut Vec<i64>, conj: &mut bool) {
    match e {
        Expr::Num(_) | Expr::Var(_) => {}
        Expr::Neg(a) => needs(a, relin, steps, conj),
        Expr::Bin(op, a, b) => {
            if *op == '*' && !matches!(**a, Expr::Num(_)) && !matches!(**b, Expr::Num(_)) {
                *relin = true;
            }
            needs(a, relin, steps, conj);
            needs(b, relin, steps, conj);
        }
        Expr::Call(name, args) => {
            match (name.as_str(), args.as_slice()) {
                ("rot" | "rotate", [_, Expr::Num(k)]) => steps.push(*k as i64),
                ("rot" | "rotate", [_, Expr::Neg(k)]) => {
                    if let Expr::Num(k) = **k {
                        steps.push(-(k as i64))
                    }
                }
                ("conj" | "swap", _) => *conj = true,
                ("square", _) => *relin = true,
                _ => {}
            }
            for a in args {
                needs(a, relin, steps, conj);
            }
        }
    }
}

/// The operations the interpreter needs from a scheme's evaluator.
trait Ops {
    type Ct;
    fn add(&self, a: &Self::Ct, b: &Self::Ct) -> FileResult<Self::Ct>;
    fn sub(&self, a: &Self::Ct, b: &Self::Ct) -> FileResult<Self::Ct>;
    fn mul(&self, a: &Self::Ct, b: &Self::Ct) -> FileResult<Self::Ct>;
    fn square(&self, a: &Self::Ct) -> FileResult<Self::Ct>;
    fn neg(&self, a: &Self::Ct) -> FileResult<Self::Ct>;
    fn add_const(&self, a: &Self::Ct, c: f64) -> FileResult<Self::Ct>;
    fn mul_const(&self, a: &Self::Ct, c: f64) -> FileResult<Self::Ct>;
    fn rotate(&self, a: &Self::Ct, k: i64) -> FileResult<Self::Ct>;
    fn conj(&self, a: &Self::Ct) -> FileResult<Self::Ct>;
    fn copy(&self, a: &Self::Ct) -> FileResult<Self::Ct>;
}

impl Ops for ckks::Evaluator {
    type Ct = ckks::Ciphertext;
    fn add(&self, a: &Self::Ct, b: &Self::Ct) -> FileResult<Self::Ct> {
        Ok(ckks::Evaluator::add(self, a, b)?)
    }
    fn sub(&self, a: &Self::Ct, b: &Self::Ct) -> FileResult<Self::Ct> {
        Ok(ckks::Evaluator::sub(self, a, b)?)
    }
    fn mul(&self, a: &Self::Ct, b: &Self::Ct) -> FileResult<Self::Ct> {
        Ok(ckks::Evaluator::mul(self, a, b)?)
    }
    fn square(&self, a: &Self::Ct) -> FileResult<Self::Ct> {
        Ok(ckks::Evaluator::square(self, a)?)
    }
    fn neg(&self, a: &Self::Ct) -> FileResult<Self::Ct> {
        Ok(ckks::Evaluator::neg(self, a)?)
    }
    fn add_const(&self, a: &Self::Ct, c: f64) -> FileResult<Self::Ct> {
        Ok(ckks::Evaluator::add_const(self, a, c)?)
    }
    fn mul_const(&self, a: &Self::Ct, c: f64) -> FileResult<Self::Ct> {
        Ok(ckks::Evaluator::mul_const(self, a, c)?)
    }
    fn rotate(&self, a: &Self::Ct, k: i64) -> FileResult<Self::Ct> {
        Ok(ckks::Evaluator::rotate(self, a, k)?)
    }
    fn conj(&self, a: &Self::Ct) -> FileResult<Self::Ct> {
        Ok(ckks::Evaluator::conjugate(self, a)?)
    }
    fn copy(&self, a: &Self::Ct) -> FileResult<Self::Ct> {
        Ok(a.try_clone()?)
    }
}

fn integer(c: f64) -> FileResult<i64> {
    if c.fract() == 0.0 && c.abs() < 9.0e15 {
        Ok(c as i64)
    } else {
        Err(format!("BGV constants must be integers, got {c}").into())
    }
}

impl Ops for bgv::Evaluator {
    type Ct = bgv::Ciphertext;
    fn add(&self, a: &Self::Ct, b: &Self::Ct) -> FileResult<Self::Ct> {
        Ok(bgv::Evaluator::add(self, a, b)?)
    }
    fn sub(&self, a: &Self::Ct, b: &Self::Ct) -> FileResult<Self::Ct> {
        Ok(bgv::Evaluator::sub(self, a, b)?)
    }
    fn mul(&self, a: &Self::Ct, b: &Self::Ct) -> FileResult<Self::Ct> {
        Ok(bgv::Evaluator::mul(self, a, b)?)
    }
    fn square(&self, a: &Self::Ct) -> FileResult<Self::Ct> {
        Ok(bgv::Evaluator::square(self, a)?)
    }
    fn neg(&self, a: &Self::Ct) -> FileResult<Self::Ct> {
        Ok(bgv::Evaluator::neg(self, a)?)
    }
    fn add_const(&self, a: &Self::Ct, c: f64) -> FileResult<Self::Ct> {
        Ok(bgv::Evaluator::add_const(self, a, integer(c)?)?)
    }
    fn mul_const(&self, a: &Self::Ct, c: f64) -> FileResult<Self::Ct> {
        Ok(bgv::Evaluator::mul_const(self, a, integer(c)?)?)
    }
    fn rotate(&self, a: &Self::Ct, k: i64) -> FileResult<Self::Ct> {
        Ok(bgv::Evaluator::rotate_rows(self, a, k)?)
    }
    fn conj(&self, a: &Self::Ct) -> FileResult<Self::Ct> {
        Ok(bgv::Evaluator::rotate_columns(self, a)?)
    }
    fn copy(&self, a: &Self::Ct) -> FileResult<Self::Ct> {
        Ok(a.try_clone()?)
    }
}

/// A value of the interpreter: a ciphertext or a plain number.
enum Value<C> {
    Ct(C),
    Num(f64),
}

fn interpret<O: Ops>(ev: &O, e: &Expr, vars: &BTreeMap<String, O::Ct>) -> FileResult<Value<O::Ct>> {
    use Value::{Ct, Num};
    Ok(match e {
        Expr::Num(x) => Num(*x),
        Expr::Var(name) => Ct(ev.copy(vars.get(name).ok_or_else(|| {
            format!("unknown input `{name}` (give it with --input {name}=FILE)")
        })?)?),
        Expr::Neg(a) => match interpret(ev, a, vars)? {
            Ct(c) => Ct(ev.neg(&c)?),
            Num(x) => Num(-x),
        },
        Expr::Bin(op, a, b) => {
            let (a, b) = (interpret(ev, a, vars)?, interpret(ev, b, vars)?);
            match (op, a, b) {
                ('+', Num(x), Num(y)) => Num(x + y),
                ('-', Num(x), Num(y)) => Num(x - y),
                ('*', Num(x), Num(y)) => Num(x * y),
                ('+', Ct(c), Num(x)) | ('+', Num(x), Ct(c)) => Ct(ev.add_const(&c, x)?),
                ('-', Ct(c), Num(x)) => Ct(ev.add_const(&c, -x)?),
                ('-', Num(x), Ct(c)) => Ct(ev.add_const(&ev.neg(&c)?, x)?),
                ('*', Ct(c), Num(x)) | ('*', Num(x), Ct(c)) => Ct(ev.mul_const(&c, x)?),
                ('+', Ct(a), Ct(b)) => Ct(ev.add(&a, &b)?),
                ('-', Ct(a), Ct(b)) => Ct(ev.sub(&a, &b)?),
                ('*', Ct(a), Ct(b)) => Ct(ev.mul(&a, &b)?),
                (op, _, _) => return Err(format!("unknown operator `{op}`").into()),
            }
        }
        Expr::Call(name, args) => {
            let vals = args
                .iter()
                .map(|a| interpret(ev, a, vars))
                .collect::<FileResult<Vec<_>>>()?;
            match (name.as_str(), vals.as_slice()) {
                ("rot" | "rotate", [Ct(c), Num(k)]) if k.fract() == 0.0 => {
                    Ct(ev.rotate(c, *k as i64)?)
                }
                ("conj" | "swap", [Ct(c)]) => Ct(ev.conj(c)?),
                ("square", [Ct(c)]) => Ct(ev.square(c)?),
                _ => {
                    return Err(format!(
                        "unknown call `{name}` with these arguments (known: rot(ct, k), \
                         conj(ct), swap(ct), square(ct))"
                    )
                    .into())
                }
            }
        }
    })
}

fn eval(
    keys: &Path,
    inputs: &[String],
    expression: &str,
    out: &Path,
    c: Compression,
    device: Device,
) -> FileResult {
    let expr = Parser::parse(expression)?;
    let (mut relin, mut steps, mut conj) = (false, Vec::new(), false);
    needs(&expr, &mut relin, &mut steps, &mut conj);
    let inputs: Vec<(String, PathBuf)> = inputs
        .iter()
        .map(|s| {
            s.split_once('=')
                .map(|(n, p)| (n.trim().to_string(), PathBuf::from(p.trim())))
                .ok_or_else(|| format!("--input `{s}`: expected NAME=FILE"))
        })
        .collect::<Result<_, _>>()?;
    let params = load_params(keys)?;
    match params {
        SchemeParameters::Ckks(p) => {
            let ctx = CkksContext::new(&p, device)?;
            let codec = Codec::from(&ctx);
            let mut ev = ckks::Evaluator::new(&ctx);
            if relin {
                ev = ev.with_relinearization_key(load::<RelinearizationKey>(
                    &codec,
                    &keys.join(RELIN_KEY),
                )?)?;
            }
            if !steps.is_empty() || conj {
                let rlwe = ctx.rlwe();
                let mut wanted: Vec<u64> = steps
                    .iter()
                    .map(|&k| rlwe.galois_element_for_rotation(k))
                    .collect();
                if conj {
                    wanted.push(rlwe.galois_element_for_conjugation());
                }
                ev = ev.with_galois_keys(load_galois(&codec, keys, &wanted)?)?;
            }
            let mut vars = BTreeMap::new();
            for (name, path) in &inputs {
                vars.insert(name.clone(), load::<ckks::Ciphertext>(&codec, path)?);
            }
            match interpret(&ev, &expr, &vars)? {
                Value::Ct(ct) => report(out, save(&codec, out, &ct, c)?),
                Value::Num(_) => return Err("the expression has no encrypted input".into()),
            }
        }
        SchemeParameters::Bgv(p) => {
            let ctx = BgvContext::new(&p, device)?;
            let codec = Codec::from(&ctx);
            let mut ev = bgv::Evaluator::new(&ctx);
            if relin {
                ev = ev.with_relinearization_key(load::<RelinearizationKey>(
                    &codec,
                    &keys.join(RELIN_KEY),
                )?)?;
            }
            if !steps.is_empty() || conj {
                let rlwe = ctx.rlwe();
                let mut wanted: Vec<u64> = steps
                    .iter()
                    .map(|&k| rlwe.galois_element_for_rotation(k))
                    .collect();
                if conj {
                    wanted.push(rlwe.galois_element_for_conjugation());
                }
                ev = ev.with_galois_keys(load_galois(&codec, keys, &wanted)?)?;
            }
            let mut vars = BTreeMap::new();
            for (name, path) in &inputs {
                vars.insert(name.clone(), load::<bgv::Ciphertext>(&codec, path)?);
            }
            match interpret(&ev, &expr, &vars)? {
                Value::Ct(ct) => report(out, save(&codec, out, &ct, c)?),
                Value::Num(_) => return Err("the expression has no encrypted input".into()),
            }
        }
    }
    Ok(())
}

/// Loads only the Galois keys the expression uses.
fn load_galois(codec: &Codec, keys: &Path, wanted: &[u64]) -> FileResult<GaloisKeys> {
    let path = keys.join(GALOIS_KEYS);
    let info = inspect(open(&path)?)?;
    if info.kind != ObjectKind::GaloisKeys {
        return Err(format!("{}: not a Galois key set", path.display()).into());
    }
    let gk = codec
        .read_galois_keys_filtered(open(&path)?, |g| wanted.contains(&g))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(gk)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expression_parser_builds_the_expected_tree() {
        let e = Parser::parse("x*y + rot(x, -1) - 0.5").unwrap();
        let want = Expr::Bin(
            '-',
            Box::new(Expr::Bin(
                '+',
                Box::new(Expr::Bin(
                    '*',
                    Box::new(Expr::Var("x".into())),
                    Box::new(Expr::Var("y".into())),
                )),
                Box::new(Expr::Call(
                    "rot".into(),
                    vec![Expr::Var("x".into()), Expr::Neg(Box::new(Expr::Num(1.0)))],
                )),
            )),
            Box::new(Expr::Num(0.5)),
        );
        assert_eq!(e, want);
        let (mut relin, mut steps, mut conj) = (false, Vec::new(), false);
        needs(&e, &mut relin, &mut steps, &mut conj);
        assert!(relin && !conj);
        assert_eq!(steps, vec![-1]);
        assert_eq!(
            Parser::parse("-(2.5e1)").unwrap(),
            Expr::Neg(Box::new(Expr::Num(25.0)))
        );
        assert!(Parser::parse("x +").is_err());
        assert!(Parser::parse("rot(x, 1").is_err());
        assert!(Parser::parse("x $ y").is_err());
    }
}
