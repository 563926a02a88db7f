//! Answers that misbehave on purpose ([`super::super::faults`]): the transport faults,
//! applied to the answer a request would otherwise get.

use super::super::faults::{Fault, FaultTarget, HANG_DEFAULT_SECONDS, HUGE_DEFAULT_BYTES};
use super::super::server::ServerState;
use super::ConnectionSocket;
use actix_web::body::SizedStream;
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse};
use futures_util::stream;
use std::time::Duration;

/// Chunk size of generated and trickled bodies.
const CHUNK: usize = 64 * 1024;

/// The transport fault for a request to `target`, if a rule says so.
pub(crate) fn take_transport_fault(
    state: &ServerState,
    target: FaultTarget,
    file: Option<&str>,
) -> Option<Fault> {
    state.faults.take(target, file, |f| !f.is_reply_content())
}

fn stream_error(what: &'static str) -> std::io::Error {
    std::io::Error::other(what)
}

/// The answer `body` would have been, spoiled by `fault`.
pub(crate) async fn fault_response(
    fault: Fault,
    request: &HttpRequest,
    body: Bytes,
) -> HttpResponse {
    match fault {
        Fault::Http500 => HttpResponse::InternalServerError()
            .content_type("text/plain")
            .body("internal server error (a fault injected on purpose)\n"),
        Fault::NotXml => HttpResponse::Ok()
            .content_type("text/plain")
            .body("this is not XML at all {{{ <<< }}} (a fault injected on purpose)\n"),
        Fault::Hang { seconds } => {
            let seconds = seconds.unwrap_or(HANG_DEFAULT_SECONDS).clamp(0.0, 86_400.0);
            actix_web::rt::time::sleep(Duration::from_secs_f64(seconds)).await;
            HttpResponse::ServiceUnavailable().body("held on purpose\n")
        }
        Fault::Reset => reset(request),
        Fault::Truncated => {
            let full = body.len() as u64;
            let half = body.slice(..body.len() / 2);
            let chunks = stream::iter([Ok(half), Err(stream_error("truncated on purpose"))]);
            HttpResponse::Ok().body(SizedStream::new(full, chunks))
        }
        Fault::Huge { bytes } => huge(bytes.unwrap_or(HUGE_DEFAULT_BYTES)),
        Fault::Slow { bytes_per_second } => trickle(body, bytes_per_second.max(1)),
        Fault::WrongMd5 => {
            let mut changed = body.to_vec();
            if let Some(first) = changed.first_mut() {
                *first ^= 0xff;
            } else {
                changed.push(b'x');
            }
            HttpResponse::Ok().body(changed)
        }
        Fault::WrongSize => {
            let mut longer = body.to_vec();
            longer.extend(std::iter::repeat_n(b'x', 1024));
            HttpResponse::Ok().body(longer)
        }
        // Content faults are applied where the reply is made.
        Fault::BadSignature | Fault::MissingSignature => HttpResponse::Ok().body(body),
    }
}

/// Resets the connection: the socket is set to discard what is unsent and close with
/// an RST, then the answer fails at once, so the server drops the connection.
fn reset(request: &HttpRequest) -> HttpResponse {
    if let Some(ConnectionSocket(fd)) = request.conn_data::<ConnectionSocket>().copied() {
        // SAFETY: the connection (and so its socket) lives until this request's answer
        // has been handled; the descriptor is only borrowed for one system call.
        let socket = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let linger = nix::libc::linger { l_onoff: 1, l_linger: 0 };
        if let Err(error) =
            nix::sys::socket::setsockopt(&socket, nix::sys::socket::sockopt::Linger, &linger)
        {
            tracing::warn!(%error, "cannot make the connection reset; it is closed instead");
        }
    }
    let failing = stream::iter([Err::<Bytes, _>(stream_error("reset on purpose"))]);
    HttpResponse::Ok().streaming(failing)
}

/// A scheduler-reply-like answer of `bytes` bytes, made as it is sent.
fn huge(bytes: u64) -> HttpResponse {
    const HEAD: &[u8] = b"<scheduler_reply>\n<message priority=\"low\">";
    const TAIL: &[u8] = b"</message>\n</scheduler_reply>\n";
    let padding = bytes.saturating_sub((HEAD.len() + TAIL.len()) as u64);
    let filler = Bytes::from(vec![b'x'; CHUNK]);
    let mut left = padding;
    let middle = std::iter::from_fn(move || {
        if left == 0 {
            return None;
        }
        let n = left.min(CHUNK as u64) as usize;
        left -= n as u64;
        Some(filler.slice(..n))
    });
    let chunks = std::iter::once(Bytes::from_static(HEAD))
        .chain(middle)
        .chain(std::iter::once(Bytes::from_static(TAIL)))
        .map(Ok::<_, std::io::Error>);
    let total = padding + (HEAD.len() + TAIL.len()) as u64;
    HttpResponse::Ok().content_type("text/xml").body(SizedStream::new(total, stream::iter(chunks)))
}

/// `body`, sent at `bytes_per_second`, a tenth of a second's worth at a time.
fn trickle(body: Bytes, bytes_per_second: u64) -> HttpResponse {
    let step = ((bytes_per_second / 10).max(1) as usize).min(CHUNK);
    let total = body.len() as u64;
    let chunks = stream::unfold(0usize, move |at| {
        let body = body.clone();
        async move {
            if at >= body.len() {
                return None;
            }
            actix_web::rt::time::sleep(Duration::from_millis(100)).await;
            let end = (at + step).min(body.len());
            Some((Ok::<_, std::io::Error>(body.slice(at..end)), end))
        }
    });
    HttpResponse::Ok().body(SizedStream::new(total, Box::pin(chunks)))
}
