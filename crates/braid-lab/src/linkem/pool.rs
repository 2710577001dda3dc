//! Frame storage for the frames a link holds: fixed-size slots in one arena, a free list,
//! indices as handles ([`FrameId`]).
//!
//! A frame is received straight into a free slot and stays there until it is sent or dropped,
//! so nothing is copied or allocated per frame. The arena grows (doubling) only when more frames
//! are on the link at once than ever before; once the link has seen its largest backlog and
//! delay line, it never allocates again.

use super::link::FrameId;

/// Fixed-size frame slots.
#[derive(Debug)]
pub struct FramePool {
    slot_bytes: usize,
    data: Vec<u8>,
    /// Length of the frame in each slot.
    lens: Vec<u32>,
    /// Slots not holding a frame; the most recently freed is reused first (warm in cache).
    free: Vec<u32>,
}

impl FramePool {
    /// A pool of `initial_slots` slots (at least one) of `slot_bytes` each.
    pub fn new(slot_bytes: usize, initial_slots: usize) -> Self {
        let mut pool =
            FramePool { slot_bytes, data: Vec::new(), lens: Vec::new(), free: Vec::new() };
        pool.grow(initial_slots.max(1));
        pool
    }

    fn grow(&mut self, more: usize) {
        let old = self.lens.len();
        let new = old + more;
        self.data.resize(new * self.slot_bytes, 0);
        self.lens.resize(new, 0);
        self.free.extend((old as u32..new as u32).rev());
    }

    /// Bytes a slot holds: the largest frame the pool stores whole.
    pub fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }

    /// Slots in the arena.
    pub fn capacity(&self) -> usize {
        self.lens.len()
    }

    /// Slots holding a frame.
    pub fn in_use(&self) -> usize {
        self.lens.len() - self.free.len()
    }

    /// Takes a free slot, doubling the arena if there is none.
    pub fn alloc(&mut self) -> FrameId {
        if self.free.is_empty() {
            self.grow(self.lens.len());
        }
        FrameId(self.free.pop().expect("grow added slots"))
    }

    /// The whole slot, to receive a frame into.
    pub fn slot_mut(&mut self, id: FrameId) -> &mut [u8] {
        let start = id.0 as usize * self.slot_bytes;
        &mut self.data[start..start + self.slot_bytes]
    }

    /// Records the length of the frame received into the slot (at most the slot's size).
    pub fn set_len(&mut self, id: FrameId, len: usize) {
        self.lens[id.0 as usize] = len.min(self.slot_bytes) as u32;
    }

    /// The frame in a slot.
    pub fn frame(&self, id: FrameId) -> &[u8] {
        let start = id.0 as usize * self.slot_bytes;
        &self.data[start..start + self.lens[id.0 as usize] as usize]
    }

    /// Returns a slot to the free list.
    pub fn free(&mut self, id: FrameId) {
        debug_assert!(!self.free.contains(&id.0), "slot {} freed twice", id.0);
        self.lens[id.0 as usize] = 0;
        self.free.push(id.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_keep_their_bytes_while_the_arena_grows() {
        let mut pool = FramePool::new(4, 2);
        let ids: Vec<FrameId> = (0..5u8)
            .map(|i| {
                let id = pool.alloc();
                pool.slot_mut(id)[..3].copy_from_slice(&[i, i, i]);
                pool.set_len(id, 3);
                id
            })
            .collect();
        // 2 slots, doubled to 4, doubled to 8.
        assert_eq!((pool.capacity(), pool.in_use()), (8, 5));
        for (i, &id) in ids.iter().enumerate() {
            assert_eq!(pool.frame(id), &[i as u8; 3]);
        }
        let ids_set: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(ids_set.len(), 5, "every frame has its own slot");
    }

    #[test]
    fn freed_slots_are_reused_before_growing() {
        let mut pool = FramePool::new(1514, 2);
        let a = pool.alloc();
        let _b = pool.alloc();
        pool.free(a);
        assert_eq!(pool.alloc(), a);
        assert_eq!(pool.capacity(), 2);
        assert_eq!(pool.in_use(), 2);
    }

    #[test]
    fn lengths_are_capped_at_the_slot() {
        let mut pool = FramePool::new(8, 1);
        let id = pool.alloc();
        pool.set_len(id, 100);
        assert_eq!(pool.frame(id).len(), 8);
    }
}
