//! BOINC's daily transfer history: `daily_xfer_history.xml` beside the state and GUI RPC
//! `get_daily_xfer_history`, both `<daily_xfers>` with one `<dx>` a day (`<when>`, the
//! day since 1970; `<up>` and `<down>`, bytes).

use super::error::{XmlError, XmlProblem};
use super::list_counts::ListCounts;
use super::xml_out::XmlOut;
use super::xml_tree::parse_document;
use crate::model::{DAILY_TRANSFER_DAYS, DailyTransfer};

/// The most days read from one file.
const MAX_TRANSFER_DAYS: usize = DAILY_TRANSFER_DAYS as usize + 1;

/// The history file's name in the data directory.
pub const DAILY_TRANSFER_FILE: &str = "daily_xfer_history.xml";

/// Writes `<daily_xfers>`.
pub(crate) fn write_daily_transfers(out: &mut XmlOut, history: &[DailyTransfer]) {
    out.start("daily_xfers");
    for day in history {
        out.start("dx");
        out.int("when", day.day);
        out.real("up", day.up);
        out.real("down", day.down);
        out.end("dx");
    }
    out.end("daily_xfers");
}

/// The text of `daily_xfer_history.xml`.
pub fn write_daily_transfer_file(history: &[DailyTransfer]) -> String {
    let mut out = XmlOut::new();
    write_daily_transfers(&mut out, history);
    String::from_utf8_lossy(&out.finish()).into_owned()
}

/// Reads `daily_xfer_history.xml` (or a `get_daily_xfer_history` reply's list), oldest
/// day first.
pub fn read_daily_transfer_file(text: &str) -> Result<Vec<DailyTransfer>, XmlError> {
    let root = parse_document(text)?;
    if root.name != "daily_xfers" {
        return Err(root.error(XmlProblem::WrongRoot { expected: "daily_xfers" }));
    }
    let mut counted = ListCounts::default();
    let mut days = Vec::new();
    for dx in root.children.iter().filter(|c| c.name == "dx") {
        counted.check(dx, "dx", MAX_TRANSFER_DAYS)?;
        let mut day = DailyTransfer::default();
        for child in &dx.children {
            match child.name.as_str() {
                "when" => day.day = child.i64()?,
                "up" => day.up = child.non_negative_f64()?,
                "down" => day.down = child.non_negative_f64()?,
                _ => {}
            }
        }
        days.push(day);
    }
    days.sort_by_key(|d| d.day);
    Ok(days)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_history_reads_back_and_hostile_files_are_refused() {
        let history = [
            DailyTransfer { day: 20_420, up: 1024.0, down: 1e9 },
            DailyTransfer { day: 20_421, up: 0.0, down: 512.0 },
        ];
        let text = write_daily_transfer_file(&history);
        assert!(text.contains("<dx>") && text.contains("<when>20420</when>"), "{text}");
        assert_eq!(read_daily_transfer_file(&text).expect("reads"), history);
        let many = format!("<daily_xfers>{}</daily_xfers>", "<dx><when>1</when></dx>".repeat(400));
        assert!(read_daily_transfer_file(&many).is_err(), "more days than a year");
        assert!(
            read_daily_transfer_file("<daily_xfers><dx><up>-1</up></dx></daily_xfers>").is_err()
        );
        assert!(read_daily_transfer_file("<other/>").is_err());
    }
}
