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
/// (2: members renew a lease on their shares: one of version 1 would not.)
const MAGIC: u32 = 0x7470_6202;
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
    /// When the member last renewed its lease on the shares it holds (ms
    /// on the same clock; 0: never): a member alive but stopped, whose
    /// lease is older than [`LEASE_MS`], loses them to the others.
    renewed_at: AtomicU64,
}

/// How long a member's waiting threads count without word from it.
pub const STALE_MS: u64 = 1000;
/// How long a member's shares are its own without a renewal of its lease
/// (its monitor thread renews it every 500 ms at most, every share taken
/// or given back too): a process stopped (SIGSTOP, a debugger, a frozen
/// cgroup) gives its shares back to the others after this.
pub const LEASE_MS: u64 = 2000;

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
    /// behind become reclaimable at once; the threads it had waiting (it
    /// died before a monitor reclaimed it) leave the machine's count now,
    /// as `reclaim` would have taken them off.
    pub fn join(&self, slot: usize) -> Member {
        let word = &self.slots[slot].0.state;
        let mut generation = 0;
        let mut left_waiting = 0;
        let _ = word.fetch_update(SeqCst, SeqCst, |w| {
            let old = SlotState::unpack(w);
            left_waiting = u32::from(old.want.saturating_sub(old.held));
            generation = (old.generation.wrapping_add(1) & GEN_MASK).max(1);
            Some(SlotState { generation, want: 0, held: 0 }.pack())
        });
        if left_waiting > 0 {
            let _ = self
                .header
                .0
                .waiting
                .fetch_update(SeqCst, SeqCst, |n| Some(n.saturating_sub(left_waiting)));
        }
        self.header.0.slots_used.fetch_max(slot as u32 + 1, SeqCst);
        Member { slot, generation }
    }

    /// Whether `me` still has its slot: its generation is the slot's (not
    /// so once the table was zeroed under it, a truncated file made
    /// whole again).
    pub fn has_slot(&self, me: Member) -> bool {
        SlotState::unpack(self.slots[me.slot].0.state.load(SeqCst)).generation == me.generation
    }

    /// Sets what `me` publishes: threads that want a share (holding one or
    /// waiting for one) and shares held. A member taken for dead (its slot
    /// joined again) writes nothing.
    pub fn publish(&self, me: Member, want: u16, held: u16, now_ms: u64) {
        self.still_wanting(me, now_ms);
        self.renew(me, now_ms);
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

    /// Renews `me`'s lease on the shares it holds.
    pub fn renew(&self, me: Member, now_ms: u64) {
        if self.has_slot(me) {
            self.slots[me.slot].0.renewed_at.store(now_ms.max(1), SeqCst);
        }
    }

    /// Whether `token` is still `me`'s (not taken back: `me` was thought
    /// dead, or its lease ran out).
    pub fn holds(&self, me: Member, token: usize) -> bool {
        self.tokens[token].0.load(SeqCst) == me.owner()
    }

    /// Whether `slot`'s lease has run out by `now_ms`.
    fn lease_out(&self, slot: usize, now_ms: u64) -> bool {
        let renewed = self.slots[slot].0.renewed_at.load(SeqCst);
        renewed != 0 && now_ms.saturating_sub(renewed) > LEASE_MS
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

    /// Frees the tokens of members no longer alive, or whose lease ran out
    /// (stopped), and clears the dead's slots' numbers. Returns how many
    /// tokens it freed.
    pub fn reclaim(&self, me: Member, live: &dyn Live) -> usize {
        let used = (self.header.0.slots_used.load(SeqCst) as usize).min(SLOTS);
        let now = live.now_ms();
        let mut freed = 0;
        for token in &self.tokens {
            let owner = token.0.load(SeqCst);
            let slot = (owner & 0xff) as usize;
            let lapsed = slot != me.slot && self.lease_out(slot, now);
            if owner != 0
                && (lapsed || !self.owner_alive(me, owner, live))
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
#[path = "table_tests.rs"]
mod tests;
