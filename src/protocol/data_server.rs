//! BOINC's data server protocol, the client's side (DESIGN.md "Protocol facts", Files;
//! fixtures boinc-7.20.5/upload_request_sample.txt and
//! boinc-8.3.0/file_upload_request_captured.txt): an upload is one POST to the file's
//! upload URL whose body is a `<data_server_request>` header naming the file, its size,
//! checksum and the offset the bytes start at, then `<data>` on a line of its own and
//! the file's bytes from that offset; before a large upload the client asks the server
//! how much of the file it already holds (`<get_file_size>`), so an interrupted upload
//! goes on where it stopped. The server answers a `<data_server_reply>` whose `<status>`
//! says whether the request was taken (0), refused for good (-1) or is to be tried again
//! later (1, or anything else).
//!
//! The header is written as the real client writes it: the version elements indented
//! inside `<data_server_request>`, the rest at the left margin, and the request left
//! open (the bytes follow `<data>`; no end tags).

use super::error::XmlError;
use super::scheduler_request::ClientVersion;
use super::xml_tree::parse_message;
use super::xml_write::XmlWriter;
use serde::{Deserialize, Serialize};

/// Uploads smaller than this many bytes are sent whole without asking the server how
/// much of them it holds (BOINC's threshold).
pub const FILE_SIZE_QUERY_THRESHOLD: u64 = 8192;

/// What an upload request says about the file it carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UploadHeader<'a> {
    /// The client's version.
    pub client_version: ClientVersion,
    /// The file's name.
    pub name: &'a str,
    /// The largest size the project accepts, bytes.
    pub max_nbytes: f64,
    /// The file's size, bytes.
    pub nbytes: u64,
    /// The file's MD5, hex.
    pub md5_cksum: &'a str,
    /// Where the bytes that follow start in the file.
    pub offset: u64,
}

impl UploadHeader<'_> {
    /// The request's text up to and including the `<data>` line: the file's bytes
    /// from `offset` follow it directly.
    pub fn to_text(&self) -> String {
        let mut text = versions_block(self.client_version);
        let mut body = XmlWriter::new();
        body.open("file_upload");
        body.open("file_info");
        body.text("name", self.name);
        // The projects of today sign nothing here: the signature is always empty.
        body.open("xml_signature");
        body.close("xml_signature");
        body.text("max_nbytes", &whole_number(self.max_nbytes));
        body.close("file_info");
        body.text("nbytes", &self.nbytes.to_string());
        body.text("md5_cksum", self.md5_cksum);
        body.text("offset", &self.offset.to_string());
        body.open("data");
        // The real client writes this block unindented after the version lines.
        for line in body.finish().lines() {
            text.push_str(line.trim_start());
            text.push('\n');
        }
        text
    }
}

/// The request asking the server how many bytes of `name` it holds.
pub fn file_size_query(client_version: ClientVersion, name: &str) -> String {
    let mut text = versions_block(client_version);
    let mut query = XmlWriter::new();
    query.text("get_file_size", name);
    text.push_str("    ");
    text.push_str(query.finish().trim());
    text.push_str("\n</data_server_request>\n");
    text
}

/// `<data_server_request>` and the client's version lines.
fn versions_block(version: ClientVersion) -> String {
    let mut writer = XmlWriter::new();
    writer.integer("core_client_major_version", version.major);
    writer.integer("core_client_minor_version", version.minor);
    writer.integer("core_client_release", version.release);
    let mut text = String::from("<data_server_request>\n");
    for line in writer.finish().lines() {
        text.push_str("    ");
        text.push_str(line.trim());
        text.push('\n');
    }
    text
}

/// A byte count as BOINC writes it in this header (`%.0f`).
fn whole_number(value: f64) -> String {
    let value = if value.is_finite() { value.max(0.0) } else { 0.0 };
    format!("{value:.0}")
}

/// What a data server's `<status>` says about the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DataServerStatus {
    /// Taken (0).
    Accepted,
    /// Refused for good (-1): trying again will not help.
    Refused,
    /// Not taken now (1, or any other value, or none): try again later.
    TryLater,
}

/// A data server's answer (`<data_server_reply>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataServerReply {
    /// Whether the request was taken.
    pub status: DataServerStatus,
    /// How many bytes of the file the server holds (the answer to a size query).
    pub file_size: Option<u64>,
    /// What the server says, if anything.
    pub message: Option<String>,
}

