//! What a scheduler request says about the jobs the client still holds (docs/design.md
//! "Protocol facts"): `<other_results>`, this project's jobs not yet reported (so the
//! server can resend lost ones); `<in_progress_results>`, every project's jobs still to
//! compute with their deadlines and remaining time (seed 000 "Scheduler work-send
//! policy": the server's EDF check of whether a new job would miss its deadline or make
//! another miss its own); and the project's sticky files.
//!
//! The real client sends `<in_progress_results>` only to a project that asked with
//! `<send_full_workload/>`; boinc-rs always sends it (with the jobs of the resources it
//! asks work for), so any server can run the check.
//!
//! A request lists every job the client holds, so the jobs' names are borrowed from the
//! state the request is made from rather than copied ([`Cow`]); a request read from
//! text owns them.

use super::error::XmlError;
use super::xml_tree::Element;
use super::xml_write::XmlWriter;
use crate::model::ResourceType;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// An `<other_result>`: a job of the requesting project the client holds, unreported.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OtherResult<'a> {
    /// The result's name (`<name>`).
    pub name: Cow<'a, str>,
    /// Position of its app version in the request's `<app_versions>` (`<app_version>`;
    /// -1: none listed).
    pub app_version: i32,
    /// Plan class of its app version (`<plan_class>`), for servers that predate the
    /// app version index.
    pub plan_class: Cow<'a, str>,
}

impl OtherResult<'_> {
    /// The same, owning its text.
    pub fn into_owned(self) -> OtherResult<'static> {
        OtherResult {
            name: Cow::Owned(self.name.into_owned()),
            app_version: self.app_version,
            plan_class: Cow::Owned(self.plan_class.into_owned()),
        }
    }

    pub(crate) fn parse(element: &Element) -> Result<OtherResult<'static>, XmlError> {
        let mut result = OtherResult {
            name: Cow::Owned(element.required_text("name")?.to_owned()),
            app_version: -1,
            plan_class: Cow::Borrowed(""),
        };
        for child in &element.children {
            match child.name.as_str() {
                "app_version" => result.app_version = child.i32()?,
                "plan_class" => result.plan_class = Cow::Owned(child.string()),
                _ => {}
            }
        }
        Ok(result)
    }

    pub(crate) fn write(&self, writer: &mut XmlWriter) {
        writer.open("other_result");
        writer.text("name", &self.name);
        writer.integer("app_version", self.app_version);
        writer.text_if_any("plan_class", &self.plan_class);
        writer.close("other_result");
    }
}

/// An `<ip_result>`: a job (of any project) still to compute.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct InProgressResult<'a> {
    /// The result's name (`<name>`).
    pub name: Cow<'a, str>,
    /// When it must be reported (`<report_deadline>`).
    pub report_deadline: f64,
    /// Estimated seconds of running it still needs (`<time_remaining>`).
    pub time_remaining: f64,
    /// CPUs it uses (`<avg_ncpus>`).
    pub avg_ncpus: f64,
    /// The GPU type and instances it uses (`<ncudas>`, `<natis>`, `<nintel_gpus>`).
    pub gpu: Option<(ResourceType, f64)>,
}

impl InProgressResult<'_> {
    /// The same, owning its name.
    pub fn into_owned(self) -> InProgressResult<'static> {
        InProgressResult { name: Cow::Owned(self.name.into_owned()), ..self }
    }

    /// BOINC's element for a GPU type's usage.
    fn gpu_element(resource: ResourceType) -> Option<&'static str> {
        match resource {
            ResourceType::Cpu => None,
            ResourceType::Nvidia => Some("ncudas"),
            ResourceType::Amd => Some("natis"),
            ResourceType::Intel => Some("nintel_gpus"),
        }
    }

    /// The resource the job is scheduled on: its GPU if it uses one, else the CPU.
    pub fn main_resource(&self) -> ResourceType {
        self.gpu.map_or(ResourceType::Cpu, |(r, _)| r)
    }

    /// Instances of `resource` it occupies.
    pub fn usage_of(&self, resource: ResourceType) -> f64 {
        match (resource, self.gpu) {
            (ResourceType::Cpu, _) => self.avg_ncpus,
            (r, Some((gpu, n))) if r == gpu => n,
            _ => 0.0,
        }
    }

    pub(crate) fn parse(element: &Element) -> Result<InProgressResult<'static>, XmlError> {
        let mut result = InProgressResult {
            name: Cow::Owned(element.required_text("name")?.to_owned()),
            report_deadline: 0.0,
            time_remaining: 0.0,
            avg_ncpus: 1.0,
            gpu: None,
        };
        for child in &element.children {
            match child.name.as_str() {
                "report_deadline" => result.report_deadline = child.f64()?,
                "time_remaining" => result.time_remaining = child.non_negative_f64()?,
                "avg_ncpus" => result.avg_ncpus = child.non_negative_f64()?,
                name => {
                    let gpu = ResourceType::GPUS
                        .into_iter()
                        .find(|&r| Self::gpu_element(r) == Some(name));
                    if let Some(resource) = gpu {
                        let count = child.non_negative_f64()?;
                        if count > 0.0 {
                            result.gpu = Some((resource, count));
                        }
                    }
                }
            }
        }
        Ok(result)
    }

    pub(crate) fn write(&self, writer: &mut XmlWriter) {
        writer.open("ip_result");
        writer.text("name", &self.name);
        writer.number("report_deadline", self.report_deadline);
        writer.number("time_remaining", self.time_remaining);
        writer.number("avg_ncpus", self.avg_ncpus);
        if let Some((resource, count)) = self.gpu
            && let Some(name) = Self::gpu_element(resource)
        {
            writer.number(name, count);
        }
        writer.close("ip_result");
    }
}

/// A sticky file the client keeps for the project (`<file_info>` of a request).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StickyFile {
    /// File name (`<name>`).
    pub name: String,
    /// Size, bytes (`<nbytes>`).
    pub nbytes: f64,
    /// BOINC's file status (`<status>`: 1 present).
    pub status: i64,
}

impl StickyFile {
    pub(crate) fn parse(element: &Element) -> Result<StickyFile, XmlError> {
        let mut file =
            StickyFile { name: element.required_text("name")?.to_owned(), ..Self::default() };
        for child in &element.children {
            match child.name.as_str() {
                "nbytes" => file.nbytes = child.non_negative_f64()?,
                "status" => file.status = child.i64()?,
                _ => {}
            }
        }
        Ok(file)
    }

    pub(crate) fn write(&self, writer: &mut XmlWriter) {
        writer.open("file_info");
        writer.text("name", &self.name);
        writer.number("nbytes", self.nbytes);
        writer.integer("status", self.status);
        writer.close("file_info");
    }
}
