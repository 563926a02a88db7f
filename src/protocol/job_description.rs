//! A scheduler reply's jobs (seed 000 "Concepts and terms": a workunit is what to
//! compute, a result one instance of it the client must compute and report): `<workunit>`
//! with its flops estimate and bounds, input files and command line; `<result>` with its
//! report deadline, the app version it must run with and its output files.

use super::error::XmlError;
use super::file_ref::FileReference;
use super::xml_tree::Element;
use super::xml_write::XmlWriter;
use serde::{Deserialize, Serialize};

/// A `<workunit>` of a reply.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WorkunitDescription {
    /// Name, unique within the project (`<name>`).
    pub name: String,
    /// The app (`<app_name>`).
    pub app_name: String,
    /// The app version it was sent for (`<version_num>`), if the server says.
    pub version_num: Option<u32>,
    /// Arguments the app is started with (`<command_line>`).
    pub command_line: String,
    /// Estimated flops (`<rsc_fpops_est>`).
    pub rsc_fpops_est: f64,
    /// Flops after which the job is aborted (`<rsc_fpops_bound>`).
    pub rsc_fpops_bound: f64,
    /// Memory bound, bytes (`<rsc_memory_bound>`).
    pub rsc_memory_bound: f64,
    /// Disk bound, bytes (`<rsc_disk_bound>`).
    pub rsc_disk_bound: f64,
    /// Input files, with the names the app opens them by.
    pub file_refs: Vec<FileReference>,
}

impl WorkunitDescription {
    /// Reads a `<workunit>`; it must have a name and an app.
    pub(crate) fn parse(element: &Element) -> Result<WorkunitDescription, XmlError> {
        let mut workunit = WorkunitDescription {
            name: element.required_text("name")?.to_owned(),
            app_name: element.required_text("app_name")?.to_owned(),
            ..Self::default()
        };
        for child in &element.children {
            match child.name.as_str() {
                "version_num" => workunit.version_num = Some(child.u32()?),
                "command_line" => workunit.command_line = child.string(),
                "rsc_fpops_est" => workunit.rsc_fpops_est = child.non_negative_f64()?,
                "rsc_fpops_bound" => workunit.rsc_fpops_bound = child.non_negative_f64()?,
                "rsc_memory_bound" => workunit.rsc_memory_bound = child.non_negative_f64()?,
                "rsc_disk_bound" => workunit.rsc_disk_bound = child.non_negative_f64()?,
                "file_ref" => workunit.file_refs.push(FileReference::parse(child)?),
                _ => {}
            }
        }
        Ok(workunit)
    }

    /// Writes the `<workunit>`.
    pub(crate) fn write(&self, writer: &mut XmlWriter) {
        writer.open("workunit");
        writer.text("name", &self.name);
        writer.text("app_name", &self.app_name);
        if let Some(version_num) = self.version_num {
            writer.integer("version_num", version_num);
        }
        writer.text_if_any("command_line", &self.command_line);
        writer.number("rsc_fpops_est", self.rsc_fpops_est);
        writer.number("rsc_fpops_bound", self.rsc_fpops_bound);
        writer.number("rsc_memory_bound", self.rsc_memory_bound);
        writer.number("rsc_disk_bound", self.rsc_disk_bound);
        for reference in &self.file_refs {
            reference.write(writer);
        }
        writer.close("workunit");
    }
}

/// A `<result>` of a reply: a job to compute.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ResultDescription {
    /// Name, unique within the project (`<name>`).
    pub name: String,
    /// Its workunit (`<wu_name>`).
    pub wu_name: String,
    /// When it must be reported (`<report_deadline>`).
    pub report_deadline: f64,
    /// Platform of the app version to run it with (`<platform>`).
    pub platform: String,
    /// Version number of that app version (`<version_num>`).
    pub version_num: Option<u32>,
    /// Plan class of that app version (`<plan_class>`).
    pub plan_class: String,
    /// Report it as soon as it is done (`<report_immediately/>`).
    pub report_immediately: bool,
    /// Output files, with the names the app writes them by.
    pub file_refs: Vec<FileReference>,
}

impl ResultDescription {
    /// Reads a `<result>`; it must have a name and a workunit.
    pub(crate) fn parse(element: &Element) -> Result<ResultDescription, XmlError> {
        let mut result = ResultDescription {
            name: element.required_text("name")?.to_owned(),
            wu_name: element.required_text("wu_name")?.to_owned(),
            ..Self::default()
        };
        for child in &element.children {
            match child.name.as_str() {
                "report_deadline" => result.report_deadline = child.f64()?,
                "platform" => result.platform = child.string(),
                "version_num" => result.version_num = Some(child.u32()?),
                "plan_class" => result.plan_class = child.string(),
                "report_immediately" => result.report_immediately = child.flag()?,
                "file_ref" => result.file_refs.push(FileReference::parse(child)?),
                _ => {}
            }
        }
        Ok(result)
    }

    /// Writes the `<result>`.
    pub(crate) fn write(&self, writer: &mut XmlWriter) {
        writer.open("result");
        writer.text("name", &self.name);
        writer.text("wu_name", &self.wu_name);
        if let Some(version_num) = self.version_num {
            writer.integer("version_num", version_num);
        }
        writer.text_if_any("platform", &self.platform);
        writer.text_if_any("plan_class", &self.plan_class);
        writer.number("report_deadline", self.report_deadline);
        writer.empty_if("report_immediately", self.report_immediately);
        for reference in &self.file_refs {
            reference.write(writer);
        }
        writer.close("result");
    }
}
