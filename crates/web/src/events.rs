//! Live updates (docs/dashboard.md "Live updates"): a server-sent event stream per open
//! page. An `update` event goes out soon after the client reports something (a task
//! started or ended, an RPC, a transfer; bursts coalesced) and every few seconds anyway,
//! since progress and elapsed times move without events; the page then reads again what
//! it shows. At most [`MAX_STREAMS`] streams are open at once; a stream ends when the
//! client stops.

use actix_web::web::Bytes;
use boinc_runtime::client::ClientHandle;
use boinc_runtime::runtime::events::ClientEvent;
use futures_util::Stream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::mpsc::Receiver;

/// The most event streams open at once.
pub(crate) const MAX_STREAMS: usize = 16;
/// An update at least this often.
const HEARTBEAT: Duration = Duration::from_secs(2);
/// Events within this long after one go out as one update.
const COALESCE: Duration = Duration::from_millis(200);
/// The most events drained into one update (the channel is bounded anyway).
const MAX_DRAINED: usize = 1024;

/// Counts the open streams; a stream's slot is given back when it is dropped.
#[derive(Default)]
pub(crate) struct StreamSlots(Arc<AtomicUsize>);

/// One open stream's slot.
pub(crate) struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl StreamSlots {
    /// A slot, unless [`MAX_STREAMS`] are taken.
    pub(crate) fn take(&self) -> Option<Slot> {
        let taken = self.0.fetch_add(1, Ordering::AcqRel);
        let slot = Slot(self.0.clone());
        (taken < MAX_STREAMS).then_some(slot)
    }
}

struct Stream_ {
    events: Receiver<ClientEvent>,
    sent: u64,
    _slot: Slot,
}

fn update(sequence: u64) -> Result<Bytes, std::convert::Infallible> {
    Ok(Bytes::from(format!("event: update\ndata: {sequence}\n\n")))
}

/// The event stream of one page.
pub(crate) fn updates(
    client: &ClientHandle,
    slot: Slot,
) -> impl Stream<Item = Result<Bytes, std::convert::Infallible>> + use<> {
    let start = Stream_ { events: client.events(), sent: 0, _slot: slot };
    futures_util::stream::unfold(start, |mut stream| async move {
        if stream.sent > 0 {
            tokio::select! {
                event = stream.events.recv() => {
                    event?;
                    tokio::time::sleep(COALESCE).await;
                    for _ in 0..MAX_DRAINED {
                        if stream.events.try_recv().is_err() {
                            break;
                        }
                    }
                }
                () = tokio::time::sleep(HEARTBEAT) => {}
            }
        }
        stream.sent += 1;
        let sequence = stream.sent;
        Some((update(sequence), stream))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_past_the_limit_are_refused_until_one_closes() {
        let slots = StreamSlots::default();
        let taken: Vec<Slot> = (0..MAX_STREAMS).map(|_| slots.take().expect("a slot")).collect();
        assert!(slots.take().is_none());
        drop(taken);
        assert!(slots.take().is_some());
    }
}
