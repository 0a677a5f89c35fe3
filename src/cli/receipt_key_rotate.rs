use serde::Serialize;
use std::sync::Arc;

use crate::clock::{Clock, SystemClock};
use crate::receipt::ReceiptKey;
use crate::store::{ReceiptKeyRecord, ReceiptStore};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print one JSON object (`{"kid"}`) instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Rotated {
    kid: String,
}

/// Every verification after this is signed with the new key (each reads the current key
/// in its own transaction); the old keys stay in the JWK Set, so old receipts still check.
pub async fn run(args: Args, store: Arc<dyn ReceiptStore>) -> anyhow::Result<()> {
    let key = ReceiptKey::generate();
    let record = ReceiptKeyRecord {
        kid: key.kid(),
        private_key: key.to_bytes(),
        created_at: SystemClock.now(),
    };
    store.add_receipt_key(record, false).await?;
    let rotated = Rotated { kid: key.kid() };
    if args.json {
        println!("{}", serde_json::to_string(&rotated)?);
    } else {
        println!(
            "New receipt key {}; running servers sign with it from their next verification.",
            rotated.kid
        );
        println!("Earlier keys stay in /.well-known/jwks.json, so earlier receipts still verify.");
    }
    Ok(())
}
