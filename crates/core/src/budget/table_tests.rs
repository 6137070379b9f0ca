//! The shared table's shares, generations and reclaiming (table.rs).

use super::*;
use std::cell::RefCell;

/// A zeroed table on the heap, as a fresh shared mapping is.
fn table() -> Box<Table> {
    // SAFETY: every field of Table is an atomic integer (or an array of
    // them), for which all-zero bytes are a valid value.
    unsafe { Box::<Table>::new_zeroed().assume_init() }
}

/// Liveness by hand: slots listed as dead are dead; the clock is set
/// by hand too.
#[derive(Default)]
struct Dead(RefCell<Vec<usize>>, std::cell::Cell<u64>);
impl Live for Dead {
    fn alive(&self, slot: usize) -> bool {
        !self.0.borrow().contains(&slot)
    }
    fn now_ms(&self) -> u64 {
        self.1.get()
    }
}

#[test]
fn fair_shares_give_the_modest_what_they_want_and_split_the_rest() {
    assert_eq!(fair_shares(8, &[2, 10, 10]), vec![2.0, 3.0, 3.0]);
    assert_eq!(fair_shares(2, &[2, 2, 2, 2]), vec![0.5; 4]);
    assert_eq!(fair_shares(4, &[1]), vec![1.0]);
    assert_eq!(fair_shares(4, &[0, 9]), vec![0.0, 4.0]);
    let shares = fair_shares(7, &[5, 1, 5]);
    assert_eq!(shares, vec![3.0, 1.0, 3.0]);
    assert!((shares.iter().sum::<f64>() - 7.0).abs() < 1e-9);
}

#[test]
fn a_table_of_another_layout_is_refused() {
    let t = table();
    assert_eq!(t.check(), Ok(()));
    assert_eq!(t.check(), Ok(()), "claimed twice is fine");
    t.header.0.magic.store(0x7470_6201, SeqCst);
    assert_eq!(t.check(), Err(Incompatible));
}

#[test]
fn a_lone_member_takes_every_share_and_no_more() {
    let t = table();
    let dead = Dead::default();
    let me = t.join(0);
    t.publish(me, 3, 0, 0);
    let got: Vec<_> = (0..3).map(|_| t.try_acquire(me, 2, &dead)).collect();
    assert_eq!(got, vec![Some(0), Some(1), None]);
    assert!(t.release(me, 0));
    assert_eq!(t.try_acquire(me, 2, &dead), Some(0));
}

#[test]
fn under_contention_a_member_at_its_fair_share_leaves_the_rest() {
    let t = table();
    let dead = Dead::default();
    let (a, b) = (t.join(0), t.join(1));
    // a holds 1 of 4 and wants 4; b wants 4 and holds 3 (more than 2).
    t.publish(a, 4, 1, 0);
    t.publish(b, 4, 3, 0);
    for i in 0..4 {
        let owner = if i == 0 { a } else { b };
        t.tokens[i].0.store(owner.owner(), SeqCst);
    }
    t.header.0.waiting.store(1, SeqCst);
    assert!(t.should_yield(b, 4, &dead), "b holds 3 of a fair 2 while a waits");
    assert!(!t.should_yield(a, 4, &dead), "a holds less than its share");
    assert!(t.release(b, 3));
    t.publish(b, 4, 2, 0);
    assert!(t.try_acquire(b, 4, &dead).is_none(), "b is at its share while a is short");
    assert_eq!(t.try_acquire(a, 4, &dead), Some(3));
    t.publish(a, 4, 2, 0);
    assert!(!t.should_yield(b, 4, &dead), "2 and 2: fair");
    t.header.0.waiting.store(0, SeqCst);
    t.publish(a, 0, 0, 0);
    assert!(!t.should_yield(b, 4, &dead), "nobody waits");
}

