//! Errors from reading BOINC's XML files (docs/design.md "Protocol facts": the state files a
//! user migrates from the real client). Every error names the file, the 1-based line and,
//! where there is one, the element, and says what to do about it: these files are often
//! edited by hand.

use thiserror::Error;

/// A BOINC XML file could not be read into the model.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{file} line {line}{}: {problem}", element_clause(.element.as_deref()))]
pub struct XmlError {
    /// The file (name or path) the caller gave for the text.
    pub file: String,
    /// 1-based line where the problem is.
    pub line: usize,
    /// The element at fault, when the problem is in one.
    pub element: Option<String>,
    /// What is wrong.
    pub problem: XmlProblem,
}

fn element_clause(element: Option<&str>) -> String {
    element.map(|name| format!(", element <{name}>")).unwrap_or_default()
}

impl XmlError {
    /// An error at a line, outside any particular element; the file is named later by
    /// [`XmlError::in_file`], where the caller's file name is known.
    pub(crate) fn at_line(line: usize, problem: XmlProblem) -> Self {
        XmlError { file: String::new(), line, element: None, problem }
    }

    /// An error in an element.
    pub(crate) fn in_element(line: usize, element: &str, problem: XmlProblem) -> Self {
        XmlError { file: String::new(), line, element: Some(element.to_owned()), problem }
    }

    /// Names the file the error is in.
    pub(crate) fn in_file(mut self, file: &str) -> Self {
        file.clone_into(&mut self.file);
        self
    }
}

