#![forbid(unsafe_code)]

use agegate::cli::{self, Command};
use agegate::telemetry::LogFormat;

// Requests allocate on the runtime's threads and are freed on SQLite's writer thread and
// back; mimalloc's thread-local free lists make that cheaper than glibc's arenas
// (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: agegate_alloc::MiMalloc = agegate_alloc::MiMalloc;

fn main() {
    // Before the runtime starts its threads (crates/alloc says why).
    agegate_alloc::keep_freed_memory();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build();
    match runtime {
        Ok(runtime) => runtime.block_on(run()),
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    }
}

async fn run() {
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
