//! The short, stable run of every fuzz target (issue 16): each committed corpus file under
//! `fuzz/corpus/<target>/` is replayed through the target's entry point, then a bounded number
//! of deterministic mutations of the corpus (a small xorshift mutator with a fixed seed) are.
//! A panic, or an input that takes longer than [`PER_INPUT`], fails the test and prints the
//! input. Long runs use libFuzzer on nightly (`fuzz/run.sh`, docs/reliability.md "Fuzzing").
//!
//! Each target runs on a thread with an 8 MiB stack (a main thread's usual size; unoptimised
//! frames are several times larger than release ones). `OPENKEEL_FUZZ_MUTATIONS` changes the number of mutations per target
//! (default 2000, each target also stops after [`BUDGET`]).

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Longest time one input may take (a debug build on a busy 2-core machine).
const PER_INPUT: Duration = Duration::from_secs(5);
/// Time after which a target stops mutating (the corpus is always replayed in full).
const BUDGET: Duration = Duration::from_secs(4);
const DEFAULT_MUTATIONS: usize = 2000;
const STACK: usize = 8 * 1024 * 1024;
/// The largest input the mutator makes.
const MAX_LEN: usize = 64 * 1024;

type Target = fn(&[u8]);

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = corpus_dir(target);
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {} not readable: {e}", dir.display()));
    let mut files: Vec<(String, Vec<u8>)> = entries
        .map(|e| e.unwrap_or_else(|e| panic!("corpus {}: {e}", dir.display())))
        .filter(|e| e.path().is_file())
        .map(|e| {
            let data = std::fs::read(e.path())
                .unwrap_or_else(|err| panic!("{}: {err}", e.path().display()));
            (e.file_name().to_string_lossy().into_owned(), data)
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "corpus {} is empty", dir.display());
    files
}

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// The fixed seed of a target (FNV-1a of its name, never 0).
fn seed(name: &str) -> u64 {
    name.bytes()
        .fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
        .max(1)
}

/// Tokens the parsers give meaning to, inserted whole by the mutator.
const TOKENS: &[&[u8]] = &[
    b"(",
    b")",
    b"[",
    b"]",
    b"{",
    b"}",
    b"\"",
    b"'",
    b"\\",
    b",",
    b":",
    b"=",
    b"-",
    b"+",
    b"*",
    b"#",
    b";",
    b"\n",
    b"\r\n",
    b" ",
    b"\t",
    b"\0",
    b"\xff",
    b"\xc3\xa9",
    b"not ",
    b" and ",
    b" or ",
    b"rule:",
    b"role:",
    b"@",
    b"!",
    b"%(",
    b")s",
    b"True",
    b"None",
    b"1e309",
    b"-0",
    b"0x",
    b"1j",
    b"b'",
    b"\\N{",
    b"\\u",
    b"[DEFAULT]",
    b"[",
    b"null",
    b"true",
    b"{}",
    b"[]",
    b"\"op\"",
    b"\"path\"",
    b"\"value\"",
    b"\"add\"",
    b"\"remove\"",
    b"\"replace\"",
    b"/labels",
    b"/",
    b"~1",
    b"oslo.message",
    b"magnum_object.data",
    b"-----BEGIN CERTIFICATE REQUEST-----",
    b"-----END CERTIFICATE REQUEST-----",
    b"\"token\"",
    b"\"catalog\"",
    b"\"roles\"",
    b"99999999999999999999999999999999999999999",
];

