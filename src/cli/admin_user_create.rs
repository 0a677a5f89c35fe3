use crate::app::Services;
use crate::domain::console::ConsoleUsername;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The account's name: 1 to 64 of a-z 0-9 . _ - @ (letters are taken in lower case).
    #[arg(value_parser = |s: &str| ConsoleUsername::parse(s))]
    name: ConsoleUsername,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub async fn run(args: Args, services: Services) -> anyhow::Result<()> {
    let user = services.accounts().create(args.name).await?;
    if args.json {
        println!("{}", serde_json::to_string(&user)?);
    } else {
        println!("Created console user {}.", user.username);
        println!("  password: {}", user.password);
        println!("The password is shown only now; store it safely.");
    }
    Ok(())
}
