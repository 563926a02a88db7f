//! BOINC's data server protocol (docs/design.md "Protocol facts", "Files"; fixtures
//! boinc-7.20.5/upload_request_sample.txt and boinc-8.3.0/file_upload_request_captured.txt):
//! a client uploads an output file with one POST whose body is a `<data_server_request>`
//! header naming the file, its size, checksum and the offset it resumes from, then
//! `<data>` and a newline, then the bytes. The header is not well-formed XML (its
//! elements are left open before the data), so it is read with a tolerant XML reader
//! up to the `<data>` tag. Before resuming, a client asks how much the server holds
//! with `<get_file_size>NAME</get_file_size>`. The server answers
//! `<data_server_reply>` with `<status>` 0 (done), 1 (transient error: retry later) or
//! -1 (permanent error), a `<message>`, and for a size query `<file_size>`.

use super::scheduler_request::ClientVersion;
use super::xml_write::XmlWriter;
use quick_xml::Reader;
use quick_xml::events::Event;
use thiserror::Error;

/// The longest header read, bytes: far beyond a real one (a few hundred bytes).
pub const MAX_DATA_SERVER_HEADER: usize = 64 * 1024;

/// Uploads smaller than this many bytes are sent whole without asking the server how
/// much of them it holds (BOINC's threshold for the size query).
pub const FILE_SIZE_QUERY_THRESHOLD: u64 = 8192;

/// The tag before an upload's bytes.
const DATA_TAG: &[u8] = b"<data>";

/// An upload's header: the file and where its bytes go.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FileUpload {
    /// The file (`<file_info><name>`).
    pub name: String,
    /// Its size limit as the client holds it (`<file_info><max_nbytes>`; a server
    /// checks against its own record).
    pub max_nbytes: f64,
    /// The whole file's size (`<nbytes>`).
    pub nbytes: f64,
    /// The whole file's MD5, hex (`<md5_cksum>`).
    pub md5_cksum: String,
    /// Where the bytes that follow start in the file (`<offset>`).
    pub offset: u64,
}

/// A data server request.
#[derive(Debug, Clone, PartialEq)]
pub enum DataServerRequest {
    /// How many bytes of a file does the server hold (`<get_file_size>`)?
    FileSize {
        /// The client's version.
        client_version: ClientVersion,
        /// The file's name.
        name: String,
    },
    /// Bytes of a file follow (`<file_upload>`).
    Upload {
        /// The client's version.
        client_version: ClientVersion,
        /// The file and offset.
        upload: FileUpload,
    },
}

/// A request that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DataServerError {
    /// The body is not a data server request.
    #[error(
        "not a data server request ({0}); uploads are a <data_server_request> header, \
         <data> and the bytes: check the upload URL"
    )]
    Malformed(String),
    /// The header runs on past any real one.
    #[error(
        "the upload header is longer than {MAX_DATA_SERVER_HEADER} bytes or has no <data> \
         tag; the request is damaged"
    )]
    HeaderTooLong,
    /// A needed element is missing or wrong.
    #[error("the upload header's <{0}> is missing or not valid; the request is damaged")]
    BadField(&'static str),
}

