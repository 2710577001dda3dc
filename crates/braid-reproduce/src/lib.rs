//! braid-reproduce: published experiments rerun over braid-sweep.
//!
//! Three, each a `braid reproduce` subcommand that runs (or resumes) everything into one
//! folder (docs/sweeps.md, "braid reproduce"); drawing the figures is the Python module
//! `braid.figures`, this crate makes the data.
//!
//! - **nested-cc**: Pieska et al. 2024, "Performance Impact of Nested Congestion Control on
//!   Transport-Layer Multipath Tunneling" (Future Internet 16, 233): Table 3 and Figure 10 (a
//!   matrix sweep), the contour figures 5, 8b-c and 9c-d (a sweep per batch over 400
//!   points), and the throughput-over-time examples of Figures 4, 8a and 9a. [`nested_cc`] says what runs,
//!   [`specs`] writes it as sweep specs, [`tables`] makes Table 3, [`run`] does it all.
//! - **acpf**: Pieska et al. 2021, "Adaptive Cheapest Path First Scheduling in a
//!   Transport-Layer Multi-Path Tunnel Context" (ANRW 2021): the throughput of CPF and ACPF
//!   (Figure 5), the window traces of Figure 4 and the contours of Figure 6 ([`acpf`]).
//! - **coupled-cubic**: Lee et al. 2023, "Coupled CUBIC Congestion Control for MPTCP in
//!   Broadband Networks" (CSSE 45(1)): the subflow windows of Figures 5 and 6 and the
//!   throughput bars of Figure 7 ([`coupled_cubic`]).
//!
//! Shared machinery: [`folder`] (files written once and checked on resume), [`sweeps`]
//! (running a written spec with braid-sweep), [`toml_text`] (spec text), [`cells`] and
//! [`stats`] (tables from journals), [`series`] (the time-series examples), [`error`].

pub mod acpf;
pub mod cells;
pub mod coupled_cubic;
pub mod error;
pub mod folder;
pub mod modes;
pub mod nested_cc;
pub mod run;
pub mod series;
pub mod specs;
pub mod stats;
pub mod sweeps;
pub mod tables;
#[cfg(test)]
mod test_support;
pub mod toml_text;

pub use error::{OptionError, ReproduceError};
pub use run::{nested_cc as run_nested_cc, Options, Outcome};
