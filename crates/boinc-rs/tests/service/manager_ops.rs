//! Every GUI RPC operation BOINC Manager 7.20's dialogs and boinccmd use beyond the
//! queries (docs/gui-rpc.md), answered by the host service (`boinc-rs run`) in BOINC
//! 7.20.5's format: the same requests as in tests/fixtures/gui_rpc/
//! manager_ops_replies.txt, sent to the service on a data directory like the capture's,
//! and each reply read by a strict reader of the real client's: the same root
//! elements, and every element boinc-rs writes is one BOINC writes at that place, with
//! a value of the same type (empty, integer, real, text). Where boinc-rs answers
//! otherwise on purpose, the list below says why.

use crate::support;

use boinc_gui_rpc::{GuiRpcClient, PASSWORD_FILE, PROJECT_INIT_FILE};
use quick_xml::Reader;
use quick_xml::events::Event;
use std::collections::BTreeMap;
use std::time::Duration;
use support::in_process::InProcessService;
use support::wait::wait_for;

const PASSWORD: &str = "manager-ops-password";

/// Operations boinc-rs answers differently from the capture, and why.
const DIFFERENT: &[(&str, &str)] = &[(
    "<get_all_projects_list/>",
    "BOINC sends the list it downloaded, none in the capture; boinc-rs ships one",
)];

/// What a leaf's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Empty,
    Integer,
    Real,
    Text,
}

fn kind(value: &str) -> Kind {
    let value = value.trim();
    if value.is_empty() {
        Kind::Empty
    } else if value.parse::<i64>().is_ok() {
        Kind::Integer
    } else if value.parse::<f64>().is_ok() {
        Kind::Real
    } else {
        Kind::Text
    }
}

