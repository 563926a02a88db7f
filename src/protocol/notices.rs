//! BOINC's notices as texts (docs/design.md "Protocol facts", notices): the RSS feeds a
//! scheduler reply names (`<rss_feeds><rss_feed><url>`, `<poll_interval>`), the list of
//! a project's feeds the client keeps (`notices/feeds_<project>.xml`), the RSS 2.0
//! documents fetched from them (their `<item>`s become notices), and the archive of a
//! feed's notices (`notices/archive_<feed>.xml`, `<notices>` of `<notice>`s as GUI RPC
//! `get_notices` writes them). Everything here comes from a project's server, so every
//! list and text is bounded.

use super::error::{XmlError, XmlProblem};
use super::list_counts::ListCounts;
use super::values::quoted_value;
use super::xml_out::XmlOut;
use super::xml_tree::{Element, parse_document};
use super::xml_write::XmlWriter;
use crate::Time;
use serde::{Deserialize, Serialize};

/// The most feeds one project may name; BOINC projects name one or two.
pub const MAX_PROJECT_FEEDS: usize = 16;
/// The most items kept from one RSS document (the newest come first in a feed).
pub const MAX_FEED_ITEMS: usize = 200;
/// The largest RSS document read, bytes: a news feed is a few kilobytes.
pub const MAX_FEED_BYTES: usize = 1 << 20;
/// The longest a feed may ask the client to wait between fetches, seconds (30 days).
const MAX_POLL_INTERVAL: f64 = 30.0 * 86_400.0;
/// The shortest wait between two fetches of one feed, seconds: a project asking for
/// less would have every client poll its web server once a minute.
pub const MIN_POLL_INTERVAL: f64 = 600.0;
/// The wait when a feed names none (BOINC's default, a day).
const DEFAULT_POLL_INTERVAL: f64 = 86_400.0;
/// The longest title, link or guid kept, bytes.
const MAX_SHORT_TEXT: usize = 1024;
/// The longest description kept, bytes.
const MAX_DESCRIPTION: usize = 16 * 1024;

/// One feed a project publishes its news on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RssFeed {
    /// Where the RSS document is.
    pub url: String,
    /// Seconds between fetches, within [`MIN_POLL_INTERVAL`] and 30 days.
    pub poll_interval: f64,
}

/// A notice: a project's news item, a scheduler's alert, or the client's own.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Notice {
    /// Its number in the client's list (0 until it is listed).
    pub seqno: u64,
    /// The title (empty for the client's and schedulers' alerts).
    pub title: String,
    /// The text (HTML in feeds).
    pub description: String,
    /// When it was written.
    pub create_time: Time,
    /// When the client learned of it.
    pub arrival_time: Time,
    /// Only for the account's owner (BOINC's private messages).
    pub is_private: bool,
    /// The project it comes from (its name).
    pub project_name: String,
    /// `client`, `scheduler`, `server` (a project's feed) or the feed's own.
    pub category: String,
    /// A web page about it.
    pub link: String,
    /// The feed's identity for it: the same item fetched again is not a new notice.
    pub guid: String,
    /// The feed it came from (empty for the client's and schedulers' notices).
    pub feed_url: String,
}

/// `text` cut to at most `max` bytes at a character boundary.
fn cut(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut at = max;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.truncate(at);
    }
    text
}

fn poll_interval(element: Option<&Element>) -> Result<f64, XmlError> {
    let seconds = match element {
        Some(element) => element.non_negative_f64()?,
        None => DEFAULT_POLL_INTERVAL,
    };
    Ok(seconds.clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL))
}

/// Reads the `<rss_feed>`s of an `<rss_feeds>` element (a scheduler reply's, or a
/// project's feed list); at most [`MAX_PROJECT_FEEDS`], each with a URL.
pub(crate) fn parse_rss_feeds(element: &Element) -> Result<Vec<RssFeed>, XmlError> {
    let mut feeds = Vec::new();
    let mut counted = ListCounts::default();
    for feed in element.children.iter().filter(|c| c.name == "rss_feed") {
        counted.check(feed, "rss_feed", MAX_PROJECT_FEEDS)?;
        let url = feed.required_text("url")?.to_owned();
        if url.len() > MAX_SHORT_TEXT {
            return Err(feed.error(XmlProblem::TextTooLong(MAX_SHORT_TEXT)));
        }
        feeds.push(RssFeed { url, poll_interval: poll_interval(feed.child("poll_interval"))? });
    }
    Ok(feeds)
}

