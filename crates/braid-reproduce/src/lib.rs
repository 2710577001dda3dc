//! braid-reproduce: published experiments rerun over braid-sweep.
//!
//! Today one: the nested congestion control study of Pieska et al. 2024, "Performance Impact
//! of Nested Congestion Control on Transport-Layer Multipath Tunneling" (Future Internet 16,
//! 233): Table 3 and Figure 10 (a matrix sweep), the contour figures 5, 8b-c and 9c-d (a sweep
//! per batch over 400 points), and the throughput-over-time examples of Figures 4, 8a and 9a.
//! [`nested_cc`] says what runs, [`specs`] writes it as sweep specs, [`tables`] makes Table 3
//! from the matrix's journal, [`series`] runs the examples, and [`run`] does it all into one
//! folder, resumably (docs/sweeps.md, "braid reproduce"). Drawing the figures is the Python
//! module `braid.figures`; this crate makes the data.

pub mod modes;
pub mod nested_cc;
pub mod run;
pub mod series;
pub mod specs;
pub mod stats;
pub mod tables;

pub use run::{nested_cc as run_nested_cc, Options, Outcome, ReproduceError};
