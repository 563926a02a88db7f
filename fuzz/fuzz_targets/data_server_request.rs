#![no_main]
//! A data server request, the start of an upload's POST body as the project server reads
//! it (DataServerRequest::parse, on raw bytes), and its round trip through
//! DataServerRequest::to_text (the client's upload header).

use boinc_core::protocol::DataServerRequest;
use boinc_fuzz::{assert_round_trip, text, written_unchanged};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((mut request, data_start)) = DataServerRequest::parse(data) {
        assert!(data_start <= data.len(), "the data starts past the body's end");
        // Sizes are whole bytes, written as BOINC writes them (`%.0f`).
        if let DataServerRequest::Upload { upload, .. } = &mut request {
            let whole = |value: f64| format!("{value:.0}").parse().unwrap_or(value);
            upload.nbytes = whole(upload.nbytes);
            upload.max_nbytes = whole(upload.max_nbytes);
        }
        let parse = |text: &str| DataServerRequest::parse(text.as_bytes()).map(|(again, _)| again);
        let exact = written_unchanged(&text(data));
        assert_round_trip(exact, &request, DataServerRequest::to_text, parse);
    }
});