impl DataServerRequest {
    /// Reads a request from the start of a POST body; for an upload, also returns where
    /// the file's bytes start in `body`. Only the first [`MAX_DATA_SERVER_HEADER`] bytes
    /// are looked at, so the bytes after the header may still be arriving.
    pub fn parse(body: &[u8]) -> Result<(DataServerRequest, usize), DataServerError> {
        let window = &body[..body.len().min(MAX_DATA_SERVER_HEADER)];
        let data_tag = window.windows(DATA_TAG.len()).position(|w| w == DATA_TAG);
        let header_end = data_tag.unwrap_or(window.len());
        let header = std::str::from_utf8(&window[..header_end])
            .map_err(|_| DataServerError::Malformed("the header is not UTF-8 text".into()))?;
        let fields = HeaderFields::read(header)?;
        let client_version = ClientVersion {
            major: fields.number("core_client_major_version").unwrap_or(0),
            minor: fields.number("core_client_minor_version").unwrap_or(0),
            release: fields.number("core_client_release").unwrap_or(0),
        };
        if let Some(name) = fields.get("get_file_size") {
            let name = name.trim();
            if name.is_empty() {
                return Err(DataServerError::BadField("get_file_size"));
            }
            let request = DataServerRequest::FileSize { client_version, name: name.to_owned() };
            return Ok((request, body.len()));
        }
        if !fields.seen_file_upload {
            return Err(DataServerError::Malformed(
                "neither <file_upload> nor <get_file_size>".into(),
            ));
        }
        let Some(tag_at) = data_tag else {
            return Err(if body.len() >= MAX_DATA_SERVER_HEADER {
                DataServerError::HeaderTooLong
            } else {
                DataServerError::BadField("data")
            });
        };
        let mut data_start = tag_at + DATA_TAG.len();
        if body[data_start..].starts_with(b"\r\n") {
            data_start += 2;
        } else if body[data_start..].starts_with(b"\n") {
            data_start += 1;
        }
        let name = fields.get("name").map(str::trim).unwrap_or_default();
        if name.is_empty() {
            return Err(DataServerError::BadField("name"));
        }
        let upload = FileUpload {
            name: name.to_owned(),
            max_nbytes: fields.non_negative("max_nbytes")?.unwrap_or(0.0),
            nbytes: fields.non_negative("nbytes")?.ok_or(DataServerError::BadField("nbytes"))?,
            md5_cksum: fields.get("md5_cksum").map(str::trim).unwrap_or_default().to_owned(),
            offset: match fields.get("offset") {
                // BOINC writes the offset as `%.0f`.
                Some(text) => {
                    let value: f64 =
                        text.trim().parse().map_err(|_| DataServerError::BadField("offset"))?;
                    if !(value.is_finite() && value >= 0.0 && value < 2f64.powi(53)) {
                        return Err(DataServerError::BadField("offset"));
                    }
                    value as u64
                }
                None => 0,
            },
        };
        Ok((DataServerRequest::Upload { client_version, upload }, data_start))
    }

    /// The request as the real client writes it: for an upload, the header up to and
    /// including `<data>` and its newline, after which the caller sends the bytes.
    pub fn to_text(&self) -> String {
        let version = match self {
            DataServerRequest::FileSize { client_version, .. }
            | DataServerRequest::Upload { client_version, .. } => client_version,
        };
        let mut w = XmlWriter::new();
        w.open("data_server_request");
        w.integer("core_client_major_version", version.major);
        w.integer("core_client_minor_version", version.minor);
        w.integer("core_client_release", version.release);
        match self {
            DataServerRequest::FileSize { name, .. } => {
                w.text("get_file_size", name);
                w.close("data_server_request");
                w.finish()
            }
            DataServerRequest::Upload { upload, .. } => {
                w.close("data_server_request");
                // The real client leaves <file_upload> and the request open before the
                // data: the closing tag written above is replaced by the upload part.
                let mut text = w.finish();
                let close = "</data_server_request>";
                if let Some(at) = text.rfind(close) {
                    text.truncate(at);
                }
                // Sizes are whole bytes, written as BOINC writes them (`%.0f`).
                let bytes = |value: f64| format!("{value:.0}");
                let mut part = XmlWriter::new();
                part.open("file_info");
                part.text("name", &upload.name);
                part.text("xml_signature", "\n");
                part.integer("max_nbytes", bytes(upload.max_nbytes));
                part.close("file_info");
                let file_info = part.finish();
                let mut rest = XmlWriter::new();
                rest.integer("nbytes", bytes(upload.nbytes));
                rest.text("md5_cksum", &upload.md5_cksum);
                rest.integer("offset", upload.offset);
                format!(
                    "{}\n<file_upload>\n{}\n{}\n<data>\n",
                    text.trim_end(),
                    file_info.trim(),
                    rest.finish().trim()
                )
            }
        }
    }
}

/// The innermost-element texts of a header, first occurrence of each name kept.
struct HeaderFields {
    texts: Vec<(String, String)>,
    seen_file_upload: bool,
}

