//! The dashboard's pages, script and style sheet, built into the binary: nothing is
//! fetched from elsewhere, and no framework is loaded at run time (plain JavaScript).

/// The pages, by path and title, in the navigation's order.
pub(crate) const PAGES: [(&str, &str); 7] = [
    ("overview", "Overview"),
    ("tasks", "Tasks"),
    ("projects", "Projects"),
    ("schedule", "Schedule"),
    ("transfers", "Transfers"),
    ("log", "Event log"),
    ("preferences", "Preferences"),
];

const PAGE: &str = include_str!("../assets/page.html");
const LOGIN: &str = include_str!("../assets/login.html");
/// The script every page runs.
pub(crate) const SCRIPT: &str = include_str!("../assets/app.js");
/// The style sheet.
pub(crate) const STYLE: &str = include_str!("../assets/style.css");

/// The policy every page is served with: scripts, styles, images and connections only
/// from the dashboard itself, and no framing by other sites.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; img-src 'self' data:; \
     object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The page `name` for a session whose CSRF token is `csrf`; `None` for no such page.
pub(crate) fn page(name: &str, csrf: &str) -> Option<String> {
    let (_, title) = PAGES.iter().find(|(path, _)| *path == name)?;
    let navigation: String = PAGES
        .iter()
        .map(|(path, title)| {
            let current = if *path == name { " aria-current=\"page\"" } else { "" };
            format!("<a href=\"/{path}\"{current}>{title}</a>")
        })
        .collect();
    // The token is hex and the names come from PAGES: nothing here needs escaping.
    Some(
        PAGE.replace("{{TITLE}}", title)
            .replace("{{PAGE}}", name)
            .replace("{{CSRF}}", csrf)
            .replace("{{NAV}}", &navigation),
    )
}

/// The login page, with `problem` shown when there is one.
pub(crate) fn login(problem: Option<&str>) -> String {
    let problem =
        problem.map_or(String::new(), |p| format!("<p class=\"problem\" id=\"problem\">{p}</p>"));
    LOGIN.replace("{{PROBLEM}}", &problem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_has_its_token_and_marks_itself_in_the_navigation() {
        for (name, title) in PAGES {
            let html = page(name, "abc123").expect("a page");
            assert!(html.contains("content=\"abc123\""), "{name}");
            assert!(html.contains(&format!("data-page=\"{name}\"")), "{name}");
            assert!(
                html.contains(&format!("<a href=\"/{name}\" aria-current=\"page\">{title}</a>"))
            );
            assert!(!html.contains("{{"), "{name}: a placeholder left");
        }
        assert_eq!(page("admin", "abc123"), None);
    }

    #[test]
    fn nothing_is_loaded_from_elsewhere() {
        // (The attach form's placeholder shows a URL; nothing is fetched from one.)
        let elsewhere = [
            "src=\"http",
            "href=\"http",
            "src=\"//",
            "href=\"//",
            "@import",
            "url(",
            "fetch('http",
            "fetch(\"http",
            "fetch(`http",
            "EventSource('http",
            "import(",
        ];
        for text in [PAGE, LOGIN, SCRIPT, STYLE] {
            for pattern in elsewhere {
                assert!(!text.contains(pattern), "{pattern}");
            }
        }
    }
}
