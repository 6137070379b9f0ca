//! The shared table: what every process of a machine budget reads and
//! writes, and the rules for taking and giving back shares. It is plain
//! atomics over memory that starts zeroed (an all-zero table is a valid
//! empty one), so the same code runs over a `Box` in tests and under Miri,
//! and over a shared mapping in `shm.rs`. Whether a member is alive is
//! asked of the caller (`Live`): in production an advisory lock only the
//! kernel can drop, in tests a flag.
//!
//! See `README.md` beside this file for the protocol as a whole.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::SeqCst};

/// Most processes that may share one budget at once.
pub const SLOTS: usize = 256;
/// Most shares a budget may have (the CPUs of the largest machine served).
pub const TOKENS: usize = 1024;
/// "tpb" and the layout's version; a table of another version is refused.
const MAGIC: u32 = 0x7470_6201;
/// A generation is 24 bits, so that it and a slot (8 bits) make one owner.
const GEN_MASK: u32 = 0x00ff_ffff;

/// One value per cache line: processes writing neighbouring fields must not
/// slow each other down.
#[repr(C, align(64))]
pub struct Line<T>(pub T);

#[repr(C)]
pub struct Header {
    magic: AtomicU32,
    /// Bumped whenever a share is given back or taken from the dead: the
    /// word that threads waiting for a share sleep on (a futex).
    pub seq: AtomicU32,
    /// Threads waiting for a share, machine-wide.
    pub waiting: AtomicU32,
    /// One past the highest slot ever joined: scans stop there.
    slots_used: AtomicU32,
}

/// The shared memory: a header, one slot per process, one token per share.
#[repr(C)]
pub struct Table {
    header: Line<Header>,
    slots: [Line<Slot>; SLOTS],
    /// Per share: its owner (`Member::owner`), 0 while free.
    tokens: [Line<AtomicU32>; TOKENS],
}

/// One process's place.
#[repr(C)]
pub struct Slot {
    /// Generation (high 32 bits) | want (16) | held (16).
    state: AtomicU64,
    /// When the member last said its waiting threads still wait (ms on the
    /// machine's monotonic clock): a member that stopped (SIGSTOP, a
    /// debugger, a frozen cgroup) stops saying so, and after
    /// [`STALE_MS`] its waiting threads no longer count for fairness.
    wanting_at: AtomicU64,
}

/// How long a member's waiting threads count without word from it.
pub const STALE_MS: u64 = 1000;

/// The table is not of this layout (another version of tidepool made it).
#[derive(Debug, PartialEq, Eq)]
pub struct Incompatible;

/// A process's place in the table: its slot and that slot's generation
/// when it joined (a slot reused after a death gets a new generation, so
/// the dead member's tokens are told apart from the new one's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    pub slot: usize,
    pub generation: u32,
}

impl Member {
    /// The value a token holds while this member owns it (never 0).
    fn owner(self) -> u32 {
        (self.generation << 8) | self.slot as u32
    }
}

/// Whether the process in a slot (not the caller's) is alive, and the
/// machine's clock (milliseconds, the same in every process).
pub trait Live {
    fn alive(&self, slot: usize) -> bool;
    fn now_ms(&self) -> u64;
}

/// A slot's state word, unpacked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SlotState {
    generation: u32,
    want: u16,
    held: u16,
}

impl SlotState {
    fn unpack(word: u64) -> Self {
        SlotState { generation: (word >> 32) as u32, want: (word >> 16) as u16, held: word as u16 }
    }
    fn pack(self) -> u64 {
        (u64::from(self.generation) << 32) | (u64::from(self.want) << 16) | u64::from(self.held)
    }
}

/// What one look over the slots saw: this member's numbers and the others'.
#[derive(Debug, Default)]
struct View {
    mine: (u16, u16),
    others: Vec<(u16, u16)>,
}

/// Numbers for stats: the members alive, and the shares they hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Census {
    pub processes: u32,
    pub held: u32,
}

impl Table {
    /// Claims an all-zero table for this layout, or accepts one already
    /// claimed; refuses one of another layout.
    pub fn check(&self) -> Result<(), Incompatible> {
        match self.header.0.magic.compare_exchange(0, MAGIC, SeqCst, SeqCst) {
            Ok(_) => Ok(()),
            Err(MAGIC) => Ok(()),
            Err(_) => Err(Incompatible),
        }
    }

