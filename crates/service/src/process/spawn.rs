//! Starting an app's process as BOINC starts it (issue "Running real apps"): in its
//! slot directory, in a process group of its own (so that suspending, quitting and
//! killing reach every process it starts), with a scrubbed environment, at the lowest
//! CPU priority (nice 19, batch scheduling) for CPU apps and BOINC's higher one for GPU
//! apps (nice 10, normal scheduling: they must wake promptly to keep their GPU fed), or
//! the level cc_config's `<process_priority>` / `<process_priority_special>` gives,
//! standard input and output on `/dev/null`
//! and standard error appended to the slot's `stderr.txt`. GPU apps are told their
//! device with `--device N`. The program path is absolute; `argv[0]` is the path BOINC
//! gives (`../../projects/NAME/PROGRAM`, relative to the slot).
//!
//! Before it executes, the app's process also takes its resource limits (address
//! space, file size: `boinc_core::control::app_limits`) as soft and hard limits, so it
//! cannot raise them, and, with an app user, that user's groups and id and a umask that
//! keeps what it writes from other users (docs/app-isolation.md).

use super::app_user::AppUser;
use super::slot::SlotLayout;
use boinc_core::control::TaskSpec;
use boinc_runtime::effects::ProcessError;
use landlock::RulesetCreated;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// BOINC's priority for CPU apps: the lowest.
const APP_NICE: i32 = 19;
/// BOINC's priority for GPU apps (its "medium" priority): above the CPU apps', so a
/// GPU app's CPU part is not starved by them and its GPU does not idle.
const GPU_APP_NICE: i32 = 10;
/// The nice value of each of BOINC's priority levels, 0 (lowest) to 5 (realtime), as
/// BOINC's client sets them on Unix. A client that is not root cannot go below 0: the
/// app then keeps the client's own priority.
const NICE_OF_LEVEL: [i32; 6] = [19, 10, 0, -5, -10, -16];

/// The nice value an app runs at: its configured level's, or BOINC's default for a GPU
/// app or a CPU app.
pub(crate) fn app_nice(priority: Option<u8>, gpu_app: bool) -> i32 {
    match priority.and_then(|level| NICE_OF_LEVEL.get(usize::from(level))) {
        Some(&nice) => nice,
        None if gpu_app => GPU_APP_NICE,
        None => APP_NICE,
    }
}

/// The search path apps get.
const APP_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// The umask of an app run as the app user: what it writes is its group's (the client
/// is in it or is root) and no one else's.
const APP_USER_UMASK: nix::libc::mode_t = 0o007;

/// What the app's process takes on before it executes, besides its slot and priority.
#[derive(Debug, Default)]
pub(crate) struct ChildSetup {
    /// The user to run as (`None`: the client's own).
    pub(crate) app_user: Option<AppUser>,
    /// The address-space limit, bytes.
    pub(crate) address_space: Option<u64>,
    /// The largest file the app may write, bytes.
    pub(crate) file_size: Option<u64>,
    /// Landlock's rules confining its writes.
    pub(crate) rules: Option<RulesetCreated>,
}

/// Sets `resource`'s soft and hard limit to `bytes`.
fn limit(resource: nix::sys::resource::Resource, bytes: Option<u64>) -> std::io::Result<()> {
    match bytes {
        Some(bytes) => nix::sys::resource::setrlimit(resource, bytes, bytes)
            .map_err(|errno| std::io::Error::from_raw_os_error(errno as i32)),
        None => Ok(()),
    }
}

/// The app's command line: the program's arguments, then `--device N` for each GPU
/// instance of a GPU task.
pub(crate) fn app_arguments(spec: &TaskSpec) -> Vec<String> {
    let mut arguments = spec.program.arguments.clone();
    if spec.usage.coprocessor.is_some() {
        for device in &spec.gpu_instances {
            arguments.push("--device".into());
            arguments.push(device.to_string());
        }
    }
    arguments
}

