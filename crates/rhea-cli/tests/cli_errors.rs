//! The `rhea` binary end to end on bad input (issue 32): keygen defaults, key-file safety,
//! `--params list`, errors that name the file or value and give command-line advice, and
//! `rhea eval` on long expressions and bad rotation steps.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("rhea-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn path(&self, p: &str) -> PathBuf {
        self.0.join(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The CLI under test: the one cargo built with this test, or `$RHEA_CLI` where the test runs
/// away from its build tree (`scripts/gpu-run.sh` on the GPU machine points it at the carried
/// binary).
fn rhea_bin() -> std::path::PathBuf {
    std::env::var_os("RHEA_CLI")
        .map(Into::into)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_rhea").into())
}

fn rhea(dir: &Path, args: &[&str]) -> Output {
    Command::new(rhea_bin())
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = rhea(dir, args);
    assert!(
        out.status.success(),
        "rhea {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs a command that must fail, and returns its error message (stderr). The message must
/// not be a panic or a Rust call.
fn fails(dir: &Path, args: &[&str]) -> String {
    let out = rhea(dir, args);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success(), "rhea {args:?} succeeded: {err}");
    assert_eq!(out.status.code(), Some(1), "rhea {args:?}: {err}");
    assert!(!err.contains("panicked"), "rhea {args:?} panicked: {err}");
    assert!(
        !err.contains("KeyGenerator::") && !err.contains("Evaluator::") && !err.contains("(&sk"),
        "rhea {args:?}: a Rust call as advice: {err}"
    );
    err
}

#[test]
fn bgv_keygen_works_without_a_preset_and_round_trips() {
    let t = TempDir::new("bgv-default");
    let out = ok(
        &t.0,
        &[
            "keygen",
            "--scheme",
            "bgv",
            "--out",
            "k",
            "--rotations",
            "1",
        ],
    );
    assert!(out.contains("65537"), "{out}");
    for f in [
        "params.rhea",
        "secret_key.rhea",
        "public_key.rhea",
        "relin_key.rhea",
        "galois_keys.rhea",
    ] {
        assert!(t.path("k").join(f).exists(), "{f}");
    }
    ok(
        &t.0,
        &[
            "encrypt", "--keys", "k", "--values", "3,-4,5", "--out", "x.rhea",
        ],
    );
    ok(
        &t.0,
        &[
            "eval",
            "--keys",
            "k",
            "-i",
            "x=x.rhea",
            "x*x + rot(x, 1) - 2",
            "--out",
            "y.rhea",
        ],
    );
    let out = rhea(&t.0, &["decrypt", "--keys", "k", "y.rhea", "--count", "3"]);
    assert!(out.status.success());
    // x*x + rot(x, 1) - 2 = (9 - 4 - 2, 16 + 5 - 2, 25 + 0 - 2)
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "3, 19, 23");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("noise budget:") && err.contains("bits"),
        "{err}"
    );
}

#[test]
fn the_secret_key_is_private_and_keys_are_not_overwritten_without_force() {
    let t = TempDir::new("force");
    ok(&t.0, &["keygen", "--out", "k"]);
    let sk = t.path("k/secret_key.rhea");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&sk).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "secret key mode {mode:o}");
    }
    let before = std::fs::read(&sk).unwrap();
    let err = fails(&t.0, &["keygen", "--out", "k"]);
    assert!(
        err.contains("secret_key.rhea") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&sk).unwrap(),
        before,
        "the old key was touched"
    );
    // With --force the keys are replaced, and a secret key file that had been widened is
    // created anew with mode 0600.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&sk, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    ok(&t.0, &["keygen", "--out", "k", "--force"]);
    assert_ne!(std::fs::read(&sk).unwrap(), before, "not regenerated");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&sk).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "secret key mode after --force {mode:o}");
    }
}

#[test]
fn params_list_gives_depth_slots_and_purpose() {
    let t = TempDir::new("list");
    let out = ok(&t.0, &["keygen", "--params", "list"]);
    assert!(
        out.contains("depth") && out.contains("slots") && out.contains("purpose"),
        "{out}"
    );
    for (name, depth, slots) in [
        ("n13_logqp200_levels2", "2", "4096"),
        ("n16_logqp1560_levels24", "24", "32768"),
        ("he_booster_n13_logqp218", "3", "8192"),
        ("test_n12_levels5_insecure", "5", "4096"),
    ] {
        let line = out
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("{name} missing:\n{out}"));
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cols[3], depth, "{line}");
        assert_eq!(cols[4], slots, "{line}");
        assert!(cols.len() > 8, "no purpose: {line}");
    }
    assert!(out.contains("INSECURE"), "{out}");
}

