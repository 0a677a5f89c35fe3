use std::path::Path;

use crate::receipt::VerifyingKeys;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The receipt (a compact JWS), or a file that holds it.
    receipt: String,
    /// The keys to check it with: a JWK Set as a file or an http(s) URL (such as
    /// https://agegate.example/.well-known/jwks.json). Default: the keys in the database.
    #[arg(long, value_name = "URL_OR_FILE")]
    jwks: Option<String>,
    /// Print the payload as one JSON object.
    #[arg(long)]
    json: bool,
}

/// Checks a receipt offline; exit status 0 only if its signature holds.
pub async fn run(args: Args, database_url: &crate::store::DatabaseUrl) -> anyhow::Result<()> {
    let receipt = receipt_text(&args.receipt)?;
    let keys = match &args.jwks {
        Some(source) => VerifyingKeys::from_jwks(&jwks(source).await?)
            .map_err(|e| anyhow::anyhow!("{source}: {e}"))?,
        None => {
            let services = super::open(database_url).await?;
            VerifyingKeys::of(&services.receipts().keys().await?)
        }
    };
    let payload = keys
        .verify(&receipt)
        .map_err(|e| anyhow::anyhow!("the receipt does not hold: {e}"))?;
    if args.json {
        println!("{}", serde_json::to_string(&payload)?);
    } else {
        println!("The receipt holds: signed by this deployment's receipt key.");
        println!("{}", serde_json::to_string_pretty(&payload)?);
    }
    Ok(())
}

/// The argument itself when it is a compact JWS, else the content of the file it names.
fn receipt_text(arg: &str) -> anyhow::Result<String> {
    let looks_like_jws = arg.split('.').count() == 3
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if looks_like_jws {
        return Ok(arg.to_owned());
    }
    std::fs::read_to_string(Path::new(arg))
        .map(|s| s.trim().to_owned())
        .map_err(|e| anyhow::anyhow!("'{arg}' is neither a receipt nor a readable file: {e}"))
}

async fn jwks(source: &str) -> anyhow::Result<serde_json::Value> {
    let text = if source.starts_with("https://") || source.starts_with("http://") {
        let response = reqwest::Client::new()
            .get(source)
            .timeout(std::time::Duration::from_secs(10))
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| anyhow::anyhow!("cannot fetch the key set {source}: {e}"))?;
        response
            .text()
            .await
            .map_err(|e| anyhow::anyhow!("cannot read the key set {source}: {e}"))?
    } else {
        std::fs::read_to_string(source)
            .map_err(|e| anyhow::anyhow!("cannot read the key set '{source}': {e}"))?
    };
    serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("'{source}' is not JSON: {e}"))
}
