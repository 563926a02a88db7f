//! The state file reader on broken, hostile and random input: every problem is an error
//! naming the file and line, never a panic.

use boinc_core::model::Prefs;
use boinc_core::protocol::{
    XmlError, XmlProblem, parse_cc_config, parse_client_state, parse_global_prefs,
};
use proptest::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

fn parse(text: &str) -> Result<(), XmlError> {
    parse_client_state(text, "client_state.xml").map(|_| ())
}

#[test]
fn mismatched_end_tag_names_file_and_line() {
    let error =
        parse("<client_state>\n<host_info>\n<p_ncpus>2</p_ncpu>\n</host_info>\n</client_state>")
            .expect_err("mismatched end tag");
    assert_eq!((error.file.as_str(), error.line), ("client_state.xml", 3));
    assert!(matches!(error.problem, XmlProblem::Malformed(_)));
    assert!(error.to_string().starts_with("client_state.xml line 3: malformed XML"), "{error}");
}

#[test]
fn unclosed_tags_name_where_they_opened() {
    let error =
        parse("<client_state>\n<project>\n<master_url>u</master_url>\n").expect_err("unclosed");
    assert_eq!(error.line, 2);
    assert_eq!(error.element.as_deref(), Some("project"));
    assert_eq!(error.problem, XmlProblem::Unclosed);
}

#[test]
fn garbage_is_an_error_with_a_line() {
    let cases = [
        ("not xml at all", 1),
        ("\n\n<<<>>>", 3),
        ("<client_state>\n</x>", 2),
        ("<client_state/>\n</client_state>", 2),
        ("<client_state>\n<a\n", 2),
        ("", 1),
    ];
    for (garbage, line) in cases {
        let error = parse(garbage).expect_err(garbage);
        assert_eq!(
            (error.file.as_str(), error.line),
            ("client_state.xml", line),
            "{garbage:?}: {error}"
        );
    }
}

#[test]
fn bad_number_names_element_and_line() {
    let text = format!(
        "<client_state>\n{}<host_info>\n<p_ncpus>abc</p_ncpus>\n</host_info>\n</client_state>\n",
        "<!-- padding -->\n".repeat(39)
    );
    let error = parse(&text).expect_err("bad number");
    assert_eq!(
        error.to_string(),
        "client_state.xml line 42, element <p_ncpus>: expected a number, found \"abc\"; \
         fix or remove the element"
    );
    let error =
        parse("<client_state><host_info>\n<p_fpops>fast</p_fpops></host_info></client_state>")
            .expect_err("bad float");
    assert_eq!(
        error.to_string(),
        "client_state.xml line 2, element <p_fpops>: expected a number, found \"fast\"; \
         fix or remove the element"
    );
}

#[test]
fn unknown_result_state_is_an_error() {
    let text = "<client_state>\n<project><master_url>u</master_url></project>\n\
        <app><name>a</name></app>\n<workunit><name>w</name><app_name>a</app_name></workunit>\n\
        <result><name>r</name><wu_name>w</wu_name>\n<state>8</state></result>\n</client_state>";
    let error = parse(text).expect_err("state 8");
    assert_eq!(error.problem, XmlProblem::UnknownJobState(8));
    assert_eq!((error.line, error.element.as_deref()), (6, Some("state")));
}

#[test]
fn negative_buffer_preference_is_an_error() {
    let mut prefs = Prefs::default();
    let error = parse_global_prefs(
        "<global_preferences>\n<work_buf_additional_days>-0.5</work_buf_additional_days>\n</global_preferences>",
        "global_prefs.xml",
        &mut prefs,
    )
    .expect_err("negative");
    assert_eq!(error.line, 2);
    assert!(error.to_string().contains("out of range"), "{error}");
}

#[test]
fn deep_nesting_is_refused_without_overflowing_the_stack() {
    let deep = format!("<client_state>{}", "<x>".repeat(200_000));
    let error = parse(&deep).expect_err("too deep");
    assert!(matches!(error.problem, XmlProblem::TooDeep(_)), "{error}");
    let closed = format!("{}{}", "<x>".repeat(100_000), "</x>".repeat(100_000));
    assert!(parse_cc_config(&closed, "cc_config.xml").is_err());
}

#[test]
fn ten_megabytes_of_text() {
    let text = "x".repeat(10 << 20);
    assert_eq!(parse(&text).expect_err("bare text").problem, XmlProblem::TextOutsideRoot);
    // No BOINC element holds megabytes: such an element is refused, whatever it is, and
    // the message does not quote it.
    let inside = format!("<client_state><junk>{text}</junk></client_state>");
    let error = parse(&inside).expect_err("too long");
    assert!(matches!(error.problem, XmlProblem::TextTooLong(_)), "{error}");
    assert_eq!(error.element.as_deref(), Some("junk"));
    let number =
        format!("<client_state><host_info><p_fpops>{text}</p_fpops></host_info></client_state>");
    let error = parse(&number).expect_err("too long");
    assert!(error.to_string().len() < 300, "the message quotes nothing of the value");
    // A long number that fits is still quoted only by its start.
    let digits = "1".repeat(100_000);
    let number =
        format!("<client_state><host_info><p_fpops>{digits}x</p_fpops></host_info></client_state>");
    let error = parse(&number).expect_err("not a number");
    assert!(error.to_string().len() < 300, "the message quotes only the start of the value");
    let many_lines = format!("<client_state>{}<p_ncpus/></client_state>", "\n".repeat(10 << 20));
    assert!(parse(&many_lines).is_ok());
}

