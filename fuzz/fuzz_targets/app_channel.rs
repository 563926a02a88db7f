#![no_main]
//! The app API's shared-memory file as an app leaves it: each channel's bytes
//! (message_text) and the messages the client reads from them (Heartbeat,
//! ProcessControl, AppStatusMessage), with the round trips through encode_message and
//! each message's to_message.

use boinc_core::protocol::app_api::{
    AppStatusMessage, Channel, Heartbeat, ProcessControl, encode_message, message_text,
};
use boinc_fuzz::assert_round_trip;
use libfuzzer_sys::fuzz_target;

fn check_message(text: &str) {
    // Numbers are written as BOINC's messages write them, to seven significant digits
    // (`%e`): a value read with more is written rounded, and must then settle.
    if let Ok(heartbeat) = Heartbeat::parse(text) {
        assert_round_trip(false, &heartbeat, Heartbeat::to_message, Heartbeat::parse);
    }
    if let Ok(status) = AppStatusMessage::parse(text) {
        assert_round_trip(false, &status, AppStatusMessage::to_message, AppStatusMessage::parse);
    }
    if let Ok(requests) = ProcessControl::parse(text) {
        let write = |requests: &Vec<ProcessControl>| -> String {
            requests.iter().map(|request| request.to_message()).collect()
        };
        assert_round_trip(true, &requests, write, ProcessControl::parse);
    }
}

fuzz_target!(|data: &[u8]| {
    // The input is the file (as long as the fuzzer makes it) and, cut at each channel's
    // place, every channel; a short input is also tried as one channel's bytes.
    let channels: Vec<&[u8]> = if data.len() < 1024 {
        vec![data]
    } else {
        Channel::ALL.iter().filter_map(|channel| channel.bytes(data)).collect()
    };
    for channel in channels {
        if let Ok(Some(text)) = message_text(channel) {
            if let Ok(body) = encode_message(text) {
                let mut written = vec![1u8];
                written.extend_from_slice(&body);
                assert_eq!(message_text(&written).ok().flatten(), Some(text));
            }
            check_message(text);
        }
    }
});
