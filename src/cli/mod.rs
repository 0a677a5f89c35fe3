//! The `agegate` command line: one subcommand per file.

mod admin_user_create;
mod admin_user_delete;
mod headings;
mod key_create;
mod key_revoke;
mod receipt_key_rotate;
mod receipt_verify;
mod serve;
mod serve_start;
mod signing_args;
mod site_create;
mod site_delete;
mod site_deliveries;
mod site_list;
mod site_show;
mod site_update;
mod statement;
mod trust_args;
mod trust_show;
mod view;
mod webhook_redeliver;
mod webhook_secret_rotate;

use clap::{Parser, Subcommand};

use crate::app::Services;
use crate::config::DEFAULT_DATABASE_URL;
use crate::store::DatabaseUrl;

#[derive(Debug, Parser)]
#[command(
    name = "agegate",
    version,
    about = "Self-hostable age-verification invite service",
    long_about = "Self-hostable age-verification invite service.\n\n\
        Run `agegate serve` for the HTTP API, and `agegate site ...` to manage the site \
        configurations and credentials its clients use."
)]
pub struct Cli {
    /// Database to use: sqlite:PATH (created if absent) or postgres://user:pass@host:port/db.
    #[arg(
        long,
        env = "AGEGATE_DATABASE_URL",
        hide_env_values = true,
        default_value = DEFAULT_DATABASE_URL,
        global = true,
        value_name = "URL",
        help_heading = headings::DATABASE
    )]
    pub database_url: DatabaseUrl,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP server.
    Serve(Box<serve::Args>),
    /// Manage site configurations, their credentials and webhook secrets.
    Site {
        #[command(subcommand)]
        command: SiteCommand,
    },
    /// Operate on webhook events.
    Webhook {
        #[command(subcommand)]
        command: WebhookCommand,
    },
    /// Manage the key that signs verification receipts.
    ReceiptKey {
        #[command(subcommand)]
        command: ReceiptKeyCommand,
    },
    /// Check verification receipts.
    Receipt {
        #[command(subcommand)]
        command: ReceiptCommand,
    },
    /// Print this deployment's age-assurance practice statement (Markdown), from its
    /// configuration and database.
    Statement(statement::Args),
    /// Inspect the trust anchors of every credential kind.
    Trust {
        #[command(subcommand)]
        command: TrustCommand,
    },
    /// Manage the operator console (serve --admin-listen).
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum ReceiptKeyCommand {
    /// Make a new receipt key: listed at once, signing 6 s later; earlier ones stay published.
    Rotate(receipt_key_rotate::Args),
}

#[derive(Debug, Subcommand)]
pub enum ReceiptCommand {
    /// Check a receipt's signature offline and print its payload; exit 0 only if it holds.
    Verify(receipt_verify::Args),
}

#[derive(Debug, Subcommand)]
pub enum TrustCommand {
    /// List every trust anchor serve would load with the same flags, by kind, flagging
    /// those that expire within 30 days.
    Show(trust_show::Args),
}

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Manage the console's accounts.
    User {
        #[command(subcommand)]
        command: AdminUserCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum AdminUserCommand {
    /// Create an account; its generated password is shown once.
    Create(admin_user_create::Args),
    /// Delete an account; its sessions end on every server at once.
    Delete(admin_user_delete::Args),
}

#[derive(Debug, Subcommand)]
pub enum WebhookCommand {
    /// Queue an event for delivery again, with a fresh retry schedule.
    Redeliver(webhook_redeliver::Args),
}

#[derive(Debug, Subcommand)]
pub enum SiteCommand {
    /// Create a site configuration and its first credential.
    Create(site_create::Args),
    /// List every site configuration.
    List(site_list::Args),
    /// Show one site configuration.
    Show(site_show::Args),
    /// Change a site's redirect or webhook URL, minimum age, webhook format or accepted
    /// credential kinds.
    Update(site_update::Args),
    /// Erase a site with everything it owns (asks for --yes).
    Delete(site_delete::Args),
    /// List a site's recent webhook events with their attempts, last status and next retry.
    Deliveries(site_deliveries::Args),
    /// Issue or revoke API credentials of a site.
    Key {
        #[command(subcommand)]
        command: KeyCommand,
    },
    /// Manage a site's webhook signing secret.
    WebhookSecret {
        #[command(subcommand)]
        command: WebhookSecretCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Issue one more credential for the site (for rotation without downtime).
    Create(key_create::Args),
    /// Revoke one credential; running servers refuse it within 5 seconds.
    Revoke(key_revoke::Args),
}

#[derive(Debug, Subcommand)]
pub enum WebhookSecretCommand {
    /// Issue a new signing secret; the old one keeps signing alongside for 24 hours.
    Rotate(webhook_secret_rotate::Args),
}

/// Runs a parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve(args) => serve::run(*args, &cli.database_url).await,
        Command::Site { command } => {
            let services = open(&cli.database_url).await?;
            match command {
                SiteCommand::Create(args) => site_create::run(args, services).await,
                SiteCommand::List(args) => site_list::run(args, services).await,
                SiteCommand::Show(args) => site_show::run(args, services).await,
                SiteCommand::Update(args) => site_update::run(args, services).await,
                SiteCommand::Delete(args) => site_delete::run(args, services).await,
                SiteCommand::Deliveries(args) => site_deliveries::run(args, services).await,
                SiteCommand::Key { command } => match command {
                    KeyCommand::Create(args) => key_create::run(args, services).await,
                    KeyCommand::Revoke(args) => key_revoke::run(args, services).await,
                },
                SiteCommand::WebhookSecret { command } => match command {
                    WebhookSecretCommand::Rotate(args) => {
                        webhook_secret_rotate::run(args, services).await
                    }
                },
            }
        }
        Command::ReceiptKey {
            command: ReceiptKeyCommand::Rotate(args),
        } => receipt_key_rotate::run(args, open(&cli.database_url).await?).await,
        Command::Receipt {
            command: ReceiptCommand::Verify(args),
        } => receipt_verify::run(args, &cli.database_url).await,
        Command::Trust {
            command: TrustCommand::Show(args),
        } => trust_show::run(args, &cli.database_url).await,
        Command::Statement(args) => statement::run(args, open(&cli.database_url).await?).await,
        Command::Webhook { command } => {
            let services = open(&cli.database_url).await?;
            match command {
                WebhookCommand::Redeliver(args) => webhook_redeliver::run(args, services).await,
            }
        }
        Command::Admin {
            command: AdminCommand::User { command },
        } => {
            let services = open(&cli.database_url).await?;
            match command {
                AdminUserCommand::Create(args) => admin_user_create::run(args, services).await,
                AdminUserCommand::Delete(args) => admin_user_delete::run(args, services).await,
            }
        }
    }
}

