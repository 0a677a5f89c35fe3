use std::sync::Arc;

use crate::domain::console::ConsoleUsername;
use crate::store::ConsoleStore;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The account's name.
    #[arg(value_parser = |s: &str| ConsoleUsername::parse(s))]
    name: ConsoleUsername,
}

pub async fn run(args: Args, store: Arc<dyn ConsoleStore>) -> anyhow::Result<()> {
    if !store.delete_console_user(&args.name).await? {
        anyhow::bail!("no console user named '{}'", args.name);
    }
    // Every node reads sessions from the database on each request: they end now.
    println!(
        "Deleted console user {}; its sessions have ended.",
        args.name
    );
    Ok(())
}
