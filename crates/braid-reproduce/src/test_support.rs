//! Helpers for the unit tests of the reproductions.

use std::path::Path;

use braid_sweep::Spec;

use crate::folder::BASE_FILE;

/// Parses spec text with the repository's default scenario standing in for `base.toml`.
pub fn parse_spec(text: &str) -> Spec {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let text = text.replace(BASE_FILE, "default.toml");
    Spec::parse(&text, &dir.join("spec.toml"), &dir).unwrap()
}
