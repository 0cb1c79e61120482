use clap::Parser;

/// Prints the summary of its argument.
#[derive(Parser, serde::Serialize)]
struct Args {
    text: String,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    println!("{} {}", pool_bench_app::summary(&args.text)?, serde_json::to_string(&args)?);
    Ok(())
}
