//! A project's master page (docs/design.md "Protocol facts": the page at the project's URL
//! names its scheduler URLs as `<scheduler>URL</scheduler>` or
//! `<link rel="boinc_scheduler" href="URL">`), read by a client and written by a project
//! server.
//!
//! The page is HTML, not XML: tags are left open, attributes come in any order, quoted
//! either way or not at all, and names in any case. The scan finds the two forms
//! wherever they are (commented-out ones excepted), reads a link's attributes with
//! quick-xml's HTML attribute reader and decodes entities, keeps each URL once in page
//! order, and is bounded in the number and length of the URLs it keeps.

use quick_xml::escape::{escape, unescape};
use quick_xml::events::BytesStart;
use serde::{Deserialize, Serialize};

/// The most scheduler URLs kept from one page.
pub const MAX_SCHEDULER_URLS: usize = 32;
/// The longest URL kept, bytes; longer ones are not URLs a project would publish.
pub const MAX_URL_LEN: usize = 2048;

/// What the client reads from a master page.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MasterPage {
    /// The scheduler URLs, in page order, each once.
    pub scheduler_urls: Vec<String>,
}

impl MasterPage {
    /// Reads the scheduler URLs from a master page's HTML.
    pub fn parse(html: &str) -> MasterPage {
        let html = without_comments(html);
        // ASCII lowercasing keeps byte offsets, so positions found in `lower` hold in `html`.
        let lower = html.to_ascii_lowercase();
        let mut found: Vec<(usize, String)> = Vec::new();
        let mut from = 0;
        while let Some(at) = lower[from..].find("<scheduler>").map(|i| from + i) {
            let start = at + "<scheduler>".len();
            let Some(length) = lower[start..].find("</scheduler>") else { break };
            found.push((at, decoded(&html[start..start + length])));
            from = start + length;
        }
        let mut from = 0;
        while let Some(at) = lower[from..].find("<link").map(|i| from + i) {
            let start = at + 1;
            let Some(length) = html[start..].find('>') else { break };
            from = start + length;
            let tag = html[start..start + length].trim_end_matches('/');
            if let Some(url) = scheduler_link(tag) {
                found.push((at, url));
            }
        }
        found.sort_by_key(|(at, _)| *at);
        let mut page = MasterPage::default();
        for (_, url) in found {
            let usable = !url.is_empty() && url.len() <= MAX_URL_LEN;
            if usable && !page.scheduler_urls.contains(&url) {
                page.scheduler_urls.push(url);
                if page.scheduler_urls.len() == MAX_SCHEDULER_URLS {
                    break;
                }
            }
        }
        page
    }
}

impl MasterPage {
    /// A master page for a project named `name` whose schedulers are this page's
    /// `scheduler_urls`, naming each in both forms clients look for (a project server's
    /// side).
    pub fn to_html(&self, name: &str) -> String {
        let name = escape(name);
        let mut html = format!("<html>\n<head>\n<title>{name}</title>\n");
        for url in &self.scheduler_urls {
            html.push_str(&format!(
                "<link rel=\"boinc_scheduler\" href=\"{}\">\n",
                escape(url.as_str())
            ));
        }
        html.push_str(&format!(
            "</head>\n<body>\n<h1>{name}</h1>\n<p>A BOINC project. Attach a BOINC client \
             to this page's URL.</p>\n"
        ));
        for url in &self.scheduler_urls {
            html.push_str(&format!("<scheduler>{}</scheduler>\n", escape(url.as_str())));
        }
        html.push_str("</body>\n</html>\n");
        html
    }
}

/// The page without its `<!-- … -->` comments (an unclosed one runs to the end).
fn without_comments(html: &str) -> String {
    let mut kept = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(start) = rest.find("<!--") {
        kept.push_str(&rest[..start]);
        match rest[start + 4..].find("-->") {
            Some(end) => rest = &rest[start + 4 + end + 3..],
            None => rest = "",
        }
    }
    kept.push_str(rest);
    kept
}