#[test]
fn unclosed_cdata_and_comment() {
    let error = parse("<client_state>\n<stderr_out><![CDATA[ never closed").expect_err("cdata");
    assert_eq!(error.line, 2);
    assert!(parse("<client_state><!-- never closed").is_err());
}

#[test]
fn invalid_utf8_bytes_read_lossily_do_not_panic() {
    let mut bytes = fixture_text().as_bytes().to_vec();
    for i in (0..bytes.len()).step_by(97) {
        bytes[i] = 0xFF;
    }
    let text = String::from_utf8_lossy(&bytes);
    let _ = parse(&text);
    let _ = parse(&String::from_utf8_lossy(
        b"<client_state><project><master_url>\xC3\x28</master_url></project></client_state>",
    ));
}

/// A real state file with projects, files, workunits, results and an active task.
fn fixture_text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/boinc-8.3.0/client_state_running_captured.xml");
        std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("{}: {e} (the shared test data must be beside the checkout)", path.display())
        })
    })
}

/// Pieces of BOINC-like XML, so that random documents get past the tokenizer and reach
/// the model mapping.
const TOKENS: &[&str] = &[
    "<client_state>",
    "</client_state>",
    "<project>",
    "</project>",
    "<master_url>",
    "</master_url>",
    "<app>",
    "</app>",
    "<name>",
    "</name>",
    "<app_version>",
    "</app_version>",
    "<app_name>",
    "</app_name>",
    "<workunit>",
    "</workunit>",
    "<result>",
    "</result>",
    "<wu_name>",
    "</wu_name>",
    "<state>",
    "</state>",
    "<version_num>",
    "</version_num>",
    "<coproc>",
    "</coproc>",
    "<type>",
    "</type>",
    "<count>",
    "</count>",
    "<active_task_set>",
    "<active_task>",
    "</active_task>",
    "<result_name>",
    "</result_name>",
    "<project_master_url>",
    "</project_master_url>",
    "<host_info>",
    "</host_info>",
    "<coprocs>",
    "<coproc_cuda>",
    "</coproc_cuda>",
    "<p_ncpus>",
    "</p_ncpus>",
    "<flag/>",
    "<![CDATA[",
    "]]>",
    "<!--",
    "-->",
    "&amp;",
    "&#0;",
    "&",
    "<",
    ">",
    "a",
    "u",
    "w",
    "1",
    "2",
    "-1",
    "1e309",
    "NaN",
    "0.5",
    "NVIDIA",
    "\n",
    " ",
    "\u{feff}",
    "é",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,400}") {
        let _ = parse(&text);
        let _ = parse_cc_config(&text, "cc_config.xml");
        let _ = parse_global_prefs(&text, "global_prefs.xml", &mut Prefs::default());
    }

    #[test]
    fn token_soup_never_panics(tokens in prop::collection::vec(prop::sample::select(TOKENS), 0..300)) {
        let text = tokens.concat();
        if let Err(error) = parse(&text) {
            prop_assert!(error.line >= 1 && error.line <= text.lines().count().max(1));
        }
    }

    #[test]
    fn mutated_fixture_never_panics(
        edits in prop::collection::vec(
            (0usize..3, any::<prop::sample::Index>(), 0usize..64, prop::sample::select(TOKENS)),
            1..8,
        )
    ) {
        let mut bytes = fixture_text().as_bytes().to_vec();
        for (kind, position, length, token) in edits {
            let at = position.index(bytes.len() + 1);
            let end = (at + length).min(bytes.len());
            match kind {
                0 => { bytes.drain(at..end); }
                1 => { bytes.splice(at..at, token.bytes()); }
                _ => { bytes.truncate(at); }
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        match parse_client_state(&text, "client_state.xml") {
            Err(error) => {
                prop_assert_eq!(error.file.as_str(), "client_state.xml");
                prop_assert!(error.line >= 1);
            }
            // Whatever survives the edits must still link up.
            Ok(state) => {
                for job in &state.jobs {
                    prop_assert!(job.workunit.index() < state.workunits.len());
                    prop_assert!(job.project.index() < state.projects.len());
                    if let Some(version) = job.app_version {
                        prop_assert!(version.index() < state.app_versions.len());
                        prop_assert_eq!(
                            state.app_version(version).app,
                            state.workunit(job.workunit).app
                        );
                    }
                }
                for workunit in &state.workunits {
                    prop_assert!(workunit.input_files.iter().all(|f| f.file.index() < state.files.len()));
                }
            }
        }
    }
}
