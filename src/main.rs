use agegate::cli::{self, Command};

#[tokio::main]
async fn main() {
    let cli = cli::parse();
    let default_level = match cli.command {
        Command::Serve(_) => "info",
        _ => "warn",
    };
    agegate::telemetry::init(default_level);
    if let Err(e) = cli::run(cli).await {
        // One line on stderr that names the problem.
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