/// Text with its entities decoded (as written if they don't decode), trimmed.
fn decoded(text: &str) -> String {
    let text = text.trim();
    unescape(text).map_or_else(|_| text.to_owned(), |t| t.trim().to_owned())
}

/// The `href` of a `<link …>` tag (its content between `<` and `>`) whose `rel` is
/// `boinc_scheduler`.
fn scheduler_link(tag: &str) -> Option<String> {
    let name_len = tag.find(|c: char| c.is_ascii_whitespace()).unwrap_or(tag.len());
    if !tag[..name_len].eq_ignore_ascii_case("link") {
        return None;
    }
    let start = BytesStart::from_content(tag, name_len);
    let (mut rel, mut href) = (None, None);
    for attribute in start.html_attributes().filter_map(Result::ok) {
        let key = String::from_utf8_lossy(attribute.key.as_ref()).to_ascii_lowercase();
        let value = String::from_utf8_lossy(&attribute.value).into_owned();
        match key.as_str() {
            "rel" => rel = Some(value),
            "href" => href = Some(decoded(&value)),
            _ => {}
        }
    }
    let is_scheduler =
        rel?.split_ascii_whitespace().any(|r| r.eq_ignore_ascii_case("boinc_scheduler"));
    if is_scheduler { href } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(html: &str) -> Vec<String> {
        MasterPage::parse(html).scheduler_urls
    }

    #[test]
    fn both_forms_once_each_in_page_order() {
        let html = "<html><head><title>P</title>\n\
            <link rel=\"boinc_scheduler\" href=\"http://a/cgi\">\n\
            </head><body><scheduler>http://a/cgi</scheduler>\n\
            <SCHEDULER> http://b/cgi </SCHEDULER></body></html>";
        assert_eq!(urls(html), ["http://a/cgi", "http://b/cgi"]);
    }

    #[test]
    fn links_in_real_html_spellings() {
        let html = "<LINK href='http://x/cgi?a=1&amp;b=2' REL=boinc_scheduler />\
            <link rel=\"stylesheet\" href=\"style.css\">\
            <link rel=\"alternate boinc_scheduler\" href=http://y/cgi>\
            <linkage rel=boinc_scheduler href=http://no/>\
            <!-- <scheduler>http://old/cgi</scheduler> -->\
            <link rel=\"boinc_scheduler\" href=\"\">";
        assert_eq!(urls(html), ["http://x/cgi?a=1&b=2", "http://y/cgi"]);
    }

    #[test]
    fn broken_pages_give_what_they_hold() {
        assert!(urls("").is_empty());
        assert!(urls("<scheduler>http://a/cgi").is_empty());
        assert!(urls("<link rel=boinc_scheduler href=http://a/cgi").is_empty());
        assert_eq!(urls("<!-- x <scheduler>http://a/</scheduler>"), Vec::<String>::new());
        assert_eq!(urls("<scheduler>http://a/&bogus;</scheduler>"), ["http://a/&bogus;"]);
    }

    #[test]
    fn pages_we_write_read_back() {
        let page = MasterPage {
            scheduler_urls: vec!["http://127.0.0.1:8088/cgi".into(), "http://x/cgi?a=1&b=2".into()],
        };
        let html = page.to_html("Tom & Jerry's <project>");
        assert!(html.contains("<title>Tom &amp; Jerry&apos;s &lt;project&gt;</title>"));
        assert!(html.contains("<link rel=\"boinc_scheduler\" href=\"http://127.0.0.1:8088/cgi\">"));
        assert!(html.contains("<scheduler>http://x/cgi?a=1&amp;b=2</scheduler>"));
        assert_eq!(MasterPage::parse(&html), page);
    }

    #[test]
    fn bounded() {
        let many: String =
            (0..100).map(|i| format!("<scheduler>http://s{i}/</scheduler>")).collect();
        assert_eq!(urls(&many).len(), MAX_SCHEDULER_URLS);
        let long = format!("<scheduler>http://{}/</scheduler>", "a".repeat(MAX_URL_LEN));
        assert!(urls(&long).is_empty());
    }
}
