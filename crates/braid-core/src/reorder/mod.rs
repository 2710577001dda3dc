//! Receiver-side reordering (placeholder).
