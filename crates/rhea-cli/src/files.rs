//! The file verbs of the `rhea` command: key generation, encryption, evaluation, decryption and
//! inspection of serialised objects (`docs/format.md`), for CKKS and BGV.
//!
//! ```text
//! rhea keygen --params list                                       # presets: depth, slots, purpose
//! rhea keygen --scheme ckks --params n13_logqp200_levels2 --rotations 1,-1 --out keys/
//! rhea keygen --scheme bgv --out bgv-keys/                         # BGV at he_booster_n13_logqp218
//! rhea encrypt --keys keys/ --values 1,2,3 --out x.rhea            # public-key encryption
//! rhea encrypt --keys keys/ --secret --values 4,5,6 --out y.rhea   # secret key: seeded, half size
//! rhea eval --keys keys/ --input x=x.rhea --input y=y.rhea 'x*y + rot(x, 1) - 0.5' --out z.rhea
//! rhea decrypt --keys keys/ z.rhea --count 4
//! rhea inspect keys/*.rhea z.rhea
//! ```
//!
//! `keygen` writes `params.rhea`, `secret_key.rhea` (mode 0600), `public_key.rhea`,
//! `relin_key.rhea` and (with `--rotations` or `--conjugation`) `galois_keys.rhea` into the
//! output directory, and refuses to overwrite existing key files unless `--force` is given; the
//! other verbs find them with `--keys DIR`. Errors name the file or value that failed and the
//! flag that fixes it.

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
    SerialError, Serializable,
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
        /// A preset name, `list` (the presets with their depth, slots and purpose), a JSON
        /// parameter-literal file, or an intent: `depth=10,scale_bits=40,slots=2^14` (CKKS) or
        /// `depth=3,plaintext_bits=20,slots=2^13` (BGV), also `security=192|256`, `log_n`,
        /// `dnum`. Default: the scheme's small 128-bit preset, `n13_logqp200_levels2` for CKKS,
        /// `he_booster_n13_logqp218` for BGV.
        #[arg(long)]
        params: Option<String>,
        /// The output directory (created if needed).
        #[arg(long, short, default_value = ".")]
        out: PathBuf,
        /// Overwrite key files that already exist in the output directory (by default keygen
        /// refuses: it would destroy the only secret key able to decrypt older ciphertexts).
        #[arg(long)]
        force: bool,
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
        /// The expression, e.g. `x*y + rot(x, 1) - 0.5`, or `@FILE` to read it from a file (for
        /// expressions longer than a command line allows). Any length and nesting depth is
        /// accepted (parsed and evaluated without recursion); rotation steps must be constant
        /// integers with |step| < N/2.
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
            force,
            rotations,
            conjugation,
            compression,
        } => keygen(
            &scheme,
            params.as_deref(),
            &out,
            force,
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

/// The default CKKS preset of `rhea keygen`.
pub(crate) const DEFAULT_CKKS_PRESET: &str = "n13_logqp200_levels2";
/// The default BGV preset of `rhea keygen`: the smallest 128-bit set, full batching.
pub(crate) const DEFAULT_BGV_PRESET: &str = "he_booster_n13_logqp218";

/// The preset names of one scheme, for error messages.
fn names<L>(presets: Vec<rhea::params::Preset<L>>) -> String {
    presets
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads a JSON parameter literal, naming the file in every error.
fn literal_file<T: serde::de::DeserializeOwned>(path: &str) -> FileResult<T> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("--params {path}: {e}"))?;
    serde_json::from_str(&text)
        .map_err(|e| format!("--params {path}: not a parameter literal: {e}").into())
}

/// A CKKS preset by name, or a JSON literal file (`*.json`); the one table of CKKS presets the
/// file verbs and `rhea bench` share.
pub(crate) fn ckks_literal(name: &str) -> FileResult<CkksParametersLiteral> {
    if let Some(lit) = CkksParametersLiteral::by_name(name) {
        return Ok(lit);
    }
    Ok(match name {
        intent if intent.starts_with("depth=") => intent.parse::<CkksIntent>()?.literal()?,
        path if path.ends_with(".json") => literal_file(path)?,
        other => {
            return Err(format!(
                "unknown CKKS preset `{other}` (known: {}; or a .json literal file, or an \
                 intent such as depth=10,scale_bits=40; `rhea keygen --params list` describes \
                 them)",
                names(CkksParametersLiteral::presets())
            )
            .into())
        }
    })
}

/// A BGV preset by name, or a JSON literal file (`*.json`); shared with `rhea bench`.
pub(crate) fn bgv_literal(name: &str) -> FileResult<BgvParametersLiteral> {
    if let Some(lit) = BgvParametersLiteral::by_name(name) {
        return Ok(lit);
    }
    Ok(match name {
        intent if intent.starts_with("depth=") => intent.parse::<BgvIntent>()?.literal()?,
        path if path.ends_with(".json") => literal_file(path)?,
        other => {
            return Err(format!(
                "unknown BGV preset `{other}` (known: {}; or a .json literal file, or an \
                 intent such as depth=3,plaintext_bits=20; `rhea keygen --params list` \
                 describes them)",
                names(BgvParametersLiteral::presets())
            )
            .into())
        }
    })
}

