//! The projects' notices from their RSS feeds (docs/design.md "Protocol facts",
//! notices): a scheduler reply names a project's feeds (`ClientEvent::ProjectFeeds`);
//! each is fetched at once and then every `poll_interval`, read by the core
//! (`protocol::parse_rss`, bounded) and its items go to the GUI RPC server's notices.
//! As in BOINC, the data directory's `notices/` keeps each project's feed list
//! (`feeds_<project>.xml`) and each feed's notices (`archive_<feed>.xml`), so that a
//! restarted client shows the notices it had and polls the feeds it knew.

use super::http::SharedClient;
use boinc_core::Time;
use boinc_core::protocol::data_dir::escape_project_url;
use boinc_core::protocol::{
    MAX_FEED_BYTES, MAX_PROJECT_FEEDS, MIN_POLL_INTERVAL, RssFeed, check_feed_url, parse_rss,
    read_archive, read_feed_list, write_archive, write_feed_list,
};
use boinc_gui_rpc::MessageSink;
use boinc_runtime::runtime::events::ClientEvent;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The directory of the notice files, in the data directory.
pub const NOTICES_DIR: &str = "notices";
/// The most projects whose feed lists are read back at start.
const MAX_FEED_LISTS: usize = 1000;
/// The longest one fetch may take, connecting and reading.
const FETCH_TIMEOUT: Duration = Duration::from_secs(60);

/// One feed the client polls.
#[derive(Debug, Clone)]
struct Polled {
    project: String,
    master_url: String,
    poll_interval: f64,
    next: Instant,
}

/// The feeds of every project, and where their files go.
pub(crate) struct NoticeFeeds {
    dir: PathBuf,
    http: SharedClient,
    sink: MessageSink,
    feeds: HashMap<String, Polled>,
}

fn now_seconds() -> Time {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

fn feed_list_path(dir: &Path, master_url: &str) -> PathBuf {
    dir.join(NOTICES_DIR).join(format!("feeds_{}.xml", escape_project_url(master_url)))
}

fn archive_path(dir: &Path, feed_url: &str) -> PathBuf {
    dir.join(NOTICES_DIR).join(format!("archive_{}.xml", escape_project_url(feed_url)))
}

/// Reads a small file of `notices/`, within `max` bytes.
fn read_small(path: &Path, max: usize) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    (bytes.len() <= max).then(|| String::from_utf8_lossy(&bytes).into_owned())
}

impl NoticeFeeds {
    /// The feeds of the data directory `dir`, polled with `http`, their notices going
    /// into `sink`; `names` gives the attached projects' names by master URL. The feed
    /// lists and archives a previous run left are read back.
    pub(crate) fn new(
        dir: &Path,
        http: SharedClient,
        sink: MessageSink,
        names: &HashMap<String, String>,
    ) -> Self {
        let mut feeds = NoticeFeeds { dir: dir.to_path_buf(), http, sink, feeds: HashMap::new() };
        for (master_url, project) in names {
            let Some(text) = read_small(&feed_list_path(dir, master_url), MAX_FEED_BYTES) else {
                continue;
            };
            match read_feed_list(&text) {
                Ok(list) => feeds.follow(project, master_url, list, false),
                Err(error) => tracing::warn!(%error, project, "notice feed list damaged"),
            }
            if feeds.feeds.len() > MAX_FEED_LISTS * MAX_PROJECT_FEEDS {
                break;
            }
        }
        feeds
    }

