//! The work generator: it makes jobs of the served apps, each with an input file in the
//! download directory. A fixed number of jobs in all (`--jobs N`), or, by default, a
//! stock of unsent jobs kept full forever (the demo's endless supply of 10–30 CPU-second
//! jobs). Files dropped into `inbox/` in the project directory become jobs too: each
//! file is the input of one job, moved into the download directory.

use super::apps::{DOWNLOAD_DIR, ServedApp, md5_of_file};
use super::config::GeneratorConfig;
use super::error::ProjectServerError;
use super::records::{InputFile, JobRecord, JobStatus, Misbehaviour, ProjectRecords};
use rand::Rng;
use std::path::{Path, PathBuf};

/// The inbox in the project directory.
pub(crate) const INBOX_DIR: &str = "inbox";

/// The largest file taken from the inbox, bytes.
const MAX_INBOX_FILE: u64 = 256 << 20;

/// Output bytes allowed beyond twice the input (the example app writes its input
/// upper-cased and a line).
const OUTPUT_ALLOWANCE: u64 = 64 * 1024;

/// Makes jobs.
#[derive(Debug)]
pub(crate) struct WorkGenerator {
    config: GeneratorConfig,
    download_dir: PathBuf,
    inbox: PathBuf,
}

impl WorkGenerator {
    /// A generator for the project in `project_dir`.
    pub(crate) fn new(
        config: GeneratorConfig,
        project_dir: &Path,
    ) -> Result<Self, ProjectServerError> {
        let download_dir = project_dir.join(DOWNLOAD_DIR);
        let inbox = project_dir.join(INBOX_DIR);
        for dir in [&download_dir, &inbox] {
            std::fs::create_dir_all(dir).map_err(ProjectServerError::io(dir))?;
        }
        Ok(WorkGenerator { config, download_dir, inbox })
    }

    /// Makes the jobs due now: in continuous mode, enough to bring the unsent stock to
    /// its size; otherwise those of the fixed number not made yet (at most `wanted` at
    /// a time beyond the stock, so one call stays short). Returns whether any was made.
    pub(crate) fn top_up(
        &self,
        records: &mut ProjectRecords,
        apps: &[ServedApp],
        wanted: usize,
        now: f64,
        rng: &mut impl Rng,
    ) -> Result<bool, ProjectServerError> {
        if apps.is_empty() {
            return Ok(false);
        }
        let unsent = records.jobs.values().filter(|j| j.status == JobStatus::Unsent).count();
        let target = self.config.stock.max(wanted);
        let mut to_make = target.saturating_sub(unsent) as u64;
        if let Some(total) = self.config.jobs {
            to_make = to_make.min(total.saturating_sub(records.counters.jobs_created));
        }
        for _ in 0..to_make {
            let app = &apps[(records.next_job % apps.len() as u64) as usize];
            let name = format!("{}_in", workunit_name(app, records.next_job));
            let input = self.random_input(name, rng)?;
            self.add_job(records, app, Some(input), now, rng);
        }
        Ok(to_make > 0)
    }

    /// Turns the files in the inbox into jobs (of the first app). Returns whether any
    /// was taken.
    pub(crate) fn take_inbox(
        &self,
        records: &mut ProjectRecords,
        apps: &[ServedApp],
        now: f64,
        rng: &mut impl Rng,
    ) -> Result<bool, ProjectServerError> {
        let Some(app) = apps.first() else { return Ok(false) };
        let entries = match std::fs::read_dir(&self.inbox) {
            Ok(entries) => entries,
            Err(e) => return Err(ProjectServerError::io(&self.inbox)(e)),
        };
        let mut taken = false;
        for entry in entries.flatten() {
            let path = entry.path();
            let hidden = entry.file_name().to_string_lossy().starts_with('.');
            let Ok(metadata) = entry.metadata() else { continue };
            if hidden || !metadata.is_file() {
                continue;
            }
            if metadata.len() > MAX_INBOX_FILE {
                tracing::warn!(path = %path.display(), "inbox file over {MAX_INBOX_FILE} bytes: left alone");
                continue;
            }
            let name = format!("{}_in", workunit_name(app, records.next_job));
            let destination = self.download_dir.join(&name);
            std::fs::rename(&path, &destination).map_err(ProjectServerError::io(&path))?;
            let (nbytes, md5) = md5_of_file(&destination)?;
            tracing::info!(from = %path.display(), job = %workunit_name(app, records.next_job), "a job from the inbox");
            self.add_job(records, app, Some(InputFile { name, nbytes, md5 }), now, rng);
            taken = true;
        }
        Ok(taken)
    }

