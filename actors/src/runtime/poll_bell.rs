//! The doorbell the scheduler polls a task actor through (docs/design.md "Actors": the
//! scheduler polls every running task at every step). A poll is the one message a task
//! actor gets at every step, dozens of them per step on a big host; through the
//! actor's mailbox each would cost an envelope and a queue node, allocated and freed.
//! The bell holds the one poll a task can have outstanding and wakes the actor, which
//! takes it as a stream item ([`actix::StreamHandler`]) and answers on the step's
//! [`PollBoard`](super::messages::PollBoard) as a mailbox poll does.
//!
//! An actor that goes down drops its end of the bell, and with it the poll it had not
//! answered: the step counts that poll as unanswered, and the actor as failed. The
//! scheduler dropping its end ends the actor's stream (the actor then stops once
//! nothing else holds it).

use super::messages::Poll;
use actix::prelude::Stream;
use std::cell::RefCell;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Waker};

#[derive(Debug, Default)]
struct Doorbell {
    /// The poll rung and not yet taken.
    pending: Option<Poll>,
    /// The actor's task, waiting for a poll.
    waker: Option<Waker>,
    /// The actor still listens (its end is alive).
    listening: bool,
    /// The scheduler still rings (its end is alive).
    ringing: bool,
}

/// The scheduler's end of a task actor's doorbell.
#[derive(Debug)]
pub struct PollBell(Rc<RefCell<Doorbell>>);

/// The task actor's end: a stream of the polls rung.
#[derive(Debug)]
pub struct PollRequests(Rc<RefCell<Doorbell>>);

impl PollBell {
    /// A bell and the stream of what it rings.
    pub fn pair() -> (PollBell, PollRequests) {
        let doorbell = Doorbell { listening: true, ringing: true, ..Doorbell::default() };
        let shared = Rc::new(RefCell::new(doorbell));
        (PollBell(Rc::clone(&shared)), PollRequests(shared))
    }

    /// Rings `poll` to the actor. Returns false when the actor is gone: the poll (and
    /// its answer) is dropped at once.
    pub fn ring(&self, poll: Poll) -> bool {
        let mut bell = self.0.borrow_mut();
        if !bell.listening {
            drop(bell);
            drop(poll);
            return false;
        }
        // A step waits for its polls before the next: nothing is pending here.
        let earlier = bell.pending.replace(poll);
        let waker = bell.waker.take();
        drop(bell);
        drop(earlier);
        if let Some(waker) = waker {
            waker.wake();
        }
        true
    }
}

impl Drop for PollBell {
    fn drop(&mut self) {
        let mut bell = self.0.borrow_mut();
        bell.ringing = false;
        let pending = bell.pending.take();
        let waker = bell.waker.take();
        drop(bell);
        drop(pending);
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl Stream for PollRequests {
    type Item = Poll;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> std::task::Poll<Option<Poll>> {
        let mut bell = self.0.borrow_mut();
        if let Some(poll) = bell.pending.take() {
            return std::task::Poll::Ready(Some(poll));
        }
        if !bell.ringing {
            return std::task::Poll::Ready(None);
        }
        match &bell.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            _ => bell.waker = Some(cx.waker().clone()),
        }
        std::task::Poll::Pending
    }
}

impl Drop for PollRequests {
    fn drop(&mut self) {
        let mut bell = self.0.borrow_mut();
        bell.listening = false;
        bell.waker = None;
        let pending = bell.pending.take();
        drop(bell);
        // Unanswered: the step hears of it through the poll's answer, dropped here.
        drop(pending);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::messages::{PollBoard, TaskReport};
    use std::future::Future;
    use std::task::Poll as TaskPoll;

    fn next(requests: &mut PollRequests) -> TaskPoll<Option<Poll>> {
        let mut cx = Context::from_waker(Waker::noop());
        Pin::new(requests).poll_next(&mut cx)
    }

    fn all_in(board: &std::sync::Arc<PollBoard>) -> bool {
        let mut cx = Context::from_waker(Waker::noop());
        Pin::new(&mut board.all_in()).poll(&mut cx).is_ready()
    }

    #[test]
    fn a_rung_poll_is_taken_once_and_answered_on_the_board() {
        let (bell, mut requests) = PollBell::pair();
        let board = PollBoard::new();
        board.begin(Vec::new());
        assert!(next(&mut requests).is_pending());
        assert!(bell.ring(Poll { now: 5.0, answer: Some(board.answer()) }));
        board.sent();
        assert!(!all_in(&board), "the poll is still out");
        let TaskPoll::Ready(Some(poll)) = next(&mut requests) else { panic!("no poll") };
        assert_eq!(poll.now, 5.0);
        assert!(next(&mut requests).is_pending(), "a poll is taken once");
        if let Some(answer) = poll.answer {
            answer.send(TaskReport::Idle);
        }
        assert!(all_in(&board));
        assert_eq!(board.take(), vec![Some(TaskReport::Idle)]);
    }

    #[test]
    fn an_actor_gone_counts_its_poll_unanswered() {
        let (bell, requests) = PollBell::pair();
        let board = PollBoard::new();
        board.begin(Vec::new());
        assert!(bell.ring(Poll { now: 1.0, answer: Some(board.answer()) }));
        board.sent();
        drop(requests);
        assert!(all_in(&board), "the dropped poll counts as done");
        assert_eq!(board.take(), vec![None]);
        // Rung after the actor went: dropped at once.
        board.begin(Vec::new());
        assert!(!bell.ring(Poll { now: 2.0, answer: Some(board.answer()) }));
        board.sent();
        assert!(all_in(&board));
        assert_eq!(board.take(), vec![None]);
    }

    #[test]
    fn the_stream_ends_when_the_scheduler_lets_go() {
        let (bell, mut requests) = PollBell::pair();
        assert!(next(&mut requests).is_pending());
        drop(bell);
        assert!(matches!(next(&mut requests), TaskPoll::Ready(None)));
    }

    #[test]
    fn a_board_serves_round_after_round_and_ignores_stale_answers() {
        let board = PollBoard::new();
        board.begin(Vec::with_capacity(4));
        let first = board.answer();
        board.sent();
        first.send(TaskReport::Idle);
        assert!(all_in(&board));
        let reports = board.take();
        assert_eq!(reports, vec![Some(TaskReport::Idle)]);
        board.begin(reports);
        let second = board.answer();
        let kept = second.clone();
        board.sent();
        second.send(TaskReport::Idle);
        assert!(!all_in(&board), "the clone is still out");
        drop(kept);
        assert!(all_in(&board));
        assert_eq!(board.take(), vec![Some(TaskReport::Idle)]);
    }
}