#[test]
fn fractions_of_a_share_are_taken_in_turns() {
    let t = table();
    let dead = Dead::default();
    let members: Vec<_> = (0..4).map(|s| t.join(s)).collect();
    for &m in &members {
        t.publish(m, 2, 0, 0);
    }
    // Two shares, four members wanting two each: each may hold one.
    let a = t.try_acquire(members[0], 2, &dead).unwrap();
    t.publish(members[0], 2, 1, 0);
    assert!(t.try_acquire(members[0], 2, &dead).is_none(), "a second while others wait");
    let b = t.try_acquire(members[1], 2, &dead).unwrap();
    t.publish(members[1], 2, 1, 0);
    t.header.0.waiting.store(2, SeqCst);
    assert!(t.should_yield(members[0], 2, &dead), "1 > 0.5 while c and d have none");
    t.release(members[0], a);
    t.publish(members[0], 2, 0, 0);
    assert_eq!(t.try_acquire(members[2], 2, &dead), Some(a));
    let _ = b;
}

#[test]
fn a_dead_members_shares_and_numbers_are_reclaimed() {
    let t = table();
    let dead = Dead::default();
    let (a, b) = (t.join(0), t.join(1));
    t.publish(b, 2, 0, 0);
    assert_eq!(t.try_acquire(b, 2, &dead), Some(0));
    assert_eq!(t.try_acquire(b, 2, &dead), Some(1));
    t.publish(b, 3, 2, 0);
    t.header.0.waiting.store(1, SeqCst);
    t.publish(a, 1, 0, 0);
    assert_eq!(t.try_acquire(a, 2, &dead), None, "all taken");
    assert_eq!(t.reclaim(a, &dead), 0, "b lives");
    dead.0.borrow_mut().push(1);
    let seq = t.header.0.seq.load(SeqCst);
    assert_eq!(t.reclaim(a, &dead), 2);
    assert!(t.header.0.seq.load(SeqCst) != seq, "waiters are told");
    assert_eq!(SlotState::unpack(t.slots[1].0.state.load(SeqCst)).held, 0);
    assert_eq!(t.header.0.waiting.load(SeqCst), 0, "b's waiting thread is not counted");
    assert_eq!(t.census(a, &dead), Census { processes: 1, held: 0 });
    assert_eq!(t.try_acquire(a, 2, &dead), Some(0));
    // b, taken for dead, gives back a share it no longer has.
    assert!(!t.release(b, 1));
}

#[test]
fn a_slot_joined_again_frees_what_its_last_member_held() {
    let t = table();
    let dead = Dead::default();
    let old = t.join(3);
    assert_eq!(t.try_acquire(old, 1, &dead), Some(0));
    let new = t.join(3);
    assert_ne!(new.generation, old.generation);
    assert_eq!(t.try_acquire(new, 1, &dead), None);
    assert_eq!(t.reclaim(new, &dead), 1, "the old generation's token");
    assert_eq!(t.try_acquire(new, 1, &dead), Some(0));
    // The old member writes nothing into the new one's slot.
    t.publish(old, 9, 9, 0);
    assert_eq!(t.census(new, &dead), Census { processes: 0, held: 0 });
}

/// A member alive but stopped (SIGSTOP) renews no lease: after LEASE_MS
/// its shares go to the others; resumed, it finds them gone, and its
/// give-back changes nothing.
#[test]
fn a_stopped_members_shares_come_back_after_its_lease() {
    let t = table();
    let clock = Dead::default();
    let (a, b) = (t.join(0), t.join(1));
    t.publish(a, 1, 0, 1);
    let token = t.try_acquire(a, 1, &clock).unwrap();
    t.publish(a, 1, 1, 1);
    t.publish(b, 1, 0, 1);
    assert_eq!(t.try_acquire(b, 1, &clock), None);
    clock.1.set(LEASE_MS);
    assert_eq!(t.reclaim(b, &clock), 0, "within its lease");
    t.renew(a, 600);
    clock.1.set(LEASE_MS + 500);
    assert_eq!(t.reclaim(b, &clock), 0, "renewed at 600");
    clock.1.set(LEASE_MS + 602);
    assert_eq!(t.reclaim(b, &clock), 1, "lapsed");
    assert!(!t.holds(a, token));
    assert_eq!(t.try_acquire(b, 1, &clock), Some(token));
    t.publish(b, 1, 1, LEASE_MS + 602);
    assert!(!t.release(a, token), "resumed, a gives back what it no longer has");
    assert!(t.holds(b, token));
    // Its own lease never lapses in its own eyes.
    assert_eq!(t.reclaim(a, &clock), 0);
}

