//! `boinc-rs project-server --dir DIR [--port P] [--app EXE]…`: runs a BOINC project on
//! this machine ([`boinc_project_server`]) until interrupted. It prints the
//! project's URL (also kept in DIR/url) for `boinccmd --project_attach` or
//! `boinc-rs attach`.

use anyhow::{Context, Result, bail};
use boinc_core::protocol::{MessagePriority, ServerMessage};
use boinc_project_server::{AppSource, NewsItem, ProjectServer, ProjectServerConfig};
use std::net::IpAddr;
use std::path::PathBuf;

/// `boinc-rs project-server`'s command line.
#[derive(Debug, clap::Args)]
pub(crate) struct ProjectServerArgs {
    /// The project directory: records, keys, downloads, uploads and the inbox (made
    /// when missing; a later run carries on where this one stopped).
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,
    /// The port (default: the one of the last run in DIR, else a free one).
    #[arg(long, value_name = "P")]
    port: Option<u16>,
    /// The address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    bind: IpAddr,
    /// An executable to serve as an app (repeatable); default: boinc-rs's example app.
    #[arg(long = "app", value_name = "EXE")]
    apps: Vec<PathBuf>,
    /// Serve boinc-rs's example app too, beside the `--app` executables.
    #[arg(long)]
    with_example_app: bool,
    /// Make this many jobs in all (default: an endless supply).
    #[arg(long, value_name = "N")]
    jobs: Option<u64>,
    /// CPU seconds per job: `S`, or `MIN-MAX` for a uniform draw.
    #[arg(long, value_name = "S|MIN-MAX", default_value = "10-30")]
    job_seconds: String,
    /// Seconds from sending a job to its report deadline.
    #[arg(long, value_name = "S", default_value_t = 86_400.0)]
    deadline: f64,
    /// Bytes of each job's input file.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    input_bytes: u64,
    /// The project's name.
    #[arg(long, default_value = "boinc-rs test project")]
    name: String,
    /// Seconds a client waits between scheduler requests (`<request_delay>`).
    #[arg(long, value_name = "S", default_value_t = 5.0)]
    request_delay: f64,
    /// Jobs in progress a host may hold per CPU.
    #[arg(long, value_name = "N", default_value_t = 4)]
    max_jobs_per_cpu: u32,
    /// HTTP worker threads.
    #[arg(long, value_name = "N", default_value_t = 2)]
    workers: usize,
    /// The share (0 to 1) of the example app's jobs whose app crashes partway through
    /// each run, for soaking clients.
    #[arg(long, value_name = "F", default_value_t = 0.0)]
    crash_fraction: f64,
    /// The share (0 to 1) of the example app's jobs whose app hangs at the start of its
    /// first run, for soaking clients.
    #[arg(long, value_name = "F", default_value_t = 0.0)]
    hang_fraction: f64,
    /// A message every scheduler reply carries (repeatable): `low:TEXT` (the event
    /// log), `high:TEXT`, or `notice:TEXT` (shown as a notice too).
    #[arg(long = "message", value_name = "PRIORITY:TEXT")]
    messages: Vec<String>,
    /// An item of the project's news, served as its notice feed (repeatable).
    #[arg(long = "notice", value_name = "TITLE:TEXT")]
    notices: Vec<String>,
    /// The accounts' web preferences: a global_prefs.xml-format file (with `<mod_time>`
    /// and any `<venue>` sections), sent to hosts whose own are older.
    #[arg(long, value_name = "FILE")]
    web_prefs: Option<PathBuf>,
    /// The venue every host is in (`home`, `work`, `school`), sent as `<host_venue>`.
    #[arg(long, value_name = "VENUE")]
    host_venue: Option<String>,
}

/// A `--message PRIORITY:TEXT`.
fn server_message(text: &str) -> Result<ServerMessage> {
    let (priority, body) = text
        .split_once(':')
        .with_context(|| format!("--message {text:?}: write it as PRIORITY:TEXT"))?;
    let priority = match priority {
        "low" => MessagePriority::Low,
        "high" => MessagePriority::High,
        "notice" => MessagePriority::Notice,
        other => bail!("--message {text:?}: the priority is low, high or notice, not {other:?}"),
    };
    Ok(ServerMessage { priority, text: body.to_owned() })
}