/// The application's services over the database a command names.
async fn open(database_url: &DatabaseUrl) -> anyhow::Result<Services> {
    Services::open(database_url)
        .await
        .map_err(|e| anyhow::anyhow!("cannot open database {database_url}: {e}"))
}

/// Prints one JSON value on stdout.
fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// The command line's grammar. Every flag that takes a value takes the next word as it,
/// even one that starts with `-` (`--min-age -1`, `--retention -5d`): the flag's own
/// parser then refuses it naming the flag, instead of clap calling it an unexpected
/// argument. Set here once for every subcommand, so no flag can miss it.
pub fn command() -> clap::Command {
    fn hyphen_values(cmd: clap::Command) -> clap::Command {
        cmd.mut_args(|arg| {
            if arg.get_action().takes_values() && !arg.is_positional() {
                arg.allow_hyphen_values(true)
            } else {
                arg
            }
        })
        .mut_subcommands(hyphen_values)
    }
    hyphen_values(<Cli as clap::CommandFactory>::command())
}

/// Parses `args` (the program name first).
pub fn try_parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::FromArgMatches;
    let mut cmd = command();
    let matches = cmd.try_get_matches_from_mut(args)?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}

/// Parses the command line, turning clap's multi-line usage errors into one line.
pub fn parse() -> Cli {
    match try_parse_from(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                e.exit();
            }
            eprintln!("{}", one_line(&e.render().to_string()));
            std::process::exit(2);
        }
    }
}

/// The text of a clap error up to its usage section, on one line.
fn one_line(rendered: &str) -> String {
    let message: Vec<&str> = rendered
        .lines()
        .take_while(|l| !l.starts_with("Usage:"))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
        .collect();
    let mut line = message.join(" ");
    if !line.contains("--help") {
        line.push_str(" (see --help)");
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_line_is_well_formed() {
        Cli::command().debug_assert();
        command().debug_assert();
    }

    /// A value that starts with `-` is the flag's value, refused by the flag's parser.
    #[test]
    fn a_value_starting_with_a_dash_is_the_flags_value() {
        let cases: [&[&str]; 4] = [
            &[
                "agegate",
                "site",
                "create",
                "--name",
                "x",
                "--min-age",
                "-1",
            ],
            &["agegate", "serve", "--retention", "-5d"],
            &["agegate", "serve", "--rate-limit", "-3"],
            &[
                "agegate",
                "site",
                "deliveries",
                "6f9619ff-8b86-d011-b42d-00cf4fc964ff",
                "--limit",
                "-2",
            ],
        ];
        for args in cases {
            let flag = args[args.len() - 2];
            let err = try_parse_from(args).expect_err("refused").to_string();
            assert!(
                err.contains(&format!("'{flag} <")) && !err.contains("unexpected argument"),
                "{args:?}: {err}"
            );
        }
    }

    #[test]
    fn usage_errors_fold_to_one_line() {
        let rendered = "error: the following required arguments were not provided:\n  --name <NAME>\n\nUsage: agegate site create --name <NAME>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line(rendered),
            "error: the following required arguments were not provided: --name <NAME> (see --help)"
        );
    }
}