/// `rhea keygen --params list`: every preset with its ring, depth, slots, modulus, security and
/// purpose.
fn list_presets() -> FileResult {
    println!(
        "{:<6} {:<30} {:>6} {:>6} {:>6} {:>8} {:<9} purpose",
        "scheme", "preset", "N", "depth", "slots", "log QP", "security"
    );
    let security = |r: &rhea::params::SecurityReport| {
        if r.meets_128_bits {
            "128-bit"
        } else {
            "INSECURE"
        }
    };
    let default = |name: &str| {
        if name == DEFAULT_CKKS_PRESET || name == DEFAULT_BGV_PRESET {
            " (keygen's default)"
        } else {
            ""
        }
    };
    for preset in CkksParametersLiteral::presets() {
        let (name, purpose) = (preset.name, preset.purpose);
        let p = preset.literal.build()?;
        println!(
            "{:<6} {:<30} {:>6} {:>6} {:>6} {:>8.0} {:<9} {purpose}{}",
            "ckks",
            name,
            format!("2^{}", p.log_n()),
            p.max_level(),
            p.max_slots(),
            p.log_q() + p.log_p(),
            security(p.security()),
            default(name),
        );
    }
    for preset in BgvParametersLiteral::presets() {
        let (name, purpose) = (preset.name, preset.purpose);
        let p = preset.literal.build()?;
        let slots = if p.batching() {
            p.slots().to_string()
        } else {
            "-".to_string()
        };
        println!(
            "{:<6} {:<30} {:>6} {:>6} {:>6} {:>8.0} {:<9} {purpose}{} (t = {})",
            "bgv",
            name,
            format!("2^{}", p.log_n()),
            p.max_level(),
            slots,
            p.log_q() + p.log_p(),
            security(p.security()),
            default(name),
            p.t(),
        );
    }
    println!(
        "depth: the multiplications a fresh ciphertext allows (its levels); slots: the values \
         one ciphertext holds (CKKS: reals, N/2; BGV: integers mod t, N)"
    );
    Ok(())
}

// ---------------------------------------------------------------------- file helpers

fn open(path: &Path) -> FileResult<BufReader<File>> {
    File::open(path).map(BufReader::new).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::NotFound {
            match path.file_name().and_then(|n| n.to_str()) {
                Some(PARAMS | SECRET_KEY | PUBLIC_KEY | RELIN_KEY) => {
                    "; make the keys with `rhea keygen --out DIR` and pass that DIR with --keys"
                }
                Some(GALOIS_KEYS) => {
                    "; make Galois keys with `rhea keygen --rotations STEPS` (or --conjugation)"
                }
                _ => "",
            }
        } else {
            ""
        };
        format!("{}: {e}{hint}", path.display()).into()
    })
}

/// Creates `path` for writing, naming it in the error.
fn create(path: &Path) -> FileResult<BufWriter<File>> {
    File::create(path)
        .map(BufWriter::new)
        .map_err(|e| format!("{}: cannot create: {e}", path.display()).into())
}

/// Creates the secret-key file readable and writable by its owner only: created with mode
/// 0600 (never widened and narrowed afterwards), and never over an existing file (the caller
/// removes an old one first when `--force` is given).
fn create_private(path: &Path) -> FileResult<BufWriter<File>> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
        .open(path)
        .map(BufWriter::new)
        .map_err(|e| format!("{}: cannot create: {e}", path.display()).into())
}

fn save<T: Serializable>(codec: &Codec, path: &Path, obj: &T, c: Compression) -> FileResult<u64> {
    let mut w = create(path)?;
    let n = codec
        .write(&mut w, obj, c)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    w.flush().map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(n)
}

/// A serialisation error of `path`, with CLI advice for the cases a user can fix.
fn serial_error(path: &Path, keys: &Path, e: SerialError) -> Box<dyn std::error::Error> {
    let advice = match &e {
        SerialError::ParametersMismatch { .. } => format!(
            " (it was made with other keys than those in {}; pass the --keys directory it was \
             made with)",
            keys.display()
        ),
        SerialError::WrongKind { .. } => format!(
            " (is it the right file, and are the keys in {} the ones it was made with? pass \
             the --keys directory it was made with)",
            keys.display()
        ),
        SerialError::BadMagic { .. } => {
            " (not a file written by rhea; `rhea inspect FILE` describes rhea files)".to_string()
        }
        _ => String::new(),
    };
    format!("{}: {e}{advice}", path.display()).into()
}

fn load<T: Serializable>(codec: &Codec, keys: &Path, path: &Path) -> FileResult<T> {
    codec
        .read(open(path)?)
        .map_err(|e| serial_error(path, keys, e))
}

fn load_params(keys: &Path) -> FileResult<SchemeParameters> {
    let path = keys.join(PARAMS);
    read_parameters(open(&path)?).map_err(|e| serial_error(&path, keys, e))
}

fn load_secret_key(codec: &Codec, keys: &Path) -> FileResult<SecretKey> {
    let path = keys.join(SECRET_KEY);
    codec
        .read_secret_key(open(&path)?)
        .map_err(|e| serial_error(&path, keys, e))
}