#[test]
fn errors_name_the_file_or_value_and_give_cli_advice() {
    let t = TempDir::new("errors");
    // No keys yet.
    let err = fails(
        &t.0,
        &[
            "encrypt", "--keys", "nokeys", "--values", "1", "--out", "x.rhea",
        ],
    );
    assert!(
        err.contains("nokeys/params.rhea") && err.contains("rhea keygen"),
        "{err}"
    );
    ok(&t.0, &["keygen", "--out", "k"]);
    ok(
        &t.0,
        &[
            "keygen",
            "--scheme",
            "bgv",
            "--params",
            "test_n12_levels5_insecure",
            "--out",
            "b",
        ],
    );
    // A value that is not a number.
    let err = fails(
        &t.0,
        &[
            "encrypt", "--keys", "k", "--values", "1,zwei", "--out", "x.rhea",
        ],
    );
    assert!(err.contains("--values") && err.contains("zwei"), "{err}");
    // A BGV value outside (-t/2, t/2] is refused, not reduced.
    let err = fails(
        &t.0,
        &[
            "encrypt", "--keys", "b", "--values", "1,40000", "--out", "x.rhea",
        ],
    );
    assert!(
        err.contains("--values") && err.contains("40000") && err.contains("32768"),
        "{err}"
    );
    ok(
        &t.0,
        &[
            "encrypt",
            "--keys",
            "b",
            "--values",
            "32768,-32768",
            "--out",
            "b.rhea",
        ],
    );
    // A missing input file.
    let err = fails(&t.0, &["decrypt", "--keys", "k", "missing.rhea"]);
    assert!(err.contains("missing.rhea"), "{err}");
    // A ciphertext of other keys.
    ok(
        &t.0,
        &[
            "encrypt", "--keys", "k", "--values", "0.5", "--out", "x.rhea",
        ],
    );
    let err = fails(&t.0, &["decrypt", "--keys", "b", "x.rhea"]);
    assert!(err.contains("x.rhea") && err.contains("--keys"), "{err}");
    // A rotation without its key.
    let err = fails(
        &t.0,
        &[
            "eval",
            "--keys",
            "k",
            "-i",
            "x=x.rhea",
            "rot(x, 3)",
            "--out",
            "y.rhea",
        ],
    );
    assert!(
        err.contains("galois_keys.rhea") && err.contains("--rotations"),
        "{err}"
    );
    ok(&t.0, &["keygen", "--out", "r", "--rotations", "1"]);
    ok(
        &t.0,
        &[
            "encrypt", "--keys", "r", "--values", "0.5", "--out", "xr.rhea",
        ],
    );
    let err = fails(
        &t.0,
        &[
            "eval",
            "--keys",
            "r",
            "-i",
            "x=xr.rhea",
            "rot(x, 3)",
            "--out",
            "y.rhea",
        ],
    );
    assert!(
        err.contains("rotation by 3") && err.contains("--rotations 3"),
        "{err}"
    );
    // Too deep for the preset: advice names a preset listing, not a Rust call.
    let err = fails(
        &t.0,
        &[
            "eval",
            "--keys",
            "k",
            "-i",
            "x=x.rhea",
            "x*x*x*x*x",
            "--out",
            "y.rhea",
        ],
    );
    assert!(err.contains("--params list"), "{err}");
    // Unknown preset and scheme.
    let err = fails(&t.0, &["keygen", "--params", "n99", "--out", "z"]);
    assert!(
        err.contains("n99") && err.contains("--params list"),
        "{err}"
    );
    let err = fails(&t.0, &["keygen", "--scheme", "tfhe", "--out", "z"]);
    assert!(err.contains("tfhe") && err.contains("--scheme"), "{err}");
}

#[test]
fn eval_handles_long_expressions_and_refuses_bad_rotation_steps() {
    let t = TempDir::new("eval");
    ok(&t.0, &["keygen", "--out", "k", "--rotations", "1"]);
    ok(
        &t.0,
        &[
            "encrypt", "--keys", "k", "--values", "0.25,0.5", "--out", "x.rhea",
        ],
    );
    // 100 000 nested parentheses around a sum of 100 000 constants and x (from a file: longer
    // than one command-line argument may be).
    let n = 100_000;
    let expr = format!(
        "{}x + ({}){}",
        "(".repeat(n),
        vec!["0.00001"; n].join("+"),
        ")".repeat(n)
    );
    std::fs::write(t.path("long.txt"), &expr).unwrap();
    ok(
        &t.0,
        &[
            "eval",
            "--keys",
            "k",
            "-i",
            "x=x.rhea",
            "@long.txt",
            "--out",
            "y.rhea",
        ],
    );
    let got = ok(&t.0, &["decrypt", "--keys", "k", "y.rhea", "--count", "2"]);
    let vals: Vec<f64> = got.trim().split(", ").map(|v| v.parse().unwrap()).collect();
    assert!(
        (vals[0] - 1.25).abs() < 1e-3 && (vals[1] - 1.5).abs() < 1e-3,
        "{got}"
    );
    // 30 000 nested parentheses on the command line itself.
    let nested = format!("{}x{}", "(".repeat(30_000), ")".repeat(30_000));
    ok(
        &t.0,
        &[
            "eval", "--keys", "k", "-i", "x=x.rhea", &nested, "--out", "z.rhea",
        ],
    );
    let err = fails(
        &t.0,
        &[
            "eval",
            "--keys",
            "k",
            "-i",
            "x=x.rhea",
            "@nowhere.txt",
            "--out",
            "z.rhea",
        ],
    );
    assert!(err.contains("nowhere.txt"), "{err}");
    // 1000 ciphertext terms.
    let sum = vec!["x"; 1000].join("+");
    ok(
        &t.0,
        &[
            "eval", "--keys", "k", "-i", "x=x.rhea", &sum, "--out", "s.rhea",
        ],
    );
    let got = ok(&t.0, &["decrypt", "--keys", "k", "s.rhea", "--count", "1"]);
    assert!(
        (got.trim().parse::<f64>().unwrap() - 250.0).abs() < 1e-2,
        "{got}"
    );
    // Rotation steps that do not fit a row of 4096 slots, or are not integers.
    for bad in [
        "rot(x, 4096)",
        "rot(x, -99999999999999999999)",
        "rot(x, 0.5)",
        "rot(x, 1e308)",
    ] {
        let err = fails(
            &t.0,
            &[
                "eval", "--keys", "k", "-i", "x=x.rhea", bad, "--out", "y.rhea",
            ],
        );
        assert!(err.contains("step") && err.contains("4096"), "{bad}: {err}");
    }
    let err = fails(
        &t.0,
        &[
            "eval", "--keys", "k", "-i", "x=x.rhea", "(((x)", "--out", "y.rhea",
        ],
    );
    assert!(err.contains("never closed"), "{err}");
}
