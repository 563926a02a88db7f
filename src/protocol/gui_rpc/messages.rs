//! The event log over GUI RPC: `get_messages` (`<msgs>`, each body in CDATA as BOINC
//! 7.20.5 writes it), `get_message_count` (`<seqno>`), and `get_notices` /
//! `get_notices_public` (`<notices>`): the client's notices are its user alerts, as in
//! BOINC, where a message that asks the user to act also becomes a notice.

use crate::control::{MessageLog, MessagePriority};
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

/// The `<notices>` after sequence number `after`: the log's user alerts. None of them
/// is private, so the public list is the same.
pub(crate) fn write_notices(out: &mut XmlOut, log: &MessageLog, after: u64) {
    out.start("notices");
    for message in log.after(after).filter(|m| m.priority == MessagePriority::UserAlert) {
        out.start("notice");
        out.text("title", "");
        out.cdata("description", &message.body);
        out.real("create_time", message.time);
        out.real("arrival_time", message.time);
        out.bit("is_private", false);
        out.text("project_name", &message.project);
        out.text("category", "client");
        out.text("link", "");
        out.int("seqno", i64::try_from(message.seqno).unwrap_or(i64::MAX));
        out.end("notice");
    }
    out.end("notices");
}