fn report(path: &Path, bytes: u64) {
    println!("wrote {} ({bytes} bytes)", path.display());
}

/// A library error, with the advice a user of the command line can act on (flags, presets)
/// instead of the library's advice (Rust calls).
fn advise(e: rhea::Error) -> Box<dyn std::error::Error> {
    use rhea::Error as E;
    match e {
        E::MissingRotationKey { step, .. } => format!(
            "no Galois key for rotation by {step}: make the keys with `rhea keygen \
             --rotations {step}` (with every step the expression uses)"
        )
        .into(),
        E::MissingConjugationKey { .. } => "no conjugation (BGV: row-swap) key: make the keys \
             with `rhea keygen --conjugation`"
            .into(),
        E::MissingRelinearizationKey { .. } => format!(
            "the expression multiplies ciphertexts and needs {RELIN_KEY} from `rhea keygen` in \
             the --keys directory"
        )
        .into(),
        E::LevelUnderflow { op, level, needed } => format!(
            "`{op}` needs {needed} more level(s) but the ciphertext is at level {level}: use a \
             preset with a larger depth (`rhea keygen --params list`) or a shallower expression"
        )
        .into(),
        E::ScaleOverflow { log_modulus, .. } => format!(
            "the values at this scale do not fit below the modulus (2^{log_modulus:.0}): use \
             smaller values, or a preset with more levels (`rhea keygen --params list`)"
        )
        .into(),
        E::NoiseBudgetExhausted { op, level, .. } => format!(
            "`{op}`: the noise budget is exhausted at level {level}: use a preset with a larger \
             depth (`rhea keygen --params list`) or a shallower expression"
        )
        .into(),
        E::PlaintextOutOfRange {
            value,
            index,
            t,
            range,
        } => {
            let shown = if range.starts_with('(') {
                format!("from -{} to {}", (t - 1) / 2, t / 2)
            } else {
                format!("from 0 to {}", t - 1)
            };
            format!(
                "--values: {value} (value number {}) is out of range: BGV encrypts integers \
                 {shown} (t = {t}); choose a preset or a parameter file with a larger t",
                index + 1
            )
            .into()
        }
        E::InsecureParameters { reason } => format!(
            "the parameters are below 128-bit security ({reason}): use a preset (`rhea keygen \
             --params list`), or set \"allow_insecure_below_128_bits\": true in the JSON file \
             if this is only a test"
        )
        .into(),
        E::ParametersMismatch { .. } => "the inputs and the keys belong to different parameters: \
             pass the --keys directory the inputs were made with"
            .into(),
        other => Box::new(other),
    }
}

// ---------------------------------------------------------------------- keygen

