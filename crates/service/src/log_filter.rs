//! cc_config.xml's `<log_flags>` as the log's filter (docs/service.md, the event log):
//! the program installs a filter that can be replaced ([`reloadable_filter`]), and the
//! service replaces it with the base level plus each flag's directives (the core's
//! `model::log_flags`) at its start and whenever the options change (a
//! `read_cc_config`), so a flag turns its messages on or off without a restart.

use boinc_core::model::CcConfig;
use boinc_core::model::log_flags::log_filter_directives;
use std::sync::OnceLock;
use tracing_subscriber::{EnvFilter, Registry, reload};

/// A replaceable log filter over a base level.
pub struct LogFilter {
    /// The directives every filter starts from (`RUST_LOG`, or the command's default).
    base: String,
    handle: reload::Handle<EnvFilter, Registry>,
}

impl LogFilter {
    /// Makes the filter's layer (to put first on a [`Registry`]) and its handle.
    pub fn new(base: &str) -> (reload::Layer<EnvFilter, Registry>, LogFilter) {
        let (layer, handle) = reload::Layer::new(EnvFilter::new(base));
        (layer, LogFilter { base: base.to_owned(), handle })
    }

    /// Replaces the filter by the base plus `config`'s log flags.
    pub fn follow(&self, config: &CcConfig) {
        if let Err(error) = self.handle.reload(filter_for(&self.base, config)) {
            tracing::warn!(%error, "the log flags could not be applied");
        }
    }
}

/// The filter the process installed, if it installed one with [`reloadable_filter`].
static INSTALLED: OnceLock<LogFilter> = OnceLock::new();

/// The layer of a log filter the service keeps in step with the log flags: the program
/// puts it first on its [`Registry`]. Only the first call's filter is followed.
pub fn reloadable_filter(base: &str) -> reload::Layer<EnvFilter, Registry> {
    let (layer, filter) = LogFilter::new(base);
    let _ = INSTALLED.set(filter);
    layer
}

/// Applies `config`'s log flags to the installed filter; nothing where the program
/// installed none (a library user with a subscriber of its own).
pub fn follow_log_flags(config: &CcConfig) {
    if let Some(filter) = INSTALLED.get() {
        filter.follow(config);
    }
}

/// The base directives with the flags' on top.
fn filter_for(base: &str, config: &CcConfig) -> EnvFilter {
    let mut filter = EnvFilter::new(base);
    for directive in log_filter_directives(&config.log_flags, &config.log_flags_off) {
        match directive.parse() {
            Ok(directive) => filter = filter.add_directive(directive),
            Err(error) => tracing::warn!(%directive, %error, "a log flag's directive is bad"),
        }
    }
    filter
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::layer::{Context, SubscriberExt};

    /// Collects the targets and levels of the events that pass the filter.
    #[derive(Clone, Default)]
    struct Seen(Arc<Mutex<Vec<String>>>);

    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Seen {
        fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
            let meta = event.metadata();
            self.0.lock().expect("not poisoned").push(format!(
                "{} {}",
                meta.target(),
                meta.level()
            ));
        }
    }

    fn emit() {
        tracing::debug!(target: "boinc_runtime::runtime::project", "request sent");
        tracing::info!(target: "boinc_runtime::runtime::task", "task started");
        tracing::debug!(target: "boinc_runtime::runtime::fetch", "work fetch");
    }

    #[test]
    fn each_flag_turns_its_messages_on_or_off_without_a_restart() {
        let (layer, filter) = LogFilter::new("info");
        let seen = Seen::default();
        let subscriber = Registry::default().with(layer).with(seen.clone());
        let taken = || std::mem::take(&mut *seen.0.lock().expect("not poisoned"));
        tracing::subscriber::with_default(subscriber, || {
            emit();
            assert_eq!(taken(), vec!["boinc_runtime::runtime::task INFO"], "the defaults");
            let config = CcConfig {
                log_flags: vec!["sched_op_debug".into()],
                log_flags_off: vec!["task".into()],
                ..CcConfig::default()
            };
            filter.follow(&config);
            emit();
            assert_eq!(
                taken(),
                vec![
                    "boinc_runtime::runtime::project DEBUG",
                    "boinc_runtime::runtime::fetch DEBUG"
                ]
            );
            filter.follow(&CcConfig::default());
            emit();
            assert_eq!(taken(), vec!["boinc_runtime::runtime::task INFO"], "back to the defaults");
        });
    }
}
