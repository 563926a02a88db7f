//! `<app>` and `<app_version>` as scheduler replies send them and requests list them
//! (seed 000 notes 1–2: what a version's jobs occupy and how fast it runs; docs/design.md
//! "App API": the files it runs and the BOINC API version it was built with).
//!
//! A request lists the client's versions at every RPC, so a version description may
//! borrow its text from the state it describes ([`Cow`]); one read from text, as in a
//! reply, owns it.

use super::error::XmlError;
use super::file_ref::FileReference;
use super::xml_tree::Element;
use super::xml_write::XmlWriter;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// An `<app>` of a reply.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AppDescription {
    /// Short name (`<name>`).
    pub name: String,
    /// The name shown to users (`<user_friendly_name>`).
    pub user_friendly_name: String,
    /// Its jobs barely use the CPU (`<non_cpu_intensive>`).
    pub non_cpu_intensive: bool,
}

impl AppDescription {
    /// Reads an `<app>`; it must have a name.
    pub(crate) fn parse(element: &Element) -> Result<AppDescription, XmlError> {
        let mut app =
            AppDescription { name: element.required_text("name")?.to_owned(), ..Self::default() };
        for child in &element.children {
            match child.name.as_str() {
                "user_friendly_name" => app.user_friendly_name = child.string(),
                "non_cpu_intensive" => app.non_cpu_intensive = child.flag()?,
                _ => {}
            }
        }
        Ok(app)
    }

    /// Writes the `<app>`.
    pub(crate) fn write(&self, writer: &mut XmlWriter) {
        writer.open("app");
        writer.text("name", &self.name);
        writer.text("user_friendly_name", &self.user_friendly_name);
        writer.flag("non_cpu_intensive", self.non_cpu_intensive);
        writer.close("app");
    }
}

/// The coprocessor an app version uses (`<coproc><type/><count/></coproc>`), with the
/// type as written: a type this client has no resource for is kept, not dropped, so the
/// version can be recognised and refused.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CoprocessorUsage<'a> {
    /// BOINC's type name (`NVIDIA`, `CUDA`, `ATI`, `intel_gpu`, …).
    pub kind: Cow<'a, str>,
    /// Instances each job uses (0.5: half a GPU).
    pub count: f64,
}

/// An `<app_version>`: in a reply, a version the client may run (with its files); in a
/// request, a version the client has.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AppVersionDescription<'a> {
    /// The app (`<app_name>`).
    pub app_name: Cow<'a, str>,
    /// Version number (`<version_num>`).
    pub version_num: u32,
    /// Platform (`<platform>`; empty: the client's primary platform).
    pub platform: Cow<'a, str>,
    /// Plan class (`<plan_class>`; empty: plain CPU).
    pub plan_class: Cow<'a, str>,
    /// BOINC API version it was built with (`<api_version>`).
    pub api_version: Cow<'a, str>,
    /// CPUs each job uses on average (`<avg_ncpus>`; absent: one).
    pub avg_ncpus: Option<f64>,
    /// CPUs each job uses at most (`<max_ncpus>`).
    pub max_ncpus: Option<f64>,
    /// Estimated speed of a job on this host, flops (`<flops>`).
    pub flops: Option<f64>,
    /// Arguments added before the workunit's (`<cmdline>`).
    pub cmdline: Cow<'a, str>,
    /// The coprocessor it uses (`<coproc>`), if any.
    pub coprocessor: Option<CoprocessorUsage<'a>>,
    /// Its files (`<file_ref>`), the executable marked `main_program`.
    pub file_refs: Vec<FileReference>,
    /// Its own duration correction factor (`<duration_correction_factor>`): written in
    /// the client's state file once learned, absent in scheduler messages.
    #[serde(default)]
    pub duration_correction_factor: Option<f64>,
}

