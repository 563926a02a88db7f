//! The names projects are shown and keyed by in figures, traces and `explain`: a project's
//! identity is its master URL, and BOINC allows two projects with the same name (different
//! URLs), so a name that clashes is shown with its URL.

use super::project::Project;
use std::collections::{HashMap, HashSet};

/// One label per project, in order, all distinct: the project's name where no other
/// project has that name, else `name <master URL>`; where even that clashes (the same
/// project attached twice), `#n` (its position) is added.
pub fn project_labels(projects: &[Project]) -> Vec<String> {
    let mut name_count: HashMap<&str, usize> = HashMap::new();
    for project in projects {
        *name_count.entry(project.name.as_str()).or_insert(0) += 1;
    }
    let labels: Vec<String> = projects
        .iter()
        .map(|p| {
            if name_count[p.name.as_str()] == 1 {
                p.name.clone()
            } else {
                format!("{} <{}>", p.name, p.master_url)
            }
        })
        .collect();
    // Names and URLs come from outside: whatever they hold, no two labels may be equal.
    let mut label_count: HashMap<&str, usize> = HashMap::new();
    for label in &labels {
        *label_count.entry(label.as_str()).or_insert(0) += 1;
    }
    let clashing: Vec<bool> = labels.iter().map(|l| label_count[l.as_str()] > 1).collect();
    let mut taken: HashSet<String> = labels.iter().cloned().collect();
    labels
        .into_iter()
        .zip(clashing)
        .enumerate()
        .map(|(index, (label, clash))| {
            if !clash {
                return label;
            }
            let mut number = index + 1;
            loop {
                let candidate = format!("{label} #{number}");
                if taken.insert(candidate.clone()) {
                    return candidate;
                }
                number += projects.len();
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(name: &str, url: &str) -> Project {
        Project::new(name, url.to_string(), 100.0)
    }

    #[test]
    fn unique_names_stay_as_they_are() {
        let projects = [project("A", "http://a/"), project("B", "http://b/")];
        assert_eq!(project_labels(&projects), ["A", "B"]);
    }

    #[test]
    fn clashing_names_are_shown_with_their_urls() {
        let projects = [
            project("Same", "http://one/"),
            project("B", "http://b/"),
            project("Same", "http://two/"),
        ];
        assert_eq!(project_labels(&projects), ["Same <http://one/>", "B", "Same <http://two/>"]);
    }

    #[test]
    fn a_project_attached_twice_is_numbered() {
        let projects = [project("A", "http://a/"), project("A", "http://a/")];
        let labels = project_labels(&projects);
        assert_eq!(labels, ["A <http://a/> #1", "A <http://a/> #2"]);
    }

    #[test]
    fn labels_are_distinct_whatever_the_names() {
        let projects = [
            project("A", "u"),
            project("A", "u"),
            project("A <u> #1", "v"),
            project("A <u> #2", "w"),
        ];
        let labels = project_labels(&projects);
        let distinct: HashSet<&String> = labels.iter().collect();
        assert_eq!(distinct.len(), labels.len(), "{labels:?}");
    }
}
