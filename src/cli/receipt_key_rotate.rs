use serde::Serialize;
use std::sync::Arc;

use crate::app::keys::rotate_receipt_key;
use crate::clock::SystemClock;
use crate::store::ReceiptStore;

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

pub async fn run(args: Args, store: Arc<dyn ReceiptStore>) -> anyhow::Result<()> {
    let rotated = Rotated {
        kid: rotate_receipt_key(store.as_ref(), &SystemClock).await?,
    };
    if args.json {
        println!("{}", serde_json::to_string(&rotated)?);
    } else {
        println!(
            "New receipt key {}, in /.well-known/jwks.json now; running servers sign with it \
             {} seconds from now.",
            rotated.kid,
            crate::receipt::SIGNS_AFTER.as_secs()
        );
        println!("Earlier keys stay in /.well-known/jwks.json, so earlier receipts still verify.");
    }
    Ok(())
}
