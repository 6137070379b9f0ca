//! The queue: its bound, expiry, removal, timeouts, flags and batches.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tidepool_core::kernels::KernelError;
use tidepool_core::{CancelFlag, Pool, PoolConfig, Task, TaskError};

use crate::common::config;
use crate::helpers::*;

#[test]
fn a_full_queue_refuses_and_drop_oldest_makes_room() {
    let signal = Signal::default();
    let pool = Pool::new(PoolConfig { max_queue: 2, ..config(1, 1) }, signal.waker()).unwrap();
    let hold = Arc::new(CancelFlag::new());
    pool.submit(held(0, &hold)).unwrap();
    wait_until_busy(&pool);
    assert_eq!(pool.submit(task(1, "crc32", vec![1])).unwrap(), 1);
    assert_eq!(pool.submit(task(2, "crc32", vec![2])).unwrap(), 2);
    assert_eq!(pool.queued(), 2);
    match pool.submit(task(3, "crc32", vec![3])) {
        Err(refused @ tidepool_core::Refused::Full(_)) => {
            assert_eq!(refused.to_string(), "the queue is full");
            assert_eq!(refused.into_task().slot, 3, "the task is handed back");
        }
        other => panic!("expected Full, got {other:?}"),
    }
    assert_eq!(pool.drop_oldest(), Some(1));
    assert_eq!(pool.submit(task(3, "crc32", vec![3])).unwrap(), 2);
    release(&hold);
    let mut slots: Vec<u32> = collect(&pool, &signal, 3).into_iter().map(|c| c.slot).collect();
    slots.sort();
    assert_eq!(slots, vec![0, 2, 3]);
}

#[test]
fn tasks_older_than_max_queue_age_expire_unrun() {
    let signal = Signal::default();
    let cfg = PoolConfig { max_queue_age: Some(Duration::from_millis(20)), ..config(1, 1) };
    let pool = Pool::new(cfg, signal.waker()).unwrap();
    let hold = Arc::new(CancelFlag::new());
    pool.submit(held(0, &hold)).unwrap();
    wait_until_busy(&pool);
    // A minute's spin: were it run, it would not complete within collect()'s 10 s.
    pool.submit(task(1, "spin", micros(60_000_000))).unwrap();
    wait_for("the queued task to wait past max_queue_age", || {
        pool.stats(false).oldest_queued > Duration::from_millis(20)
    });
    release(&hold);
    let mut done = collect(&pool, &signal, 2);
    done.sort_by_key(|c| c.slot);
    assert_eq!(done[0].outcome, Err(TaskError::Kernel(KernelError::Cancelled)), "the hold");
    assert_eq!(done[1].outcome, Err(TaskError::Expired));
}

#[test]
fn a_queued_task_can_be_removed_and_a_running_one_cancelled_alone() {
    use std::sync::atomic::Ordering;
    let signal = Signal::default();
    let pool = Pool::new(config(1, 1), signal.waker()).unwrap();
    let flag = Arc::new(CancelFlag::new());
    // A minute's sleep: it settles within collect()'s 10 s only if its
    // flag stopped it.
    pool.submit(held(0, &flag)).unwrap();
    wait_until_busy(&pool);
    pool.submit(task(1, "crc32", vec![1])).unwrap();
    pool.submit(task(2, "crc32", vec![2])).unwrap();
    assert!(pool.remove_queued(1));
    assert!(!pool.remove_queued(1), "already removed");
    assert!(!pool.remove_queued(0), "running tasks are not in the queue");
    flag.store(true, Ordering::Relaxed);
    let mut done = collect(&pool, &signal, 2);
    done.sort_by_key(|c| c.slot);
    assert_eq!(done[0].outcome, Err(TaskError::Kernel(KernelError::Cancelled)));
    assert!(done[1].outcome.is_ok(), "the next task ran normally on the same thread");
    assert_eq!(pool.stats(false).threads, 1);
}

#[test]
fn a_task_running_past_its_timeout_is_stopped() {
    let signal = Signal::default();
    let pool = Pool::new(config(1, 1), signal.waker()).unwrap();
    // A minute's spin: it settles within collect()'s 10 s only if its
    // timeout stopped it, and not before the timeout.
    let mut slow = task(0, "spin", micros(60_000_000));
    slow.timeout = Some(Duration::from_millis(30));
    let t = Instant::now();
    pool.submit(slow).unwrap();
    let done = collect(&pool, &signal, 1);
    assert_eq!(done[0].outcome, Err(TaskError::Kernel(KernelError::TimedOut)));
    assert!(t.elapsed() >= Duration::from_millis(30), "stopped early: {:?}", t.elapsed());
}