fn mutate(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(4) {
        let len = out.len();
        match rng.below(8) {
            0 if len > 0 => {
                let i = rng.below(len);
                out[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                out[i] = rng.next() as u8;
            }
            2 => {
                let tok = TOKENS[rng.below(TOKENS.len())];
                let i = rng.below(len + 1);
                out.splice(i..i, tok.iter().copied());
            }
            3 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(32));
                out.drain(i..i + n);
            }
            4 if len > 0 => {
                // Repeat a slice many times: deep nesting, long runs.
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(8));
                let chunk = out[i..i + n].to_vec();
                let times = 1 + rng.below(4096 / n);
                let rep: Vec<u8> = chunk.iter().copied().cycle().take(n * times).collect();
                out.splice(i..i, rep);
            }
            5 if !other.is_empty() => {
                // Splice a piece of another corpus file in.
                let j = rng.below(other.len());
                let n = 1 + rng.below((other.len() - j).min(256));
                let i = rng.below(len + 1);
                out.splice(i..i, other[j..j + n].iter().copied());
            }
            6 if len > 1 => {
                let i = rng.below(len);
                out.truncate(i);
            }
            _ => {
                let tok = TOKENS[rng.below(TOKENS.len())];
                out.extend_from_slice(tok);
            }
        }
    }
    out.truncate(MAX_LEN);
    out
}

fn show(data: &[u8]) -> String {
    let text = String::from_utf8_lossy(&data[..data.len().min(2048)]).into_owned();
    format!("{} bytes: {text:?}", data.len())
}

/// Replays the corpus of `name` through `target`, then mutations of it, on its own thread watched for panics and for inputs slower than [`PER_INPUT`].
fn run(name: &'static str, target: Target) {
    let files = corpus(name);
    let mutations = std::env::var("OPENKEEL_FUZZ_MUTATIONS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(DEFAULT_MUTATIONS);
    let (tx, rx) = mpsc::channel::<Option<Vec<u8>>>();
    let worker = std::thread::Builder::new()
        .name(format!("fuzz-{name}"))
        .stack_size(STACK)
        .spawn(move || {
            for (_, data) in &files {
                let _ = tx.send(Some(data.clone()));
                target(data);
            }
            let start = Instant::now();
            let mut rng = Rng(seed(name));
            for _ in 0..mutations {
                if start.elapsed() > BUDGET {
                    break;
                }
                let a = &files[rng.below(files.len())].1;
                let b = &files[rng.below(files.len())].1;
                let input = mutate(&mut rng, a, b);
                let _ = tx.send(Some(input.clone()));
                target(&input);
            }
            let _ = tx.send(None);
        })
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let mut current: Option<Vec<u8>> = None;
    let mut inputs = 0usize;
    loop {
        match rx.recv_timeout(PER_INPUT) {
            Ok(Some(input)) => {
                current = Some(input);
                inputs += 1;
            }
            Ok(None) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!(
                "{name}: an input took more than {PER_INPUT:?}: {}",
                show(current.as_deref().unwrap_or_default())
            ),
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!(
                "{name}: the target panicked on {}",
                show(current.as_deref().unwrap_or_default())
            ),
        }
    }
    if worker.join().is_err() {
        panic!("{name}: the target panicked");
    }
    eprintln!("{name}: {inputs} inputs, no panic, none slower than {PER_INPUT:?}");
}

#[test]
fn pyvalue() {
    run("pyvalue", openkeel_core::fuzzing::pyvalue);
}

#[test]
fn config() {
    run("config", openkeel_core::fuzzing::config);
}

#[test]
fn patch() {
    run("patch", openkeel_api::fuzzing::patch);
}

#[test]
fn policy_rule() {
    run("policy_rule", openkeel_auth::fuzzing::policy_rule);
}

#[test]
fn policy_file() {
    run("policy_file", openkeel_auth::fuzzing::policy_file);
}

#[test]
fn oslo_message() {
    run("oslo_message", openkeel_rpc::fuzzing::oslo_message);
}

#[test]
fn versioned_object() {
    run("versioned_object", openkeel_rpc::fuzzing::versioned_object);
}

#[test]
fn csr() {
    run("csr", openkeel_certs::fuzzing::csr);
}

#[test]
fn token_body() {
    run("token_body", openkeel_auth::fuzzing::token_body);
}

#[test]
fn the_mutator_is_deterministic() {
    let mut a = Rng(7);
    let mut b = Rng(7);
    let x = mutate(&mut a, b"(1, 2)", b"[3]");
    let y = mutate(&mut b, b"(1, 2)", b"[3]");
    assert_eq!(x, y);
}
