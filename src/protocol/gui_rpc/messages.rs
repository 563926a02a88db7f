//! The event log over GUI RPC: `get_messages` (`<msgs>`, each body in CDATA as BOINC
//! 7.20.5 writes it), `get_message_count` (`<seqno>`), and `get_notices` /
//! `get_notices_public` (`<notices>`, from the client's [`NoticeLog`]).

use crate::control::{MessageLog, NoticeLog};
use crate::protocol::notices::write_notice;
use crate::protocol::xml_out::XmlOut;

/// The `<msgs>` after sequence number `after`.
pub(crate) fn write_messages(out: &mut XmlOut, log: &MessageLog, after: u64) {
    out.start("msgs");
    for message in log.after(after) {
        out.start("msg");
        out.text("project", &message.project);
        out.int("pri", message.priority.code());
        out.int("seqno", i64::try_from(message.seqno).unwrap_or(i64::MAX));
        out.cdata("body", &message.body);
        out.int("time", message.time.max(0.0).floor() as i64);
        out.end("msg");
    }
    out.end("msgs");
}

/// The newest message's `<seqno>`.
pub(crate) fn write_message_count(out: &mut XmlOut, log: &MessageLog) {
    out.int("seqno", i64::try_from(log.last_seqno()).unwrap_or(i64::MAX));
}

/// The `<notices>` numbered above `after`: the project news, scheduler alerts and the
/// client's own (`public_only`: without the private ones, for `get_notices_public`).
pub(crate) fn write_notices(out: &mut XmlOut, notices: &NoticeLog, after: u64, public_only: bool) {
    out.start("notices");
    for notice in notices.after(after, public_only) {
        write_notice(out, notice);
    }
    out.end("notices");
}
