use serde::Serialize;

use crate::app::Services;

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

pub async fn run(args: Args, services: Services) -> anyhow::Result<()> {
    let rotated = Rotated {
        kid: services.receipts().rotate_key().await?,
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