#[test]
fn submit_many_queues_what_fits_in_order_and_hands_back_the_rest() {
    let signal = Signal::default();
    let pool = Pool::new(PoolConfig { max_queue: 3, ..config(1, 1) }, signal.waker()).unwrap();
    let hold = Arc::new(CancelFlag::new());
    pool.submit(held(0, &hold)).unwrap();
    wait_until_busy(&pool);
    let mut batch: Vec<Task> = (1..=5).map(|slot| task(slot, "crc32", vec![slot as u8])).collect();
    assert_eq!(pool.submit_many(&mut batch), Some(3), "the queue length after");
    let left: Vec<u32> = batch.iter().map(|t| t.slot).collect();
    assert_eq!(left, vec![4, 5], "the tasks that did not fit stay, in order");
    assert_eq!(pool.submit_many(&mut batch), Some(3), "a full queue takes nothing");
    assert_eq!(batch.len(), 2);
    release(&hold);
    let done = collect(&pool, &signal, 4);
    let slots: Vec<u32> = done.iter().map(|c| c.slot).collect();
    assert_eq!(slots, vec![0, 1, 2, 3], "one thread runs them in the order queued");
    pool.close();
    assert_eq!(pool.submit_many(&mut batch), None, "a closed pool queues nothing");
    assert_eq!(batch.len(), 2, "and hands every task back");
}

#[test]
fn tasks_sharing_a_flag_leave_the_queue_together_and_stop_while_running() {
    use std::sync::atomic::Ordering;
    let signal = Signal::default();
    let pool = Pool::new(config(1, 1), signal.waker()).unwrap();
    let flag = Arc::new(CancelFlag::new());
    let mut batch: Vec<Task> = (0..4).map(|slot| held(slot, &flag)).collect();
    batch.insert(2, task(9, "crc32", vec![9]));
    pool.submit_many(&mut batch).unwrap();
    wait_until_busy(&pool);
    let mut removed = pool.remove_queued_with(&flag);
    removed.sort();
    assert_eq!(
        removed,
        vec![1, 2, 3],
        "the flag's queued tasks, not the one running nor the other"
    );
    assert!(pool.remove_queued_with(&flag).is_empty());
    // The running one sleeps a minute: it settles within collect()'s 10 s
    // only if the flag stopped it.
    flag.store(true, Ordering::Relaxed);
    let mut done = collect(&pool, &signal, 2);
    done.sort_by_key(|c| c.slot);
    assert_eq!(done[0].slot, 0);
    assert_eq!(done[0].outcome, Err(TaskError::Kernel(KernelError::Cancelled)));
    assert_eq!(done[1].slot, 9);
    assert!(done[1].outcome.is_ok());
}

#[test]
fn the_tasks_of_many_flags_leave_the_queue_in_one_call() {
    let signal = Signal::default();
    let pool = Pool::new(config(1, 1), signal.waker()).unwrap();
    let blocker = Arc::new(CancelFlag::new());
    pool.submit(held(1000, &blocker)).unwrap();
    wait_until_busy(&pool);
    // 20 batches of 3 queued tasks (slot = batch * 10 + i), and one task of no batch.
    let flags: Vec<Arc<CancelFlag>> = (0..20).map(|_| Arc::new(CancelFlag::new())).collect();
    for (b, flag) in flags.iter().enumerate() {
        let mut batch: Vec<Task> = (0..3)
            .map(|i| {
                let mut t = task(b as u32 * 10 + i, "crc32", vec![1]);
                t.cancel = Some(flag.clone());
                t
            })
            .collect();
        pool.submit_many(&mut batch).unwrap();
    }
    pool.submit(task(999, "crc32", vec![2])).unwrap();
    // Many flags (looked up in a set), then a few (compared in turn).
    let removed = pool.remove_queued_with_any(&flags[..12]);
    assert_eq!(
        removed,
        (0..12).flat_map(|b| (0..3).map(move |i| b * 10 + i)).collect::<Vec<u32>>()
    );
    let removed = pool.remove_queued_with_any(&flags[15..17]);
    assert_eq!(removed, vec![150, 151, 152, 160, 161, 162]);
    assert!(pool.remove_queued_with_any(&flags[..12]).is_empty());
    assert_eq!(pool.stats(false).queued, 3 * 6 + 1, "the other batches and the task of none stay");
    blocker.store(true, std::sync::atomic::Ordering::Relaxed);
    let done = collect(&pool, &signal, 3 * 6 + 2);
    assert_eq!(done.len(), 3 * 6 + 2);
}

#[test]
fn a_tasks_share_of_its_cancel_flag_comes_back_with_its_completion() {
    let signal = Signal::default();
    let pool = Pool::new(config(1, 1), signal.waker()).unwrap();
    let flag = Arc::new(CancelFlag::new());
    let mut t = task(7, "crc32", vec![1, 2, 3]);
    t.cancel = Some(flag.clone());
    pool.submit(t).unwrap();
    pool.submit(task(8, "crc32", vec![4])).unwrap();
    let mut done = collect(&pool, &signal, 2);
    done.sort_by_key(|c| c.slot);
    // The worker let go of the task, not of the share: the thread that
    // takes the completion does, so that the flag's count stays with it.
    let share = done[0].cancel.as_ref().expect("the flagged task's share");
    assert!(Arc::ptr_eq(share, &flag));
    assert_eq!(Arc::strong_count(&flag), 2);
    assert!(done[1].cancel.is_none());
    drop(done);
    assert_eq!(Arc::strong_count(&flag), 1);
    // The flag sits on a cache line apart from the Arc's counts.
    assert_eq!(std::mem::align_of::<CancelFlag>(), 64);
    assert_eq!(Arc::as_ptr(&flag) as usize % 64, 0);
}
