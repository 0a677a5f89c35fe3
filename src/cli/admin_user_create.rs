use serde::Serialize;
use std::sync::Arc;

use crate::clock::{Clock, SystemClock};
use crate::domain::console::{ConsolePassword, ConsoleUsername};
use crate::store::{ConsoleStore, NewConsoleUser};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The account's name: 1 to 64 of a-z 0-9 . _ - @ (letters are taken in lower case).
    #[arg(value_parser = |s: &str| ConsoleUsername::parse(s))]
    name: ConsoleUsername,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// The new account; the password is shown only here.
#[derive(Serialize)]
pub struct CreatedUser {
    pub username: String,
    pub password: String,
}

/// Creates a console account with a generated password; `None` when the name is taken.
pub async fn create_user(
    store: &dyn ConsoleStore,
    clock: &dyn Clock,
    name: ConsoleUsername,
) -> anyhow::Result<Option<CreatedUser>> {
    // Argon2 is slow on purpose; keep it off the async workers.
    let (password, hashed) = tokio::task::spawn_blocking(|| {
        let password = ConsolePassword::generate();
        let hashed = password.hash();
        (password, hashed)
    })
    .await?;
    let hashed = hashed?;
    let created = store
        .create_console_user(NewConsoleUser {
            username: name.clone(),
            password_hash: hashed,
            created_at: clock.now(),
        })
        .await?;
    Ok(created.then(|| CreatedUser {
        username: name.as_str().to_owned(),
        password: password.expose().to_owned(),
    }))
}

pub async fn run(args: Args, store: Arc<dyn ConsoleStore>) -> anyhow::Result<()> {
    let name = args.name.clone();
    let Some(user) = create_user(store.as_ref(), &SystemClock, args.name).await? else {
        anyhow::bail!("a console user named '{name}' exists already");
    };
    if args.json {
        println!("{}", serde_json::to_string(&user)?);
    } else {
        println!("Created console user {}.", user.username);
        println!("  password: {}", user.password);
        println!("The password is shown only now; store it safely.");
    }
    Ok(())
}