    /// A fresh input file of the configured size: lines of random lower-case words.
    fn random_input(
        &self,
        name: String,
        rng: &mut impl Rng,
    ) -> Result<InputFile, ProjectServerError> {
        let mut text = String::with_capacity(self.config.input_bytes as usize);
        while (text.len() as u64) < self.config.input_bytes {
            let word_len = rng.random_range(1..10);
            for _ in 0..word_len {
                text.push(char::from(rng.random_range(b'a'..=b'z')));
            }
            text.push(if rng.random_range(0..8) == 0 { '\n' } else { ' ' });
        }
        text.truncate(self.config.input_bytes as usize);
        let path = self.download_dir.join(&name);
        std::fs::write(&path, text.as_bytes()).map_err(ProjectServerError::io(&path))?;
        Ok(InputFile {
            name,
            nbytes: text.len() as u64,
            md5: boinc_core::protocol::code_signing::md5_hex(text.as_bytes()),
        })
    }

    fn add_job(
        &self,
        records: &mut ProjectRecords,
        app: &ServedApp,
        input: Option<InputFile>,
        now: f64,
        rng: &mut impl Rng,
    ) {
        let (low, high) = self.config.seconds;
        let seconds = if high > low { rng.random_range(low..=high) } else { low };
        let workunit = workunit_name(app, records.next_job);
        let name = format!("{workunit}_0");
        let input_bytes = input.as_ref().map_or(0, |i| i.nbytes);
        let misbehaviour = if app.is_example { self.misbehaviour(rng) } else { Misbehaviour::None };
        let job = JobRecord {
            output: format!("{name}_out"),
            name: name.clone(),
            number: records.next_job,
            workunit,
            app: app.name.clone(),
            seconds: (seconds * 10.0).round() / 10.0,
            input,
            max_output_bytes: 2 * input_bytes + OUTPUT_ALLOWANCE,
            deadline_span: self.config.deadline,
            created: now,
            status: JobStatus::Unsent,
            times_sent: 0,
            times_reported: 0,
            misbehaviour,
            report: None,
        };
        records.jobs.insert(name, job);
        records.next_job += 1;
        records.counters.jobs_created += 1;
    }
}

impl WorkGenerator {
    /// A new job's misbehaviour, drawn with the configured shares.
    fn misbehaviour(&self, rng: &mut impl Rng) -> Misbehaviour {
        let crash = self.config.crash_fraction.clamp(0.0, 1.0);
        let hang = self.config.hang_fraction.clamp(0.0, 1.0 - crash);
        if crash + hang <= 0.0 {
            return Misbehaviour::None;
        }
        let draw: f64 = rng.random_range(0.0..1.0);
        if draw < crash {
            Misbehaviour::Crash
        } else if draw < crash + hang {
            Misbehaviour::HangOnce
        } else {
            Misbehaviour::None
        }
    }
}

/// A job's workunit name.
fn workunit_name(app: &ServedApp, number: u64) -> String {
    format!("{}_{number}", app.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn generator(crash_fraction: f64, hang_fraction: f64) -> (WorkGenerator, tempfile::TempDir) {
        let dir = tempfile::tempdir().expect("a project directory");
        let config =
            GeneratorConfig { crash_fraction, hang_fraction, ..GeneratorConfig::default() };
        (WorkGenerator::new(config, dir.path()).expect("a generator"), dir)
    }

    #[test]
    fn misbehaving_jobs_come_in_the_shares_asked_for() {
        let (generator, _dir) = generator(0.2, 0.1);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let draws = 10_000;
        let (mut crash, mut hang) = (0, 0);
        for _ in 0..draws {
            match generator.misbehaviour(&mut rng) {
                Misbehaviour::Crash => crash += 1,
                Misbehaviour::HangOnce => hang += 1,
                Misbehaviour::None => {}
            }
        }
        let share = |n: i32| f64::from(n) / f64::from(draws);
        assert!((share(crash) - 0.2).abs() < 0.02, "{crash}");
        assert!((share(hang) - 0.1).abs() < 0.02, "{hang}");
    }

    #[test]
    fn without_the_options_every_job_behaves() {
        let (generator, _dir) = generator(0.0, 0.0);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        assert!((0..1000).all(|_| generator.misbehaviour(&mut rng) == Misbehaviour::None));
    }
}
