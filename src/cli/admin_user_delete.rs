use std::sync::Arc;

use crate::app::accounts::delete_user;
use crate::domain::console::ConsoleUsername;
use crate::store::ConsoleStore;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The account's name.
    #[arg(value_parser = |s: &str| ConsoleUsername::parse(s))]
    name: ConsoleUsername,
}

pub async fn run(args: Args, store: Arc<dyn ConsoleStore>) -> anyhow::Result<()> {
    delete_user(store.as_ref(), &args.name).await?;
    println!(
        "Deleted console user {}; its sessions have ended.",
        args.name
    );
    Ok(())
}
