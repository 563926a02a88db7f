//! A finished job as a scheduler request reports it (docs/design.md "Protocol facts";
//! fixtures/boinc-7.20.5 sched_request_03/04, boinc-8.3.0 sched_request_3): `<result>`
//! with its outcome (exit status, state, times), the app version it ran with, the app's
//! stderr and the `<file_info>` of each uploaded output.
//!
//! A reported result may borrow its text from the state it reports ([`Cow`]); one read
//! from text owns it.

use super::error::XmlError;
use super::xml_tree::Element;
use super::xml_write::XmlWriter;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// An uploaded output file of a reported result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct OutputFile<'a> {
    /// File name (`<name>`).
    pub name: Cow<'a, str>,
    /// Size, bytes (`<nbytes>`).
    pub nbytes: f64,
    /// Size limit, bytes (`<max_nbytes>`).
    pub max_nbytes: f64,
    /// MD5 of the content, hex (`<md5_cksum>`).
    pub md5_cksum: Cow<'a, str>,
    /// Where it was uploaded (`<upload_url>`).
    pub upload_urls: Cow<'a, [String]>,
}

/// BOINC's `<file_xfer_error>` block, which a job's `<stderr_out>` carries when the job
/// ended because `file_name` could not be moved: the error number with its short name,
/// and what happened.
pub fn describe_file_error(file_name: &str, code: i32, code_name: &str, message: &str) -> String {
    let mut writer = XmlWriter::new();
    writer.open("file_xfer_error");
    writer.text("file_name", file_name);
    writer.text("error_code", &format!("{code} ({code_name})"));
    writer.text("error_message", message);
    writer.close("file_xfer_error");
    writer.finish()
}

impl OutputFile<'_> {
    /// The same, owning its text.
    pub fn into_owned(self) -> OutputFile<'static> {
        OutputFile {
            name: Cow::Owned(self.name.into_owned()),
            nbytes: self.nbytes,
            max_nbytes: self.max_nbytes,
            md5_cksum: Cow::Owned(self.md5_cksum.into_owned()),
            upload_urls: Cow::Owned(self.upload_urls.into_owned()),
        }
    }

    fn parse(element: &Element) -> Result<OutputFile<'static>, XmlError> {
        let mut file = OutputFile {
            name: Cow::Owned(element.required_text("name")?.to_owned()),
            ..OutputFile::default()
        };
        for child in &element.children {
            match child.name.as_str() {
                "nbytes" => file.nbytes = child.non_negative_f64()?,
                "max_nbytes" => file.max_nbytes = child.non_negative_f64()?,
                "md5_cksum" => file.md5_cksum = Cow::Owned(child.string()),
                "upload_url" | "url" => {
                    let url = child.string();
                    if !url.is_empty() {
                        file.upload_urls.to_mut().push(url);
                    }
                }
                _ => {}
            }
        }
        Ok(file)
    }

    fn write(&self, writer: &mut XmlWriter) {
        writer.open("file_info");
        writer.text("name", &self.name);
        writer.number("nbytes", self.nbytes);
        writer.number("max_nbytes", self.max_nbytes);
        writer.text("md5_cksum", &self.md5_cksum);
        for url in self.upload_urls.iter() {
            writer.text("upload_url", url);
        }
        writer.close("file_info");
    }
}

/// A `<result>` of a request: a job reported as done (successfully or not).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ReportedResult<'a> {
    /// The result's name (`<name>`).
    pub name: Cow<'a, str>,
    /// CPU seconds it used (`<final_cpu_time>`).
    pub final_cpu_time: f64,
    /// Seconds it ran (`<final_elapsed_time>`).
    pub final_elapsed_time: f64,
    /// The app's exit status, or the client's error code (`<exit_status>`).
    pub exit_status: i32,
    /// BOINC's result state number (`<state>`: 3 computation error, 5 uploaded, …).
    pub state: i64,
    /// Platform of the app version it ran with (`<platform>`).
    pub platform: Cow<'a, str>,
    /// Version number of that app version (`<version_num>`).
    pub version_num: u32,
    /// Plan class of that app version (`<plan_class>`).
    pub plan_class: Cow<'a, str>,
    /// Peak resident memory, bytes (`<final_peak_working_set_size>`).
    pub final_peak_working_set_size: Option<f64>,
    /// Peak swap, bytes (`<final_peak_swap_size>`).
    pub final_peak_swap_size: Option<f64>,
    /// Peak disk use of its slot, bytes (`<final_peak_disk_usage>`).
    pub final_peak_disk_usage: Option<f64>,
    /// The app version its workunit was sent for (`<app_version_num>`).
    pub app_version_num: Option<u32>,
    /// The app's stderr (the CDATA of `<stderr_out>`, without the blank lines around
    /// it; the client's version that precedes it is written from the request's).
    pub stderr_out: Cow<'a, str>,
    /// Its uploaded outputs.
    pub output_files: Vec<OutputFile<'a>>,
}