fn keygen(
    scheme: &str,
    params: Option<&str>,
    out: &Path,
    force: bool,
    rotations: &[i64],
    conjugation: bool,
    c: Compression,
) -> FileResult {
    if params == Some("list") {
        return list_presets();
    }
    let galois = !rotations.is_empty() || conjugation;
    let default = match scheme {
        "ckks" => DEFAULT_CKKS_PRESET,
        "bgv" => DEFAULT_BGV_PRESET,
        other => return Err(format!("unknown scheme `{other}` (use --scheme ckks or bgv)").into()),
    };
    let params = params.unwrap_or(default);
    // Refuse before any work if keys would be overwritten. With --force every old key file
    // goes, Galois keys included (they belong to the old secret key).
    let existing: Vec<PathBuf> = [PARAMS, SECRET_KEY, PUBLIC_KEY, RELIN_KEY, GALOIS_KEYS]
        .iter()
        .map(|f| out.join(f))
        .filter(|p| p.exists())
        .collect();
    if !existing.is_empty() && !force {
        let list: Vec<String> = existing.iter().map(|p| p.display().to_string()).collect();
        return Err(format!(
            "{} already {}; keygen does not overwrite keys (ciphertexts made with them \
             could no longer be decrypted): choose another --out directory, or pass --force",
            list.join(", "),
            if list.len() == 1 { "exists" } else { "exist" }
        )
        .into());
    }
    std::fs::create_dir_all(out).map_err(|e| format!("--out {}: {e}", out.display()))?;
    let (codec, sk, pk, rlk, gk) = match scheme {
        "ckks" => {
            let p = ckks_literal(params)?.build().map_err(advise)?;
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
            (Codec::from(&ctx), sk, pk, rlk, gk)
        }
        _ => {
            let p = bgv_literal(params)?.build().map_err(advise)?;
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
            (Codec::from(&ctx), sk, pk, rlk, gk)
        }
    };
    for path in &existing {
        std::fs::remove_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    write_keys(&codec, out, &sk, &pk, &rlk, gk.as_ref(), c)
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
    let mut w = create(&path)?;
    let n = write_parameters(&mut w, codec.params())?;
    w.flush()?;
    report(&path, n);

    let path = out.join(SECRET_KEY);
    let mut w = create_private(&path)?;
    let n = codec.write_secret_key(&mut w, sk)?;
    w.flush()?;
    report(&path, n);
    println!("  (the secret key, readable by you only: keep this file private)");

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

/// Parses `--values`, naming the value that is not a number.
fn parse_values<T: std::str::FromStr>(values: &[String], what: &str) -> FileResult<Vec<T>>
where
    T::Err: std::fmt::Display,
{
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.trim().parse::<T>().map_err(|e| {
                format!(
                    "--values: `{v}` (value number {}) is not {what}: {e}",
                    i + 1
                )
                .into()
            })
        })
        .collect()
}

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
            let vals: Vec<f64> = parse_values(values, "a number")?;
            if vals.len() > p.max_slots() {
                return Err(format!(
                    "--values: {} values, but a ciphertext of these parameters holds {} \
                     (choose a preset with more slots: `rhea keygen --params list`)",
                    vals.len(),
                    p.max_slots()
                )
                .into());
            }
            if let Some((i, v)) = vals.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(format!("--values: {v} (value number {}) is not finite", i + 1).into());
            }
            let pt = ckks::Encoder::new(&ctx)?.encode(&vals).map_err(advise)?;
            let ct = if secret {
                let sk = load_secret_key(&codec, keys)?;
                ckks::Encryptor::with_secret_key(&ctx, &sk)?.encrypt(&pt)?
            } else {
                let pk: PublicKey = load(&codec, keys, &keys.join(PUBLIC_KEY))?;
                ckks::Encryptor::new(&ctx, &pk)?.encrypt(&pt)?
            };
            report(out, save(&codec, out, &ct, c)?);
        }
        SchemeParameters::Bgv(p) => {
            let ctx = BgvContext::new(&p, device)?;
            let codec = Codec::from(&ctx);
            let vals: Vec<i64> = parse_values(values, "an integer (BGV encrypts integers)")?;
            if vals.len() > p.slots() {
                return Err(format!(
                    "--values: {} values, but a ciphertext of these parameters holds {}",
                    vals.len(),
                    p.slots()
                )
                .into());
            }
            let pt = bgv::Encoder::new(&ctx)?
                .encode_signed_at(&vals, p.max_level())
                .map_err(advise)?;
            let ct = if secret {
                let sk = load_secret_key(&codec, keys)?;
                bgv::Encryptor::with_secret_key(&ctx, &sk)?.encrypt(&pt)?
            } else {
                let pk: PublicKey = load(&codec, keys, &keys.join(PUBLIC_KEY))?;
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
            let ct: ckks::Ciphertext = load(&codec, keys, input)?;
            let pt = ckks::Decryptor::new(&ctx, &sk)?
                .decrypt(&ct)
                .map_err(advise)?;
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
            let ct: bgv::Ciphertext = load(&codec, keys, input)?;
            let d = bgv::Decryptor::new(&ctx, &sk)?
                .decrypt(&ct)
                .map_err(|e| format!("{}: {}", input.display(), advise(e)))?;
            let values = bgv::Encoder::new(&ctx)?.decode_signed(&d)?;
            let shown: Vec<String> = values.iter().take(count).map(|v| v.to_string()).collect();
            println!("{}", shown.join(", "));
            match d.noise_budget() {
                Some(bits) => eprintln!("noise budget: {bits} bits"),
                None => eprintln!(
                    "noise budget: unknown (the tracked noise bound had passed Q/2, so the \
                     values may be wrong)"
                ),
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------- inspect

fn inspect_files(files: &[PathBuf]) -> FileResult {
    for path in files {
        let len = std::fs::metadata(path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .len();
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

/// One item of an expression in postfix (reverse Polish) order: parsing and evaluation both
/// work on an explicit stack, so no expression, however long or deeply nested, can overflow
/// the call stack (and no tree is dropped recursively).
#[derive(Clone, Debug, PartialEq)]
enum Item {
    Num(f64),
    Var(String),
    Neg,
    Bin(char),
    /// A call with its argument count (the arguments precede it).
    Call(String, usize),
}

/// An operator waiting on the parser's stack.
enum Pending {
    Neg,
    Bin(char),
    /// An opening parenthesis: of a call (with its name and the arguments seen so far) or a
    /// group.
    Open(Option<(String, usize)>, usize),
}

fn precedence(op: char) -> u8 {
    match op {
        '*' => 2,
        _ => 1,
    }
}

/// The most items an expression may have (a bound on memory, far above any useful expression).
const MAX_ITEMS: usize = 10_000_000;

/// Parses `+ - *`, unary `-`, numbers, names, parentheses and calls `name(a, b, ...)` into
/// postfix order with the shunting-yard algorithm (no recursion).
fn parse(src: &str) -> FileResult<Vec<Item>> {
    let s = src.as_bytes();
    let mut i = 0;
    let mut out: Vec<Item> = Vec::new();
    let mut ops: Vec<Pending> = Vec::new();
    let mut want_operand = true;
    let err = |msg: String| -> FileResult<Vec<Item>> { Err(format!("expression: {msg}").into()) };
    // Moves pending operators to the output until an opening parenthesis (not popped).
    fn unwind(out: &mut Vec<Item>, ops: &mut Vec<Pending>, min_prec: u8) {
        while let Some(top) = ops.last() {
            match top {
                Pending::Neg => out.push(Item::Neg),
                Pending::Bin(op) if precedence(*op) >= min_prec => out.push(Item::Bin(*op)),
                _ => return,
            }
            ops.pop();
        }
    }
    loop {
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        if out.len() > MAX_ITEMS {
            return err(format!("longer than {MAX_ITEMS} items"));
        }
        let Some(&c) = s.get(i) else { break };
        let start = i;
        if want_operand {
            if c.is_ascii_digit() || c == b'.' {
                while i < s.len()
                    && (s[i].is_ascii_digit()
                        || matches!(s[i], b'.' | b'e' | b'E')
                        || (matches!(s[i], b'+' | b'-') && matches!(s[i - 1], b'e' | b'E')))
                {
                    i += 1;
                }
                let text = &src[start..i];
                let x: f64 = text
                    .parse()
                    .map_err(|e| format!("expression: number `{text}` at offset {start}: {e}"))?;
                out.push(Item::Num(x));
                want_operand = false;
            } else if c.is_ascii_alphabetic() || c == b'_' {
                while i < s.len() && (s[i].is_ascii_alphanumeric() || s[i] == b'_') {
                    i += 1;
                }
                let name = src[start..i].to_string();
                let mut j = i;
                while j < s.len() && s[j].is_ascii_whitespace() {
                    j += 1;
                }
                if s.get(j) == Some(&b'(') {
                    ops.push(Pending::Open(Some((name, 1)), start));
                    i = j + 1;
                } else {
                    out.push(Item::Var(name));
                    want_operand = false;
                }
            } else if c == b'(' {
                ops.push(Pending::Open(None, start));
                i += 1;
            } else if c == b'-' {
                ops.push(Pending::Neg);
                i += 1;
            } else {
                return err(format!(
                    "expected a number, a name or `(` at offset {start}, found `{}`",
                    &src[start..]
                ));
            }
            continue;
        }
        i += 1;
        match c {
            b'+' | b'-' | b'*' => {
                let op = c as char;
                unwind(&mut out, &mut ops, precedence(op));
                ops.push(Pending::Bin(op));
                want_operand = true;
            }
            b',' => {
                unwind(&mut out, &mut ops, 0);
                match ops.last_mut() {
                    Some(Pending::Open(Some((_, argc)), _)) => *argc += 1,
                    _ => return err(format!("`,` outside a call at offset {start}")),
                }
                want_operand = true;
            }
            b')' => {
                unwind(&mut out, &mut ops, 0);
                match ops.pop() {
                    Some(Pending::Open(Some((name, argc)), _)) => out.push(Item::Call(name, argc)),
                    Some(Pending::Open(None, _)) => {}
                    _ => return err(format!("unmatched `)` at offset {start}")),
                }
            }
            _ => {
                return err(format!(
                    "expected an operator, `,` or `)` at offset {start}, found `{}`",
                    &src[start..]
                ))
            }
        }
    }
    if want_operand {
        return err("unexpected end (an operand is missing)".into());
    }
    unwind(&mut out, &mut ops, 0);
    if let Some(Pending::Open(_, at)) = ops.last() {
        return err(format!("the `(` at offset {at} is never closed"));
    }
    Ok(out)
}

/// What an expression needs: the relinearisation key, rotation steps and conjugation.
#[derive(Debug, Default, PartialEq)]
struct Needs {
    relin: bool,
    steps: Vec<i64>,
    conj: bool,
}

/// Checks the expression's shape without evaluating it (a stack of "constant value, or
/// encrypted"), and collects what it needs. Rotation steps must be constant integers with
/// `|step| < row` (the slots a rotation moves through: `N/2` for both schemes).
fn analyse(items: &[Item], row: usize) -> FileResult<Needs> {
    let mut needs = Needs::default();
    // `Some(x)`: a constant; `None`: an encrypted value.
    let mut stack: Vec<Option<f64>> = Vec::new();
    let underflow = || -> Box<dyn std::error::Error> { "expression: an operand is missing".into() };
    for item in items {
        let v = match item {
            Item::Num(x) => Some(*x),
            Item::Var(_) => None,
            Item::Neg => stack.pop().ok_or_else(underflow)?.map(|x| -x),
            Item::Bin(op) => {
                let b = stack.pop().ok_or_else(underflow)?;
                let a = stack.pop().ok_or_else(underflow)?;
                match (a, b) {
                    (Some(x), Some(y)) => Some(match op {
                        '+' => x + y,
                        '-' => x - y,
                        _ => x * y,
                    }),
                    (None, None) if *op == '*' => {
                        needs.relin = true;
                        None
                    }
                    _ => None,
                }
            }
            Item::Call(name, argc) => {
                if stack.len() < *argc {
                    return Err(underflow());
                }
                let args = stack.split_off(stack.len() - argc);
                match (name.as_str(), args.as_slice()) {
                    ("rot" | "rotate", [None, Some(k)]) => {
                        let k = *k;
                        if !(k.fract() == 0.0 && k.abs() < row as f64) {
                            return Err(format!(
                                "expression: rot(_, {k}): the step must be an integer with \
                                 |step| < {row} (the slots of a row)"
                            )
                            .into());
                        }
                        let k = k as i64;
                        if k != 0 && !needs.steps.contains(&k) {
                            needs.steps.push(k);
                        }
                    }
                    ("rot" | "rotate", [None, None]) => {
                        return Err("expression: rot(x, k): the step k must be a constant \
                                    integer, not an encrypted value"
                            .into())
                    }
                    ("conj" | "swap", [None]) => needs.conj = true,
                    ("square", [None]) => needs.relin = true,
                    _ => {
                        return Err(format!(
                            "expression: unknown call `{name}` with {argc} argument(s) of these \
                             kinds (known: rot(ct, k), conj(ct), swap(ct), square(ct))"
                        )
                        .into())
                    }
                }
                None
            }
        };
        stack.push(v);
    }
    match stack.as_slice() {
        [None] => Ok(needs),
        [Some(_)] => Err(
            "expression: it has no encrypted input (name one given with \
                          --input NAME=FILE)"
                .into(),
        ),
        _ => Err("expression: malformed".into()),
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
        ckks::Evaluator::add(self, a, b).map_err(advise)
    }
    fn sub(&self, a: &Self::Ct, b: &Self::Ct) -> FileResult<Self::Ct> {
        ckks::Evaluator::sub(self, a, b).map_err(advise)
    }
    fn mul(&self, a: &Self::Ct, b: &Self::Ct) -> FileResult<Self::Ct> {
        ckks::Evaluator::mul(self, a, b).map_err(advise)
    }
    fn square(&self, a: &Self::Ct) -> FileResult<Self::Ct> {
        ckks::Evaluator::square(self, a).map_err(advise)
    }
    fn neg(&self, a: &Self::Ct) -> FileResult<Self::Ct> {
        ckks::Evaluator::neg(self, a).map_err(advise)
    }
    fn add_const(&self, a: &Self::Ct, c: f64) -> FileResult<Self::Ct> {
        ckks::Evaluator::add_const(self, a, c).map_err(advise)
    }
    fn mul_const(&self, a: &Self::Ct, c: f64) -> FileResult<Self::Ct> {
        ckks::Evaluator::mul_const(self, a, c).map_err(advise)
    }
    fn rotate(&self, a: &Self::Ct, k: i64) -> FileResult<Self::Ct> {
        ckks::Evaluator::rotate(self, a, k).map_err(advise)
    }
    fn conj(&self, a: &Self::Ct) -> FileResult<Self::Ct> {
        ckks::Evaluator::conjugate(self, a).map_err(advise)
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
        bgv::Evaluator::add(self, a, b).map_err(advise)
    }
    fn sub(&self, a: &Self::Ct, b: &Self::Ct) -> FileResult<Self::Ct> {
        bgv::Evaluator::sub(self, a, b).map_err(advise)
    }
    fn mul(&self, a: &Self::Ct, b: &Self::Ct) -> FileResult<Self::Ct> {
        bgv::Evaluator::mul(self, a, b).map_err(advise)
    }
    fn square(&self, a: &Self::Ct) -> FileResult<Self::Ct> {
        bgv::Evaluator::square(self, a).map_err(advise)
    }
    fn neg(&self, a: &Self::Ct) -> FileResult<Self::Ct> {
        bgv::Evaluator::neg(self, a).map_err(advise)
    }
    fn add_const(&self, a: &Self::Ct, c: f64) -> FileResult<Self::Ct> {
        bgv::Evaluator::add_const(self, a, integer(c)?).map_err(advise)
    }
    fn mul_const(&self, a: &Self::Ct, c: f64) -> FileResult<Self::Ct> {
        bgv::Evaluator::mul_const(self, a, integer(c)?).map_err(advise)
    }
    fn rotate(&self, a: &Self::Ct, k: i64) -> FileResult<Self::Ct> {
        bgv::Evaluator::rotate_rows(self, a, k).map_err(advise)
    }
    fn conj(&self, a: &Self::Ct) -> FileResult<Self::Ct> {
        bgv::Evaluator::rotate_columns(self, a).map_err(advise)
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

/// Evaluates the postfix items on an explicit stack.
fn interpret<O: Ops>(
    ev: &O,
    items: &[Item],
    vars: &BTreeMap<String, O::Ct>,
) -> FileResult<Value<O::Ct>> {
    use Value::{Ct, Num};
    let mut stack: Vec<Value<O::Ct>> = Vec::new();
    let missing = || -> Box<dyn std::error::Error> { "expression: an operand is missing".into() };
    for item in items {
        let v = match item {
            Item::Num(x) => Num(*x),
            Item::Var(name) => Ct(ev.copy(vars.get(name).ok_or_else(|| {
                format!("unknown input `{name}` (give it with --input {name}=FILE)")
            })?)?),
            Item::Neg => match stack.pop().ok_or_else(missing)? {
                Ct(c) => Ct(ev.neg(&c)?),
                Num(x) => Num(-x),
            },
            Item::Bin(op) => {
                let b = stack.pop().ok_or_else(missing)?;
                let a = stack.pop().ok_or_else(missing)?;
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
            Item::Call(name, argc) => {
                if stack.len() < *argc {
                    return Err(missing());
                }
                let args = stack.split_off(stack.len() - argc);
                match (name.as_str(), args.as_slice()) {
                    // `analyse` checked the step: an integer below the row length.
                    ("rot" | "rotate", [Ct(c), Num(k)]) => Ct(ev.rotate(c, *k as i64)?),
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
        };
        stack.push(v);
    }
    match (stack.pop(), stack.is_empty()) {
        (Some(v), true) => Ok(v),
        _ => Err("expression: malformed".into()),
    }
}

fn parse_inputs(inputs: &[String]) -> FileResult<Vec<(String, PathBuf)>> {
    inputs
        .iter()
        .map(|s| {
            s.split_once('=')
                .map(|(n, p)| (n.trim().to_string(), PathBuf::from(p.trim())))
                .ok_or_else(|| {
                    format!("--input `{s}`: expected NAME=FILE, e.g. --input x=x.rhea").into()
                })
        })
        .collect()
}

fn eval(
    keys: &Path,
    inputs: &[String],
    expression: &str,
    out: &Path,
    c: Compression,
    device: Device,
) -> FileResult {
    let text;
    let expression = match expression.strip_prefix('@') {
        Some(path) => {
            text = std::fs::read_to_string(path)
                .map_err(|e| format!("expression file {path}: {e}"))?;
            text.as_str()
        }
        None => expression,
    };
    let items = parse(expression)?;
    let inputs = parse_inputs(inputs)?;
    let params = load_params(keys)?;
    // Both schemes rotate through rows of N/2 slots.
    let row = match &params {
        SchemeParameters::Ckks(p) => p.n(),
        SchemeParameters::Bgv(p) => p.n(),
    } / 2;
    let needs = analyse(&items, row)?;
    match params {
        SchemeParameters::Ckks(p) => {
            let ctx = CkksContext::new(&p, device)?;
            let codec = Codec::from(&ctx);
            let mut ev = ckks::Evaluator::new(&ctx);
            if needs.relin {
                ev = ev.with_relinearization_key(load::<RelinearizationKey>(
                    &codec,
                    keys,
                    &keys.join(RELIN_KEY),
                )?)?;
            }
            if !needs.steps.is_empty() || needs.conj {
                let rlwe = ctx.rlwe();
                let wanted = wanted_elements(
                    &needs,
                    |k| rlwe.galois_element_for_rotation(k),
                    rlwe.galois_element_for_conjugation(),
                );
                ev = ev.with_galois_keys(load_galois(&codec, keys, &wanted)?)?;
            }
            let mut vars = BTreeMap::new();
            for (name, path) in &inputs {
                vars.insert(name.clone(), load::<ckks::Ciphertext>(&codec, keys, path)?);
            }
            match interpret(&ev, &items, &vars)? {
                Value::Ct(ct) => report(out, save(&codec, out, &ct, c)?),
                Value::Num(_) => return Err("the expression has no encrypted input".into()),
            }
        }
        SchemeParameters::Bgv(p) => {
            let ctx = BgvContext::new(&p, device)?;
            let codec = Codec::from(&ctx);
            let mut ev = bgv::Evaluator::new(&ctx);
            if needs.relin {
                ev = ev.with_relinearization_key(load::<RelinearizationKey>(
                    &codec,
                    keys,
                    &keys.join(RELIN_KEY),
                )?)?;
            }
            if !needs.steps.is_empty() || needs.conj {
                let rlwe = ctx.rlwe();
                let wanted = wanted_elements(
                    &needs,
                    |k| rlwe.galois_element_for_rotation(k),
                    rlwe.galois_element_for_conjugation(),
                );
                ev = ev.with_galois_keys(load_galois(&codec, keys, &wanted)?)?;
            }
            let mut vars = BTreeMap::new();
            for (name, path) in &inputs {
                vars.insert(name.clone(), load::<bgv::Ciphertext>(&codec, keys, path)?);
            }
            match interpret(&ev, &items, &vars)? {
                Value::Ct(ct) => report(out, save(&codec, out, &ct, c)?),
                Value::Num(_) => return Err("the expression has no encrypted input".into()),
            }
        }
    }
    Ok(())
}

/// The Galois elements an expression needs, each with what it is for (a rotation step, or
/// `None` for the conjugation).
fn wanted_elements(
    needs: &Needs,
    rotation: impl Fn(i64) -> u64,
    conjugation: u64,
) -> Vec<(u64, Option<i64>)> {
    let mut wanted: Vec<(u64, Option<i64>)> = needs
        .steps
        .iter()
        .map(|&k| (rotation(k), Some(k)))
        .collect();
    if needs.conj {
        wanted.push((conjugation, None));
    }
    wanted
}

/// Loads only the Galois keys the expression uses; a missing one is an error naming the file
/// and the `rhea keygen` flag that makes it.
fn load_galois(
    codec: &Codec,
    keys: &Path,
    wanted: &[(u64, Option<i64>)],
) -> FileResult<GaloisKeys> {
    let path = keys.join(GALOIS_KEYS);
    let info = inspect(open(&path)?).map_err(|e| serial_error(&path, keys, e))?;
    if info.kind != ObjectKind::GaloisKeys {
        return Err(format!("{}: not a Galois key set", path.display()).into());
    }
    let gk = codec
        .read_galois_keys_filtered(open(&path)?, |g| wanted.iter().any(|(w, _)| *w == g))
        .map_err(|e| serial_error(&path, keys, e))?;
    let missing_steps: Vec<String> = wanted
        .iter()
        .filter(|(g, _)| !gk.contains(*g))
        .filter_map(|(_, k)| k.map(|k| k.to_string()))
        .collect();
    if !missing_steps.is_empty() {
        return Err(format!(
            "{}: no key for rotation by {}: make the keys with `rhea keygen --rotations {}` \
             (with every step the expression uses)",
            path.display(),
            missing_steps.join(", "),
            missing_steps.join(",")
        )
        .into());
    }
    if wanted.iter().any(|(g, k)| k.is_none() && !gk.contains(*g)) {
        return Err(format!(
            "{}: no conjugation (BGV: row-swap) key: make the keys with `rhea keygen \
             --conjugation`",
            path.display()
        )
        .into());
    }
    Ok(gk)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(n: &str) -> Item {
        Item::Var(n.into())
    }

    #[test]
    fn the_expression_parser_gives_the_expected_postfix_order() {
        let items = parse("x*y + rot(x, -1) - 0.5").unwrap();
        let want = vec![
            var("x"),
            var("y"),
            Item::Bin('*'),
            var("x"),
            Item::Num(1.0),
            Item::Neg,
            Item::Call("rot".into(), 2),
            Item::Bin('+'),
            Item::Num(0.5),
            Item::Bin('-'),
        ];
        assert_eq!(items, want);
        let needs = analyse(&items, 4096).unwrap();
        assert_eq!(
            needs,
            Needs {
                relin: true,
                steps: vec![-1],
                conj: false
            }
        );
        assert_eq!(parse("-(2.5e1)").unwrap(), vec![Item::Num(25.0), Item::Neg]);
        // Left associativity and precedence: a - b - c*d = (a - b) - (c*d).
        assert_eq!(
            parse("a - b - c*d").unwrap(),
            vec![
                var("a"),
                var("b"),
                Item::Bin('-'),
                var("c"),
                var("d"),
                Item::Bin('*'),
                Item::Bin('-')
            ]
        );
        // Unary minus binds tighter than `*`: -a*b = (-a)*b.
        assert_eq!(
            parse("-a*b").unwrap(),
            vec![var("a"), Item::Neg, var("b"), Item::Bin('*')]
        );
        for bad in [
            "x +", "rot(x, 1", "x $ y", "(x", "x)", "", "f(,)", "x y", "1 , 2",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn rotation_steps_must_be_constant_integers_that_fit_a_row() {
        let row = 4096;
        for ok in [
            "rot(x, 4095)",
            "rot(x, -4095)",
            "rot(x, 2*3 - 1)",
            "rot(x, 0) + x",
        ] {
            analyse(&parse(ok).unwrap(), row).unwrap();
        }
        assert_eq!(
            analyse(&parse("rot(x, 2*3 - 1)").unwrap(), row)
                .unwrap()
                .steps,
            vec![5]
        );
        for bad in [
            "rot(x, 4096)",
            "rot(x, -4096)",
            "rot(x, 1.5)",
            "rot(x, 1e300)",
            "rot(x, 99999999999999999999999)",
            "rot(x, y)",
        ] {
            let err = analyse(&parse(bad).unwrap(), row).unwrap_err().to_string();
            assert!(err.contains("step"), "{bad}: {err}");
        }
        let err = analyse(&parse("1 + 2").unwrap(), row)
            .unwrap_err()
            .to_string();
        assert!(err.contains("no encrypted input"), "{err}");
        let err = analyse(&parse("frob(x)").unwrap(), row)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown call"), "{err}");
    }

    /// 100 000 terms and 100 000 nested parentheses parse and analyse without recursion (the
    /// recursive-descent parser this replaced overflowed the stack on the nesting).
    #[test]
    fn long_and_deeply_nested_expressions_do_not_overflow_the_stack() {
        let n = 100_000;
        let sum = vec!["x"; n].join(" + ");
        let items = parse(&sum).unwrap();
        assert_eq!(items.len(), 2 * n - 1);
        assert!(!analyse(&items, 4096).unwrap().relin);
        let nested = format!("{}x{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(parse(&nested).unwrap(), vec![var("x")]);
        let negs = format!("{}x", "-".repeat(n));
        assert_eq!(parse(&negs).unwrap().len(), n + 1);
        let calls = format!("{}x{}", "square(".repeat(n), ")".repeat(n));
        assert!(analyse(&parse(&calls).unwrap(), 4096).unwrap().relin);
        let unclosed = format!("{}x", "(".repeat(n));
        let err = parse(&unclosed).unwrap_err().to_string();
        assert!(err.contains("never closed"), "{err}");
    }
}