    pub fn header(&self) -> &Header {
        &self.header.0
    }

    /// Joins as the member in `slot`, whose liveness the caller now holds
    /// (so no one else joins it meanwhile): a new generation, nothing
    /// wanted, nothing held. The tokens an earlier member of the slot left
    /// behind become reclaimable at once.
    pub fn join(&self, slot: usize) -> Member {
        let word = &self.slots[slot].0.state;
        let mut generation = 0;
        let _ = word.fetch_update(SeqCst, SeqCst, |w| {
            let old = SlotState::unpack(w).generation;
            generation = (old.wrapping_add(1) & GEN_MASK).max(1);
            Some(SlotState { generation, want: 0, held: 0 }.pack())
        });
        self.header.0.slots_used.fetch_max(slot as u32 + 1, SeqCst);
        Member { slot, generation }
    }

    /// Sets what `me` publishes: threads that want a share (holding one or
    /// waiting for one) and shares held. A member taken for dead (its slot
    /// joined again) writes nothing.
    pub fn publish(&self, me: Member, want: u16, held: u16, now_ms: u64) {
        self.still_wanting(me, now_ms);
        let word = &self.slots[me.slot].0.state;
        let _ = word.fetch_update(SeqCst, SeqCst, |w| {
            (SlotState::unpack(w).generation == me.generation)
                .then(|| SlotState { generation: me.generation, want, held }.pack())
        });
    }

    /// `me`'s waiting threads still wait (said at least every
    /// [`STALE_MS`] while they do).
    pub fn still_wanting(&self, me: Member, now_ms: u64) {
        self.slots[me.slot].0.wanting_at.store(now_ms, SeqCst);
    }

    /// This member's numbers and those of the other living members that
    /// want or hold shares.
    fn view(&self, me: Member, live: &dyn Live) -> View {
        let mut view = View::default();
        let used = (self.header.0.slots_used.load(SeqCst) as usize).min(SLOTS);
        for slot in 0..used {
            let s = SlotState::unpack(self.slots[slot].0.state.load(SeqCst));
            if slot == me.slot {
                view.mine = (s.want, s.held);
            } else if (s.want > 0 || s.held > 0) && live.alive(slot) {
                let said = self.slots[slot].0.wanting_at.load(SeqCst);
                let stale = live.now_ms().saturating_sub(said) > STALE_MS;
                let want = if stale { s.want.min(s.held) } else { s.want };
                view.others.push((want, s.held));
            }
        }
        view
    }

    /// Takes a free share within the first `capacity` if the fairness rule
    /// lets `me` (see README.md): returns the token's index.
    pub fn try_acquire(&self, me: Member, capacity: usize, live: &dyn Live) -> Option<usize> {
        let capacity = capacity.clamp(1, TOKENS);
        let view = self.view(me, live);
        let (want, held) = view.mine;
        // The thread asking counts as wanting, even before it is published.
        let want = want.max(held.saturating_add(1));
        let wants: Vec<u16> =
            std::iter::once(want).chain(view.others.iter().map(|&(w, _)| w)).collect();
        let fair = fair_shares(capacity, &wants);
        let others_short = view
            .others
            .iter()
            .zip(&fair[1..])
            .any(|(&(w, h), &f)| h < w && f64::from(h) < f.ceil());
        if f64::from(held) >= fair[0].ceil() && others_short {
            return None;
        }
        let owner = me.owner();
        for (index, token) in self.tokens[..capacity].iter().enumerate() {
            if token.0.load(SeqCst) == 0
                && token.0.compare_exchange(0, owner, SeqCst, SeqCst).is_ok()
            {
                return Some(index);
            }
        }
        None
    }

    /// Whether the member `owner` names is alive: its slot has that
    /// generation, and it is `me` or its liveness says so.
    fn owner_alive(&self, me: Member, owner: u32, live: &dyn Live) -> bool {
        let (slot, generation) = ((owner & 0xff) as usize, owner >> 8);
        let current = SlotState::unpack(self.slots[slot].0.state.load(SeqCst)).generation;
        current == generation && (slot == me.slot || live.alive(slot))
    }

