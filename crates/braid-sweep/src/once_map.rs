//! A map whose every value is computed once, by the first thread that asks for it: a thread
//! asking for a value another thread is computing waits for it rather than computing it again.
//! The sweep keeps two: baselines ([`crate::baseline`]) and whole runs ([`crate::runner`]), both
//! keyed by a resolved scenario written as TOML. The simulator is deterministic, so a value
//! computed once is the value every later computation would give.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Values by key, each computed once; safe to share between threads.
pub struct OnceMap<V> {
    slots: Mutex<HashMap<String, Arc<OnceLock<V>>>>,
    computed: AtomicU64,
}

impl<V> Default for OnceMap<V> {
    fn default() -> Self {
        OnceMap { slots: Mutex::new(HashMap::new()), computed: AtomicU64::new(0) }
    }
}

impl<V: Clone> OnceMap<V> {
    pub fn new() -> Self {
        Self::default()
    }

    /// The value of `key`: computed by `compute` if no thread has computed it yet.
    pub fn get_or_compute(&self, key: String, compute: impl FnOnce() -> V) -> V {
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(slots.entry(key).or_default())
        };
        slot.get_or_init(|| {
            self.computed.fetch_add(1, Ordering::Relaxed);
            compute()
        })
        .clone()
    }

    /// How many values were computed (not taken from the map).
    pub fn computed(&self) -> u64 {
        self.computed.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_is_computed_once_even_from_many_threads() {
        let map = OnceMap::new();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for k in 0..10 {
                        assert_eq!(map.get_or_compute(format!("k{k}"), || k * 2), k * 2);
                    }
                });
            }
        });
        assert_eq!(map.computed(), 10);
    }
}
