//! How long verifying and reading an EU AV trusted list takes, on one thread: for
//! BENCHMARKS.md's trusted-list section. Make a list first (xmlsec1 signs it):
//!   ~/.cache/agegate-schemathesis-*/bin/python scripts/trustlist-fixtures.py --bench 500 /tmp/tl
//!   cargo run --release --example trustlist_load -- /tmp/tl/list-500.xml /tmp/tl/signer-ca.pem

use std::time::Instant;

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let (Some(list), Some(signer)) = (args.next(), args.next()) else {
        return Err("usage: trustlist_load LIST.xml SIGNER.pem [ROUNDS]".into());
    };
    let rounds: u32 = args
        .next()
        .map_or(Ok(20), |r| r.parse())
        .map_err(|e| format!("{e}"))?;
    let bytes = std::fs::read(&list).map_err(|e| format!("{list}: {e}"))?;
    let pem = std::fs::read_to_string(&signer).map_err(|e| format!("{signer}: {e}"))?;
    let signers = agegate::trustlist::signers_from_pem(&pem)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|e| e.to_string())?
        .as_secs() as i64;
    let mut times = Vec::new();
    let mut anchors = 0;
    for _ in 0..rounds {
        let start = Instant::now();
        let verified = agegate::trustlist::eu_av_list(&bytes, &signers, now, None)
            .map_err(|e| e.to_string())?;
        times.push(start.elapsed());
        anchors = verified.anchors.len();
    }
    times.sort();
    println!(
        "{} bytes, {anchors} anchors: median {:.1} ms, max {:.1} ms over {rounds} loads",
        bytes.len(),
        times[times.len() / 2].as_secs_f64() * 1e3,
        times[times.len() - 1].as_secs_f64() * 1e3,
    );
    Ok(())
}