/// Writes `<rss_feeds>` (a scheduler reply's, a project's feed list).
pub(crate) fn write_rss_feeds(w: &mut XmlWriter, feeds: &[RssFeed]) {
    w.open("rss_feeds");
    for feed in feeds {
        w.open("rss_feed");
        w.text("url", &feed.url);
        w.number("poll_interval", feed.poll_interval);
        w.close("rss_feed");
    }
    w.close("rss_feeds");
}

/// A project's feed list as the client keeps it (`notices/feeds_<project>.xml`).
pub fn write_feed_list(feeds: &[RssFeed]) -> String {
    let mut w = XmlWriter::new();
    write_rss_feeds(&mut w, feeds);
    w.finish()
}

/// Reads a project's feed list ([`write_feed_list`]'s text).
pub fn read_feed_list(text: &str) -> Result<Vec<RssFeed>, XmlError> {
    let root = parse_document(text)?;
    if root.name != "rss_feeds" {
        return Err(root.error(XmlProblem::WrongRoot { expected: "rss_feeds" }));
    }
    parse_rss_feeds(&root)
}

/// A date as RSS writes it (RFC 2822, `Sun, 29 Nov 2026 02:00:00 +0000`), in seconds
/// since 1970; `None` when it is not one.
fn rfc2822_time(text: &str) -> Option<Time> {
    let parsed =
        time::OffsetDateTime::parse(text.trim(), &time::format_description::well_known::Rfc2822)
            .ok()?;
    Some(parsed.unix_timestamp() as f64)
}

/// Reads an RSS 2.0 document fetched from `feed_url` at `now`: its items, newest
/// first as feeds list them, at most [`MAX_FEED_ITEMS`], as notices of `project_name`
/// (not yet numbered). An item without a date is dated `now`.
pub fn parse_rss(
    text: &str,
    feed_url: &str,
    project_name: &str,
    now: Time,
) -> Result<Vec<Notice>, XmlError> {
    if text.len() > MAX_FEED_BYTES {
        return Err(XmlError::in_element(1, "rss", XmlProblem::TextTooLong(MAX_FEED_BYTES)));
    }
    let root = parse_document(text)?;
    if root.name != "rss" {
        return Err(root.error(XmlProblem::WrongRoot { expected: "rss" }));
    }
    let Some(channel) = root.child("channel") else {
        return Ok(Vec::new());
    };
    let text_of = |item: &Element, name: &str, max: usize| {
        item.child(name).map(|e| cut(e.string(), max)).unwrap_or_default()
    };
    let notices = channel
        .children
        .iter()
        .filter(|c| c.name == "item")
        .take(MAX_FEED_ITEMS)
        .map(|item| {
            let create_time =
                item.child("pubDate").and_then(|date| rfc2822_time(date.trimmed())).unwrap_or(now);
            let category = text_of(item, "category", MAX_SHORT_TEXT);
            Notice {
                seqno: 0,
                title: text_of(item, "title", MAX_SHORT_TEXT),
                description: text_of(item, "description", MAX_DESCRIPTION).trim().to_owned(),
                create_time,
                arrival_time: now,
                is_private: false,
                project_name: project_name.to_owned(),
                category: if category.is_empty() { "server".to_owned() } else { category },
                link: text_of(item, "link", MAX_SHORT_TEXT),
                guid: text_of(item, "guid", MAX_SHORT_TEXT),
                feed_url: feed_url.to_owned(),
            }
        })
        .collect();
    Ok(notices)
}