impl HeaderFields {
    fn read(header: &str) -> Result<HeaderFields, DataServerError> {
        let mut reader = Reader::from_str(header);
        let config = reader.config_mut();
        // Elements are left open before the data.
        config.check_end_names = false;
        let mut open: Vec<String> = Vec::new();
        let mut fields = HeaderFields { texts: Vec::new(), seen_file_upload: false };
        let mut seen_root = false;
        loop {
            match reader.read_event() {
                Ok(Event::Start(tag)) => {
                    let name = String::from_utf8_lossy(tag.name().as_ref()).into_owned();
                    if open.is_empty() && !seen_root {
                        if name != "data_server_request" {
                            return Err(DataServerError::Malformed(format!(
                                "the root element is <{name}>"
                            )));
                        }
                        seen_root = true;
                    }
                    fields.seen_file_upload |= name == "file_upload";
                    // Bounded by the header's length: at most one entry per tag.
                    open.push(name);
                }
                Ok(Event::End(_)) => {
                    open.pop();
                }
                Ok(Event::Text(text)) => {
                    if let Some(name) = open.last()
                        && !fields.texts.iter().any(|(n, _)| n == name)
                    {
                        let value = text
                            .unescape()
                            .map_err(|e| DataServerError::Malformed(e.to_string()))?;
                        fields.texts.push((name.clone(), value.into_owned()));
                    }
                }
                Ok(Event::Eof) => break,
                Ok(_) => {}
                Err(error) => return Err(DataServerError::Malformed(error.to_string())),
            }
        }
        if !seen_root {
            return Err(DataServerError::Malformed("no <data_server_request>".into()));
        }
        Ok(fields)
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.texts.iter().find(|(n, _)| n == name).map(|(_, text)| text.as_str())
    }

    fn number(&self, name: &str) -> Option<u32> {
        self.get(name)?.trim().parse().ok()
    }

    fn non_negative(&self, name: &'static str) -> Result<Option<f64>, DataServerError> {
        let Some(text) = self.get(name) else { return Ok(None) };
        match text.trim().parse::<f64>() {
            Ok(value) if value.is_finite() && value >= 0.0 => Ok(Some(value)),
            _ => Err(DataServerError::BadField(name)),
        }
    }
}

/// A data server's answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DataServerReply {
    /// 0: done; 1: transient error (retry later); -1: permanent error.
    pub status: i32,
    /// What went wrong.
    pub message: Option<String>,
    /// For a size query: the bytes the server holds.
    pub file_size: Option<u64>,
}

impl DataServerReply {
    /// Success.
    pub fn success() -> DataServerReply {
        DataServerReply::default()
    }

    /// The answer to a size query.
    pub fn file_size(size: u64) -> DataServerReply {
        DataServerReply { file_size: Some(size), ..DataServerReply::default() }
    }

    /// A transient error: the client retries later.
    pub fn transient(message: impl Into<String>) -> DataServerReply {
        DataServerReply { status: 1, message: Some(message.into()), file_size: None }
    }

    /// A permanent error: the client gives the upload up.
    pub fn permanent(message: impl Into<String>) -> DataServerReply {
        DataServerReply { status: -1, message: Some(message.into()), file_size: None }
    }

    /// The reply as BOINC's upload handler writes it.
    pub fn to_xml(&self) -> String {
        let mut w = XmlWriter::new();
        w.open("data_server_reply");
        w.integer("status", self.status);
        if let Some(message) = &self.message {
            w.text("message", message);
        }
        if let Some(size) = self.file_size {
            w.integer("file_size", size);
        }
        w.close("data_server_reply");
        w.finish()
    }