/// A member killed with threads waiting, whose slot a new process joins
/// before any monitor reclaimed it: its waiters leave the machine's count
/// (they would be counted for ever, and wake everyone for nothing).
#[test]
fn a_slot_joined_again_takes_its_dead_members_waiters_off_the_count() {
    let t = table();
    let dead = Dead::default();
    let old = t.join(2);
    assert_eq!(t.try_acquire(old, 1, &dead), Some(0));
    t.header.0.waiting.fetch_add(3, SeqCst);
    t.publish(old, 4, 1, 0);
    let other = t.join(5);
    t.header.0.waiting.fetch_add(1, SeqCst);
    t.publish(other, 1, 0, 0);
    let new = t.join(2);
    assert_eq!(t.header.0.waiting.load(SeqCst), 1, "only the living member's waiter");
    // A monitor that then finds the slot alive takes nothing more off.
    assert_eq!(t.reclaim(new, &dead), 1, "the old generation's token");
    assert_eq!(t.header.0.waiting.load(SeqCst), 1);
}

#[test]
fn a_member_that_stops_saying_it_waits_stops_counting_as_short() {
    let t = table();
    let dead = Dead::default();
    let (a, s) = (t.join(0), t.join(1));
    // a holds 2 of 4 and wants 4; s holds 1 and wants 4: a is at its
    // part (2) while s is short, so a may not take the free share.
    for (token, owner) in [(0, a), (1, a), (2, s)] {
        t.tokens[token].0.store(owner.owner(), SeqCst);
    }
    t.publish(a, 4, 2, 0);
    t.publish(s, 4, 1, 0);
    dead.1.set(STALE_MS);
    assert_eq!(t.try_acquire(a, 4, &dead), None, "s said it waits {STALE_MS} ms ago");
    // s is stopped: it says nothing more. Its waiting threads stop
    // counting, and the free share goes to a.
    dead.1.set(STALE_MS + 1);
    assert_eq!(t.try_acquire(a, 4, &dead), Some(3));
    // Once it says so again, it counts again.
    t.still_wanting(s, STALE_MS + 1);
    t.publish(a, 4, 3, STALE_MS + 1);
    t.header.0.waiting.store(1, SeqCst);
    assert!(t.should_yield(a, 4, &dead), "3 of a fair 2, s short");
}

#[test]
fn generations_wrap_without_becoming_zero() {
    let t = table();
    t.slots[5].0.state.store(SlotState { generation: GEN_MASK, want: 0, held: 0 }.pack(), SeqCst);
    let m = t.join(5);
    assert_eq!(m.generation, 1);
    assert_ne!(m.owner(), 0);
}

#[test]
fn threads_racing_never_hold_more_than_the_capacity() {
    use std::sync::atomic::AtomicUsize;
    let t = table();
    struct All;
    impl Live for All {
        fn alive(&self, _: usize) -> bool {
            true
        }
        fn now_ms(&self) -> u64 {
            0
        }
    }
    let members: Vec<_> = (0..4).map(|s| t.join(s)).collect();
    for &m in &members {
        t.publish(m, 2, 0, 0);
    }
    let holding = AtomicUsize::new(0);
    let most = AtomicUsize::new(0);
    let rounds = if cfg!(miri) { 20 } else { 2000 };
    std::thread::scope(|s| {
        for &m in &members {
            let (t, holding, most) = (&t, &holding, &most);
            s.spawn(move || {
                for _ in 0..rounds {
                    if let Some(token) = t.try_acquire(m, 3, &All) {
                        let now = holding.fetch_add(1, SeqCst) + 1;
                        most.fetch_max(now, SeqCst);
                        holding.fetch_sub(1, SeqCst);
                        assert!(t.release(m, token));
                    }
                }
            });
        }
    });
    assert!(most.load(SeqCst) <= 3, "{}", most.load(SeqCst));
    assert!(t.tokens.iter().all(|token| token.0.load(SeqCst) == 0));
}
