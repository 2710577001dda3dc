//! braid-sim
