//! Tunnel sender and receiver state machines.
