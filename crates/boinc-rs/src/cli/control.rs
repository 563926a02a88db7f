//! `boinc-rs status`, `tasks`, `project URL ACTION` and `quit`: controlling a running
//! client (boinc-rs's or BOINC's own) over GUI RPC, as boinccmd does.

use anyhow::{Context, Result, bail};
use boinc_core::protocol::gui_rpc::{
    Operation, ProjectAction, ProjectLine, TaskLine, read_cc_status, read_client_time,
    read_projects, read_tasks, write_request,
};
use boinc_gui_rpc::{DEFAULT_PORT, GuiRpcClient, GuiRpcError, read_password};
use std::io::Write;
use std::path::PathBuf;

/// Where the client is and how to authenticate.
#[derive(Debug, Clone, clap::Args)]
pub struct Connection {
    /// The client's host.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// The client's GUI RPC port.
    #[arg(long, default_value_t = DEFAULT_PORT)]
    pub port: u16,
    /// The GUI RPC password (default: the one in DIR/gui_rpc_auth.cfg).
    #[arg(long)]
    pub passwd: Option<String>,
    /// The client's data directory, holding gui_rpc_auth.cfg (default: the current one).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// What `boinc-rs project URL ACTION` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProjectCommand {
    /// Stop the project's tasks and work fetch.
    Suspend,
    /// Let them go on.
    Resume,
    /// Contact the project's scheduler now (report, fetch).
    Update,
    /// Fetch no new tasks.
    Nomorework,
    /// Fetch new tasks again.
    Allowmorework,
    /// Leave the project: its tasks are dropped, its files and account file removed.
    Detach,
}

impl ProjectCommand {
    fn action(self) -> ProjectAction {
        match self {
            ProjectCommand::Suspend => ProjectAction::Suspend,
            ProjectCommand::Resume => ProjectAction::Resume,
            ProjectCommand::Update => ProjectAction::Update,
            ProjectCommand::Nomorework => ProjectAction::NoMoreWork,
            ProjectCommand::Allowmorework => ProjectAction::AllowMoreWork,
            ProjectCommand::Detach => ProjectAction::Detach,
        }
    }

    fn done(self) -> &'static str {
        match self {
            ProjectCommand::Suspend => "suspended",
            ProjectCommand::Resume => "resumed",
            ProjectCommand::Update => "asked to contact its scheduler",
            ProjectCommand::Nomorework => "gets no new tasks",
            ProjectCommand::Allowmorework => "gets new tasks again",
            ProjectCommand::Detach => "detached",
        }
    }
}

impl Connection {
    fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    fn password(&self) -> Result<Option<String>> {
        if let Some(password) = &self.passwd {
            return Ok(Some(password.clone()));
        }
        let dir = match &self.dir {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().context("cannot find the current directory")?,
        };
        Ok(read_password(&dir)?)
    }

    /// A connection, authenticated when a password is known (`required`: it must be).
    async fn open(&self, required: bool) -> Result<GuiRpcClient> {
        let mut client = GuiRpcClient::connect(&self.address()).await?;
        match self.password()? {
            Some(password) => client.authenticate(&password).await?,
            None if required => bail!(
                "this needs the client's GUI RPC password: give --passwd, or --dir DIR where DIR \
                 holds the client's gui_rpc_auth.cfg"
            ),
            None => {}
        }
        Ok(client)
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start a runtime")
}

fn mode_words(code: i64) -> &'static str {
    match code {
        1 => "always",
        2 => "according to preferences",
        3 => "suspended",
        _ => "unknown",
    }
}

/// A task's state in words.
fn task_state(task: &TaskLine) -> &'static str {
    match task.state {
        0 | 1 => "downloading",
        3 => "computation error",
        4 => "uploading",
        5 if task.got_server_ack => "reported",
        5 if task.ready_to_report => "ready to report",
        5 => "uploaded",
        6 => "aborted",
        7 => "upload failed",
        _ if task.suspended_via_gui => "suspended",
        _ if task.project_suspended_via_gui => "project suspended",
        _ if task.running() => "running",
        // Scheduled with no process: its app crashed and waits out the restart backoff.
        _ if task.active && task.scheduler_state == 2 && task.active_task_state == 0 => {
            "waiting to restart after a crash"
        }
        _ if task.active => "waiting to run",
        _ => "ready to start",
    }
}