/// Starts the app; returns its process id (also its process group's id).
pub(crate) fn spawn_app(
    spec: &TaskSpec,
    layout: &SlotLayout,
    executable: &Path,
    stderr: &File,
    setup: ChildSetup,
) -> Result<i32, ProcessError> {
    let spawn_error =
        |source| ProcessError::Spawn { slot: spec.slot, program: executable.to_path_buf(), source };
    let program = &spec.program;
    let stderr = stderr.try_clone().map_err(spawn_error)?;
    let mut command = Command::new(executable);
    command
        .arg0(format!("../../{}/{}", program.project_dir, program.executable))
        .args(app_arguments(spec))
        .env_clear()
        .env("PATH", APP_PATH)
        .env("HOME", &layout.slot_dir)
        .env("TMPDIR", &layout.slot_dir)
        .env("LD_LIBRARY_PATH", format!("../../{}:.:../..", program.project_dir))
        .current_dir(&layout.slot_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(stderr))
        .process_group(0);
    let ChildSetup { app_user, address_space, file_size, mut rules } = setup;
    let gpu_app = spec.usage.coprocessor.is_some();
    let nice = app_nice(spec.program.priority, gpu_app);
    // Batch scheduling only for the lowest priority: a user who raised an app's wants
    // it to wake as promptly as other programs.
    let batch = !gpu_app && nice == APP_NICE;
    // SAFETY: the closure runs in the forked child before exec; it only makes system
    // calls (setpriority, sched_setscheduler, setrlimit, umask, setgroups, setgid,
    // setuid, prctl and landlock_restrict_self through the already-built ruleset) on
    // values prepared before the fork, and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            nix::libc::setpriority(nix::libc::PRIO_PROCESS, 0, nice);
            if batch {
                let batch = nix::libc::sched_param { sched_priority: 0 };
                nix::libc::sched_setscheduler(0, nix::libc::SCHED_BATCH, &batch);
            }
            limit(nix::sys::resource::Resource::RLIMIT_AS, address_space)?;
            limit(nix::sys::resource::Resource::RLIMIT_FSIZE, file_size)?;
            if let Some(user) = &app_user {
                nix::libc::umask(APP_USER_UMASK);
                user.become_user()?;
            }
            if let Some(rules) = rules.take() {
                rules.restrict_self().map_err(|_| std::io::Error::last_os_error())?;
            }
            Ok(())
        });
    }
    let child = command.spawn().map_err(spawn_error)?;
    // The host reaps the process itself (by its id, with `waitid`), so the handle is
    // dropped: that neither waits for nor kills the process.
    i32::try_from(child.id()).map_err(|_| {
        spawn_error(std::io::Error::new(std::io::ErrorKind::InvalidData, "process id out of range"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use boinc_core::control::TaskProgram;
    use boinc_core::model::{ProjectId, ResourceType, ResourceUsage};

    /// The nice value an app of `usage` at `priority` runs at, as it reads it itself.
    fn nice_of_app(gpu: bool, priority: Option<u8>) -> String {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("projects/p");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(
            project.join("app.sh"),
            "#!/bin/sh\nread pid comm state ppid pgrp f6 f7 f8 f9 f10 f11 f12 f13 f14 f15 f16 \
             f17 f18 nice rest < /proc/self/stat\necho $nice > nice.txt\n",
        )
        .unwrap();
        std::fs::set_permissions(project.join("app.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let mut spec = super::super::slot::tests::spec(false);
        spec.program.files.clear();
        spec.program.executable = "app.sh".into();
        spec.program.priority = priority;
        if gpu {
            spec.usage.coprocessor = Some((ResourceType::Amd, 1.0));
        }
        let layout = SlotLayout::of(dir.path(), &spec).unwrap();
        let init = boinc_core::protocol::app_api::InitData::default();
        let stderr = layout.prepare(&spec, &init, true).unwrap();
        let executable = layout.executable(&spec).unwrap();
        let pid = spawn_app(&spec, &layout, &executable, &stderr, ChildSetup::default()).unwrap();
        nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(pid), None).unwrap();
        std::fs::read_to_string(layout.slot_dir.join("nice.txt")).unwrap().trim().to_string()
    }

    #[test]
    fn a_gpu_app_runs_at_boincs_higher_priority() {
        assert_eq!(nice_of_app(true, None), "10", "a GPU app at nice 10, above the CPU apps' 19");
    }

    #[test]
    fn the_configured_priorities_set_the_apps_nice_values() {
        // `<process_priority>1` (low) for CPU apps, `<process_priority_special>0`
        // (lowest) for GPU apps: each kind takes its own.
        assert_eq!(nice_of_app(false, Some(1)), "10");
        assert_eq!(nice_of_app(true, Some(0)), "19");
        assert_eq!(app_nice(Some(2), false), 0);
        assert_eq!(app_nice(Some(9), false), APP_NICE, "no such level: the default");
    }

    /// The app sees only the variables the client gives it (nothing of the client's own
    /// environment: a proxy password, a token), runs at nice 19 in a process group of
    /// its own, in its slot.
    #[test]
    fn an_app_gets_a_scrubbed_environment_the_lowest_priority_and_its_own_group() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("projects/p");
        std::fs::create_dir_all(&project).unwrap();
        let script = project.join("app.sh");
        std::fs::write(
            &script,
            "#!/bin/sh\nenv > env.txt\n\
             read pid comm state ppid pgrp f6 f7 f8 f9 f10 f11 f12 f13 f14 f15 f16 f17 f18 \
             nice rest < /proc/self/stat\necho \"$pid $pgrp $nice\" > stat.txt\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut spec = super::super::slot::tests::spec(false);
        spec.program.files.clear();
        spec.program.executable = "app.sh".into();
        let layout = SlotLayout::of(dir.path(), &spec).unwrap();
        let init = boinc_core::protocol::app_api::InitData::default();
        let stderr = layout.prepare(&spec, &init, true).unwrap();
        let executable = layout.executable(&spec).unwrap();
        let pid = spawn_app(&spec, &layout, &executable, &stderr, ChildSetup::default()).unwrap();
        let status = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(pid), None).unwrap();
        assert!(matches!(status, nix::sys::wait::WaitStatus::Exited(_, 0)), "{status:?}");
        let env = std::fs::read_to_string(layout.slot_dir.join("env.txt")).unwrap();
        let given = ["PATH", "HOME", "TMPDIR", "LD_LIBRARY_PATH"];
        let shell_own = ["PWD", "OLDPWD", "SHLVL", "_"];
        for line in env.lines() {
            let name = line.split('=').next().unwrap_or_default();
            assert!(given.contains(&name) || shell_own.contains(&name), "{line}");
        }
        let slot = layout.slot_dir.display().to_string();
        assert!(env.lines().any(|l| l == format!("HOME={slot}")), "{env}");
        let stat = std::fs::read_to_string(layout.slot_dir.join("stat.txt")).unwrap();
        let fields: Vec<&str> = stat.split_whitespace().collect();
        assert_eq!(fields.len(), 3, "{stat}");
        assert_eq!(fields[0], fields[1], "the app leads a process group of its own");
        assert_eq!(fields[2], "19", "nice 19");
    }

    #[test]
    fn gpu_tasks_are_told_their_devices() {
        let mut spec = TaskSpec {
            project: ProjectId(0),
            job: "j".into(),
            slot: 0,
            usage: ResourceUsage { avg_ncpus: 1.0, coprocessor: None },
            gpu_instances: vec![1],
            status: Default::default(),
            program: TaskProgram { arguments: vec!["-x".into()], ..TaskProgram::default() },
        };
        assert_eq!(app_arguments(&spec), ["-x"]);
        spec.usage.coprocessor = Some((ResourceType::Nvidia, 1.0));
        assert_eq!(app_arguments(&spec), ["-x", "--device", "1"]);
    }
}
