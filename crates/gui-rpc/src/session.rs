//! One connection's protocol state (docs/design.md "Protocol facts", GUI RPC; the fixtures'
//! edge cases): authentication in two steps, what a client may ask before it has
//! authenticated, and when the server gives up on a connection. Pure: each request
//! comes in, a step comes out; the connection carries it out.
//!
//! As BOINC 7.20.5 does: a local client may ask read-only operations without
//! authenticating, a remote one nothing; a control operation before authentication is
//! answered `<unauthorized/>`, and the second such answer closes the connection; a
//! wrong password is answered `<unauthorized/>` and closes it; `<auth1/>` or `<auth2>`
//! out of turn closes it.

use super::auth::check_answer;
use boinc_core::protocol::gui_rpc::{self as protocol, Access, Operation, Request};

/// What the connection does with a request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// Send this reply body and read the next request.
    Reply(Vec<u8>),
    /// Send this reply body, then close the connection.
    ReplyAndClose(Vec<u8>),
    /// Close the connection without a reply.
    Close,
    /// Carry the operation out and send its reply.
    Execute(Operation),
}

/// Where a connection stands.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    /// The client is on this host.
    local: bool,
    /// The client has authenticated (or no password is set).
    authorized: bool,
    /// The nonce sent for `<auth1/>`, until `<auth2>` answers it.
    nonce: Option<String>,
    /// An `<unauthorized/>` has been sent for an operation.
    refused_once: bool,
    /// The server's password.
    password: String,
}

impl Session {
    /// A new connection; `password` is the server's (empty: no authentication, for
    /// local clients; remote ones are never let in without a password).
    pub(crate) fn new(local: bool, password: &str) -> Self {
        Session {
            local,
            authorized: local && password.is_empty(),
            nonce: None,
            refused_once: false,
            password: password.to_string(),
        }
    }

    /// Whether the client has authenticated.
    #[cfg(test)]
    pub(crate) fn authorized(&self) -> bool {
        self.authorized
    }

    /// The step for one request. `new_nonce` makes the nonce for `<auth1/>`.
    pub(crate) fn step(&mut self, request: Request, new_nonce: impl FnOnce() -> String) -> Step {
        let password = self.password.as_str();
        match request {
            Request::Auth1 if self.nonce.is_some() && !self.authorized => Step::Close,
            Request::Auth1 => {
                let nonce = new_nonce();
                let reply = protocol::nonce(&nonce);
                self.nonce = Some(nonce);
                Step::Reply(reply)
            }
            Request::Auth2 { nonce_hash } => match self.nonce.take() {
                None if self.authorized => Step::Reply(protocol::authorized()),
                None => Step::Close,
                Some(nonce) => {
                    if !password.is_empty() && check_answer(&nonce, password, &nonce_hash) {
                        self.authorized = true;
                        Step::Reply(protocol::authorized())
                    } else if self.local && password.is_empty() {
                        Step::Reply(protocol::authorized())
                    } else {
                        Step::ReplyAndClose(protocol::unauthorized())
                    }
                }
            },
            _ if !self.authorized && !self.local => self.refuse(),
            Request::Missing => Step::Reply(protocol::missing_request()),
            Request::Unrecognized(name) => Step::Reply(protocol::unrecognized(&name)),
            Request::Malformed(detail) => {
                Step::Reply(protocol::error(&format!("malformed request: {detail}")))
            }
            Request::Operation { access: Access::Control, .. } if !self.authorized => self.refuse(),
            Request::Operation { operation: Err(error), .. } => {
                Step::Reply(protocol::error(&error.to_string()))
            }
            Request::Operation { operation: Ok(operation), .. } => Step::Execute(operation),
        }
    }