/// An RSS 2.0 document with `items` (newest first), as a project's notice feed serves
/// it; each item's `guid` is its identity, its `create_time` its `pubDate`.
pub fn write_rss(title: &str, link: &str, items: &[Notice]) -> String {
    let mut out = XmlOut::new();
    out.start("rss");
    out.start("channel");
    out.text("title", title);
    out.text("link", link);
    out.text("description", title);
    for item in items {
        out.start("item");
        out.text("title", &item.title);
        out.text("link", &item.link);
        out.cdata("description", &item.description);
        let seconds = if item.create_time.is_finite() { item.create_time as i64 } else { 0 };
        let date = time::OffsetDateTime::from_unix_timestamp(seconds)
            .ok()
            .and_then(|at| at.format(&time::format_description::well_known::Rfc2822).ok())
            .unwrap_or_default();
        out.text("pubDate", &date);
        out.text("guid", &item.guid);
        out.end("item");
    }
    out.end("channel");
    out.end("rss");
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n{}",
        String::from_utf8_lossy(&out.finish())
    )
}

/// Writes one `<notice>` as GUI RPC `get_notices` and the archive files do.
pub(crate) fn write_notice(out: &mut XmlOut, notice: &Notice) {
    out.start("notice");
    out.text("title", &notice.title);
    out.cdata("description", &notice.description);
    out.real("create_time", notice.create_time);
    out.real("arrival_time", notice.arrival_time);
    out.bit("is_private", notice.is_private);
    out.text("project_name", &notice.project_name);
    out.text("category", &notice.category);
    out.text("link", &notice.link);
    out.int("seqno", i64::try_from(notice.seqno).unwrap_or(i64::MAX));
    out.end("notice");
}

/// A feed's archive (`notices/archive_<feed>.xml`): the notices read from it so far,
/// with their guids and the feed's URL so that they are known again after a restart.
pub fn write_archive(feed_url: &str, notices: &[Notice]) -> String {
    let mut out = XmlOut::new();
    out.start("notices");
    out.text("feed_url", feed_url);
    for notice in notices {
        out.start("archived");
        out.text("guid", &notice.guid);
        write_notice(&mut out, notice);
        out.end("archived");
    }
    out.end("notices");
    String::from_utf8_lossy(&out.finish()).into_owned()
}

/// Reads a feed's archive ([`write_archive`]'s text): its feed URL and notices (at most
/// [`MAX_FEED_ITEMS`]; their numbers are the log's to give again).
pub fn read_archive(text: &str) -> Result<(String, Vec<Notice>), XmlError> {
    let root = parse_document(text)?;
    if root.name != "notices" {
        return Err(root.error(XmlProblem::WrongRoot { expected: "notices" }));
    }
    let feed_url = root.child("feed_url").map(|e| e.string()).unwrap_or_default();
    let mut notices = Vec::new();
    let mut counted = ListCounts::default();
    for archived in root.children.iter().filter(|c| c.name == "archived") {
        counted.check(archived, "archived", MAX_FEED_ITEMS)?;
        let notice = archived.required_child("notice")?;
        let text_of = |name: &str, max: usize| {
            notice.child(name).map(|e| cut(e.string(), max)).unwrap_or_default()
        };
        let time_of = |name: &'static str| -> Result<f64, XmlError> {
            notice.child(name).map_or(Ok(0.0), Element::f64)
        };
        notices.push(Notice {
            seqno: 0,
            title: text_of("title", MAX_SHORT_TEXT),
            description: text_of("description", MAX_DESCRIPTION).trim().to_owned(),
            create_time: time_of("create_time")?,
            arrival_time: time_of("arrival_time")?,
            is_private: notice.child("is_private").is_some_and(|e| e.trimmed() == "1"),
            project_name: text_of("project_name", MAX_SHORT_TEXT),
            category: text_of("category", MAX_SHORT_TEXT),
            link: text_of("link", MAX_SHORT_TEXT),
            guid: archived
                .child("guid")
                .map(|e| cut(e.string(), MAX_SHORT_TEXT))
                .unwrap_or_default(),
            feed_url: feed_url.clone(),
        });
    }
    Ok((feed_url, notices))
}

