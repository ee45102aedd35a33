//! Structured logs on stderr: JSON lines for collectors, or text (colours only on a terminal).

/// `default_filter` applies when `RUST_LOG` is not set (e.g. `"info"` or `"info,kube=warn"`).
pub fn init_logging(json: bool, default_filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| default_filter.into());
    if json {
        tracing_subscriber::fmt()
            .json()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .init();
    } else {
        let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(ansi)
            .with_writer(std::io::stderr)
            .init();
    }
}