    /// `<unauthorized/>`; the second one on a connection closes it.
    fn refuse(&mut self) -> Step {
        if self.refused_once {
            Step::ReplyAndClose(protocol::unauthorized())
        } else {
            self.refused_once = true;
            Step::Reply(protocol::unauthorized())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::auth::nonce_hash;
    use super::*;
    use boinc_core::protocol::gui_rpc::parse_request;

    const PASSWORD: &str = "testpass123";

    fn request(body: &str) -> Request {
        parse_request(
            format!("<boinc_gui_rpc_request>\n{body}\n</boinc_gui_rpc_request>\n").as_bytes(),
        )
    }

    fn step(session: &mut Session, body: &str) -> Step {
        session.step(request(body), || "1795247909.805998".to_string())
    }

    fn text(body: &[u8]) -> &str {
        std::str::from_utf8(body).expect("utf-8")
    }

    fn authenticate(session: &mut Session, password: &str) -> Step {
        let Step::Reply(nonce) = step(session, "<auth1/>") else { panic!("a nonce") };
        assert_eq!(text(&nonce), "<nonce>1795247909.805998</nonce>\n");
        let hash = nonce_hash("1795247909.805998", password);
        step(session, &format!("<auth2>\n<nonce_hash>{hash}</nonce_hash>\n</auth2>"))
    }

    #[test]
    fn the_right_password_authorizes() {
        let mut session = Session::new(true, PASSWORD);
        assert_eq!(authenticate(&mut session, PASSWORD), Step::Reply(b"<authorized/>\n".to_vec()));
        assert!(session.authorized());
        assert!(matches!(step(&mut session, "<quit/>"), Step::Execute(Operation::Quit)));
    }

    /// gui_rpc_samples.txt "wrong password": `<unauthorized/>` (boinccmd prints
    /// "Authorization failure: -155"), then the connection is closed.
    #[test]
    fn a_wrong_password_is_refused_and_closes() {
        let mut session = Session::new(true, PASSWORD);
        assert_eq!(
            authenticate(&mut session, "WRONG"),
            Step::ReplyAndClose(b"<unauthorized/>\n".to_vec())
        );
        assert!(!session.authorized());
    }

    /// gui_rpc_edge_cases.txt: without authentication a local client reads, is refused
    /// control once, and the second refusal closes the connection.
    #[test]
    fn local_reads_are_open_and_the_second_refusal_closes() {
        let mut session = Session::new(true, PASSWORD);
        assert!(matches!(
            step(&mut session, "<get_cc_status/>"),
            Step::Execute(Operation::GetCcStatus)
        ));
        let refused =
            step(&mut session, "<set_run_mode><always/><duration>0</duration></set_run_mode>");
        assert_eq!(refused, Step::Reply(b"<unauthorized/>\n".to_vec()));
        assert!(matches!(step(&mut session, "<exchange_versions/>"), Step::Execute(_)));
        let Step::Reply(error) = step(&mut session, "<bogus_op/>") else { panic!("an error") };
        assert_eq!(text(&error), "<error>unrecognized op: bogus_op/</error>\n");
        assert!(matches!(
            step(&mut session, "<get_messages><seqno>1150</seqno></get_messages>"),
            Step::Execute(_)
        ));
        assert_eq!(
            step(&mut session, "<get_notices><seqno>0</seqno></get_notices>"),
            Step::ReplyAndClose(b"<unauthorized/>\n".to_vec())
        );
    }

    #[test]
    fn remote_clients_must_authenticate_first() {
        let mut session = Session::new(false, PASSWORD);
        assert_eq!(step(&mut session, "<get_state/>"), Step::Reply(b"<unauthorized/>\n".to_vec()));
        assert_eq!(
            step(&mut session, "<get_state/>"),
            Step::ReplyAndClose(b"<unauthorized/>\n".to_vec())
        );
        let mut session = Session::new(false, PASSWORD);
        assert_eq!(authenticate(&mut session, PASSWORD), Step::Reply(b"<authorized/>\n".to_vec()));
        assert!(matches!(step(&mut session, "<get_state/>"), Step::Execute(_)));
        // Without a password, a remote client can never get in.
        let mut session = Session::new(false, "");
        assert!(matches!(authenticate(&mut session, ""), Step::ReplyAndClose(_)));
    }

    #[test]
    fn no_password_means_no_authentication_locally() {
        let mut session = Session::new(true, "");
        assert!(session.authorized());
        assert!(matches!(step(&mut session, "<quit/>"), Step::Execute(Operation::Quit)));
        assert_eq!(
            authenticate(&mut session, "anything"),
            Step::Reply(b"<authorized/>\n".to_vec())
        );
    }

    #[test]
    fn authentication_out_of_turn_closes() {
        let mut session = Session::new(true, PASSWORD);
        assert_eq!(step(&mut session, "<auth2><nonce_hash>x</nonce_hash></auth2>"), Step::Close);
        let mut session = Session::new(true, PASSWORD);
        step(&mut session, "<auth1/>");
        assert_eq!(step(&mut session, "<auth1/>"), Step::Close);
    }

    #[test]
    fn requests_that_are_not_one() {
        let mut session = Session::new(true, PASSWORD);
        let Step::Reply(reply) = session.step(parse_request(b"<get_state/>"), String::new) else {
            panic!("an error reply");
        };
        assert_eq!(text(&reply), "<error>missing request</error>\n");
        let Step::Reply(reply) = step(&mut session, "") else { panic!("an error reply") };
        assert_eq!(text(&reply), "<error>unrecognized op: /boinc_gui_rpc_request</error>\n");
        // Bad arguments of a control operation are looked at only once authorized.
        assert_eq!(
            step(&mut session, "<project_suspend/>"),
            Step::Reply(b"<unauthorized/>\n".to_vec())
        );
        authenticate(&mut session, PASSWORD);
        let Step::Reply(reply) = step(&mut session, "<project_suspend/>") else {
            panic!("an error")
        };
        assert_eq!(text(&reply), "<error>Missing project URL</error>\n");
    }
}