/// Seconds as `1d 02:03:04` (or `02:03:04`), signed for deadlines in the past.
fn duration(seconds: f64) -> String {
    let sign = if seconds < 0.0 { "-" } else { "" };
    let total = if seconds.is_finite() { seconds.abs().round() as u64 } else { 0 };
    let (days, rest) = (total / 86_400, total % 86_400);
    let clock = format!("{:02}:{:02}:{:02}", rest / 3600, rest % 3600 / 60, rest % 60);
    if days > 0 { format!("{sign}{days}d {clock}") } else { format!("{sign}{clock}") }
}

fn project_name<'a>(projects: &'a [ProjectLine], url: &'a str) -> &'a str {
    projects
        .iter()
        .find(|p| p.master_url == url)
        .map_or(url, |p| if p.name.is_empty() { url } else { p.name.as_str() })
}

/// `boinc-rs status`.
pub fn status(connection: &Connection) -> Result<()> {
    runtime()?.block_on(async {
        // Written through a lock whose errors come back: `boinc-rs tasks | head` ends
        // quietly when head has read enough, rather than panicking on the closed pipe.
        let mut out = std::io::stdout().lock();
        let mut client = connection.open(false).await?;
        let status = read_cc_status(&client.call(&write_request(&Operation::GetCcStatus)).await?)?;
        let state = client.call(&write_request(&Operation::GetState)).await?;
        let projects = read_projects(&state)?;
        let tasks = read_tasks(&state)?;
        writeln!(out, "client at {}", connection.address())?;
        writeln!(
            out,
            "computing: {}; GPU: {}; network: {}",
            mode_words(status.task_mode),
            mode_words(status.gpu_mode),
            mode_words(status.network_mode)
        )?;
        writeln!(out, "projects: {}", projects.len())?;
        for project in &projects {
            let mut flags = Vec::new();
            if project.suspended_via_gui {
                flags.push("suspended");
            }
            if project.dont_request_more_work {
                flags.push("no new tasks");
            }
            writeln!(
                out,
                "  {}  {}  share {}{}",
                project_name(&projects, &project.master_url),
                project.master_url,
                project.resource_share,
                if flags.is_empty() { String::new() } else { format!("  [{}]", flags.join(", ")) }
            )?;
        }
        let running = tasks.iter().filter(|t| t.running()).count();
        let to_report = tasks.iter().filter(|t| t.ready_to_report && !t.got_server_ack).count();
        writeln!(out, "tasks: {} ({running} running, {to_report} ready to report)", tasks.len())?;
        Ok(())
    })
}

/// `boinc-rs tasks`.
pub fn tasks(connection: &Connection) -> Result<()> {
    runtime()?.block_on(async {
        // Written through a lock whose errors come back: `boinc-rs tasks | head` ends
        // quietly when head has read enough, rather than panicking on the closed pipe.
        let mut out = std::io::stdout().lock();
        let mut client = connection.open(false).await?;
        let state = client.call(&write_request(&Operation::GetState)).await?;
        let projects = read_projects(&state)?;
        let tasks = read_tasks(&state)?;
        let now = read_client_time(&state);
        writeln!(
            out,
            "{:<32} {:<20} {:<18} {:>6} {:>12} {:>12} {:>14}",
            "task", "project", "state", "done", "elapsed", "remaining", "deadline in"
        )?;
        for task in &tasks {
            let deadline =
                now.map_or_else(|| "-".to_string(), |now| duration(task.report_deadline - now));
            writeln!(
                out,
                "{:<32} {:<20} {:<18} {:>5.1}% {:>12} {:>12} {:>14}",
                task.name,
                project_name(&projects, &task.project_url),
                task_state(task),
                task.fraction_done * 100.0,
                duration(task.elapsed_time),
                duration(task.remaining),
                deadline
            )?;
        }
        Ok(())
    })
}

/// `boinc-rs project URL ACTION`.
pub fn project(connection: &Connection, url: &str, command: ProjectCommand) -> Result<()> {
    runtime()?.block_on(async {
        let mut client = connection.open(true).await?;
        let operation =
            Operation::Project { action: command.action(), master_url: url.to_string() };
        client.command(&write_request(&operation)).await?;
        println!("project {url}: {}", command.done());
        Ok(())
    })
}

/// `boinc-rs quit`.
pub fn quit(connection: &Connection) -> Result<()> {
    runtime()?.block_on(async {
        let mut client = connection.open(true).await?;
        match client.command(&write_request(&Operation::Quit)).await {
            // The client may be gone before its answer is read.
            Ok(()) | Err(GuiRpcError::Closed) => {
                println!("asked the client at {} to quit", connection.address());
                Ok(())
            }
            Err(error) => Err(error.into()),
        }
    })
}