/// A `--notice TITLE:TEXT`.
fn news_item(text: &str) -> Result<NewsItem> {
    let (title, body) = text
        .split_once(':')
        .with_context(|| format!("--notice {text:?}: write it as TITLE:TEXT"))?;
    Ok(NewsItem { title: title.trim().to_owned(), text: body.trim().to_owned() })
}

fn job_seconds(text: &str) -> Result<(f64, f64)> {
    let parse = |t: &str| -> Result<f64> {
        let value: f64 =
            t.trim().parse().with_context(|| format!("{t:?} is not a number of seconds"))?;
        if !(value.is_finite() && value > 0.0) {
            bail!("job seconds must be positive, not {t}");
        }
        Ok(value)
    };
    match text.split_once('-') {
        Some((low, high)) => {
            let (low, high) = (parse(low)?, parse(high)?);
            if high < low {
                bail!("--job-seconds {text}: the range's end is below its start");
            }
            Ok((low, high))
        }
        None => {
            let value = parse(text)?;
            Ok((value, value))
        }
    }
}

/// Runs the project server until it is interrupted.
pub(crate) fn project_server(args: ProjectServerArgs) -> Result<()> {
    if !(args.deadline.is_finite() && args.deadline > 0.0) {
        bail!("--deadline must be a positive number of seconds");
    }
    if !(args.request_delay.is_finite() && args.request_delay >= 0.0) {
        bail!("--request-delay must be a non-negative number of seconds");
    }
    let share = |f: f64| f.is_finite() && (0.0..=1.0).contains(&f);
    if !(share(args.crash_fraction)
        && share(args.hang_fraction)
        && args.crash_fraction + args.hang_fraction <= 1.0)
    {
        bail!(
            "--crash-fraction and --hang-fraction must be shares from 0 to 1 adding up to at most 1"
        );
    }
    let mut config = ProjectServerConfig::new(&args.dir);
    config.port = args.port;
    config.bind = args.bind;
    config.name = args.name;
    if args.with_example_app {
        let exe = std::env::current_exe().context("cannot find the boinc-rs binary")?;
        config.apps.push(AppSource::ExampleApp { exe });
    }
    config.apps.extend(args.apps.into_iter().map(AppSource::Executable));
    config.generator.jobs = args.jobs;
    config.generator.seconds = job_seconds(&args.job_seconds)?;
    config.generator.deadline = args.deadline;
    config.generator.input_bytes = args.input_bytes;
    config.generator.crash_fraction = args.crash_fraction;
    config.generator.hang_fraction = args.hang_fraction;
    config.request_delay = args.request_delay;
    config.max_jobs_in_progress_per_cpu = args.max_jobs_per_cpu.max(1);
    config.workers = args.workers.max(1);
    config.messages = args.messages.iter().map(|m| server_message(m)).collect::<Result<_>>()?;
    config.notices = args.notices.iter().map(|n| news_item(n)).collect::<Result<_>>()?;
    if let Some(path) = &args.web_prefs {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--web-prefs: cannot read {}", path.display()))?;
        let content = boinc_core::protocol::web_prefs_content(&text, &path.display().to_string())
            .context("--web-prefs: fix the preferences file")?;
        config.web_prefs = Some(content);
    }
    config.host_venue = args.host_venue;
    actix_web::rt::System::new().block_on(async move {
        let server = ProjectServer::bind(config)
            .with_context(|| format!("cannot start the project in {}", args.dir.display()))?;
        println!("project-server: serving {} from {}", server.url(), args.dir.display());
        server.run().await.context("the project server failed")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_news_read_from_the_command_line() {
        let message = server_message("notice:Your GPU driver is too old").expect("a message");
        assert_eq!(message.priority, MessagePriority::Notice);
        assert_eq!(message.text, "Your GPU driver is too old");
        assert!(server_message("urgent:x").is_err());
        assert!(server_message("no priority").is_err());
        let item = news_item("Maintenance: down at noon: back at one").expect("an item");
        assert_eq!(
            (item.title.as_str(), item.text.as_str()),
            ("Maintenance", "down at noon: back at one")
        );
    }

    #[test]
    fn job_seconds_read_as_one_value_or_a_range() {
        assert_eq!(job_seconds("15").expect("one"), (15.0, 15.0));
        assert_eq!(job_seconds("10-30").expect("range"), (10.0, 30.0));
        for bad in ["", "x", "-5", "30-10", "0", "inf"] {
            assert!(job_seconds(bad).is_err(), "{bad}");
        }
    }
}