/// What is wrong in a BOINC XML file. Each message ends with what the user can do.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum XmlProblem {
    /// The text is not well-formed XML.
    // Said of any text a client, a server or a user's file sent: which backup to take
    // (client_state_prev.xml for the state) is for the caller that knows the file.
    #[error("malformed XML ({0}); the text is damaged: fix it, or send or restore a good copy")]
    Malformed(String),
    /// The file ends while elements are still open.
    #[error(
        "the file ends before this element is closed; the file is truncated: restore a \
         backup or close the element"
    )]
    Unclosed,
    /// An element holds more text than any BOINC file does.
    #[error(
        "the element holds more than {0} bytes of text; this is not a BOINC file: check that \
         the right file was given"
    )]
    TextTooLong(usize),
    /// An element boinc-rs does not know in a user's configuration file (BOINC's
    /// "unrecognized tag"): it has no effect.
    #[error(
        "unrecognized tag: boinc-rs does not support it, so it has no effect; check its \
         spelling or remove it"
    )]
    Unrecognized,
    /// More elements of one kind than the reader accepts in one document.
    #[error(
        "more than {limit} <{element}> elements; the document is too large to be a genuine \
         one: if it is, ask its sender to split it"
    )]
    TooMany {
        /// The element that repeats.
        element: &'static str,
        /// How many are accepted.
        limit: usize,
    },
    /// Elements nest deeper than any BOINC file does.
    #[error(
        "elements are nested more than {0} levels deep; this is not a BOINC file: check \
         that the right file was given"
    )]
    TooDeep(usize),
    /// No element at all.
    #[error(
        "the file has no XML element; it is empty or not XML: check that the right file was given"
    )]
    NoRoot,
    /// Non-blank text outside the root element.
    #[error("text outside the root element; remove it")]
    TextOutsideRoot,
    /// A second top-level element after the root closed.
    #[error("a second top-level element after the root element closed; remove it")]
    SecondRoot,
    /// The root element is not the one this file must have.
    #[error("expected the root element <{expected}>; check that the right file was given")]
    WrongRoot {
        /// The root element the file must have.
        expected: &'static str,
    },
    /// A number was expected.
    #[error("expected a number, found \"{0}\"; fix or remove the element")]
    NotANumber(String),
    /// A whole number was expected.
    #[error("expected a whole number, found \"{0}\"; fix or remove the element")]
    NotAnInteger(String),
    /// A flag was expected.
    #[error("expected a flag (empty, 0 or 1), found \"{0}\"; fix or remove the element")]
    NotAFlag(String),
    /// A number outside the range the policies can work with.
    #[error("{value} is out of range, it must be {expected}; fix or remove the element")]
    OutOfRange {
        /// The value as written.
        value: String,
        /// The allowed range, in words.
        expected: &'static str,
    },
    /// A required child element is absent.
    #[error("missing <{0}>; add it")]
    Missing(&'static str),
    /// A per-project element before the first `<project>`.
    #[error(
        "appears before any <project>; BOINC assigns it to the project before it: move it \
         after its <project>"
    )]
    BeforeProject,
    /// Two projects with the same master URL.
    #[error("a second project with master URL \"{0}\"; remove one of the two <project> elements")]
    DuplicateProject(String),
    /// Two apps, files, workunits or results of one project with the same name.
    #[error("a second {kind} named \"{name}\" in project {project}; remove one of the two")]
    Duplicate {
        /// What is duplicated (`app`, `file`, `workunit`, `result`).
        kind: &'static str,
        /// The duplicated name.
        name: String,
        /// The project's master URL.
        project: String,
    },
    /// A reference to an app the project doesn't have.
    #[error(
        "names app \"{app}\", which project {project} does not have; add its <app> after \
         the <project> or fix the name"
    )]
    UnknownApp {
        /// The app name given.
        app: String,
        /// The project's master URL.
        project: String,
    },
    /// A result whose workunit the project doesn't have.
    #[error(
        "names workunit \"{workunit}\", which project {project} does not have; add the \
         <workunit> or remove the <result>"
    )]
    UnknownWorkunit {
        /// The workunit name given.
        workunit: String,
        /// The project's master URL.
        project: String,
    },
    /// A result state BOINC doesn't define.
    #[error("unknown result state {0}; BOINC's result states are 0 to 7: fix the number")]
    UnknownJobState(i64),
    /// A coprocessor type an app version can't be scheduled on.
    #[error("unknown coprocessor type \"{0}\"; use NVIDIA, ATI or intel_gpu")]
    UnknownCoprocessor(String),
    /// A run mode BOINC doesn't define.
    #[error("unknown run mode {0}; use 1 (always), 2 (according to preferences) or 3 (never)")]
    UnknownRunMode(i64),
    /// A file name that is a path, or has control characters, in a file the user writes.
    #[error(
        "\"{0}\" is not a plain file name; name the file as it is in the project's directory, \
         without a path"
    )]
    NotAPlainFileName(String),
    /// A download URL in app_info.xml: the volunteer's own files are never downloaded.
    #[error(
        "a <url> in app_info.xml: the volunteer's own files are never downloaded; put the \
         file in the project's directory and remove the <url>"
    )]
    UrlInAppInfo,
    /// An app version names an app the same file does not declare.
    #[error(
        "names app \"{0}\", which no <app> of the file declares; add the <app> or fix the name"
    )]
    UndeclaredApp(String),
    /// An app version names a file the same file does not declare.
    #[error(
        "names file \"{0}\", which no <file_info> of the file declares; add the <file_info> \
         or fix the name"
    )]
    UndeclaredFile(String),
    /// A file status BOINC doesn't define.
    #[error("unknown file status {0}; use 0 (not present), 1 (present) or a negative error code")]
    UnknownFileStatus(i64),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_line_and_element() {
        let error = XmlError::in_element(42, "p_ncpus", XmlProblem::NotANumber("abc".into()))
            .in_file("client_state.xml");
        assert_eq!(
            error.to_string(),
            "client_state.xml line 42, element <p_ncpus>: expected a number, found \"abc\"; \
             fix or remove the element"
        );
    }

    #[test]
    fn display_without_element() {
        let error = XmlError::at_line(3, XmlProblem::TextOutsideRoot).in_file("cc_config.xml");
        assert_eq!(
            error.to_string(),
            "cc_config.xml line 3: text outside the root element; remove it"
        );
    }
}