impl<'a> AppVersionDescription<'a> {
    /// The description of the client's app version `version` of the app named
    /// `app_name`, reported for `platform`; without file references or the client's own
    /// duration correction, which only the state file carries.
    pub fn of_version(
        app_name: &'a str,
        version: &'a crate::model::AppVersion,
        platform: &'a str,
    ) -> Self {
        AppVersionDescription {
            app_name: Cow::Borrowed(app_name),
            version_num: version.version_num,
            platform: Cow::Borrowed(platform),
            plan_class: Cow::Borrowed(&version.plan_class),
            api_version: Cow::Borrowed(&version.api_version),
            avg_ncpus: Some(version.usage.avg_ncpus),
            max_ncpus: None,
            flops: Some(version.flops),
            cmdline: Cow::Borrowed(&version.cmdline),
            coprocessor: version.usage.coprocessor.map(|(resource, count)| CoprocessorUsage {
                kind: Cow::Borrowed(resource.boinc_name()),
                count,
            }),
            file_refs: Vec::new(),
            duration_correction_factor: None,
        }
    }
}

impl AppVersionDescription<'_> {
    /// The same, owning its text.
    pub fn into_owned(self) -> AppVersionDescription<'static> {
        AppVersionDescription {
            app_name: Cow::Owned(self.app_name.into_owned()),
            platform: Cow::Owned(self.platform.into_owned()),
            plan_class: Cow::Owned(self.plan_class.into_owned()),
            api_version: Cow::Owned(self.api_version.into_owned()),
            cmdline: Cow::Owned(self.cmdline.into_owned()),
            coprocessor: self.coprocessor.map(|usage| CoprocessorUsage {
                kind: Cow::Owned(usage.kind.into_owned()),
                count: usage.count,
            }),
            ..self
        }
    }

    /// Reads an `<app_version>`; it must name its app.
    pub(crate) fn parse(element: &Element) -> Result<AppVersionDescription<'static>, XmlError> {
        let mut version = AppVersionDescription {
            app_name: Cow::Owned(element.required_text("app_name")?.to_owned()),
            ..AppVersionDescription::default()
        };
        for child in &element.children {
            match child.name.as_str() {
                "version_num" => version.version_num = child.u32()?,
                "platform" => version.platform = Cow::Owned(child.string()),
                "plan_class" => version.plan_class = Cow::Owned(child.string()),
                "api_version" => version.api_version = Cow::Owned(child.string()),
                "avg_ncpus" => version.avg_ncpus = Some(child.non_negative_f64()?),
                "max_ncpus" => version.max_ncpus = Some(child.non_negative_f64()?),
                "flops" => version.flops = Some(child.non_negative_f64()?),
                "cmdline" => version.cmdline = Cow::Owned(child.string()),
                "coproc" => {
                    version.coprocessor = Some(CoprocessorUsage {
                        kind: Cow::Owned(child.required_text("type")?.to_owned()),
                        count: match child.child("count") {
                            Some(count) => count.non_negative_f64()?,
                            None => 1.0,
                        },
                    })
                }
                "file_ref" => version.file_refs.push(FileReference::parse(child)?),
                "duration_correction_factor" => {
                    version.duration_correction_factor =
                        Some(child.f64_in(f64::MIN_POSITIVE, f64::MAX, "greater than 0")?)
                }
                _ => {}
            }
        }
        Ok(version)
    }

    /// Writes the `<app_version>`; its file references only when `with_files` (a
    /// request lists versions without them, as the real client does).
    pub(crate) fn write(&self, writer: &mut XmlWriter, with_files: bool) {
        writer.open("app_version");
        writer.text("app_name", &self.app_name);
        writer.integer("version_num", self.version_num);
        writer.text_if_any("platform", &self.platform);
        writer.text_if_any("plan_class", &self.plan_class);
        writer.text_if_any("api_version", &self.api_version);
        writer.number_if_any("avg_ncpus", self.avg_ncpus);
        writer.number_if_any("max_ncpus", self.max_ncpus);
        writer.number_if_any("flops", self.flops);
        writer.text_if_any("cmdline", &self.cmdline);
        writer.number_if_any("duration_correction_factor", self.duration_correction_factor);
        if let Some(coprocessor) = &self.coprocessor {
            writer.open("coproc");
            writer.text("type", &coprocessor.kind);
            writer.number("count", coprocessor.count);
            writer.close("coproc");
        }
        if with_files {
            for reference in &self.file_refs {
                reference.write(writer);
            }
        }
        writer.close("app_version");
    }
}
