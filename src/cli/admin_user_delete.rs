use crate::app::Services;
use crate::domain::console::ConsoleUsername;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The account's name.
    #[arg(value_parser = |s: &str| ConsoleUsername::parse(s))]
    name: ConsoleUsername,
}

pub async fn run(args: Args, services: Services) -> anyhow::Result<()> {
    services.accounts().delete(&args.name).await?;
    println!(
        "Deleted console user {}; its sessions have ended.",
        args.name
    );
    Ok(())
}
