//! A scheduler reply's `<file_info>` (docs/design.md "Protocol facts", "Files"; seed 004's
//! `<priority>` and `<exp_days>`): a file the client must download (an input or an
//! executable, with its size, checksum and, for executables, the project's signature)
//! or produce and upload (an output, with its size limit and upload URL).

use super::error::{XmlError, XmlProblem};
use super::xml_tree::Element;
use super::xml_write::XmlWriter;
use serde::{Deserialize, Serialize};

/// One `<file_info>` of a reply.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FileDescription {
    /// File name, unique within the project (`<name>`).
    pub name: String,
    /// Where to download it from or upload it to (`<url>`, in order of preference).
    pub urls: Vec<String>,
    /// Size, bytes (`<nbytes>`; absent for an output not yet produced).
    pub nbytes: Option<f64>,
    /// Largest size allowed for an output, bytes (`<max_nbytes>`).
    pub max_nbytes: Option<f64>,
    /// MD5 of the content, hex (`<md5_cksum>`).
    pub md5_cksum: String,
    /// An executable: it runs only with a valid `file_signature` (`<executable/>`).
    pub executable: bool,
    /// The file is made on the host by a job (`<generated_locally/>`).
    pub generated_locally: bool,
    /// Upload it once the job has produced it (`<upload_when_present/>`).
    pub upload_when_present: bool,
    /// Keep it after its jobs are done (`<sticky/>`, seed 004).
    pub sticky: bool,
    /// Never delete it, even when the project asks (`<no_delete/>`).
    pub no_delete: bool,
    /// List it in the next scheduler request (`<report_on_rpc/>`).
    pub report_on_rpc: bool,
    /// Deletion priority, 1 (low) to 5 (high) (`<priority>`, seed 004).
    pub priority: Option<i32>,
    /// Keep it at most this many days (`<exp_days>`, seed 004).
    pub exp_days: Option<f64>,
    /// The project's signature of an executable (`<file_signature>`, BOINC's hex text
    /// format: hex lines, then a `.` line).
    pub file_signature: Option<String>,
}

impl FileDescription {
    /// Reads a `<file_info>`; it must have a name.
    pub(crate) fn parse(element: &Element) -> Result<FileDescription, XmlError> {
        let mut file =
            FileDescription { name: element.required_text("name")?.to_owned(), ..Self::default() };
        for child in &element.children {
            match child.name.as_str() {
                "url" | "download_url" | "upload_url" => {
                    let url = child.string();
                    if !url.is_empty() {
                        file.urls.push(url);
                    }
                }
                "nbytes" => file.nbytes = Some(child.non_negative_f64()?),
                "max_nbytes" => file.max_nbytes = Some(child.non_negative_f64()?),
                "md5_cksum" => file.md5_cksum = child.string(),
                "executable" => file.executable = child.flag()?,
                "generated_locally" => file.generated_locally = child.flag()?,
                "upload_when_present" => file.upload_when_present = child.flag()?,
                "sticky" => file.sticky = child.flag()?,
                "no_delete" => file.no_delete = child.flag()?,
                "report_on_rpc" => file.report_on_rpc = child.flag()?,
                "priority" => file.priority = Some(deletion_priority(child)?),
                "exp_days" => file.exp_days = Some(child.non_negative_f64()?),
                "file_signature" => file.file_signature = Some(child.string()),
                _ => {}
            }
        }
        Ok(file)
    }

    /// Writes the `<file_info>`.
    pub(crate) fn write(&self, writer: &mut XmlWriter) {
        writer.open("file_info");
        writer.text("name", &self.name);
        for url in &self.urls {
            writer.text("url", url);
        }
        writer.empty_if("executable", self.executable);
        writer.empty_if("generated_locally", self.generated_locally);
        writer.empty_if("upload_when_present", self.upload_when_present);
        writer.empty_if("sticky", self.sticky);
        writer.empty_if("no_delete", self.no_delete);
        writer.empty_if("report_on_rpc", self.report_on_rpc);
        writer.number_if_any("nbytes", self.nbytes);
        writer.number_if_any("max_nbytes", self.max_nbytes);
        writer.text_if_any("md5_cksum", &self.md5_cksum);
        if let Some(priority) = self.priority {
            writer.integer("priority", priority);
        }
        writer.number_if_any("exp_days", self.exp_days);
        if let Some(signature) = &self.file_signature {
            writer.block("file_signature", signature);
        }
        writer.close("file_info");
    }
}

/// Seed 004's `<priority>`: an integer from 1 (P_LOW) to 5 (P_HIGH).
pub(crate) fn deletion_priority(element: &Element) -> Result<i32, XmlError> {
    let priority = element.i32()?;
    if (1..=5).contains(&priority) {
        Ok(priority)
    } else {
        Err(element.error(XmlProblem::OutOfRange {
            value: priority.to_string(),
            expected: "an integer from 1 (low) to 5 (high)",
        }))
    }
}