/// What `boinc-rs acct-mgr` does.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum AccountManagerCommand {
    /// Join an account manager: the client asks it for its projects now and on its
    /// schedule after.
    Attach {
        /// The manager's URL.
        #[arg(value_name = "URL")]
        url: String,
        /// Your login name on the manager's site.
        #[arg(value_name = "NAME")]
        name: String,
        /// Your password there.
        #[arg(value_name = "PASSWORD")]
        password: String,
    },
    /// Ask the manager now.
    Sync,
    /// Stop using the manager (its projects stay attached).
    Detach,
    /// Show the manager in use.
    Info,
}

/// How long `acct-mgr attach` and `sync` wait for the client's request to the manager.
const ACCOUNT_MANAGER_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// `boinc-rs acct-mgr`.
pub fn account_manager(connection: &Connection, command: &AccountManagerCommand) -> Result<()> {
    use boinc_core::protocol::gui_rpc::{
        AccountManagerTarget, read_account_manager_info, read_account_manager_rpc,
    };
    runtime()?.block_on(async {
        let target = match command {
            AccountManagerCommand::Info => {
                let mut client = connection.open(false).await?;
                let reply = client.call(&write_request(&Operation::AccountManagerInfo)).await?;
                let info = read_account_manager_info(&reply)?;
                if info.url.is_empty() {
                    println!("no account manager");
                } else {
                    println!("account manager: {} ({})", info.name, info.url);
                    println!("credentials: {}", if info.have_credentials { "yes" } else { "no" });
                }
                return Ok(());
            }
            AccountManagerCommand::Attach { url, name, password } => {
                AccountManagerTarget::Account {
                    url: url.clone(),
                    name: name.clone(),
                    password: password.clone(),
                }
            }
            AccountManagerCommand::Sync => AccountManagerTarget::Configured,
            AccountManagerCommand::Detach => AccountManagerTarget::Account {
                url: String::new(),
                name: String::new(),
                password: String::new(),
            },
        };
        let mut client = connection.open(true).await?;
        client.command(&write_request(&Operation::AccountManagerRpc(target))).await?;
        let deadline = std::time::Instant::now() + ACCOUNT_MANAGER_WAIT;
        loop {
            let reply = client.call(&write_request(&Operation::AccountManagerRpcPoll)).await?;
            let poll = read_account_manager_rpc(&reply)?;
            match poll.error_num {
                0 => break,
                ERR_IN_PROGRESS if std::time::Instant::now() < deadline => {
                    tokio::time::sleep(std::time::Duration::from_millis(500)).await
                }
                ERR_IN_PROGRESS => bail!(
                    "the client's request to the account manager did not finish in {} s",
                    ACCOUNT_MANAGER_WAIT.as_secs()
                ),
                error => bail!("the account manager request failed ({error}): {}", poll.message),
            }
        }
        match command {
            AccountManagerCommand::Detach => {
                println!("the client no longer uses an account manager")
            }
            _ => println!("the account manager answered; the client follows it"),
        }
        Ok(())
    })
}

/// BOINC's `ERR_IN_PROGRESS`: an account manager RPC is under way.
const ERR_IN_PROGRESS: i64 = -204;

#[cfg(test)]
mod tests {
    use super::*;

    fn line(state: i64) -> TaskLine {
        TaskLine {
            name: "r".into(),
            project_url: "http://p/".into(),
            state,
            active: false,
            active_task_state: 0,
            scheduler_state: 0,
            fraction_done: 0.0,
            elapsed_time: 0.0,
            remaining: 0.0,
            report_deadline: 0.0,
            suspended_via_gui: false,
            project_suspended_via_gui: false,
            ready_to_report: false,
            got_server_ack: false,
        }
    }

    #[test]
    fn an_acknowledged_result_is_reported_not_ready_to_report() {
        let ready = TaskLine { ready_to_report: true, ..line(5) };
        assert_eq!(task_state(&ready), "ready to report");
        let acked = TaskLine { got_server_ack: true, ..ready };
        assert_eq!(task_state(&acked), "reported");
    }

    #[test]
    fn a_task_waiting_out_a_crash_backoff_is_not_running() {
        let running =
            TaskLine { active: true, active_task_state: 1, scheduler_state: 2, ..line(2) };
        assert_eq!(task_state(&running), "running");
        let crashed = TaskLine { active_task_state: 0, ..running.clone() };
        assert_eq!(task_state(&crashed), "waiting to restart after a crash");
        let preempted = TaskLine { active_task_state: 9, scheduler_state: 1, ..running };
        assert_eq!(task_state(&preempted), "waiting to run");
    }
}