    /// Follows `list`, the feeds of `master_url`, from now on; `fetch_now` asks for a
    /// fetch of each new one at once (a scheduler reply named it), otherwise the feed
    /// is first fetched one poll interval after its archive was written.
    fn follow(&mut self, project: &str, master_url: &str, list: Vec<RssFeed>, fetch_now: bool) {
        self.feeds.retain(|_, polled| polled.master_url != master_url);
        for feed in list.into_iter().take(MAX_PROJECT_FEEDS) {
            if let Err(why) = check_feed_url(&feed.url) {
                self.sink.push(
                    now_seconds(),
                    project,
                    boinc_core::control::MessagePriority::Info,
                    &why,
                );
                continue;
            }
            let archive = archive_path(&self.dir, &feed.url);
            let mut next = Instant::now();
            if let Some(text) = read_small(&archive, 4 * MAX_FEED_BYTES) {
                match read_archive(&text) {
                    Ok((_, notices)) => {
                        for notice in notices {
                            self.sink.push_notice(notice);
                        }
                    }
                    Err(error) => {
                        tracing::warn!(%error, feed = %feed.url, "notice archive damaged")
                    }
                }
                let age = std::fs::metadata(&archive)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|at| at.elapsed().ok())
                    .unwrap_or_default();
                let interval = Duration::from_secs_f64(feed.poll_interval);
                if !fetch_now && age < interval {
                    next += interval - age;
                }
            }
            let polled = Polled {
                project: project.to_owned(),
                master_url: master_url.to_owned(),
                poll_interval: feed.poll_interval,
                next,
            };
            self.feeds.insert(feed.url, polled);
        }
    }

    /// Takes a reply's feed list: kept in `notices/feeds_<project>.xml`, followed.
    fn project_feeds(&mut self, project: &str, master_url: &str, list: Vec<RssFeed>) {
        let path = feed_list_path(&self.dir, master_url);
        let known = read_small(&path, MAX_FEED_BYTES).and_then(|t| read_feed_list(&t).ok());
        if known.as_ref() == Some(&list) && self.feeds.values().any(|p| p.master_url == master_url)
        {
            return;
        }
        if let Err(error) = std::fs::create_dir_all(self.dir.join(NOTICES_DIR))
            .and_then(|()| std::fs::write(&path, write_feed_list(&list)))
        {
            tracing::warn!(%error, project, "the project's notice feeds could not be kept");
        }
        self.follow(project, master_url, list, true);
    }

    /// Fetches one feed and takes in its items; the archive is written anew.
    async fn fetch(&self, feed_url: &str, project: &str) -> Result<usize, String> {
        let body = tokio::time::timeout(FETCH_TIMEOUT, self.read(feed_url))
            .await
            .map_err(|_| format!("no answer within {} s", FETCH_TIMEOUT.as_secs()))??;
        let notices = parse_rss(&body, feed_url, project, now_seconds())
            .map_err(|error| format!("the feed is not RSS: {error}"))?;
        let mut added = 0;
        // Feeds list the newest first; the oldest is numbered first.
        for notice in notices.into_iter().rev() {
            if self.sink.push_notice(notice).is_some() {
                added += 1;
            }
        }
        let archive = write_archive(feed_url, &self.sink.notices_of_feed(feed_url));
        std::fs::create_dir_all(self.dir.join(NOTICES_DIR))
            .and_then(|()| std::fs::write(archive_path(&self.dir, feed_url), archive))
            .map_err(|error| format!("the notices could not be kept: {error}"))?;
        Ok(added)
    }

    /// The feed's document, read as it streams, refused past [`MAX_FEED_BYTES`].
    async fn read(&self, feed_url: &str) -> Result<String, String> {
        let mut response = self
            .http
            .get()
            .get(feed_url)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|error| error.to_string())?;
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|error| error.to_string())? {
            if body.len() + chunk.len() > MAX_FEED_BYTES {
                return Err(format!("the feed is larger than {MAX_FEED_BYTES} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    /// Fetches every feed that is due; returns when the next one is.
    async fn poll(&mut self) -> Instant {
        let now = Instant::now();
        let due: Vec<(String, String)> = self
            .feeds
            .iter()
            .filter(|(_, polled)| polled.next <= now)
            .map(|(url, polled)| (url.clone(), polled.project.clone()))
            .collect();
        for (url, project) in due {
            let retry = match self.fetch(&url, &project).await {
                Ok(added) => {
                    tracing::debug!(feed = %url, added, "notice feed fetched");
                    None
                }
                Err(why) => {
                    tracing::warn!(feed = %url, %why, "notice feed not fetched");
                    Some(Duration::from_secs_f64(MIN_POLL_INTERVAL))
                }
            };
            if let Some(polled) = self.feeds.get_mut(&url) {
                let interval = Duration::from_secs_f64(polled.poll_interval);
                polled.next = Instant::now() + retry.map_or(interval, |r| r.min(interval));
            }
        }
        let idle = Instant::now() + Duration::from_secs_f64(MIN_POLL_INTERVAL);
        self.feeds.values().map(|p| p.next).min().unwrap_or(idle).min(idle)
    }

    /// Follows the client's events and polls the feeds until the event stream ends.
    pub(crate) async fn run(mut self, mut events: tokio::sync::mpsc::Receiver<ClientEvent>) {
        let mut next = self.poll().await;
        loop {
            tokio::select! {
                event = events.recv() => match event {
                    Some(ClientEvent::ProjectFeeds { project, master_url, feeds, .. }) => {
                        self.project_feeds(&project, &master_url, feeds);
                        next = self.poll().await;
                    }
                    Some(_) => {}
                    None => return,
                },
                () = tokio::time::sleep_until(next.into()) => next = self.poll().await,
            }
        }
    }
}
