//! `boinc-rs attach --dir DIR URL AUTHENTICATOR`: attaches the client of a data
//! directory to a project by writing the project's account file, as the real client
//! keeps it. A running `boinc-rs run` takes it in; otherwise the next one started does.

use anyhow::Result;
use boinc_service::account_files::write_account_file;
use std::path::PathBuf;

/// The arguments of `attach`.
#[derive(clap::Args)]
pub(crate) struct AttachArgs {
    /// The client's data directory (created if missing).
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,
    /// The project's master URL.
    #[arg(value_name = "URL")]
    url: String,
    /// The account's key (the "account key" on the project's web site).
    #[arg(value_name = "AUTHENTICATOR")]
    authenticator: String,
}

/// Writes the account file and says what happens next.
pub(crate) fn attach(args: &AttachArgs) -> Result<()> {
    let path = write_account_file(&args.dir, &args.url, &args.authenticator)?;
    println!(
        "attached {}: wrote {}; a running `boinc-rs run --dir {}` takes it in, or the next one started does",
        args.url.trim(),
        path.display(),
        args.dir.display()
    );
    Ok(())
}