impl DataServerReply {
    /// Reads a data server's answer. An answer without a status means "try again": the
    /// real client takes it so, and so does this reader.
    pub fn from_xml(text: &str) -> Result<DataServerReply, XmlError> {
        let root = parse_message(text)?;
        let mut reply =
            DataServerReply { status: DataServerStatus::TryLater, file_size: None, message: None };
        for child in &root.children {
            match child.name.as_str() {
                "status" => {
                    reply.status = match child.text.trim().parse::<i64>() {
                        Ok(0) => DataServerStatus::Accepted,
                        Ok(-1) => DataServerStatus::Refused,
                        _ => DataServerStatus::TryLater,
                    };
                }
                "file_size" => {
                    // Servers write sizes as integers or as `%f`; a negative or
                    // unreadable size is no size.
                    reply.file_size = child
                        .text
                        .trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|size| size.is_finite() && *size >= 0.0)
                        .map(|size| size as u64);
                }
                "message" => reply.message = Some(child.text.trim().to_owned()),
                _ => {}
            }
        }
        Ok(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V7: ClientVersion = ClientVersion { major: 7, minor: 20, release: 5 };

    #[test]
    fn upload_header_is_the_real_clients() {
        let fixture =
            include_str!("../../../shared/fixtures/boinc-7.20.5/upload_request_sample.txt");
        let header = UploadHeader {
            client_version: V7,
            name: "wu_B_r0_out",
            max_nbytes: 1_000_000.0,
            nbytes: 50,
            md5_cksum: "986678011ea2e6d9c78db806d257a80e",
            offset: 0,
        };
        // The sample was cut before `<data>`; everything up to it is byte for byte.
        assert_eq!(header.to_text(), format!("{fixture}<data>\n"));
    }

    #[test]
    fn upload_header_matches_the_8_3_capture_and_is_followed_by_the_bytes() {
        let fixture =
            include_str!("../../../shared/fixtures/boinc-8.3.0/file_upload_request_captured.txt");
        let header = UploadHeader {
            client_version: ClientVersion { major: 8, minor: 3, release: 0 },
            name: "stub_wu_1_0_out",
            max_nbytes: 100_000.0,
            nbytes: 20,
            md5_cksum: "f2e981ce9caa7167839d9cecaf096091",
            offset: 0,
        };
        let mut request = header.to_text().into_bytes();
        request.extend_from_slice(b"hello from stub app\n");
        assert_eq!(String::from_utf8(request).expect("text"), fixture);
    }

    #[test]
    fn the_size_query_names_the_file() {
        assert_eq!(
            file_size_query(V7, "a<b"),
            "<data_server_request>\n    <core_client_major_version>7</core_client_major_version>\n    \
             <core_client_minor_version>20</core_client_minor_version>\n    \
             <core_client_release>5</core_client_release>\n    \
             <get_file_size>a&lt;b</get_file_size>\n</data_server_request>\n"
        );
    }

    #[test]
    fn replies() {
        let ok = DataServerReply::from_xml(
            "<data_server_reply>\n    <status>0</status>\n</data_server_reply>\n",
        )
        .expect("reply");
        assert_eq!((ok.status, ok.file_size), (DataServerStatus::Accepted, None));
        let size = DataServerReply::from_xml(
            "<data_server_reply><status>0</status><file_size>12345</file_size></data_server_reply>",
        )
        .expect("reply");
        assert_eq!(size.file_size, Some(12345));
        let refused = DataServerReply::from_xml(
            "<data_server_reply><status>-1</status><message>bad name</message></data_server_reply>",
        )
        .expect("reply");
        assert_eq!(refused.status, DataServerStatus::Refused);
        assert_eq!(refused.message.as_deref(), Some("bad name"));
        let busy =
            DataServerReply::from_xml("<data_server_reply><status>1</status></data_server_reply>")
                .expect("reply");
        assert_eq!(busy.status, DataServerStatus::TryLater);
        let silent = DataServerReply::from_xml("<data_server_reply/>").expect("reply");
        assert_eq!(silent.status, DataServerStatus::TryLater);
        assert!(DataServerReply::from_xml("<html>oops").is_err());
    }
}