impl ReportedResult<'_> {
    /// The same, owning its text.
    pub fn into_owned(self) -> ReportedResult<'static> {
        ReportedResult {
            name: Cow::Owned(self.name.into_owned()),
            platform: Cow::Owned(self.platform.into_owned()),
            plan_class: Cow::Owned(self.plan_class.into_owned()),
            stderr_out: Cow::Owned(self.stderr_out.into_owned()),
            output_files: self.output_files.into_iter().map(OutputFile::into_owned).collect(),
            ..self
        }
    }

    pub(crate) fn parse(element: &Element) -> Result<ReportedResult<'static>, XmlError> {
        let mut result = ReportedResult {
            name: Cow::Owned(element.required_text("name")?.to_owned()),
            ..ReportedResult::default()
        };
        for child in &element.children {
            match child.name.as_str() {
                "final_cpu_time" => result.final_cpu_time = child.non_negative_f64()?,
                "final_elapsed_time" => result.final_elapsed_time = child.non_negative_f64()?,
                "exit_status" => result.exit_status = child.i32()?,
                "state" => result.state = child.i64()?,
                "platform" => result.platform = Cow::Owned(child.string()),
                "version_num" => result.version_num = child.u32()?,
                "plan_class" => result.plan_class = Cow::Owned(child.string()),
                "final_peak_working_set_size" => {
                    result.final_peak_working_set_size = Some(child.non_negative_f64()?)
                }
                "final_peak_swap_size" => {
                    result.final_peak_swap_size = Some(child.non_negative_f64()?)
                }
                "final_peak_disk_usage" => {
                    result.final_peak_disk_usage = Some(child.non_negative_f64()?)
                }
                "app_version_num" => result.app_version_num = Some(child.u32()?),
                "stderr_out" => result.stderr_out = Cow::Owned(child.string()),
                "file_info" => result.output_files.push(OutputFile::parse(child)?),
                _ => {}
            }
        }
        Ok(result)
    }

    /// Writes the `<result>`; `client_version` heads its stderr, as the real client
    /// records its version with every result.
    pub(crate) fn write(&self, writer: &mut XmlWriter, client_version: &str) {
        writer.open("result");
        writer.text("name", &self.name);
        writer.number("final_cpu_time", self.final_cpu_time);
        writer.number("final_elapsed_time", self.final_elapsed_time);
        writer.integer("exit_status", self.exit_status);
        writer.integer("state", self.state);
        writer.text("platform", &self.platform);
        writer.integer("version_num", self.version_num);
        writer.text_if_any("plan_class", &self.plan_class);
        // Whole bytes, as BOINC writes them.
        let bytes = |w: &mut XmlWriter, name: &str, value: Option<f64>| {
            if let Some(value) = value {
                w.text(name, &format!("{value:.0}"));
            }
        };
        bytes(writer, "final_peak_working_set_size", self.final_peak_working_set_size);
        bytes(writer, "final_peak_swap_size", self.final_peak_swap_size);
        bytes(writer, "final_peak_disk_usage", self.final_peak_disk_usage);
        if let Some(version) = self.app_version_num {
            writer.integer("app_version_num", version);
        }
        let version = |w: &mut XmlWriter| w.text("core_client_version", client_version);
        if self.stderr_out.is_empty() {
            writer.open("stderr_out");
            version(writer);
            writer.close("stderr_out");
        } else {
            writer.cdata("stderr_out", version, &self.stderr_out);
        }
        for file in &self.output_files {
            file.write(writer);
        }
        writer.close("result");
    }
}