/// Each element's path in the reply with the kinds of its values; the reader fails on
/// anything that is not well-formed.
fn shape(xml: &str) -> Result<BTreeMap<String, Vec<Kind>>, String> {
    let mut reader = Reader::from_str(xml);
    reader.config_mut().check_end_names = true;
    let mut path: Vec<String> = Vec::new();
    let mut text = String::new();
    let mut has_children: Vec<bool> = Vec::new();
    let mut shape: BTreeMap<String, Vec<Kind>> = BTreeMap::new();
    loop {
        match reader.read_event().map_err(|e| e.to_string())? {
            Event::Start(tag) => {
                if let Some(parent) = has_children.last_mut() {
                    *parent = true;
                }
                path.push(String::from_utf8_lossy(tag.name().as_ref()).into_owned());
                has_children.push(false);
                text.clear();
            }
            Event::Empty(tag) => {
                if let Some(parent) = has_children.last_mut() {
                    *parent = true;
                }
                let name = String::from_utf8_lossy(tag.name().as_ref()).into_owned();
                shape.entry(format!("{}/{name}", path.join("/"))).or_default().push(Kind::Empty);
            }
            Event::Text(t) => text.push_str(&t.unescape().map_err(|e| e.to_string())?),
            Event::CData(data) => text.push_str(&String::from_utf8_lossy(&data)),
            Event::End(_) => {
                let children = has_children.pop().unwrap_or(false);
                let key = path.join("/");
                let entry = shape.entry(key).or_default();
                if !children {
                    entry.push(kind(&text));
                }
                text.clear();
                path.pop();
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !path.is_empty() {
        return Err(format!("unclosed {}", path.join("/")));
    }
    Ok(shape)
}

/// The captured exchanges: (request, BOINC's reply), in order.
fn captured() -> Vec<(String, String)> {
    let text = support::scenarios::read_fixture("gui_rpc/manager_ops_replies.txt");
    text.split("\n--- ")
        .skip(1)
        .map(|section| {
            let start = section.find("<boinc_gui_rpc_reply>").expect("a reply");
            let end = section.find("</boinc_gui_rpc_reply>").expect("its end");
            let reply = &section[start..end + "</boinc_gui_rpc_reply>".len()];
            (section[..start].trim().to_owned(), reply.to_owned())
        })
        .collect()
}

/// What is wrong with `ours` read by the reader of `boinc`'s shape.
fn problems(request: &str, ours: &str, boinc: &str) -> Vec<String> {
    let real = match shape(boinc) {
        Ok(real) => real,
        Err(error) => return vec![format!("{request}: the capture does not read: {error}")],
    };
    let mine = match shape(ours) {
        Ok(mine) => mine,
        Err(error) => return vec![format!("{request}: not well-formed ({error}): {ours}")],
    };
    let mut found = Vec::new();
    let top = |s: &BTreeMap<String, Vec<Kind>>| -> Vec<String> {
        s.keys().filter(|k| k.matches('/').count() == 1).cloned().collect()
    };
    if top(&mine) != top(&real) {
        found.push(format!("{request}: {:?}, BOINC: {:?}\n{ours}", top(&mine), top(&real)));
    }
    for (path, kinds) in &mine {
        match real.get(path) {
            None => found.push(format!("{request}: {path} is not BOINC's\n{ours}")),
            Some(real_kinds) => {
                let real_kind = real_kinds.first();
                // An empty value BOINC writes may be written with one, and a real may
                // happen to be whole.
                let fits = |k: &Kind| match (real_kind, k) {
                    (None, _) => true,
                    (Some(r), k) if r == k => true,
                    (Some(Kind::Empty), _) | (Some(Kind::Real), Kind::Integer) => true,
                    (Some(Kind::Text), _) => true,
                    _ => false,
                };
                if !kinds.iter().all(fits) {
                    found.push(format!("{request}: {path} is {kinds:?}, BOINC: {real_kinds:?}"));
                }
            }
        }
    }
    found
}

#[test]
fn every_manager_operation_answers_in_boinc_7_20_5s_format() {
    let dir = tempfile::tempdir().expect("a data directory");
    std::fs::write(dir.path().join(PASSWORD_FILE), PASSWORD).expect("the password");
    std::fs::write(
        dir.path().join("cc_config.xml"),
        "<cc_config>\n<options>\n<max_file_xfers>4</max_file_xfers>\n</options>\n</cc_config>\n",
    )
    .expect("cc_config.xml");
    std::fs::write(
        dir.path().join("global_prefs_override.xml"),
        "<global_preferences>\n   <run_if_user_active>1</run_if_user_active>\n   \
         <max_ncpus_pct>50.000000</max_ncpus_pct>\n</global_preferences>\n",
    )
    .expect("the override");
    std::fs::write(
        dir.path().join(PROJECT_INIT_FILE),
        "<project_init>\n<url>http://127.0.0.1:1/</url>\n<name>Init Project</name>\n\
         <team_name>Team</team_name>\n</project_init>\n",
    )
    .expect("project_init.xml");
    let running = InProcessService::start(dir.path());
    let runtime = &running.runtime;
    let host = running.gui_rpc.clone();
    let mut client = runtime.block_on(async {
        let mut client = GuiRpcClient::connect(&host).await.expect("connects");
        client.authenticate(PASSWORD).await.expect("authenticates");
        client
    });
    // The client gives the reply's body: the envelope goes back around it.
    let mut call = |request: &str| {
        let body = runtime.block_on(client.call(request)).expect("an answer");
        format!("<boinc_gui_rpc_reply>\n{body}\n</boinc_gui_rpc_reply>")
    };
    let mut found = Vec::new();
    let mut checked = 0;
    for (request, boinc) in captured() {
        let ours = if request.starts_with("<lookup_account_poll") && checked > 10 {
            // After the lookup: polled until it is over, as boinccmd does.
            wait_for("the lookup to end", Duration::from_secs(90), || {
                let reply = call(&request);
                (!reply.contains("<error_num>-204</error_num>")).then_some(reply)
            })
        } else if request.starts_with("<get_project_config_poll") && checked > 10 {
            wait_for("the configuration fetch to end", Duration::from_secs(90), || {
                let reply = call(&request);
                (!reply.contains("<error_num>-204</error_num>")).then_some(reply)
            })
        } else {
            call(&request)
        };
        checked += 1;
        if DIFFERENT.iter().any(|(op, _)| request.starts_with(op)) {
            assert!(shape(&ours).is_ok(), "{request}: not well-formed: {ours}");
            continue;
        }
        found.extend(problems(&request, &ours, &boinc));
    }
    drop(running);
    assert!(checked >= 25, "only {checked} exchanges in the capture");
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_strict_reader_tells_a_wrong_reply() {
    let boinc = "<boinc_gui_rpc_reply>\n<proxy_info>\n<http_server_port>80</http_server_port>\n\
                 </proxy_info>\n</boinc_gui_rpc_reply>";
    assert!(problems("p", boinc, boinc).is_empty());
    let renamed = boinc.replace("http_server_port", "http_port");
    assert!(!problems("p", &renamed, boinc).is_empty(), "an element BOINC does not write");
    let texted = boinc.replace(">80<", ">eighty<");
    assert!(!problems("p", &texted, boinc).is_empty(), "a number written as text");
    let other = "<boinc_gui_rpc_reply>\n<success/>\n</boinc_gui_rpc_reply>";
    assert!(!problems("p", other, boinc).is_empty(), "another root element");
    assert!(!problems("p", "<boinc_gui_rpc_reply><a>", boinc).is_empty(), "not well-formed");
}