    /// Whether a share within the first `capacity` is free.
    pub fn any_free(&self, capacity: usize) -> bool {
        self.tokens[..capacity.clamp(1, TOKENS)].iter().any(|t| t.0.load(SeqCst) == 0)
    }

    /// Gives `token` back. False if it was no longer `me`'s (taken from a
    /// member thought dead); either way it is not `me`'s any more.
    pub fn release(&self, me: Member, token: usize) -> bool {
        let ok = self.tokens[token].0.compare_exchange(me.owner(), 0, SeqCst, SeqCst).is_ok();
        self.header.0.seq.fetch_add(1, SeqCst);
        ok
    }

    /// Whether a thread of `me` holding a share should give it back: other
    /// members are short of their fair share and `me` holds more than its own.
    pub fn should_yield(&self, me: Member, capacity: usize, live: &dyn Live) -> bool {
        if self.header.0.waiting.load(SeqCst) == 0 {
            return false;
        }
        let view = self.view(me, live);
        let wants: Vec<u16> =
            std::iter::once(view.mine.0).chain(view.others.iter().map(|&(w, _)| w)).collect();
        let fair = fair_shares(capacity.clamp(1, TOKENS), &wants);
        let others_short = view
            .others
            .iter()
            .zip(&fair[1..])
            .any(|(&(w, h), &f)| h < w && f64::from(h) < f.ceil());
        f64::from(view.mine.1) > fair[0] && others_short
    }

    /// Frees the tokens of members no longer alive and clears their slots'
    /// numbers. Returns how many tokens it freed.
    pub fn reclaim(&self, me: Member, live: &dyn Live) -> usize {
        let used = (self.header.0.slots_used.load(SeqCst) as usize).min(SLOTS);
        let mut freed = 0;
        for token in &self.tokens {
            let owner = token.0.load(SeqCst);
            if owner != 0
                && !self.owner_alive(me, owner, live)
                && token.0.compare_exchange(owner, 0, SeqCst, SeqCst).is_ok()
            {
                freed += 1;
            }
        }
        for slot in (0..used).filter(|&s| s != me.slot) {
            let word = &self.slots[slot].0.state;
            let w = word.load(SeqCst);
            let s = SlotState::unpack(w);
            if (s.want > 0 || s.held > 0) && !live.alive(slot) {
                // Fails harmlessly if the slot was joined again meanwhile.
                let cleared = SlotState { want: 0, held: 0, ..s }.pack();
                if word.compare_exchange(w, cleared, SeqCst, SeqCst).is_ok() {
                    // Its threads that were waiting will not say they stopped.
                    let waiting = u32::from(s.want.saturating_sub(s.held));
                    let _ = self
                        .header
                        .0
                        .waiting
                        .fetch_update(SeqCst, SeqCst, |n| Some(n.saturating_sub(waiting)));
                }
            }
        }
        if freed > 0 {
            self.header.0.seq.fetch_add(1, SeqCst);
        }
        freed
    }

    /// The living members that want or hold shares (`me` counted when it
    /// does), and the shares they hold.
    pub fn census(&self, me: Member, live: &dyn Live) -> Census {
        let view = self.view(me, live);
        let mut census = Census {
            processes: view.others.len() as u32,
            held: view.others.iter().map(|&(_, h)| u32::from(h)).sum(),
        };
        if view.mine != (0, 0) {
            census.processes += 1;
            census.held += u32::from(view.mine.1);
        }
        census
    }
}

/// Max-min fair division of `capacity` shares among members wanting
/// `wants`: nobody gets more than it wants, and what the modest leave is
/// split evenly among the rest. Fractions are kept: a member's turn at a
/// fraction of a share comes from yielding over time.
pub fn fair_shares(capacity: usize, wants: &[u16]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..wants.len()).collect();
    order.sort_by_key(|&i| wants[i]);
    let mut fair = vec![0.0; wants.len()];
    let mut left = capacity as f64;
    for (done, &i) in order.iter().enumerate() {
        let share = left / (wants.len() - done) as f64;
        fair[i] = f64::from(wants[i]).min(share);
        left -= fair[i];
    }
    fair
}

#[cfg(test)]
mod tests {
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
        t.header.0.magic.store(0x7470_6202, SeqCst);
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
        t.slots[5]
            .0
            .state
            .store(SlotState { generation: GEN_MASK, want: 0, held: 0 }.pack(), SeqCst);
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
}
