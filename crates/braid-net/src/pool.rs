//! Packet buffers for the hot path: fixed-size slots recycled through a free list, handed to
//! braid-core as reference-counted handles.
//!
//! The core holds packets by value (`TunnelSender<P>`, `TunnelReceiver<P>`) and clones them for
//! retransmission and redundant copies. [`Pkt`] is that `P`: a slot index plus a shared pointer
//! to the pool; cloning counts a reference, dropping the last one returns the slot to the free
//! list. The pool grows when it runs dry (a burst larger than any before) and never shrinks, so
//! after warm-up a packet costs no allocation. One pool belongs to one thread (`Rc`).

use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;

struct Slots {
    slot_len: usize,
    data: Vec<Box<[u8]>>,
    lens: Vec<u32>,
    refs: Vec<u32>,
    free: Vec<u32>,
}

/// A pool of packet slots of one size.
#[derive(Clone)]
pub struct Pool {
    slots: Rc<RefCell<Slots>>,
}

/// A packet in a pool slot: the inner IP packet the tunnel carries.
pub struct Pkt {
    slots: Rc<RefCell<Slots>>,
    index: u32,
}

impl Pool {
    /// A pool of `initial` slots of `slot_len` bytes each.
    pub fn new(slot_len: usize, initial: usize) -> Pool {
        let mut s = Slots {
            slot_len,
            data: Vec::new(),
            lens: Vec::new(),
            refs: Vec::new(),
            free: Vec::new(),
        };
        for _ in 0..initial {
            let i = s.grow();
            s.free.push(i);
        }
        Pool { slots: Rc::new(RefCell::new(s)) }
    }

    /// Copies `bytes` into a free slot. `None` when `bytes` is longer than a slot.
    pub fn alloc_from(&self, bytes: &[u8]) -> Option<Pkt> {
        self.alloc_edited(bytes, |_| {})
    }

    /// Copies `bytes` into a free slot and lets `edit` change the copy before anyone else holds
    /// it. `None` when `bytes` is longer than a slot.
    pub fn alloc_edited(&self, bytes: &[u8], edit: impl FnOnce(&mut [u8])) -> Option<Pkt> {
        let mut s = self.slots.borrow_mut();
        if bytes.len() > s.slot_len {
            return None;
        }
        let index = match s.free.pop() {
            Some(i) => i,
            None => s.grow(),
        };
        let i = index as usize;
        s.data[i][..bytes.len()].copy_from_slice(bytes);
        edit(&mut s.data[i][..bytes.len()]);
        s.lens[i] = bytes.len() as u32;
        s.refs[i] = 1;
        Some(Pkt { slots: Rc::clone(&self.slots), index })
    }

    /// Slots in the pool, free or not.
    pub fn capacity(&self) -> usize {
        self.slots.borrow().data.len()
    }

    /// Slots holding a packet.
    pub fn in_use(&self) -> usize {
        let s = self.slots.borrow();
        s.data.len() - s.free.len()
    }
}

impl Slots {
    fn grow(&mut self) -> u32 {
        let index = self.data.len() as u32;
        self.data.push(vec![0u8; self.slot_len].into_boxed_slice());
        self.lens.push(0);
        self.refs.push(0);
        index
    }
}

impl Pkt {
    /// Calls `f` with the packet's bytes.
    pub fn with<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        let s = self.slots.borrow();
        let i = self.index as usize;
        f(&s.data[i][..s.lens[i] as usize])
    }

    /// Copies the packet to the front of `out`; returns its length, or `None` if `out` is too
    /// short.
    pub fn copy_to(&self, out: &mut [u8]) -> Option<usize> {
        self.with(|b| {
            out.get_mut(..b.len())?.copy_from_slice(b);
            Some(b.len())
        })
    }

    pub fn len(&self) -> usize {
        self.slots.borrow().lens[self.index as usize] as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Clone for Pkt {
    fn clone(&self) -> Pkt {
        self.slots.borrow_mut().refs[self.index as usize] += 1;
        Pkt { slots: Rc::clone(&self.slots), index: self.index }
    }
}

impl Drop for Pkt {
    fn drop(&mut self) {
        let mut s = self.slots.borrow_mut();
        let i = self.index as usize;
        s.refs[i] -= 1;
        if s.refs[i] == 0 {
            s.free.push(self.index);
        }
    }
}

impl fmt::Debug for Pkt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pkt(slot {}, {} bytes)", self.index, self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_returns_to_the_pool_when_its_last_handle_drops() {
        let pool = Pool::new(64, 2);
        let a = pool.alloc_from(b"hello").unwrap();
        let b = a.clone();
        assert_eq!(pool.in_use(), 1);
        drop(a);
        assert_eq!(pool.in_use(), 1, "a clone still holds the slot");
        assert_eq!(b.with(|x| x.to_vec()), b"hello");
        drop(b);
        assert_eq!(pool.in_use(), 0);
        assert_eq!(pool.capacity(), 2);
    }

    #[test]
    fn the_pool_grows_past_its_initial_size_and_reuses_slots_after() {
        let pool = Pool::new(16, 1);
        let held: Vec<Pkt> = (0..5u8).map(|i| pool.alloc_from(&[i; 3]).unwrap()).collect();
        assert_eq!(pool.capacity(), 5);
        assert_eq!(held[3].with(|x| x.to_vec()), vec![3, 3, 3]);
        drop(held);
        let again: Vec<Pkt> = (0..5u8).map(|i| pool.alloc_from(&[i]).unwrap()).collect();
        assert_eq!(pool.capacity(), 5, "no growth once warmed up");
        assert_eq!(again[4].len(), 1);
    }

    #[test]
    fn too_long_a_packet_is_refused_and_copies_are_bounded() {
        let pool = Pool::new(4, 1);
        assert!(pool.alloc_from(&[0; 5]).is_none());
        let p = pool.alloc_from(&[1, 2, 3]).unwrap();
        assert_eq!(p.copy_to(&mut [0; 2]), None);
        let mut out = [0; 8];
        assert_eq!(p.copy_to(&mut out), Some(3));
        assert_eq!(&out[..3], &[1, 2, 3]);
    }
}