    /// Reads a reply (text around it, such as a CGI header, is skipped). A reply
    /// without a `<status>` reads as a transient error, as the real client takes it.
    pub fn from_xml(text: &str) -> Result<DataServerReply, super::XmlError> {
        const NAME: &str = "data server reply";
        let start = text.find("<data_server_reply").unwrap_or(0);
        let root = super::xml_tree::parse_message(&text[start..]).map_err(|e| e.in_file(NAME))?;
        if root.name != "data_server_reply" {
            let problem = super::XmlProblem::WrongRoot { expected: "data_server_reply" };
            return Err(root.error(problem).in_file(NAME));
        }
        let mut reply = DataServerReply { status: 1, ..DataServerReply::default() };
        for child in &root.children {
            match child.name.as_str() {
                "status" => reply.status = child.i32().map_err(|e| e.in_file(NAME))?,
                "message" => reply.message = Some(child.string()),
                "file_size" => {
                    let size = child.non_negative_f64().map_err(|e| e.in_file(NAME))?;
                    reply.file_size = Some(size.min(u64::MAX as f64) as u64);
                }
                _ => {}
            }
        }
        Ok(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE_830: &str =
        include_str!("../../tests/fixtures/boinc-8.3.0/file_upload_request_captured.txt");

    #[test]
    fn the_real_clients_upload_reads() {
        let (request, data_start) =
            DataServerRequest::parse(FIXTURE_830.as_bytes()).expect("the capture reads");
        let DataServerRequest::Upload { client_version, upload } = request else {
            panic!("an upload")
        };
        assert_eq!(client_version, ClientVersion { major: 8, minor: 3, release: 0 });
        assert_eq!(upload.name, "stub_wu_1_0_out");
        assert_eq!((upload.nbytes, upload.max_nbytes, upload.offset), (20.0, 100_000.0, 0));
        assert_eq!(upload.md5_cksum, "f2e981ce9caa7167839d9cecaf096091");
        assert_eq!(&FIXTURE_830.as_bytes()[data_start..], b"hello from stub app\n");
    }

    #[test]
    fn what_we_write_reads_back_and_matches_the_real_clients_layout() {
        let upload = FileUpload {
            name: "stub_wu_1_0_out".into(),
            max_nbytes: 100_000.0,
            nbytes: 20.0,
            md5_cksum: "f2e981ce9caa7167839d9cecaf096091".into(),
            offset: 0,
        };
        let version = ClientVersion { major: 8, minor: 3, release: 0 };
        let request = DataServerRequest::Upload { client_version: version, upload };
        let header = request.to_text();
        let mut body = header.clone().into_bytes();
        body.extend_from_slice(b"hello from stub app\n");
        assert_eq!(DataServerRequest::parse(&body), Ok((request, header.len())));
        let tags = |text: &str| -> Vec<String> {
            text.lines()
                .filter_map(|l| l.trim().strip_prefix('<'))
                .map(|l| l.split(['>', '/']).next().unwrap_or_default().to_owned())
                .collect()
        };
        let fixture_header = &FIXTURE_830[..FIXTURE_830.find("<data>").expect("data") + 7];
        assert_eq!(tags(&header), tags(fixture_header));
        let unindented = |text: &str| text.lines().map(str::trim).collect::<Vec<_>>().join("\n");
        assert_eq!(unindented(&header), unindented(fixture_header));
        let size = DataServerRequest::FileSize { client_version: version, name: "a&b".into() };
        let text = size.to_text();
        assert!(text.contains("<get_file_size>a&amp;b</get_file_size>"));
        assert_eq!(DataServerRequest::parse(text.as_bytes()), Ok((size, text.len())));
    }

    #[test]
    fn damaged_requests_are_errors() {
        let cases: [&[u8]; 7] = [
            b"",
            b"<scheduler_request/>",
            b"<data_server_request><file_upload><file_info><name>x</name></file_info>\
              <nbytes>-1</nbytes><data>\n",
            b"<data_server_request><file_upload><file_info></file_info><nbytes>1</nbytes>\
              <data>\nx",
            b"<data_server_request><file_upload><file_info><name>x</name></file_info>\
              <nbytes>1</nbytes>",
            b"<data_server_request><get_file_size> </get_file_size></data_server_request>",
            b"<data_server_request>\xff\xfe<data>\n",
        ];
        for body in cases {
            assert!(DataServerRequest::parse(body).is_err(), "{}", String::from_utf8_lossy(body));
        }
        let long = format!("<data_server_request><file_upload>{}", " ".repeat(70_000));
        assert_eq!(DataServerRequest::parse(long.as_bytes()), Err(DataServerError::HeaderTooLong));
    }

    #[test]
    fn replies_round_trip() {
        for reply in [
            DataServerReply::success(),
            DataServerReply::file_size(12345),
            DataServerReply::transient("busy"),
            DataServerReply::permanent("file too large"),
        ] {
            let text = format!("Content-type: text/plain\n\n{}", reply.to_xml());
            assert_eq!(DataServerReply::from_xml(&text), Ok(reply));
        }
        assert!(DataServerReply::from_xml("<html>oops</html>").is_err());
        let silent = DataServerReply::from_xml("<data_server_reply></data_server_reply>");
        assert_eq!(silent.map(|reply| reply.status), Ok(1));
    }
}
