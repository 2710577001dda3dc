//! The tunnel's configuration schema, below both drivers.
//!
//! The `[tunnel]` section (scheduler, congestion control, reordering, reliability and the
//! algorithms' parameter tables) means the same in a simulator scenario and in the daemon's
//! configuration file, because both parse it here: names, TOML parsing with errors naming the
//! full dotted key, range validation and the conversion to braid-core's
//! [`braid_core::tunnel::TunnelConfig`]. The simulator (`braid-sim`) adds its topology, traffic
//! and run settings around it; the daemon (`braid-net`) its interface, peer and paths.
//!
//! - [`tunnel`]: the section itself ([`TunnelConfig`]).
//! - [`transport`]: `tunnel.transport`, `[tunnel.tcp]` and the rules over kernel TCP paths.
//! - [`tuning`]: the algorithms' tables (`[tunnel.acpf]`, `[tunnel.bbr2]`, ...).
//! - [`counting`]: the `tunnel.counting` choice.
//! - [`de`]: deserialization helpers whose errors name the dotted key.
//! - [`range`]: range checks for validation.
//! - [`error`]: [`FieldError`], what can be wrong with one field.

pub mod counting;
pub mod de;
pub mod error;
pub mod range;
pub mod transport;
pub mod tuning;
pub mod tunnel;

pub use counting::CountingChoice;
pub use error::FieldError;
pub use transport::{TcpTable, TcpWriter, Transport};
pub use tuning::{validate_bbr2, AcpfTable, Bbr2Table};
pub use tunnel::TunnelConfig;