/// Why a feed's URL is not one the client fetches: only `http` and `https`.
pub fn check_feed_url(url: &str) -> Result<(), String> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(())
    } else {
        Err(format!(
            "the project named the feed {}, which is not an http or https URL; the project's \
             notices from it are not fetched",
            quoted_value(url)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FEED: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
  <channel>
    <title>Project news</title>
    <item>
      <title>Server maintenance</title>
      <link>http://p/forum_thread.php?id=2</link>
      <description><![CDATA[The server is down <b>tomorrow</b>.]]></description>
      <pubDate>Sun, 29 Nov 2026 02:00:00 +0000</pubDate>
      <guid>http://p/forum_thread.php?id=2</guid>
    </item>
    <item><title>No date</title><description>x</description></item>
  </channel>
</rss>"#;

    #[test]
    fn items_become_notices() {
        let notices = parse_rss(FEED, "http://p/notices.php", "P", 5.0).expect("a feed");
        assert_eq!(notices.len(), 2);
        let first = &notices[0];
        assert_eq!(first.title, "Server maintenance");
        assert_eq!(first.description, "The server is down <b>tomorrow</b>.");
        assert_eq!(first.create_time, 1_795_917_600.0);
        assert_eq!((first.arrival_time, first.category.as_str()), (5.0, "server"));
        assert_eq!(notices[1].create_time, 5.0, "an undated item is dated on arrival");
    }

    #[test]
    fn hostile_feeds_are_refused_or_bounded() {
        assert!(parse_rss("<html></html>", "u", "P", 0.0).is_err());
        assert!(parse_rss("<rss><channel><item>", "u", "P", 0.0).is_err());
        let huge = format!("<rss>{}</rss>", " ".repeat(MAX_FEED_BYTES));
        assert!(parse_rss(&huge, "u", "P", 0.0).is_err());
        let many = format!(
            "<rss><channel>{}</channel></rss>",
            "<item><title>t</title></item>".repeat(MAX_FEED_ITEMS + 50)
        );
        assert_eq!(parse_rss(&many, "u", "P", 0.0).expect("read").len(), MAX_FEED_ITEMS);
        let long = format!(
            "<rss><channel><item><title>{}</title></item></channel></rss>",
            "é".repeat(MAX_SHORT_TEXT)
        );
        let notices = parse_rss(&long, "u", "P", 0.0).expect("read");
        assert!(notices[0].title.len() <= MAX_SHORT_TEXT);
    }

    #[test]
    fn feed_lists_and_archives_read_back() {
        let feeds = vec![
            RssFeed { url: "http://p/notices.php".into(), poll_interval: 3600.0 },
            RssFeed { url: "https://p/news.xml".into(), poll_interval: MIN_POLL_INTERVAL },
        ];
        assert_eq!(read_feed_list(&write_feed_list(&feeds)).expect("read"), feeds);
        let notices = parse_rss(FEED, "http://p/notices.php", "P", 5.0).expect("a feed");
        let (url, back) =
            read_archive(&write_archive("http://p/notices.php", &notices)).expect("read");
        assert_eq!((url.as_str(), back), ("http://p/notices.php", notices));
    }

    #[test]
    fn a_served_feed_reads_back() {
        let items = vec![Notice {
            title: "News".into(),
            description: "Text <b>bold</b>".into(),
            create_time: 1_795_917_600.0,
            link: "http://p/news".into(),
            guid: "n1".into(),
            ..Notice::default()
        }];
        let read =
            parse_rss(&write_rss("P news", "http://p/", &items), "u", "P", 5.0).expect("rss");
        assert_eq!(read.len(), 1);
        assert_eq!((read[0].title.as_str(), read[0].guid.as_str()), ("News", "n1"));
        assert_eq!(read[0].description.trim(), "Text <b>bold</b>");
        assert_eq!(read[0].create_time, 1_795_917_600.0);
    }

    #[test]
    fn poll_intervals_are_bounded() {
        let list = "<rss_feeds><rss_feed><url>http://p/n</url><poll_interval>1</poll_interval>\
                    </rss_feed><rss_feed><url>http://p/m</url></rss_feed></rss_feeds>";
        let feeds = read_feed_list(list).expect("read");
        assert_eq!(feeds[0].poll_interval, MIN_POLL_INTERVAL);
        assert_eq!(feeds[1].poll_interval, DEFAULT_POLL_INTERVAL);
        assert!(check_feed_url("file:///etc/passwd").is_err());
        assert!(check_feed_url("https://p/n").is_ok());
    }
}
