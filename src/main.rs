use agegate::cli::{self, Command};
use agegate::telemetry::LogFormat;

#[tokio::main]
async fn main() {
    let cli = cli::parse();
    let (default_level, format) = match &cli.command {
        Command::Serve(args) => ("info", args.log_format),
        _ => ("warn", LogFormat::Text),
    };
    agegate::telemetry::init(default_level, format);
    if let Err(e) = cli::run(cli).await {
        // One line on stderr that names the problem.
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
